"""The driver's TCP as a real endpoint, on the golden model: two driver instances on two
NicModels wired back to back (a lossy wire when asked), time from a virtual clock advanced to
the next timer when nothing else moves. Expectations from RFC 793/9293 (handshake, RST
rules, FIN states), RFC 6298 (RTO, backoff), RFC 5681 (fast retransmit), and the devmem spec
(notifications once acknowledged). The real Linux stack as the peer: tests/nicsim/test_live.py.
"""
from __future__ import annotations

import asyncio
import errno
import random
import struct
from collections import deque
from dataclasses import dataclass, field

import pytest
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

from driver.backends.model import ModelHw
from driver.headers import AF_INET
from driver.kernel import Kernel
from driver.netdev import Netdev
from driver.socket import (MSG_ZEROCOPY, SCM_DEVMEM_DMABUF, SO_RCVBUF, SO_ZEROCOPY, SOCK_STREAM,
                           SOL_SOCKET, Socket)
from driver.tcp import TcpState
from models.host_memory import PAGE_SIZE
from tb.frames import pad
from tb.scenario import Reader, expect_errno
from tb.scenario.tx import check_tcp_frame


@dataclass
class Host:
    hw: ModelHw
    kernel: Kernel
    nd: Netdev
    ip: str
    inbox: deque[bytes] = field(default_factory=deque)


@dataclass
class Link:
    a: Host
    b: Host
    drop_rate: float = 0.0
    rng: random.Random = field(default_factory=lambda: random.Random(3))
    drop_next: dict[str, int] = field(default_factory=dict)
    """Frames to drop on purpose: 'ab' / 'ba' -> count of the next frames that way."""
    sent: dict[str, list[bytes]] = field(default_factory=lambda: {'ab': [], 'ba': []})
    dropped: int = 0

    def wire(self, way: str, dst: Host):
        def on_tx(frame: bytes) -> None:
            self.sent[way].append(frame)
            if self.drop_next.get(way, 0):
                self.drop_next[way] -= 1
                self.dropped += 1
                return
            if self.drop_rate and self.rng.random() < self.drop_rate:
                self.dropped += 1
                return
            dst.inbox.append(frame)
        return on_tx

    async def step(self) -> int:
        n = 0
        for h in (self.a, self.b):
            while h.inbox:
                await h.hw.wire.send(h.inbox.popleft())
                n += 1
            await h.nd.poll()
        return n + len(self.a.inbox) + len(self.b.inbox)

    async def run(self, until, limit_s: float = 600.0) -> None:  # type: ignore[no-untyped-def]
        """Pump until `until()`; when nothing moves, jump the clock to the next timer."""
        for _ in range(200_000):
            if until():
                return
            if await self.step() or until():
                continue
            nxt = [t for t in (h.kernel.tcp.next_timer_ns() for h in (self.a, self.b))
                   if t is not None]
            now = self.a.hw.clock.now_ns()
            assert nxt, f"nothing moves and no timer is armed: {[(sk.state, sk.timer_ns) for h in (self.a, self.b) for sk in h.kernel.tcp.established.values()]}"
            assert now < limit_s * 1e9, 'gave up (virtual time limit)'
            jump = max(0, min(nxt) - now)
            for h in (self.a, self.b):
                h.hw.clock.advance(jump)
        raise AssertionError('no end')


async def link(drop_rate: float = 0.0, mtu: int = 1500, devmem_rx_b: bool = False,
               tso: bool = False) -> Link:
    """Two hosts back to back; `tso`: their NICs have TSO (the model of docs/tx.md with it,
    `TX_OFFLOADS.tso` 1: the driver turns TSO on)."""
    hosts = []
    for i, (ip, mac) in enumerate((('10.1.0.1/24', '020000000a01'), ('10.1.0.2/24', '020000000a02'))):
        hw = ModelHw(seed=i)
        hw.nic.tx.tso = tso
        k = Kernel()
        nd = Netdev(k, hw, name=f'eth{i}')
        nd.dev_addr = bytes.fromhex(mac)
        await nd.probe()
        await nd.set_ringparam(rx_pending=64, tcp_data_split=True, hds_thresh=0)
        await nd.set_mtu(mtu)
        await nd.open()
        nd.add_ip(ip)
        hosts.append(Host(hw, k, nd, ip.split('/')[0]))
    a, b = hosts
    ln = Link(a, b, drop_rate)
    a.hw.wire.on_tx = ln.wire('ab', b)
    b.hw.wire.on_tx = ln.wire('ba', a)
    a.kernel.neigh_add(b.ip, b.nd.dev_addr)
    b.kernel.neigh_add(a.ip, a.nd.dev_addr)
    return ln


def listen(h: Host, port: int) -> Socket:
    s = h.kernel.socket(AF_INET, SOCK_STREAM)
    s.bind(('0.0.0.0', port))
    s.listen()
    return s


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


def tcp_of(frame: bytes) -> TCP:
    return Ether(frame)[TCP]


async def connected(ln: Link, client: Host, server: Host, port: int = 7000) -> tuple[Socket, Socket]:
    lst = listen(server, port)
    c = client.kernel.socket(AF_INET, SOCK_STREAM)
    await c.connect((server.ip, port))
    accepted: list[Socket] = []

    def done() -> bool:
        if not accepted:
            try:
                accepted.append(lst.accept()[0])
            except OSError:
                return False
        return c.tcp_info().state == TcpState.ESTABLISHED
    await ln.run(done)
    return c, accepted[0]


@pytest.mark.parametrize('way', ['a-connects', 'b-connects'])
def test_three_way_handshake_both_ways(way: str) -> None:
    """SYN (MSS option) -> SYN-ACK (MSS option, ack = ISN + 1) -> ACK; the listener hands
    the connection out only after the ACK; both ends ESTABLISHED."""
    async def body() -> None:
        ln = await link()
        client, server = (ln.a, ln.b) if way == 'a-connects' else (ln.b, ln.a)
        cw, sw = ('ab', 'ba') if way == 'a-connects' else ('ba', 'ab')
        lst = listen(server, 7000)
        c = client.kernel.socket(AF_INET, SOCK_STREAM)
        await c.connect((server.ip, 7000))
        assert c.tcp_info().state == TcpState.SYN_SENT
        syn = tcp_of(ln.sent[cw][0])
        assert syn.flags == 'S' and dict(syn.options)['MSS'] == 1460
        await server.hw.wire.send(server.inbox.popleft())
        await server.nd.poll()
        synack = tcp_of(ln.sent[sw][0])
        assert synack.flags == 'SA' and synack.ack == syn.seq + 1
        assert dict(synack.options)['MSS'] == 1460
        expect_errno(errno.EAGAIN, lst.accept)       # SYN_RECV is not accept-able
        await ln.run(lambda: c.tcp_info().state == TcpState.ESTABLISHED)
        await ln.step()
        s, _ = lst.accept()
        assert s.tcp_info().state == TcpState.ESTABLISHED
        ack = tcp_of(ln.sent[cw][1])
        assert ack.flags == 'A' and ack.ack == synack.seq + 1 and ack.seq == syn.seq + 1
        for f in ln.sent['ab'] + ln.sent['ba']:
            check_tcp_frame(f)
    run(body())


def test_rst_for_no_socket_and_refused_connect() -> None:
    """A SYN to a port nobody listens on: RST|ACK, seq 0, ack = ISN + 1 (RFC 793 3.4);
    connect fails with ECONNREFUSED. A stray ACK gets RST with seq = its ACK number; a RST
    is never answered."""
    async def body() -> None:
        ln = await link()
        c = ln.a.kernel.socket(AF_INET, SOCK_STREAM)
        await c.connect((ln.b.ip, 9))
        await ln.run(lambda: c.tcp_info().state == TcpState.CLOSED)
        syn, rst = tcp_of(ln.sent['ab'][0]), tcp_of(ln.sent['ba'][0])
        assert rst.flags == 'RA' and rst.seq == 0 and rst.ack == syn.seq + 1
        expect_errno(errno.ECONNREFUSED, c.recv, 10)
        assert ln.b.kernel.tcp.mib.NoSocket == 1 and ln.b.kernel.tcp.mib.OutRsts == 1
        stray = bytes(Ether(src='02:00:00:00:0a:01', dst='02:00:00:00:0a:02')
                      / IP(src=ln.a.ip, dst=ln.b.ip) / TCP(sport=1234, dport=80, seq=5, ack=777,
                                                           flags='A'))
        await ln.b.hw.wire.send(pad(stray))
        await ln.b.nd.poll()
        r = tcp_of(ln.sent['ba'][-1])
        assert r.flags == 'R' and r.seq == 777
        n = len(ln.sent['ba'])
        await ln.b.hw.wire.send(pad(bytes(Ether(src='02:00:00:00:0a:01', dst='02:00:00:00:0a:02')
                                          / IP(src=ln.a.ip, dst=ln.b.ip)
                                          / TCP(sport=1234, dport=80, seq=5, flags='R'))))
        await ln.b.nd.poll()
        assert len(ln.sent['ba']) == n, 'no RST for a RST'
    run(body())


def test_bad_ack_in_syn_sent_gets_rst() -> None:
    """In SYN-SENT a SYN-ACK acknowledging something else than ISN + 1 is answered with
    <SEQ=SEG.ACK><CTL=RST> and the connection attempt goes on (RFC 793 3.4, 9293 3.10.7.3)."""
    async def body() -> None:
        ln = await link()
        c = ln.a.kernel.socket(AF_INET, SOCK_STREAM)
        await c.connect((ln.b.ip, 7000))
        ln.b.inbox.clear()
        syn = tcp_of(ln.sent['ab'][0])
        bad = bytes(Ether(src='02:00:00:00:0a:02', dst='02:00:00:00:0a:01')
                    / IP(src=ln.b.ip, dst=ln.a.ip)
                    / TCP(sport=7000, dport=syn.sport, seq=1000, ack=syn.seq + 99, flags='SA'))
        await ln.a.hw.wire.send(pad(bad))
        await ln.a.nd.poll()
        r = tcp_of(ln.sent['ab'][-1])
        assert r.flags == 'R' and r.seq == syn.seq + 99
        assert c.tcp_info().state == TcpState.SYN_SENT
    run(body())


def test_bad_ack_in_syn_recv_gets_rst_and_no_connection() -> None:
    async def body() -> None:
        ln = await link()
        lst = listen(ln.b, 7000)
        syn = Ether(src='02:00:00:00:0a:01', dst='02:00:00:00:0a:02') / IP(src=ln.a.ip, dst=ln.b.ip)
        await ln.b.hw.wire.send(pad(bytes(syn / TCP(sport=4000, dport=7000, seq=100, flags='S'))))
        await ln.b.nd.poll()
        synack = tcp_of(ln.sent['ba'][-1])
        await ln.b.hw.wire.send(pad(bytes(syn / TCP(sport=4000, dport=7000, seq=101,
                                                    ack=synack.seq + 5, flags='A'))))
        await ln.b.nd.poll()
        r = tcp_of(ln.sent['ba'][-1])
        assert r.flags == 'R' and r.seq == synack.seq + 5
        expect_errno(errno.EAGAIN, lst.accept)
    run(body())


def test_lost_syn_is_retransmitted_after_one_second() -> None:
    """RFC 6298 2.1: the first RTO is 1 s; the SYN goes again, then the handshake ends."""
    async def body() -> None:
        ln = await link()
        ln.drop_next['ab'] = 1
        t0 = ln.a.hw.clock.now_ns()
        c, s = await connected(ln, ln.a, ln.b)
        syns = [tcp_of(f) for f in ln.sent['ab'] if tcp_of(f).flags == 'S']
        assert len(syns) == 2 and syns[0].seq == syns[1].seq
        assert ln.a.hw.clock.now_ns() - t0 >= 1_000_000_000
        assert ln.a.kernel.tcp.mib.TCPTimeouts == 1
    run(body())


@pytest.mark.parametrize('drop_rate', [0.0, 0.05])
def test_devmem_transfer_over_a_lossy_wire(drop_rate: float) -> None:
    """256 KiB from A's dma-buf to B's devmem queue, frames dropped both ways: the stream
    is exact (B reads it through the GPU), retransmissions (timeouts and fast retransmits)
    filled the holes, every notification arrived once all was acknowledged, no CPU read."""
    async def body() -> None:
        ln = await link(drop_rate)
        rx_buf = ln.b.hw.dev.export_dmabuf(128 * PAGE_SIZE)
        rx_id = await ln.b.kernel.netlink_open().bind_rx(ln.b.nd.ifindex,
                                                         ln.b.kernel.dma_buf_fd(rx_buf), [0])
        tx_buf = ln.a.hw.dev.export_dmabuf(64 * PAGE_SIZE, chunk_size=4 * PAGE_SIZE)
        tx_id = await ln.a.kernel.netlink_open().bind_tx(ln.a.nd.ifindex,
                                                         ln.a.kernel.dma_buf_fd(tx_buf))
        data = random.Random(4).randbytes(tx_buf.size)
        tx_buf.gpu_write(0, data)
        c, s = await connected(ln, ln.a, ln.b)
        c.setsockopt(SOL_SOCKET, SO_ZEROCOPY, 1)
        cm = [(SOL_SOCKET, SCM_DEVMEM_DMABUF, struct.pack('<I', tx_id))]
        for off in range(0, tx_buf.size, 32 << 10):
            await c.sendmsg([(off, 32 << 10)], cm, MSG_ZEROCOPY)
        c.shutdown()
        reader = Reader(s, {rx_id: rx_buf})
        notes: list[tuple[int, int]] = []

        def done() -> bool:
            reader.drain()
            notes.extend(c.zerocopy_notifications())
            return reader.eof and c.tcp_info().state == TcpState.FIN_WAIT2
        await ln.run(done)
        assert bytes(reader.got) == data and reader.devmem_bytes == len(data)
        assert sorted(i for lo, hi in notes for i in range(lo, hi + 1)) == list(range(8))
        mib = ln.a.kernel.tcp.mib
        if drop_rate:
            assert ln.dropped > 0 and mib.RetransSegs > 0
            assert mib.TCPFastRetrans + mib.TCPTimeouts > 0
        else:
            assert mib.RetransSegs == 0
        assert ln.a.hw.dev.cpu_reads == 0 and ln.b.hw.dev.cpu_reads == 0
        info = c.tcp_info()
        assert 200_000_000 <= info.rto_ns <= 120_000_000_000
    run(body())


def test_fin_both_ways_and_time_wait() -> None:
    """A closes first: FIN_WAIT1 -> FIN_WAIT2 (its FIN acknowledged) -> TIME_WAIT (B's FIN)
    -> CLOSED after 60 s; B: CLOSE_WAIT (reads EOF) -> LAST_ACK -> CLOSED. Bytes sent
    before the FIN arrive; sending after shutdown is EPIPE."""
    async def body() -> None:
        ln = await link()
        c, s = await connected(ln, ln.a, ln.b)
        await c.send(b'hello')
        c.shutdown()
        await ln.run(lambda: c.tcp_info().state == TcpState.FIN_WAIT2)
        assert s.tcp_info().state == TcpState.CLOSE_WAIT
        assert s.recv(100) == b'hello' and s.recv(100) == b''
        from tb.scenario import aexpect_errno
        await aexpect_errno(errno.EPIPE, c.send(b'x'))
        await s.send(b'bye')
        s.close()
        assert s.sk is not None and s.sk.state == TcpState.LAST_ACK
        await ln.run(lambda: c.tcp_info().state == TcpState.TIME_WAIT)
        assert c.recv(100) == b'bye' and c.recv(100) == b''
        await ln.run(lambda: s.sk.state == TcpState.CLOSED)      # type: ignore[union-attr]
        t = ln.a.hw.clock.now_ns()
        await ln.run(lambda: c.tcp_info().state == TcpState.CLOSED)
        assert ln.a.hw.clock.now_ns() - t >= 59_000_000_000, 'TIME_WAIT lasts 2 MSL (60 s)'
        assert not ln.a.kernel.tcp.established and not ln.b.kernel.tcp.established
    run(body())


def test_close_with_unread_data_sends_rst() -> None:
    """RFC 2525 / Linux `tcp_close`: unread data thrown away -> RST, the peer sees
    ECONNRESET."""
    async def body() -> None:
        ln = await link()
        c, s = await connected(ln, ln.a, ln.b)
        await c.send(b'unread')
        await ln.run(lambda: bool(s.sk and s.sk.receive_queue))
        s.close()
        await ln.run(lambda: c.tcp_info().state == TcpState.CLOSED)
        expect_errno(errno.ECONNRESET, c.recv, 10)
        assert ln.b.kernel.tcp.mib.TCPAbortOnData == 1
    run(body())


# --- RFC 7323 window scaling --------------------------------------------------------------

def _hdr(src: Host, dst: Host) -> Ether:
    return Ether(src=src.nd.dev_addr, dst=dst.nd.dev_addr) / IP(src=src.ip, dst=dst.ip)


def test_window_scale_negotiated_when_both_syns_carry_it() -> None:
    """Both SYNs carry the Window Scale option (RFC 7323 2.2), with the shift Linux offers for
    a 6 MiB tcp_rmem[2] (7); the SYN and SYN-ACK windows are unscaled (at most 65535); every
    later window field is the window >> 7 (2.3): a 128 KiB receive buffer is advertised, which
    the 16-bit field alone cannot say; the sender's snd_wnd is the field << 7."""
    async def body() -> None:
        ln = await link()
        c, s = await connected(ln, ln.a, ln.b)
        syn, synack = tcp_of(ln.sent['ab'][0]), tcp_of(ln.sent['ba'][0])
        assert syn.flags == 'S' and dict(syn.options)['WScale'] == 7
        assert synack.flags == 'SA' and dict(synack.options)['WScale'] == 7
        assert syn.window <= 0xFFFF and synack.window <= 0xFFFF
        for sock in (c, s):
            info = sock.tcp_info()
            assert (info.snd_wscale, info.rcv_wscale) == (7, 7)
        c.setsockopt(SOL_SOCKET, SO_ZEROCOPY, 1)
        await c.send(bytes(4000))
        await ln.run(lambda: c.tcp_info().bytes_acked == 4000)
        acks = [tcp_of(f) for f in ln.sent['ba'][1:]]
        assert acks and all(a.flags == 'A' and not a.options for a in acks)
        last = acks[-1]
        assert last.window << 7 > 0xFFFF, 'a window beyond 64 KiB, only expressible scaled'
        assert c.tcp_info().snd_wnd == last.window << 7
        assert (s.sk.rcv_wnd >> 7) == last.window and s.sk.rcv_wnd % 128 == 0
    run(body())


@pytest.mark.parametrize('offered', [None, 3, 15])
def test_window_scale_from_a_peer_syn(offered: int | None) -> None:
    """A SYN without the option: the SYN-ACK carries none and nothing is scaled either way
    (RFC 7323 2.2). With it: the SYN-ACK offers ours, the peer's windows are shifted by its
    shift, a shift above 14 taken as 14 (2.3), ours applied to what we advertise."""
    async def body() -> None:
        ln = await link()
        lst = listen(ln.b, 7000)
        opts = [('MSS', 1460)] + ([('WScale', offered)] if offered is not None else [])
        await ln.b.hw.wire.send(pad(bytes(_hdr(ln.a, ln.b) / TCP(sport=4000, dport=7000, seq=100,
                                                                   flags='S', window=1000, options=opts))))
        await ln.b.nd.poll()
        synack = tcp_of(ln.sent['ba'][-1])
        assert synack.flags == 'SA'
        got = dict(synack.options).get('WScale')
        assert got == (None if offered is None else 7)
        await ln.b.hw.wire.send(pad(bytes(_hdr(ln.a, ln.b) / TCP(sport=4000, dport=7000, seq=101,
                                                                   ack=synack.seq + 1, flags='A', window=100))))
        await ln.b.nd.poll()
        s, _ = lst.accept()
        info = s.tcp_info()
        shift = 0 if offered is None else min(offered, 14)
        assert (info.snd_wscale, info.rcv_wscale) == (shift, 0 if offered is None else 7)
        assert info.snd_wnd == 100 << shift
        await s.send(b'x' * 10)
        await ln.b.nd.poll()
        data = tcp_of(ln.sent['ba'][-1])
        assert bytes(data.payload) == b'x' * 10
        assert data.window == s.sk.rcv_wnd >> info.rcv_wscale
        if offered is None:
            assert s.sk.rcv_wnd <= 0xFFFF
    run(body())


def test_window_scale_refused_by_the_synack_is_off_both_ways() -> None:
    """Our SYN offered scaling; a SYN-ACK without the option turns it off (RFC 7323 2.2):
    our shift goes back to 0 and the peer's window is taken as it is."""
    async def body() -> None:
        ln = await link()
        c = ln.a.kernel.socket(AF_INET, SOCK_STREAM)
        await c.connect((ln.b.ip, 7000))
        ln.b.inbox.clear()
        syn = tcp_of(ln.sent['ab'][0])
        assert dict(syn.options)['WScale'] == 7
        await ln.a.hw.wire.send(pad(bytes(_hdr(ln.b, ln.a) / TCP(
            sport=7000, dport=syn.sport, seq=1000, ack=syn.seq + 1, flags='SA', window=50000,
            options=[('MSS', 1460)]))))
        await ln.a.nd.poll()
        info = c.tcp_info()
        assert info.state == TcpState.ESTABLISHED
        assert (info.snd_wscale, info.rcv_wscale) == (0, 0) and info.snd_wnd == 50000
        ack = tcp_of(ln.sent['ab'][-1])
        assert ack.flags == 'A' and ack.window == c.sk.rcv_wnd <= 0xFFFF
    run(body())


def test_so_rcvbuf_bounds_the_window_and_is_inherited() -> None:
    """SO_RCVBUF on the listener: the accepted socket has it (`sk_clone_lock`) and never
    advertises more than it (less what is queued unread); clamped to [2304, tcp_rmem[2]]."""
    async def body() -> None:
        ln = await link()
        lst = listen(ln.b, 7000)
        lst.setsockopt(SOL_SOCKET, SO_RCVBUF, 20000)
        assert lst.getsockopt(SOL_SOCKET, SO_RCVBUF) == 20000
        c = ln.a.kernel.socket(AF_INET, SOCK_STREAM)
        await c.connect((ln.b.ip, 7000))
        await ln.run(lambda: c.tcp_info().state == TcpState.ESTABLISHED)
        await ln.step()
        s, _ = lst.accept()
        assert s.getsockopt(SOL_SOCKET, SO_RCVBUF) == 20000
        await c.send(bytes(6000))
        await ln.run(lambda: c.tcp_info().bytes_acked == 6000)
        info = s.tcp_info()
        left = (20000 - 6000 + 127) & ~127           # the right edge kept, in units of 2^7
        assert c.tcp_info().snd_wnd <= left and info.rcv_wnd <= left
        s.recv(6000)
        assert s.tcp_info().rcv_wnd == 20000 & ~127
        s.setsockopt(SOL_SOCKET, SO_RCVBUF, 1)
        assert s.getsockopt(SOL_SOCKET, SO_RCVBUF) == 2304
        s.setsockopt(SOL_SOCKET, SO_RCVBUF, 1 << 30)
        assert s.getsockopt(SOL_SOCKET, SO_RCVBUF) == 6 << 20
    run(body())
