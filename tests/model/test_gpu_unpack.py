"""The GPU side of devmem receive (models/gpu_unpack.py), against NCCL's unpack layout and the
rules of docs/cluster.md, not against the cluster run: a 16-byte loadMeta entry
`{uint32 src_off; uint32 len; uint64 dst_off}` little-endian (NCCL unpack_defs.h), entries of a
request in stream order (dst_off grows by each length), the gather through the GPU accessor
only (device memory is not CPU-readable: a CPU read would raise), and the bounds."""
from __future__ import annotations

import random
import struct

import pytest

from models.device_memory import DeviceMemory
from models.gpu_unpack import (LOAD_META_BYTES, NET_UNPACK_MAX_SLICE_PAGES, LoadMeta, UnpackSlot,
                               gpu_unpack)
from models.host_memory import PAGE_SIZE, HostMemory


def test_load_meta_layout() -> None:
    m = LoadMeta(src_off=0x1234_5678, len=1448, dst_off=0x1_0000_0002)
    raw = m.pack()
    assert len(raw) == LOAD_META_BYTES == 16
    assert raw == (0x1234_5678).to_bytes(4, "little") + (1448).to_bytes(4, "little") \
        + (0x1_0000_0002).to_bytes(8, "little")
    assert LoadMeta.unpack(raw) == m


def test_gather_scattered_fragments() -> None:
    """Fragments of one stream written by 'the NIC' to random pages of a scattered receive
    dma-buf, in random page order, some crossing a page: the unpack of their entries gives the
    stream, contiguous, in the destination dma-buf; the CPU never reads device memory."""
    rng = random.Random(7)
    dev = DeviceMemory(0x1_0000_0000, 256 * PAGE_SIZE)        # cpu_access RAISE
    host = HostMemory(0x1000_0000, 64 * PAGE_SIZE)
    bounce = dev.export_dmabuf(128 * PAGE_SIZE, chunk_size=4 * PAGE_SIZE, rng=rng)
    dst = dev.export_dmabuf(32 * PAGE_SIZE, chunk_size=2 * PAGE_SIZE, rng=rng)
    stream = rng.randbytes(40_000)
    pages = list(range(0, 128, 2))                          # two pages per fragment at most
    rng.shuffle(pages)
    slot, pos = UnpackSlot(), 0
    while pos < len(stream):
        n = min(rng.choice([1, 7, 1448, 4096, 5000]), len(stream) - pos)
        src = pages.pop() * PAGE_SIZE + rng.randrange(0, 64)
        bounce.gpu_write(src, stream[pos:pos + n])          # where the NIC put this fragment
        slot.add(src, n)
        pos += n
    assert [m.dst_off for m in slot.entries] == [sum(m.len for m in slot.entries[:i])
                                                 for i in range(len(slot.entries))]
    table = host.alloc(len(slot.entries) * LOAD_META_BYTES)
    count = slot.publish(host, table)
    assert count == len(slot.entries)
    # the table in host memory is what NCCL's kernel would read
    first = struct.unpack("<IIQ", host.read(table, 16))
    assert first == (slot.entries[0].src_off, slot.entries[0].len, 0)
    base = 3000
    assert gpu_unpack(host, table, count, bounce, dst, base) == len(stream)
    assert dst.gpu_read(base, len(stream)) == stream
    assert dst.gpu_read(0, base) == bytes(base)                 # nothing written before the base
    assert dev.cpu_reads == 0


def test_slot_bounds() -> None:
    slot = UnpackSlot()
    with pytest.raises(ValueError):
        slot.add(0, 0)
    with pytest.raises(ValueError):
        slot.add(1 << 32, 10)
    for _ in range(NET_UNPACK_MAX_SLICE_PAGES):
        slot.add(0, 1)
    with pytest.raises(OverflowError):
        slot.add(0, 1)
    assert slot.publish(HostMemory(0, PAGE_SIZE * 16), 0) == NET_UNPACK_MAX_SLICE_PAGES
