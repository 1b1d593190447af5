"""The testbench watchdog: a run that waits on nothing ends with a message saying what it
waited for, instead of hanging until the pytest timeout.

The testbenches (tb/nic_tb.py `NicTb`, tb/fast/fast_tb.py `FastNicTb`) note every wait on
the NIC that must end by itself: a CSR access waiting for its AXI4-Lite response
(`begin`/`end` around it: two dict operations, no simulator call, so the fast path pays
nothing measurable). A coroutine wakes every `tick_ns` of simulated time and fails the test
(`WatchdogError`, which cocotb reports as the test's failure) when a wait has been
outstanding for `ticks` ticks in a row: about 100 us of simulated time, some 25,000 cycles,
where an access takes a few. The message names the access, whether the NIC is held in reset
and whether its clock runs, and gives the `nicsim waves` command of the window.

A CSR access before `reset()` fails at once with the same kind of message (the fast harness
starts with `rst` high, so the access could never be answered).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tb.failure import sim_ns, waves_command

if TYPE_CHECKING:                  # cocotb is imported when the watchdog starts
    from cocotb.task import Task

TICK_NS = 25_000
TICKS = 4


class WatchdogError(AssertionError):
    """The testbench waited for the NIC longer than it ever should."""


class Watchdog:
    def __init__(self, dut: Any, *, tick_ns: int = TICK_NS, ticks: int = TICKS) -> None:
        self.dut = dut
        self.tick_ns = tick_ns
        self.ticks = ticks
        self.outstanding: dict[int, tuple[str, int]] = {}   # seq -> (what, address)
        self._seq = 0
        self._task: Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            import cocotb
            self._task = cocotb.start_soon(self._run())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    def begin(self, what: str, addr: int) -> int:
        """Note a wait (`what` of register `addr`); returns its token for `end`."""
        self._seq += 1
        self.outstanding[self._seq] = (what, addr)
        return self._seq

    def end(self, token: int) -> None:
        self.outstanding.pop(token, None)

    async def _run(self) -> None:
        from cocotb.triggers import Timer
        seen: dict[int, int] = {}            # token -> ticks it has been outstanding
        while True:
            await Timer(self.tick_ns, unit="ns")
            seen = {t: seen.get(t, 0) + 1 for t in self.outstanding}
            stuck = [t for t, n in seen.items() if n >= self.ticks]
            if stuck:
                what, addr = self.outstanding[min(stuck)]
                await self._fail(what, addr, (self.ticks - 1) * self.tick_ns)

    async def _fail(self, what: str, addr: int, waited_ns: int) -> None:
        from cocotb.triggers import First, RisingEdge, Timer
        state = []
        try:
            if int(self.dut.rst.value):
                state.append("the NIC is held in reset (rst=1: was tb.reset() awaited?)")
        except (AttributeError, ValueError):
            pass
        try:
            edge = RisingEdge(self.dut.clk)
            if await First(edge, Timer(400, unit="ns")) is not edge:
                state.append("its clock is not running (no rising edge of clk in 400 ns)")
        except AttributeError:
            pass
        now = sim_ns()
        raise WatchdogError(
            f"watchdog: {what}(0x{addr:04x}) has waited over {waited_ns / 1000:.0f} us of simulated "
            f"time for its AXI4-Lite response" + (f"; {'; '.join(state)}" if state else
                                                  "; the register block stopped answering")
            + (f" (at {now:.0f} ns)\n  waves: {waves_command(now - waited_ns, now)}" if now is not None else ""))


def not_reset(what: str, addr: int) -> WatchdogError:
    """The error of a CSR access before `reset()`."""
    return WatchdogError(f"{what}(0x{addr:04x}) before tb.reset(): the NIC is held in reset (or "
                         f"was never reset) and would never answer; `await tb.reset()` first")


def flushed(what: str, addr: int) -> WatchdogError:
    """The error of a CSR access the bus model dropped because reset rose while it waited."""
    return WatchdogError(f"{what}(0x{addr:04x}) was never answered: rst rose while it waited "
                         f"(the NIC was reset behind the testbench's back)")
