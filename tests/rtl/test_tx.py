"""TX path on the RTL (docs/tx.md): gather from host and device memory at any alignment,
checksum offload checked by scapy, all queues at once, every error status, queue disable with
busy; random AXI stalls and MAC backpressure. Every sent frame is compared byte for byte with
the expectation (scapy-built frames), every completion field by field, and the counters.
Expectations: tb/tx_env.py, from docs/tx.md (and models/tx.py's rules when present).
"""
from __future__ import annotations

import random

import cocotb
import pytest

from driver import regs
from models.formats import TxDesc, TxStatus
from tb.axi_wr_slave import AwReady, check_awready_exercised
from tb.nic_tb import NicTb, TrafficProfile
from tb.sim import nic_top_params, pytest_test_name, rtl_file_list, run_rtl_test
from tb.tx_env import (COUNTERS, PagePool, QueuePlan, bring_up, good_frame, good_inline_frame,
                       inline_entries, read_counters, run_plans)
from tests.axi_slaves import awready_env, awready_params


# ------------------------------------------------------------------------------------------
@cocotb.test()
async def run_tx_mix(dut) -> None:
    """Four queues at once: TCP/UDP over IPv4/IPv6, 60..9000 bytes, header in host memory and
    1..16 segments in device memory at odd places (4 KiB page ends exact), checksum offload
    on most frames (a UDP zero result sent as 0xFFFF), random AXI stalls and MAC backpressure.
    Under a DMA slave whose AWREADY waits for W (tests.axi_slaves) every size goes once, not
    twice: short traffic for make test's extra runs."""
    tb = NicTb(dut, cocotb.RANDOM_SEED, TrafficProfile.rough())
    rng = random.Random(cocotb.RANDOM_SEED)
    await tb.reset()
    assert await tb.read32(regs.TX_CAPS) == 4 | (16 << 8) | (16 << 16)
    limit = 9000
    await tb.write32(regs.TX_FRAME_LIMIT, limit)
    rings = await bring_up(tb, [0, 1, 2, 3])
    host = PagePool(tb, 256, device=False)
    dev = PagePool(tb, 1024, device=True)
    sizes = [60, 61, 62, 63, 64, 65, 66, 67, 70, 96, 127, 128, 129, 200, 255, 256, 511, 512,
             1000, 1499, 1514, 1518, 2047, 4096, 4097, 8191, 9000]
    plans = [QueuePlan(r) for r in rings]
    tag = 1
    reps = 2 if tb.profile.awready is AwReady.INDEPENDENT else 1
    for i, size in enumerate(sizes * reps):
        plan = plans[i % 4]
        kind = rng.randrange(4)
        good_frame(rng, plan, host, dev, size, kind, tag, csum=(i % 5 != 4))
        tag += 1
    good_frame(rng, plans[1], host, dev, 102, 2, tag, zero_csum=True)      # UDP: 0 -> 0xFFFF
    before = await read_counters(tb)
    inc = await run_plans(tb, plans, limit)
    after = await read_counters(tb)
    assert {c: (after[c] - before[c]) & 0xFFFF_FFFF for c in COUNTERS} == inc
    assert inc["TX_FRAMES"] == len(sizes) * reps + 1
    assert tb.dev.cpu_reads == 0
    check_awready_exercised(tb)


@cocotb.test()
async def run_tx_errors(dut) -> None:
    """Every error status, each followed by a good frame on the same queue, on two queues
    at once; counters compared."""
    tb = NicTb(dut, cocotb.RANDOM_SEED, TrafficProfile.rough())
    rng = random.Random(cocotb.RANDOM_SEED + 1)
    await tb.reset()
    limit = 1522
    rings = await bring_up(tb, [1, 2])
    host = PagePool(tb, 128, device=False)
    dev = PagePool(tb, 256, device=True)
    p1, p2 = QueuePlan(rings[0]), QueuePlan(rings[1])
    tag = 100

    def good(plan: QueuePlan) -> None:
        nonlocal tag
        good_frame(rng, plan, host, dev, rng.choice([60, 77, 333, 1514]), rng.randrange(4), tag)
        tag += 1

    def raw(plan: QueuePlan, lens: list[int], eop: bool = True, **first) -> None:
        """A frame of raw segments in device memory (not expected to be sent)."""
        nonlocal tag
        descs = []
        for n in lens:
            descs.append(TxDesc(dev.place(bytes(min(n, 4096)), 0) if n <= 4096 else dev.place(bytes(16), 0), n))
        descs[-1].eop = eop
        for k, v in first.items():
            setattr(descs[0], k, v)
        descs[0].tag = tag
        tag += 1
        plan.add(descs)
        good(plan)

    # BAD_SEG: zero length, over 4096, across a 4 KiB boundary, 16 descriptors without EOP.
    raw(p1, [60, 0])
    raw(p1, [4097])
    cross = TxDesc(dev.place(bytes(100), 4000, cross=True), 100, eop=True)   # 4000 + 100 > 4096
    p1.add([TxDesc(host.place(bytes(60), 8), 60), cross]); good(p1)
    raw(p1, [10] * 16, eop=False)
    # BAD_LEN: too short, longer than TX_FRAME_LIMIT.
    raw(p1, [59])
    raw(p1, [1000, 523])
    raw(p1, [40, 20])                    # exactly 60: good length, sent (raw bytes, no csum)
    # BAD_CSUM: odd start, odd offset, field past the end; a field ending at the end is fine.
    raw(p2, [100], csum=True, csum_start=35, csum_offset=16)
    raw(p2, [100], csum=True, csum_start=34, csum_offset=15)
    raw(p2, [100], csum=True, csum_start=34, csum_offset=66)  # 34 + 66 + 2 > 100
    # DMA_RD_ERR: a payload segment's read fails (host and device).
    good(p2)
    good(p2)
    p2.dma_fail.add(p2.frame_bounds[-1])
    f = p2.descs[-1]                                      # its last segment
    tb.space.add_error_range(f.addr + f.len - 1, 1)
    good(p2)
    good(p2)
    p2.dma_fail.add(p2.frame_bounds[-1])
    h = p2.descs[p2.frame_bounds[-1]]
    tb.space.add_error_range(h.addr, 1)
    good(p2)
    # DESC_RD_ERR: a 128-byte aligned block of the ring (8 entries: one bus word even at
    # 1024 bits) fails; the frame running into it ends there, each failed entry is a frame.
    while (len(p1.descs) + 1) % 8:
        good(p1)
    p1.add([TxDesc(host.place(bytes(30), 0), 30)])        # runs into the failed block
    block = len(p1.descs)
    for k in range(8):
        p1.add([TxDesc(host.place(bytes(64), 0), 64, eop=(k % 3 == 2))])
        p1.desc_fail.add(block + k)
    good(p1)
    good(p1)
    tb.space.add_error_range(rings[0].entry_addr(block), 128)
    before = await read_counters(tb)
    # The raw 60-byte frame above is sent: its expected bytes are its zero segments.
    idx60 = [b for b in p1.frame_bounds if [d.len for d in p1.descs[b:b + 2]] == [40, 20]][0]
    p1.wire[idx60] = bytes(60)
    inc = await run_plans(tb, [p1, p2], limit)
    after = await read_counters(tb)
    assert {c: (after[c] - before[c]) & 0xFFFF_FFFF for c in COUNTERS} == inc
    assert inc["TX_ERR_BAD_SEG"] == 4 and inc["TX_ERR_BAD_LEN"] == 2 and inc["TX_ERR_BAD_CSUM"] == 3
    assert inc["TX_DMA_RD_ERR"] == 2 and inc["TX_DESC_RD_ERR"] == 8
    tb.space.clear_error_ranges()
    # The queues still work.
    start = rings[0].sw_idx
    q = QueuePlan(rings[0])
    good_frame(rng, q, host, dev, 300, 1, 999)
    rings[0].write_descs(q.descs)
    await rings[0].doorbell()
    for _ in range(100):
        await tb.delay(500)
        cpls = rings[0].poll()
        if cpls:
            break
    assert len(cpls) == 1 and cpls[0].status == TxStatus.OK and cpls[0].desc_idx == start
    await tb.delay(3000)
    assert tb.tx_frames() == [q.wire[0]]


@cocotb.test()
async def run_tx_disable(dut) -> None:
    """Clearing CTRL.enable with frames posted: the started frame is finished (sent, its
    completion written), STATUS.busy reads 1 until then, no further frame starts, the hardware
    indices read 0 once idle, and the re-enabled queue sends again from index 0."""
    tb = NicTb(dut, cocotb.RANDOM_SEED, TrafficProfile(dma_stall=0.3, tx_stall=0.6))
    rng = random.Random(cocotb.RANDOM_SEED + 2)
    await tb.reset()
    await tb.write32(regs.TX_FRAME_LIMIT, 9000)
    (ring,) = await bring_up(tb, [3])
    host = PagePool(tb, 32, device=False)
    dev = PagePool(tb, 128, device=True)
    plan = QueuePlan(ring)
    for i in range(6):
        good_frame(rng, plan, host, dev, 9000, i % 4, 50 + i)
    exp = plan.expected(9000)
    ring.write_descs(plan.descs)
    await ring.doorbell()
    cpls = []
    for _ in range(400):
        await tb.delay(100)
        cpls += ring.poll()
        if cpls:
            break
    assert cpls, "no frame completed"
    await tb.write32(ring.reg(regs.TXQ_CTRL), 0)
    busy_seen = 0
    for _ in range(2000):
        st = await tb.read32(ring.reg(regs.TXQ_STATUS))
        if not st & 2:
            break
        busy_seen += 1
        await tb.delay(100)
    assert not st & 2, "STATUS.busy never cleared"
    assert busy_seen > 0, "STATUS.busy never seen set with a frame started"
    cpls += ring.poll()
    n = len(cpls)
    assert 1 <= n < len(exp), f"{n} frames completed after disable"
    assert cpls == [e.cpl for e in exp[:n]]
    assert await tb.read32(ring.reg(regs.TXQ_DESC_RING + regs.RING_HW_IDX)) == 0
    assert await tb.read32(ring.reg(regs.TXQ_CQ + regs.RING_HW_IDX)) == 0
    await tb.delay(40_000)                 # the FIFO drains at the stalled MAC's pace
    assert tb.tx_frames() == [e.wire for e in exp[:n]]
    assert ring.poll() == []
    # Re-enable from index 0 and send one more frame.
    await ring.start()
    p2 = QueuePlan(ring)
    good_frame(rng, p2, host, dev, 1514, 0, 77)
    inc = await run_plans(tb, [p2], 9000)
    assert inc["TX_FRAMES"] == 1
    assert await tb.read32(regs.TX_FRAMES) == n + 1


@cocotb.test()
async def run_tx_inline(dut) -> None:
    """Inline headers (docs/tx.md, "Inline headers") on four queues under random AXI stalls and
    MAC backpressure, mixed with frames of header segments: headers of 1..128 bytes in the
    ring (padding of the last entry random, header bytes with every flag bit set), the INLINE
    descriptor with and without a segment of its own, up to 16 descriptors after the inline
    entries, frames entirely inline; and the inline error cases: inline_len over 128
    (BAD_LEN, its entries consumed), a bad segment, a checksum field past the end, a failed
    read of inline entries (DESC_RD_ERR, the frame still ends at its EOP descriptor)."""
    tb = NicTb(dut, cocotb.RANDOM_SEED, TrafficProfile.rough())
    rng = random.Random(cocotb.RANDOM_SEED + 7)
    await tb.reset()
    off = await tb.read32(regs.TX_OFFLOADS)
    assert regs.TX_OFFLOADS_INLINE_MAX.get(off) == 128
    limit = 9000
    await tb.write32(regs.TX_FRAME_LIMIT, limit)
    rings = await bring_up(tb, [0, 1, 2, 3], log2=9, inline_en=True)
    host = PagePool(tb, 256, device=False)
    dev = PagePool(tb, 1024, device=True)
    plans = [QueuePlan(r) for r in rings]
    sizes = [60, 61, 64, 65, 66, 96, 127, 128, 129, 200, 256, 511, 1000, 1514, 4097, 9000]
    tag = 1
    for i, size in enumerate(sizes * 3):
        plan = plans[i % 4]
        kind = rng.randrange(4)
        r = rng.random()
        if r < 0.15:
            good_frame(rng, plan, host, dev, size, kind, tag)          # header segment, not inline
        elif r < 0.35:
            good_inline_frame(rng, plan, dev, size, kind, tag, hlen=rng.randint(1, 128))
        elif r < 0.45 and size <= 128:
            good_inline_frame(rng, plan, dev, size, kind, tag, hlen=size)   # all of it inline
        else:
            good_inline_frame(rng, plan, dev, size, kind, tag)
        tag += 1
    # Header bytes that look like descriptors with EOP (byte 10 bit 0 of every entry set).
    p3 = plans[3]
    frame = bytes([0x01] * 80) + rng.randbytes(40)
    first = TxDesc(dev.place(frame[80:], 7), 40, eop=True, inline=True, inline_len=80, tag=tag)
    p3.add([first, *inline_entries(frame[:80], pad=0x01)], frame)
    tag += 1
    # Errors, each followed by a good frame on the same queue.
    bad_len = TxDesc(0, 0, eop=True, inline=True, inline_len=200, tag=tag)
    p3.add([bad_len, *inline_entries(bytes([0x01]) * 200)])
    good_inline_frame(rng, p3, dev, 300, 0, tag + 1)
    bad_seg = TxDesc(dev.place(bytes(100), 4000, cross=True), 100, eop=True, inline=True,
                     inline_len=16, tag=tag + 2)
    p3.add([bad_seg, bytes(16)])
    good_inline_frame(rng, p3, dev, 90, 2, tag + 3)
    bad_csum = TxDesc(dev.place(bytes(10), 0), 10, eop=True, inline=True, inline_len=54,
                      csum=True, csum_start=34, csum_offset=30, tag=tag + 4)
    p3.add([bad_csum, *inline_entries(bytes(54))])
    tag += 5
    # A failed read of a 128-byte aligned block of the ring (8 entries: one bus word even at
    # 1024 bits) holding the 8 inline entries of a 128-byte header; its EOP descriptor follows.
    p2 = plans[2]
    while (len(p2.descs) + 1) % 8:
        good_frame(rng, p2, host, dev, 70, 0, tag)
        tag += 1
    block = len(p2.descs) + 1
    first = TxDesc(dev.place(bytes(30), 0), 30, inline=True, inline_len=128, tag=tag)
    p2.add([first, *inline_entries(bytes(128)), TxDesc(dev.place(bytes(9), 0), 9, eop=True)])
    p2.desc_fail.update(range(block, block + 8))
    tb.space.add_error_range(rings[2].entry_addr(block), 128)
    good_inline_frame(rng, p2, dev, 1514, 1, tag + 1)
    tag += 2
    before = await read_counters(tb)
    inc = await run_plans(tb, plans, limit)
    after = await read_counters(tb)
    assert {c: (after[c] - before[c]) & 0xFFFF_FFFF for c in COUNTERS} == inc
    assert inc["TX_ERR_BAD_LEN"] == 1 and inc["TX_ERR_BAD_SEG"] == 1 and inc["TX_ERR_BAD_CSUM"] == 1
    assert inc["TX_DESC_RD_ERR"] == 1
    assert tb.dev.cpu_reads == 0
    # A failed read of a frame's first descriptor halts the inline_en queue (STATUS.halted):
    # the entries after it are not taken for descriptors; its reset clears it.
    tb.space.clear_error_ranges()
    ring = rings[1]
    halt = QueuePlan(ring)
    for k in range(3):
        good_inline_frame(rng, halt, dev, 200, 0, 700 + k)
    first = ring.write_descs(halt.descs)
    block = ring.entry_addr(first) - ring.entry_addr(first) % 128
    tb.space.add_error_range(block, 128)
    await ring.doorbell()
    await tb.delay(3000)
    cpls = ring.poll()
    assert [c.status for c in cpls] == [TxStatus.DESC_RD_ERR] * len(cpls) and len(cpls) == 1
    status = await tb.read32(ring.reg(regs.TXQ_STATUS))
    assert regs.TXQ_STATUS_HALTED.get(status) == 1 and not tb.tx_frames()
    await tb.write32(ring.reg(regs.TXQ_CTRL), 0)
    await tb.delay(200)
    status = await tb.read32(ring.reg(regs.TXQ_STATUS))
    assert status == 0, f"STATUS {status:#x} after the queue's reset"
    tb.space.clear_error_ranges()
    await ring.start(inline_en=True)
    again = QueuePlan(ring)
    good_inline_frame(rng, again, dev, 200, 1, 800)
    await run_plans(tb, [again], limit)


WAITING_SLAVE_TESTS = "run_tx_mix,run_tx_disable"
"""The cocotb tests of a run under a waiting DMA write slave."""


@pytest.mark.rtl
@pytest.mark.parametrize("data_w,dma_w,awready", awready_params(
    [(64, 128), (512, 1024), (64, 64), (512, 512)], [(64, 128), (512, 1024)],
    # 512/512 (DMA as wide as the MAC at 512 bits: a build of its own) in make regress
    marks_of=lambda p: [pytest.mark.regress_only] if p == (512, 512) else []))
def test_tx(data_w: int, dma_w: int, awready: str | None) -> None:
    # DMA width = 2 * DATA_W is the default: that build is shared with the RX tests. DMA width
    # = MAC width (no down-conversion in the egress; at 64 bits the two-beat descriptor path
    # and segment reads split at MAX_BURST) shares test_rx_rules' builds. Also under DMA slaves
    # whose AWREADY waits for the burst's first or last W beat: the mix (each size once) and
    # the disable (STATUS.busy counts a burst from its W, not its AW handshake), short traffic.
    params = nic_top_params(data_w, dma_w)
    run_rtl_test("nic_top", rtl_file_list(), "tests.rtl.test_tx", params, pytest_test_name(),
                 extra_env=awready_env(awready), testcase=WAITING_SLAVE_TESTS if awready else None)
