"""Time for the driver's TCP timers, from whoever runs it (no global clock).

Linux reads `jiffies`/`tcp_clock_us()`; here every `Kernel` has a `Clock` its backend gives
it: the model backend a `VirtualClock` the caller advances (`advance`), or a `WallClock` when
the peer lives in real time (the live co-simulation against the Linux stack); the RTL
backend a clock that reads the simulator's time (`SimClock`, built from a function that
returns nanoseconds, e.g. `cocotb.utils.get_sim_time('ns')`).

Timers are not interrupts: they fire when the driver runs (`Netdev.poll` runs
`TcpStack.run_timers`), like a timer softirq that only gets the CPU at poll time.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

NSEC_PER_SEC = 1_000_000_000
NSEC_PER_MSEC = 1_000_000


class Clock(Protocol):
    """A monotonic nanosecond clock."""

    def now_ns(self) -> int: ...


@dataclass
class VirtualClock:
    """Time that moves only when the caller says so (`advance`, or `hw.delay` on the model)."""

    ns: int = 0

    def now_ns(self) -> int:
        return self.ns

    def advance(self, ns: int) -> None:
        if ns < 0:
            raise ValueError(f'time does not go back ({ns} ns)')
        self.ns += ns


class WallClock:
    """`time.monotonic_ns`, starting at 0 when created."""

    def __init__(self) -> None:
        self._t0 = time.monotonic_ns()

    def now_ns(self) -> int:
        return time.monotonic_ns() - self._t0


class SimClock:
    """A simulator's time, read through `read_ns` (e.g. cocotb's `get_sim_time('ns')`)."""

    def __init__(self, read_ns: Callable[[], float]) -> None:
        self._read = read_ns

    def now_ns(self) -> int:
        return int(self._read())
