"""The golden-model environment the driver scenarios run on (tests/driver/scenarios.py).

An RTL environment implements the same few members over tb/nic_tb.NicTb: `hw` (the NicTb
itself: read32/write32/delay/host), `dev` (tb.dev), `send` (tb.send) and, optionally,
`window_bytes`, `steer_flow` and `rss_equal` (see scenarios.DriverEnv).
"""
from __future__ import annotations

from driver.backends.model import ModelHw
from models.device_memory import DeviceMemory


class ModelEnv:
    """`DriverEnv` on the golden model: every frame is processed when `send` returns."""

    def __init__(self, num_rxq: int = 1, seed: int = 0, dma_bytes: int = 8) -> None:
        self.hw = ModelHw(num_rxq=num_rxq, dma_bytes=dma_bytes, data_bytes=dma_bytes, seed=seed)
        self.dev: DeviceMemory = self.hw.dev
        self.seed = seed
        self.window_bytes = 1 << 30

    async def send(self, frame: bytes) -> None:
        await self.hw.wire.send(frame)
