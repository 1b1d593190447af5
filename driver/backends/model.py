"""The golden-model backend: `NicHw` over `models.nic_model.NicModel`.

`ModelHw` owns what a machine with this NIC has: host memory, device (GPU) memory, the DMA
address space that maps both for the NIC, and the NIC model itself. Registers go to the
model's `mmio_read`/`mmio_write`; `delay` returns at once (the model has no time). The MAC
side is `wire`: `await hw.wire.send(frame)` hands one frame to the model, which processes it
synchronously (descriptor fetch, split, DMA, completion), so when `send` returns the
completions are in memory for the driver's next poll.

With `rss=True` (the default) the model has the NIC's RSS and flow-steering block
(`models.rss.Classifier`): at reset it sends every frame to queue 0, and `driver.ethtool`
programs it.

Bus addresses match the RTL testbench (tb/nic_tb.py), so buffers and dma-bufs look the same
on both backends.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from models.bus import DmaAddressSpace
from models.device_memory import CpuAccessMode, DeviceMemory
from models.host_memory import HostMemory
from models.nic_model import NicModel, RxOutcome
from models.rss import Classifier

HOST_BASE = 0x0000_0001_0000_0000
HOST_SIZE = 64 << 20
DEV_BASE = 0x0000_0040_0000_0000
DEV_SIZE = 64 << 20


@dataclass
class ModelWire:
    """The MAC side of the model: frames in, outcomes recorded."""

    nic: NicModel
    outcomes: list[RxOutcome] = field(default_factory=list)
    keep_outcomes: bool = False

    @property
    def sent(self) -> int:
        return self.nic.frames_seen

    async def send(self, frame: bytes, bad_fcs: bool = False) -> RxOutcome:
        """One frame (without FCS) into the NIC; processed before this returns."""
        out = self.nic.receive(frame, bad_fcs)
        if self.keep_outcomes:
            self.outcomes.append(out)
        return out


class ModelHw:
    """NicHw on the golden model, plus the memories and the wire."""

    def __init__(self, num_rxq: int = 1, dma_bytes: int = 8, data_bytes: int = 8,
                 host_size: int = HOST_SIZE, dev_size: int = DEV_SIZE,
                 cpu_access: CpuAccessMode | str = CpuAccessMode.RAISE, seed: int = 0,
                 desc_cache: int = 16, rss: bool = True) -> None:
        self.host = HostMemory(HOST_BASE, host_size)
        self.dev = DeviceMemory(DEV_BASE, dev_size, cpu_access=cpu_access, seed=seed)
        self.space = DmaAddressSpace()
        self.space.add_region(self.host, 'host')
        self.space.add_region(self.dev, 'device')
        self.nic = NicModel(self.space, num_rxq=num_rxq, dma_bytes=dma_bytes,
                            data_bytes=data_bytes, desc_cache=desc_cache)
        if rss:
            self.nic.classifier = Classifier(num_rxq)  # type: ignore[assignment]  # rss.Classification vs nic_model.Classification
        self.wire = ModelWire(self.nic)
        self.dma_bytes = dma_bytes

    async def read32(self, addr: int) -> int:
        return self.nic.mmio_read(addr)

    async def write32(self, addr: int, value: int) -> None:
        self.nic.mmio_write(addr, value)

    async def delay(self, ns: int) -> None:
        return None
