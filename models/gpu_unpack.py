"""The GPU side of devmem receive, as NCCL's network "unpack" does it.

With devmem TCP the payload of each received segment stays where the NIC wrote it: in
pages of the receive dma-buf, in whatever order the page pool handed them out. recvmsg
returns, per fragment, its dma-buf offset and length (`struct dmabuf_cmsg`,
docs.kernel.org/networking/devmem.html). The application must gather those fragments into
its own contiguous buffer, and only the GPU can read them. NCCL does this with a device-side
unpack step for network plugins that receive into device memory (the GPUDirect-TCPX/-TCPXO
plugins, google/nccl-plugin-gpudirecttcpx): the plugin turns every fragment of a receive
request into a 16-byte `loadMeta` entry `{uint32 src_off; uint32 len; uint64 dst_off}`
(NVIDIA/nccl src/device/network/unpack/unpack_defs.h: src_off is the fragment's offset in
the receive dma-buf, the kernel's "bounce buffer"; dst_off its offset in the request's
destination buffer), writes the entries and their count into a per-request slot of a
host-mapped `netUnpackMeta` table (up to NET_UNPACK_MAX_QUEUE_DEPTH = 16 requests of up to
NET_UNPACK_MAX_SLICE_PAGES = 2048 entries each), and the collective kernel's warps copy
`bounce_buf + src_off` to `dst + dst_off` for every entry (src/device/network/unpack/
unpack.h, `ncclNetDeviceUnpackInner`). Only then does the plugin hand the fragments' tokens
back (SO_DEVMEM_DONTNEED).

Here: `LoadMeta` is the entry, `UnpackSlot` the per-request part of the table, kept in
*host* memory as 16-byte records (the CPU writes them; the GPU reads them there, as it reads
NCCL's mapped table), and `gpu_unpack` is the kernel: it reads the entries from host memory
and copies every fragment with the GPU accessor of device memory (`DeviceMemory.gpu`). The
CPU never reads device memory on this path; `DeviceMemory.cpu_reads` stays 0.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from models.device_memory import DmaBuf
from models.host_memory import HostMemory

LOAD_META_BYTES = 16
NET_UNPACK_MAX_QUEUE_DEPTH = 16
"""Receive requests in flight per connection (NCCL's MAX_REQUESTS)."""
NET_UNPACK_MAX_SLICE_SIZE = 4 << 20
"""Bytes of one receive request at most."""
SLICE_PAGE_SIZE = 4096
NET_UNPACK_MAX_SLICE_PAGES = NET_UNPACK_MAX_SLICE_SIZE // SLICE_PAGE_SIZE * 2
"""Entries of one request at most (twice its pages: a fragment may cross a page)."""
_META = struct.Struct("<IIQ")


@dataclass(frozen=True)
class LoadMeta:
    """One fragment to gather: `len` bytes at offset `src_off` of the receive dma-buf go to
    offset `dst_off` of the request's destination."""

    src_off: int
    len: int
    dst_off: int

    def pack(self) -> bytes:
        return _META.pack(self.src_off, self.len, self.dst_off)

    @classmethod
    def unpack(cls, raw: bytes) -> LoadMeta:
        return cls(*_META.unpack(raw))


@dataclass
class UnpackSlot:
    """The entries of one receive request, as the plugin fills them: `add` appends one per
    fragment (in stream order, so dst_off grows by each length), `publish` writes them to
    the table in host memory at `table_addr` and returns their count (what NCCL keeps in
    `netUnpackMeta.cnt`)."""

    entries: list[LoadMeta] = field(default_factory=list)
    bytes: int = 0

    def add(self, src_off: int, length: int) -> LoadMeta:
        if len(self.entries) >= NET_UNPACK_MAX_SLICE_PAGES:
            raise OverflowError(f"a request has at most {NET_UNPACK_MAX_SLICE_PAGES} fragments")
        if not 0 < length or src_off < 0 or src_off >= 1 << 32:
            raise ValueError(f"fragment ({src_off}, {length}) does not fit a loadMeta")
        m = LoadMeta(src_off, length, self.bytes)
        self.entries.append(m)
        self.bytes += length
        return m

    def publish(self, host: HostMemory, table_addr: int) -> int:
        if self.entries:
            host.write(table_addr, b"".join(m.pack() for m in self.entries))
        return len(self.entries)


def gpu_unpack(host: HostMemory, table_addr: int, count: int, bounce: DmaBuf, dst: DmaBuf,
               dst_base: int) -> int:
    """The device-side unpack of one request: `count` entries from the table in host memory;
    each copies `len` bytes from `bounce` (the receive dma-buf) at `src_off` to `dst` at
    `dst_base + dst_off`, through the GPU's accessor only. Returns the bytes copied."""
    raw = host.read(table_addr, count * LOAD_META_BYTES) if count else b""
    copied = 0
    for i in range(count):
        m = LoadMeta.unpack(raw[i * LOAD_META_BYTES:(i + 1) * LOAD_META_BYTES])
        dst.gpu_write(dst_base + m.dst_off, bounce.gpu_read(m.src_off, m.len))
        copied += m.len
    return copied
