"""The DMA write slave's handshake behaviour, and an AXI4 write slave whose AWREADY waits for
the write data (docs/verification.md, "DMA slave behaviours").

AXI lets a slave wait for WVALID before it asserts AWREADY (IHI 0022, A3.3.1), and
interconnects that buffer write data before they arbitrate addresses do. cocotbext-axi's
AxiSlave (and the fast harness's HDL slave in its default mode) accepts AW without looking at
W, so it cannot show a master that holds WVALID back until AWREADY. `TrafficProfile.awready`
picks one of:

- ``independent``: today's slaves: AWREADY does not look at W (cocotbext-axi's AxiSlave);
- ``after-wvalid``: AWREADY for a burst only once the burst's first W beat has been seen
  (WVALID, taken with WREADY, which does not wait for AW): `AwWaitingAxiSlaveWrite`;
- ``after-wlast``: AWREADY for a burst only once all its W beats up to WLAST have been taken
  and buffered: `AwWaitingAxiSlaveWrite`.

In both waiting behaviours the slave writes memory once it knows the burst's address and all
its data, then answers B. Random stalls (pause generators, as on cocotbext-axi's channels)
still apply to every channel. The slave is per transaction: Python wakes per beat taken from
cocotbext-axi's channel queues and per burst, never per idle cycle.
"""
from __future__ import annotations

import logging
from collections.abc import Iterator
from enum import Enum
from typing import Any

import cocotb
from cocotbext.axi import AxiBurstType, AxiResp
from cocotbext.axi.axi_channels import AxiAWSink, AxiBSource, AxiWSink, AxiWriteBus
from cocotbext.axi.reset import Reset


class AwReady(str, Enum):
    """When the DMA write slave raises AWREADY for a burst."""

    INDEPENDENT = "independent"
    AFTER_WVALID = "after-wvalid"
    AFTER_WLAST = "after-wlast"

    @classmethod
    def parse(cls, value: str | AwReady) -> AwReady:
        """`value` as an AwReady; ValueError naming the choices otherwise."""
        try:
            return cls(value)
        except ValueError:
            choices = ", ".join(m.value for m in cls)
            raise ValueError(f"awready {value!r}: one of {choices}") from None


def strobe_runs(strb: int) -> Iterator[tuple[int, int]]:
    """[start, end) byte lanes of each run of set bits in a write strobe, lowest first."""
    while strb:
        lo = (strb & -strb).bit_length() - 1
        ones = strb >> lo
        n = (ones ^ (ones + 1)).bit_length() - 1          # trailing ones
        yield lo, lo + n
        strb &= ~(((1 << n) - 1) << lo)


def check_awready_exercised(tb: Any, required: bool = True) -> None:
    """With a waiting write slave (`tb.profile.awready` not 'independent'), the run must have
    had bursts whose W went before their AW: otherwise the behaviour was never tested.
    `required=False` only logs the count (a test that may make no DMA write)."""
    if required and tb.profile.awready is not AwReady.INDEPENDENT and tb.w_before_aw == 0:
        raise AssertionError(f"DMA slave awready {tb.profile.awready.value!r}: no write burst had "
                             "its data taken before its address")
    tb.dut._log.info("DMA slave awready %s: %d write bursts with W before AW",
                     tb.profile.awready.value, tb.w_before_aw)


class AwWaitingAxiSlaveWrite(Reset):
    """AXI4 write slave (INCR bursts) whose AWREADY for a burst waits for that burst's W
    beats: its first (``after-wvalid``) or all of them (``after-wlast``). WREADY never waits
    for AW. Bursts are served one at a time in order; `target.write(addr, data)` stores the
    bytes (an exception answers SLVERR), as cocotbext-axi's AxiSlaveWrite does.

    `aw_channel`, `w_channel` and `b_channel` are cocotbext-axi's channel objects: give W and
    B pause generators directly; the AW stalls go through `set_aw_pause_generator`, which
    combines them with the wait for data."""

    def __init__(self, bus: AxiWriteBus, clock: Any, reset: Any, target: Any, awready: AwReady,
                 reset_active_level: bool = True) -> None:
        self.awready = AwReady.parse(awready)
        if self.awready is AwReady.INDEPENDENT:
            raise ValueError("AwWaitingAxiSlaveWrite: use cocotbext-axi's AxiSlaveWrite for "
                             "awready 'independent'")
        self.target = target
        self.log = logging.getLogger(f"cocotb.{bus.aw._entity._name}.{bus.aw._name}")
        super().__init__()
        self.aw_channel = AxiAWSink(bus.aw, clock, reset, reset_active_level)
        # One AW at a time: AWREADY drops in the cycle an AW is taken, until the next is wanted.
        self.aw_channel.queue_occupancy_limit = 1
        self.w_channel = AxiWSink(bus.w, clock, reset, reset_active_level)
        self.w_channel.queue_occupancy_limit = 2
        self.b_channel = AxiBSource(bus.b, clock, reset, reset_active_level)
        self.b_channel.queue_occupancy_limit = 2
        self.byte_lanes = len(self.w_channel.bus.wdata) // 8
        self.bursts = 0
        """Write bursts answered (B sent)."""
        self._aw_open = False
        self._aw_stalls: Iterator[bool] | None = None
        self.aw_channel.pause = True
        self._process_cr: Any = None
        self._init_reset(reset, reset_active_level)

    # ------------------------------------------------------------------ AW gate and stalls
    def set_aw_pause_generator(self, generator: Iterator[bool] | None) -> None:
        """Random AW stalls (None: none); AWREADY is low while a stall or the wait for data
        holds it."""
        self._aw_stalls = generator
        if generator is None:
            self.aw_channel.clear_pause_generator()
            self.aw_channel.pause = not self._aw_open
        else:
            self.aw_channel.set_pause_generator(self._aw_pauses(generator))

    def _aw_pauses(self, stalls: Iterator[bool]) -> Iterator[bool]:
        for stall in stalls:
            yield stall or not self._aw_open

    async def _take_aw(self) -> Any:
        self._aw_open = True
        if self._aw_stalls is None:
            self.aw_channel.pause = False
        aw = await self.aw_channel.recv()
        self._aw_open = False
        self.aw_channel.pause = True
        return aw

    # ------------------------------------------------------------------ the bursts
    def _handle_reset(self, state: bool) -> None:
        if state:
            if self._process_cr is not None:
                self._process_cr.cancel()
                self._process_cr = None
            self._aw_open = False
            self.aw_channel.pause = True
            self.aw_channel.clear()
            self.w_channel.clear()
            self.b_channel.clear()
        elif self._process_cr is None:
            self._process_cr = cocotb.start_soon(self._process_write())

    async def _process_write(self) -> None:
        lanes = self.byte_lanes
        while True:
            beats = [await self.w_channel.recv()]
            if self.awready is AwReady.AFTER_WLAST:
                while not int(beats[-1].wlast):
                    beats.append(await self.w_channel.recv())
            aw = await self._take_aw()
            awid, addr, length = int(aw.awid), int(aw.awaddr), int(aw.awlen) + 1
            size, burst = int(aw.awsize), int(aw.awburst)
            if burst != AxiBurstType.INCR:
                raise AssertionError(f"AW ID {awid} at {addr:#x}: burst type {burst}, this slave takes INCR only")
            step = 1 << size
            if step > lanes:
                raise AssertionError(f"AW ID {awid} at {addr:#x}: size {step} bytes > the bus's {lanes}")
            start = addr & ~(step - 1)
            if start >> 12 != (start + step * length - 1) >> 12:
                raise AssertionError(f"AW ID {awid} at {addr:#x}, {length} beats of {step} bytes crosses 4 KiB")
            while len(beats) < length and not int(beats[-1].wlast):
                beats.append(await self.w_channel.recv())
            lasts = [int(b.wlast) for b in beats]
            if len(beats) != length or lasts[-1] != 1 or any(lasts[:-1]):
                raise AssertionError(f"AW ID {awid} at {addr:#x} has {length} beats; its W burst has "
                                     f"{len(beats)} with WLAST on beat(s) "
                                     f"{[i for i, x in enumerate(lasts) if x] or 'none'}")
            resp = AxiResp.OKAY
            for n, w in enumerate(beats):
                word = (start + n * step) & ~(lanes - 1)
                data = int(w.wdata).to_bytes(lanes, "little")
                try:
                    for lo, hi in strobe_runs(int(w.wstrb)):
                        await self.target.write(word + lo, data[lo:hi])
                except Exception:
                    self.log.warning("Write operation failed")
                    resp = AxiResp.SLVERR
            b = self.b_channel._transaction_obj()
            b.bid = awid
            b.bresp = resp
            await self.b_channel.send(b)
            self.bursts += 1
