"""Sequence items: one MAC RX frame, one CSR access, one observed DMA write."""
from __future__ import annotations

from pyuvm import uvm_sequence_item


class RxFrameItem(uvm_sequence_item):
    """A frame for the MAC RX port (without FCS), with what the sequence meant by it (for
    coverage): `error` is "none", "bad_fcs" or the mutation kind."""

    def __init__(self, name: str = "rx_frame", frame: bytes = b"", bad_fcs: bool = False,
                 error: str = "none", protocol: str = "", vlan: int = 0, flow: int = -1) -> None:
        super().__init__(name)
        self.frame = frame
        self.bad_fcs = bad_fcs
        self.error = error
        self.protocol = protocol
        self.vlan = vlan
        self.flow = flow

    def __str__(self) -> str:
        return (f"RxFrameItem({len(self.frame)} B, {self.protocol or '?'}, vlan={self.vlan}, "
                f"error={self.error}, bad_fcs={self.bad_fcs})")


class CsrItem(uvm_sequence_item):
    """One AXI4-Lite access: op "read" (the driver fills `data`) or "write"."""

    def __init__(self, name: str = "csr", op: str = "read", addr: int = 0, data: int = 0) -> None:
        super().__init__(name)
        self.op = op
        self.addr = addr
        self.data = data

    def __str__(self) -> str:
        return f"CsrItem({self.op} 0x{self.addr:04x} = 0x{self.data:08x})"


class DmaWriteItem(uvm_sequence_item):
    """A DMA write the NIC made (address, length, memory region)."""

    def __init__(self, name: str = "dma_write", addr: int = 0, length: int = 0, region: str = "") -> None:
        super().__init__(name)
        self.addr = addr
        self.length = length
        self.region = region

    def __str__(self) -> str:
        return f"DmaWriteItem({self.length} B at 0x{self.addr:x} in {self.region})"
