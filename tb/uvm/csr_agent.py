"""CSR agent: CsrItems over the AXI4-Lite port. The driver goes through MirrorHw
(tb/rx_env.py), so every register write also programs the golden model's classifier; the
monitor publishes each completed access. `SeqHw` lets driver code (driver/ethtool.py) run
as a sequence on this agent: each read32/write32 becomes one CsrItem."""
from __future__ import annotations

from pyuvm import ConfigDB, uvm_agent, uvm_analysis_port, uvm_driver, uvm_sequencer, uvm_subscriber

from tb.uvm.seq_items import CsrItem


class CsrDriver(uvm_driver):
    def build_phase(self) -> None:
        self.hw = ConfigDB().get(self, "", "csr_hw")
        self.ap = uvm_analysis_port("ap", self)

    async def run_phase(self) -> None:
        while True:
            item = await self.seq_item_port.get_next_item()
            if item.op == "write":
                await self.hw.write32(item.addr, item.data)
            else:
                item.data = await self.hw.read32(item.addr)
            self.ap.write(item)
            self.seq_item_port.item_done()


class CsrMonitor(uvm_subscriber):
    """Keeps the register accesses of the run (a transaction log for debugging)."""

    def build_phase(self) -> None:
        self.ap = uvm_analysis_port("ap", self)
        self.log_items: list[CsrItem] = []

    def write(self, item: CsrItem) -> None:
        self.log_items.append(item)
        self.ap.write(item)


class CsrAgent(uvm_agent):
    def build_phase(self) -> None:
        self.seqr = uvm_sequencer("seqr", self)
        self.driver = CsrDriver("driver", self)
        self.monitor = CsrMonitor("monitor", self)

    def connect_phase(self) -> None:
        self.driver.seq_item_port.connect(self.seqr.seq_item_export)
        self.driver.ap.connect(self.monitor.analysis_export)


class SeqHw:
    """A NicHw (read32/write32) whose accesses are CsrItems of `seq` on its sequencer."""

    def __init__(self, seq) -> None:
        self.seq = seq

    async def read32(self, addr: int) -> int:
        item = CsrItem("csr_rd", "read", addr)
        await self.seq.start_item(item)
        await self.seq.finish_item(item)
        return item.data

    async def write32(self, addr: int, value: int) -> None:
        item = CsrItem("csr_wr", "write", addr, value)
        await self.seq.start_item(item)
        await self.seq.finish_item(item)
