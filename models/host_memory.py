"""Host RAM as the NIC's DMA master and the driver see it.

Rings (descriptors, completions) and header buffers always live in host memory; payload
buffers may (docs/dma-formats.md, "Rings"). Addresses are bus addresses: `HostMemory(base,
size)` answers for `[base, base + size)`. Storage is a numpy uint8 array, zero at start.

`ByteStore` and `AddressRangeError` are shared with `models.device_memory`.
"""
from __future__ import annotations

import numpy as np

PAGE_SIZE = 4096


class AddressRangeError(MemoryError):
    """An access touched bytes outside a memory's address range."""

    def __init__(self, name: str, addr: int, n: int, base: int, size: int) -> None:
        self.addr = addr
        self.n = n
        self.base = base
        self.size = size
        super().__init__(
            f'{name}: access of {n} byte(s) at 0x{addr:x} is outside '
            f'[0x{base:x}, 0x{base + size:x})')


class OutOfMemoryError(MemoryError):
    """The bump allocator has no room left for a request."""


class ByteStore:
    """A byte-addressed range `[base, base + size)` backed by a numpy uint8 array.

    Every access is bounds-checked and raises `AddressRangeError` naming the address.
    `buffer` (optional): a writable buffer of at least `size` bytes to use as the storage
    instead of a fresh zeroed array, e.g. memory shared with a compiled simulator model
    (tb/fast/); its current contents are kept.
    """

    def __init__(self, name: str, base: int, size: int,
                 buffer: bytearray | memoryview | None = None) -> None:
        if base < 0:
            raise ValueError(f'{name}: base 0x{base:x} is negative')
        if size <= 0:
            raise ValueError(f'{name}: size {size} must be positive')
        self.name = name
        self.base = base
        self.size = size
        if buffer is None:
            self._mem = np.zeros(size, dtype=np.uint8)
        else:
            mem = np.frombuffer(buffer, dtype=np.uint8)
            if mem.size < size:
                raise ValueError(f'{name}: buffer of {mem.size} bytes is smaller than size {size}')
            if not mem.flags.writeable:
                raise ValueError(f'{name}: buffer is read-only')
            self._mem = mem[:size]
        self._view = self._mem.data            # byte copies in and out without numpy per call

    @property
    def end(self) -> int:
        """One past the last address."""
        return self.base + self.size

    def contains(self, addr: int, n: int = 1) -> bool:
        """True when all of `[addr, addr + n)` is inside this range (`n` may be 0)."""
        if n < 0:
            raise ValueError(f'{self.name}: negative length {n}')
        return self.base <= addr and addr + n <= self.base + self.size

    def _offset(self, addr: int, n: int) -> int:
        # The bounds check of every access, written out (not through contains()): the fast
        # testbench's scoreboard makes ~10 accesses per frame.
        off = addr - self.base
        if off < 0 or n < 0 or off + n > self.size:
            if n < 0:
                raise ValueError(f'{self.name}: negative length {n}')
            raise AddressRangeError(self.name, addr, n, self.base, self.size)
        return off

    def read(self, addr: int, n: int) -> bytes:
        """`n` bytes from `addr`."""
        off = self._offset(addr, n)
        return self._view[off:off + n].tobytes()

    def write(self, addr: int, data: bytes | bytearray | memoryview) -> None:
        """Store `data` at `addr`; nothing is written when any byte is out of range."""
        raw = data if isinstance(data, (bytes, bytearray)) else bytes(data)   # a copy: views may overlap
        off = self._offset(addr, len(raw))
        self._view[off:off + len(raw)] = raw

    def fill(self, addr: int, n: int, value: int = 0) -> None:
        """Set `n` bytes from `addr` to `value`."""
        off = self._offset(addr, n)
        self._mem[off:off + n] = value


class MemoryWindow:
    """A range of bus addresses backed by a `ByteStore`: what host and device memory share."""

    _store: ByteStore

    @property
    def base(self) -> int:
        return self._store.base

    @property
    def size(self) -> int:
        return self._store.size

    @property
    def end(self) -> int:
        return self._store.end

    def contains(self, addr: int, n: int = 1) -> bool:
        """True when all of `[addr, addr + n)` lies in this window."""
        return self._store.contains(addr, n)


class HostMemory(MemoryWindow):
    """Host RAM at bus addresses `[base, base + size)`, with a bump allocator.

    `read`/`write` are the CPU's (and driver's) view; `dma_read`/`dma_write` are the same
    bytes as the NIC's DMA master sees them (host memory is coherent in this model), so a
    `models.bus.DmaAddressSpace` can route to either memory the same way.
    """

    def __init__(self, base: int, size: int, buffer: bytearray | memoryview | None = None) -> None:
        self._store = ByteStore('HostMemory', base, size, buffer)
        self._next = base

    def read(self, addr: int, n: int) -> bytes:
        """`n` bytes at `addr`; `AddressRangeError` (a `MemoryError`) when out of range."""
        return self._store.read(addr, n)

    def write(self, addr: int, data: bytes | bytearray | memoryview) -> None:
        """Store `data` at `addr`; `AddressRangeError` when out of range."""
        self._store.write(addr, data)

    def fill(self, addr: int, n: int, value: int = 0) -> None:
        """Set `n` bytes at `addr` to `value` (e.g. zeroing a completion ring)."""
        self._store.fill(addr, n, value)

    dma_read = read
    dma_write = write

    # --- allocation -----------------------------------------------------------------------

    def alloc(self, size: int, align: int = PAGE_SIZE) -> int:
        """Reserve `size` bytes aligned to `align` (a power of two); returns the bus address.

        A bump allocator: memory is never freed. The bytes are whatever was there (zero
        unless written). Raises `OutOfMemoryError` when the request does not fit.
        """
        if size <= 0:
            raise ValueError(f'HostMemory.alloc: size {size} must be positive')
        if align <= 0 or align & (align - 1):
            raise ValueError(f'HostMemory.alloc: align {align} is not a power of two')
        addr = (self._next + align - 1) & ~(align - 1)
        if addr + size > self.end:
            raise OutOfMemoryError(
                f'HostMemory.alloc: {size} bytes aligned to {align} do not fit '
                f'(next free 0x{self._next:x}, end 0x{self.end:x})')
        self._next = addr + size
        return addr

    @property
    def free_bytes(self) -> int:
        """Bytes the allocator has not handed out yet (ignoring alignment)."""
        return self.end - self._next
