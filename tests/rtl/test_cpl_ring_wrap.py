"""The TX completion rings wrapped many times while the DMA write slave stalls (issue 24's
completion-in-ring rule, docs/verification.md): four queues with completion rings of 4 and 8
entries (two of them starting mid-page, one ending on a 4 KiB boundary) with good frames and,
between them, frames too short (BAD_LEN: decided from the descriptor, no data read, so their
completions come nearly every cycle), completion
moderation at its maximum (COALESCE.frames 0: batches up to TX_COAL_MAX), a DMA write slave
whose AWREADY waits for the burst's WLAST (`after-wlast`) with 40 % stalls on every channel, so
batches that reach the ring's end wait for the bus while further completions arrive: the case
where tx_cpl_wr once wrote a batch linearly past the ring's end (09ec843). Every completion
write is checked by `tb.tx_env.CplRingCheck` (inside its ring, at the slot the model expects,
nothing in the guard bytes after the ring), every completion field by field and every frame
on the wire by `run_plans`, and the counters. `tests/bugs/tx_cpl_wr_wrap.patch` puts the old
batch rule back; this test fails on it at the first such write.
"""
from __future__ import annotations

import random

import cocotb
import pytest

from driver import regs
from models.formats import TX_COAL_MAX, TxDesc
from tb.axi_wr_slave import check_awready_exercised
from tb.nic_tb import NicTb, TrafficProfile
from tb.sim import pytest_test_name, rtl_file_list, run_rtl_test
from tb.tx_env import (COUNTERS, MIN_LEN, PAGE, CplRingCheck, PagePool, QueuePlan, TxRing, good_frame,
                       read_counters, run_plans)

FRAMES_PER_QUEUE = 96
SHORT_RATE = 0.6                  # frames too short (BAD_LEN): no data read, completions come fast
GUARD = 16 * TX_COAL_MAX          # bytes after each ring that no completion may touch


@cocotb.test()
async def run_cq_wrap_stalled(dut) -> None:
    tb = NicTb(dut, cocotb.RANDOM_SEED, TrafficProfile(dma_stall=0.4, tx_stall=0.05, awready="after-wlast"))
    rng = random.Random(cocotb.RANDOM_SEED)
    await tb.reset()
    # (queue, ring log2, CQ log2, CQ offset in its page): the free bytes after each ring are
    # the guard (a ring ending on a page boundary is followed by the next ring's page, which
    # the NIC never writes either: descriptor rings are read only).
    layout = [(0, 5, 2, 0), (1, 5, 3, 16 * 37), (2, 5, 2, PAGE - 64), (3, 5, 3, 16 * 200)]
    rings = [TxRing(tb, t, log2=lg, cq_log2=cq, cq_offset=off) for t, lg, cq, off in layout]
    for r in rings:
        await r.start()
        await tb.write32(r.reg(regs.TXQ_COALESCE), regs.TXQ_COALESCE_FRAMES.put(0))   # up to TX_COAL_MAX
    host = PagePool(tb, 4 * FRAMES_PER_QUEUE + 8, device=False)     # one header page per frame
    dev = PagePool(tb, 2048, device=True)
    plans = [QueuePlan(r) for r in rings]
    tag = 1
    for _ in range(FRAMES_PER_QUEUE):
        for p in plans:
            if rng.random() < SHORT_RATE:
                n = rng.randint(1, MIN_LEN - 1)
                p.add([TxDesc(host.place(bytes(n), 0), n, eop=True, tag=tag)])
            else:
                good_frame(rng, p, host, dev, rng.choice([60, 64, 90, 128, 200, 333]), rng.randrange(4), tag)
            tag += 1
    assert not host.wrapped and not dev.wrapped, "a page was reused before its frame was sent"
    check = CplRingCheck(tb.space, rings, guard=GUARD)
    for r in rings:
        check.expect(r.t, FRAMES_PER_QUEUE)
    before = await read_counters(tb)
    inc = await run_plans(tb, plans, 1522)
    after = await read_counters(tb)
    assert {c: (after[c] - before[c]) & 0xFFFF_FFFF for c in COUNTERS} == inc
    assert inc["TX_FRAMES"] + inc["TX_ERR_BAD_LEN"] == 4 * FRAMES_PER_QUEUE and inc["TX_ERR_BAD_LEN"] > 0
    # every completion was seen written where it belongs (the check cannot pass vacuously)
    assert check.scan() == 4 * FRAMES_PER_QUEUE, (check.checked, check.written)
    for r in rings:
        hw = (await r.hw_idx())[1]
        assert hw == FRAMES_PER_QUEUE and hw >= 8 << r.cq_log2, f"TXQ[{r.t}] CQ.HW_IDX {hw}: rings not wrapped"
    check_awready_exercised(tb)


@pytest.mark.rtl
@pytest.mark.parametrize("data_w", [64, 512])
def test_cpl_ring_wrap(data_w: int) -> None:
    # DMA width 2 * DATA_W (the default): the builds of test_tx[64-128] / [512-1024] and test_uvm
    run_rtl_test("nic_top", rtl_file_list(), "tests.rtl.test_cpl_ring_wrap", {"DATA_W": data_w},
                 pytest_test_name())
