"""The io_uring zcrx scenarios (tests/driver/zcrx_scenarios.py) on the golden model."""
from __future__ import annotations

import asyncio

import pytest

from tb.scenario import ModelEnv
from tests.driver.scenarios import Scenario
from tests.driver.zcrx_scenarios import ZCRX_SCENARIOS


@pytest.mark.parametrize('scenario', ZCRX_SCENARIOS, ids=lambda s: s.name)
def test_zcrx_scenario(scenario: Scenario) -> None:
    env = ModelEnv(num_rxq=scenario.num_rxq, seed=7)
    asyncio.run(scenario.func(env))


@pytest.mark.parametrize('scenario', [s for s in ZCRX_SCENARIOS
                                      if s.name in ('zcrx-steered-flow', 'zcrx-refill-starvation',
                                                    'zcrx-unregister-outstanding')],
                         ids=lambda s: s.name)
def test_zcrx_scenario_mpb(scenario: Scenario) -> None:
    """Again with multi-packet payload buffers: several frames' payloads share a niov, each
    piece its own CQE and user reference."""
    env = ModelEnv(num_rxq=scenario.num_rxq, seed=7, rx_mpb=True)
    asyncio.run(scenario.func(env))


def test_refill_entries_the_kernel_skips() -> None:
    """io_zcrx_ring_refill's per-entry rules: a non-zero pad, another area id, an offset past
    the area and a buffer returned twice (or never handed out) are consumed and skipped; a
    good entry recycles its niov into the page pool's cache; an offset inside a page names
    that page. And a full CQ: RECV_ZC stops after the CQEs that fit, ENOSPC when none did."""
    from driver.errors import KernelError
    from driver.zcrx import IORING_ZCRX_AREA_SHIFT, IoUringZcrxRqe
    from models.host_memory import PAGE_SIZE
    from tb.frames import Flow
    from tb.scenario import Rig, TcpPeer
    from tb.scenario.zcrx import ZcrxReader, zcrx_register, zcrx_ring

    async def run() -> None:
        rig = await Rig.create(ModelEnv(seed=3), rx_pending=16)
        ring = zcrx_ring(rig.kernel, entries=1)      # a CQ of 2 entries
        assert ring.cq_entries == 2
        zc = await zcrx_register(ring, rig.netdev, 0, pages=32)
        peer = TcpPeer(Flow())
        sock = await rig.connect(peer, rig.listen())
        reader = ZcrxReader(sock, zc, withhold=True)
        peer.write(bytes(range(256)) * 24)
        await rig.send(peer.next_frames(4 * peer.mss))
        await rig.pump()
        # the CQ fills after two fragments: the call stops there; with nothing posted, ENOSPC
        assert ring.recv_zc(sock, zc.id, 99) == 2 * peer.mss
        try:
            ring.recv_zc(sock, zc.id, 99)
        except KernelError as e:
            assert e.errno == 28
        else:
            raise AssertionError('a full CQ is ENOSPC')
        first_two = ring.reap(99)
        reader.got += b''.join(area_bytes(zc, c) for c in first_two)
        reader.held += [c.zcrx.off for c in first_two if c.zcrx]
        reader.drain()                                # reaps as it goes: the rest
        assert bytes(reader.got) == bytes(peer.stream[:4 * peer.mss]) and reader.calls == 1
        area, ifq = zc.area, zc.ifq
        assert len(reader.held) == 4
        first = reader.held[0]
        idx = (first & ((1 << IORING_ZCRX_AREA_SHIFT) - 1)) // PAGE_SIZE
        refs = list(area.user_refs)
        assert refs[idx] == 1
        bad = [IoUringZcrxRqe(first, pad=1), IoUringZcrxRqe(first | 1 << IORING_ZCRX_AREA_SHIFT),
               IoUringZcrxRqe(area.num_niovs * PAGE_SIZE), IoUringZcrxRqe(first + 100),
               IoUringZcrxRqe(first)]
        for rqe in bad:
            assert ifq.rq.push(rqe)
        pool = rig.netdev.rx_queue(0).pay_pool
        assert pool is not None
        pool.alloc_cache.clear()          # make the next allocation go to the provider
        pool.ring.clear()
        ifq.ring_refill(pool)
        assert ifq.rq.head == ifq.rq.tail == len(bad), 'every entry consumed'
        assert area.user_refs[idx] == 0, 'only the entry inside the page returned it'
        assert [n for i, n in enumerate(area.user_refs) if i != idx] == \
            [n for i, n in enumerate(refs) if i != idx], 'the bad entries changed nothing'
        assert area.niovs[idx] in pool.alloc_cache, 'recycled straight into the alloc cache'
        assert not area.warnings
        try:
            ring.recv_zc(sock, 'x')       # type: ignore[arg-type]
        except KernelError as e:
            assert e.errno == 22
        else:
            raise AssertionError('a zcrx id that is not a number is EINVAL')

    def area_bytes(zc, cqe) -> bytes:
        return zc.area.user_read(cqe.area_offset, cqe.res)

    asyncio.run(run())
