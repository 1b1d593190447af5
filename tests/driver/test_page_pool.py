"""driver/page_pool.py: alloc cache, recycle ring, provider, deferred destroy, counters."""
from __future__ import annotations

import pytest

from driver.netmem import Netmem, Page
from driver.page_pool import (PP_ALLOC_CACHE_SIZE, HostPageAllocator, HostPageProvider, PagePool,
                              PagePoolError, PagePoolParams)
from models.host_memory import HostMemory


class CountingProvider:
    """A provider with `limit` buffers that records the calls."""

    def __init__(self, host: HostMemory, limit: int) -> None:
        self.alloc = HostPageAllocator(host)
        self.limit = limit
        self.out = 0
        self.inits = self.destroys = 0

    def init(self, pool: PagePool) -> None:
        self.inits += 1

    def alloc_netmems(self, pool: PagePool) -> Netmem | None:
        if self.out == self.limit:
            return None
        self.out += 1
        return self.alloc.alloc()

    def release_netmem(self, pool: PagePool, netmem: Netmem) -> None:
        assert isinstance(netmem, Page)
        self.out -= 1
        self.alloc.free(netmem)

    def destroy(self, pool: PagePool) -> None:
        self.destroys += 1


@pytest.fixture
def host() -> HostMemory:
    return HostMemory(0x1_0000_0000, 8 << 20)


def test_slow_then_fast_paths(host: HostMemory) -> None:
    prov = CountingProvider(host, 4)
    pool = PagePool(PagePoolParams(pool_size=8), prov)
    assert prov.inits == 1
    bufs = [pool.alloc_netmem() for _ in range(4)]
    assert all(b is not None and b.pp is pool and b.pp_ref_count == 1 for b in bufs)
    assert pool.alloc_netmem() is None, 'provider dry, nothing cached'
    assert pool.stats.alloc_slow == 4 and pool.inflight == 4 and pool.in_use == 4
    pool.put_netmem(bufs[0], allow_direct=True)      # type: ignore[arg-type]  # NAPI: cache
    pool.put_netmem(bufs[1])                         # type: ignore[arg-type]  # elsewhere: ring
    assert pool.stats.recycle_cached == 1 and pool.stats.recycle_ring == 1
    assert pool.in_use == 2 and pool.cached == 2 and pool.inflight == 4
    assert pool.alloc_netmem() is bufs[0]            # cache first
    assert pool.alloc_netmem() is bufs[1]            # then a refill from the ring
    assert pool.stats.alloc_fast == 2 and pool.stats.alloc_refill == 1


def test_extra_references_delay_recycling(host: HostMemory) -> None:
    pool = PagePool(PagePoolParams(), CountingProvider(host, 1))
    b = pool.alloc_netmem()
    assert b is not None
    b.pp_ref_count += 1                              # a user token
    pool.put_netmem(b)
    assert pool.in_use == 1 and pool.cached == 0
    pool.put_netmem(b)
    assert pool.in_use == 0 and pool.cached == 1
    with pytest.raises(PagePoolError):
        pool.put_netmem(b)                           # no reference left


def test_full_ring_releases_to_the_provider(host: HostMemory) -> None:
    prov = CountingProvider(host, 10)
    pool = PagePool(PagePoolParams(pool_size=2), prov)
    bufs = [pool.alloc_netmem() for _ in range(3)]
    for b in bufs:
        pool.put_netmem(b)                           # type: ignore[arg-type]
    assert pool.stats.recycle_ring == 2 and pool.stats.recycle_ring_full == 1
    assert pool.stats.release == 1 and prov.out == 2 and pool.inflight == 2


def test_cache_full_goes_to_the_ring(host: HostMemory) -> None:
    n = PP_ALLOC_CACHE_SIZE + 1
    pool = PagePool(PagePoolParams(pool_size=4), CountingProvider(host, n))
    bufs = [pool.alloc_netmem() for _ in range(n)]
    for b in bufs:
        pool.put_netmem(b, allow_direct=True)        # type: ignore[arg-type]
    assert pool.stats.recycle_cached == PP_ALLOC_CACHE_SIZE
    assert pool.stats.recycle_cache_full == 1 and pool.stats.recycle_ring == 1


def test_destroy_waits_for_the_last_buffer(host: HostMemory) -> None:
    prov = CountingProvider(host, 4)
    pool = PagePool(PagePoolParams(), prov)
    bufs = [pool.alloc_netmem() for _ in range(3)]
    pool.put_netmem(bufs[0])                         # type: ignore[arg-type]
    pool.destroy()
    assert prov.out == 2 and prov.destroys == 0 and not pool.released
    with pytest.raises(PagePoolError):
        pool.alloc_netmem()
    pool.put_netmem(bufs[1])                         # type: ignore[arg-type]
    assert prov.out == 1 and prov.destroys == 0
    pool.put_netmem(bufs[2])                         # type: ignore[arg-type]
    assert prov.out == 0 and prov.destroys == 1 and pool.released and pool.inflight == 0


def test_host_allocator_reuses_and_cuts_pages(host: HostMemory) -> None:
    pages = HostPageAllocator(host)
    a = pages.alloc()
    assert a is not None and a.dma_addr % 4096 == 0
    pages.free(a)
    assert pages.alloc() is a
    hdrs = HostPageAllocator(host, 256)
    got = [hdrs.alloc() for _ in range(17)]
    assert hdrs.total == 32 and len({g.dma_addr for g in got}) == 17   # type: ignore[union-attr]
    assert all(g.size == 256 and g.dma_addr % 256 == 0 for g in got)   # type: ignore[union-attr]
    pool = PagePool(PagePoolParams(buf_size=256), HostPageProvider(hdrs))
    b = pool.alloc_netmem()
    assert b is not None and b.readable and b.cpu_read(0, 4) == bytes(4)


def test_ref_netmem_fragments_share_a_buffer(host: HostMemory) -> None:
    """page_pool_ref_netmem: each fragment of a shared buffer takes a reference; the buffer
    is recycled when the holder of the first one and every fragment have put theirs."""
    pool = PagePool(PagePoolParams(), CountingProvider(host, 1))
    b = pool.alloc_netmem()
    assert b is not None
    for _ in range(3):
        pool.ref_netmem(b)                           # three fragments
    assert b.pp_ref_count == 4
    for _ in range(3):
        pool.put_netmem(b)
    assert pool.cached == 0 and b.pp_ref_count == 1, 'the ring still holds it'
    pool.put_netmem(b)
    assert pool.cached == 1
    with pytest.raises(PagePoolError, match='nobody holds'):
        pool.ref_netmem(b)
    other = PagePool(PagePoolParams(), CountingProvider(host, 1)).alloc_netmem()
    assert other is not None
    with pytest.raises(PagePoolError, match='does not belong'):
        pool.ref_netmem(other)
