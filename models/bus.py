"""The NIC's DMA address space: bus address -> host memory or device memory.

docs/dma-formats.md: "Addresses are bus addresses on the NIC's AXI4 DMA master; whether a
buffer is in host memory or in device (GPU) memory is decided only by the address the driver
posted." `DmaAddressSpace` is that decode. An access that no region maps entirely (unmapped,
or straddling two regions) raises `DmaDecodeError`, the model of an AXI DECERR; ranges added
with `add_error_range` answer `DmaSlaveError`, the model of SLVERR (error injection). A failed
access reads or writes nothing.

With `record_writes=True` every successful write is logged as `(addr, length)` in `writes`,
so tests can check that the NIC wrote only inside the buffers and rings the driver posted.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable


class DmaError(Exception):
    """A DMA access answered with an error response."""

    def __init__(self, kind: str, op: str, addr: int, n: int, detail: str) -> None:
        self.kind = kind
        self.op = op
        self.addr = addr
        self.n = n
        super().__init__(f'{kind}: DMA {op} of {n} byte(s) at 0x{addr:x}: {detail}')


class DmaDecodeError(DmaError):
    """No region maps the whole access (AXI DECERR)."""

    def __init__(self, op: str, addr: int, n: int, detail: str) -> None:
        super().__init__('DECERR', op, addr, n, detail)


class DmaSlaveError(DmaError):
    """The target answered with an error (AXI SLVERR), injected with `add_error_range`."""

    def __init__(self, op: str, addr: int, n: int, detail: str) -> None:
        super().__init__('SLVERR', op, addr, n, detail)


@runtime_checkable
class DmaTarget(Protocol):
    """What a region needs: `HostMemory` and `DeviceMemory` both qualify."""

    @property
    def base(self) -> int: ...

    @property
    def size(self) -> int: ...

    def dma_read(self, addr: int, n: int) -> bytes: ...

    def dma_write(self, addr: int, data: bytes) -> None: ...


@dataclass(frozen=True)
class DmaRegion:
    """A mapped range of the address space and the memory answering it."""

    base: int
    size: int
    target: DmaTarget
    name: str

    @property
    def end(self) -> int:
        return self.base + self.size

    def contains(self, addr: int, n: int) -> bool:
        return self.base <= addr and addr + n <= self.end

    def overlaps(self, addr: int, n: int) -> bool:
        return addr < self.end and self.base < addr + max(n, 1)


class DmaAddressSpace:
    """Routes the NIC's DMA reads and writes to the memory regions mapped into it."""

    def __init__(self, regions: list[DmaTarget] | None = None,
                 record_writes: bool = False) -> None:
        self.regions: list[DmaRegion] = []
        self.record_writes = record_writes
        self.writes: list[tuple[int, int]] = []
        self.errors: list[DmaError] = []
        self._error_ranges: list[tuple[int, int]] = []
        for target in regions or []:
            self.add_region(target)

    def add_region(self, target: DmaTarget, name: str | None = None) -> DmaRegion:
        """Map `target` at `[target.base, target.base + target.size)`; regions may not
        overlap."""
        if not isinstance(target, DmaTarget):
            raise TypeError(f'{target!r} has no base/size/dma_read/dma_write')
        region = DmaRegion(target.base, target.size, target,
                           name or type(target).__name__)
        for other in self.regions:
            if other.overlaps(region.base, region.size):
                raise ValueError(
                    f'region {region.name} [0x{region.base:x}, 0x{region.end:x}) overlaps '
                    f'{other.name} [0x{other.base:x}, 0x{other.end:x})')
        self.regions.append(region)
        return region

    def add_error_range(self, addr: int, n: int) -> None:
        """Make every access touching `[addr, addr + n)` fail with `DmaSlaveError`."""
        if n <= 0:
            raise ValueError(f'error range length {n} must be positive')
        self._error_ranges.append((addr, n))

    def remove_error_range(self, addr: int, n: int) -> None:
        """Undo one `add_error_range(addr, n)`; ValueError when there is no such range."""
        try:
            self._error_ranges.remove((addr, n))
        except ValueError:
            raise ValueError(f'no error range [0x{addr:x}, +{n}) to remove') from None

    def clear_error_ranges(self) -> None:
        self._error_ranges.clear()

    @property
    def error_ranges(self) -> list[tuple[int, int]]:
        """The (addr, n) ranges every access to which fails, oldest first (a copy)."""
        return list(self._error_ranges)

    def region_of(self, addr: int, n: int = 1) -> DmaRegion | None:
        """The region that maps all of `[addr, addr + n)`, or None."""
        for region in self.regions:
            if region.contains(addr, n):
                return region
        return None

    def is_mapped(self, addr: int, n: int = 1) -> bool:
        return self.region_of(addr, n) is not None

    def _decode(self, op: str, addr: int, n: int) -> DmaRegion:
        if n < 0:
            raise ValueError(f'negative DMA {op} length {n}')
        if addr < 0:
            err: DmaError = DmaDecodeError(op, addr, n, 'negative address')
        else:
            region = self.region_of(addr, n)
            if region is None:
                touched = [r.name for r in self.regions if r.overlaps(addr, n)]
                detail = (f'straddles the edge of {" and ".join(touched)}' if touched
                          else 'no region maps this address')
                err = DmaDecodeError(op, addr, n, detail)
            else:
                bad = next(((a, k) for a, k in self._error_ranges
                            if addr < a + k and a < addr + max(n, 1)), None)
                if bad is None:
                    return region
                err = DmaSlaveError(op, addr, n,
                                    f'injected error range [0x{bad[0]:x}, 0x{bad[0] + bad[1]:x})')
        self.errors.append(err)
        raise err

    def read(self, addr: int, n: int) -> bytes:
        """A DMA read of `n` bytes at `addr`."""
        region = self._decode('read', addr, n)
        return region.target.dma_read(addr, n)

    def write(self, addr: int, data: bytes | bytearray | memoryview) -> None:
        """A DMA write of `data` at `addr`; nothing is written when it fails."""
        raw = bytes(data)
        region = self._decode('write', addr, len(raw))
        region.target.dma_write(addr, raw)
        if self.record_writes:
            self.writes.append((addr, len(raw)))
