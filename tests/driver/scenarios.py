"""The driver scenarios, written once for every backend (the test suite's; a user's own
scenario is written the same way, on tb/scenario).

Each scenario is an `async def` taking a `DriverEnv` (tb/scenario): the golden model
(`ModelEnv`, run by tests/driver/test_scenarios.py) and the RTL through cocotb (`RtlEnv`, run
by tests/driver/test_scenarios_rtl.py). A scenario brings the driver up from nothing (probe,
ethtool settings, open) with `tb.scenario.Rig`, uses only the driver's public API plus the
env's MAC side (`send`), and reads payload only through the GPU accessor; every scenario ends
by checking that the CPU never read device memory.

Scenarios that need more than a NIC may have say so: `Scenario.num_rxq` (RX queues in the
NIC) and `Scenario.steering` (RSS and n-tuple steering, `env.steering`). At run time they
raise `Unsupported` when the NIC lacks it; the runners let that fail the test (every NIC
here has every feature, so a missing one is a defect, never a skip).
"""
from __future__ import annotations

import errno
import random
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Coroutine

from driver import regs
from driver.devmem import QueueId, QueueType
from driver.ethtool import CoalesceAttr, parse_coalesce_args
from driver.errors import ETOOSMALL, KernelError
from driver.netdev import TcpDataSplit
from driver.page_pool import HostPageProvider
from driver.headers import AF_INET
from driver.socket import (MSG_ERRQUEUE, MSG_SOCK_DEVMEM, MSG_ZEROCOPY, SO_DEVMEM_DONTNEED,
                           SO_ZEROCOPY, SOCK_DGRAM, SOL_SOCKET, DmabufToken)
from driver.tcp import TcpState
from models.device_memory import DmaBuf, DmaBufChunk
from models.host_memory import PAGE_SIZE
from tb.frames import Flow, pattern
from tb.scenario import (CMSG_BYTES, FRAME_COUNTERS, RSS_KEY, DriverEnv, Reader, Rig, TcpPeer,
                         Unsupported, aexpect_errno, expect_errno, make_data, require_steering)
from tb.scenario.tx import (check_tcp_frame, peer_acks_all, tcp_payload, tx_connection,
                            tx_settle, tx_wire, zc_cmsg)

# ------------------------------------------------------------------------------------------
# scenarios
# ------------------------------------------------------------------------------------------

def only_ring_refs(nd: Any, queue: int) -> bool:
    """Every payload buffer posted on `queue` is held by the ring alone: no skb fragment or
    token references it (with multi-packet buffers the page the NIC fills keeps the ring's)."""
    return all(nm.pp_ref_count == 1 for nm in nd.rx_queue(queue).pay_bufs.values())


def _rx_niovs(rig: Rig, binding_id: int) -> dict[int, Any]:
    """The bound dma-buf's net_iovs by their offset in the dma-buf."""
    binding = rig.kernel.devmem_bindings[binding_id]
    out: dict[int, Any] = {}
    binding.chunk_pool.for_each_chunk(
        lambda c: out.update({n.virtual_addr: n for n in c.owner.niovs}))
    return out


async def mpb_shared_niov(env: DriverEnv) -> None:
    """Multi-packet payload buffers: 64-byte segments pack 64 to a page (64-byte strides),
    each its own fragment and devmem token; a net_iov shared by several frames goes back to
    its page pool only when every token on it has been returned, and not a token earlier."""
    rig = await Rig.create(env, rx_pending=64, mtu=104)           # MSS 64
    await rig.netdev.set_priv_flags({'rx-mpb': True})
    assert rig.netdev.get_priv_flags() == {'rx-mpb': True}
    b = await rig.bind([0], pages=64)
    listener = rig.listen()
    peer = TcpPeer(Flow(), mtu=104)
    assert peer.mss == 64
    sock = await rig.connect(peer, listener)
    reader = Reader(sock, {b.id: b.dmabuf}, withhold=True)
    want = make_data('random', 3 * PAGE_SIZE)
    peer.write(want)
    await rig.transfer(peer, reader)
    assert bytes(reader.got) == want and reader.devmem_bytes == len(want)
    assert reader.frags == len(want) // 64, 'one fragment (and token) per segment'
    # Group the held tokens by the page (net_iov) their fragment is in.
    pages: dict[int, list[int]] = {}
    for tok, off in zip(reader.held, reader.offsets):
        pages.setdefault(off - off % PAGE_SIZE, []).append(tok)
    assert sorted(len(t) for t in pages.values()) == [64, 64, 64], \
        'each page holds 64 segments of 64 bytes, the first at its offset 0'
    niovs = _rx_niovs(rig, b.id)
    pool = rig.netdev.rx_queue(0).pay_pool
    assert pool is not None
    for page, toks in pages.items():
        niov = niovs[page]
        assert niov.pp_ref_count == len(toks), \
            'only the tokens hold a page the NIC has filled (ring and skb references dropped)'
        assert sock.dontneed(toks[:-1]) == len(toks) - 1
        assert niov.pp_ref_count == 1 and niov not in pool.ring and niov not in pool.alloc_cache, \
            'a page goes back to the pool only with its last token'
        assert sock.dontneed(toks[-1:]) == 1
        assert niov.pp_ref_count == 0 and niov in pool.ring, 'the last token recycles the page'
    reader.held.clear()
    peer.shutdown()
    await rig.transfer(peer, reader)
    sock.close()
    await rig.finish()


async def coalesce_settings(env: DriverEnv) -> None:
    """`ethtool -c/-C` for RX and TX as the kernel answers it (net/ethtool/coalesce.c):
    unsupported attributes EINVAL and nothing changed, range checks EINVAL, a reply that omits
    unsupported zero values, tx-usecs/tx-frames in every TXQ.COALESCE (per queue with
    --per-queue); then a devmem stream with rx-usecs 2 and rx-frames 8 (multi-packet buffers
    on), its ACKs sent with TX completions in batches (tx-usecs 2, tx-frames 8 and 4), is
    delivered exactly."""
    rig = await Rig.create(env, rx_pending=64, mtu=1500)
    nd = rig.netdev
    c = nd.get_coalesce()
    want_frames = nd.rx_frames_max if getattr(env, 'rx_mpb', False) else 1  # the rig's, or reset
    assert (c.rx_coalesce_usecs, c.rx_max_coalesced_frames) == (0, want_frames)
    reply = nd.coalesce_reply()
    assert reply[CoalesceAttr.RX_USECS] == 0 and reply[CoalesceAttr.RX_MAX_FRAMES] == want_frames
    assert CoalesceAttr.RX_USECS_IRQ not in reply, 'an unsupported zero parameter is n/a'
    for bad in ('rx-usecs-irq 5', 'adaptive-rx on', 'rx-usecs 4 rx-frames-low 2'):
        e = await aexpect_errno(errno.EINVAL, nd.set_coalesce(parse_coalesce_args(bad)))
        assert 'unsupported' in str(e)
    assert nd.get_coalesce() == c, 'a refused request changes nothing'
    await aexpect_errno(errno.EINVAL, nd.set_coalesce({'rx-frames': nd.rx_frames_max + 1}))
    await aexpect_errno(errno.EINVAL, nd.set_coalesce({'rx-usecs': 1 << 16}))
    await aexpect_errno(errno.EINVAL, nd.set_coalesce(parse_coalesce_args('rx-usecs 0 rx-frames 0')))
    expect_errno(errno.EINVAL, parse_coalesce_args, 'rx-usec 3')
    expect_errno(errno.EINVAL, parse_coalesce_args, 'rx-usecs')
    await nd.set_coalesce(parse_coalesce_args('rx-usecs 2 rx-frames 8'))
    c = nd.get_coalesce()
    assert (c.rx_coalesce_usecs, c.rx_max_coalesced_frames) == (2, 8)
    # TX completion moderation (docs/tx.md): tx-usecs / tx-frames program TXQ[t].COALESCE.
    assert (c.tx_coalesce_usecs, c.tx_max_coalesced_frames) == (0, 1), 'TX reset: off'
    assert {CoalesceAttr.TX_USECS, CoalesceAttr.TX_MAX_FRAMES} <= nd.coalesce_reply().keys()
    txc = regs.txq_reg(0, regs.TXQ_COALESCE)
    assert nd.tx_frames_max == regs.TXQ_COALESCE_FRAMES_MAX.get(await nd.hw.read32(txc)) == 8
    await aexpect_errno(errno.EINVAL, nd.set_coalesce({'tx-frames': nd.tx_frames_max + 1}))
    await aexpect_errno(errno.EINVAL, nd.set_coalesce(parse_coalesce_args('tx-usecs 0 tx-frames 0')))
    await aexpect_errno(errno.EINVAL, nd.set_per_queue_coalesce(1 << nd.num_tx_queues,
                                                                {'tx-frames': 4}))
    assert nd.get_coalesce() == c, 'a refused request changes nothing'
    await nd.set_coalesce(parse_coalesce_args('tx-usecs 2 tx-frames 8'))
    c = nd.get_coalesce()
    assert (c.rx_coalesce_usecs, c.rx_max_coalesced_frames) == (2, 8), 'tx-* leave RX alone'
    assert (c.tx_coalesce_usecs, c.tx_max_coalesced_frames) == (2, 8)
    for t in range(nd.num_tx_queues):
        v = await nd.hw.read32(regs.txq_reg(t, regs.TXQ_COALESCE))
        assert (regs.TXQ_COALESCE_USECS.get(v), regs.TXQ_COALESCE_FRAMES.get(v)) == (2, 8), t
    if nd.num_tx_queues > 1:
        await nd.set_per_queue_coalesce(0b10, {'tx-frames': 4})
        assert nd.get_coalesce(1).tx_max_coalesced_frames == 4
        assert nd.get_coalesce(0).tx_max_coalesced_frames == 8
    await nd.set_priv_flags({'rx-mpb': True})
    assert nd.get_coalesce() == c, 'a queue restart keeps the settings'
    await aexpect_errno(errno.EINVAL, nd.set_priv_flags({'rx-striding': True}))
    b = await rig.bind([0], pages=128)
    listener = rig.listen()
    peer = TcpPeer(Flow(), mtu=1500)
    sock = await rig.connect(peer, listener)
    reader = Reader(sock, {b.id: b.dmabuf})
    want = make_data('pattern', 64 << 10)
    peer.write(want)
    peer.shutdown()
    await rig.transfer(peer, reader)
    assert bytes(reader.got) == want and reader.devmem_bytes == len(want)
    hw = await nd.hw_stats()
    assert all(hw[n] == 0 for n in FRAME_COUNTERS if n != 'RX_FRAMES')
    sock.close()
    await rig.finish()


async def devmem_stream(env: DriverEnv, *, mtu: int = 1500, data: str = 'pattern',
                        size: int = 256 << 10, ipv6: bool = False, isn: int = 1_000_000) -> None:
    """A devmem flow on bound queue 0: the stream read back through the GPU accessor equals
    what was sent; every segment split, nothing in host memory, nothing dropped."""
    rig = await Rig.create(env, rx_pending=64, mtu=mtu)
    b = await rig.bind([0], pages=256)
    assert b.id == 1, 'the first binding of a kernel has id 1'
    listener = rig.listen(ipv6=ipv6)
    peer = TcpPeer(Flow(ipv6=ipv6), mtu=mtu, isn=isn)
    sock = await rig.connect(peer, listener)
    reader = Reader(sock, {b.id: b.dmabuf})
    want = make_data(data, size)
    peer.write(want)
    peer.shutdown()
    await rig.transfer(peer, reader)
    assert bytes(reader.got) == want
    assert reader.eof and sock.tcp_info().state == TcpState.CLOSE_WAIT
    assert reader.devmem_bytes == size and reader.linear_bytes == 0 and reader.ordinary_bytes == 0
    assert reader.ids_seen == {b.id}
    assert peer.retransmits == 0
    q = rig.netdev.qstats(0)
    assert q.hds_unsplit_drops == 0 and q.alloc_fail == 0
    hw = await rig.netdev.hw_stats()
    assert hw['RX_FRAMES'] == rig.frames_sent
    assert all(hw[n] == 0 for n in FRAME_COUNTERS if n != 'RX_FRAMES')
    sock.close()
    await rig.finish()


async def header_split_sizes(env: DriverEnv, *, ipv6: bool = False) -> None:
    """Linux's header-split check: single segments of 1, 8, 16 ... 8192 payload bytes each
    arrive wholly in device memory (no SCM_DEVMEM_LINEAR)."""
    rig = await Rig.create(env, rx_pending=32, mtu=9000)
    b = await rig.bind([0], pages=64)
    listener = rig.listen(ipv6=ipv6)
    peer = TcpPeer(Flow(ipv6=ipv6), mtu=9000)
    sock = await rig.connect(peer, listener)
    reader = Reader(sock, {b.id: b.dmabuf})
    offset = 0
    for size in [1] + [8 << i for i in range(11)]:
        data = pattern(size, period=7, start=offset)
        peer.write(data)
        frames = peer.next_frames(1 << 20)
        assert len(frames) == 1, f'{size} bytes should be one segment'
        await rig.send(frames)
        await rig.pump()
        before_bytes, before_frags = reader.devmem_bytes, reader.frags
        assert reader.drain() == size
        assert reader.linear_bytes == 0, f'{size}-byte payload spilled into host memory'
        assert reader.devmem_bytes - before_bytes == size
        assert reader.frags - before_frags == -(-size // PAGE_SIZE)
        peer.ack(sock.tcp_info().rcv_nxt)
        offset += size
    assert bytes(reader.got) == pattern(offset, period=7)
    assert rig.netdev.qstats(0).hds_unsplit_drops == 0
    sock.close()
    await rig.finish()


async def bind_checks(env: DriverEnv) -> None:
    """bind-rx: every check of the spec, with its errno, and undo on failure."""
    rig = await Rig.create(env, rx_pending=16, split=False)
    nd, nl, k = rig.netdev, rig.nl, rig.kernel
    dmabuf, fd = rig.export(32)
    # missing attributes, empty queue list
    await aexpect_errno(errno.EINVAL, nl.bind_rx(nd.ifindex, fd, []))
    await aexpect_errno(errno.EINVAL, nl.bind_rx(nd.ifindex, fd, None))
    await aexpect_errno(errno.EINVAL, nl.bind_rx(nd.ifindex, None, [0]))
    await aexpect_errno(errno.EINVAL, nl.bind_rx(None, fd, [0]))
    # no such device; not a dma-buf
    await aexpect_errno(errno.ENODEV, nl.bind_rx(nd.ifindex + 100, fd, [0]))
    await aexpect_errno(errno.EBADF, nl.bind_rx(nd.ifindex, 999, [0]))
    # split disabled, then threshold not zero
    e = await aexpect_errno(errno.EINVAL, nl.bind_rx(nd.ifindex, fd, [0]))
    assert e.extack == 'tcp-data-split is disabled'
    await nd.set_ringparam(tcp_data_split=TcpDataSplit.ENABLED, hds_thresh=64)
    e = await aexpect_errno(errno.EINVAL, nl.bind_rx(nd.ifindex, fd, [0]))
    assert e.extack == 'hds-thresh is not zero'
    await nd.set_ringparam(hds_thresh=0)
    # queue out of range, not an RX queue
    e = await aexpect_errno(errno.ERANGE, nl.bind_rx(nd.ifindex, fd, [nd.real_num_rx_queues]))
    assert e.extack == 'rx queue index out of range'
    await aexpect_errno(errno.ERANGE, nl.bind_rx(nd.ifindex, fd, [-1]))   # a u32 in netlink
    await aexpect_errno(errno.EINVAL, nl.bind_rx(nd.ifindex, fd, [QueueId(QueueType.TX, 0)]))
    # XDP attached, AF_XDP on the queue
    nd.xdp_prog = object()
    await aexpect_errno(errno.EEXIST, nl.bind_rx(nd.ifindex, fd, [0]))
    nd.xdp_prog = None
    nd.rx_queue(0).xsk_pool = object()
    await aexpect_errno(errno.EBUSY, nl.bind_rx(nd.ifindex, fd, [0]))
    nd.rx_queue(0).xsk_pool = None
    # scatter entry not page-aligned in length
    odd = DmaBuf(dmabuf.device, 2 * PAGE_SIZE,
                 [DmaBufChunk(dmabuf.chunks[0].bus_addr, 0, PAGE_SIZE + 512),
                  DmaBufChunk(dmabuf.chunks[0].bus_addr + PAGE_SIZE + 512, PAGE_SIZE + 512,
                              PAGE_SIZE - 512)])
    odd_fd = k.dma_buf_fd(odd)
    await aexpect_errno(errno.EINVAL, nl.bind_rx(nd.ifindex, odd_fd, [0]))
    # a queue listed twice: the second is "already bound"; all undone
    await aexpect_errno(errno.EEXIST, nl.bind_rx(nd.ifindex, fd, [0, 0]))
    assert nl.queue_get(nd.ifindex, 0).dmabuf is None and not k.devmem_bindings
    assert isinstance(nd.rx_queue(0).pay_pool.mp, HostPageProvider)  # type: ignore[union-attr]
    # success: a positive id (their order across devices: tests/driver/test_devmem.py)
    bid = await nl.bind_rx(nd.ifindex, fd, [0])
    assert bid >= 1 and k.devmem_lookup(bid) is not None
    assert nl.queue_get(nd.ifindex, 0).dmabuf == bid
    # already bound, through another handle too
    e = await aexpect_errno(errno.EEXIST, nl.bind_rx(nd.ifindex, fd, [0]))
    assert e.extack == 'designated queue already memory provider bound'
    other = k.netlink_open()
    await aexpect_errno(errno.EEXIST, other.bind_rx(nd.ifindex, fd, [0]))
    await other.close()
    assert nl.queue_get(nd.ifindex, 0).dmabuf == bid
    # a binding that fails on a later queue leaves the earlier queue unbound
    await nl.close()
    assert nl.queue_get(nd.ifindex, 0).dmabuf is None
    nl2 = k.netlink_open()
    await aexpect_errno(errno.ERANGE, nl2.bind_rx(nd.ifindex, fd, [0, nd.real_num_rx_queues]))
    assert nl2.queue_get(nd.ifindex, 0).dmabuf is None and not k.devmem_bindings
    bid2 = await nl2.bind_rx(nd.ifindex, fd, [0])
    assert bid2 > bid
    await nl2.close()
    k.close(fd)
    k.close(odd_fd)
    await rig.finish()


async def bound_restrictions(env: DriverEnv) -> None:
    """While a queue is bound: split cannot be disabled, the threshold cannot become non-zero;
    other ring changes restart the queue with the binding kept."""
    rig = await Rig.create(env, rx_pending=32)
    nd = rig.netdev
    b = await rig.bind([0], pages=64)
    e = await aexpect_errno(errno.EINVAL, nd.set_ringparam(tcp_data_split=False))
    assert 'tcp-data-split' in (e.extack or '')
    e = await aexpect_errno(errno.EINVAL, nd.set_ringparam(hds_thresh=1))
    assert 'hds_thresh' in (e.extack or '')
    assert nd.hds_enabled and nd.ringparam.hds_thresh == 0
    await nd.set_ringparam(rx_pending=16)
    assert rig.nl.queue_get(nd.ifindex, 0).dmabuf == b.id
    listener = rig.listen()
    peer = TcpPeer()
    sock = await rig.connect(peer, listener)
    reader = Reader(sock, {b.id: b.dmabuf})
    want = make_data('random', 64 << 10)
    peer.write(want)
    await rig.transfer(peer, reader)
    assert bytes(reader.got) == want and reader.devmem_bytes == len(want)
    await rig.nl.close()
    await nd.set_ringparam(tcp_data_split=False, hds_thresh=128)
    sock.close()
    await rig.finish()


async def channels_shrink_under_bound_queue(env: DriverEnv) -> None:
    """ethtool -L below a bound queue is refused (EINVAL); above it is fine."""
    rig = await Rig.create(env, rx_pending=16, channels=2, num_rxq=2)
    nd = rig.netdev
    b = await rig.bind([1], pages=32)
    e = await aexpect_errno(errno.EINVAL, nd.set_channels(1))
    assert 'memory provider' in (e.extack or '')
    assert nd.get_channels().combined_count == 2
    assert rig.nl.queue_get(nd.ifindex, 1).dmabuf == b.id
    await rig.nl.close()
    await nd.set_channels(1)
    assert nd.get_channels().combined_count == 1
    await aexpect_errno(errno.ERANGE, rig.kernel.netlink_open().bind_rx(nd.ifindex, b.fd, [1]))
    await rig.finish()


async def close_handle_unbinds(env: DriverEnv) -> None:
    """Closing the netlink socket unbinds: the id is gone, the queue is back on host memory,
    new data arrives as ordinary bytes, and the dma-buf memory is freed once its fd closes."""
    rig = await Rig.create(env, rx_pending=16)
    nd, k = rig.netdev, rig.kernel
    free_before = env.dev.free_bytes
    b = await rig.bind([0], pages=32)
    binding = k.devmem_lookup(b.id)
    assert binding is not None
    listener = rig.listen()
    peer = TcpPeer()
    sock = await rig.connect(peer, listener)
    reader = Reader(sock, {b.id: b.dmabuf})
    first = make_data('random', 20000, seed=2)
    peer.write(first)
    await rig.transfer(peer, reader)
    assert reader.devmem_bytes == len(first)
    await rig.nl.close()
    assert k.devmem_lookup(b.id) is None
    assert rig.nl.queue_get(nd.ifindex, 0).dmabuf is None
    assert binding.freed, 'no token outstanding: the binding is freed at unbind'
    assert env.dev.free_bytes == free_before - 32 * PAGE_SIZE, 'the fd still holds the dma-buf'
    k.close(b.fd)
    assert env.dev.free_bytes == free_before
    second = make_data('random', 20000, seed=3)
    peer.write(second)
    await rig.transfer(peer, reader)
    assert bytes(reader.got) == first + second
    assert reader.ordinary_bytes == len(second)
    sock.close()
    await rig.finish()


async def ordinary_queue(env: DriverEnv, *, split: bool = False) -> None:
    """An unbound queue (host pages): plain bytes, with or without MSG_SOCK_DEVMEM, and no
    control messages."""
    rig = await Rig.create(env, rx_pending=32, split=split)
    listener = rig.listen()
    peer = TcpPeer()
    sock = await rig.connect(peer, listener)
    for devmem in (False, True):
        reader = Reader(sock, devmem=devmem)
        want = make_data('random', 40000, seed=int(devmem))
        peer.write(want)
        await rig.transfer(peer, reader)
        assert bytes(reader.got) == want and reader.ordinary_bytes == len(want)
        assert reader.frags == 0 and not reader.held
    pool = rig.netdev.rx_queue(0).pay_pool
    assert pool is not None and pool.in_use == len(rig.netdev.rx_queue(0).pay_bufs)
    sock.close()
    await rig.finish()


async def recvmsg_rules(env: DriverEnv) -> None:
    """recvmsg and SO_DEVMEM_DONTNEED rules on real traffic: no-flag EFAULT and short read,
    ETOOSMALL, no truncation, no mixing, token rules, close releases tokens."""
    rig = await Rig.create(env, rx_pending=32)
    nd, k = rig.netdev, rig.kernel
    listener = rig.listen()
    peer = TcpPeer()
    sock = await rig.connect(peer, listener)
    mss = peer.mss
    # ordinary data first (queue not bound yet), then devmem data on the same socket
    ordinary = make_data('random', 3 * mss, seed=4)
    peer.write(ordinary)
    await rig.send(peer.next_frames(1 << 20))
    await rig.pump()
    b = await rig.bind([0], pages=64)
    devmem = make_data('pattern', 4 * mss)
    peer.write(devmem)
    await rig.send(peer.next_frames(1 << 20))
    await rig.pump()
    # without the flag: the ordinary bytes, a short read stopping at the devmem boundary
    m = sock.recvmsg(1 << 20, 10 * CMSG_BYTES, 0)
    assert m.nbytes == len(ordinary) and m.data == ordinary and not m.cmsgs
    # devmem data without the flag: EFAULT (nothing read yet)
    expect_errno(errno.EFAULT, sock.recvmsg, 1 << 20, 10 * CMSG_BYTES, 0)
    # no room for one control message: ETOOSMALL; 39 bytes is still too small
    expect_errno(ETOOSMALL, sock.recvmsg, 1 << 20, 0, MSG_SOCK_DEVMEM)
    expect_errno(ETOOSMALL, sock.recvmsg, 1 << 20, CMSG_BYTES - 1, MSG_SOCK_DEVMEM)
    reader = Reader(sock, {b.id: b.dmabuf}, withhold=True)
    # room for two messages: two fragments' bytes, nothing truncated
    m = sock.recvmsg(1 << 20, 2 * CMSG_BYTES + CMSG_BYTES - 1, MSG_SOCK_DEVMEM)
    assert len(m.cmsgs) == 2 and m.nbytes == 2 * mss and m.flags == 0
    reader.take(m)
    # a short buffer splits a fragment: same buffer, advancing offset, fresh token
    m1 = sock.recvmsg(100, 10 * CMSG_BYTES, MSG_SOCK_DEVMEM)
    m2 = sock.recvmsg(mss - 100, 10 * CMSG_BYTES, MSG_SOCK_DEVMEM)
    assert m1.nbytes == 100 and m2.nbytes == mss - 100
    (c1,), (c2,) = m1.dmabuf, m2.dmabuf
    assert c2.frag_offset == c1.frag_offset + 100 and c2.frag_token != c1.frag_token
    assert c1.dmabuf_id == c2.dmabuf_id == b.id and c1.flags == 0
    reader.take(m1)
    reader.take(m2)
    reader.drain()
    assert bytes(reader.got) == devmem
    # the control buffer as userspace sees it: 40 bytes per message
    assert len(m.control) == 2 * CMSG_BYTES
    # SO_DEVMEM_DONTNEED rules
    held = list(reader.held)
    assert len(held) == 5 and len(set(held)) == 5
    expect_errno(errno.EINVAL, sock.setsockopt, SOL_SOCKET, SO_DEVMEM_DONTNEED, b'\0' * 12)
    expect_errno(errno.EINVAL, sock.setsockopt, SOL_SOCKET, SO_DEVMEM_DONTNEED,
                 DmabufToken(held[0]).pack() * 129)
    udp = k.socket(AF_INET, SOCK_DGRAM)
    expect_errno(errno.EBADF, udp.dontneed, [held[0]])
    assert sock.setsockopt(SOL_SOCKET, SO_DEVMEM_DONTNEED, b'') == 0
    assert sock.dontneed([(max(held) + 1000, 10)]) == 0, 'unknown tokens are skipped'
    assert sock.dontneed([held[0], held[0]]) == 1, 'a returned token is not counted again'
    assert sock.dontneed([DmabufToken(held[1], 1), DmabufToken(10**6, 3)]) == 1
    assert sock.tcp_info().tokens_outstanding == 3
    # close releases the rest: every buffer goes back to the page pool
    pool = nd.rx_queue(0).pay_pool
    assert pool is not None
    in_use = pool.in_use
    sock.close()
    if nd.priv_flags['rx-mpb']:
        assert only_ring_refs(nd, 0), 'close dropped every token (buffers shared by frames)'
    else:
        assert pool.in_use == in_use - 2, 'three tokens, two buffers (two tokens share one)'
    assert pool.in_use == len(nd.rx_queue(0).pay_bufs)
    await rig.nl.close()
    await rig.finish()


async def token_pressure(env: DriverEnv) -> None:
    """Withheld tokens drain the dma-buf: the ring is not refilled, the NIC drops and counts;
    returned tokens restore delivery; retransmissions fill the gap; the stream is exact."""
    ring = 16
    rig = await Rig.create(env, rx_pending=ring)
    nd = rig.netdev
    peer = TcpPeer()
    # segments per page: one, or as many as fit in strides (multi-packet payload buffers);
    # 32 segments' worth of pages, well inside the receive window
    per_page = rig.pieces_per_page(peer.mss)
    pages = 32 // per_page
    fit = pages * per_page
    b = await rig.bind([0], pages=pages)
    listener = rig.listen()
    sock = await rig.connect(peer, listener)
    reader = Reader(sock, {b.id: b.dmabuf}, withhold=True)
    want = make_data('pattern', 3 * fit * peer.mss)
    peer.write(want)
    peer.shutdown()
    # send far more than the dma-buf can hold, in ring-sized bursts, reading but not returning
    await rig.flood(peer, reader, ring * peer.mss)
    assert len(reader.got) == fit * peer.mss, 'exactly one dma-buf worth was delivered'
    assert bytes(reader.got) == want[:len(reader.got)]
    assert len(reader.held) == fit
    drops = await rig.hw('RX_DROP_NO_PAY_BUF')
    assert drops == len(want) // peer.mss - fit, 'every later segment was dropped'
    assert nd.qstats(0).alloc_fail > 0
    qs = await nd.qstats_get()
    assert qs['rx-alloc-fail'] > 0 and qs['rx-hw-drops'] == qs['rx-hw-drop-overruns'] == drops
    binding = rig.kernel.devmem_lookup(b.id)
    assert binding is not None and binding.pages_free == 0
    # return the tokens: the pool refills the ring, the sender retransmits from the ACK
    assert reader.give_back() == fit
    reader.withhold = False
    await rig.pump()
    assert len(nd.rx_queue(0).pay_bufs) == ring
    peer.snd_una = (sock.tcp_info().rcv_nxt - peer.seq_of(0)) & 0xFFFF_FFFF
    peer.rewind()
    await rig.transfer(peer, reader)
    assert bytes(reader.got) == want and reader.eof
    assert await rig.hw('RX_DROP_NO_PAY_BUF') == drops, 'no drop once tokens came back'
    sock.close()
    await rig.finish()


async def unbind_with_tokens_outstanding(env: DriverEnv) -> None:
    """Unbind while the user holds tokens (and unread devmem data sits in the socket): the id
    is gone at once, the tokens stay valid and can be returned, and the binding and the
    dma-buf memory are released only when the last one is."""
    rig = await Rig.create(env, rx_pending=16)
    nd, k = rig.netdev, rig.kernel
    free_before = env.dev.free_bytes
    b = await rig.bind([0], pages=32)
    k.close(b.fd)  # only the binding keeps the dma-buf alive now
    binding = k.devmem_lookup(b.id)
    assert binding is not None
    listener = rig.listen()
    peer = TcpPeer()
    sock = await rig.connect(peer, listener)
    reader = Reader(sock, {b.id: b.dmabuf}, withhold=True)
    want = make_data('random', 12 * peer.mss, seed=5)
    peer.write(want[:8 * peer.mss])
    await rig.send(peer.next_frames(1 << 20))
    await rig.pump()
    m = sock.recvmsg(5 * peer.mss, 64 * CMSG_BYTES, MSG_SOCK_DEVMEM)
    reader.take(m)
    assert len(reader.held) == 5
    await rig.nl.close()
    assert k.devmem_lookup(b.id) is None
    assert rig.nl.queue_get(nd.ifindex, 0).dmabuf is None
    assert not binding.freed and env.dev.free_bytes == free_before - 32 * PAGE_SIZE
    # data received before the unbind is still devmem data with the old id
    reader.drain()
    assert reader.devmem_bytes == 8 * peer.mss and reader.ids_seen == {b.id}
    # new data on the same flow lands in host memory: ordinary bytes
    peer.write(want[8 * peer.mss:])
    peer.ack(sock.tcp_info().rcv_nxt)
    await rig.transfer(peer, reader)
    assert bytes(reader.got) == want and reader.ordinary_bytes == 4 * peer.mss
    # give the tokens back one by one: the binding lives until the last
    tokens = list(reader.held)
    assert len(tokens) == 8
    for i, t in enumerate(tokens):
        assert not binding.freed
        assert sock.dontneed([t]) == 1
    assert binding.freed and not binding.warnings
    assert env.dev.free_bytes == free_before, 'dma-buf memory released after the last token'
    assert sock.dontneed(tokens) == 0
    sock.close()
    await rig.finish()


async def reorder_duplicates_fin(env: DriverEnv) -> None:
    """Out-of-order, duplicate, partly overlapping and retransmitted segments, and a FIN that
    arrives before the last data: the stream is exact, duplicates are recycled at once."""
    rig = await Rig.create(env, rx_pending=32)
    nd = rig.netdev
    b = await rig.bind([0], pages=64)
    listener = rig.listen()
    peer = TcpPeer()
    sock = await rig.connect(peer, listener)
    reader = Reader(sock, {b.id: b.dmabuf})
    mss = peer.mss
    want = make_data('pattern', 10 * mss)
    peer.write(want)
    peer.shutdown()
    seg = [peer.segment_frame(peer.segment_at(i * mss)) for i in range(10)]
    fin_only = peer.segment_frame(peer.segment_at(10 * mss))
    assert 'F' in peer.segment_at(9 * mss).flags
    mib = rig.kernel.tcp.mib
    pool = nd.rx_queue(0).pay_pool
    assert pool is not None

    async def deliver(frames: list[bytes]) -> None:
        await rig.send(frames)
        await rig.pump()
        reader.drain()

    await deliver([seg[0], seg[2], seg[1]])          # 2 before 1
    assert mib.TCPOFOQueue == 1 and len(reader.got) == 3 * mss
    cached = pool.stats.recycle_cached
    await deliver([seg[1], seg[0]])                  # retransmissions of delivered data
    assert mib.TCPDupData == 2
    if nd.priv_flags['rx-mpb']:       # pages shared by frames: the duplicates' references go
        assert only_ring_refs(nd, 0), 'duplicates release their fragments at once'
    else:
        assert pool.stats.recycle_cached == cached + 2, 'duplicates are recycled at once'
    await deliver([seg[5], seg[4], seg[5]])          # ooo, and a duplicate inside the ofo queue
    assert mib.TCPOFODup == 1 and sock.tcp_info().ofo_segments == 2
    half = peer.segment_frame(peer.segment_at(3 * mss + mss // 2, mss))
    await deliver([half])                            # ahead: queued out of order
    await deliver([seg[3]])                          # fills the hole; the overlap is trimmed
    assert mib.TCPPartialDup >= 1 and len(reader.got) == 6 * mss
    await deliver([seg[9], seg[7]])                  # the last data (with FIN) early
    assert not reader.eof
    await deliver([seg[6], seg[8]])
    assert reader.eof and bytes(reader.got) == want
    assert sock.tcp_info().state == TcpState.CLOSE_WAIT
    await deliver([seg[9], fin_only, seg[2]])        # after the FIN: duplicates
    assert bytes(reader.got) == want
    assert sock.tcp_info().tokens_outstanding == 0
    assert pool.in_use == len(nd.rx_queue(0).pay_bufs), 'no buffer leaked'
    sock.close()
    await rig.finish()




async def steered_devmem_flow_with_rss(env: DriverEnv, *, mtu: int = 1500,
                                       ipv6: bool = False, data: str = 'pattern') -> None:
    """Acceptance: the administrator's four steps (split on, threshold 0; an n-tuple rule
    for the devmem flow; RSS "equal N-1" off the devmem queue; bind), then a devmem flow on
    the bound queue while RSS spreads ordinary flows over the other queues: the devmem
    stream is exact through the GPU, the others arrive as plain bytes on queues 0..N-2."""
    nq = 4
    rig = await Rig.create(env, rx_pending=32, channels=nq, num_rxq=nq, mtu=mtu)
    nd = rig.netdev
    await require_steering(env, nd)
    from driver import ethtool
    await ethtool.set_rx_flow_hash(nd.hw, {'ip4', 'tcp4', 'udp4', 'ip6', 'tcp6', 'udp6'})
    await ethtool.set_rxfh(nd.hw, key=RSS_KEY, num_queues=nq)
    await ethtool.set_rxfh_equal(nd.hw, nq - 1, nq)
    rules = ethtool.NtupleRules(nd.hw, nd.real_num_rx_queues)
    await rules.clear()
    nd.channel_checks.append(rules.check_channels)
    devmem_flow = Flow(ipv6=ipv6, sport=40000, dport=5201)
    peer = TcpPeer(devmem_flow, mtu=mtu)
    await rules.add(ethtool.NtupleSpec('tcp6' if ipv6 else 'tcp4', nq - 1, src_ip=peer.src,
                                       dst_ip=peer.dst, src_port=devmem_flow.sport,
                                       dst_port=devmem_flow.dport))
    b = await rig.bind([nq - 1], pages=128)
    # the rule and the binding hold the queue count up
    await aexpect_errno(errno.EINVAL, nd.set_channels(nq - 1))
    sock = await rig.connect(peer, rig.listen(5201, ipv6=ipv6))
    reader = Reader(sock, {b.id: b.dmabuf})
    others = [TcpPeer(Flow(ipv6=ipv6, sport=41000 + 7 * i, dport=6000), mtu=mtu)
              for i in range(8)]
    olisten = rig.listen(6000, ipv6=ipv6)
    oreaders = [Reader(await rig.connect(p, olisten)) for p in others]
    want = make_data(data, 256 << 10)
    peer.write(want)
    peer.shutdown()
    for i, p in enumerate(others):
        p.write(make_data('random', 16 << 10, seed=10 + i))
        p.shutdown()
    await rig.transfer(peer, reader)
    for p, r in zip(others, oreaders):
        await rig.transfer(p, r)
        assert bytes(r.got) == bytes(p.stream) and r.ordinary_bytes == len(p.stream)
        assert r.frags == 0 and r.eof, 'a flow off the bound queue gets no devmem messages'
    assert bytes(reader.got) == want and reader.devmem_bytes == len(want) and reader.eof
    frames_on = [nd.qstats(q).packets for q in range(nq)]
    assert frames_on[nq - 1] == peer.frames_sent + 2, 'only the devmem flow on the bound queue' \
        ' (its data, the SYN and the handshake ACK)'
    assert sum(1 for n in frames_on[:nq - 1] if n) >= 2, f'RSS spread the flows: {frames_on}'
    await rig.finish()




# ------------------------------------------------------------------------------------------
# TX scenarios (docs/tx.md; spec "Transmitting"). They need `env.tx_frames`: the frames the
# NIC put on its TX wire, in order.
# ------------------------------------------------------------------------------------------

async def devmem_tx_segmentation(env: DriverEnv, *, ipv6: bool = False) -> None:
    """Sends of 1, MSS-1, MSS, MSS+1 bytes and 64 KiB from odd dma-buf offsets across 4 KiB
    pages: MSS-sized segments with consecutive sequence numbers, valid IPv4 and TCP
    checksums (scapy), payload equal to the dma-buf bytes named (read by the GPU), never read
    by the CPU, no more in flight than the peer's 65535-byte window; the zero-copy
    notifications only once the data is acknowledged (NIC completions alone are not enough:
    the retransmit queue still references the dma-buf), coalesced into one range."""
    rig, sock, peer, b = await tx_connection(env, ipv6=ipv6)
    wire = tx_wire(env)
    mss = peer.mss
    sk = sock.sk
    assert sk is not None
    seq = sk.snd_nxt
    base = len(wire)
    sizes = [1, mss - 1, mss, mss + 1, 64 << 10]
    offsets = [4095, 3 * PAGE_SIZE - 1, 5 * PAGE_SIZE + 7, 8 * PAGE_SIZE - 3, 9 * PAGE_SIZE + 1]
    hw_before = await rig.netdev.tx_hw_stats()
    want_frames = 0
    for call, (size, off) in enumerate(zip(sizes, offsets)):
        n = await sock.sendmsg([(off, size)], zc_cmsg(b.id), MSG_ZEROCOPY)
        assert n == size
        want_frames += -(-size // mss)
        expect_errno(errno.EAGAIN, sock.recvmsg, 0, 64, MSG_ERRQUEUE)   # nothing polled yet
    in_flight = (sk.snd_nxt - seq) & 0xFFFF_FFFF
    assert in_flight <= 65535 and sk.write_queue, 'the peer\'s window holds the rest back'
    await tx_settle(rig, env, hw_before['TX_FRAMES'] + len(sk.rtx_queue))
    await rig.netdev.poll()
    # the NIC is done with what it sent, but nothing is acknowledged: no notification
    expect_errno(errno.EAGAIN, sock.recvmsg, 0, 64, MSG_ERRQUEUE)
    await peer_acks_all(rig, peer, sock, wire)
    notes = sock.zerocopy_notifications()
    assert notes == [(0, len(sizes) - 1)], f'coalesced range of the {len(sizes)} calls: {notes}'
    frames = [f for f in wire[base:] if tcp_payload(check_tcp_frame(f))]
    assert len(frames) == want_frames
    pos = 0
    for size, off in zip(sizes, offsets):
        got = b''
        while len(got) < size:
            pkt = check_tcp_frame(frames[pos])
            pay = tcp_payload(pkt)
            from scapy.layers.inet import TCP
            assert pkt[TCP].seq == (seq & 0xFFFF_FFFF), 'sequence numbers run on'
            assert len(pay) == min(mss, size - len(got)), 'MSS-sized segments'
            got += pay
            seq += len(pay)
            pos += 1
        assert got == b.dmabuf.gpu_read(off, size), 'payload = the dma-buf bytes named'
    qs = await rig.netdev.qstats_get()
    assert qs['tx-hw-drops'] == 0 and qs['tx-dropped'] == 0
    assert rig.kernel.tcp.mib.RetransSegs == 0
    hw = await rig.netdev.tx_hw_stats()
    assert all(hw[n] == hw_before[n] for n in hw if n.startswith('TX_ERR') or n.endswith('RD_ERR'))
    sock.close()
    await rig.finish()


async def devmem_tx_errors(env: DriverEnv) -> None:
    """bind-tx and devmem sendmsg errors, each with its errno and in the spec's order; a
    failed call sends nothing and uses no notification id; closing the netlink socket
    unbinds."""
    rig, sock, peer, b = await tx_connection(env, pages=16)
    nd, nl, k = rig.netdev, rig.nl, rig.kernel
    wire = tx_wire(env)
    # bind-tx
    await aexpect_errno(errno.EINVAL, nl.bind_tx(None, b.fd))
    await aexpect_errno(errno.EINVAL, nl.bind_tx(nd.ifindex, None))
    await aexpect_errno(errno.ENODEV, nl.bind_tx(nd.ifindex + 100, b.fd))
    await aexpect_errno(errno.EBADF, nl.bind_tx(nd.ifindex, 999))
    odd = DmaBuf(b.dmabuf.device, 2 * PAGE_SIZE,
                 [DmaBufChunk(b.dmabuf.chunks[0].bus_addr, 0, PAGE_SIZE + 512),
                  DmaBufChunk(b.dmabuf.chunks[0].bus_addr + PAGE_SIZE + 512, PAGE_SIZE + 512,
                              PAGE_SIZE - 512)])
    odd_fd = k.dma_buf_fd(odd)
    await aexpect_errno(errno.EINVAL, nl.bind_tx(nd.ifindex, odd_fd))
    rx = await rig.bind([0], pages=16)
    assert rx.id != b.id, 'TX and RX bindings are distinct, ids from one space'
    size = b.dmabuf.size
    cm = zc_cmsg(b.id)
    before = len(wire)
    # the id without MSG_ZEROCOPY; without SO_ZEROCOPY
    await aexpect_errno(errno.EINVAL, sock.sendmsg([(0, 100)], cm, 0))
    sock.setsockopt(SOL_SOCKET, SO_ZEROCOPY, 0)
    await aexpect_errno(errno.EINVAL, sock.sendmsg([(0, 100)], cm, MSG_ZEROCOPY))
    # ... and that check comes before the id's (an unknown id without the flag: still EINVAL)
    await aexpect_errno(errno.EINVAL, sock.sendmsg([(size, 100)], zc_cmsg(12345), 0))
    sock.setsockopt(SOL_SOCKET, SO_ZEROCOPY, 1)
    # unknown id; an RX binding's id
    await aexpect_errno(errno.EINVAL, sock.sendmsg([(0, 100)], zc_cmsg(12345), MSG_ZEROCOPY))
    await aexpect_errno(errno.EINVAL, sock.sendmsg([(0, 100)], zc_cmsg(rx.id), MSG_ZEROCOPY))
    # the id check comes before the offset check
    await aexpect_errno(errno.EINVAL, sock.sendmsg([(size, 100)], zc_cmsg(rx.id), MSG_ZEROCOPY))
    # offset at and past the size
    await aexpect_errno(errno.EFAULT, sock.sendmsg([(size, 1)], cm, MSG_ZEROCOPY))
    await aexpect_errno(errno.EFAULT, sock.sendmsg([(size + 4096, 10)], cm, MSG_ZEROCOPY))
    # SO_ZEROCOPY takes 0 or 1
    expect_errno(errno.EINVAL, sock.setsockopt, SOL_SOCKET, SO_ZEROCOPY, 2)
    assert len(wire) == before, 'failed calls send nothing'
    await rig.netdev.poll()
    expect_errno(errno.EAGAIN, sock.recvmsg, 0, 64, MSG_ERRQUEUE)
    # a range running past the end: a short send up to the end
    assert await sock.sendmsg([(size - 10, 100)], cm, MSG_ZEROCOPY) == 10
    await rig.settle()
    await rig.pump()
    await peer_acks_all(rig, peer, sock, wire)
    assert sock.zerocopy_notifications() == [(0, 0)], 'failed calls used no id'
    # closing the netlink socket unbinds: the id is gone
    await nl.close()
    await aexpect_errno(errno.EINVAL, sock.sendmsg([(0, 100)], cm, MSG_ZEROCOPY))
    k.close(odd_fd)
    sock.close()
    await rig.finish()


async def acks_through_tx(env: DriverEnv) -> None:
    """Data received on a devmem queue is acknowledged: the SYN-ACK and pure ACKs leave
    through the TX queue (linear host-memory skbs), valid checksums, ack = rcv_nxt."""
    rig = await Rig.create(env, rx_pending=32)
    if not rig.netdev.netmem_tx:
        raise Unsupported('the NIC has no TX path')
    wire = tx_wire(env)
    b = await rig.bind([0], pages=64)
    peer = TcpPeer()
    sock = await rig.connect(peer, rig.listen())
    reader = Reader(sock, {b.id: b.dmabuf})
    want = make_data('random', 20 * peer.mss, seed=9)
    peer.write(want)
    await rig.transfer(peer, reader)
    await rig.netdev.poll()
    assert bytes(reader.got) == want
    from scapy.layers.inet import TCP
    pkts = [check_tcp_frame(f) for f in wire]
    assert pkts and pkts[0][TCP].flags == 'SA' and pkts[0][TCP].ack == peer.seq_of(0)
    acks = [p for p in pkts[1:] if p[TCP].flags == 'A' and not tcp_payload(p)]
    assert acks, 'received data is acknowledged'
    assert acks[-1][TCP].ack == sock.tcp_info().rcv_nxt
    assert all(p[TCP].sport == peer.flow.dport and p[TCP].dport == peer.flow.sport for p in pkts)
    qs = await rig.netdev.qstats_get()
    assert qs['tx-packets'] == len(pkts) and qs['tx-hw-drops'] == 0
    sock.close()
    await rig.finish()


# ------------------------------------------------------------------------------------------
# the registry the runners use
# ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Scenario:
    name: str
    func: Callable[[DriverEnv], Coroutine[Any, Any, None]]
    num_rxq: int = 1
    """RX queues the NIC must have."""
    steering: bool = False
    """Needs RSS and flow steering in the NIC (the model and the RTL both have them)."""


SCENARIOS: list[Scenario] = [
    Scenario('stream-mtu1500-pattern', partial(devmem_stream, mtu=1500, data='pattern')),
    Scenario('stream-mtu1500-random', partial(devmem_stream, mtu=1500, data='random')),
    Scenario('stream-mtu9000-pattern', partial(devmem_stream, mtu=9000, data='pattern',
                                               size=1 << 20)),
    Scenario('stream-mtu9000-random', partial(devmem_stream, mtu=9000, data='random',
                                              size=1 << 20)),
    Scenario('stream-ipv6-mtu1500-pattern', partial(devmem_stream, mtu=1500, ipv6=True)),
    Scenario('stream-sequence-wraparound', partial(devmem_stream, size=64 << 10,
                                                   isn=0xFFFF_FFFF - 20_000)),
    Scenario('header-split-sizes-ipv4', header_split_sizes),
    Scenario('header-split-sizes-ipv6', partial(header_split_sizes, ipv6=True)),
    Scenario('bind-checks', bind_checks),
    Scenario('bound-restrictions', bound_restrictions),
    Scenario('channels-shrink-under-bound-queue', channels_shrink_under_bound_queue, num_rxq=2),
    Scenario('close-handle-unbinds', close_handle_unbinds),
    Scenario('ordinary-queue-no-split', partial(ordinary_queue, split=False)),
    Scenario('ordinary-queue-split', partial(ordinary_queue, split=True)),
    Scenario('recvmsg-rules', recvmsg_rules),
    Scenario('token-pressure', token_pressure),
    Scenario('unbind-with-tokens-outstanding', unbind_with_tokens_outstanding),
    Scenario('reorder-duplicates-fin', reorder_duplicates_fin),
    Scenario('mpb-shared-niov-tokens', mpb_shared_niov),
    Scenario('coalesce-settings', coalesce_settings),
    Scenario('steered-devmem-flow-with-rss', steered_devmem_flow_with_rss, num_rxq=4,
             steering=True),
    Scenario('steered-devmem-flow-with-rss-ipv6-mtu9000',
             partial(steered_devmem_flow_with_rss, ipv6=True, mtu=9000), num_rxq=4,
             steering=True),
    Scenario('steered-devmem-flow-with-rss-mtu9000-random',
             partial(steered_devmem_flow_with_rss, mtu=9000, data='random'), num_rxq=4,
             steering=True),
    Scenario('steered-devmem-flow-with-rss-ipv6-random',
             partial(steered_devmem_flow_with_rss, ipv6=True, data='random'), num_rxq=4,
             steering=True),
]

TX_SCENARIOS: list[Scenario] = [
    Scenario('devmem-tx-segmentation-ipv4', devmem_tx_segmentation),
    Scenario('devmem-tx-segmentation-ipv6', partial(devmem_tx_segmentation, ipv6=True)),
    Scenario('devmem-tx-errors', devmem_tx_errors),
    Scenario('acks-through-tx', acks_through_tx),
]
"""Need `env.tx_frames` (the NIC's TX wire): ModelEnv's `hw.wire.tx_frames`, RtlEnv's
m_axis_tx sink. Both runners run them."""
