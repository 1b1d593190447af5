"""The environments a scenario runs on: `DriverEnv` (what a scenario may use), `ModelEnv`
(the golden model, no simulator) and `RtlEnv` (the RTL through cocotb, over a
`tb.nic_tb.NicTb` or the fast harness's `tb.fast.fast_tb.FastNicTb`).

An RTL environment implements the same few members over the testbench: `hw` (the testbench
itself: read32/write32/delay/host), `dev` (tb.dev), `send` (tb.send) and, optionally,
`window_bytes`, `seed`, `steering` and `tx_frames` (see `DriverEnv`).
"""
from __future__ import annotations

from typing import Any, Protocol

from driver.backends.model import ModelHw
from driver.hw import NicHw
from models.device_memory import DeviceMemory


class DriverEnv(Protocol):
    """What a backend gives the scenarios.

    Optional members: `window_bytes: int` (how many bytes may be sent before the driver runs
    NAPI; the RTL's frame FIFO may need a small one), `seed: int`, `rx_mpb: bool` (the rig
    turns on multi-packet payload buffers, `ethtool --set-priv-flags rx-mpb on`, and
    completion batches of `rx-frames` = the NIC's maximum), `steering: bool` (the
    NIC classifies frames with RSS and n-tuple rules; steering scenarios are Unsupported
    without it), and `tx_frames: list[bytes]` (every frame the NIC sent, in order, growing
    as they leave; the handshake reads the SYN-ACK from it, the TX scenarios need it).
    """

    @property
    def hw(self) -> NicHw:
        """The driver's hardware interface (read32/write32/delay/host)."""
        ...

    @property
    def dev(self) -> DeviceMemory:
        """GPU memory: dma-bufs are exported from it, payload is read through `dev.gpu`."""
        ...

    async def send(self, frame: bytes) -> None:
        """Put one frame (without FCS) on the NIC's RX wire."""
        ...


class ModelEnv:
    """`DriverEnv` on the golden model: every frame is processed when `send` returns. `tso`:
    the model with TCP segmentation offload (`TX_OFFLOADS.tso` 1, as on the RTL); off by
    default, as the model's own default."""

    def __init__(self, num_rxq: int = 1, seed: int = 0, dma_bytes: int = 8,
                 rx_mpb: bool = False, tso: bool = False) -> None:
        self.hw = ModelHw(num_rxq=num_rxq, dma_bytes=dma_bytes, data_bytes=dma_bytes, seed=seed)
        self.hw.nic.tx.tso = tso
        self.dev: DeviceMemory = self.hw.dev
        self.seed = seed
        self.rx_mpb = rx_mpb
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
                 steering: bool = False, rx_mpb: bool = False) -> None:
        self.tb = tb
        self.steering = steering
        self.rx_mpb = rx_mpb
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
