"""The formal property modules (tb/formal/props/) as simulation assertions in Verilator.

`make formal` proves them with SymbiYosys; here the same files, bound into the same RTL with
the same `bind` statements, are compiled by Verilator (`--assert`) and checked every cycle
while cocotb drives random traffic. In simulation a property module's free choices (which
entry to track) come from a pseudo-random sequence, and the environment assumptions of a
proof are not checked (the protocol checker of the testbench checks the bus side). Checks that
rest on a proof-only abstraction (desc_engine's memory that answers every word with its own
address) are compiled only for the proof (`ifdef FORMAL`).

Each block also runs once built from a mutated copy of its RTL (a one-line change, in
build/formal_sim/), and the test expects the property that the change breaks to stop the
simulation, by name: a property module that never fires in simulation would prove nothing.
"""
from __future__ import annotations

import random
import re
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge

from tb.sim import BUILD_ROOT, REPO_ROOT, pytest_test_name, run_rtl_test

PROPS = "tb/formal/props"
MUTANTS = BUILD_ROOT / "formal_sim"


def mutant(src: str, old: str, new: str, name: str) -> Path:
    """A copy of rtl/<src> with `old` replaced by `new` (exactly once), as build/formal_sim/<name>/."""
    text = (REPO_ROOT / src).read_text()
    assert text.count(old) == 1, f"{src}: the mutation's context {old!r} is not there exactly once"
    out = MUTANTS / name / Path(src).name
    out.parent.mkdir(parents=True, exist_ok=True)
    new_text = text.replace(old, new)
    if not out.is_file() or out.read_text() != new_text:
        out.write_text(new_text)
    return out


def expect_property_fires(capfd: pytest.CaptureFixture[str], run, *props: str) -> None:
    """Run `run()`, which must fail, and find one of `props` named in a Verilator assertion
    message (the first to fire may be an induction invariant that sees the fault before the
    property it protects)."""
    with pytest.raises(AssertionError):
        run()
    out = capfd.readouterr()
    text = out.out + out.err
    fired = sorted(set(re.findall(r"Assertion failed in \S*\.(\w+)", text)))
    assert set(props) & set(fired), f"expected one of {props} to fire; fired: {fired or 'none'}\n{text[-3000:]}"


# --------------------------------------------------------------------------------------------
# sync_fifo
# --------------------------------------------------------------------------------------------
@cocotb.test()
async def sync_fifo_random(dut) -> None:
    """Random pushes, pops and clears; a Python queue checks the data as well."""
    rng = random.Random(cocotb.RANDOM_SEED)
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    depth = int(dut.DEPTH.value)
    width = int(dut.WIDTH.value)
    dut.rst.value = 1
    dut.clear.value = 0
    dut.in_valid.value = 0
    dut.out_ready.value = 0
    dut.in_data.value = 0
    for _ in range(2):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    model: list[int] = []
    full_seen = 0
    # A data mismatch fails the test at its end, not at once: in the mutant runs
    # (test_sync_fifo_props_catch_a_mutant) the property modules' assertions must get to name
    # the broken property, and the one that tracks an entry may see it some cycles later.
    wrong: tuple[int, str] | None = None
    for cycle in range(4000):
        p_push = rng.choice((0.3, 0.5, 0.9))
        dut.in_valid.value = int(rng.random() < p_push)
        dut.in_data.value = rng.getrandbits(width)
        dut.out_ready.value = int(rng.random() < 0.5)
        clear = rng.random() < 0.004
        dut.clear.value = int(clear)
        await ReadOnly()
        push = dut.in_valid.value and dut.in_ready.value
        pop = dut.out_valid.value and dut.out_ready.value
        if pop and wrong is None and int(dut.out_data.value) != model[0]:
            wrong = (cycle, f"cycle {cycle}: FIFO data {int(dut.out_data.value):#x}, want {model[0]:#x}")
        data = int(dut.in_data.value)
        full_seen += int(dut.count.value) == depth
        await RisingEdge(dut.clk)
        if clear:
            model.clear()
            continue
        if pop:
            model.pop(0)
        if push:
            model.append(data)
    assert wrong is None, wrong[1] if wrong else ""
    assert full_seen, "the FIFO never filled: the test did not reach the full state"


SYNC_FIFO = ["rtl/common/sync_fifo.sv", f"{PROPS}/sync_fifo_props.sv", f"{PROPS}/sync_fifo_bind.sv"]


@pytest.mark.rtl
def test_sync_fifo_props_in_sim() -> None:
    run_rtl_test("sync_fifo", SYNC_FIFO, "tests.rtl.test_formal_props", {"WIDTH": 8, "DEPTH": 4},
                 pytest_test_name(), testcase="sync_fifo_random", build_args=["--assert"])


@pytest.mark.rtl
def test_sync_fifo_props_catch_a_mutant(capfd: pytest.CaptureFixture[str]) -> None:
    # the head read one entry late once the FIFO holds three: order and data break
    src = mutant("rtl/common/sync_fifo.sv", "assign out_data  = mem_q[rd_ptr_q[AW-1:0]];",
                 "assign out_data  = mem_q[rd_ptr_q[AW-1:0] + AW'(count == 3)];", "sync_fifo_head")
    expect_property_fires(capfd, lambda: run_rtl_test(
        "sync_fifo", [src, *SYNC_FIFO[1:]], "tests.rtl.test_formal_props", {"WIDTH": 8, "DEPTH": 4},
        pytest_test_name(), testcase="sync_fifo_random", build_args=["--assert"],
        defines={"PROPS_MUTANT": "sync_fifo_head"}), "a_tracked_at_head")


# --------------------------------------------------------------------------------------------
# desc_engine
# --------------------------------------------------------------------------------------------
class ReadSlave:
    """AXI read slave: accepts AR at random, answers each read's beats in order with random
    gaps, interleaving the reads of different IDs, now and then with SLVERR. Memory holds a
    pattern of the address, so every descriptor is distinct."""

    def __init__(self, dut, rng: random.Random, db: int) -> None:
        self.dut, self.rng, self.db = dut, rng, db
        self.reads: dict[int, list[int]] = {}     # rid -> beat addresses still due
        self.cur: tuple[int, int, bool] | None = None

    def word(self, addr: int) -> int:
        return sum(((addr + 8 * w) ^ 0x5A5A0000_00000000) << (64 * w) for w in range(self.db // 8))

    def drive(self) -> None:
        d = self.dut
        d.m_arready.value = int(self.rng.random() < 0.6)
        if self.cur is None and self.reads and self.rng.random() < 0.7:
            rid = self.rng.choice(sorted(self.reads))
            self.cur = (rid, self.reads[rid][0], self.rng.random() < 0.03)
        if self.cur is None:
            d.m_rvalid.value = 0
            return
        rid, addr, err = self.cur
        d.m_rvalid.value = 1
        d.m_rid.value = rid
        d.m_rdata.value = self.word(addr)
        d.m_rresp.value = 2 if err else 0
        d.m_rlast.value = int(len(self.reads[rid]) == 1)

    def sample(self) -> None:
        d = self.dut
        if d.m_arvalid.value and d.m_arready.value:
            rid, addr, n = int(d.m_arid.value), int(d.m_araddr.value), int(d.m_arlen.value) + 1
            assert rid not in self.reads, f"a second read of ARID {rid} while one is open"
            self.reads[rid] = [addr + i * self.db for i in range(n)]
        if self.cur is not None and d.m_rvalid.value and d.m_rready.value:
            rid = self.cur[0]
            self.reads[rid].pop(0)
            if not self.reads[rid]:
                del self.reads[rid]
            self.cur = None


@cocotb.test()
async def desc_engine_random(dut) -> None:
    """Rings started and stopped with random bases and sizes (1..64 entries), posts that keep
    SW_IDX within a ring of HW_IDX, random pops, skips and head selects."""
    rng = random.Random(cocotb.RANDOM_SEED)
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    nr, db = int(dut.NR.value), int(dut.DMA_DATA_W.value) // 8
    slave = ReadSlave(dut, rng, db)
    run = [0] * nr
    base = [0] * nr
    log2 = [0] * nr
    sw = [0] * nr
    for name in ("fetch_en", "run", "ring_base", "ring_log2", "sw_idx", "m_arready", "m_rvalid",
                 "m_rid", "m_rdata", "m_rresp", "m_rlast", "rd_skip", "desc_pop", "head_sel"):
        getattr(dut, name).value = 0
    dut.rst.value = 1
    for _ in range(2):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    handed = 0
    for cycle in range(6000):
        hw = [(int(dut.hw_idx.value) >> (16 * r)) & 0xFFFF for r in range(nr)]
        for r in range(nr):
            if rng.random() < 0.002:                     # stop or start the ring
                run[r] ^= 1
                if run[r]:
                    base[r] = rng.getrandbits(40) << 4
                    if rng.random() < 0.3:               # close below a 4 KiB boundary
                        base[r] = (base[r] | 0xF00) & ~0xF
                    log2[r] = rng.randrange(0, 7)
                    sw[r] = 0
            if run[r] and rng.random() < 0.2:            # post within a ring of HW_IDX
                room = (1 << log2[r]) - ((sw[r] - hw[r]) & 0xFFFF)
                if room > 0:
                    sw[r] = (sw[r] + rng.randint(1, room)) & 0xFFFF
        dut.run.value = sum(run[r] << r for r in range(nr))
        dut.fetch_en.value = sum((run[r] and rng.random() < 0.95) << r for r in range(nr))
        dut.ring_base.value = sum(base[r] << (64 * r) for r in range(nr))
        dut.ring_log2.value = sum(log2[r] << (4 * r) for r in range(nr))
        dut.sw_idx.value = sum(sw[r] << (16 * r) for r in range(nr))
        dut.desc_pop.value = rng.getrandbits(nr) if rng.random() < 0.4 else 0
        dut.rd_skip.value = int(rng.random() < 0.1)
        dut.head_sel.value = sum(rng.randrange(nr) << (1 * h) for h in range(2))
        slave.drive()
        await ReadOnly()
        handed += int(dut.rd_valid.value)
        slave.sample()
        await RisingEdge(dut.clk)
    assert handed > 200, f"only {handed} descriptors handed out: the test did not exercise the engine"


DESC_ENGINE = ["rtl/formats/generated/nic_dma_pkg.sv", "rtl/pkg/nic_pkg.sv", "rtl/common/rr_arbiter.sv", "rtl/common/desc_batch.sv",
               "rtl/common/desc_engine.sv",
               f"{PROPS}/desc_engine_props.sv", f"{PROPS}/desc_engine_bind.sv"]


def _desc_params(width: int) -> dict[str, int]:
    return {"NR": 2, "DMA_DATA_W": width, "ADDR_W": 64, "ID_W": 3, "ID_BASE": 1, "CACHE_DEPTH": 4,
            "MAX_BATCH": 4, "CACHE_W": 80, "NHEAD": 2}


@pytest.mark.rtl
@pytest.mark.parametrize("width", [64, 512])
def test_desc_engine_props_in_sim(width: int) -> None:
    run_rtl_test("desc_engine", DESC_ENGINE, "tests.rtl.test_formal_props", _desc_params(width),
                 pytest_test_name(), testcase="desc_engine_random", build_args=["--assert"])


@pytest.mark.rtl
def test_desc_engine_props_catch_a_mutant(capfd: pytest.CaptureFixture[str]) -> None:
    # a batch no longer limited by the cache's room: descriptors arrive with no room for them
    src = mutant("rtl/common/desc_batch.sv", " & therm(to_4k) & therm(room);", " & therm(to_4k);", "desc_engine_room")
    expect_property_fires(capfd, lambda: run_rtl_test(
        "desc_engine", [*DESC_ENGINE[:3], src, *DESC_ENGINE[4:]], "tests.rtl.test_formal_props",
        _desc_params(64), pytest_test_name(), testcase="desc_engine_random", build_args=["--assert"],
        defines={"PROPS_MUTANT": "desc_engine_room"}), "a_cache_no_overflow", "i_room_reserved")
