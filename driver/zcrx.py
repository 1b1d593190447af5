"""io_uring zero-copy receive (zcrx): the second memory provider (io_uring/zcrx.c).

An application registers an interface queue (`IoZcrxIfq`) on ONE RX queue with an area of
its own host memory (`IoZcrxArea`, cut into PAGE_SIZE `IoZcrxNetIov`s) and a refill ring
(`ZcrxRefillRing`). The queue's payload page pool then takes its buffers from the area
(`IoUringPpZcProvider`, the kernel's `io_uring_pp_zc_ops`): the NIC writes payload straight
into the application's memory, the header goes to the driver's host header pool as with
devmem. `IoUring.recv_zc` (`IORING_OP_RECV_ZC`) turns a socket's received fragments into
32-byte CQEs carrying (area offset, length) with no copy, pinning each buffer for the user;
the user hands buffers back by writing `IoUringZcrxRqe`s into the refill ring, which the
provider consumes when its page pool needs buffers.

The rules, their order and errnos are in docs/driver.md ("io_uring zero-copy receive"), with
the kernel sources they come from. Registration checks, in order: capability EPERM; ring
flags EINVAL; reserved fields, `if_rxq` -1, `rq_entries` 0, flags EINVAL; too many entries
EINVAL (unless `IORING_SETUP_CLAMP`); refill region too small EINVAL; no netdev ENODEV; area
(`io_import_area`: flags, token, reserved EINVAL; length 0 / over 1 GiB EFAULT; overflow
EOVERFLOW; misaligned EINVAL; `dmabuf_fd` on user memory EINVAL; unmapped EFAULT); then the
queue (`net_mp_open_rxq`: ERANGE, split off EINVAL, threshold EINVAL, XDP EEXIST, already a
provider EEXIST, AF_XDP EBUSY) and the page pool's `init` (buffers not PAGE_SIZE:
EOPNOTSUPP). Any failure frees the ifq and its id.
"""
from __future__ import annotations

import errno
import struct
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from driver.devmem import net_mp_close_rxq, net_mp_open_rxq
from driver.errors import KernelError, check_int
from driver.netmem import PAGE_SHIFT, Netmem
from driver.page_pool import (PP_ALLOC_CACHE_REFILL, PagePool, net_mp_netmem_place_in_cache,
                              net_mp_niov_set_page_pool)
from models.host_memory import PAGE_SIZE, HostMemory

if TYPE_CHECKING:
    from driver.kernel import Kernel
    from driver.netdev import Netdev
    from driver.skbuff import SkBuff, SkbFrag
    from driver.socket import Socket

# include/uapi/linux/io_uring.h and io_uring/zcrx.h
IORING_SETUP_CLAMP = 1 << 4
IORING_SETUP_CQE32 = 1 << 11
IORING_SETUP_DEFER_TASKRUN = 1 << 13
IORING_SETUP_SINGLE_ISSUER = 1 << 12
IORING_SETUP_CQE_MIXED = 1 << 18
IORING_CQE_F_MORE = 1 << 1
IORING_OP_RECV_ZC = 58
IORING_REGISTER_ZCRX_IFQ = 32
IORING_ZCRX_AREA_SHIFT = 48
IORING_ZCRX_AREA_MASK = ~((1 << IORING_ZCRX_AREA_SHIFT) - 1) & (2**64 - 1)
IORING_ZCRX_AREA_DMABUF = 1
IO_ZCRX_AREA_SUPPORTED_FLAGS = IORING_ZCRX_AREA_DMABUF
IO_RQ_MAX_ENTRIES = 32768
IO_SKBS_PER_CALL_LIMIT = 20
IORING_MAX_ENTRIES = 32768
SZ_1G = 1 << 30
U32 = 0xFFFF_FFFF
U64 = 2**64 - 1
RQ_RING_HDR = 64
"""`ALIGN(sizeof(struct io_uring), L1_CACHE_BYTES)`: where the rqes start in the region."""
RQE_SIZE = 16
"""`sizeof(struct io_uring_zcrx_rqe)`."""


def zcrx_region_size(rq_entries: int) -> int:
    """Bytes of the region the refill ring of `rq_entries` (a power of two) needs, rounded
    up to pages, as an application sizes `io_uring_region_desc.size`."""
    need = RQ_RING_HDR + RQE_SIZE * rq_entries
    return -(-need // PAGE_SIZE) * PAGE_SIZE


def _roundup_pow_of_two(n: int) -> int:
    return 1 << (n - 1).bit_length()


# ------------------------------------------------------------------------------------------
# the uapi structures
# ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class IoUringZcrxRqe:
    """`struct io_uring_zcrx_rqe`: one buffer handed back (16 bytes)."""

    off: int
    """The CQE's `off`: area token (area id << 48) | byte offset in the area."""
    len: int = 0
    pad: int = 0

    def pack(self) -> bytes:
        return struct.pack('<QII', self.off, self.len, self.pad)


@dataclass(frozen=True)
class IoUringZcrxCqe:
    """`struct io_uring_zcrx_cqe`: the second half of a 32-byte CQE."""

    off: int
    pad: int = 0

    def pack(self) -> bytes:
        return struct.pack('<QQ', self.off, self.pad)


@dataclass(frozen=True)
class IoUringCqe:
    """`struct io_uring_cqe` in its 32-byte form (`IORING_SETUP_CQE32`)."""

    user_data: int
    res: int
    flags: int = 0
    zcrx: IoUringZcrxCqe | None = None

    @property
    def more(self) -> bool:
        return bool(self.flags & IORING_CQE_F_MORE)

    @property
    def area_offset(self) -> int:
        """Byte offset in the area (`off & ~IORING_ZCRX_AREA_MASK`)."""
        assert self.zcrx is not None
        return self.zcrx.off & ~IORING_ZCRX_AREA_MASK & U64

    def pack(self) -> bytes:
        return struct.pack('<QiI', self.user_data, self.res, self.flags) + (
            self.zcrx or IoUringZcrxCqe(0)).pack()


@dataclass
class IoUringZcrxAreaReg:
    """`struct io_uring_zcrx_area_reg`."""

    addr: int
    len: int
    rq_area_token: int = 0
    """Out: `area_id << IORING_ZCRX_AREA_SHIFT`, to OR into refill entries."""
    flags: int = 0
    dmabuf_fd: int = 0
    resv2: tuple[int, int] = (0, 0)


@dataclass
class IoUringRegionDesc:
    """`struct io_uring_region_desc`: the memory that holds the refill ring."""

    size: int


@dataclass
class IoUringZcrxOffsets:
    """`struct io_uring_zcrx_offsets`: where head, tail and the rqes are in the region."""

    head: int = 0
    tail: int = 0
    rqes: int = 0


@dataclass
class IoUringZcrxIfqReg:
    """`struct io_uring_zcrx_ifq_reg`, the argument of `IORING_REGISTER_ZCRX_IFQ`."""

    if_idx: int
    if_rxq: int
    rq_entries: int
    area: IoUringZcrxAreaReg | None
    region: IoUringRegionDesc | None
    flags: int = 0
    zcrx_id: int = 0
    """Out: the ifq's id in this ring."""
    offsets: IoUringZcrxOffsets = field(default_factory=IoUringZcrxOffsets)
    """Out."""
    resv: tuple[int, ...] = (0, 0, 0)


# ------------------------------------------------------------------------------------------
# the refill ring, the area, the ifq
# ------------------------------------------------------------------------------------------

@dataclass(eq=False)
class ZcrxRefillRing:
    """The refill ring in the registered region: the application produces (`tail`), the
    kernel consumes (`head`); `rq_entries` slots of `IoUringZcrxRqe`. Indices are u32 and
    wrap; the slot is `index & (entries - 1)`."""

    entries: int
    head: int = 0
    tail: int = 0
    rqes: list[IoUringZcrxRqe | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.rqes:
            self.rqes = [None] * self.entries

    def space(self) -> int:
        """Slots the application may still fill (`entries - (tail - head)`)."""
        return self.entries - ((self.tail - self.head) & U32)

    def push(self, rqe: IoUringZcrxRqe) -> bool:
        """The application's side: write the entry, then publish it by moving `tail`;
        False (nothing written) when the ring is full."""
        if not self.space():
            return False
        self.rqes[self.tail & (self.entries - 1)] = rqe
        self.tail = (self.tail + 1) & U32
        return True


class IoZcrxNetIov(Netmem):
    """`struct net_iov` of type `NET_IOV_IOURING`: page `index` of a zcrx area. Host memory,
    but the network stack treats it as unreadable (`netmem_is_readable` false, skbs holding it
    are `unreadable`): only the application reads it, through its own mapping of the area."""

    readable = False

    def __init__(self, area: IoZcrxArea, index: int) -> None:
        super().__init__(0, PAGE_SIZE)
        self.area = area
        self.index = index

    def cpu_read(self, offset: int, n: int) -> bytes:
        """The kernel reading payload it should only pass on: refused and counted."""
        self.area.kernel_reads += 1
        raise RuntimeError(f'{self!r}: the kernel read a zcrx buffer (zero-copy broken)')

    def __repr__(self) -> str:
        return f'IoZcrxNetIov(area {self.area.area_id} +0x{self.index << PAGE_SHIFT:x})'


@dataclass(eq=False)
class IoZcrxArea:
    """`struct io_zcrx_area`: the user memory, its niovs, the freelist of niov indices and
    the user reference count of each niov."""

    ifq: IoZcrxIfq
    host: HostMemory
    addr: int
    size: int
    area_id: int = 0
    niovs: list[IoZcrxNetIov] = field(default_factory=list)
    freelist: list[int] = field(default_factory=list)
    user_refs: list[int] = field(default_factory=list)
    is_mapped: bool = False
    freed: bool = False
    copy_fallback_bytes: int = 0
    """Bytes the kernel copied into the area (`io_zcrx_copy_chunk`): host-memory data of a
    socket read with RECV_ZC. 0 for a flow on its zcrx queue."""
    kernel_reads: int = 0
    warnings: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = self.size >> PAGE_SHIFT
        self.niovs = [IoZcrxNetIov(self, i) for i in range(n)]
        self.freelist = list(range(n))
        self.user_refs = [0] * n

    @property
    def num_niovs(self) -> int:
        return len(self.niovs)

    @property
    def free_count(self) -> int:
        return len(self.freelist)

    def map(self) -> None:
        """`io_zcrx_map_area`: each niov gets the bus address of its page (host memory,
        no IOMMU: the address itself)."""
        if self.is_mapped:
            return
        for niov in self.niovs:
            niov.dma_addr = self.addr + (niov.index << PAGE_SHIFT)
        self.is_mapped = True

    def unmap(self) -> None:
        """`io_zcrx_unmap_area`: the NIC may no longer be given these pages."""
        if not self.is_mapped:
            return
        self.is_mapped = False
        for niov in self.niovs:
            niov.dma_addr = 0

    def user_read(self, offset: int, n: int) -> bytes:
        """The application's own mapping of the area (it is its memory)."""
        if offset < 0 or n < 0 or offset + n > self.size:
            raise ValueError(f'area read [{offset}, {offset + n}) outside {self.size} bytes')
        return self.host.read(self.addr + offset, n)

    def return_niov_freelist(self, niov: IoZcrxNetIov) -> None:
        """`io_zcrx_return_niov_freelist`."""
        if niov.index in self.freelist:
            self.warnings.append(f'{niov!r} freed twice')
            return
        self.freelist.append(niov.index)


@dataclass(eq=False)
class IoZcrxIfq:
    """`struct io_zcrx_ifq`: one RX queue given to an io_uring, with its area and its refill
    ring. Installed as the queue's `mp_params` (`memory_provider()` makes the page pool's
    provider)."""

    ctx: IoUring
    id: int
    rq_entries: int
    rq: ZcrxRefillRing
    cached_rq_head: int = 0
    if_rxq: int = -1
    netdev: Netdev | None = None
    area: IoZcrxArea | None = None

    def memory_provider(self) -> IoUringPpZcProvider:
        return IoUringPpZcProvider(self)

    def rqring_entries(self) -> int:
        """`io_zcrx_rqring_entries`: entries the application published and the kernel has
        not consumed."""
        return min((self.rq.tail - self.cached_rq_head) & U32, self.rq_entries)

    @property
    def pages_free(self) -> int:
        """Buffers the queue's page pool can still get from the provider: never-used niovs on
        the freelist and entries waiting in the refill ring (the TCP window counts them)."""
        return (self.area.free_count if self.area else 0) + self.rqring_entries()

    # --- the memory provider's work -------------------------------------------------------

    def ring_refill(self, pool: PagePool) -> None:
        """`io_zcrx_ring_refill`: consume refill entries into the pool's alloc cache."""
        area = self.area
        assert area is not None
        mask = self.rq_entries - 1
        entries = min(self.rqring_entries(), PP_ALLOC_CACHE_REFILL - len(pool.alloc_cache))
        if entries <= 0:
            return
        for _ in range(entries):
            rqe = self.rq.rqes[self.cached_rq_head & mask]
            self.cached_rq_head = (self.cached_rq_head + 1) & U32
            if rqe is None:
                continue
            area_idx = rqe.off >> IORING_ZCRX_AREA_SHIFT
            niov_idx = (rqe.off & ~IORING_ZCRX_AREA_MASK & U64) >> PAGE_SHIFT
            if rqe.pad or area_idx or niov_idx >= area.num_niovs:
                continue
            niov = area.niovs[niov_idx]
            if not area.user_refs[niov_idx]:     # io_zcrx_put_niov_uref
                continue
            area.user_refs[niov_idx] -= 1
            niov.pp_ref_count -= 1                # page_pool_unref_and_test
            if niov.pp_ref_count:
                continue
            if niov.pp is not pool:
                io_zcrx_return_niov(niov)
                continue
            net_mp_netmem_place_in_cache(pool, niov)
        self.rq.head = self.cached_rq_head

    def refill_slow(self, pool: PagePool) -> None:
        """`io_zcrx_refill_slow`: never-used niovs off the freelist into the alloc cache."""
        area = self.area
        assert area is not None
        while area.freelist and len(pool.alloc_cache) < PP_ALLOC_CACHE_REFILL:
            niov = area.niovs[area.freelist.pop()]
            net_mp_niov_set_page_pool(pool, niov)
            net_mp_netmem_place_in_cache(pool, niov)

    def scrub(self) -> None:
        """`io_zcrx_scrub`: take back every buffer the user still holds."""
        area = self.area
        if area is None:
            return
        for niov in area.niovs:
            nr = area.user_refs[niov.index]
            if not nr:
                continue
            area.user_refs[niov.index] = 0
            niov.pp_ref_count -= nr
            if niov.pp_ref_count <= 0:
                niov.pp_ref_count = 0
                io_zcrx_return_niov(niov)

    def alloc_fallback(self) -> IoZcrxNetIov | None:
        """`io_zcrx_alloc_fallback`: a free niov for a copy, owned by no pool."""
        area = self.area
        assert area is not None
        if not area.freelist:
            return None
        niov = area.niovs[area.freelist.pop()]
        niov.pp = None
        niov.pp_ref_count = 1                     # page_pool_fragment_netmem(niov, 1)
        return niov


def io_zcrx_return_niov(niov: IoZcrxNetIov) -> None:
    """`io_zcrx_return_niov`: a niov nobody references any more goes back to its pool (or,
    copy-fallback niovs with no pool, to the freelist)."""
    if niov.pp is None:
        niov.area.return_niov_freelist(niov)
        return
    niov.pp.put_unrefed_netmem(niov, allow_direct=False)


class IoUringPpZcProvider:
    """`io_uring_pp_zc_ops`: the payload page pool's memory provider on a zcrx queue."""

    def __init__(self, ifq: IoZcrxIfq) -> None:
        self.ifq = ifq

    def init(self, pool: PagePool) -> None:
        """`io_pp_zc_init`: order-0 pages only; map the area; the pool holds the ring."""
        if pool.params.buf_size != PAGE_SIZE:
            raise KernelError(errno.EOPNOTSUPP, 'io_uring zcrx page pools hand out PAGE_SIZE '
                                                'buffers only (rx-buf-len 4096)')
        assert self.ifq.area is not None
        self.ifq.area.map()
        self.ifq.ctx.refs += 1

    def alloc_netmems(self, pool: PagePool) -> Netmem | None:
        """`io_pp_zc_alloc_netmems`: the refill ring first, then the freelist."""
        if not pool.alloc_cache:
            self.ifq.ring_refill(pool)
        if not pool.alloc_cache:
            self.ifq.refill_slow(pool)
        if not pool.alloc_cache:
            return None
        return pool.alloc_cache.pop()

    def release_netmem(self, pool: PagePool, netmem: Netmem) -> None:
        """`io_pp_zc_release_netmem`: back onto the area freelist."""
        assert isinstance(netmem, IoZcrxNetIov)
        netmem.area.return_niov_freelist(netmem)

    def destroy(self, pool: PagePool) -> None:
        """`io_pp_zc_destroy`: drop the pool's reference on the ring."""
        self.ifq.ctx.put_ref()


# ------------------------------------------------------------------------------------------
# the io_uring instance
# ------------------------------------------------------------------------------------------

class IoUring:
    """An io_uring instance (`struct io_ring_ctx`) as far as zcrx needs one: setup flags, a
    CQ of 32-byte CQEs, the registered ifqs (`zcrx_ctxs`, ids from 0) and a reference count
    the page pools of its ifqs hold (`ctx->refs`): the ifqs and their areas are freed only
    when the ring is closed and the last pool let go."""

    def __init__(self, kernel: Kernel, entries: int, flags: int, *,
                 cap_net_admin: bool = True) -> None:
        check_int(entries, 'entries')
        if not 1 <= entries <= IORING_MAX_ENTRIES:
            raise KernelError(errno.EINVAL, f'io_uring_setup: {entries} entries (1..{IORING_MAX_ENTRIES})')
        self.kernel = kernel
        self.flags = flags
        self.sq_entries = _roundup_pow_of_two(entries)
        self.cq_entries = 2 * self.sq_entries
        self.cq: deque[IoUringCqe] = deque()
        self.zcrx_ctxs: dict[int, IoZcrxIfq] = {}
        self.cap_net_admin = cap_net_admin
        self.refs = 1
        self.closed = False
        self.freed = False

    # --- registration ---------------------------------------------------------------------

    async def register_zcrx_ifq(self, reg: IoUringZcrxIfqReg) -> int:
        """`io_uring_register(IORING_REGISTER_ZCRX_IFQ)` (`io_register_zcrx_ifq`): returns
        0 and fills `reg.zcrx_id`, `reg.offsets` and `reg.area.rq_area_token`."""
        if self.closed:
            raise KernelError(errno.EBADF, 'io_uring is closed')
        if not self.cap_net_admin:
            raise KernelError(errno.EPERM, 'zcrx needs CAP_NET_ADMIN')
        if not self.flags & IORING_SETUP_DEFER_TASKRUN:
            raise KernelError(errno.EINVAL, 'zcrx needs IORING_SETUP_DEFER_TASKRUN')
        if not self.flags & (IORING_SETUP_CQE32 | IORING_SETUP_CQE_MIXED):
            raise KernelError(errno.EINVAL, 'zcrx needs 32-byte CQEs (IORING_SETUP_CQE32 or '
                                            'IORING_SETUP_CQE_MIXED)')
        if reg.region is None or reg.area is None:
            raise KernelError(errno.EFAULT, 'region_ptr or area_ptr is not readable')
        for name in ('if_idx', 'if_rxq', 'rq_entries', 'flags', 'zcrx_id'):
            check_int(getattr(reg, name), name)
        if any(reg.resv) or reg.zcrx_id:
            raise KernelError(errno.EINVAL, 'reserved fields and zcrx_id must be zero')
        if reg.if_rxq in (-1, U32) or not reg.rq_entries or reg.flags:
            raise KernelError(errno.EINVAL, 'if_rxq -1, rq_entries 0 or unknown flags')
        rq_entries = reg.rq_entries
        if rq_entries > IO_RQ_MAX_ENTRIES:
            if not self.flags & IORING_SETUP_CLAMP:
                raise KernelError(errno.EINVAL, f'rq_entries {rq_entries} > {IO_RQ_MAX_ENTRIES}')
            rq_entries = IO_RQ_MAX_ENTRIES
        rq_entries = _roundup_pow_of_two(rq_entries)
        zid = next(i for i in range(len(self.zcrx_ctxs) + 1) if i not in self.zcrx_ctxs)
        ifq = IoZcrxIfq(self, zid, rq_entries, ZcrxRefillRing(rq_entries))
        self.zcrx_ctxs[zid] = ifq            # the id is taken (xa_alloc) ...
        try:
            if reg.region.size < RQ_RING_HDR + RQE_SIZE * rq_entries:
                raise KernelError(errno.EINVAL, f'region of {reg.region.size} bytes is too small '
                                                f'for {rq_entries} refill entries')
            dev = self.kernel.dev_get_by_index(reg.if_idx)
            if dev is None or not dev.present:
                raise KernelError(errno.ENODEV, f'no device with ifindex {reg.if_idx}')
            ifq.netdev = dev
            ifq.area = io_zcrx_create_area(ifq, dev.hw.host, reg.area)
            await net_mp_open_rxq(dev, reg.if_rxq, ifq)
            ifq.if_rxq = reg.if_rxq
        except KernelError:
            del self.zcrx_ctxs[zid]          # ... and given back with the ifq on failure
            if ifq.area is not None:
                ifq.area.unmap()
                ifq.area.freed = True
            raise
        reg.rq_entries = rq_entries
        reg.zcrx_id = zid
        reg.offsets = IoUringZcrxOffsets(head=0, tail=4, rqes=RQ_RING_HDR)
        reg.area.rq_area_token = ifq.area.area_id << IORING_ZCRX_AREA_SHIFT
        return 0

    def ifq(self, zcrx_id: int) -> IoZcrxIfq | None:
        return self.zcrx_ctxs.get(zcrx_id)

    # --- receive --------------------------------------------------------------------------

    def recv_zc(self, sock: Socket, zcrx_id: int, user_data: int = 0, length: int = 0) -> int:
        """`IORING_OP_RECV_ZC` once (`io_zcrx_recv` -> `tcp_read_sock`): CQEs for up to
        `length` bytes (0: no limit) of the socket's in-order data; returns the bytes posted.
        End of stream posts a final CQE with `res` 0 and returns 0; nothing to read: EAGAIN."""
        if self.closed:
            raise KernelError(errno.EBADF, 'io_uring is closed')
        ifq = self.zcrx_ctxs.get(zcrx_id) if isinstance(zcrx_id, int) else None
        if ifq is None:
            raise KernelError(errno.EINVAL, f'no zcrx ifq {zcrx_id!r} on this ring')
        check_int(length, 'len')
        if not sock.is_tcp or sock.sk is None:
            raise KernelError(errno.EPROTONOSUPPORT, 'RECV_ZC needs a TCP socket')
        sk = sock.sk
        remaining = length or U32
        seq = sk.copied_seq
        total = 0
        err = 0
        nr_skbs = 0
        while remaining and sk.receive_queue and nr_skbs < IO_SKBS_PER_CALL_LIMIT:
            nr_skbs += 1
            skb = sk.receive_queue[0]
            offset = (seq - skb.seq) & U32
            got = io_zcrx_recv_skb(self, ifq, user_data, skb, offset,
                                   min(skb.len - offset, remaining))
            if got < 0:
                err = got
                break
            seq = (seq + got) & U32
            total += got
            remaining -= got
            if offset + got < skb.len:
                break
            sk.receive_queue.popleft()
            skb.free(None)
        sk.copied_seq = seq
        if total:
            return total
        if err:
            raise KernelError(-err, 'recv_zc')
        if sk.reset:
            raise KernelError(sk.err if sk.err in (errno.ECONNREFUSED, errno.ETIMEDOUT)
                              else errno.ECONNRESET, 'connection reset')
        if sk.fin_received:
            self.cq.append(IoUringCqe(user_data, 0, 0))
            return 0
        raise KernelError(errno.EAGAIN, 'no data')

    def queue_cqe(self, ifq: IoZcrxIfq, user_data: int, niov: IoZcrxNetIov, off: int,
                  length: int) -> bool:
        """`io_zcrx_queue_cqe`: False when the CQ is full."""
        if len(self.cq) >= self.cq_entries:
            return False
        area = niov.area
        offset = off + (niov.index << PAGE_SHIFT)
        self.cq.append(IoUringCqe(user_data, length, IORING_CQE_F_MORE,
                                  IoUringZcrxCqe((area.area_id << IORING_ZCRX_AREA_SHIFT) + offset)))
        return True

    def reap(self, user_data: int | None = None) -> list[IoUringCqe]:
        """Consume the CQEs (all, or those of one request), in order."""
        if user_data is None:
            out = list(self.cq)
            self.cq.clear()
            return out
        out = [c for c in self.cq if c.user_data == user_data]
        if out:
            self.cq = deque(c for c in self.cq if c.user_data != user_data)
        return out

    # --- teardown -------------------------------------------------------------------------

    async def close(self) -> None:
        """Close the ring (`io_ring_exit_work`): every ifq's user buffers are taken back and
        its queue closed (`io_shutdown_zcrx_ifqs`); the ifqs and areas are freed when the last
        page pool that uses them is gone (`io_unregister_zcrx_ifqs` at `io_ring_ctx_free`)."""
        if self.closed:
            return
        self.closed = True
        self.cq.clear()
        for ifq in self.zcrx_ctxs.values():
            ifq.scrub()
            if ifq.netdev is not None and ifq.if_rxq != -1:
                await net_mp_close_rxq(ifq.netdev, ifq.if_rxq, ifq)
            ifq.if_rxq = -1
        self.put_ref()

    def put_ref(self) -> None:
        self.refs -= 1
        if self.refs == 0:
            self._unregister_zcrx_ifqs()

    def _unregister_zcrx_ifqs(self) -> None:
        """`io_unregister_zcrx_ifqs`: free every ifq and its area; every niov must be back."""
        for ifq in self.zcrx_ctxs.values():
            area = ifq.area
            if area is None:
                continue
            area.unmap()
            if area.free_count != area.num_niovs:
                area.warnings.append(f'area freed with {area.num_niovs - area.free_count} '
                                     f'of {area.num_niovs} niovs not returned')
            area.freed = True
        self.zcrx_ctxs.clear()
        self.freed = True


def io_zcrx_create_area(ifq: IoZcrxIfq, host: HostMemory, reg: IoUringZcrxAreaReg) -> IoZcrxArea:
    """`io_zcrx_create_area` -> `io_import_area` -> `io_import_umem`: the checks of the area
    registration, then the niovs (all on the freelist)."""
    for name in ('addr', 'len', 'flags', 'dmabuf_fd', 'rq_area_token'):
        check_int(getattr(reg, name), f'area {name}')
    if reg.flags & ~IO_ZCRX_AREA_SUPPORTED_FLAGS:
        raise KernelError(errno.EINVAL, f'area flags 0x{reg.flags:x} unknown')
    if reg.rq_area_token:
        raise KernelError(errno.EINVAL, 'rq_area_token is an output: must be zero')
    if any(reg.resv2):
        raise KernelError(errno.EINVAL, 'area reserved fields must be zero')
    # io_validate_user_buf_range
    if not reg.len or reg.len > SZ_1G:
        raise KernelError(errno.EFAULT, f'area length {reg.len}: 1 byte .. 1 GiB')
    if reg.addr < 0 or reg.addr + -(-reg.len // PAGE_SIZE) * PAGE_SIZE > U64:
        raise KernelError(errno.EOVERFLOW, 'area address + length overflows')
    if reg.addr % PAGE_SIZE or reg.len % PAGE_SIZE:
        raise KernelError(errno.EINVAL, f'area 0x{reg.addr:x}+{reg.len} is not page-aligned')
    if reg.flags & IORING_ZCRX_AREA_DMABUF:
        raise KernelError(errno.EOPNOTSUPP, 'dma-buf zcrx areas are not supported here '
                                            '(use devmem bind-rx for device memory)')
    if reg.dmabuf_fd:
        raise KernelError(errno.EINVAL, 'dmabuf_fd set for a user-memory area')
    if not reg.addr:
        raise KernelError(errno.EFAULT, 'area address 0')
    if not host.contains(reg.addr, reg.len):        # io_pin_pages: memory not mapped
        raise KernelError(errno.EFAULT, f'area 0x{reg.addr:x}+{reg.len} is not mapped memory')
    return IoZcrxArea(ifq, host, reg.addr, reg.len)


# ------------------------------------------------------------------------------------------
# RECV_ZC: skbs to CQEs
# ------------------------------------------------------------------------------------------

def io_zcrx_recv_skb(ring: IoUring, ifq: IoZcrxIfq, user_data: int, skb: SkBuff,
                     offset: int, length: int) -> int:
    """`io_zcrx_recv_skb`: CQEs for `length` bytes of `skb` from `offset`; bytes posted, or a
    negative errno when none were."""
    start_off = offset
    ret = 0
    headlen = skb.headlen
    if offset < headlen:
        to_copy = min(headlen - offset, length)
        copied = io_zcrx_copy_chunk(ring, ifq, user_data,
                                    skb.head[skb.data + offset:skb.data + offset + to_copy])
        if copied < 0:
            return copied
        offset += copied
        length -= copied
        if not length or offset != headlen:
            return offset - start_off
    start = headlen
    for frag in skb.frags:
        end = start + frag.size
        if offset < end:
            copy = min(end - offset, length)
            ret = io_zcrx_recv_frag(ring, ifq, user_data, frag, offset - start, copy)
            if ret < 0:
                break
            offset += ret
            length -= ret
            if length == 0 or ret != copy:
                break
        start = end
    if offset == start_off:
        return ret
    return offset - start_off


def io_zcrx_recv_frag(ring: IoUring, ifq: IoZcrxIfq, user_data: int, frag: SkbFrag,
                      off: int, length: int) -> int:
    """`io_zcrx_recv_frag`: a niov of this ifq: a CQE and a user reference, no copy; a host
    page: copied into the area; anything else (a dma-buf net_iov, another ifq's niov):
    EFAULT."""
    nm = frag.netmem
    if nm.readable:
        return io_zcrx_copy_chunk(ring, ifq, user_data, nm.cpu_read(frag.offset + off, length))
    if not isinstance(nm, IoZcrxNetIov) or nm.pp is None \
            or not isinstance(nm.pp.mp, IoUringPpZcProvider) or nm.pp.mp.ifq is not ifq:
        return -errno.EFAULT
    if not ring.queue_cqe(ifq, user_data, nm, frag.offset + off, length):
        return -errno.ENOSPC
    nm.pp.ref_netmem(nm)                 # page_pool_ref_netmem: not recycled under the user
    nm.area.user_refs[nm.index] += 1     # io_zcrx_get_niov_uref
    return length


def io_zcrx_copy_chunk(ring: IoUring, ifq: IoZcrxIfq, user_data: int, data: bytes) -> int:
    """`io_zcrx_copy_chunk`: host-memory bytes copied into free niovs of the area, one CQE
    per page; bytes copied, or -ENOMEM / -ENOSPC when none were."""
    area = ifq.area
    assert area is not None
    copied = 0
    while copied < len(data):
        niov = ifq.alloc_fallback()
        if niov is None:
            return copied or -errno.ENOMEM
        n = min(PAGE_SIZE, len(data) - copied)
        area.host.write(area.addr + (niov.index << PAGE_SHIFT), data[copied:copied + n])
        if not ring.queue_cqe(ifq, user_data, niov, 0, n):
            niov.pp_ref_count = 0
            io_zcrx_return_niov(niov)
            return copied or -errno.ENOSPC
        area.user_refs[niov.index] += 1
        area.copy_fallback_bytes += n
        copied += n
    return copied
