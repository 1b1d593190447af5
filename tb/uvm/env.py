"""The environment: MAC RX agent, CSR agent, DMA agent, TX agent, the RX and TX
scoreboards (each with its functional coverage)."""
from __future__ import annotations

from pyuvm import uvm_env

from tb.uvm.csr_agent import CsrAgent
from tb.uvm.dma_agent import DmaAgent
from tb.uvm.mac_rx_agent import MacRxAgent
from tb.uvm.scoreboard import NicScoreboard
from tb.uvm.tx_agent import TxAgent, TxScoreboard


class NicEnv(uvm_env):
    def build_phase(self) -> None:
        self.mac_rx = MacRxAgent("mac_rx", self)
        self.csr = CsrAgent("csr", self)
        self.dma = DmaAgent("dma", self)
        self.tx = TxAgent("tx", self)
        self.scoreboard = NicScoreboard("scoreboard", self)
        self.tx_scoreboard = TxScoreboard("tx_scoreboard", self)

    def connect_phase(self) -> None:
        self.mac_rx.monitor.ap.connect(self.scoreboard.mac_in.analysis_export)
        self.dma.monitor.ap.connect(self.dma_check_export())
        self.mac_rx.driver.resolved = lambda: self.scoreboard.resolved
        self.tx.driver.ap.connect(self.tx_scoreboard.posted_in.analysis_export)
        self.tx.monitor.ap.connect(self.tx_scoreboard.wire_in.analysis_export)

    def dma_check_export(self):
        return self.scoreboard.dma_check.analysis_export
