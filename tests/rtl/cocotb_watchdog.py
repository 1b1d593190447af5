"""The testbench watchdog on the RTL (tests/rtl/test_watchdog.py): a stopped clock, a
forgotten reset and a NIC reset behind the testbench's back end with a message, not a hang.

clock_stops runs first: a clock started by an earlier cocotb test of the same simulation
keeps toggling after that test ends (cocotb 2.1), so only the first test's clock is the
only one."""
from __future__ import annotations

import cocotb
from cocotb.triggers import Timer

from driver import regs
from tb.fast.fast_tb import nic_tb_for
from tb.watchdog import WatchdogError


@cocotb.test(expect_error=WatchdogError)
async def clock_stops(dut) -> None:
    """Per beat the clock is cocotb's: stopped, a CSR access waits for an edge that never
    comes, and the watchdog (a timer, not a clock edge) ends it. (The fast harness's clock is
    HDL: there the test raises the expected error itself.)"""
    tb = nic_tb_for(dut, cocotb.RANDOM_SEED)
    await tb.reset()
    if not hasattr(tb, "clk_gen"):
        raise WatchdogError("the fast harness's clock cannot be stopped from Python")
    tb.clk_gen.stop()
    await Timer(40, unit="ns")                 # the clock task has ended
    await tb.read32(regs.VERSION)


@cocotb.test()
async def forgotten_reset(dut) -> None:
    tb = nic_tb_for(dut, cocotb.RANDOM_SEED)
    try:
        await tb.read32(regs.VERSION)
    except WatchdogError as e:
        assert "before tb.reset()" in str(e) and f"read32(0x{regs.VERSION:04x})" in str(e), e
    else:
        raise AssertionError("read32 before reset() returned")


@cocotb.test(expect_error=WatchdogError)
async def reset_during_access(dut) -> None:
    """After a good access, reset rises again: the next access is never answered (the fast
    harness waits; the watchdog ends the test after ~100 us) or is dropped by cocotbext-axi
    (per beat: an error at once). Either is this test's expected error."""
    tb = nic_tb_for(dut, cocotb.RANDOM_SEED)
    await tb.reset()
    assert await tb.read32(regs.VERSION) != 0
    dut.rst.value = 1
    await tb.read32(regs.VERSION)
