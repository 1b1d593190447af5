"""A general-purpose chunk allocator: what lib/genalloc.c (`struct gen_pool`) does for the
dma-buf binding.

`net_devmem_bind_dmabuf` creates a pool with `min_alloc_order = PAGE_SHIFT` and adds each
scatter-list entry of the dma-buf as a chunk (`gen_pool_add_owner`) whose owner records the
entry's dma-buf offset and its net_iovs. RX buffers are then taken one page at a time
(`gen_pool_alloc_owner`) and given back (`gen_pool_free`).

Allocation is the default algorithm, `gen_pool_first_fit`: walk the chunks and take the first
run of free units that fits, lowest address first inside a chunk. As in Linux, a chunk added
later is searched first (`gen_pool_add_owner` does `list_add_rcu`, which puts it at the head).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Generic, TypeVar

T = TypeVar('T')


class GenPoolError(ValueError):
    """A free of memory the pool did not hand out, or a destroy with memory outstanding."""


@dataclass
class GenPoolChunk(Generic[T]):
    """`struct gen_pool_chunk`: `[start_addr, end_addr)` cut into `1 << order` byte units."""

    start_addr: int
    phys_addr: int
    size: int
    owner: T
    order: int
    bits: bytearray = field(init=False)
    avail: int = field(init=False)

    def __post_init__(self) -> None:
        self.bits = bytearray(self.size >> self.order)
        self.avail = self.size

    @property
    def end_addr(self) -> int:
        return self.start_addr + self.size

    def find_first_fit(self, nunits: int) -> int | None:
        """Index of the first run of `nunits` free units, or None."""
        first = self.bits.find(bytes(nunits))
        return None if first < 0 else first


class GenPool(Generic[T]):
    """`struct gen_pool` with per-chunk owners."""

    def __init__(self, min_alloc_order: int) -> None:
        self.min_alloc_order = min_alloc_order
        self.chunks: list[GenPoolChunk[T]] = []  # search order: newest first
        self.destroyed = False

    def _units(self, size: int) -> int:
        unit = 1 << self.min_alloc_order
        return -(-size // unit)

    def add_owner(self, addr: int, phys: int, size: int, owner: T) -> None:
        """`gen_pool_add_owner`: add `[addr, addr + size)` as a new chunk owned by `owner`."""
        if size <= 0 or size % (1 << self.min_alloc_order):
            raise GenPoolError(f'chunk size {size} is not a multiple of '
                               f'{1 << self.min_alloc_order}')
        for c in self.chunks:
            if addr < c.end_addr and c.start_addr < addr + size:
                raise GenPoolError(f'chunk 0x{addr:x}+{size} overlaps 0x{c.start_addr:x}')
        self.chunks.insert(0, GenPoolChunk(addr, phys, size, owner, self.min_alloc_order))

    def alloc_owner(self, size: int) -> tuple[int, T] | None:
        """`gen_pool_alloc_owner`: first fit; `(addr, owner)` or None when nothing fits."""
        if self.destroyed:
            raise GenPoolError('alloc from a destroyed gen_pool')
        nunits = self._units(size)
        for chunk in self.chunks:
            if chunk.avail < nunits << self.min_alloc_order:
                continue
            first = chunk.find_first_fit(nunits)
            if first is None:
                continue
            chunk.bits[first:first + nunits] = b'\x01' * nunits
            chunk.avail -= nunits << self.min_alloc_order
            return chunk.start_addr + (first << self.min_alloc_order), chunk.owner
        return None

    def _chunk_of(self, addr: int, size: int) -> GenPoolChunk[T] | None:
        for chunk in self.chunks:
            if chunk.start_addr <= addr and addr + size <= chunk.end_addr:
                return chunk
        return None

    def has_addr(self, addr: int, size: int) -> bool:
        """`gen_pool_has_addr`: `[addr, addr + size)` lies in one chunk of this pool."""
        return self._chunk_of(addr, size) is not None

    def free(self, addr: int, size: int) -> None:
        """`gen_pool_free`: give back what `alloc_owner` returned."""
        chunk = self._chunk_of(addr, size)
        if chunk is None:
            raise GenPoolError(f'free of 0x{addr:x}+{size}: not in this pool')
        first = (addr - chunk.start_addr) >> self.min_alloc_order
        nunits = self._units(size)
        if not all(chunk.bits[first:first + nunits]):
            raise GenPoolError(f'double free of 0x{addr:x}+{size}')
        chunk.bits[first:first + nunits] = bytes(nunits)
        chunk.avail += nunits << self.min_alloc_order

    def avail(self) -> int:
        """`gen_pool_avail`: free bytes over all chunks."""
        return sum(c.avail for c in self.chunks)

    def size(self) -> int:
        """`gen_pool_size`: bytes over all chunks."""
        return sum(c.size for c in self.chunks)

    def for_each_chunk(self, func: Callable[[GenPoolChunk[T]], None]) -> None:
        """`gen_pool_for_each_chunk`."""
        for chunk in list(self.chunks):
            func(chunk)

    def destroy(self) -> None:
        """`gen_pool_destroy`: Linux BUGs when memory is still allocated; so does this."""
        if self.avail() != self.size():
            raise GenPoolError(f"can't destroy genpool: size={self.size()}, "
                               f'avail={self.avail()}')
        self.chunks.clear()
        self.destroyed = True
