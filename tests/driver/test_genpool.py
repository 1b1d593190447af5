"""driver/genpool.py: gen_pool first fit over owned chunks."""
from __future__ import annotations

import pytest

from driver.genpool import GenPool, GenPoolError

PAGE = 4096


def pool_with(*chunks: tuple[int, int]) -> GenPool[str]:
    gp: GenPool[str] = GenPool(12)
    for i, (addr, pages) in enumerate(chunks):
        gp.add_owner(addr, addr, pages * PAGE, f'chunk{i}')
    return gp


def test_first_fit_newest_chunk_first_lowest_address_inside() -> None:
    gp = pool_with((0x10000, 2), (0x40000, 3))
    got = [gp.alloc_owner(PAGE) for _ in range(5)]
    assert got == [(0x40000, 'chunk1'), (0x41000, 'chunk1'), (0x42000, 'chunk1'),
                   (0x10000, 'chunk0'), (0x11000, 'chunk0')]
    assert gp.alloc_owner(PAGE) is None
    assert gp.avail() == 0 and gp.size() == 5 * PAGE


def test_free_makes_the_lowest_hole_the_next_fit() -> None:
    gp = pool_with((0x10000, 4))
    addrs = [gp.alloc_owner(PAGE)[0] for _ in range(4)]  # type: ignore[index]
    gp.free(addrs[2], PAGE)
    gp.free(addrs[1], PAGE)
    assert gp.alloc_owner(PAGE) == (addrs[1], 'chunk0')
    assert gp.alloc_owner(PAGE) == (addrs[2], 'chunk0')


def test_multi_unit_runs() -> None:
    gp = pool_with((0x10000, 4))
    a = gp.alloc_owner(PAGE)
    b = gp.alloc_owner(2 * PAGE)
    assert a == (0x10000, 'chunk0') and b == (0x11000, 'chunk0')
    assert gp.alloc_owner(2 * PAGE) is None
    gp.free(0x10000, PAGE)
    assert gp.alloc_owner(2 * PAGE) is None      # two free pages, not adjacent
    assert gp.avail() == 2 * PAGE


def test_misuse_is_refused() -> None:
    gp = pool_with((0x10000, 2))
    with pytest.raises(GenPoolError):
        gp.add_owner(0x11000, 0x11000, PAGE, 'overlap')
    with pytest.raises(GenPoolError):
        gp.add_owner(0x80000, 0x80000, 100, 'not a page multiple')
    with pytest.raises(GenPoolError):
        gp.free(0x10000, PAGE)                   # never allocated
    with pytest.raises(GenPoolError):
        gp.free(0x90000, PAGE)                   # not in the pool
    assert gp.has_addr(0x11000, PAGE) and not gp.has_addr(0x11800, PAGE)
    gp.alloc_owner(PAGE)
    with pytest.raises(GenPoolError):
        gp.destroy()                             # memory still allocated
    gp.free(0x10000, PAGE)
    gp.destroy()
    with pytest.raises(GenPoolError):
        gp.alloc_owner(PAGE)
