"""The fast testbench path (tb/fast/) delivers byte-exact what the golden model says: the
split sweep of tests/rtl/test_rx_split.py (every flow kind x payload sizes, random stream
gaps and DMA stalls), a bulk train with batched refill (its comparisons also in a second
process, which must catch a corrupted payload byte), and TX frames through a TX sink
queue too small to hold them (its backpressure must lose nothing), on the nic_fast_top
harness (HDL clock, compiled RX source, TX sink and DMA target, no per-beat Python), at MAC
widths 64 and 512, and once with a 64-bit DMA bus and three RX and TX queues.
"""
from __future__ import annotations

import random
from dataclasses import replace

import cocotb
import pytest

from driver import regs
from driver.rx_queue import RxQueueConfig
from tb.fast.fast_tb import FastNicTb
from tb import tx_env
from tb.frames import Flow, build, pattern
from tb.nic_tb import TrafficProfile
from tb.rx_env import bring_up, run_traffic
from tb.sim import pytest_test_name

PAYLOAD_SIZES = [0, 1, 7, 8, 63, 64, 65, 127, 128, 255, 256, 511, 1023, 1400]
FLOWS = [Flow(ipv6=v6, proto=proto, vlan_tags=tags)
         for v6 in (False, True) for proto in ("tcp", "udp") for tags in (0, 2)]


@cocotb.test()
async def run_fast_split_sweep(dut) -> None:
    """Every flow kind x payload sizes, split on, rough traffic: checked by RxScoreboard."""
    # rough traffic, and the header and payload rings' reads interleave beat by beat
    tb = FastNicTb(dut, cocotb.RANDOM_SEED, replace(TrafficProfile.rough(), read_interleave=True))
    await tb.reset()
    qcfg = RxQueueConfig(hdr_ring_log2=5, pay_ring_log2=5, cq_log2=6, tcp_data_split=True, hds_thresh=0)
    rxq, sb = await bring_up(tb, qcfg)
    frames = []
    for flow in FLOWS:
        for n in PAYLOAD_SIZES + [flow.max_payload()]:
            frames.append(build(flow, pattern(n, period=251, start=len(frames))))
    await run_traffic(tb, rxq, sb, frames)
    tb.sync()
    assert sb.checked == len(frames) and not sb.dropped
    sb.check_writes_in_bounds(tb.space, rxq.cq_base)
    assert tb.space.writes, "no DMA write was logged"
    assert not tb.space.errors
    assert tb.dev.cpu_reads == 0
    assert sb.payload_bytes_to_host == 0
    assert await tb.read32(regs.RX_FRAMES) == len(frames)
    # The two rings' descriptor reads overlapped and their beats interleaved. On a 64- or
    # 128-bit DMA bus a batch is a multi-beat burst and interleaving is certain; on a
    # 1024-bit bus a batch of 8 is one beat (two when it starts mid-beat), so it is rare.
    interleaved = int(dut.r_interleaved.value)
    if tb.dma_bytes <= 16:
        assert interleaved > 0, "no R beat was served ahead of an older burst"
    dut._log.info("fast path: %d frames checked in %d cycles, %d R beats interleaved; %s",
                  sb.checked, tb.cycles, interleaved, tb.shm.stats())


@cocotb.test()
async def run_fast_mpb_sweep(dut) -> None:
    """The sweep again with multi-packet payload buffers (16-byte strides), write combining
    and completion batches of 16 (rx-usecs 1), rough traffic, interleaved reads."""
    tb = FastNicTb(dut, cocotb.RANDOM_SEED, replace(TrafficProfile.rough(), read_interleave=True))
    await tb.reset()
    qcfg = RxQueueConfig(hdr_ring_log2=5, pay_ring_log2=5, cq_log2=6, tcp_data_split=True, hds_thresh=0,
                         pay_mpb=True, pay_stride_log2=4, rx_frames=16, rx_usecs=1)
    rxq, sb = await bring_up(tb, qcfg)
    rng = random.Random(cocotb.RANDOM_SEED)
    frames = [build(flow, pattern(n, period=251, start=i))
              for i, (flow, n) in enumerate((f, n) for f in FLOWS for n in PAYLOAD_SIZES)]
    rng.shuffle(frames)
    await run_traffic(tb, rxq, sb, frames)
    tb.sync()
    assert sb.checked == len(frames) and not sb.dropped
    sb.check_writes_in_bounds(tb.space, rxq.cq_base)
    assert not tb.space.errors and tb.dev.cpu_reads == 0
    assert await tb.read32(regs.RX_FRAMES) == len(frames)


@cocotb.test()
async def run_fast_bulk(dut) -> None:
    """The benchmark's bulk loop (bench/sim_speed_sim.py), short: back-to-back 1500-byte
    TCP frames queued in bulk, refill in batches, every frame checked against the model."""
    from bench.sim_speed_sim import bulk_rx

    tb = FastNicTb(dut, cocotb.RANDOM_SEED, record_writes=True)
    await tb.reset()
    res = await bulk_rx(tb, n_frames=300, frame_bytes=1500, fast=True)
    assert res["checked"] == 300 and res["drops"] == 0
    assert tb.dev.cpu_reads == 0


@cocotb.test()
async def run_fast_bulk_checker_process(dut) -> None:
    """The bulk loop with its comparisons in a forked checker process (the speed benchmark's
    fast_pgo_par): every frame checked, and a payload byte flipped in device memory after
    frame 150 landed must fail the run with the payload difference."""
    from bench.sim_speed_sim import bulk_rx

    tb = FastNicTb(dut, cocotb.RANDOM_SEED)
    await tb.reset()
    res = await bulk_rx(tb, n_frames=300, frame_bytes=1500, fast=True, checker_process=True)
    assert res["checked"] == 300 and res["drops"] == 0 and res["checker"] == "process"

    for process in (True, False):
        tb = FastNicTb(dut, cocotb.RANDOM_SEED)
        await tb.reset()
        with pytest.raises(AssertionError, match=r"frame #150 .*payload buffer \d+ bytes differ"):
            await bulk_rx(tb, n_frames=300, frame_bytes=1500, fast=True, checker_process=process,
                          corrupt_frame=150)


@cocotb.test()
async def run_fast_tx_backpressure(dut) -> None:
    """TX frames (TCP/UDP, v4/v6, 60..1514 bytes, header in host memory and payload in device
    memory) through a TX sink queue that holds two frames: while Python does not drain it the
    NIC must stall with exactly two frames delivered, then every frame must arrive byte-exact
    and in order (expected bytes from scapy, docs/tx.md)."""
    tb = FastNicTb(dut, cocotb.RANDOM_SEED, TrafficProfile(dma_stall=0.2, tx_stall=0.3, read_interleave=True),
                   tx_frames=2, tx_data_bytes=8192)
    await tb.reset()
    rng = random.Random(cocotb.RANDOM_SEED)
    (ring,) = await tx_env.bring_up(tb, [0])
    host = tx_env.PagePool(tb, 64, device=False)
    dev = tx_env.PagePool(tb, 64, device=True)
    plan = tx_env.QueuePlan(ring)
    sizes = [60, 64, 65, 200, 1514, 1400, 128, 777, 1024, 61, 1200, 1500]   # within TX_FRAME_LIMIT
    for i, size in enumerate(sizes):
        tx_env.good_frame(rng, plan, host, dev, size, kind=i % 4, tag=i)
    ring.write_descs(plan.descs)
    await ring.doorbell()
    await tb.delay(40_000)                      # ~10k cycles: the NIC waits on the full sink
    assert tb.shm.tx_pending == 2, f"sink queue holds {tb.shm.tx_pending} frames, expected 2 (full)"
    want = [plan.wire[i] for i in plan.frame_bounds]
    got: list[bytes] = []
    for _ in range(200):
        got += tb.tx_frames()
        if len(got) >= len(want):
            break
        await tb.delay(4_000)
    assert len(got) == len(want), f"{len(got)} of {len(want)} frames left the NIC"
    for k, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"frame {k} ({len(w)} bytes) differs from the expected bytes"
    cpls = ring.poll()
    assert [c.status for c in cpls] == [0] * len(want), cpls
    assert await tb.read32(regs.TX_FRAMES) == len(want)
    assert tb.dev.cpu_reads == 0
    dut._log.info("fast TX sink: %d frames through a 2-frame queue in %d cycles; %s",
                  len(got), tb.cycles, tb.shm.stats())


@pytest.mark.rtl
@pytest.mark.parametrize("params", [
    {"DATA_W": 64},
    {"DATA_W": 512},
    # a 64-bit DMA bus (a descriptor in two beats, interleaved with other rings' beats) and
    # queue counts that are not powers of two (ring numbers and ARIDs not filling their bits)
    # (a build of its own: make regress; make test has DMA = MAC width in test_tx[64-64])
    pytest.param({"DATA_W": 64, "DMA_DATA_W": 64, "NUM_RXQ": 3, "NUM_TXQ": 3}, marks=pytest.mark.regress_only),
], ids=["64", "512", "64-dma64-q3"])
def test_fast_path(params):
    from tb.fast.build import run_fast_test
    run_fast_test("tests.rtl.test_fast_path", params, pytest_test_name())
