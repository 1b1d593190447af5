"""Devmem RX scenarios, written once for every backend.

Each scenario is an `async def` taking a `DriverEnv`: the golden model
(tests/driver/env.py `ModelEnv`, run by tests/driver/test_scenarios.py) and the RTL through
cocotb (`RtlEnv`, run by tests/driver/test_scenarios_rtl.py). A scenario brings the driver up
from nothing (probe, ethtool settings, open), uses only the driver's public API plus the
env's MAC side (`send`), and reads payload only through the GPU accessor; every scenario ends
by checking that the CPU never read device memory.

Scenarios that need more than a NIC may have say so: `Scenario.num_rxq` (RX queues in the
NIC) and `Scenario.steering` (RSS and n-tuple steering, `env.steering`). At run time they
raise `Unsupported` when the NIC lacks it; the runners let that fail the test (every NIC
here has every feature, so a missing one is a defect, never a skip).
"""
from __future__ import annotations

import errno
import importlib.util
import random
import struct
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Awaitable, Callable, Coroutine, Protocol

from driver.devmem import NetlinkSocket, QueueId, QueueType
from driver.errors import ETOOSMALL, KernelError
from driver.headers import AF_INET, AF_INET6
from driver.hw import NicHw
from driver.kernel import Kernel
from driver.netdev import Netdev, TcpDataSplit
from driver.page_pool import HostPageProvider
from driver.socket import (CMSG_SPACE, MSG_ERRQUEUE, MSG_SOCK_DEVMEM, MSG_ZEROCOPY,
                           SCM_DEVMEM_DMABUF, SO_DEVMEM_DONTNEED, SO_ZEROCOPY, SOCK_DGRAM,
                           SOCK_STREAM, SOL_SOCKET, DmabufToken, RecvMsg, Socket)
from driver.tcp import TcpState
from models.device_memory import DeviceMemory, DmaBuf, DmaBufChunk
from models.host_memory import PAGE_SIZE
from tb.frames import Flow, pattern
from tests.driver.peer import TcpPeer

CMSG_BYTES = CMSG_SPACE(24)
FRAME_COUNTERS = ('RX_FRAMES', 'RX_DROP_RUNT', 'RX_DROP_FCS', 'RX_DROP_OVERSIZE', 'RX_DROP_FIFO',
                  'RX_DROP_HDR_ERR', 'RX_DROP_QUEUE_OFF', 'RX_DROP_NO_HDR_BUF',
                  'RX_DROP_NO_PAY_BUF', 'RX_DROP_CQ_FULL')
SETTLE_POLLS = 5000
SETTLE_NS = 200


class DriverEnv(Protocol):
    """What a backend gives the scenarios.

    Optional members: `window_bytes: int` (how many bytes may be sent before the driver runs
    NAPI; the RTL's frame FIFO may need a small one), `seed: int`, `steering: bool` (the
    NIC classifies frames with RSS and n-tuple rules; steering scenarios are Unsupported
    without it), and `tx_frames: list[bytes]` (every frame the NIC sent, in order, growing
    as they leave; the handshake reads the SYN-ACK from it, the TX scenarios need it).
    """

    @property
    def hw(self) -> NicHw:
        """The driver's hardware interface (read32/write32/delay/host)."""
        ...

    @property
    def dev(self) -> DeviceMemory:
        """GPU memory: dma-bufs are exported from it, payload is read through `dev.gpu`."""
        ...

    async def send(self, frame: bytes) -> None:
        """Put one frame (without FCS) on the NIC's RX wire."""
        ...


class Unsupported(Exception):
    """The NIC or the environment lacks what the scenario needs (the runner skips)."""


def expect_errno(err: int, fn: Callable[..., object], *args: object, **kw: object) -> KernelError:
    try:
        fn(*args, **kw)
    except KernelError as e:
        assert e.errno == err, f'expected {err}, got {e}'
        return e
    raise AssertionError(f'expected errno {err}, call succeeded')


async def aexpect_errno(err: int, coro: Awaitable[object]) -> KernelError:
    try:
        await coro
    except KernelError as e:
        assert e.errno == err, f'expected errno {err}, got {e}'
        return e
    raise AssertionError(f'expected errno {err}, call succeeded')


# ------------------------------------------------------------------------------------------
# the harness
# ------------------------------------------------------------------------------------------

@dataclass
class Bound:
    """A dma-buf the test exported and bound: the application's view."""

    id: int
    dmabuf: DmaBuf
    fd: int


@dataclass
class Rig:
    env: DriverEnv
    kernel: Kernel
    netdev: Netdev
    nl: NetlinkSocket
    frames_sent: int = 0
    rng: random.Random = field(default_factory=random.Random)
    seen_base: int = 0
    delivered_base: int = 0
    tx_sent_base: int = 0
    wire_base: int = 0

    @classmethod
    async def create(cls, env: DriverEnv, *, rx_pending: int = 64, split: bool = True,
                     mtu: int = 1500, channels: int | None = None, num_rxq: int = 1) -> Rig:
        kernel = Kernel()
        netdev = Netdev(kernel, env.hw)
        await netdev.probe()
        if netdev.num_rx_queues < num_rxq:
            raise Unsupported(f'needs {num_rxq} RX queues, the NIC has {netdev.num_rx_queues}')
        if channels is not None:
            await netdev.set_channels(channels)
        await netdev.set_ringparam(rx_pending=rx_pending,
                                   tcp_data_split=split, hds_thresh=0)
        await netdev.set_mtu(mtu)
        await netdev.open()
        rig = cls(env, kernel, netdev, kernel.netlink_open(),
                  rng=random.Random(getattr(env, 'seed', 0)))
        rig.seen_base = await rig.frames_seen()
        rig.delivered_base = await rig.hw('RX_FRAMES')
        if netdev.netmem_tx:
            rig.tx_sent_base = (await netdev.tx_hw_stats())['TX_FRAMES']
            rig.wire_base = len(getattr(env, 'tx_frames', None) or [])
        return rig

    # --- wire and NAPI ----------------------------------------------------------------------

    async def send(self, frames: list[bytes]) -> None:
        for f in frames:
            await self.env.send(f)
            self.frames_sent += 1

    async def frames_seen(self) -> int:
        stats = await self.netdev.hw_stats()
        return sum(stats[n] for n in FRAME_COUNTERS)

    async def settle(self) -> None:
        """Wait until the NIC has counted every frame sent (delivered or dropped)."""
        for _ in range(SETTLE_POLLS):
            if await self.frames_seen() - self.seen_base >= self.frames_sent:
                return
            await self.env.hw.delay(SETTLE_NS)
        raise AssertionError(f'NIC saw {await self.frames_seen() - self.seen_base} of '
                             f'{self.frames_sent} frames')

    def frames_polled(self) -> int:
        """Frames the driver took off the completion rings (delivered or dropped at stop)."""
        return sum(q.stats.packets + q.stats.stop_drops
                   for q in (self.netdev.rx_queue(i) for i in range(self.netdev.num_rx_queues)))

    async def pump(self) -> int:
        """Settle, then run NAPI until every frame the NIC delivered has been polled (the
        completions of the last frames may land after the counter moved) and the rings are
        empty; frames handled."""
        await self.settle()
        total = 0
        for _ in range(SETTLE_POLLS):
            n = await self.netdev.poll()
            total += n
            if n:
                continue
            if self.frames_polled() >= await self.hw('RX_FRAMES') - self.delivered_base:
                return total + await self.tx_sync()
            await self.env.hw.delay(SETTLE_NS)
        raise AssertionError('completions missing: the NIC counted more frames than it wrote')

    def tx_outstanding(self) -> int:
        """Frames the driver handed to its TX queues (ring or qdisc) and has not seen
        complete yet."""
        return sum(len(tq.tx_buffers) + len(tq.qdisc) for tq in self.netdev.tx_queues)

    async def tx_sync(self) -> int:
        """Run NAPI until every frame the driver posted has completed (docs/tx.md: one
        completion per frame) and every frame the NIC counted as sent (`TX_FRAMES`) is on
        the env's captured TX wire: on the RTL a frame is counted when it is in the TX FIFO,
        before its last beat leaves. Immediate on the model. Frames handled."""
        if not self.netdev.netmem_tx:
            return 0
        wire = getattr(self.env, 'tx_frames', None)
        total = 0
        for _ in range(SETTLE_POLLS):
            if self.tx_outstanding():
                n = await self.netdev.poll()
                total += n
                if n:
                    continue
            else:
                sent = (await self.netdev.tx_hw_stats())['TX_FRAMES'] - self.tx_sent_base
                if wire is None or len(wire) - self.wire_base >= sent:
                    return total
            await self.env.hw.delay(SETTLE_NS)
        raise AssertionError(f'TX not done: {self.tx_outstanding()} frames outstanding, '
                             f'{len(wire or []) - self.wire_base} on the wire')

    async def hw(self, name: str) -> int:
        return (await self.netdev.hw_stats())[name]

    # --- dma-buf and binding ----------------------------------------------------------------

    def export(self, pages: int, chunk_pages: int = 16) -> tuple[DmaBuf, int]:
        dmabuf = self.env.dev.export_dmabuf(pages * PAGE_SIZE, chunk_size=chunk_pages * PAGE_SIZE,
                                            rng=self.rng)
        return dmabuf, self.kernel.dma_buf_fd(dmabuf)

    async def bind(self, queues: list[int] | tuple[int, ...] = (0,), pages: int = 256,
                   nl: NetlinkSocket | None = None) -> Bound:
        dmabuf, fd = self.export(pages)
        bid = await (nl or self.nl).bind_rx(self.netdev.ifindex, fd, list(queues))
        return Bound(bid, dmabuf, fd)

    # --- sockets ----------------------------------------------------------------------------

    def listen(self, port: int = 5201, ipv6: bool = False) -> Socket:
        s = self.kernel.socket(AF_INET6 if ipv6 else AF_INET, SOCK_STREAM)
        s.bind(('::' if ipv6 else '0.0.0.0', port))
        s.listen()
        return s

    async def connect(self, peer: TcpPeer, listener: Socket) -> Socket:
        """The three-way handshake: SYN, the driver's SYN-ACK (read off the TX wire when the
        backend captures it, else the ISS of the request socket), the ACK; then accept."""
        await self.send([peer.syn()])
        await self.pump()
        assert listener.sk is not None
        wire = getattr(self.env, 'tx_frames', None)
        iss = None
        if wire is not None and self.netdev.netmem_tx:
            from scapy.layers.inet import TCP
            from scapy.layers.l2 import Ether
            for f in reversed(wire):
                p = Ether(f)
                if TCP in p and p[TCP].flags == 'SA' and p[TCP].dport == peer.flow.sport \
                        and p[TCP].ack == peer.seq_of(0):
                    iss = p[TCP].seq
                    opts = dict(p[TCP].options)
                    assert opts.get('MSS') == self.netdev.mtu - (60 if peer.flow.ipv6 else 40), \
                        'the SYN-ACK carries our MSS'
                    break
            assert iss is not None, 'no SYN-ACK on the wire'
        else:
            iss = listener.sk.syn_queue[-1].iss
        expect_errno(errno.EAGAIN, listener.accept)      # not before the handshake's ACK
        await self.send([peer.handshake_ack(iss)])
        await self.pump()
        sock, _ = listener.accept()
        info = sock.tcp_info()
        assert info.state == TcpState.ESTABLISHED
        peer.snd_wnd = info.rcv_wnd
        return sock

    def window(self, peer: TcpPeer) -> int:
        """Bytes in flight that the posted payload buffers can take."""
        per_seg = -(-peer.mss // PAGE_SIZE)
        fit = self.netdev.ringparam.rx_pending // per_seg
        return min(getattr(self.env, 'window_bytes', 1 << 30), fit * peer.mss)

    async def transfer(self, peer: TcpPeer, reader: Reader, window: int | None = None,
                       max_stalls: int = 20) -> None:
        """Send the peer's stream, run NAPI, let the reader drain; retransmit from the last
        ACK when nothing moves (go-back-N), until everything is acknowledged and read."""
        window = window or self.window(peer)
        stalls = 0
        while True:
            frames = peer.next_frames(window)
            await self.send(frames)
            await self.pump()
            reader.drain()
            una = peer.snd_una
            info = reader.sock.tcp_info()
            peer.ack(info.rcv_nxt, info.rcv_wnd)
            if peer.done and (reader.eof or not peer.fin):
                return
            if not frames and peer.snd_una == una:
                stalls += 1
                assert stalls <= max_stalls, f'no progress at stream offset {peer.snd_una}'
                peer.rewind()

    async def finish(self) -> None:
        """Invariants every scenario ends with."""
        assert self.env.dev.cpu_reads == 0, 'the CPU read device memory'
        for b in list(self.kernel.devmem_bindings.values()):
            assert not b.warnings, b.warnings


@dataclass
class Reader:
    """The application: recvmsg in a loop, payload through the GPU accessor, tokens back
    (unless withheld), like Linux's ncdevmem."""

    sock: Socket
    dmabufs: dict[int, DmaBuf] = field(default_factory=dict)
    devmem: bool = True
    withhold: bool = False
    ctrl_msgs: int = 64
    bufsize: int = 1 << 20
    got: bytearray = field(default_factory=bytearray)
    held: list[int] = field(default_factory=list)
    devmem_bytes: int = 0
    linear_bytes: int = 0
    ordinary_bytes: int = 0
    frags: int = 0
    calls: int = 0
    eof: bool = False
    ids_seen: set[int] = field(default_factory=set)

    def take(self, m: RecvMsg) -> None:
        """Account one recvmsg result and append its bytes to `got`, in stream order."""
        self.calls += 1
        if not m.cmsgs:
            self.got += m.data
            self.ordinary_bytes += len(m.data)
            return
        pos = 0
        for c in m.cmsgs:
            d = c.data
            if c.is_linear:
                self.got += m.data[pos:pos + d.frag_size]
                pos += d.frag_size
                self.linear_bytes += d.frag_size
            else:
                self.got += self.dmabufs[d.dmabuf_id].gpu_read(d.frag_offset, d.frag_size)
                self.devmem_bytes += d.frag_size
                self.frags += 1
                self.ids_seen.add(d.dmabuf_id)
                self.held.append(d.frag_token)
        assert pos == len(m.data)
        assert m.nbytes == sum(c.data.frag_size for c in m.cmsgs)

    def drain(self) -> int:
        """Read until EAGAIN or end of stream; bytes read."""
        n = 0
        flags = MSG_SOCK_DEVMEM if self.devmem else 0
        while True:
            try:
                m = self.sock.recvmsg(self.bufsize, self.ctrl_msgs * CMSG_BYTES, flags)
            except KernelError as e:
                if e.errno == errno.EAGAIN:
                    break
                raise
            if m.nbytes == 0:
                self.eof = True
                break
            self.take(m)
            n += m.nbytes
            if not self.withhold:
                self.give_back()
        return n

    def give_back(self, count: int | None = None) -> int:
        """SO_DEVMEM_DONTNEED for the held tokens (128 entries per call)."""
        todo = self.held if count is None else self.held[:count]
        freed = 0
        for i in range(0, len(todo), 128):
            freed += self.sock.dontneed(todo[i:i + 128])
        self.held = self.held[len(todo):]
        return freed


def make_data(kind: str, n: int, seed: int = 1) -> bytes:
    if kind == 'pattern':
        return pattern(n, period=7)
    return random.Random(seed).randbytes(n)


# ------------------------------------------------------------------------------------------
# scenarios
# ------------------------------------------------------------------------------------------

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
    assert pool.in_use == in_use - 2, 'three tokens, two buffers (two tokens share one)'
    assert pool.in_use == len(nd.rx_queue(0).pay_bufs)
    await rig.nl.close()
    await rig.finish()


async def token_pressure(env: DriverEnv) -> None:
    """Withheld tokens drain the dma-buf: the ring is not refilled, the NIC drops and counts;
    returned tokens restore delivery; retransmissions fill the gap; the stream is exact."""
    pages, ring = 32, 16
    rig = await Rig.create(env, rx_pending=ring)
    nd = rig.netdev
    b = await rig.bind([0], pages=pages)
    listener = rig.listen()
    peer = TcpPeer()
    sock = await rig.connect(peer, listener)
    reader = Reader(sock, {b.id: b.dmabuf}, withhold=True)
    want = make_data('pattern', 3 * pages * peer.mss)
    peer.write(want)
    peer.shutdown()
    # send far more than the dma-buf can hold, in ring-sized bursts, reading but not returning
    while peer.snd_nxt < peer.end:
        await rig.send(peer.next_frames(ring * peer.mss))
        await rig.pump()
        reader.drain()
        peer.ack(sock.tcp_info().rcv_nxt)
        peer.snd_una = peer.snd_nxt  # the sender does not wait for ACKs here
    assert len(reader.got) == pages * peer.mss, 'exactly one dma-buf worth was delivered'
    assert bytes(reader.got) == want[:len(reader.got)]
    assert len(reader.held) == pages
    drops = await rig.hw('RX_DROP_NO_PAY_BUF')
    assert drops == len(want) // peer.mss - pages, 'every later segment was dropped'
    assert nd.qstats(0).alloc_fail > 0
    qs = await nd.qstats_get()
    assert qs['rx-alloc-fail'] > 0 and qs['rx-hw-drops'] == qs['rx-hw-drop-overruns'] == drops
    binding = rig.kernel.devmem_lookup(b.id)
    assert binding is not None and binding.pages_free == 0
    # return the tokens: the pool refills the ring, the sender retransmits from the ACK
    assert reader.give_back() == pages
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


async def require_steering(env: DriverEnv, netdev: Netdev) -> None:
    """RSS and n-tuple steering: the env says the NIC classifies frames, driver/ethtool.py is
    there and the NIC has the RSS registers (RSS_KEY reads back what was written)."""
    if not getattr(env, 'steering', False):
        raise Unsupported('the NIC does not classify frames (RSS, n-tuple steering) here')
    if importlib.util.find_spec('driver.ethtool') is None:
        raise Unsupported('driver/ethtool.py is not there')
    from driver import regs
    addr = regs.rss_key_reg(0)
    old = await netdev.hw.read32(addr)
    await netdev.hw.write32(addr, 0x5A5A_A5A5)
    ok = await netdev.hw.read32(addr) == 0x5A5A_A5A5
    await netdev.hw.write32(addr, old)
    assert ok, 'RSS_KEY does not read back what was written: the RSS/steering block is broken'


RSS_KEY = bytes(range(0x6D, 0x6D + 40))


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

def tx_wire(env: DriverEnv) -> list[bytes]:
    frames = getattr(env, 'tx_frames', None)
    if frames is None:
        raise Unsupported('the environment does not capture TX frames')
    return frames


def zc_cmsg(binding_id: int) -> list[tuple[int, int, bytes]]:
    """The SCM_DEVMEM_DMABUF control message of a devmem send."""
    return [(SOL_SOCKET, SCM_DEVMEM_DMABUF, struct.pack('<I', binding_id))]


def check_tcp_frame(frame: bytes) -> Any:
    """Parse with scapy; the IPv4 header and TCP checksums must be what scapy computes from
    the bytes (RFC 791/793/8200 pseudo-header). Returns the scapy packet."""
    from scapy.layers.inet import IP, TCP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Ether
    pkt = Ether(frame)
    assert len(frame) >= 60, f'a {len(frame)}-byte frame went out (minimum 60)'
    tcp = pkt[TCP]
    if IP in pkt:
        ip = pkt[IP]
        want_ip = ip.chksum
        ip2 = ip.copy()
        del ip2.chksum
        assert IP(bytes(ip2))[IP].chksum == want_ip, 'bad IPv4 header checksum'
        l3, plen = IP, ip.len - ip.ihl * 4
    else:
        l3, plen = IPv6, pkt[IPv6].plen
    got = tcp.chksum
    # rebuild from the L3 header down, padding dropped, so scapy recomputes over the segment
    raw = bytes(pkt[l3])[:(pkt[l3].ihl * 4 + plen) if l3 is IP else 40 + plen]
    re = l3(raw)
    del re[TCP].chksum
    assert l3(bytes(re))[TCP].chksum == got, f'bad TCP checksum 0x{got:04x}'
    return pkt


def tcp_payload(pkt: Any) -> bytes:
    from scapy.layers.inet import IP, TCP
    from scapy.layers.inet6 import IPv6
    tcp = pkt[TCP]
    if IP in pkt:
        n = pkt[IP].len - pkt[IP].ihl * 4 - tcp.dataofs * 4
    else:
        n = pkt[IPv6].plen - tcp.dataofs * 4
    return bytes(tcp.payload)[:n]


async def tx_connection(env: DriverEnv, *, ipv6: bool = False, mtu: int = 1500,
                        pages: int = 64) -> tuple[Rig, Socket, TcpPeer, Bound]:
    """A Rig with an accepted connection and a TX binding of `pages` pages whose bytes the
    GPU filled with random data; SO_ZEROCOPY on."""
    rig = await Rig.create(env, rx_pending=32, mtu=mtu)
    if not rig.netdev.netmem_tx:
        raise Unsupported('the NIC has no TX path (TX_CAPS.num_txq == 0)')
    peer = TcpPeer(Flow(ipv6=ipv6), mtu=mtu)
    sock = await rig.connect(peer, rig.listen(ipv6=ipv6))
    dmabuf, fd = rig.export(pages, chunk_pages=4)
    bid = await rig.nl.bind_tx(rig.netdev.ifindex, fd)
    dmabuf.gpu_write(0, random.Random(11).randbytes(dmabuf.size))
    sock.setsockopt(SOL_SOCKET, SO_ZEROCOPY, 1)
    return rig, sock, peer, Bound(bid, dmabuf, fd)


async def tx_settle(rig: Rig, env: DriverEnv, frames: int) -> None:
    """Wait until the NIC has finished `frames` more TX frames (sent or failed)."""
    names = ('TX_FRAMES', 'TX_ERR_BAD_SEG', 'TX_ERR_BAD_LEN', 'TX_ERR_BAD_CSUM',
             'TX_DMA_RD_ERR', 'TX_DESC_RD_ERR')
    for _ in range(SETTLE_POLLS):
        hw = await rig.netdev.tx_hw_stats()
        if sum(hw[n] for n in names) >= frames:
            return
        await env.hw.delay(SETTLE_NS)
    raise AssertionError(f'the NIC finished {sum(hw[n] for n in names)} of {frames} TX frames')


def driver_seq_end(frames: list[bytes], port: int) -> int | None:
    """The highest sequence number the driver's segments to `port` reached (seq + length,
    SYN and FIN counting one), or None."""
    from scapy.layers.inet import TCP
    top = None
    for f in frames:
        pkt = check_tcp_frame(f)
        t = pkt[TCP]
        if t.dport != port or 'R' in t.flags:
            continue
        end = (t.seq + len(tcp_payload(pkt)) + int('S' in t.flags) + int('F' in t.flags)) & 0xFFFF_FFFF
        if top is None or ((end - top) & 0xFFFF_FFFF) < 0x8000_0000:
            top = end
    return top


async def peer_acks_all(rig: Rig, peer: TcpPeer, sock: Socket, wire: list[bytes],
                        rounds: int = 200) -> int:
    """The peer acknowledges what it received from the driver (the highest end sequence
    on the wire), the driver polls and sends what the window now allows, until everything
    the socket queued is acknowledged. Returns the ACKs sent."""
    sk = sock.sk
    assert sk is not None
    acks = 0
    for _ in range(rounds):
        await rig.netdev.poll()
        if sk.snd_una == sk.write_seq and not sk.write_queue:
            return acks
        top = driver_seq_end(wire, peer.flow.sport)
        if top is not None and top != peer.ack_seq:
            await rig.send([peer.ack_frame(top)])
            acks += 1
        await rig.pump()
    raise AssertionError(f'not acknowledged: snd_una {sk.snd_una} write_seq {sk.write_seq}')


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
