"""Multi-packet payload buffers, write combining and completion batches on the RTL, frame by
frame against the golden model (docs/rx-rules.md sections 4-5), with random stream gaps and
DMA backpressure, at MAC widths 64 and 512.

The scoreboard (tb/rx_scoreboard.py) takes each payload's buffer and stride from the model's
`MpbCursor`, compares every completion byte for byte (`pay_off` included), every header and
payload byte, checks the stride gaps and, when a shared buffer is finished, that no byte
outside its payloads was written. The batch tests read `CQ.HW_IDX` and count interrupts to
check when completions become visible, which the model (which has no time) cannot say.
"""
from __future__ import annotations

import random
from dataclasses import replace

import cocotb
import pytest
from cocotb.triggers import RisingEdge

from driver import ethtool, regs
from driver.rx_queue import RxQueueConfig
from tb.frames import Flow, build, pattern
from tb.nic_tb import NicTb, TrafficProfile
from tb.rx_env import MultiQueueEnv, bring_up, run_traffic
from tb.sim import pytest_test_name, rtl_file_list, run_rtl_test
from tests.rtl.test_rx_split import FLOWS

SIZES = [0, 1, 7, 10, 16, 17, 63, 64, 65, 100, 127, 128, 200, 255, 256, 511, 1023, 1024, 1400]
MPB = RxQueueConfig(hdr_ring_log2=5, pay_ring_log2=5, cq_log2=6, tcp_data_split=True,
                    pay_mpb=True, pay_stride_log2=4, rx_frames=16)


def sweep_frames(seed: int, flows=FLOWS) -> list[bytes]:
    rng = random.Random(seed)
    frames = []
    for flow in flows:
        for n in SIZES + [flow.max_payload()]:
            frames.append(build(flow, pattern(n, period=251, start=len(frames))))
    rng.shuffle(frames)
    return frames


async def checked_run(tb, qcfg: RxQueueConfig, frames: list[bytes]) -> None:
    rxq, sb = await bring_up(tb, qcfg)
    await run_traffic(tb, rxq, sb, frames)
    assert sb.checked == len(frames) and not sb.dropped
    sb.check_writes_in_bounds(tb.space, rxq.cq_base)
    assert tb.dev.cpu_reads == 0
    assert await tb.read32(regs.RX_FRAMES) == len(frames)
    assert await tb.read32(regs.rxq_reg(0, regs.RXQ_CQ + regs.RING_HW_IDX)) == sb.cq_idx


@cocotb.test()
async def run_mpb_sweep(dut) -> None:
    """Split on, 16-byte strides in 4 KiB pages, batches of 16 frames: every flow kind x
    payload sizes in random order."""
    tb = NicTb(dut, cocotb.RANDOM_SEED, TrafficProfile.rough())
    await tb.reset()
    await checked_run(tb, MPB, sweep_frames(cocotb.RANDOM_SEED))


@cocotb.test()
async def run_mpb_small_buffers(dut) -> None:
    """1 KiB buffers of 64 strides: frames that span buffers, then pack after their last
    piece; 64-byte strides; batches closed by time (rx-usecs 1) as well as by count."""
    tb = NicTb(dut, cocotb.RANDOM_SEED, TrafficProfile.rough())
    await tb.reset()
    await checked_run(tb, replace(MPB, pay_buf_log2=10, pay_stride_log2=4, rx_usecs=1, rx_frames=5),
                      sweep_frames(cocotb.RANDOM_SEED + 1, FLOWS[:6]))


@cocotb.test()
async def run_mpb_unsplit(dut) -> None:
    """Split off: whole frames packed at 64-byte strides."""
    tb = NicTb(dut, cocotb.RANDOM_SEED, TrafficProfile.rough())
    await tb.reset()
    await checked_run(tb, replace(MPB, tcp_data_split=False, pay_stride_log2=6),
                      sweep_frames(cocotb.RANDOM_SEED + 2, FLOWS[:4]))


@cocotb.test()
async def run_batches_small_ring(dut) -> None:
    """A 16-entry completion ring: batches close at the ring's end (never wrap), the driver
    consumes as it goes; batching without multi-packet buffers."""
    tb = NicTb(dut, cocotb.RANDOM_SEED, TrafficProfile.rough())
    await tb.reset()
    qcfg = replace(MPB, cq_log2=4, pay_mpb=False, rx_frames=6)
    await checked_run(tb, qcfg, [build(Flow(), pattern(n, start=n)) for n in range(0, 600, 7)])


@cocotb.test()
async def run_two_queues(dut) -> None:
    """Two queues with multi-packet buffers and batches, flows spread by RSS: a completion of
    the other queue closes the open batch, H is flushed on a queue change."""
    tb = NicTb(dut, cocotb.RANDOM_SEED, TrafficProfile.rough())
    await tb.reset()
    env = await MultiQueueEnv.create(tb, 2, MPB)
    await ethtool.set_rx_flow_hash(env.hw, {"tcp4", "udp4", "tcp6", "udp6"})
    await ethtool.set_rxfh(env.hw, key=bytes(range(40)), indir=[i % 2 for i in range(128)],
                           num_queues=2)
    rng = random.Random(cocotb.RANDOM_SEED)
    frames = [build(Flow(sport=rng.randrange(1024, 65536), proto=rng.choice(["tcp", "udp"])),
                    pattern(rng.choice([1, 10, 60, 200, 700]), start=i)) for i in range(120)]
    await env.run(frames)
    per_queue = env.delivered_per_queue
    assert sum(per_queue) == len(frames) and min(per_queue) > 10, per_queue
    # every DMA write inside a buffer or completion ring of one of the queues
    ranges = [(rxq.cq_base, 16 * rxq.cq_size) for rxq, _ in env.queues]
    for _, sb in env.queues:
        ranges += [(a, sb.cfg.hdr_buf_bytes) for a in sb.hdr_bufs.values()]
        ranges += [(a, sb.cfg.pay_buf_bytes) for a in sb.pay_bufs.values()]
    for addr, n in tb.space.writes:
        assert any(a <= addr and addr + n <= a + size for a, size in ranges), \
            f"DMA write of {n} bytes at 0x{addr:x} outside every buffer and completion ring"
    assert tb.dev.cpu_reads == 0


async def _irq_count(dut, q: int, counter: list[int]) -> None:
    while True:
        await RisingEdge(dut.clk)
        if int(dut.irq.value) >> q & 1:
            counter[0] += 1


@cocotb.test()
async def run_batch_timing(dut) -> None:
    """When completions appear (rx-rules.md section 5): with rx-usecs 2 a lone frame's
    completion waits 2 us (500 cycles) before CQ.HW_IDX moves, then the interrupt fires once;
    with rx-frames 8, a back-to-back train of 8 frames comes as one batch
    (HW_IDX jumps by 8, one interrupt); the reset values write each frame at once."""
    tb = NicTb(dut, cocotb.RANDOM_SEED)
    await tb.reset()
    rxq, sb = await bring_up(tb, replace(MPB, rx_usecs=2, rx_frames=8))
    hw_idx = regs.rxq_reg(0, regs.RXQ_CQ + regs.RING_HW_IDX)
    irqs = [0]
    cocotb.start_soon(_irq_count(dut, 0, irqs))
    await rxq.arm_irq()
    frame = build(Flow(), pattern(100))
    sb.sent_frame(frame)
    await tb.send(frame)
    await tb.wait_rx_idle()
    t0 = cocotb.utils.get_sim_time("ns")
    await tb.delay(1200)                          # well inside the 2 us
    assert await tb.read32(hw_idx) == 0, "the batch closed before rx-usecs"
    assert irqs[0] == 0
    while await tb.read32(hw_idx) == 0:
        await tb.delay(40)
    waited = cocotb.utils.get_sim_time("ns") - t0
    assert 1500 < waited < 2600, f"completion visible after {waited} ns"
    assert irqs[0] == 1
    for got in await rxq.napi_poll():
        sb.check(got)
    # rx-frames 8: a train of 8 (well inside rx-usecs) is one batch
    await rxq.set_coalesce(2, 8)
    await rxq.arm_irq()
    seen: set[int] = set()

    async def watch() -> None:
        while True:
            await RisingEdge(dut.clk)
            seen.add(int(dut.u_dma.cq_hw_idx.value) & 0xFFFF)
    watcher = cocotb.start_soon(watch())
    frames = [build(Flow(), pattern(20, start=i)) for i in range(8)]
    for f in frames:
        sb.sent_frame(f)
        await tb.send(f)
    await tb.wait_rx_idle()
    await tb.delay(2000)
    watcher.cancel()
    assert seen == {1, 9}, f"CQ.HW_IDX took the values {sorted(seen)}: not one batch of 8"
    assert irqs[0] == 2
    for got in await rxq.napi_poll():
        sb.check(got)
    # reset values: every frame at once
    await rxq.set_coalesce(0, 1)
    for i, f in enumerate(frames[:3]):
        sb.sent_frame(f)
        await tb.send(f)
        await tb.wait_rx_idle()
        await tb.delay(400)
        assert await tb.read32(hw_idx) == 10 + i
    for got in await rxq.napi_poll():
        sb.check(got)
    assert sb.checked == 12 and not sb.outstanding


@pytest.mark.rtl
@pytest.mark.parametrize("data_w", [64, 512])
def test_rx_mpb(data_w: int) -> None:
    run_rtl_test("nic_top", rtl_file_list(), "tests.rtl.test_rx_mpb", {"DATA_W": data_w}, pytest_test_name())
