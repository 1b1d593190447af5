"""What a failing check says: the simulation time of the failing frame, a ready
`nicsim waves FILE --start .. --end ..` command for its window, and a diff that names only
the fields that differ.

tb/sim.py tells the simulation where its waveform goes (`NIC_WAVES_FILE`) and whether it is
being recorded (`NIC_WAVES_ON`); outside a simulation the helpers still work (no time, no
command). Every scoreboard and checker of tb/ builds its messages with these.
"""
from __future__ import annotations

import dataclasses
import enum
import os
from collections.abc import Callable
from typing import Any

WAVES_FILE_ENV = "NIC_WAVES_FILE"
WAVES_ON_ENV = "NIC_WAVES_ON"
MARGIN_NS = 200


class _SimClock:
    """cocotb's simulation time in ns, read with one GPI call (the scoreboards ask once per
    frame: `cocotb.simtime.get_sim_time` costs several times more)."""

    def __init__(self) -> None:
        self.get: Callable[[], tuple[int, int]] | None = None
        self.scale = 0.0

    def __call__(self) -> float | None:
        if self.get is None:
            try:
                import cocotb
                from cocotb import simulator
            except ImportError:
                return None
            if not getattr(cocotb, "is_simulation", False):
                return None
            self.get = simulator.get_sim_time
            self.scale = 10.0 ** (simulator.get_precision() + 9)    # steps -> ns
        hi, lo = self.get()
        return ((hi << 32) | lo) * self.scale


sim_ns = _SimClock()
"""The current simulation time in ns, or None outside a cocotb simulation."""


def waves_command(start_ns: float | None, end_ns: float | None, margin_ns: float = MARGIN_NS) -> str:
    """`nicsim waves build/waves/x.fst --start 1200 --end 3400` for the window, widened by
    `margin_ns` on each side; with a note when the run records no waveform (the runner's
    failure message gives the command that reruns it with waves). Empty without a time."""
    if start_ns is None:
        return ""
    end_ns = start_ns if end_ns is None else end_ns
    s = max(0, int(start_ns - margin_ns))
    e = int(end_ns + margin_ns) + 1
    path = os.environ.get(WAVES_FILE_ENV, "") or "WAVES.fst"
    cmd = f"nicsim waves {path} --start {s} --end {e}"
    if os.environ.get(WAVES_ON_ENV, "") != "1":
        cmd += "  (this run records no waveform: rerun it with WAVES=1, command below)"
    return cmd


def when(start_ns: float | None, end_ns: float | None = None, what: str = "") -> str:
    """`sent at 1234 ns, checked at 2345 ns; waves: nicsim waves ...` (or "")."""
    if start_ns is None:
        return ""
    parts = [f"{what or 'at'} {start_ns:.0f} ns" if end_ns is None or end_ns == start_ns
             else f"{what or 'between'} {start_ns:.0f} and {end_ns:.0f} ns"]
    return f"{parts[0]}; waves: {waves_command(start_ns, end_ns)}"


def _show(v: Any) -> str:
    if isinstance(v, enum.Enum):
        return v.name
    if isinstance(v, int) and not isinstance(v, bool) and v > 9:
        return f"{v} (0x{v:x})"
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    return repr(v)


def field_diff(got: Any, want: Any, names: tuple[str, str] = ("rtl", "model")) -> str:
    """`pay_len: rtl 100, model 118; eop: rtl False, model True` for two dataclasses of one
    type (only the fields that differ); for other values `rtl X, model Y`."""
    if dataclasses.is_dataclass(got) and type(got) is type(want):
        out = []
        for f in dataclasses.fields(got):
            a, b = getattr(got, f.name), getattr(want, f.name)
            if a != b:
                out.append(f"{f.name}: {names[0]} {_show(a)}, {names[1]} {_show(b)}")
        if out:
            return "; ".join(out)
    return f"{names[0]} {_show(got)}, {names[1]} {_show(want)}"
