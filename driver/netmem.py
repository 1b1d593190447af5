"""Network memory references: what a page pool hands out and an skb fragment points at.

Linux (include/net/netmem.h) has one handle type, `netmem_ref`, for two kinds of memory:

- `struct page`: host RAM, readable by the CPU. Here: `Page`, a buffer in `HostMemory`.
- `struct net_iov`: a PAGE_SIZE piece of a dma-buf bound to RX queues. The CPU has no mapping
  of it; only its DMA address and its offset inside the dma-buf are known. Here: `NetIov`.

Both carry `pp` (the page pool that owns them while allocated) and `pp_ref_count` (references:
the ring or skb that holds the buffer, plus one per user token on a net_iov). When the count
drops to zero the buffer goes back to its page pool (`PagePool.put_netmem`).

`cpu_read` is the only CPU access path. On a `Page` it reads host memory. On a `NetIov` it goes
to `DeviceMemory.cpu_read`, which the model refuses (`CpuAccessError`) and counts: the driver
never calls it, and tests assert `cpu_reads == 0`, so zero-copy is checked rather than assumed.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from models.host_memory import PAGE_SIZE, HostMemory

if TYPE_CHECKING:
    from driver.devmem import DmabufGenpoolChunkOwner
    from driver.page_pool import PagePool

PAGE_SHIFT = 12
assert 1 << PAGE_SHIFT == PAGE_SIZE


class Netmem:
    """`netmem_ref`: the fields page pools and skbs use, whatever the memory is."""

    readable: bool = True
    """`netmem_is_readable`: False for net_iovs (device memory)."""

    def __init__(self, dma_addr: int, size: int) -> None:
        self.dma_addr = dma_addr
        self.size = size
        self.pp: PagePool | None = None
        self.pp_ref_count = 0

    @property
    def is_net_iov(self) -> bool:
        """`netmem_is_net_iov`."""
        return not self.readable

    def cpu_read(self, offset: int, n: int) -> bytes:  # pragma: no cover - overridden
        raise NotImplementedError


class Page(Netmem):
    """A host-memory buffer (a `struct page`, or a header buffer cut from one)."""

    readable = True

    def __init__(self, host: HostMemory, addr: int, size: int = PAGE_SIZE) -> None:
        super().__init__(addr, size)
        self.host = host

    def cpu_read(self, offset: int, n: int) -> bytes:
        if offset < 0 or offset + n > self.size:
            raise ValueError(f'read [{offset}, {offset + n}) outside a {self.size}-byte page')
        return self.host.read(self.dma_addr + offset, n)

    def __repr__(self) -> str:
        return f'Page(0x{self.dma_addr:x}, {self.size})'


class NetIov(Netmem):
    """`struct net_iov`: page `index` of a dma-buf chunk (`owner`), PAGE_SIZE bytes."""

    readable = False

    def __init__(self, owner: DmabufGenpoolChunkOwner, index: int) -> None:
        super().__init__(owner.base_dma_addr + (index << PAGE_SHIFT), PAGE_SIZE)
        self.owner = owner
        self.index = index

    @property
    def virtual_addr(self) -> int:
        """`net_iov_virtual_addr`: the byte offset of this page inside the dma-buf."""
        return self.owner.base_virtual + (self.index << PAGE_SHIFT)

    @property
    def binding_id(self) -> int:
        """`net_devmem_iov_binding_id`: the id of the binding this page belongs to (still
        reported after unbind, while the binding object lives)."""
        return self.owner.binding.id

    def cpu_read(self, offset: int, n: int) -> bytes:
        """A CPU read of device memory: refused by the model (zero-copy violation)."""
        return self.owner.binding.dmabuf.device.cpu_read(self.dma_addr + offset, n)

    def __repr__(self) -> str:
        return f'NetIov(dmabuf+0x{self.virtual_addr:x}, dma 0x{self.dma_addr:x})'
