"""cocotb testbench around `nic_top`: clock, reset, the MAC RX stream, the MAC TX stream sink,
the CSR bus and the DMA memory target that routes bus addresses to host memory or device (GPU)
memory.

Stream gaps, TX backpressure and DMA backpressure are random with a seeded generator, so a
failing run can be repeated exactly with the seed the runner prints. The DMA write slave's
AWREADY either ignores W (cocotbext-axi's AxiSlave) or waits for the burst's write data
(tb/axi_wr_slave.py), as `TrafficProfile.awready` says.
"""
from __future__ import annotations

import logging
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass, field

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, Timer
from cocotbext.axi import (AxiBus, AxiLiteBus, AxiLiteMaster, AxiSlave, AxiSlaveRead,
                           AxiStreamBus, AxiStreamFrame, AxiStreamSink, AxiStreamSource)

from driver.clock import Clock as DriverClock
from models.address_map import DEV_BASE, DEV_SIZE, HOST_BASE, HOST_SIZE
from models.bus import DmaAddressSpace, DmaError
from models.device_memory import DeviceMemory
from models.host_memory import HostMemory
from tb.axi_wr_slave import AwReady, AwWaitingAxiSlaveWrite
from tb.watchdog import Watchdog, flushed, not_reset

CLK_NS = 4                      # 250 MHz
__all__ = ["CLK_NS", "DEV_BASE", "DEV_SIZE", "HOST_BASE", "HOST_SIZE", "NicTb", "TrafficProfile"]


AWREADY_ENV = "DMA_AWREADY"


def awready_default() -> AwReady:
    """The DMA write slave behaviour of profiles that do not choose one: $DMA_AWREADY
    (independent, after-wvalid or after-wlast), else independent."""
    value = os.environ.get(AWREADY_ENV, "").strip()
    if not value:
        return AwReady.INDEPENDENT
    try:
        return AwReady.parse(value)
    except ValueError as exc:
        raise ValueError(f"{AWREADY_ENV}={value!r}: {exc}") from None


@dataclass
class TrafficProfile:
    """How rough the testbench is with the NIC's ports (probabilities per cycle)."""

    rx_idle: float = 0.0        # chance the MAC inserts an idle cycle before a beat
    dma_stall: float = 0.0      # chance each DMA channel is not ready / not valid in a cycle
    tx_stall: float = 0.0       # chance the MAC holds m_axis_tx_tready low in a cycle
    read_interleave: bool = False  # DMA read data of bursts with different IDs interleaves
                                   # beat by beat (fast harness only: cocotbext-axi cannot)
    awready: AwReady = field(default_factory=lambda: awready_default())
    """When the DMA write slave raises AWREADY for a burst: 'independent' (not looking at W),
    'after-wvalid' (once the burst's first W beat was taken), 'after-wlast' (once all its W
    beats were taken): tb/axi_wr_slave.py, docs/verification.md. Default: $DMA_AWREADY, else
    'independent'. Fixed when the testbench is made."""

    def __post_init__(self) -> None:
        self.awready = AwReady.parse(self.awready)

    @classmethod
    def rough(cls) -> TrafficProfile:
        return cls(rx_idle=0.2, dma_stall=0.3, tx_stall=0.3)


class _BusTarget:
    """Adapts `DmaAddressSpace` to cocotbext-axi's target interface (an exception = SLVERR).
    Failed accesses are logged with the reason, since the AXI model only says that one failed."""

    def __init__(self, space: DmaAddressSpace, log: logging.Logger) -> None:
        self.space = space
        self.log = log

    async def read(self, address: int, length: int, **kwargs: object) -> bytes:
        try:
            return self.space.read(address, length)
        except DmaError as exc:
            self.log.warning("DMA read error: %s", exc)
            raise

    async def write(self, address: int, data: bytes, **kwargs: object) -> None:
        try:
            self.space.write(address, data)
        except DmaError as exc:
            self.log.warning("DMA write error: %s", exc)
            raise


def check_same_awready(made_with: AwReady, profile: TrafficProfile) -> None:
    """ValueError unless `profile` keeps the write slave behaviour the testbench was made with."""
    if profile.awready is not made_with:
        raise ValueError(f"TrafficProfile.awready {profile.awready.value!r}: this testbench's DMA "
                         f"write slave is {made_with.value!r} (chosen when the testbench is made)")


@dataclass
class DmaSlave:
    """The DMA target when AWREADY waits for W: cocotbext-axi's read slave and our write
    slave, with AxiSlave's two attributes."""

    write_if: AwWaitingAxiSlaveWrite
    read_if: AxiSlaveRead


def _pause_gen(rng: random.Random, p: float) -> Iterator[bool]:
    while True:
        yield rng.random() < p


class NicTb:
    """Everything a test needs to drive `nic_top`."""

    def __init__(self, dut, seed: int, profile: TrafficProfile | None = None,
                 loopback: bool = False) -> None:
        self.dut = dut
        self.rng = random.Random(seed)
        self.data_bytes = len(dut.s_axis_rx_tdata) // 8
        self.dma_bytes = len(dut.m_axi_wdata) // 8
        self.clk_gen = Clock(dut.clk, CLK_NS, unit="ns")
        """cocotb's clock on `clk` (not `clock`: a NicHw's `clock` is the driver's time source)."""
        self.clk_gen.start()

        self.host = HostMemory(HOST_BASE, HOST_SIZE)
        self.clock: DriverClock | None = None
        """The driver's time source (driver.netdev takes `hw.clock` for the TCP timers): none
        by default; nicsim live sets a SimClock so the timers run on simulated time."""
        self.dev = DeviceMemory(DEV_BASE, DEV_SIZE)
        self.space = DmaAddressSpace(record_writes=True)
        self.space.add_region(self.host, "host")
        self.space.add_region(self.dev, "device")

        # cocotbext-axi logs every transaction at INFO: keep warnings, drop the chatter.
        for port in ("s_axis_rx", "m_axis_tx", "s_axil", "m_axi"):
            logging.getLogger(f"cocotb.{dut._name}.{port}").setLevel(logging.WARNING)
        self.rx = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis_rx"), dut.clk, dut.rst)
        self.tx = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_axis_tx"), dut.clk, dut.rst)
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst)
        profile = profile or TrafficProfile()
        target = _BusTarget(self.space, dut._log)
        bus = AxiBus.from_prefix(dut, "m_axi")
        if profile.awready is AwReady.INDEPENDENT:
            self.dma: AxiSlave | DmaSlave = AxiSlave(bus, dut.clk, dut.rst, target=target)
        else:
            self.dma = DmaSlave(AwWaitingAxiSlaveWrite(bus.write, dut.clk, dut.rst, target, profile.awready),
                                AxiSlaveRead(bus.read, dut.clk, dut.rst, target=target))
        self.awready = profile.awready
        self.set_profile(profile)
        self.looped_frames: list[bytes] = []
        """With `loopback`: every frame that went from m_axis_tx back into s_axis_rx."""
        if loopback:
            cocotb.start_soon(self._loopback())
        self.watchdog = Watchdog(dut)
        """Fails the test when a CSR access waits too long (tb/watchdog.py); runs from reset()."""
        self._reset_done = False

    async def _loopback(self) -> None:
        """A loopback cable: each frame the NIC sends on m_axis_tx is queued, whole and in
        order, on its own s_axis_rx (so `tx_frames()` sees nothing; `looped_frames` has them)."""
        while True:
            frame = bytes((await self.tx.recv()).tdata)
            self.looped_frames.append(frame)
            await self.rx.send(AxiStreamFrame(frame))

    def set_profile(self, profile: TrafficProfile) -> None:
        if profile.read_interleave:
            raise ValueError("TrafficProfile.read_interleave: cocotbext-axi's AxiSlave returns "
                             "read bursts whole; use the fast harness (tb/fast/) for interleaved reads")
        check_same_awready(self.awready, profile)
        self.profile = profile
        gens = {
            self.rx: profile.rx_idle,
            self.tx: profile.tx_stall,
            self.dma.write_if.aw_channel: profile.dma_stall,
            self.dma.write_if.w_channel: profile.dma_stall,
            self.dma.write_if.b_channel: profile.dma_stall,
            self.dma.read_if.ar_channel: profile.dma_stall,
            self.dma.read_if.r_channel: profile.dma_stall,
        }
        waiting = self.dma.write_if if isinstance(self.dma.write_if, AwWaitingAxiSlaveWrite) else None
        for chan, p in gens.items():
            gen = _pause_gen(random.Random(self.rng.random()), p) if p > 0 else None
            if waiting is not None and chan is waiting.aw_channel:
                waiting.set_aw_pause_generator(gen)     # AW stalls combine with its wait for W
            elif gen is not None:
                chan.set_pause_generator(gen)
            else:
                chan.clear_pause_generator()

    @property
    def w_before_aw(self) -> int:
        """Write bursts whose first W beat the DMA slave took before their AW: every burst
        of the waiting slaves (tb/axi_wr_slave.py); not counted (0) by cocotbext-axi's."""
        wr = self.dma.write_if
        return wr.bursts if isinstance(wr, AwWaitingAxiSlaveWrite) else 0

    async def reset(self) -> None:
        self.dut.rst.value = 1
        await ClockCycles(self.dut.clk, 8)
        self.dut.rst.value = 0
        await ClockCycles(self.dut.clk, 4)
        self._reset_done = True
        self.watchdog.start()

    # ------------------------------------------------------------------ NicHw for the driver
    async def read32(self, addr: int) -> int:
        if not self._reset_done:
            raise not_reset("read32", addr)
        token = self.watchdog.begin("read32", addr)
        try:
            resp = await self.axil.read(addr, 4)
        finally:
            self.watchdog.end(token)
        if resp is None:      # cocotbext-axi flushed it: reset rose while it waited
            raise flushed("read32", addr)
        return int.from_bytes(resp.data, "little")

    async def write32(self, addr: int, value: int) -> None:
        if not self._reset_done:
            raise not_reset("write32", addr)
        token = self.watchdog.begin("write32", addr)
        try:
            resp = await self.axil.write(addr, value.to_bytes(4, "little"))
        finally:
            self.watchdog.end(token)
        if resp is None:
            raise flushed("write32", addr)

    async def delay(self, ns: int) -> None:
        await Timer(ns, unit="ns")

    # ------------------------------------------------------------------ MAC side
    async def send(self, frame: bytes, bad_fcs: bool = False) -> None:
        """Queue one frame (without FCS) on the RX port; returns once it is queued."""
        await self.rx.send(AxiStreamFrame(frame, tuser=int(bad_fcs)))

    async def wait_rx_idle(self) -> None:
        """Wait until every queued frame has gone into the NIC."""
        await self.rx.wait()

    @property
    def rx_queued(self) -> int:
        """Frames queued on the RX port that the source has not started sending (cocotbext's
        count; `FastNicTb.rx_queued` also counts the frame being sent)."""
        return self.rx.queue_occupancy_frames

    def tx_frames(self) -> list[bytes]:
        """Frames the NIC has sent on m_axis_tx since the last call (tkeep applied)."""
        out = []
        while not self.tx.empty():
            out.append(bytes(self.tx.recv_nowait().tdata))
        return out
