"""The scenario harness: `Rig` (the driver brought up on an environment, the wire, NAPI,
dma-buf binding, sockets, the TCP transfer loop), `Reader` (the application: recvmsg with
devmem cmsgs, payload through the GPU accessor, tokens back, like Linux's ncdevmem),
`Bound`, and the checks every scenario uses (`expect_errno`, `Unsupported`,
`require_steering`). A scenario uses only these, the driver's public API and the env's MAC
side, so it runs unchanged on the model and on the RTL.
"""
from __future__ import annotations

import errno
import importlib.util
import random
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from driver import regs
from driver.devmem import NetlinkSocket
from driver.errors import KernelError
from driver.headers import AF_INET, AF_INET6
from driver.kernel import Kernel
from driver.netdev import Netdev
from driver.socket import CMSG_SPACE, MSG_SOCK_DEVMEM, SOCK_STREAM, DmabufCmsg, RecvMsg, Socket
from driver.tcp import TcpState
from models.device_memory import DmaBuf
from models.host_memory import PAGE_SIZE
from tb.frames import pattern
from tb.scenario.env import DriverEnv
from tb.failure import sim_ns, waves_command
from tb.scenario.peer import TcpPeer

CMSG_BYTES = CMSG_SPACE(24)
FRAME_COUNTERS = ('RX_FRAMES', 'RX_DROP_RUNT', 'RX_DROP_FCS', 'RX_DROP_OVERSIZE', 'RX_DROP_FIFO',
                  'RX_DROP_HDR_ERR', 'RX_DROP_QUEUE_OFF', 'RX_DROP_NO_HDR_BUF',
                  'RX_DROP_NO_PAY_BUF', 'RX_DROP_CQ_FULL')
SETTLE_POLLS = 5000
SETTLE_NS = 200


def _waited(t0: float | None) -> str:
    now = sim_ns()
    if t0 is None or now is None:
        return f'{SETTLE_POLLS} polls'
    return f'{(now - t0) / 1000:.0f} us of simulated time ({SETTLE_POLLS} polls)'


def _waves(t0: float | None) -> str:
    now = sim_ns()
    return f'\n  waves: {waves_command(t0, now)}' if t0 is not None and now is not None else ''


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
        if getattr(env, 'rx_mpb', False):
            await netdev.set_priv_flags({'rx-mpb': True})
            await netdev.set_coalesce({'rx-frames': netdev.rx_frames_max})
        await netdev.open()
        rig = cls(env, kernel, netdev, kernel.netlink_open(),
                  rng=random.Random(getattr(env, 'seed', 0)))
        rig.seen_base = await rig.frames_seen()
        rig.delivered_base = await rig.hw('RX_FRAMES')
        if netdev.netmem_tx:
            rig.tx_sent_base = await env.hw.read32(regs.TX_FRAMES)
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
        t0 = sim_ns()
        for _ in range(SETTLE_POLLS):
            if await self.frames_seen() - self.seen_base >= self.frames_sent:
                return
            await self.env.hw.delay(SETTLE_NS)
        raise AssertionError(f'NIC saw {await self.frames_seen() - self.seen_base} of '
                             f'{self.frames_sent} frames: waited {_waited(t0)} for its frame counters '
                             f'(RX_FRAMES and the RX_DROP_* counters) to count every frame sent' + _waves(t0))

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
        t0 = sim_ns()
        for _ in range(SETTLE_POLLS):
            n = await self.netdev.poll()
            total += n
            if n:
                continue
            if self.frames_polled() >= await self.hw('RX_FRAMES') - self.delivered_base:
                return total + await self.tx_sync()
            await self.env.hw.delay(SETTLE_NS)
        raise AssertionError(f'completions missing: the NIC counted '
                             f'{await self.hw("RX_FRAMES") - self.delivered_base} frames, the driver polled '
                             f'{self.frames_polled()}: waited {_waited(t0)} for their completions' + _waves(t0))

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
        t0 = sim_ns()
        for _ in range(SETTLE_POLLS):
            if self.tx_outstanding():
                n = await self.netdev.poll()
                total += n
                if n:
                    continue
            else:
                sent = await self.env.hw.read32(regs.TX_FRAMES) - self.tx_sent_base
                if wire is None or len(wire) - self.wire_base >= sent:
                    return total
            await self.env.hw.delay(SETTLE_NS)
        raise AssertionError(f'TX not done: {self.tx_outstanding()} frames outstanding, '
                             f'{len(wire or []) - self.wire_base} on the wire: waited {_waited(t0)} for '
                             f'their TX completions and for TX_FRAMES frames on the wire' + _waves(t0))

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

    def pieces_per_page(self, mss: int) -> int:
        """Segments of `mss` bytes one payload page takes: one, or as many as fit in strides
        with multi-packet payload buffers (docs/rx-rules.md)."""
        if not self.netdev.priv_flags['rx-mpb']:
            return 1
        stride = self.netdev.rx_mpb_stride
        return PAGE_SIZE // (-(-mss // stride) * stride)

    async def flood(self, peer: TcpPeer, reader: Reader | Any, burst: int) -> None:
        """Send the peer's whole stream in bursts of `burst` bytes, pumping and draining the
        reader after each, as a sender that does not wait for ACKs (or the window) would."""
        while peer.snd_nxt < peer.end:
            await self.send(peer.next_frames(burst))
            await self.pump()
            reader.drain()
            peer.ack(reader.sock.tcp_info().rcv_nxt)
            peer.snd_una = peer.snd_nxt

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
    offsets: list[int] = field(default_factory=list)
    """The dma-buf offset of each held token's fragment (same order as `held`)."""
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
        frags: list[DmabufCmsg] = []
        for c in m.cmsgs:
            d = c.data
            if not isinstance(d, DmabufCmsg):
                raise AssertionError(f"recvmsg returned a non-devmem control message {c}")
            frags.append(d)
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
                self.offsets.append(d.frag_offset)
        assert pos == len(m.data)
        assert m.nbytes == sum(d.frag_size for d in frags)

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
        self.offsets = self.offsets[len(todo):]
        return freed


def make_data(kind: str, n: int, seed: int = 1) -> bytes:
    if kind == 'pattern':
        return pattern(n, period=7)
    return random.Random(seed).randbytes(n)


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
"""The RSS key the steering scenarios program (any 40 bytes; this one is easy to spot)."""
