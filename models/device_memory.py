"""GPU memory exported as a dma-buf, with the CPU kept out of it.

Background: docs/architecture.md (the models) and docs/dma-formats.md (payload buffers
"in host or device memory", chosen only by the address the driver posted).

`DeviceMemory(base, size)` is a device-memory window (a GPU BAR) at bus addresses
`[base, base + size)`. It has three access paths, kept apart on purpose:

- DMA, the NIC as a bus master: `dma_read` / `dma_write`. Always allowed.
- The GPU: the `gpu` accessor (`gpu.read(addr, n)`, `gpu.write(addr, data)`), used by the
  consumer of the data and by tests. Always allowed.
- The CPU: `cpu_read(addr, n)`. Device memory is not CPU-readable, so with devmem TCP any CPU
  read of payload is a zero-copy violation. Every call increments `cpu_reads`; in mode
  `CpuAccessMode.RAISE` (the default) it raises `CpuAccessError`, in `CpuAccessMode.RECORD` it
  logs the access in `cpu_read_log` and returns zeros.

`export_dmabuf()` allocates pages and returns a `DmaBuf`: its scatter list of `DmaBufChunk`s
maps dma-buf offsets to bus addresses that need not be contiguous.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from models.host_memory import PAGE_SIZE, AddressRangeError, ByteStore, MemoryWindow, OutOfMemoryError

__all__ = [
    'PAGE_SIZE', 'AddressRangeError', 'OutOfMemoryError', 'CpuAccessError', 'CpuAccessMode',
    'DmaBufRangeError', 'DmaBufChunk', 'DmaBuf', 'GpuAccessor', 'DeviceMemory',
]


class CpuAccessError(PermissionError):
    """The CPU tried to read device memory: not CPU-readable, zero-copy violated."""


class CpuAccessMode(Enum):
    """What `DeviceMemory.cpu_read` does after counting the access."""

    RAISE = 'raise'
    RECORD = 'record'


class DmaBufRangeError(ValueError):
    """A dma-buf offset or bus address outside the dma-buf."""


@dataclass(frozen=True)
class DmaBufChunk:
    """One entry of a dma-buf's scatter list: `length` bytes of the dma-buf starting at
    dma-buf offset `offset` live at bus address `bus_addr`."""

    bus_addr: int
    offset: int
    length: int

    @property
    def bus_end(self) -> int:
        return self.bus_addr + self.length

    @property
    def offset_end(self) -> int:
        return self.offset + self.length


class GpuAccessor:
    """The GPU's view of device memory (bus addresses); reads and writes are unrestricted."""

    def __init__(self, store: ByteStore) -> None:
        self._store = store

    def read(self, addr: int, n: int) -> bytes:
        """`n` bytes at bus address `addr`."""
        return self._store.read(addr, n)

    def write(self, addr: int, data: bytes | bytearray | memoryview) -> None:
        """Store `data` at bus address `addr`."""
        self._store.write(addr, data)

    def fill(self, addr: int, n: int, value: int = 0) -> None:
        """Set `n` bytes at bus address `addr` to `value`."""
        self._store.fill(addr, n, value)


@dataclass
class DmaBuf:
    """An exported dma-buf: `size` bytes, scattered over `chunks` (ordered by offset)."""

    device: DeviceMemory = field(repr=False)
    size: int
    chunks: list[DmaBufChunk]

    def _chunk_at_offset(self, offset: int) -> DmaBufChunk:
        if not 0 <= offset < self.size:
            raise DmaBufRangeError(f'dma-buf offset 0x{offset:x} outside [0, 0x{self.size:x})')
        for chunk in self.chunks:
            if chunk.offset <= offset < chunk.offset_end:
                return chunk
        raise AssertionError('chunks do not cover the dma-buf')  # pragma: no cover

    def offset_to_bus(self, offset: int) -> int:
        """Bus address of the byte at dma-buf `offset`."""
        chunk = self._chunk_at_offset(offset)
        return chunk.bus_addr + (offset - chunk.offset)

    def bus_to_offset(self, addr: int) -> int:
        """dma-buf offset of the byte at bus address `addr`."""
        for chunk in self.chunks:
            if chunk.bus_addr <= addr < chunk.bus_end:
                return chunk.offset + (addr - chunk.bus_addr)
        raise DmaBufRangeError(f'bus address 0x{addr:x} is not in this dma-buf')

    def segments(self, offset: int, length: int) -> list[tuple[int, int]]:
        """`(bus_addr, length)` pieces covering dma-buf bytes `[offset, offset + length)`."""
        if length < 0:
            raise DmaBufRangeError(f'negative length {length}')
        if offset < 0 or offset + length > self.size:
            raise DmaBufRangeError(
                f'dma-buf range [0x{offset:x}, 0x{offset + length:x}) outside '
                f'[0, 0x{self.size:x})')
        out: list[tuple[int, int]] = []
        pos, end = offset, offset + length
        while pos < end:
            chunk = self._chunk_at_offset(pos)
            n = min(end, chunk.offset_end) - pos
            out.append((chunk.bus_addr + pos - chunk.offset, n))
            pos += n
        return out

    def gpu_read(self, offset: int, n: int) -> bytes:
        """The GPU reads dma-buf bytes `[offset, offset + n)`, across chunks."""
        return b''.join(self.device.gpu.read(a, k) for a, k in self.segments(offset, n))

    def gpu_write(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        """The GPU writes `data` at dma-buf `offset`, across chunks."""
        raw = bytes(data)
        pos = 0
        for addr, k in self.segments(offset, len(raw)):
            self.device.gpu.write(addr, raw[pos:pos + k])
            pos += k


class DeviceMemory(MemoryWindow):
    """A device-memory window at bus addresses `[base, base + size)` (page-aligned).

    `buffer` (optional): external storage of at least `size` bytes (see `ByteStore`)."""

    def __init__(self, base: int, size: int,
                 cpu_access: CpuAccessMode | str = CpuAccessMode.RAISE,
                 seed: int = 0, buffer: bytearray | memoryview | None = None) -> None:
        if base % PAGE_SIZE or size % PAGE_SIZE:
            raise ValueError(f'DeviceMemory: base 0x{base:x} and size 0x{size:x} must be '
                             f'multiples of the {PAGE_SIZE}-byte page')
        self._store = ByteStore('DeviceMemory', base, size, buffer)
        self.gpu = GpuAccessor(self._store)
        self.cpu_access = CpuAccessMode(cpu_access)
        self.cpu_reads = 0
        self.cpu_read_log: list[tuple[int, int]] = []
        self._page_used = np.zeros(size // PAGE_SIZE, dtype=bool)
        self._rng = random.Random(seed)

    # --- (a) DMA ----------------------------------------------------------------------------

    def dma_read(self, addr: int, n: int) -> bytes:
        """A bus master (the NIC) reads `n` bytes at `addr`."""
        return self._store.read(addr, n)

    def dma_write(self, addr: int, data: bytes | bytearray | memoryview) -> None:
        """A bus master (the NIC) writes `data` at `addr`."""
        self._store.write(addr, data)

    # --- (c) CPU ----------------------------------------------------------------------------

    def cpu_read(self, addr: int, n: int) -> bytes:
        """The CPU reads device memory: always counted, refused (or recorded) by mode."""
        self.cpu_reads += 1
        if self.cpu_access is CpuAccessMode.RAISE:
            raise CpuAccessError(
                f'CPU read of {n} byte(s) at 0x{addr:x}: device memory is not CPU-readable; '
                f'zero-copy violated')
        self.cpu_read_log.append((addr, n))
        if not self.contains(addr, n):
            raise AddressRangeError('DeviceMemory', addr, n, self.base, self.size)
        return bytes(n)

    # --- dma-buf export ---------------------------------------------------------------------

    @property
    def free_bytes(self) -> int:
        """Bytes not yet exported in a dma-buf."""
        return int(np.count_nonzero(~self._page_used)) * PAGE_SIZE

    def _alloc_pages(self, npages: int, avoid_start: int | None,
                     rng: random.Random | None) -> int | None:
        """First page of a free run of `npages` pages, or None. With `rng`, pick a random
        run, preferring one that does not start at page `avoid_start`."""
        used = self._page_used.astype(np.int64)
        csum = np.concatenate(([0], np.cumsum(used)))
        starts = np.nonzero(csum[npages:] - csum[:-npages] == 0)[0]
        if starts.size == 0:
            return None
        if rng is None:
            return int(starts[0])
        preferred = starts[starts != avoid_start] if avoid_start is not None else starts
        pool = preferred if preferred.size else starts
        return int(pool[rng.randrange(pool.size)])

    def export_dmabuf(self, size: int, chunk_size: int = 16 * PAGE_SIZE, scatter: bool = True,
                      rng: random.Random | None = None) -> DmaBuf:
        """Allocate `size` bytes of device memory and export them as a `DmaBuf`.

        The dma-buf is cut into chunks of `chunk_size` bytes (the last may be shorter); both
        must be multiples of the page (4096). With `scatter=True` each chunk goes to a random
        free place, never right after the previous chunk when another place exists, so the
        scatter list is not contiguous in bus address; `rng` (default: this memory's own
        seeded generator) makes the placement reproducible. With `scatter=False` the chunks
        are one contiguous first-fit run. Raises `OutOfMemoryError` when there is no room.
        """
        if size <= 0 or size % PAGE_SIZE:
            raise ValueError(f'export_dmabuf: size {size} must be a positive multiple of '
                             f'{PAGE_SIZE}')
        if chunk_size <= 0 or chunk_size % PAGE_SIZE:
            raise ValueError(f'export_dmabuf: chunk_size {chunk_size} must be a positive '
                             f'multiple of {PAGE_SIZE}')
        lengths = [min(chunk_size, size - off) for off in range(0, size, chunk_size)]
        taken: list[tuple[int, int]] = []  # (first page, npages)
        chunks: list[DmaBufChunk] = []
        if not scatter:
            first = self._alloc_pages(size // PAGE_SIZE, None, None)
            if first is None:
                raise OutOfMemoryError(f'export_dmabuf: no contiguous {size} bytes free')
            self._page_used[first:first + size // PAGE_SIZE] = True
            addr, off = self.base + first * PAGE_SIZE, 0
            for length in lengths:
                chunks.append(DmaBufChunk(addr + off, off, length))
                off += length
            return DmaBuf(self, size, chunks)
        gen = rng if rng is not None else self._rng
        off, prev_end = 0, None
        for length in lengths:
            npages = length // PAGE_SIZE
            first = self._alloc_pages(npages, prev_end, gen)
            if first is None:
                for f, n in taken:
                    self._page_used[f:f + n] = False
                raise OutOfMemoryError(
                    f'export_dmabuf: no room for a {length}-byte chunk '
                    f'({self.free_bytes} bytes free, maybe fragmented)')
            self._page_used[first:first + npages] = True
            taken.append((first, npages))
            chunks.append(DmaBufChunk(self.base + first * PAGE_SIZE, off, length))
            off += length
            prev_end = first + npages
        return DmaBuf(self, size, chunks)

    def release_dmabuf(self, buf: DmaBuf) -> None:
        """Return a dma-buf's pages to the free pool (the contents are left as they are)."""
        if buf.device is not self:
            raise ValueError('release_dmabuf: the dma-buf belongs to another DeviceMemory')
        for chunk in buf.chunks:
            first = (chunk.bus_addr - self.base) // PAGE_SIZE
            self._page_used[first:first + chunk.length // PAGE_SIZE] = False
