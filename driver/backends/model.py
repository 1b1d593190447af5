"""The golden-model backend: `NicHw` over `models.nic_model.NicModel`.

`ModelHw` owns what a machine with this NIC has: host memory, device (GPU) memory, the DMA
address space that maps both for the NIC, and the NIC model itself. Registers go to the
model's `mmio_read`/`mmio_write`; `delay` returns at once (the model has no time). The MAC
side is `wire`: `await hw.wire.send(frame)` hands one frame to the model, which processes it
synchronously (descriptor fetch, split, DMA, completion), so when `send` returns the
completions are in memory for the driver's next poll.

TX (docs/tx.md): the model transmits synchronously when the driver rings a TX doorbell, so
when `write32` returns every frame it could send is out. Sent frames are appended to
`hw.wire.tx_frames` (checksums patched, in order) and, if set, passed to `hw.wire.on_tx`
(a plain function or a coroutine function, awaited before `write32` returns). A loopback is
`hw.wire.on_tx = hw.wire.send`: every sent frame comes back into the RX side.

With `rss=True` (the default) the model has the NIC's RSS and flow-steering block
(`models.rss.Classifier`): at reset it sends every frame to queue 0, and `driver.ethtool`
programs it.

Bus addresses are the system's address map (models/address_map.py), as on the RTL
testbenches, so buffers and dma-bufs look the same on both backends.
"""
from __future__ import annotations

import inspect
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from driver.clock import Clock, VirtualClock
from models.address_map import DEV_BASE, DEV_SIZE, HOST_BASE, HOST_SIZE
from models.bus import DmaAddressSpace
from models.device_memory import CpuAccessMode, DeviceMemory
from models.host_memory import HostMemory
from models.nic_model import NicModel, RxOutcome
from models.tx import TxOutcome
from models.rss import Classifier

__all__ = ["DEV_BASE", "DEV_SIZE", "HOST_BASE", "HOST_SIZE", "ModelHw", "ModelWire"]


@dataclass
class ModelWire:
    """The MAC side of the model: frames in (`send`), frames out (`tx_frames`, `on_tx`)."""

    nic: NicModel
    outcomes: list[RxOutcome] = field(default_factory=list)
    keep_outcomes: bool = False
    tx_frames: list[bytes] = field(default_factory=list)
    """Every frame the NIC sent, in order."""
    keep_tx_frames: bool = True
    tx_outcomes: list[TxOutcome] = field(default_factory=list)
    """Every TX frame the NIC finished, sent or failed, with its completion (if kept)."""
    keep_tx_outcomes: bool = False
    on_tx: Callable[[bytes], Awaitable[object] | object] | None = None
    """Called with each sent frame; awaited if it returns an awaitable."""
    _tx_pending: deque[bytes] = field(default_factory=deque)

    def __post_init__(self) -> None:
        self.nic.on_tx = self._nic_tx

    def _nic_tx(self, outcome: TxOutcome) -> None:
        """`NicModel.on_tx`: record; frames for `on_tx` wait for `deliver_tx`."""
        if self.keep_tx_outcomes:
            self.tx_outcomes.append(outcome)
        for frame in outcome.wire_frames:          # a TSO send's segments each
            if self.keep_tx_frames:
                self.tx_frames.append(frame)
            if self.on_tx is not None:
                self._tx_pending.append(frame)

    async def deliver_tx(self) -> None:
        """Hand the frames sent since the last call to `on_tx`, in order."""
        while self._tx_pending:
            frame = self._tx_pending.popleft()
            if self.on_tx is None:
                continue
            result = self.on_tx(frame)
            if inspect.isawaitable(result):
                await result

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
                 desc_cache: int = 16, rss: bool = True, num_txq: int = 4,
                 clock: Clock | None = None) -> None:
        self.host = HostMemory(HOST_BASE, host_size)
        self.dev = DeviceMemory(DEV_BASE, dev_size, cpu_access=cpu_access, seed=seed)
        self.space = DmaAddressSpace()
        self.space.add_region(self.host, 'host')
        self.space.add_region(self.dev, 'device')
        self.nic = NicModel(self.space, num_rxq=num_rxq, dma_bytes=dma_bytes,
                            data_bytes=data_bytes, desc_cache=desc_cache, num_txq=num_txq)
        if rss:
            self.nic.classifier = Classifier(num_rxq)
        self.wire = ModelWire(self.nic)
        self.dma_bytes = dma_bytes
        self.clock: Clock = clock if clock is not None else VirtualClock()
        """The time the driver's TCP timers read: a `VirtualClock` that `delay` (and the
        caller, `clock.advance`) moves, or a `WallClock` for a peer in real time."""

    async def read32(self, addr: int) -> int:
        return self.nic.mmio_read(addr)

    async def write32(self, addr: int, value: int) -> None:
        self.nic.mmio_write(addr, value)
        await self.wire.deliver_tx()

    async def delay(self, ns: int) -> None:
        """The model has no time of its own: a virtual clock moves by `ns`."""
        if isinstance(self.clock, VirtualClock):
            self.clock.advance(ns)
