"""Page pools (net/core/page_pool.c) and their memory providers.

Each RX queue owns a payload page pool and a header page pool. A page pool hands buffers to
the driver's refill path and takes them back when the last reference drops, recycling them
instead of returning them to where they came from:

- `alloc_netmem` (`page_pool_alloc_netmems`): the lockless alloc cache first (`alloc_fast`);
  when it is empty, a refill of up to `PP_ALLOC_CACHE_REFILL` from the recycle ring
  (`alloc_refill`, or `alloc_empty` when the ring was empty too); then the slow path asks the
  memory provider for a new buffer (`alloc_slow`). None when the provider is dry.
- `put_netmem` (`page_pool_put_netmem`): drops one reference; at zero the buffer is recycled:
  into the alloc cache when the caller runs in the pool's NAPI context (`allow_direct`,
  `recycle_cached`), else into the recycle ring (`recycle_ring`, the `ptr_ring`); when that is
  full the buffer goes back to the provider (`recycle_ring_full`, `release`).
- `destroy` (`page_pool_destroy`): cached and ringed buffers go back to the provider at once;
  buffers still out (on a socket, held by user tokens) come back later, and only when the last
  one has returned is the pool released (`mp_ops->destroy`, which for a dma-buf binding drops
  the pool's reference on the binding).

`inflight` is Linux's `page_pool_inflight`: buffers taken from the provider and not returned
(cached ones included). Memory providers (`struct memory_provider_ops`): `HostPageProvider`
(the page allocator, what a pool without a provider uses) here, and the dma-buf provider in
`driver.devmem`.
"""
from __future__ import annotations

from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Protocol

from driver.netmem import Netmem, Page
from models.host_memory import PAGE_SIZE, HostMemory, OutOfMemoryError

PP_ALLOC_CACHE_SIZE = 128
PP_ALLOC_CACHE_REFILL = 64


class MemoryProvider(Protocol):
    """`struct memory_provider_ops`: where a page pool's buffers come from."""

    def init(self, pool: PagePool) -> None:
        """Called when the pool is created; may raise `KernelError`."""
        ...

    def alloc_netmems(self, pool: PagePool) -> Netmem | None:
        """A new buffer, or None when the provider has nothing left."""
        ...

    def release_netmem(self, pool: PagePool, netmem: Netmem) -> None:
        """Take a buffer back for good."""
        ...

    def destroy(self, pool: PagePool) -> None:
        """The pool is gone (its last buffer came back)."""
        ...


class HostPageAllocator:
    """Host RAM buffers of `buf_size` bytes: the page allocator's part in this model.

    `HostMemory.alloc` never frees, so freed buffers are kept on a free list and handed out
    again. Buffers smaller than a page (header buffers) are cut from whole pages.
    """

    def __init__(self, host: HostMemory, buf_size: int = PAGE_SIZE) -> None:
        if buf_size <= 0 or (buf_size < PAGE_SIZE and PAGE_SIZE % buf_size) \
                or (buf_size > PAGE_SIZE and buf_size % PAGE_SIZE):
            raise ValueError(f'buffer size {buf_size} must divide or be a multiple of a page')
        self.host = host
        self.buf_size = buf_size
        self._free: list[Page] = []
        self.total = 0

    def alloc(self) -> Page | None:
        if not self._free:
            size = max(self.buf_size, PAGE_SIZE)
            try:
                base = self.host.alloc(size, PAGE_SIZE)
            except OutOfMemoryError:
                return None
            self._free.extend(Page(self.host, a, self.buf_size)
                              for a in reversed(range(base, base + size, self.buf_size)))
            self.total += size // self.buf_size
        return self._free.pop()

    def free(self, page: Page) -> None:
        self._free.append(page)

    @property
    def in_use(self) -> int:
        return self.total - len(self._free)


class HostPageProvider:
    """Buffers from host memory: a pool with no memory provider installed."""

    def __init__(self, allocator: HostPageAllocator) -> None:
        self.allocator = allocator

    def init(self, pool: PagePool) -> None:
        pass

    def alloc_netmems(self, pool: PagePool) -> Netmem | None:
        return self.allocator.alloc()

    def release_netmem(self, pool: PagePool, netmem: Netmem) -> None:
        assert isinstance(netmem, Page)
        self.allocator.free(netmem)

    def destroy(self, pool: PagePool) -> None:
        pass


@dataclass
class PagePoolParams:
    """`struct page_pool_params`, the fields that matter here."""

    pool_size: int = 1024
    """Size of the recycle ring (`ptr_ring`); drivers pass their ring size."""
    queue_idx: int = 0
    dev_name: str = ''
    buf_size: int = PAGE_SIZE
    napi: object | None = None
    """The NAPI instance that may recycle directly into the alloc cache (`pp->p.napi`)."""


@dataclass
class PagePoolStats:
    """`struct page_pool_stats` (alloc_stats + recycle_stats) plus returns to the provider."""

    alloc_fast: int = 0
    alloc_slow: int = 0
    alloc_empty: int = 0
    alloc_refill: int = 0
    recycle_cached: int = 0
    recycle_cache_full: int = 0
    recycle_ring: int = 0
    recycle_ring_full: int = 0
    release: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class PagePoolError(RuntimeError):
    """Misuse: a put of a buffer with no reference, an alloc from a destroyed pool."""


@dataclass(eq=False)
class PagePool:
    """`struct page_pool`."""

    params: PagePoolParams
    mp: MemoryProvider
    stats: PagePoolStats = field(default_factory=PagePoolStats)
    alloc_cache: list[Netmem] = field(default_factory=list)
    ring: deque[Netmem] = field(default_factory=deque)
    hold_cnt: int = 0
    release_cnt: int = 0
    destroyed: bool = False
    released: bool = False

    def __post_init__(self) -> None:
        self.mp.init(self)

    # --- allocation -------------------------------------------------------------------------

    def alloc_netmem(self) -> Netmem | None:
        """`page_pool_alloc_netmems`: a buffer with one reference (the caller's), or None."""
        if self.destroyed:
            raise PagePoolError('alloc from a destroyed page pool')
        if not self.alloc_cache:
            self._refill_alloc_cache()
        if self.alloc_cache:
            netmem = self.alloc_cache.pop()
            self.stats.alloc_fast += 1
        else:
            got = self.mp.alloc_netmems(self)
            if got is None:
                return None
            netmem = got
            if netmem.pp is not self:
                # A provider that placed buffers itself (`net_mp_niov_set_page_pool`, the
                # io_uring refill ring) has counted them already.
                net_mp_niov_set_page_pool(self, netmem)
            self.stats.alloc_slow += 1
        netmem.pp_ref_count = 1
        return netmem

    def _refill_alloc_cache(self) -> None:
        if not self.ring:
            self.stats.alloc_empty += 1
            return
        while self.ring and len(self.alloc_cache) < PP_ALLOC_CACHE_REFILL:
            self.alloc_cache.append(self.ring.popleft())
        self.stats.alloc_refill += 1

    def ref_netmem(self, netmem: Netmem) -> None:
        """`page_pool_ref_netmem` (include/net/page_pool/helpers.h): one more reference on a
        buffer that already holds one, for another fragment of it: a multi-packet payload
        buffer gives each frame's piece its own reference, so the buffer is recycled only when
        the ring and every skb fragment and devmem token on it have let go."""
        if netmem.pp is not self:
            raise PagePoolError(f'{netmem!r} does not belong to this page pool')
        if netmem.pp_ref_count <= 0:
            raise PagePoolError(f'{netmem!r}: ref of a buffer nobody holds')
        netmem.pp_ref_count += 1

    # --- release ----------------------------------------------------------------------------

    def put_netmem(self, netmem: Netmem, allow_direct: bool = False) -> None:
        """`page_pool_put_netmem`: drop one reference; recycle at zero."""
        if netmem.pp is not self:
            raise PagePoolError(f'{netmem!r} does not belong to this page pool')
        if netmem.pp_ref_count <= 0:
            raise PagePoolError(f'{netmem!r}: put without a reference')
        netmem.pp_ref_count -= 1
        if netmem.pp_ref_count:
            return
        self.put_unrefed_netmem(netmem, allow_direct)

    def put_unrefed_netmem(self, netmem: Netmem, allow_direct: bool = False) -> None:
        """`page_pool_put_unrefed_netmem`: recycle a buffer whose last reference the caller
        has dropped itself (a memory provider taking back a user's buffer)."""
        if self.destroyed:
            self._return_netmem(netmem)
            self._maybe_release()
            return
        if allow_direct:
            if len(self.alloc_cache) < PP_ALLOC_CACHE_SIZE:
                self.alloc_cache.append(netmem)
                self.stats.recycle_cached += 1
                return
            self.stats.recycle_cache_full += 1
        if len(self.ring) < self.params.pool_size:
            self.ring.append(netmem)
            self.stats.recycle_ring += 1
            return
        self.stats.recycle_ring_full += 1
        self._return_netmem(netmem)

    def _return_netmem(self, netmem: Netmem) -> None:
        """`page_pool_return_netmem`: back to the provider for good."""
        self.mp.release_netmem(self, netmem)
        netmem.pp = None
        netmem.pp_ref_count = 0
        self.release_cnt += 1
        self.stats.release += 1

    # --- lifetime ---------------------------------------------------------------------------

    @property
    def inflight(self) -> int:
        """`page_pool_inflight`: buffers taken from the provider and not yet returned."""
        return self.hold_cnt - self.release_cnt

    @property
    def cached(self) -> int:
        """Buffers sitting in the alloc cache and the recycle ring."""
        return len(self.alloc_cache) + len(self.ring)

    @property
    def in_use(self) -> int:
        """Buffers out of the pool: posted on a ring, in an skb or held by a user token."""
        return self.inflight - self.cached

    def destroy(self) -> None:
        """`page_pool_destroy`: return what is cached; release when nothing is out."""
        if self.destroyed:
            return
        self.destroyed = True
        while self.alloc_cache:
            self._return_netmem(self.alloc_cache.pop())
        while self.ring:
            self._return_netmem(self.ring.popleft())
        self._maybe_release()

    def _maybe_release(self) -> None:
        if self.destroyed and not self.released and self.inflight == 0:
            self.released = True
            self.mp.destroy(self)


def net_mp_niov_set_page_pool(pool: PagePool, netmem: Netmem) -> None:
    """`net_mp_niov_set_page_pool` (include/net/page_pool/memory_provider.h): a provider's
    buffer now belongs to `pool`, which counts it as held until it is released."""
    netmem.pp = pool
    pool.hold_cnt += 1


def net_mp_netmem_place_in_cache(pool: PagePool, netmem: Netmem) -> None:
    """`net_mp_netmem_place_in_cache`: a provider hands `pool` a buffer straight into its
    alloc cache (with no reference: `alloc_netmem` gives it the caller's)."""
    netmem.pp_ref_count = 0
    pool.alloc_cache.append(netmem)
