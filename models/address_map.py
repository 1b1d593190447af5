"""The DMA address map of the simulated system: which bus addresses are host memory and which
are the device (GPU) memory window. The NIC does not know it (a buffer is a bus address,
docs/architecture.md); the testbenches (tb/nic_tb.py, tb/fast/), the model backend
(driver/backends/model.py) and the tools that label DMA traffic (`nicsim waves`) do, and all
take it from here. docs/nicsim.md and docs/architecture.md show the table.

| window | base | size | what |
|---|---|---|---|
| host | 0x0000_0001_0000_0000 | 64 MiB | host RAM: rings, header buffers, host payload buffers |
| device | 0x0000_0040_0000_0000 | 64 MiB | the GPU's BAR window: dma-buf payload buffers |
"""
from __future__ import annotations

from dataclasses import dataclass

HOST_BASE = 0x0000_0001_0000_0000
HOST_SIZE = 64 << 20
DEV_BASE = 0x0000_0040_0000_0000
"""A GPU BAR window."""
DEV_SIZE = 64 << 20


@dataclass(frozen=True)
class Window:
    name: str          # "host" or "device"
    base: int
    size: int

    def contains(self, addr: int, length: int = 1) -> bool:
        return self.base <= addr and addr + length <= self.base + self.size


HOST = Window("host", HOST_BASE, HOST_SIZE)
DEVICE = Window("device", DEV_BASE, DEV_SIZE)
WINDOWS = (HOST, DEVICE)


def window_of(addr: int, length: int = 1) -> Window | None:
    """The window holding `[addr, addr + length)`, or None (the access would fail: DECERR)."""
    for w in WINDOWS:
        if w.contains(addr, length):
            return w
    return None
