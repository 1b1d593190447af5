"""DMA memory agent. The AXI4 slave itself is NicTb.dma (cocotbext-axi AxiSlave over the
DmaAddressSpace of host and device memory, or with the profile's `awready` a write slave
whose AWREADY waits for W: tb/axi_wr_slave.py); this agent sets its backpressure, injects
write errors (SLVERR) into payload buffers, and monitors every write the NIC made through
the address space's write record."""
from __future__ import annotations

import random

from cocotb.triggers import Timer
from pyuvm import ConfigDB, uvm_agent, uvm_analysis_port, uvm_monitor

from tb.nic_tb import TrafficProfile
from tb.uvm.profiles import Profile
from tb.uvm.seq_items import DmaWriteItem


class DmaMonitor(uvm_monitor):
    POLL_NS = 500

    def build_phase(self) -> None:
        self.ap = uvm_analysis_port("ap", self)
        self.tb = ConfigDB().get(self, "", "tb")
        self.next = 0
        self.bytes = {"host": 0, "device": 0}

    def drain(self) -> None:
        writes = self.tb.space.writes
        while self.next < len(writes):
            addr, n = writes[self.next]
            self.next += 1
            region = self.tb.space.region_of(addr, n)
            name = region.name if region else "?"
            self.bytes[name] = self.bytes.get(name, 0) + n
            self.ap.write(DmaWriteItem("dma_wr", addr, n, name))

    async def run_phase(self) -> None:
        while True:
            await Timer(self.POLL_NS, unit="ns")
            self.drain()


class DmaErrorInjector:
    """Decides which (re)posted payload buffers answer SLVERR, and undoes it after use."""

    def __init__(self, tb, rate: float, rng: random.Random) -> None:
        self.tb = tb
        self.rate = rate
        self.rng = rng
        self.poisoned: dict[int, tuple[int, int]] = {}     # bus address -> error range

    def maybe_poison(self, addr: int, n: int) -> None:
        if self.rate and self.rng.random() < self.rate:
            self.tb.space.add_error_range(addr, n)
            self.poisoned[addr] = (addr, n)

    def is_poisoned(self, addr: int) -> bool:
        return addr in self.poisoned

    def heal(self, addr: int) -> None:
        rng = self.poisoned.pop(addr, None)
        if rng is not None:
            self.tb.space.remove_error_range(*rng)


class DmaAgent(uvm_agent):
    def build_phase(self) -> None:
        self.tb = ConfigDB().get(self, "", "tb")
        self.profile = ConfigDB().get(self, "", "profile")
        self.monitor = DmaMonitor("monitor", self)
        self.injector = DmaErrorInjector(self.tb, self.profile.dma_error_rate,
                                         random.Random(self.tb.rng.random()))

    def connect_phase(self) -> None:
        # Stream gaps (MAC side) and DMA backpressure: NicTb's seeded pause generators.
        self.tb.set_profile(traffic_profile(self.profile))


def traffic_profile(profile: Profile) -> TrafficProfile:
    """The testbench's TrafficProfile for a UVM traffic profile: MAC gaps, DMA backpressure,
    TX backpressure and the DMA write slave's AWREADY behaviour (its default when the scenario
    names none)."""
    kw = {"awready": profile.awready} if profile.awready else {}
    return TrafficProfile(rx_idle=profile.rx_idle, dma_stall=profile.dma_stall,
                          tx_stall=profile.tx_stall, **kw)
