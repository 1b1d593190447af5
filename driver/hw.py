"""The small async hardware interface every backend implements.

The driver never imports cocotb or the model: it sees registers, host memory and time.
"""
from __future__ import annotations

from typing import Protocol

from models.host_memory import HostMemory


class NicHw(Protocol):
    """What the driver needs from a NIC, whatever implements it."""

    @property
    def host(self) -> HostMemory:
        """Host memory as the CPU sees it (rings, header buffers); the driver only reads
        the attribute (a backend may make it a plain attribute or a property)."""
        ...

    async def read32(self, addr: int) -> int:
        """Read a 32-bit register of the NIC's control window."""
        ...

    async def write32(self, addr: int, value: int) -> None:
        """Write a 32-bit register of the NIC's control window."""
        ...

    async def delay(self, ns: int) -> None:
        """Let time pass (the RTL backend runs the simulation; the model returns at once)."""
        ...
