"""A ring in host memory as the driver sees it, shared by the RX and TX queues.

Every ring entry is 16 bytes (docs/dma-formats.md, "Rings"); indices are free-running and the
entry of index `i` is at `base + 16 * (i mod size)`. `program_ring` writes the four ring
registers (base, size, driver index) of one ring of a queue, whose register block starts at
`queue_base` (`regs.rxq_reg(q, 0)` or `regs.txq_reg(t, 0)`).
"""
from __future__ import annotations

from dataclasses import dataclass

from driver import regs
from driver.hw import NicHw
from models.formats import RING_ENTRY_BYTES


@dataclass
class Ring:
    base: int
    log2: int
    sw_idx: int = 0

    @property
    def size(self) -> int:
        return 1 << self.log2

    def entry_addr(self, idx: int) -> int:
        return self.base + RING_ENTRY_BYTES * (idx & (self.size - 1))


async def program_ring(hw: NicHw, queue_base: int, ring_off: int, ring: Ring) -> None:
    """Point the NIC's ring registers at `ring` (its `SW_IDX` register written 0; `ring.sw_idx`
    is the caller's to reset)."""
    reg = queue_base + ring_off
    await hw.write32(reg + regs.RING_BASE_LO, ring.base & 0xFFFF_FFFF)
    await hw.write32(reg + regs.RING_BASE_HI, ring.base >> 32)
    await hw.write32(reg + regs.RING_SIZE, ring.log2)
    await hw.write32(reg + regs.RING_SW_IDX, 0)


async def wait_not_busy(hw: NicHw, status_reg: int, busy: regs.Field, what: str,
                        timeout_ns: int) -> None:
    """Poll `status_reg` every 100 ns until its `busy` bit reads 0 (a queue's `STATUS.busy`
    after `CTRL.enable` was cleared); RuntimeError naming `what` after `timeout_ns`."""
    waited = 0
    while busy.get(await hw.read32(status_reg)):
        if waited >= timeout_ns:
            raise RuntimeError(f'{what}: still busy {timeout_ns} ns after disable')
        await hw.delay(100)
        waited += 100
