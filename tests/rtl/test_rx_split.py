"""Header/data split on the RTL: every header byte in host memory, every payload byte in
device memory, every completion, checked against the golden model, with random stream gaps
and DMA backpressure, at MAC widths 64 and 512.
"""
from __future__ import annotations

import cocotb
import pytest

from driver import regs
from driver.rx_queue import RxQueueConfig
from tb.axi_wr_slave import check_awready_exercised
from tb.corpus import odd_frames
from tb.frames import Flow, build, pattern
from tb.nic_tb import NicTb, TrafficProfile
from tb.rx_env import bring_up, run_traffic
from tb.sim import pytest_test_name, rtl_file_list, run_rtl_test
from tests.axi_slaves import awready_env, awready_params

PAYLOAD_SIZES = [0, 1, 2, 7, 8, 63, 64, 65, 127, 128, 129, 255, 256, 511, 512, 1023, 1024, 1400]
FLOWS = [Flow(ipv6=v6, proto=proto, vlan_tags=tags)
         for v6 in (False, True) for proto in ("tcp", "udp") for tags in (0, 1, 2)]
@cocotb.test()
async def run_split_sweep(dut) -> None:
    """Every flow kind x every payload size, split at threshold 0."""
    tb = NicTb(dut, cocotb.RANDOM_SEED, TrafficProfile.rough())
    await tb.reset()
    qcfg = RxQueueConfig(hdr_ring_log2=5, pay_ring_log2=5, cq_log2=6, tcp_data_split=True, hds_thresh=0)
    rxq, sb = await bring_up(tb, qcfg)

    frames = []
    for flow in FLOWS:
        for n in PAYLOAD_SIZES + [flow.max_payload()]:
            frames.append(build(flow, pattern(n, period=251, start=len(frames))))
    await run_traffic(tb, rxq, sb, frames)

    assert sb.checked == len(frames) and not sb.dropped
    sb.check_writes_in_bounds(tb.space, rxq.cq_base)
    assert tb.dev.cpu_reads == 0
    assert await tb.read32(regs.RX_FRAMES) == len(frames)
    assert sb.payload_bytes_to_host == 0
    check_awready_exercised(tb)
    tb.dut._log.info("%d frames: %d header bytes to host, %d payload bytes to device memory",
                     sb.checked, sb.hdr_bytes_to_host, sb.payload_bytes_to_device)


@cocotb.test()
async def run_one_byte_payload(dut) -> None:
    """A 1-byte TCP payload lands in device memory, never in the header buffer."""
    tb = NicTb(dut, cocotb.RANDOM_SEED)
    await tb.reset()
    rxq, sb = await bring_up(tb, RxQueueConfig(hdr_ring_log2=5, pay_ring_log2=5, cq_log2=6))
    for flow in (Flow(), Flow(ipv6=True)):
        frame = build(flow, b"\x5a")
        p = sb.sent_frame(frame)
        assert p.split and p.payload_bytes == b"\x5a"
        await tb.send(frame)
        got = []
        for _ in range(100):
            await tb.delay(200)
            got = await rxq.napi_poll()
            if got:
                break
        assert len(got) == 1, "the 1-byte frame was not delivered"
        (frame_got,) = got
        assert frame_got.split and frame_got.payload_len == 1
        assert frame_got.hdr_len == 14 + flow.l3_l4_header_bytes
        sb.check(frame_got)       # header buffer holds exactly hdr_len bytes, the rest canary
        pay_id = frame_got.fragments[0][0]
        assert tb.dev.gpu.read(sb.pay_bufs[pay_id], 1) == b"\x5a"
    assert tb.dev.cpu_reads == 0


@cocotb.test()
async def run_odd_frames(dut) -> None:
    """Non-IP, other L4, fragments, options, extension headers, long headers and bad frames,
    each followed by a good frame; counters and placement against the model."""
    tb = NicTb(dut, cocotb.RANDOM_SEED, TrafficProfile.rough())
    await tb.reset()
    rxq, sb = await bring_up(tb, RxQueueConfig(hdr_ring_log2=5, pay_ring_log2=5, cq_log2=6))
    frames: list[tuple[bytes, bool]] = []
    for i, (name, frame, bad_fcs) in enumerate(odd_frames()):
        frames.append((frame, bad_fcs))
        frames.append((build(Flow(ipv6=bool(i % 2)), pattern(64 + i)), False))
    for frame, bad_fcs in frames:
        sb.sent_frame(frame, bad_fcs)
        await tb.send(frame, bad_fcs)
    await tb.wait_rx_idle()
    for _ in range(500):
        await tb.delay(400)
        for frame in await rxq.napi_poll():
            sb.check(frame)
        if not sb.outstanding:
            break
    assert not sb.outstanding, f"{sb.outstanding} frames never completed"
    assert sb.checked + sum(sb.dropped.values()) == len(frames)
    assert await tb.read32(regs.RX_FRAMES) == sb.checked
    for counter in ("RX_DROP_RUNT", "RX_DROP_FCS", "RX_DROP_OVERSIZE", "RX_DROP_HDR_ERR",
                    "RX_DROP_FIFO", "RX_DROP_NO_HDR_BUF", "RX_DROP_NO_PAY_BUF", "RX_DROP_CQ_FULL"):
        assert await tb.read32(getattr(regs, counter)) == sb.dropped.get(counter, 0), counter
    assert sb.dropped == {"RX_DROP_RUNT": 1, "RX_DROP_FCS": 1, "RX_DROP_OVERSIZE": 1, "RX_DROP_HDR_ERR": 3}
    sb.check_writes_in_bounds(tb.space, rxq.cq_base)


@cocotb.test()
async def run_threshold(dut) -> None:
    """hds-thresh 200: frames of 200 bytes or less arrive whole in payload buffers."""
    tb = NicTb(dut, cocotb.RANDOM_SEED)
    await tb.reset()
    rxq, sb = await bring_up(tb, RxQueueConfig(hdr_ring_log2=5, pay_ring_log2=5, cq_log2=6, hds_thresh=200))
    frames = [build(Flow(), pattern(n)) for n in (0, 100, 146, 147, 300)]
    assert [len(f) for f in frames] == [60, 154, 200, 201, 354]
    await run_traffic(tb, rxq, sb, frames)
    assert sb.checked == len(frames)
    assert [got.split for got in sb.delivered] == [False, False, False, True, True]


@pytest.mark.rtl
@pytest.mark.parametrize("data_w,awready", awready_params([(64,), (512,)], [(64,), (512,)]))
def test_rx_split(data_w: int, awready: str | None) -> None:
    """Also under DMA slaves whose AWREADY waits for the burst's first or last W beat."""
    run_rtl_test("nic_top", rtl_file_list(), "tests.rtl.test_rx_split", {"DATA_W": data_w}, pytest_test_name(),
                 extra_env=awready_env(awready))
