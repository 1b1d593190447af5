"""The protocol checker (tb/checker/, docs/verification.md) on its own: every pin of
nic_protocol_checker driven cycle by cycle from Python, with legal traffic that must pass
(write data before, with and after its address, narrow, unaligned, FIXED and WRAP bursts,
responses of different IDs out of order, interleaved reads, stalls) and, one cocotb test per
rule, the smallest traffic that breaks it: the checker must name exactly that rule.

The violation tests run with `+nic_checker_nonfatal` (the checker reports and goes on, so one
simulation runs them all; each test starts with a reset). `test_checker_stops_the_run` runs one
of them as every other simulation does, where the violation stops the simulation and the
pytest failure names the rule, the cycle and the `nicsim waves` command.

Rules of the NIC's own contract (NIC_*) forbid some legal AXI (narrow or WRAP bursts, RX
back-pressure), so the AXI rules are tested on a build without them (NIC_RULES=0) and the
NIC rules on the default build.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

from tb.sim import CHECKER_DIR, CHECKER_SOURCES, pytest_test_name, run_rtl_test

PARAMS = {"DATA_W": 64, "DMA_DATA_W": 128, "ID_W": 5, "MAX_BURST": 16, "TX_FIFO_BYTES": 64}
DB = PARAMS["DMA_DATA_W"] // 8
FULL = (1 << DB) - 1
# The checker's inputs but the clock and reset (its ports are nic_top's port names).
PORTS = [n for n in re.findall(r"^\s*input\s+logic\b[^;]*?(\w+)\s*,?\s*$",
                               (CHECKER_DIR / "nic_protocol_checker.sv").read_text(), flags=re.M)
         if n not in ("clk", "rst")]


# ------------------------------------------------------------------------------------------
# Driving the pins
# ------------------------------------------------------------------------------------------
class Pins:
    """Every input of the checker; values set here hold until set again, `step` is a clock."""

    IDLE = {"s_axis_rx_tready": 1, "m_axi_rready": 1}   # the NIC's constant readies

    def __init__(self, dut) -> None:
        self.dut = dut
        self.report = Path(cocotb.plusargs["nic_checker_report"])
        self.seen = len(self.violations())

    def set(self, **kw: int) -> None:
        for name, value in kw.items():
            getattr(self.dut, name).value = value

    def idle(self) -> None:
        """Every VALID and READY low (but the NIC's constant readies), payloads 0."""
        for name in PORTS:
            getattr(self.dut, name).value = self.IDLE.get(name, 0)

    async def step(self, n: int = 1, **kw: int) -> None:
        self.set(**kw)
        for _ in range(n):
            await RisingEdge(self.dut.clk)

    async def reset(self) -> None:
        self.idle()
        self.dut.rst.value = 1
        await self.step(3)
        self.dut.rst.value = 0
        await self.step(1)
        self.seen = len(self.violations())

    def violations(self) -> list[dict]:
        if not self.report.is_file():
            return []
        out = []
        for line in self.report.read_text().splitlines():
            rec = json.loads(line)
            if "violation" in rec:
                out.append(rec["violation"])
        return out

    def new(self) -> list[dict]:
        got = self.violations()[self.seen:]
        self.seen += len(got)
        return got

    async def expect(self, rule: str, *words: str) -> dict:
        """A few idle cycles, then: the first new violation is `rule` (and mentions `words`)."""
        await self.step(3)
        got = self.new()
        assert got, f"no violation reported, expected {rule}"
        first = got[0]
        assert first["rule"] == rule, f"expected {rule}, the checker reported {[g['rule'] for g in got]}: {first}"
        for w in words:
            assert w in first["detail"], f"{rule}: {w!r} not in {first['detail']!r}"
        assert first["waves"].startswith("nicsim waves ") and " --start " in first["waves"], first["waves"]
        return first

    async def clean(self, what: str) -> None:
        await self.step(3)
        got = self.new()
        assert not got, f"{what}: legal traffic reported as {[(g['rule'], g['detail']) for g in got]}"

    # --- AXI4 helpers (one handshake per call; the other side's ready is set by the caller)
    def aw(self, id: int, addr: int, len: int, size: int = 4, burst: int = 1, cache: int = 3) -> None:
        self.set(m_axi_awvalid=1, m_axi_awid=id, m_axi_awaddr=addr, m_axi_awlen=len, m_axi_awsize=size,
                 m_axi_awburst=burst, m_axi_awcache=cache)

    def ar(self, id: int, addr: int, len: int, size: int = 4, burst: int = 1) -> None:
        self.set(m_axi_arvalid=1, m_axi_arid=id, m_axi_araddr=addr, m_axi_arlen=len, m_axi_arsize=size,
                 m_axi_arburst=burst, m_axi_arcache=3)

    def w(self, strb: int = FULL, last: int = 0, data: int = 0) -> None:
        self.set(m_axi_wvalid=1, m_axi_wstrb=strb, m_axi_wlast=last, m_axi_wdata=data)

    def r(self, id: int, last: int, data: int = 0) -> None:
        self.set(m_axi_rvalid=1, m_axi_rid=id, m_axi_rlast=last, m_axi_rdata=data)

    async def aw_fire(self, id: int, addr: int, len: int, **kw: int) -> None:
        self.aw(id, addr, len, **kw)
        await self.step(m_axi_awready=1)
        self.set(m_axi_awvalid=0)

    async def ar_fire(self, id: int, addr: int, len: int, **kw: int) -> None:
        self.ar(id, addr, len, **kw)
        await self.step(m_axi_arready=1)
        self.set(m_axi_arvalid=0)

    async def w_burst(self, strbs: list[int]) -> None:
        for k, s in enumerate(strbs):
            self.w(s, int(k == len(strbs) - 1), data=k + 1)
            await self.step(m_axi_wready=1)
        self.set(m_axi_wvalid=0)

    async def b_fire(self, id: int) -> None:
        await self.step(m_axi_bvalid=1, m_axi_bid=id, m_axi_bready=1)
        self.set(m_axi_bvalid=0)

    async def r_burst(self, id: int, beats: int) -> None:
        for k in range(beats):
            self.r(id, int(k == beats - 1), data=0x100 + k)
            await self.step(m_axi_rready=1)
        self.set(m_axi_rvalid=0)

    # --- AXI4-Lite and AXI-Stream helpers
    async def axil_write(self, addr: int, data: int, w_first: bool = False) -> None:
        if w_first:
            await self.step(s_axil_wvalid=1, s_axil_wdata=data, s_axil_wstrb=0xF, s_axil_wready=1)
            self.set(s_axil_wvalid=0, s_axil_wready=0)
        await self.step(s_axil_awvalid=1, s_axil_awaddr=addr, s_axil_awready=1)
        self.set(s_axil_awvalid=0, s_axil_awready=0)
        if not w_first:
            await self.step(s_axil_wvalid=1, s_axil_wdata=data, s_axil_wstrb=0xF, s_axil_wready=1)
            self.set(s_axil_wvalid=0, s_axil_wready=0)
        await self.step(s_axil_bvalid=1, s_axil_bready=0)          # the master makes B wait a cycle
        await self.step(s_axil_bready=1)
        self.set(s_axil_bvalid=0, s_axil_bready=0)

    async def axil_read(self, addr: int) -> None:
        await self.step(s_axil_arvalid=1, s_axil_araddr=addr, s_axil_arready=0)   # AR waits a cycle
        await self.step(s_axil_arready=1)
        self.set(s_axil_arvalid=0, s_axil_arready=0)
        await self.step(s_axil_rvalid=1, s_axil_rdata=0x1234, s_axil_rready=1)
        self.set(s_axil_rvalid=0, s_axil_rready=0)

    async def stream(self, port: str, keeps: list[int], stall_at: int = -1) -> None:
        """One packet on s_axis_rx or m_axis_tx; with TREADY low for a cycle at beat `stall_at`."""
        for k, keep in enumerate(keeps):
            self.set(**{f"{port}_tvalid": 1, f"{port}_tkeep": keep, f"{port}_tlast": int(k == len(keeps) - 1),
                        f"{port}_tdata": 0x0102030405060708 + k})
            if k == stall_at:
                await self.step(**{f"{port}_tready": 0})
            await self.step(**{f"{port}_tready": 1})
        self.set(**{f"{port}_tvalid": 0})


async def start(dut) -> Pins:
    cocotb.start_soon(Clock(dut.clk, 4, unit="ns").start())
    p = Pins(dut)
    await p.reset()
    return p


# ------------------------------------------------------------------------------------------
# Legal traffic: nothing may be reported
# ------------------------------------------------------------------------------------------
@cocotb.test()
async def legal_writes(dut) -> None:
    """AW before, with and after its W (two bursts of W ahead of their AWs), unaligned first
    beats, narrow INCR, FIXED and WRAP strobes, a burst ending exactly at 4 KiB, responses of
    different IDs out of order, B with BREADY low for a cycle, a reset between transactions."""
    p = await start(dut)
    await p.aw_fire(1, 0x1000, 3)                                 # AW, then its W
    await p.w_burst([FULL] * 4)
    await p.b_fire(1)
    await p.clean("AW then W")
    await p.w_burst([0xFF00, FULL])                               # W of two bursts before their AWs
    await p.w_burst([0x000F])
    await p.aw_fire(2, 0x2008, 1)                                 # starts at lane 8
    await p.aw_fire(3, 0x3000, 0)
    await p.b_fire(3)                                             # the younger burst's ID answers first
    await p.b_fire(2)
    await p.clean("W before AW")
    p.aw(4, 0x4000, 0)                                            # AW and W in the same cycle
    p.w(0x00FF, 1)
    await p.step(m_axi_awready=1, m_axi_wready=1)
    p.set(m_axi_awvalid=0, m_axi_wvalid=0)
    await p.step(m_axi_bvalid=1, m_axi_bid=4, m_axi_bready=0)     # B waits for BREADY
    await p.step(m_axi_bready=1)
    p.set(m_axi_bvalid=0)
    await p.clean("AW with W, B stalled")
    await p.aw_fire(4, 0x4100, 0)                                 # a stalled W's unstrobed bytes may change
    p.w(0x00FF, 1, data=0x11)
    await p.step(m_axi_wready=0)
    await p.step(m_axi_wdata=(0xAB << 64) | 0x11, m_axi_wready=1)
    p.set(m_axi_wvalid=0)
    await p.b_fire(4)
    await p.clean("unstrobed WDATA bytes changing under a stall")
    p.aw(5, 0x5002, 3, size=1)                                    # narrow: 2 bytes a beat from lane 2
    await p.step(m_axi_awready=0)                                 # AW waits a cycle, W goes first
    p.w(0x000C)
    await p.step(m_axi_awready=1, m_axi_wready=1)
    p.set(m_axi_awvalid=0)
    await p.w_burst([0x0030, 0x00C0, 0x0300])
    await p.aw_fire(6, 0x6003, 1, size=1)                         # narrow and unaligned: lane 3, then 4..5
    await p.w_burst([0x0008, 0x0030])
    await p.aw_fire(7, 0x7004, 1, size=2, burst=0)                # FIXED: lanes 4..7 twice
    await p.w_burst([0x00F0, 0x00F0])
    await p.aw_fire(8, 0x8008, 3, size=2, burst=2)                # WRAP over 16 bytes from 8
    await p.w_burst([0x0F00, 0xF000, 0x000F, 0x00F0])
    await p.aw_fire(9, 0x9FC0, 3)                                 # ends at the last byte of the page
    await p.w_burst([FULL] * 4)
    for i in (5, 9, 6, 8, 7):
        await p.b_fire(i)
    await p.clean("narrow, unaligned, FIXED, WRAP, 4 KiB end")
    p.aw(11, 0xB008, 1)                                           # a whole burst while its AW waits
    p.set(m_axi_awready=0)
    await p.w_burst([0xFF00, FULL])
    await p.step(m_axi_awready=1)
    p.set(m_axi_awvalid=0)
    await p.b_fire(11)
    await p.clean("W burst under a waiting AW")
    await p.aw_fire(10, 0xA000, 1)                                # a burst cut short by a reset
    await p.reset()
    await p.aw_fire(10, 0xA000, 0)
    await p.w_burst([FULL])
    await p.b_fire(10)
    await p.clean("after a reset")


@cocotb.test()
async def legal_reads_lite_streams(dut) -> None:
    """Reads of one ID in order and of two IDs interleaved, R stalled with its data held; AXI-Lite
    writes with W before and after AW, a stalled AR and B; packets with a partial last beat and a
    stall, on both streams."""
    p = await start(dut)
    await p.ar_fire(5, 0x1000, 1)
    await p.ar_fire(6, 0x2000, 0)
    await p.ar_fire(5, 0x3000, 0)
    await p.r_burst(6, 1)                                        # another ID first
    p.r(5, 0, data=0xAB)
    await p.step(m_axi_rready=0)                                 # R waits, data held
    await p.step(m_axi_rready=1)
    p.r(5, 1, data=0xCD)
    await p.step()
    await p.r_burst(5, 1)
    await p.ar_fire(7, 0x4000, 1)
    await p.ar_fire(8, 0x5000, 1)
    for rid, last in ((7, 0), (8, 0), (7, 1), (8, 1)):           # interleaved between IDs
        p.r(rid, last)
        await p.step(m_axi_rready=1)
    p.set(m_axi_rvalid=0)
    await p.clean("reads")
    await p.axil_write(0x10, 0xDEAD_BEEF)
    await p.axil_write(0x14, 0x1, w_first=True)
    await p.axil_read(0x20)
    await p.clean("AXI4-Lite")
    for port in ("s_axis_rx", "m_axis_tx"):
        await p.stream(port, [0xFF, 0xFF, 0x07], stall_at=1)
        await p.stream(port, [0x01])
        await p.stream(port, [0xFF] * 8)                         # 64 bytes: TX_FIFO_BYTES exactly
        if port == "s_axis_rx":
            p.set(s_axis_rx_tready=1)
    await p.clean("streams")


# ------------------------------------------------------------------------------------------
# One broken rule each (non-fatal mode; built with NIC_RULES=0 unless the name says nic_)
# ------------------------------------------------------------------------------------------
@cocotb.test()
async def bad_ar_stable_drop(dut) -> None:
    p = await start(dut)
    p.ar(1, 0x1000, 0)
    await p.step(m_axi_arready=0)
    await p.step(m_axi_arvalid=0)
    await p.expect("AXI4_AR_STABLE", "ARVALID fell")


@cocotb.test()
async def bad_aw_stable_change(dut) -> None:
    p = await start(dut)
    p.aw(1, 0x1000, 0)
    await p.step(m_axi_awready=0)
    await p.step(m_axi_awaddr=0x2000)
    await p.expect("AXI4_AW_STABLE", "AWADDR 0x1000 -> 0x2000")


@cocotb.test()
async def bad_w_stable_change(dut) -> None:
    p = await start(dut)
    p.w(FULL, 1, data=5)
    await p.step(m_axi_wready=0)
    await p.step(m_axi_wdata=6)
    await p.expect("AXI4_W_STABLE", "WDATA byte 0 (strobed) 0x5 -> 0x6")


@cocotb.test()
async def bad_r_stable_change(dut) -> None:
    p = await start(dut)
    await p.ar_fire(3, 0x1000, 0)
    p.r(3, 1, data=7)
    await p.step(m_axi_rready=0)
    await p.step(m_axi_rdata=8)
    await p.expect("AXI4_R_STABLE", "RDATA 0x7 -> 0x8")


@cocotb.test()
async def bad_b_stable_drop(dut) -> None:
    p = await start(dut)
    await p.aw_fire(3, 0x1000, 0)
    await p.w_burst([FULL])
    await p.step(m_axi_bvalid=1, m_axi_bid=3, m_axi_bready=0)
    await p.step(m_axi_bvalid=0)
    await p.expect("AXI4_B_STABLE", "BVALID fell")


@cocotb.test()
async def bad_reset_valid_master(dut) -> None:
    p = await start(dut)
    dut.rst.value = 1
    await p.step(2, m_axi_awvalid=1)
    await p.expect("AXI4_RESET_VALID", "AWVALID 1", "in reset")
    dut.rst.value = 0
    p.set(m_axi_awvalid=0)


@cocotb.test()
async def bad_reset_valid_slave(dut) -> None:
    p = await start(dut)
    dut.rst.value = 1
    await p.step(2)
    dut.rst.value = 0
    await p.step(1, m_axi_rvalid=1)
    p.set(m_axi_rvalid=0)
    await p.expect("AXI4_RESET_VALID", "RVALID 1", "first cycle after reset")


@cocotb.test()
async def bad_ar_len(dut) -> None:
    p = await start(dut)
    await p.ar_fire(1, 0x1000, 16)
    await p.expect("AXI4_AR_LEN", "17 beats, more than MAX_BURST 16")


@cocotb.test()
async def bad_aw_len_wrap(dut) -> None:
    p = await start(dut)
    await p.aw_fire(1, 0x1000, 2, burst=2)
    await p.expect("AXI4_AW_LEN", "WRAP burst of 3 beats")


@cocotb.test()
async def bad_aw_size(dut) -> None:
    p = await start(dut)
    await p.aw_fire(1, 0x1000, 0, size=5)
    await p.expect("AXI4_AW_SIZE", "32 bytes, wider than the 16-byte bus")


@cocotb.test()
async def bad_ar_burst_reserved(dut) -> None:
    p = await start(dut)
    await p.ar_fire(1, 0x1000, 0, burst=3)
    await p.expect("AXI4_AR_BURST", "reserved")


@cocotb.test()
async def bad_aw_burst_wrap_unaligned(dut) -> None:
    p = await start(dut)
    await p.aw_fire(1, 0x1004, 3, burst=2)
    await p.expect("AXI4_AW_BURST", "not aligned")


@cocotb.test()
async def bad_aw_4k(dut) -> None:
    p = await start(dut)
    await p.aw_fire(2, 0x1FF0, 1)                # 0x1ff0..0x200f
    await p.expect("AXI4_AW_4K", "0x1ff0..0x200f")


@cocotb.test()
async def bad_ar_4k(dut) -> None:
    p = await start(dut)
    await p.ar_fire(2, 0x3F88, 7, size=3)        # 8-byte beats from 0x3f88 to 0x3fc7 is legal ...
    await p.clean("AR to 0x3fc7")
    await p.ar_fire(2, 0x3FC8, 7, size=3)        # ... from 0x3fc8 it runs to 0x4007
    await p.expect("AXI4_AR_4K", "0x3fc8..0x4007")


@cocotb.test()
async def bad_aw_cache(dut) -> None:
    p = await start(dut)
    await p.aw_fire(1, 0x1000, 0, cache=0b0100)
    await p.expect("AXI4_AW_CACHE", "AWCACHE 0x4")


@cocotb.test()
async def bad_w_last_early_w_first(dut) -> None:
    """Two W beats with WLAST on the second, ahead of an AW of three beats."""
    p = await start(dut)
    await p.w_burst([FULL, FULL])
    await p.clean("W waiting for its AW")
    await p.aw_fire(4, 0x1000, 2)
    await p.expect("AXI4_W_LAST", "WLAST 1 on beat 2 of the 3-beat burst", "AWID 4")


@cocotb.test()
async def bad_w_last_aw_waiting(dut) -> None:
    """The burst's AW is presented but waits for AWREADY while its W goes, WLAST one beat
    early: reported in the cycle of that beat, against the waiting AW."""
    p = await start(dut)
    p.aw(4, 0x1000, 2)
    p.set(m_axi_awready=0)
    await p.w_burst([FULL, FULL])
    v = await p.expect("AXI4_W_LAST", "WLAST 1 on beat 2 of the 3-beat burst")
    assert f"accepted at cycle {v['cycle']})" in v["detail"], f"checked in the beat's own cycle: {v}"
    p.set(m_axi_awvalid=0)


@cocotb.test()
async def bad_w_last_missing(dut) -> None:
    p = await start(dut)
    await p.aw_fire(4, 0x1000, 1)
    for _ in range(2):
        p.w(FULL, 0)
        await p.step(m_axi_wready=1)
    p.set(m_axi_wvalid=0)
    v = await p.expect("AXI4_W_LAST", "WLAST 0 on beat 2 of the 2-beat burst")
    assert f"accepted at cycle {v['cycle']})" in v["detail"], f"W after its AW is checked in its own cycle: {v}"


@cocotb.test()
async def bad_w_last_never(dut) -> None:
    """No AW at all, and W beats without WLAST up to MAX_BURST: decided without the AW."""
    p = await start(dut)
    for _ in range(PARAMS["MAX_BURST"]):
        p.w(FULL, 0)
        await p.step(m_axi_wready=1)
    p.set(m_axi_wvalid=0)
    await p.expect("AXI4_W_LAST", "no WLAST by beat 16")


@cocotb.test()
async def bad_w_strb_unaligned(dut) -> None:
    p = await start(dut)
    await p.aw_fire(1, 0x1004, 0)
    await p.w_burst([FULL])
    await p.expect("AXI4_W_STRB", "WSTRB 0xffff on beat 1", "0xfff0")


@cocotb.test()
async def bad_w_strb_narrow(dut) -> None:
    p = await start(dut)
    await p.w_burst([0x000F, 0x000F])            # beat 2 of a 4-byte burst addresses lanes 4..7
    await p.aw_fire(1, 0x1000, 1, size=2)
    await p.expect("AXI4_W_STRB", "WSTRB 0xf on beat 2", "0xf0")


@cocotb.test()
async def bad_b_before_last_w(dut) -> None:
    p = await start(dut)
    await p.aw_fire(1, 0x1000, 1)
    p.w(FULL, 0)
    await p.step(m_axi_wready=1)
    p.set(m_axi_wvalid=0)
    await p.b_fire(1)
    await p.expect("AXI4_B_UNEXPECTED", "BID 1")


@cocotb.test()
async def bad_b_with_last_w(dut) -> None:
    """BVALID in the cycle of the last W handshake: too early (A3.3.1)."""
    p = await start(dut)
    await p.aw_fire(1, 0x1000, 0)
    p.w(FULL, 1)
    await p.step(m_axi_wready=1, m_axi_bvalid=1, m_axi_bid=1, m_axi_bready=1)
    p.set(m_axi_wvalid=0, m_axi_bvalid=0)
    await p.expect("AXI4_B_UNEXPECTED", "BID 1")


@cocotb.test()
async def bad_b_wrong_id(dut) -> None:
    p = await start(dut)
    await p.aw_fire(1, 0x1000, 0)
    await p.w_burst([FULL])
    await p.b_fire(2)
    await p.expect("AXI4_B_UNEXPECTED", "BID 2")


@cocotb.test()
async def bad_r_unexpected(dut) -> None:
    p = await start(dut)
    await p.ar_fire(1, 0x1000, 0)
    await p.r_burst(2, 1)
    await p.expect("AXI4_R_UNEXPECTED", "RID 2")


@cocotb.test()
async def bad_r_last_early(dut) -> None:
    p = await start(dut)
    await p.ar_fire(1, 0x1000, 1)
    await p.r_burst(1, 1)
    await p.expect("AXI4_R_LAST", "RLAST 1 on beat 1 of a 2-beat read of RID 1")


@cocotb.test()
async def bad_r_out_of_order(dut) -> None:
    """Two reads of one ID: data of the second (one beat) before the first (two beats)."""
    p = await start(dut)
    await p.ar_fire(1, 0x1000, 1)
    await p.ar_fire(1, 0x2000, 0)
    await p.r_burst(1, 1)
    await p.expect("AXI4_R_LAST", "RLAST 1 on beat 1 of a 2-beat read")


@cocotb.test()
async def bad_checker_capacity(dut) -> None:
    p = await start(dut)
    p.ar(1, 0x1000, 0)
    await p.step(64, m_axi_arready=1)
    p.set(m_axi_arvalid=0)
    await p.clean("64 reads outstanding")
    await p.ar_fire(1, 0x1000, 0)
    await p.expect("CHECKER_CAPACITY", "R_DEPTH 64")


@cocotb.test()
async def bad_axil_aw_drop(dut) -> None:
    p = await start(dut)
    await p.step(s_axil_awvalid=1, s_axil_awaddr=0x10, s_axil_awready=0)
    await p.step(s_axil_awvalid=0)
    await p.expect("AXIL_AW_STABLE", "AWVALID fell")


@cocotb.test()
async def bad_axil_w_change(dut) -> None:
    p = await start(dut)
    await p.step(s_axil_wvalid=1, s_axil_wdata=1, s_axil_wready=0)
    await p.step(s_axil_wstrb=0x3)
    await p.expect("AXIL_W_STABLE", "WSTRB 0x0 -> 0x3")


@cocotb.test()
async def bad_axil_ar_change(dut) -> None:
    p = await start(dut)
    await p.step(s_axil_arvalid=1, s_axil_araddr=0x20, s_axil_arready=0)
    await p.step(s_axil_araddr=0x24)
    await p.expect("AXIL_AR_STABLE", "ARADDR 0x20 -> 0x24")


@cocotb.test()
async def bad_axil_b_drop(dut) -> None:
    p = await start(dut)
    await p.step(s_axil_awvalid=1, s_axil_awready=1, s_axil_wvalid=1, s_axil_wready=1)
    p.set(s_axil_awvalid=0, s_axil_wvalid=0)
    await p.step(s_axil_bvalid=1, s_axil_bready=0)
    await p.step(s_axil_bvalid=0)
    await p.expect("AXIL_B_STABLE", "BVALID fell")


@cocotb.test()
async def bad_axil_r_change(dut) -> None:
    p = await start(dut)
    await p.step(s_axil_arvalid=1, s_axil_arready=1)
    p.set(s_axil_arvalid=0)
    await p.step(s_axil_rvalid=1, s_axil_rdata=1, s_axil_rready=0)
    await p.step(s_axil_rdata=2)
    await p.expect("AXIL_R_STABLE", "RDATA 0x1 -> 0x2")


@cocotb.test()
async def bad_axil_reset_valid(dut) -> None:
    p = await start(dut)
    dut.rst.value = 1
    await p.step(2, s_axil_arvalid=1)
    await p.expect("AXIL_RESET_VALID", "ARVALID 1")
    dut.rst.value = 0
    p.set(s_axil_arvalid=0)


@cocotb.test()
async def bad_axil_b_without_w(dut) -> None:
    p = await start(dut)
    await p.step(s_axil_awvalid=1, s_axil_awready=1)
    p.set(s_axil_awvalid=0)
    await p.step(s_axil_bvalid=1, s_axil_bready=1)
    p.set(s_axil_bvalid=0)
    await p.expect("AXIL_B_UNEXPECTED", "1 AW, 0 W")


@cocotb.test()
async def bad_axil_two_responses(dut) -> None:
    p = await start(dut)
    await p.axil_read(0x20)
    await p.step(s_axil_rvalid=1, s_axil_rready=1)
    p.set(s_axil_rvalid=0)
    await p.expect("AXIL_R_UNEXPECTED", "1 AR, 1 R")


@cocotb.test()
async def bad_rx_stable(dut) -> None:
    p = await start(dut)
    await p.step(s_axis_rx_tvalid=1, s_axis_rx_tkeep=0xFF, s_axis_rx_tready=0)
    await p.step(s_axis_rx_tlast=1)
    await p.expect("AXIS_RX_STABLE", "TLAST 0x0 -> 0x1")


@cocotb.test()
async def bad_rx_keep_gap(dut) -> None:
    p = await start(dut)
    await p.stream("s_axis_rx", [0xFF, 0x7F, 0x0F])
    await p.expect("AXIS_RX_KEEP", "TKEEP 0x7f on a beat without TLAST (byte 8")


@cocotb.test()
async def bad_rx_reset_valid(dut) -> None:
    p = await start(dut)
    dut.rst.value = 1
    await p.step(2, s_axis_rx_tvalid=1)
    await p.expect("AXIS_RX_RESET_VALID", "in reset")
    dut.rst.value = 0
    p.set(s_axis_rx_tvalid=0)


@cocotb.test()
async def bad_tx_stable(dut) -> None:
    p = await start(dut)
    await p.step(m_axis_tx_tvalid=1, m_axis_tx_tkeep=0xFF, m_axis_tx_tready=0)
    await p.step(m_axis_tx_tvalid=0)
    await p.expect("AXIS_TX_STABLE", "TVALID fell")


@cocotb.test()
async def bad_tx_keep_last(dut) -> None:
    p = await start(dut)
    await p.stream("m_axis_tx", [0xFF, 0x05])
    await p.expect("AXIS_TX_KEEP", "TKEEP 0x5 on the TLAST beat (byte 8")


@cocotb.test()
async def bad_tx_keep_empty(dut) -> None:
    p = await start(dut)
    await p.stream("m_axis_tx", [0xFF, 0x00])
    await p.expect("AXIS_TX_KEEP", "TKEEP 0x0 on the TLAST beat")


@cocotb.test()
async def bad_tx_frame_len(dut) -> None:
    p = await start(dut)
    await p.stream("m_axis_tx", [0xFF] * 8 + [0x01])           # 65 bytes, TX_FIFO_BYTES 64
    await p.expect("AXIS_TX_FRAME_LEN", "65 bytes at TLAST, more than 64")


# --- the NIC's port contracts (the default build, NIC_RULES=1)
@cocotb.test()
async def nic_legal(dut) -> None:
    """Traffic as the NIC makes it passes the NIC's rules too."""
    p = await start(dut)
    await p.aw_fire(1, 0x1000, 1)
    await p.w_burst([0xFFF0, 0x00FF])
    await p.b_fire(1)
    await p.ar_fire(24, 0x2000, 1)
    await p.r_burst(24, 2)
    await p.stream("s_axis_rx", [0xFF, 0x03])
    await p.clean("NIC-style traffic")


@cocotb.test()
async def nic_rx_tready(dut) -> None:
    p = await start(dut)
    await p.step(1, s_axis_rx_tready=0)
    p.set(s_axis_rx_tready=1)
    await p.expect("NIC_RX_TREADY")


@cocotb.test()
async def nic_r_txdesc_ready(dut) -> None:
    p = await start(dut)
    await p.ar_fire(17, 0x1000, 0)
    p.r(17, 1)
    await p.step(m_axi_rready=0)
    await p.step(m_axi_rready=1)
    p.set(m_axi_rvalid=0)
    await p.expect("NIC_R_TXDESC_READY", "RID 17")


@cocotb.test()
async def nic_narrow_write(dut) -> None:
    p = await start(dut)
    await p.aw_fire(1, 0x1000, 0, size=2)
    await p.expect("NIC_AX_INCR_FULL", "AWSIZE 2")


@cocotb.test()
async def nic_empty_strobe(dut) -> None:
    p = await start(dut)
    await p.aw_fire(1, 0x1000, 0)
    await p.w_burst([0])
    await p.expect("NIC_W_STRB_EMPTY")


# ------------------------------------------------------------------------------------------
# pytest
# ------------------------------------------------------------------------------------------
def _tests(prefixes: tuple[str, ...]) -> str:
    names = [n for n in globals() if n.startswith(prefixes)]
    return ",".join(sorted(names))


@pytest.mark.rtl
@pytest.mark.parametrize("nic_rules", [0, 1])
def test_checker_rules(nic_rules: int) -> None:
    """NIC_RULES=0: legal traffic passes and every AXI rule is reported by name; NIC_RULES=1:
    NIC-style traffic passes and every NIC contract rule is reported."""
    tests = _tests(("legal_", "bad_")) if nic_rules == 0 else _tests(("nic_",))
    run_rtl_test("nic_protocol_checker", CHECKER_SOURCES, "tests.rtl.test_protocol_checker",
                 {**PARAMS, "NIC_RULES": nic_rules}, pytest_test_name(), testcase=tests,
                 plusargs=["+nic_checker_nonfatal"])


@pytest.mark.rtl
def test_checker_stops_the_run() -> None:
    """Without +nic_checker_nonfatal a violation ends the simulation, and the pytest failure
    starts with the rule, who broke it, the cycle, the IDs, and the waveform command."""
    with pytest.raises(AssertionError) as exc:
        run_rtl_test("nic_protocol_checker", CHECKER_SOURCES, "tests.rtl.test_protocol_checker",
                     {**PARAMS, "NIC_RULES": 0}, pytest_test_name(), testcase="bad_w_last_early_w_first")
    msg = str(exc.value)
    first = msg.splitlines()[0]
    assert first.startswith("protocol checker: AXI4_W_LAST broken by the NIC (DMA master m_axi) at cycle "), msg
    assert "WLAST 1 on beat 2 of the 3-beat burst at AWADDR 0x1000 (AWID 4" in first, msg
    assert "  waves: nicsim waves build/waves/test_checker_stops_the_run.fst --group dma --start " in msg, msg
    assert "first rerun it with waves: " in msg and "WAVES=1" in msg, msg
