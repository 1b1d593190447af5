"""Host memory, device memory / dma-buf and the DMA address space (models/*memory.py,
models/bus.py)."""
from __future__ import annotations

import random

import pytest

from models.bus import DmaAddressSpace, DmaDecodeError, DmaError, DmaSlaveError
from models.device_memory import (CpuAccessError, CpuAccessMode, DeviceMemory, DmaBufChunk,
                                  DmaBufRangeError)
from models.host_memory import AddressRangeError, HostMemory, OutOfMemoryError

HOST_BASE = 0x1000_0000
DEV_BASE = 0x40_0000_0000
PAGE = 4096


# --- host memory -----------------------------------------------------------------------------

def test_host_read_write() -> None:
    h = HostMemory(HOST_BASE, 1 << 16)
    assert h.read(HOST_BASE, 4) == bytes(4)
    h.write(HOST_BASE + 10, b'hello')
    assert h.read(HOST_BASE + 8, 9) == b'\0\0hello\0\0'
    h.write(HOST_BASE + (1 << 16) - 2, b'xy')
    assert h.read(HOST_BASE + (1 << 16) - 2, 2) == b'xy'


def test_host_contains() -> None:
    h = HostMemory(HOST_BASE, 0x100)
    assert h.contains(HOST_BASE, 0x100)
    assert not h.contains(HOST_BASE, 0x101)
    assert not h.contains(HOST_BASE - 1, 1)
    assert h.contains(HOST_BASE + 0xFF, 1)
    assert not h.contains(HOST_BASE + 0x100, 1)


@pytest.mark.parametrize('addr, n', [(HOST_BASE - 1, 1), (HOST_BASE + 0xFF, 2),
                                     (HOST_BASE + 0x100, 1), (0, 4)])
def test_host_out_of_range(addr: int, n: int) -> None:
    h = HostMemory(HOST_BASE, 0x100)
    with pytest.raises(AddressRangeError, match=f'0x{addr:x}') as exc:
        h.read(addr, n)
    assert isinstance(exc.value, MemoryError)
    with pytest.raises(MemoryError, match=f'0x{addr:x}'):
        h.write(addr, bytes(n))


def test_host_failed_write_changes_nothing() -> None:
    h = HostMemory(HOST_BASE, 0x100)
    with pytest.raises(AddressRangeError):
        h.write(HOST_BASE + 0xFE, b'abcd')
    assert h.read(HOST_BASE + 0xF0, 16) == bytes(16)


def test_host_alloc() -> None:
    h = HostMemory(HOST_BASE + 8, 0x10000)
    a = h.alloc(100, align=64)
    assert a % 64 == 0 and a >= HOST_BASE + 8
    b = h.alloc(16, align=16)
    assert b >= a + 100 and b % 16 == 0
    c = h.alloc(PAGE)
    assert c % PAGE == 0 and c >= b + 16
    with pytest.raises(OutOfMemoryError):
        h.alloc(0x10000)
    with pytest.raises(ValueError):
        h.alloc(16, align=24)


# --- device memory ---------------------------------------------------------------------------

def test_device_dma_and_gpu_paths() -> None:
    d = DeviceMemory(DEV_BASE, 16 * PAGE)
    d.dma_write(DEV_BASE + 100, b'payload')
    assert d.dma_read(DEV_BASE + 100, 7) == b'payload'
    assert d.gpu.read(DEV_BASE + 100, 7) == b'payload'
    d.gpu.write(DEV_BASE, b'gpu')
    assert d.dma_read(DEV_BASE, 3) == b'gpu'
    assert d.cpu_reads == 0
    with pytest.raises(AddressRangeError, match=f'0x{DEV_BASE + 16 * PAGE:x}'):
        d.dma_write(DEV_BASE + 16 * PAGE, b'x')


def test_device_cpu_read_refused() -> None:
    d = DeviceMemory(DEV_BASE, 4 * PAGE)
    d.dma_write(DEV_BASE, b'secret')
    with pytest.raises(CpuAccessError, match='not CPU-readable.*zero-copy violated'):
        d.cpu_read(DEV_BASE, 6)
    assert d.cpu_reads == 1
    with pytest.raises(CpuAccessError):
        d.cpu_read(DEV_BASE + 8, 1)
    assert d.cpu_reads == 2


def test_device_cpu_read_record_mode() -> None:
    d = DeviceMemory(DEV_BASE, 4 * PAGE, cpu_access='record')
    assert d.cpu_access is CpuAccessMode.RECORD
    d.dma_write(DEV_BASE, b'secret')
    assert d.cpu_read(DEV_BASE, 6) == bytes(6)
    assert d.cpu_reads == 1
    assert d.cpu_read_log == [(DEV_BASE, 6)]


def test_device_must_be_page_aligned() -> None:
    with pytest.raises(ValueError):
        DeviceMemory(DEV_BASE + 1, PAGE)
    with pytest.raises(ValueError):
        DeviceMemory(DEV_BASE, PAGE + 1)


def _check_chunks_cover(chunks: list[DmaBufChunk], size: int) -> None:
    off = 0
    for c in chunks:
        assert c.offset == off
        assert c.length % PAGE == 0 and c.length > 0
        assert c.bus_addr % PAGE == 0
        off += c.length
    assert off == size


def test_dmabuf_scatter_non_contiguous() -> None:
    d = DeviceMemory(DEV_BASE, 256 * PAGE)
    buf = d.export_dmabuf(16 * PAGE, chunk_size=2 * PAGE, rng=random.Random(1))
    assert buf.size == 16 * PAGE
    assert len(buf.chunks) == 8
    _check_chunks_cover(buf.chunks, buf.size)
    for a, b in zip(buf.chunks, buf.chunks[1:]):
        assert b.bus_addr != a.bus_addr + a.length, 'chunks must not be bus-contiguous'
    spans = sorted((c.bus_addr, c.bus_addr + c.length) for c in buf.chunks)
    for (_, e1), (s2, _) in zip(spans, spans[1:]):
        assert e1 <= s2, 'chunks overlap'
    for c in buf.chunks:
        assert DEV_BASE <= c.bus_addr and c.bus_addr + c.length <= DEV_BASE + 256 * PAGE
    assert d.free_bytes == 240 * PAGE


def test_dmabuf_two_exports_do_not_overlap() -> None:
    d = DeviceMemory(DEV_BASE, 64 * PAGE)
    a = d.export_dmabuf(16 * PAGE, chunk_size=PAGE)
    b = d.export_dmabuf(16 * PAGE, chunk_size=PAGE)
    pages_a = {c.bus_addr for c in a.chunks}
    pages_b = {c.bus_addr for c in b.chunks}
    assert len(pages_a) == 16 and len(pages_b) == 16 and not pages_a & pages_b
    d.release_dmabuf(a)
    assert d.free_bytes == 48 * PAGE


def test_dmabuf_contiguous_mode() -> None:
    d = DeviceMemory(DEV_BASE, 64 * PAGE)
    buf = d.export_dmabuf(10 * PAGE, chunk_size=4 * PAGE, scatter=False)
    assert [c.length for c in buf.chunks] == [4 * PAGE, 4 * PAGE, 2 * PAGE]
    _check_chunks_cover(buf.chunks, buf.size)
    for a, b in zip(buf.chunks, buf.chunks[1:]):
        assert b.bus_addr == a.bus_addr + a.length


def test_dmabuf_offset_bus_mapping() -> None:
    d = DeviceMemory(DEV_BASE, 128 * PAGE)
    buf = d.export_dmabuf(8 * PAGE, chunk_size=PAGE, rng=random.Random(7))
    for c in buf.chunks:
        assert buf.offset_to_bus(c.offset) == c.bus_addr
        assert buf.offset_to_bus(c.offset + 123) == c.bus_addr + 123
        assert buf.bus_to_offset(c.bus_addr + PAGE - 1) == c.offset + PAGE - 1
    with pytest.raises(DmaBufRangeError):
        buf.offset_to_bus(8 * PAGE)
    with pytest.raises(DmaBufRangeError):
        buf.offset_to_bus(-1)
    outside = next(a for a in range(DEV_BASE, DEV_BASE + 128 * PAGE, PAGE)
                   if all(a != c.bus_addr for c in buf.chunks))
    with pytest.raises(DmaBufRangeError):
        buf.bus_to_offset(outside)


def test_dmabuf_gpu_access_across_chunks() -> None:
    d = DeviceMemory(DEV_BASE, 64 * PAGE)
    buf = d.export_dmabuf(4 * PAGE, chunk_size=PAGE, rng=random.Random(3))
    data = bytes(range(256)) * 8   # 2048 bytes across the first chunk boundary
    buf.gpu_write(PAGE - 1000, data)
    assert buf.gpu_read(PAGE - 1000, len(data)) == data
    second = buf.chunks[1]
    assert d.gpu.read(second.bus_addr, 1048) == data[1000:]
    segs = buf.segments(PAGE - 1000, len(data))
    assert segs == [(buf.chunks[0].bus_addr + PAGE - 1000, 1000), (second.bus_addr, 1048)]
    assert d.cpu_reads == 0


def test_dmabuf_size_rules() -> None:
    d = DeviceMemory(DEV_BASE, 8 * PAGE)
    with pytest.raises(ValueError):
        d.export_dmabuf(100)
    with pytest.raises(ValueError):
        d.export_dmabuf(PAGE, chunk_size=1000)
    with pytest.raises(OutOfMemoryError):
        d.export_dmabuf(9 * PAGE)
    d.export_dmabuf(8 * PAGE, chunk_size=PAGE)   # fills it; scattering impossible is fine
    with pytest.raises(OutOfMemoryError):
        d.export_dmabuf(PAGE)


# --- DMA address space -----------------------------------------------------------------------

def _space(record: bool = False) -> tuple[DmaAddressSpace, HostMemory, DeviceMemory]:
    h = HostMemory(HOST_BASE, 16 * PAGE)
    d = DeviceMemory(DEV_BASE, 16 * PAGE)
    return DmaAddressSpace([h, d], record_writes=record), h, d


def test_bus_routes_by_address() -> None:
    bus, h, d = _space()
    bus.write(HOST_BASE + 4, b'host')
    bus.write(DEV_BASE + 8, b'dev')
    assert h.read(HOST_BASE + 4, 4) == b'host'
    assert d.gpu.read(DEV_BASE + 8, 3) == b'dev'
    assert bus.read(DEV_BASE + 8, 3) == b'dev'
    assert d.cpu_reads == 0


@pytest.mark.parametrize('addr, n', [
    (0, 4),                                   # unmapped
    (HOST_BASE - 4, 4),                       # just below host
    (HOST_BASE + 16 * PAGE, 1),               # just past host
    (HOST_BASE + 16 * PAGE - 2, 4),           # straddles the end of host
    (DEV_BASE - 1, 2),                        # straddles the start of device
])
def test_bus_decode_errors(addr: int, n: int) -> None:
    bus, h, _ = _space(record=True)
    with pytest.raises(DmaDecodeError, match=f'0x{addr:x}'):
        bus.write(addr, b'\xAA' * n)
    with pytest.raises(DmaDecodeError):
        bus.read(addr, n)
    assert bus.writes == []
    assert h.read(HOST_BASE + 16 * PAGE - 4, 4) == bytes(4)


def test_bus_straddling_two_regions() -> None:
    h1 = HostMemory(HOST_BASE, PAGE)
    h2 = HostMemory(HOST_BASE + PAGE, PAGE)
    bus = DmaAddressSpace([h1, h2])
    bus.write(HOST_BASE + PAGE - 4, b'abcd')
    with pytest.raises(DmaDecodeError, match='straddles'):
        bus.write(HOST_BASE + PAGE - 2, b'abcd')
    assert h2.read(HOST_BASE + PAGE, 2) == bytes(2)


def test_bus_overlapping_regions_rejected() -> None:
    bus = DmaAddressSpace([HostMemory(HOST_BASE, 2 * PAGE)])
    with pytest.raises(ValueError, match='overlaps'):
        bus.add_region(DeviceMemory(HOST_BASE + PAGE, 4 * PAGE))


def test_bus_records_writes() -> None:
    bus, _, _ = _space(record=True)
    bus.write(HOST_BASE, b'12345')
    bus.write(DEV_BASE + PAGE, bytes(100))
    assert bus.writes == [(HOST_BASE, 5), (DEV_BASE + PAGE, 100)]
    bus.read(HOST_BASE, 4)
    assert len(bus.writes) == 2
    quiet, _, _ = _space(record=False)
    quiet.write(HOST_BASE, b'1')
    assert quiet.writes == []


def test_bus_injected_slave_error() -> None:
    bus, h, _ = _space()
    bus.add_error_range(HOST_BASE + 64, 16)
    with pytest.raises(DmaSlaveError):
        bus.read(HOST_BASE + 60, 8)
    with pytest.raises(DmaError):
        bus.write(HOST_BASE + 79, b'x')
    bus.write(HOST_BASE + 80, b'x')
    assert h.read(HOST_BASE + 80, 1) == b'x'
    assert [e.kind for e in bus.errors] == ['SLVERR', 'SLVERR']


def test_bus_error_range_removed_and_listed() -> None:
    bus, h, _ = _space()
    bus.add_error_range(HOST_BASE + 64, 16)
    bus.add_error_range(HOST_BASE + 256, 4)
    assert bus.error_ranges == [(HOST_BASE + 64, 16), (HOST_BASE + 256, 4)]
    bus.error_ranges.clear()                       # a copy: the bus keeps its ranges
    assert len(bus.error_ranges) == 2
    bus.remove_error_range(HOST_BASE + 64, 16)
    bus.write(HOST_BASE + 64, b'ok')               # healed
    assert h.read(HOST_BASE + 64, 2) == b'ok'
    with pytest.raises(DmaSlaveError):
        bus.read(HOST_BASE + 256, 1)               # the other range still fails
    with pytest.raises(ValueError, match='no error range'):
        bus.remove_error_range(HOST_BASE + 64, 16)
