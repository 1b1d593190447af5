"""pytest parameters for running a NIC-level RTL test under the DMA write slave's AWREADY
behaviours (tb/axi_wr_slave.py, docs/verification.md "DMA slave behaviours").

A run under a waiting behaviour gets ``DMA_AWREADY=<behaviour>`` in its simulation
environment, which every `TrafficProfile` that names no behaviour takes as its default, so
the cocotb test itself is unchanged; its pytest id gains the behaviour's name.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from tb.axi_wr_slave import AwReady
from tb.nic_tb import AWREADY_ENV

WAITING = (AwReady.AFTER_WVALID, AwReady.AFTER_WLAST)
"""The behaviours whose AWREADY waits for the burst's write data."""


def _id(values: tuple) -> str:
    return "-".join(str(v) for v in values)


def awready_params(plain: Sequence[tuple], waiting: Sequence[tuple],
                   id_of: Callable[[tuple], str] = _id,
                   marks_of: Callable[[tuple], list] = lambda p: []) -> list:
    """pytest.param list of (*values, awready): every tuple of `plain` with the default slave
    (awready None, id `id_of(values)`, the id it had before, marks `marks_of(values)`), then
    every tuple of `waiting` under each waiting behaviour (id suffixed with the behaviour)."""
    out = [pytest.param(*p, None, id=id_of(p), marks=marks_of(p)) for p in plain]
    out += [pytest.param(*p, a.value, id=f"{id_of(p)}-{a.value}") for p in waiting for a in WAITING]
    return out


def awready_env(awready: str | None) -> dict[str, str]:
    """The simulation environment of a run under `awready` (None: the default slave)."""
    return {AWREADY_ENV: AwReady.parse(awready).value} if awready else {}
