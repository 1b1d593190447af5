"""The golden-model environment the driver scenarios run on (tests/driver/scenarios.py).

An RTL environment implements the same few members over tb/nic_tb.NicTb: `hw` (the NicTb
itself: read32/write32/delay/host), `dev` (tb.dev), `send` (tb.send) and, optionally,
`window_bytes`, `seed`, `steering` and `tx_frames` (see scenarios.DriverEnv); `RtlEnv` below
is that.
"""
from __future__ import annotations

from typing import Any

from driver.backends.model import ModelHw
from models.device_memory import DeviceMemory


class ModelEnv:
    """`DriverEnv` on the golden model: every frame is processed when `send` returns."""

    def __init__(self, num_rxq: int = 1, seed: int = 0, dma_bytes: int = 8) -> None:
        self.hw = ModelHw(num_rxq=num_rxq, dma_bytes=dma_bytes, data_bytes=dma_bytes, seed=seed)
        self.dev: DeviceMemory = self.hw.dev
        self.seed = seed
        self.window_bytes = 1 << 30
        self.steering = True     # models.rss.Classifier is plugged in (ModelHw(rss=True))

    async def send(self, frame: bytes) -> None:
        await self.hw.wire.send(frame)

    @property
    def tx_frames(self) -> list[bytes]:
        """Every frame the NIC sent (the MAC side of TX), in order."""
        return self.hw.wire.tx_frames


class RtlEnv:
    """`DriverEnv` on the RTL: wraps a `tb.nic_tb.NicTb` (after `reset`). `send` only queues
    the frame on the MAC stream; the scenarios wait for the NIC's counters before polling.
    `window_bytes` keeps bursts below the RX frame FIFO (16 KiB by default) so random DMA
    stalls cannot overflow it."""

    def __init__(self, tb: Any, seed: int = 0, window_bytes: int = 12 << 10,
                 steering: bool = False) -> None:
        self.tb = tb
        self.steering = steering
        self.hw = tb
        self.dev: DeviceMemory = tb.dev
        self.seed = seed
        self.window_bytes = window_bytes
        self.tx_frames: list[bytes] = []
        """Every frame the NIC sent on m_axis_tx, in order (as `ModelEnv.tx_frames`): a
        coroutine drains the testbench's TX sink into it as frames complete."""
        import cocotb
        self._collector = cocotb.start_soon(self._collect())

    async def _collect(self) -> None:
        while True:
            frame = await self.tb.tx.recv()
            self.tx_frames.append(bytes(frame.tdata))

    def close(self) -> None:
        """Stop draining the TX sink, so a later `RtlEnv` on the same testbench gets every
        frame (two collectors would split the frames between them)."""
        self._collector.cancel()

    async def send(self, frame: bytes) -> None:
        await self.tb.send(frame)
