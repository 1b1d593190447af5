"""tx_tso_rd (rtl/tx/tx_tso_rd.sv) alone against models.tso.tso_read_plan.

Random sends (header in the descriptors or inline, the header spanning descriptors, payload
descriptors of any length 1..4096 at any alignment within a page, MSS 88..8948, 1 to 17
payload descriptors, zero-length first descriptors of inline sends) under random gaps on the
descriptor input and backpressure on the read output; every read on show is checked to stay
stable until taken (AXI-Stream style), and the reads, in order, must be exactly the model's.
"""
from __future__ import annotations

import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge

from models.tso import TsoRead, tso_read_plan
from tb.sim import pytest_test_name, run_rtl_test

SOURCES = ["rtl/tx/tx_tso_rd.sv"]


def random_send(rng: random.Random) -> tuple[list[tuple[int, int]], int, int, int]:
    """(descriptors, inline_len, hdr_len, mss) of a legal send."""
    hdr_len = rng.choice([54, 66, 74, 86, 94, 128])
    inline_len = rng.choice([0, hdr_len, 0])
    mss = rng.choice([88, 536, 1448, 4096, 8948, rng.randrange(88, 8949)])
    descs: list[tuple[int, int]] = []
    if inline_len:
        descs.append((0, 0))                          # the INLINE descriptor without a segment
    else:
        # the header in one or two host segments, maybe with the first payload bytes
        cut = rng.randrange(1, hdr_len + 1) if rng.random() < 0.3 else hdr_len
        extra = rng.choice([0, 0, rng.randrange(1, 200)])
        descs.append((0x1000_0000 + rng.randrange(0, 64), cut))
        if cut < hdr_len or extra:
            descs.append((0x1000_2000 + rng.randrange(0, 64), hdr_len - cut + extra))
    npay = rng.randrange(1, 18 - len(descs) + 1 if len(descs) < 17 else 2)
    for i in range(npay):
        off = rng.randrange(4096)
        n = rng.randrange(1, 4096 - off + 1)
        descs.append((0x80_0000_0000 + i * 0x10000 + off, n))
    return descs, inline_len, hdr_len, mss


class Tb:
    def __init__(self, dut) -> None:
        self.dut = dut
        self.rng = random.Random(cocotb.RANDOM_SEED)

    async def reset(self) -> None:
        d = self.dut
        cocotb.start_soon(Clock(d.clk, 4, unit="ns").start())
        d.rst.value = 1
        d.s_cmd_valid.value = 0
        d.s_desc_valid.value = 0
        d.m_rd_ready.value = 0
        for _ in range(3):
            await RisingEdge(d.clk)
        d.rst.value = 0

    # driven and sampled at the falling edge (see tests/rtl/test_tx_tso_hdr.py)
    async def drive(self, descs: list[tuple[int, int]], hdr_left: int, mss: int, gap: float) -> None:
        d = self.dut
        await FallingEdge(d.clk)
        d.s_cmd_hdr_left.value = hdr_left
        d.s_cmd_mss.value = mss
        d.s_cmd_valid.value = 1
        while not int(d.s_cmd_ready.value):
            await FallingEdge(d.clk)
        await FallingEdge(d.clk)
        d.s_cmd_valid.value = 0
        for i, (addr, n) in enumerate(descs):
            while self.rng.random() < gap:
                d.s_desc_valid.value = 0
                await FallingEdge(d.clk)
            d.s_desc_addr.value = addr
            d.s_desc_len.value = n
            d.s_desc_last.value = int(i == len(descs) - 1)
            d.s_desc_valid.value = 1
            while not int(d.s_desc_ready.value):
                await FallingEdge(d.clk)
            await FallingEdge(d.clk)
        d.s_desc_valid.value = 0

    async def collect(self, stall: float, until_idle: bool = False) -> list[tuple[TsoRead, bool]]:
        """The reads up to the one with m_rd_send_end; with `until_idle`, every read until the
        block is idle (`busy` low with no read on show) instead."""
        d = self.dut
        out = []
        held = None
        for _ in range(100_000):
            await FallingEdge(d.clk)
            if until_idle and not int(d.busy.value) and not int(d.m_rd_valid.value) and len(out):
                d.m_rd_ready.value = 0
                return out
            ready = int(self.rng.random() >= stall)
            d.m_rd_ready.value = ready
            if not int(d.m_rd_valid.value):
                assert held is None, "read withdrawn before it was taken"
                continue
            hdr = int(d.m_rd_hdr.value)
            r = (TsoRead(int(d.m_rd_addr.value), int(d.m_rd_len.value),
                         -1 if hdr else int(d.m_rd_seg.value), bool(int(d.m_rd_seg_end.value))),
                 bool(int(d.m_rd_send_end.value)))
            if held is not None:
                assert r == held, f"read changed while stalled: {held} -> {r}"
            if not ready:
                held = r
                continue
            held = None
            out.append(r)
            if r[1]:
                await FallingEdge(d.clk)
                d.m_rd_ready.value = 0
                return out
        raise AssertionError(f"tx_tso_rd: no send end after {len(out)} reads (hang)")


async def one(tb: Tb, descs, inline_len: int, hdr_len: int, mss: int, gap: float,
              stall: float, want_mss: int | None = None) -> None:
    want = tso_read_plan(descs, inline_len, hdr_len, mss if want_mss is None else want_mss)
    drv = cocotb.start_soon(tb.drive(descs, hdr_len - inline_len, mss, gap))
    got = await tb.collect(stall)
    await drv
    reads = [r for r, _ in got]
    if reads != want:
        i = next(i for i, (a, b) in enumerate(zip(reads + [None] * len(want), want)) if a != b)
        raise AssertionError(f"read {i} of {len(want)}: got {reads[i] if i < len(reads) else None}, "
                             f"want {want[i]} (descs {descs}, inline {inline_len}, hdr {hdr_len}, mss {mss})")
    assert [e for _, e in got] == [False] * (len(got) - 1) + [True]
    for _ in range(3):
        await FallingEdge(tb.dut.clk)
        assert not int(tb.dut.m_rd_valid.value) and not int(tb.dut.busy.value)


@cocotb.test()
async def directed(dut) -> None:
    tb = Tb(dut)
    await tb.reset()
    cases = [
        ([(0, 0), (0x80_0000_07FD, 2051)] + [(0x80_0000_1000 + 0x1000 * i, 4096) for i in range(15)]
         + [(0x80_0001_0000, 2044)], 66, 66, 1448),                     # 65535 bytes, 46 segments
        ([(0x1000_0000, 40), (0x1000_2000, 146), (0x80_0000_0000, 4000)], 0, 86, 1000),
        ([(0x1000_0000, 54 + 1)], 0, 54, 536),                           # one byte of payload
        ([(0, 0), (0x80_0000_0000, 4096), (0x80_0000_2000, 4096)], 54, 54, 8948),
    ]
    for descs, inline_len, hdr_len, mss in cases:
        await one(tb, descs, inline_len, hdr_len, mss, gap=0.0, stall=0.0)


@cocotb.test()
async def contract_corners(dut) -> None:
    """The block's own contract for input tx_sched never gives it (a send reaches tx_tso_rd only
    with status OK: mss >= 88, no zero-length segment in the record), so a bad command cannot
    hang it: `mss` 0 is taken as 65536 (the reads of mss 65536 in the model's plan: no cut in a
    payload of at most 65535 bytes), and a last descriptor of length 0 ends the walk with no
    read of its own and no `m_rd_send_end`, after the reads of the others, and the block goes
    idle (then takes the next send normally)."""
    tb = Tb(dut)
    await tb.reset()
    big = [(0x1000_0000, 54)] + [(0x80_0000_0000 + 0x1000 * i, 4096) for i in range(10)] + [(0x80_0010_0000, 3000)]
    await one(tb, big, 0, 54, 0, gap=0.2, stall=0.3, want_mss=65536)
    descs = [(0x1000_0000, 54 + 100), (0x80_0000_0123, 1000), (0x80_0000_2000, 0)]
    want = [r for r in tso_read_plan(descs, 0, 54, 536)]
    drv = cocotb.start_soon(tb.drive(descs, 54, 536, 0.0))
    got = await tb.collect(0.3, until_idle=True)
    await drv
    assert [(r.addr, r.len, r.seg) for r, _ in got] == [(r.addr, r.len, r.seg) for r in want], \
        f"reads {[r for r, _ in got]}, want {want}"
    assert not any(e for _, e in got), "m_rd_send_end on a send whose last descriptor is empty"
    for _ in range(3):
        await FallingEdge(dut.clk)
        assert not int(dut.m_rd_valid.value) and not int(dut.busy.value)
    await one(tb, [(0x1000_0000, 54 + 1)], 0, 54, 536, gap=0.0, stall=0.0)


@cocotb.test()
async def random_sends(dut) -> None:
    tb = Tb(dut)
    await tb.reset()
    for _ in range(40):
        descs, inline_len, hdr_len, mss = random_send(tb.rng)
        await one(tb, descs, inline_len, hdr_len, mss, gap=tb.rng.choice([0.0, 0.4]),
                  stall=tb.rng.choice([0.0, 0.3, 0.7]))


@pytest.mark.rtl
@pytest.mark.timeout(1800)
def test_tx_tso_rd() -> None:
    run_rtl_test("tx_tso_rd", SOURCES, "tests.rtl.test_tx_tso_rd", {"AW": 64}, pytest_test_name())
