"""MAC RX stream agent: a driver that puts RxFrameItems on `s_axis_rx` through cocotbext-axi's
AxiStreamSource (NicTb.rx, with the profile's stream gaps), and a monitor that rebuilds each
frame from the bus (AxiStreamMonitor) and publishes it with the sequence's intent attached."""
from __future__ import annotations

from collections import deque

from cocotb.triggers import Timer
from cocotbext.axi import AxiStreamBus, AxiStreamMonitor
from pyuvm import ConfigDB, uvm_agent, uvm_analysis_port, uvm_driver, uvm_monitor, uvm_sequencer

from tb.uvm.seq_items import RxFrameItem


class MacRxDriver(uvm_driver):
    """Sends frames, keeping at most `max_in_flight` unresolved (sent, not yet delivered or
    dropped) so the posted buffers never run out because of the testbench."""

    STALL_LIMIT_NS = 300_000

    def build_phase(self) -> None:
        self.tb = ConfigDB().get(self, "", "tb")
        self.intent: deque[RxFrameItem] = ConfigDB().get(self, "", "mac_rx_intent")
        self.max_in_flight = ConfigDB().get(self, "", "max_in_flight")
        self.sent = 0
        self.resolved = lambda: self.sent   # the env points this at the scoreboard

    async def run_phase(self) -> None:
        while True:
            item = await self.seq_item_port.get_next_item()
            waited = 0
            while self.sent - self.resolved() >= self.max_in_flight:
                await Timer(200, unit="ns")
                waited += 200
                assert waited < self.STALL_LIMIT_NS, (
                    f"MAC RX driver: {self.max_in_flight} frames sent and none delivered or dropped "
                    f"for {self.STALL_LIMIT_NS} ns (NIC stuck?); {self.sent} sent so far")
            self.intent.append(item)
            await self.tb.send(item.frame, item.bad_fcs)
            self.sent += 1
            self.seq_item_port.item_done()


class MacRxMonitor(uvm_monitor):
    def build_phase(self) -> None:
        self.ap = uvm_analysis_port("ap", self)
        self.tb = ConfigDB().get(self, "", "tb")
        self.intent: deque[RxFrameItem] = ConfigDB().get(self, "", "mac_rx_intent")
        self.seen = 0

    def connect_phase(self) -> None:
        dut = self.tb.dut
        self.mon = AxiStreamMonitor(AxiStreamBus.from_prefix(dut, "s_axis_rx"), dut.clk, dut.rst)
        self.mon.log.setLevel("WARNING")

    async def run_phase(self) -> None:
        while True:
            frame = await self.mon.recv()
            data = bytes(frame.tdata)
            tuser = frame.tuser
            bad = bool(tuser[-1] if isinstance(tuser, list) and tuser else tuser)
            meant = self.intent.popleft() if self.intent else RxFrameItem()
            assert meant.frame == data and meant.bad_fcs == bad, \
                f"MAC RX monitor: the bus carried {len(data)} bytes (bad_fcs={bad}), the driver sent {meant}"
            item = RxFrameItem("rx_seen", data, bad, meant.error, meant.protocol, meant.vlan, meant.flow)
            self.seen += 1
            self.ap.write(item)


class MacRxAgent(uvm_agent):
    def build_phase(self) -> None:
        self.seqr = uvm_sequencer("seqr", self)
        self.driver = MacRxDriver("driver", self)
        self.monitor = MacRxMonitor("monitor", self)

    def connect_phase(self) -> None:
        self.driver.seq_item_port.connect(self.seqr.seq_item_export)
