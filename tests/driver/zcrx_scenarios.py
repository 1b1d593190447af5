"""io_uring zcrx scenarios (docs/driver.md, "io_uring zero-copy receive"), written once for
every backend like tests/driver/scenarios.py: run on the golden model by
tests/driver/test_zcrx.py and on the RTL by tests/driver/test_zcrx_rtl.py.

Every scenario ends with `finish`: the CPU never read device memory, the kernel never read a
zcrx buffer, and no area has warnings (a niov freed twice, an area freed with niovs out).
Payload checks compare what the application read from its area at the CQE offsets with
what the peer sent.
"""
from __future__ import annotations

import errno
from dataclasses import replace
from functools import partial
from typing import Any, Callable, Coroutine

from driver import ethtool
from driver.socket import MSG_SOCK_DEVMEM
from driver.zcrx import (IORING_SETUP_CLAMP, IORING_SETUP_CQE32, IORING_SETUP_DEFER_TASKRUN,
                         IORING_ZCRX_AREA_DMABUF, IO_RQ_MAX_ENTRIES, IoUring, IoUringRegionDesc)
from models.host_memory import PAGE_SIZE
from tb.frames import Flow
from tb.scenario import (RSS_KEY, DriverEnv, Reader, Rig, TcpPeer, aexpect_errno, expect_errno,
                         make_data, require_steering)
from tb.scenario.zcrx import ZcrxReader, zcrx_reg, zcrx_register, zcrx_ring
from tests.driver.scenarios import Scenario


def finish_zcrx(rig: Rig, *rings: IoUring) -> None:
    assert rig.env.dev.cpu_reads == 0, 'the CPU read device memory'
    for ring in rings:
        for ifq in list(ring.zcrx_ctxs.values()):
            assert ifq.area is not None
            assert ifq.area.kernel_reads == 0, 'the kernel read a zcrx buffer'
            assert not ifq.area.warnings, ifq.area.warnings


def area_accounted(zc: Any, nd: Any) -> tuple[int, int]:
    """(niovs found, niovs in the area): every niov is on the freelist, posted on the
    queue's ring, cached in its page pool, or held by the user (CQE not handed back)."""
    area = zc.area
    q = nd.rx_queue(zc.ifq.if_rxq)
    posted = [nm for nm in q.pay_bufs.values() if getattr(nm, 'area', None) is area]
    cached = [nm for nm in list(q.pay_pool.alloc_cache) + list(q.pay_pool.ring)
              if getattr(nm, 'area', None) is area]
    held = [i for i, n in enumerate(area.user_refs) if n]
    ids = set(area.freelist) | {n.index for n in posted + cached} | set(held)
    return len(ids), area.num_niovs


async def _steered_rig(env: DriverEnv, nq: int, zq: int, mtu: int = 1500,
                       rx_pending: int = 32) -> Rig:
    """split on, threshold 0, RSS over queues 0..zq-1, n-tuple rules cleared."""
    rig = await Rig.create(env, rx_pending=rx_pending, channels=nq, num_rxq=nq, mtu=mtu)
    nd = rig.netdev
    await require_steering(env, nd)
    await ethtool.set_rx_flow_hash(nd.hw, {'ip4', 'tcp4', 'udp4', 'ip6', 'tcp6', 'udp6'})
    await ethtool.set_rxfh(nd.hw, key=RSS_KEY, num_queues=nq)
    await ethtool.set_rxfh_equal(nd.hw, zq, nq)
    rules = ethtool.NtupleRules(nd.hw, nd.real_num_rx_queues)
    await rules.clear()
    nd.channel_checks.append(rules.check_channels)
    rig.rules = rules
    return rig


async def zcrx_steered_flow(env: DriverEnv, *, size: int = 128 << 10, ipv6: bool = False,
                            mtu: int = 1500, data: str = 'pattern') -> None:
    """The administrator's steps with an ifq instead of a dma-buf: an n-tuple rule steers the
    flow to the zcrx queue (the last), RSS spreads others over the rest. The zcrx stream is
    exact, read in place from the area (zero kernel copies), every buffer is accounted for;
    ordinary flows arrive as bytes; the queue is taken for other providers."""
    nq = 4
    zq = nq - 1
    rig = await _steered_rig(env, nq, zq, mtu)
    nd = rig.netdev
    flow = Flow(ipv6=ipv6, sport=40000, dport=5201)
    peer = TcpPeer(flow, mtu=mtu)
    await rig.rules.add(ethtool.NtupleSpec(
        'tcp6' if ipv6 else 'tcp4', zq, src_ip=peer.src, dst_ip=peer.dst,
        src_port=flow.sport, dst_port=flow.dport))
    ring = zcrx_ring(rig.kernel)
    zc = await zcrx_register(ring, nd, zq, pages=128)
    assert zc.id == 0 and zc.reg.area is not None and zc.reg.area.rq_area_token == 0
    info = rig.nl.queue_get(nd.ifindex, zq)
    assert info.io_uring and info.dmabuf is None
    # the queue has a provider now: another ifq, a dma-buf and ethtool changes are refused
    await aexpect_errno(errno.EEXIST, zcrx_register(ring, nd, zq, pages=4))
    await aexpect_errno(errno.EEXIST, rig.bind([zq], pages=4))
    await aexpect_errno(errno.EINVAL, nd.set_ringparam(tcp_data_split=False))
    await aexpect_errno(errno.EINVAL, nd.set_channels(zq))
    assert len(ring.zcrx_ctxs) == 1, 'failed registrations gave their ids back'
    sock = await rig.connect(peer, rig.listen(5201, ipv6=ipv6))
    reader = ZcrxReader(sock, zc)
    others = [TcpPeer(Flow(ipv6=ipv6, sport=41000 + 7 * i, dport=6000), mtu=mtu) for i in range(4)]
    olisten = rig.listen(6000, ipv6=ipv6)
    osocks = [await rig.connect(p, olisten) for p in others]
    # the first ordinary flow is read with RECV_ZC too: a steering error, which the kernel
    # answers by copying the host-memory payload into the area (counted)
    oreaders: list[Reader | ZcrxReader] = [ZcrxReader(osocks[0], zc)] + [Reader(s) for s in osocks[1:]]
    want = make_data(data, size)
    peer.write(want)
    peer.shutdown()
    for i, p in enumerate(others):
        p.write(make_data('random', 8 << 10, seed=20 + i))
        p.shutdown()
    await rig.transfer(peer, reader)
    assert zc.area.copy_fallback_bytes == 0, 'zero copy'
    for p, r in zip(others, oreaders):
        await rig.transfer(p, r)
        assert bytes(r.got) == bytes(p.stream) and r.eof
        assert isinstance(r, ZcrxReader) or r.ordinary_bytes == len(p.stream)
    assert zc.area.copy_fallback_bytes == len(others[0].stream), 'the off-queue flow was copied'
    assert bytes(reader.got) == want and reader.eof and reader.zc_bytes == size
    assert not reader.held, 'every buffer was handed back'
    frames_on = [nd.qstats(q).packets for q in range(nq)]
    assert frames_on[zq] == peer.frames_sent + 2, f'only the steered flow on the zcrx queue: {frames_on}'
    found, total = area_accounted(zc, nd)
    assert found == total, f'{total - found} niovs of the area unaccounted for'
    await rig.pump()
    sock.close()
    await ring.close()
    assert ring.freed and zc.area.freed and zc.area.free_count == zc.area.num_niovs
    assert not rig.nl.queue_get(nd.ifindex, zq).io_uring
    # the queue is free again: devmem may bind it
    await rig.bind([zq], pages=8)
    finish_zcrx(rig, ring)
    await rig.finish()


async def zcrx_register_errors(env: DriverEnv) -> None:
    """Every registration error of docs/driver.md, in the kernel's order; a failure leaves
    no ifq behind (ids reused) and the queue without a provider."""
    rig = await Rig.create(env, rx_pending=16, split=False)
    nd, k = rig.netdev, rig.kernel
    ring = zcrx_ring(k)

    def reg(**kw: Any) -> Any:
        area_kw = {n: kw.pop(n) for n in list(kw) if n.startswith('area_')}
        r = zcrx_reg(nd, 0, 4)
        assert r.area is not None
        if area_kw:
            r.area = replace(r.area, **{n.removeprefix('area_'): v for n, v in area_kw.items()})
        return replace(r, **kw)

    async def fails(err: int, r: Any, on: IoUring = ring) -> None:
        await aexpect_errno(err, on.register_zcrx_ifq(r))
        assert not on.zcrx_ctxs and nd.rx_queue(0).mp_params is None

    await fails(errno.EPERM, reg(), k.io_uring_setup(8, IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_CQE32,
                                                     cap_net_admin=False))
    await fails(errno.EINVAL, reg(), k.io_uring_setup(8, IORING_SETUP_CQE32))
    await fails(errno.EINVAL, reg(), k.io_uring_setup(8, IORING_SETUP_DEFER_TASKRUN))
    await fails(errno.EFAULT, reg(region=None))
    await fails(errno.EFAULT, reg(area=None))
    await fails(errno.EINVAL, reg(if_rxq='3'))
    await fails(errno.EINVAL, reg(resv=(0, 1, 0)))
    await fails(errno.EINVAL, reg(zcrx_id=3))
    await fails(errno.EINVAL, reg(if_rxq=-1))
    await fails(errno.EINVAL, reg(rq_entries=0))
    await fails(errno.EINVAL, reg(flags=1))
    await fails(errno.EINVAL, reg(rq_entries=IO_RQ_MAX_ENTRIES + 1))
    await fails(errno.EINVAL, reg(region=IoUringRegionDesc(64)))
    await fails(errno.ENODEV, reg(if_idx=nd.ifindex + 100))
    await fails(errno.EINVAL, reg(area_flags=0x80))
    await fails(errno.EINVAL, reg(area_rq_area_token=1 << 48))
    await fails(errno.EINVAL, reg(area_resv2=(1, 0)))
    await fails(errno.EFAULT, reg(area_len=0))
    await fails(errno.EFAULT, reg(area_len=(1 << 30) + PAGE_SIZE))
    await fails(errno.EOVERFLOW, reg(area_addr=(1 << 64) - PAGE_SIZE, area_len=2 * PAGE_SIZE))
    await fails(errno.EINVAL, reg(area_addr=nd.hw.host.alloc(2 * PAGE_SIZE, PAGE_SIZE) + 512))
    await fails(errno.EINVAL, reg(area_len=PAGE_SIZE + 100))
    await fails(errno.EINVAL, reg(area_dmabuf_fd=5))
    await fails(errno.EOPNOTSUPP, reg(area_flags=IORING_ZCRX_AREA_DMABUF))
    await fails(errno.EFAULT, reg(area_addr=0))
    await fails(errno.EFAULT, reg(area_addr=nd.hw.host.end + PAGE_SIZE))
    await fails(errno.ERANGE, reg(if_rxq=nd.real_num_rx_queues))
    await fails(errno.ERANGE, reg(if_rxq=-2))
    await fails(errno.EINVAL, reg())                       # tcp-data-split is disabled
    await nd.set_ringparam(tcp_data_split=True, hds_thresh=64)
    await fails(errno.EINVAL, reg())                       # hds-thresh is not zero
    await nd.set_ringparam(hds_thresh=0)
    nd.xdp_prog = object()
    await fails(errno.EEXIST, reg())
    nd.xdp_prog = None
    b = await rig.bind([0], pages=4)
    await aexpect_errno(errno.EEXIST, ring.register_zcrx_ifq(reg()))
    assert not ring.zcrx_ctxs
    await rig.nl.close()                                   # unbinds
    nd.rx_queue(0).xsk_pool = object()
    await fails(errno.EBUSY, reg())
    nd.rx_queue(0).xsk_pool = None
    rp = nd.ringparam                # 8 KiB payload buffers (this driver has no knob for it)
    nd.ringparam = replace(rp, rx_buf_len=2 * PAGE_SIZE)
    await fails(errno.EOPNOTSUPP, reg())                   # page pool init: order-0 only
    nd.ringparam = rp
    # CLAMP: too many entries are clamped, and rounded up to a power of two
    clamp = k.io_uring_setup(8, IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_CQE32 | IORING_SETUP_CLAMP)
    r = reg(rq_entries=IO_RQ_MAX_ENTRIES + 5, region=IoUringRegionDesc(1 << 20))
    assert await clamp.register_zcrx_ifq(r) == 0 and r.rq_entries == IO_RQ_MAX_ENTRIES
    await clamp.close()
    r = reg(rq_entries=5)
    assert await ring.register_zcrx_ifq(r) == 0
    assert r.rq_entries == 8 and r.zcrx_id == 0 and r.offsets.rqes == 64
    # recv_zc's own checks
    udp = k.socket(2, 2)
    expect_errno(errno.EINVAL, ring.recv_zc, udp, 7)
    expect_errno(errno.EPROTONOSUPPORT, ring.recv_zc, udp, 0)
    await ring.close()
    assert ring.freed and b.id == 1
    finish_zcrx(rig, ring)
    await rig.finish()


async def zcrx_refill_starvation(env: DriverEnv) -> None:
    """The application keeps every buffer: the area drains, refill fails, the NIC drops and
    counts; once the buffers go back through the refill ring delivery resumes, TCP fills the
    gap, the stream is exact and nothing more is dropped."""
    ring_size = 16
    rig = await Rig.create(env, rx_pending=ring_size)
    nd = rig.netdev
    peer = TcpPeer()
    per_page = rig.pieces_per_page(peer.mss)
    pages = 32 // per_page
    fit = pages * per_page
    ring = zcrx_ring(rig.kernel)
    zc = await zcrx_register(ring, nd, 0, pages=pages, rq_entries=fit)   # a CQE per piece
    sock = await rig.connect(peer, rig.listen())
    reader = ZcrxReader(sock, zc, withhold=True)
    want = make_data('pattern', 3 * fit * peer.mss)
    peer.write(want)
    peer.shutdown()
    await rig.flood(peer, reader, ring_size * peer.mss)      # reading, returning nothing
    assert len(reader.got) == fit * peer.mss, 'exactly one area worth was delivered'
    assert bytes(reader.got) == want[:len(reader.got)]
    assert len(reader.held) == fit and zc.area.free_count == 0
    drops = await rig.hw('RX_DROP_NO_PAY_BUF')
    assert drops == len(want) // peer.mss - fit, 'every later segment was dropped'
    qs = await nd.qstats_get()
    assert qs['rx-alloc-fail'] > 0 and qs['rx-hw-drops'] == qs['rx-hw-drop-overruns'] == drops
    assert zc.ifq.pages_free == 0
    # hand everything back: the refill ring refills the NIC's ring at the next poll
    assert reader.give_back() == fit
    assert zc.ifq.rqring_entries() == fit
    reader.withhold = False
    await rig.pump()
    assert len(nd.rx_queue(0).pay_bufs) == ring_size and zc.ifq.rq.head == zc.ifq.rq.tail
    peer.snd_una = (sock.tcp_info().rcv_nxt - peer.seq_of(0)) & 0xFFFF_FFFF
    peer.rewind()
    await rig.transfer(peer, reader)
    assert bytes(reader.got) == want and reader.eof
    assert await rig.hw('RX_DROP_NO_PAY_BUF') == drops, 'no drop once buffers came back'
    assert zc.area.copy_fallback_bytes == 0
    sock.close()
    await ring.close()
    assert ring.freed and zc.area.free_count == zc.area.num_niovs
    finish_zcrx(rig, ring)
    await rig.finish()


async def zcrx_unregister_outstanding(env: DriverEnv) -> None:
    """Close the ring while the user holds buffers and unread zcrx data sits in the socket:
    the user's buffers are taken back at once, the queue goes back to host pages, the old
    pool (and the area) live until the socket lets go of its skbs; the NIC is never given an
    area page again and nothing writes into the area; every niov is accounted for."""
    rig = await Rig.create(env, rx_pending=16)
    nd = rig.netdev
    ring = zcrx_ring(rig.kernel)
    zc = await zcrx_register(ring, nd, 0, pages=32)
    area = zc.area
    peer = TcpPeer()
    sock = await rig.connect(peer, rig.listen())
    reader = ZcrxReader(sock, zc, withhold=True)
    want = make_data('random', 24 * peer.mss, seed=3)
    peer.write(want)
    peer.shutdown()
    await rig.send(peer.next_frames(8 * peer.mss))
    await rig.pump()
    reader.drain()                            # 8 segments read, their buffers held
    assert len(reader.got) == 8 * peer.mss and len(reader.held) >= 8
    peer.ack(sock.tcp_info().rcv_nxt)
    await rig.send(peer.next_frames(4 * peer.mss))
    await rig.pump()                          # 4 segments unread in the socket
    assert sock.sk is not None and len(sock.sk.receive_queue) == 4
    old_pool = nd.rx_queue(0).pay_pool
    assert old_pool is not None
    await ring.close()
    assert not any(area.user_refs), 'the user references were scrubbed'
    assert not rig.nl.queue_get(nd.ifindex, 0).io_uring
    assert old_pool.destroyed and not old_pool.released, 'unread skbs keep the old pool'
    assert not ring.freed and not area.freed, 'the old pool holds the ring and its area'
    assert all(getattr(nm, 'area', None) is None for nm in nd.rx_queue(0).pay_bufs.values()), \
        'no area page posted after unregistration'
    snapshot = area.user_read(0, area.size)
    peer.ack(sock.tcp_info().rcv_nxt)
    await rig.send(peer.next_frames(4 * peer.mss))
    await rig.pump()
    assert len(sock.sk.receive_queue) == 8, 'more data came, into host pages'
    assert area.user_read(0, area.size) == snapshot, 'the NIC wrote into the freed area'
    # the unread zcrx data cannot be read as bytes or dma-buf tokens, and the ring is gone
    expect_errno(errno.EFAULT, sock.recvmsg, 1 << 16)
    expect_errno(errno.ENODEV, sock.recvmsg, 1 << 16, 64 * 40, MSG_SOCK_DEVMEM)
    expect_errno(errno.EBADF, ring.recv_zc, sock, zc.id)
    sock.close()                              # the last skbs: the old pool, then the area
    assert old_pool.released and ring.freed and area.freed and not area.is_mapped
    assert area.free_count == area.num_niovs, 'every niov back on the freelist'
    finish_zcrx(rig, ring)
    await rig.finish()


async def _spread(rig: Rig, ring: IoUring, zcs: dict[int, Any], flows: int, size: int,
                  sport: int = 42000) -> set[int]:
    """`flows` TCP flows to port 5201, each read through the ifq of the queue it landed on;
    every stream exact and zero-copy; returns the queues used."""
    listener = rig.listen(5201)
    peers = [TcpPeer(Flow(sport=sport + 13 * i, dport=5201)) for i in range(flows)]
    readers = []
    for i, p in enumerate(peers):
        sock = await rig.connect(p, listener)
        assert sock.sk is not None
        assert sock.sk.rx_queue in zcs, f'flow {i} landed on queue {sock.sk.rx_queue}, not a zcrx queue'
        readers.append(ZcrxReader(sock, zcs[sock.sk.rx_queue]))
        p.write(make_data('random', size, seed=100 + i))
        p.shutdown()
    # RECV_ZC with another queue's ifq: the fragments are niovs of a different ifq, EFAULT
    first = readers[0]
    other = next((z for q, z in zcs.items() if q != first.zc.ifq.if_rxq), None)
    if other is not None:
        await rig.send(peers[0].next_frames(peers[0].mss))
        await rig.pump()
        expect_errno(errno.EFAULT, ring.recv_zc, first.sock, other.id)
    for p, r in zip(peers, readers):
        await rig.transfer(p, r)
        assert bytes(r.got) == bytes(p.stream) and r.eof and r.zc_bytes == len(p.stream)
    assert all(zc.area.copy_fallback_bytes == 0 for zc in zcs.values())
    for r in readers:
        r.sock.close()
    return {r.zc.ifq.if_rxq for r in readers}


async def zcrx_rss_spread(env: DriverEnv, *, flows: int = 8, size: int = 16 << 10) -> None:
    """A flow group to one port spread by RSS over four queues, each with its own ifq (the
    default RSS table over all four): every stream exact and zero-copy through the ifq of the
    queue its connection landed on, at least two queues used."""
    nq = 4
    rig = await _steered_rig(env, nq, nq, rx_pending=32)
    ring = zcrx_ring(rig.kernel)
    zcs = {q: await zcrx_register(ring, rig.netdev, q, pages=64) for q in range(nq)}
    used = await _spread(rig, ring, zcs, flows, size)
    assert len(used) >= 2, f'RSS spread the flows: queues {sorted(used)}'
    await ring.close()
    assert ring.freed
    finish_zcrx(rig, ring)
    await rig.finish()


async def zcrx_rss_context_spread(env: DriverEnv, *, flows: int = 8, size: int = 16 << 10) -> None:
    """The kernel's RSS-context zcrx setup: `ethtool -X context new start 4 equal 4`, a rule
    `flow-type tcp4 dst-port 5201 context K`, an ifq on each of the context's queues 4..7
    while the default table spreads everything else over 0..3: the flow group spreads over
    the context's queues only, every stream exact and zero-copy; the context cannot be
    deleted while the rule points at it."""
    nq = 8
    rig = await _steered_rig(env, nq, 4, rx_pending=32)
    nd = rig.netdev
    ctxs = ethtool.RssContexts(nd.hw, nq)
    rules = ethtool.NtupleRules(nd.hw, nq, contexts=ctxs)
    await rules.clear()
    k = await ethtool.set_rxfh(nd.hw, indir=ethtool.equal_indir(4, start=4),
                               rss_context=ethtool.ETH_RXFH_CONTEXT_ALLOC,
                               contexts=ctxs)
    await rules.add(ethtool.NtupleSpec('tcp4', 0, dst_port=5201, context=k))
    assert ctxs.queues(k) == [4, 5, 6, 7]
    ring = zcrx_ring(rig.kernel)
    zcs = {q: await zcrx_register(ring, nd, q, pages=64) for q in ctxs.queues(k)}
    used = await _spread(rig, ring, zcs, flows, size)
    assert used <= {4, 5, 6, 7} and len(used) >= 2, f'the context spread the flows: {sorted(used)}'
    await aexpect_errno(errno.EBUSY, ethtool.set_rxfh(nd.hw, rss_context=k, rss_delete=True,
                                                      contexts=ctxs))
    await ring.close()
    assert ring.freed
    finish_zcrx(rig, ring)
    await rig.finish()


ZCRX_SCENARIOS: list[Scenario] = [
    Scenario('zcrx-steered-flow', zcrx_steered_flow, num_rxq=4, steering=True),
    Scenario('zcrx-steered-flow-ipv6-mtu9000', partial(zcrx_steered_flow, ipv6=True, mtu=9000,
                                                       data='random'), num_rxq=4, steering=True),
    Scenario('zcrx-register-errors', zcrx_register_errors),
    Scenario('zcrx-refill-starvation', zcrx_refill_starvation),
    Scenario('zcrx-unregister-outstanding', zcrx_unregister_outstanding),
    Scenario('zcrx-rss-spread', zcrx_rss_spread, num_rxq=4, steering=True),
    Scenario('zcrx-rss-context-spread', zcrx_rss_context_spread, num_rxq=8, steering=True),
]
RTL_SIZES: dict[str, Callable[[DriverEnv], Coroutine[Any, Any, None]]] = {
    'zcrx-steered-flow': partial(zcrx_steered_flow, size=32 << 10),
    'zcrx-steered-flow-ipv6-mtu9000': partial(zcrx_steered_flow, ipv6=True, mtu=9000,
                                              data='random', size=48 << 10),
    'zcrx-rss-spread': partial(zcrx_rss_spread, flows=6, size=4 << 10),
    'zcrx-rss-context-spread': partial(zcrx_rss_context_spread, flows=6, size=4 << 10),
}
"""Smaller streams on the RTL (a simulated cycle costs far more than a model frame)."""
