"""The fast testbench path: `FastNicTb`, a drop-in for tb/nic_tb.py's `NicTb` on the
`nic_fast_top` harness (tb/fast/nic_fast_top.sv), in which Python wakes up per transaction,
never per beat or per cycle.

- The clock, the RX stream source, the AXI4 DMA target and the AXI4-Lite master are HDL and
  C (tb/fast/fastmem.cpp); the DMA target's storage is shared with Python
  (tb/fast/shared.py): `host` and `dev` are ordinary `HostMemory`/`DeviceMemory` built on
  views of that memory, and `space` is the `DmaAddressSpace` the scoreboards read, as in
  `NicTb`. Writes the NIC made are appended to `space.writes` (with `record_writes`) and
  failed accesses to `space.errors` whenever Python runs (`sync()`); error ranges added
  with `space.add_error_range` reach the C target the same way.
- `send()` queues a frame and returns at once; `send_batch()` queues many. The harness plays
  them back one beat per cycle (seeded idle cycles with `TrafficProfile.rx_idle`).
- `read32()`/`write32()` queue a CSR command and wait for the harness's csr_ack toggle.
- `tx` is the MAC side of TX: the harness's sink stores every frame the NIC sends in the
  shared block (tready stalls with `TrafficProfile.tx_stall`); `await tx.recv()` returns the
  next one (one Python wake-up per frame at most), `tx_frames()` those already sent.
- `delay()` is one Timer. Long waits cost one Python wake-up.

Differences from `NicTb`: unmapped and error-range DMA accesses both answer SLVERR (as
cocotbext-axi's AxiSlave does); DMA and TX stalls are drawn in HDL, so the same seed gives a
different (but repeatable) stall pattern than the per-beat path; `space.writes` holds one
entry per write burst (its strobed span). Regions added to `space` after construction are
not seen by the harness.
"""
from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass
from typing import Any

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, Timer

try:
    from cocotb.triggers import ValueChange as _Change
except ImportError:  # cocotb < 2.0
    from cocotb.triggers import Edge as _Change

from driver.clock import Clock as DriverClock
from models.bus import DmaAddressSpace, DmaSlaveError
from models.device_memory import DeviceMemory
from models.host_memory import HostMemory
from tb.axi_wr_slave import AwReady
from tb.fast import shared
from tb.fast.shared import RegionSpec, SharedBlock
from tb.nic_tb import CLK_NS, DEV_BASE, DEV_SIZE, HOST_BASE, HOST_SIZE, TrafficProfile, check_same_awready
from tb.watchdog import Watchdog, not_reset

__all__ = ["FastHw", "FastNicTb", "FastTxSink", "TxFrame", "CLK_NS", "TrafficProfile", "nic_tb_for"]

AWREADY_MODES = {AwReady.INDEPENDENT: 0, AwReady.AFTER_WVALID: 1, AwReady.AFTER_WLAST: 2}
"""TrafficProfile.awready -> the harness's awready_mode input (nic_fast_top.sv, into the node's DMA slave)."""


def nic_tb_for(dut, seed: int, profile: TrafficProfile | None = None, *, loopback: bool = False):
    """The testbench for whichever top level cocotb built: `FastNicTb` on the fast harness
    (`nic_fast_top`), `tb.nic_tb.NicTb` (cocotbext-axi, per beat) on `nic_top` itself. Tests
    written against the common interface run on either."""
    if dut._name == "nic_fast_top":
        return FastNicTb(dut, seed, profile, loopback=loopback)
    from tb.nic_tb import NicTb
    return NicTb(dut, seed, profile, loopback=loopback)


@dataclass(frozen=True)
class TxFrame:
    """One frame the NIC sent on m_axis_tx (tkeep applied), as cocotbext's AxiStreamFrame
    is read by the tests: `bytes(frame.tdata)`."""
    tdata: bytes


class FastTxSink:
    """The harness's TX sink seen from Python: `recv()` as cocotbext-axi's AxiStreamSink (what
    RtlEnv and the loopback cable await), and `recv_all()`."""

    def __init__(self, dut, shm: SharedBlock) -> None:
        self.dut = dut
        self.shm = shm
        self._queue: deque[TxFrame] = deque()

    def _drain(self) -> None:
        self._queue.extend(TxFrame(f) for f in self.shm.drain_tx())

    def recv_all(self) -> list[TxFrame]:
        """Every frame sent and not yet received, in order (waits for nothing)."""
        self._drain()
        out = list(self._queue)
        self._queue.clear()
        return out

    async def recv(self) -> TxFrame:
        """The next frame the NIC sends (waits on the harness's tx_done toggle)."""
        while True:
            self._drain()
            if self._queue:
                return self._queue.popleft()
            await _Change(self.dut.tx_done)


class FastHw:
    """The `NicHw` half of a node of the fast harness (tb/fast/nic_fast_node.sv): its host and
    device memory on views of the node's shared block, the `DmaAddressSpace` the scoreboards
    read, the CSR command queue (`read32`/`write32`, waiting on the node's csr_ack), `delay`
    and `sync`. `FastNicTb` adds the MAC side of `nic_fast_top`; the cluster testbench
    (tb/cluster/) has one `FastHw` per NIC, whose MAC ports are cabled to the switch.

    `csr_ack`: the harness output that changes when one of this node's CSR commands has
    finished (it may be a vector of several nodes' toggles: the wait re-checks the block)."""

    def __init__(self, dut, shm: SharedBlock, csr_ack, *, record_writes: bool = True,
                 posted_writes: bool = False, watchdog: Watchdog | None = None) -> None:
        """`posted_writes`: `write32` returns once the write is queued, as a CPU's MMIO write
        is posted on PCIe; the CSR master still runs the commands in order, so a later
        `read32` returns after every earlier write has completed (a read flushes). Default:
        every write waits for its response. `watchdog`: the one that times this node's CSR
        accesses (tb/watchdog.py; the cluster shares one among its nodes), by default one of
        its own on `dut`. Whoever resets the node sets `_reset_done` and starts the watchdog."""
        self.dut = dut
        self.shm = shm
        self._csr_ack = csr_ack
        self.posted_writes = posted_writes
        self.shm.h[shared.H_LOG_OK] = int(record_writes)
        self.host = HostMemory(HOST_BASE, HOST_SIZE, buffer=self.shm.region_buffer("host"))
        self.clock: DriverClock | None = None
        """The driver's time source (driver.netdev takes `hw.clock` for the TCP timers): none
        by default; nicsim live sets a SimClock so the timers run on simulated time."""
        self.dev = DeviceMemory(DEV_BASE, DEV_SIZE, buffer=self.shm.region_buffer("device"))
        self.space = DmaAddressSpace(record_writes=record_writes)
        self.space.add_region(self.host, "host")
        self.space.add_region(self.dev, "device")
        self._err_ranges: list[tuple[int, int]] = []
        self.watchdog = watchdog if watchdog is not None else Watchdog(dut)
        """Fails the test when a CSR access waits too long (tb/watchdog.py); runs from reset."""
        self._reset_done = False

    @staticmethod
    def node_block(**sizes: Any) -> SharedBlock:
        """A shared block with the testbench's host and device memory (tb/nic_tb.py's
        addresses); `sizes`: SharedBlock's queue capacities (its keyword arguments)."""
        return SharedBlock([RegionSpec("host", HOST_BASE, HOST_SIZE),
                            RegionSpec("device", DEV_BASE, DEV_SIZE)], **sizes)

    # ------------------------------------------------------------------ sync with the C side
    def sync(self) -> None:
        """Hand error ranges to the C target and take its write/error log into `space`."""
        ranges = self.space.error_ranges
        if ranges != self._err_ranges:
            self.shm.set_error_ranges(ranges)
            self._err_ranges = ranges
        log = self.shm.drain_log()
        if len(log):
            kinds = log[:, 2]
            ok = log[kinds == shared.LOG_WRITE_OK]
            if self.space.record_writes and len(ok):
                self.space.writes.extend(zip(ok[:, 0].tolist(), ok[:, 1].tolist()))
            for addr, n, kind, _ in log[kinds != shared.LOG_WRITE_OK].tolist():
                op = "write" if kind == shared.LOG_WRITE_ERR else "read"
                err = DmaSlaveError(op, addr, n, "answered SLVERR by the fast DMA target")
                self.space.errors.append(err)
                self.dut._log.warning("DMA %s error: %s", op, err)

    @property
    def cycles(self) -> int:
        """Clock cycles since time 0 (from the harness's counter)."""
        return int(self.dut.cycles.value)

    # ------------------------------------------------------------------ NicHw for the driver
    async def _csr(self, addr: int, data: int, write: bool) -> int:
        if not self._reset_done:
            raise not_reset("write32" if write else "read32", addr)
        self.sync()
        idx = self.shm.csr_push(addr, data, write)
        token = self.watchdog.begin("write32" if write else "read32", addr)
        try:
            while not self.shm.csr_done(idx):
                await _Change(self._csr_ack)
        finally:
            self.watchdog.end(token)
        value, _resp = self.shm.csr_result(idx)
        return value

    async def read32(self, addr: int) -> int:
        return await self._csr(addr, 0, False)

    async def write32(self, addr: int, value: int) -> None:
        if not self.posted_writes:
            await self._csr(addr, value, True)
            return
        if not self._reset_done:
            raise not_reset("write32", addr)
        self.sync()
        idx = self.shm.csr_push(addr, value, True)
        while idx - int(self.shm.h[shared.H_CSR_DONE]) >= int(self.shm.h[shared.H_CSR_CAP]) // 2:
            await _Change(self._csr_ack)             # the queue is filling up: let it drain

    async def delay(self, ns: int) -> None:
        self.sync()
        await Timer(ns, unit="ns")
        self.sync()

    def close(self) -> None:
        self.shm.close()


class FastNicTb(FastHw):
    """Everything a test needs to drive `nic_fast_top` (the NicTb interface, plus bulk calls)."""

    profile: TrafficProfile

    def __init__(self, dut, seed: int, profile: TrafficProfile | None = None, *,
                 record_writes: bool = True, rx_data_bytes: int = 16 << 20,
                 rx_frames: int = 1 << 16, tx_frames: int = 1 << 14,
                 tx_data_bytes: int = 4 << 20, loopback: bool = False) -> None:
        """`rx_frames`/`rx_data_bytes`, `tx_frames`/`tx_data_bytes`: capacity of the RX and
        TX frame queues in the shared block (a full TX queue holds m_axis_tx_tready low).
        `loopback`: a cable from m_axis_tx to s_axis_rx, as `NicTb(loopback=True)`: each frame
        the NIC sends is queued, whole and in order, on its own RX port (so `tx_frames()`
        sees nothing; `looped_frames` has them)."""
        shm = self.node_block(rx_frames=rx_frames, rx_data_bytes=rx_data_bytes,
                              tx_frames=tx_frames, tx_data_bytes=tx_data_bytes)
        super().__init__(dut, shm, dut.csr_ack, record_writes=record_writes)
        self.seed = seed
        self.rng = random.Random(seed)
        self.data_bytes = int(dut.DATA_W.value) // 8
        self.dma_bytes = int(dut.DMA_DATA_W.value) // 8
        self.tx = FastTxSink(dut, self.shm)
        self.looped_frames: list[bytes] = []
        dut.rst.value = 1
        dut.fm_attach.value = self.shm.token
        self.set_profile(profile or TrafficProfile())
        if loopback:
            cocotb.start_soon(self._loopback())

    async def _loopback(self) -> None:
        while True:
            frame = (await self.tx.recv()).tdata
            self.looped_frames.append(frame)
            await self.send(frame)

    # ------------------------------------------------------------------ settings
    def set_profile(self, profile: TrafficProfile) -> None:
        if hasattr(self, "profile"):
            check_same_awready(self.profile.awready, profile)
        self.profile = profile
        thr = lambda p: min(int(p * (1 << 32)), (1 << 32) - 1) if p > 0 else 0  # noqa: E731
        self.shm.h[shared.H_RX_IDLE] = thr(profile.rx_idle)
        self.shm.h[shared.H_RX_SEED] = self.rng.getrandbits(64) | 1
        self.dut.dma_stall_thr.value = thr(profile.dma_stall)
        self.dut.tx_stall_thr.value = thr(profile.tx_stall)
        self.dut.stall_seed.value = self.rng.getrandbits(32) | 1
        self.dut.r_interleave.value = int(profile.read_interleave)
        self.dut.awready_mode.value = AWREADY_MODES[profile.awready]

    @property
    def w_before_aw(self) -> int:
        """Write bursts whose first W beat the DMA slave took before their AW (0 with
        awready 'independent', whose WREADY waits for the AW)."""
        return int(self.dut.w_first_bursts.value)

    # ------------------------------------------------------------------ reset
    async def reset(self) -> None:
        self.dut.rst.value = 1
        await Timer(8 * CLK_NS, unit="ns")
        self.dut.rst.value = 0
        await Timer(4 * CLK_NS, unit="ns")
        assert int(self.dut.fm_attached.value), "the harness did not attach the shared memory"
        self.sync()
        self._reset_done = True
        self.watchdog.start()

    # ------------------------------------------------------------------ MAC side
    def send_nowait(self, frame: bytes, bad_fcs: bool = False) -> bool:
        """Queue one frame if there is room; False when the frame queue is full."""
        if not self.shm.rx_room(len(frame)):
            return False
        self.shm.rx_push(frame, bad_fcs)
        return True

    async def send(self, frame: bytes, bad_fcs: bool = False) -> None:
        """Queue one frame (without FCS) on the RX port; returns once it is queued."""
        while not self.send_nowait(frame, bad_fcs):
            await Timer(256 * CLK_NS, unit="ns")

    async def send_batch(self, frames, bad_fcs=None) -> None:
        """Queue many frames; waits (coarsely) only when the frame queue is full."""
        bad = bad_fcs if bad_fcs is not None else [False] * len(frames)
        for f, b in zip(frames, bad):
            await self.send(f, b)

    @property
    def rx_queued(self) -> int:
        """Frames queued whose last beat has not been handed to the NIC yet."""
        return self.shm.rx_pending

    async def wait_rx_idle(self) -> None:
        """Wait until every queued frame has gone into the NIC."""
        while self.shm.rx_pending or int(self.dut.rx_busy.value):
            if not int(self.dut.rx_busy.value):
                await RisingEdge(self.dut.rx_busy)
            await FallingEdge(self.dut.rx_busy)
        self.sync()

    # ------------------------------------------------------------------ TX (MAC side)
    def tx_frames(self) -> list[bytes]:
        """Frames the NIC has sent on m_axis_tx since the last call (tkeep applied)."""
        return [f.tdata for f in self.tx.recv_all()]

