"""The TCP receive path, reading headers only (net/ipv4/tcp_ipv4.c, tcp_input.c).

`TcpStack.rcv` is what `netif_receive_skb` -> `ip_rcv` -> `tcp_v4_rcv` (or the IPv6 path)
does with an skb from NAPI: parse the headers from the skb head (host memory), pull them,
trim Ethernet padding, then look the 4-tuple up (`__inet_lookup_established`, then the
listener) and queue the data:

- in order (`tcp_queue_rcv`): appended to the receive queue, `rcv_nxt` advances, then the
  out-of-order queue is drained as far as it now fits;
- ahead of `rcv_nxt` (`tcp_data_queue_ofo`): kept in sequence order; a segment wholly covered
  by one already queued is dropped, queued ones wholly covered by a new one are dropped;
- behind `rcv_nxt` (a duplicate or retransmission) : dropped at once, its buffers recycled
  into the page pool's cache (freed in NAPI context); a partial overlap is trimmed;
- FIN (when it becomes in-order) advances `rcv_nxt` by one and ends the stream.

A SYN to a listening socket creates an established child straight away (there is no TX path
yet to answer SYN-ACK; `rcv_nxt` = ISN + 1) that `accept` returns. Sequence numbers are
32-bit and compared modulo 2^32 (`before`/`after`). Payload bytes are never read here: the
payload may be in device memory. L4 checksums are not verified (the CPU cannot read the
payload; the NIC would have to report checksum status, see docs/driver.md).
"""
from __future__ import annotations

import errno
import heapq
import ipaddress
from collections import deque
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from driver.errors import KernelError
from driver.headers import (IPPROTO_TCP, IPV4_HLEN, IPV6_HLEN, TCP_CSUM_OFFSET, TCP_HLEN,
                            HeaderError, IpAddress, PacketHeaders, TcpFlags, build_tcp_headers,
                            parse_headers)
from driver.netmem import NetIov
from driver.skbuff import (SO_EE_ORIGIN_ZEROCOPY, IpSummed, MsgZerocopy, SkBuff, SkbFrag,
                           SockExtendedErr, _put)

if TYPE_CHECKING:
    from driver.devmem import NetDevmemDmabufBinding
    from driver.kernel import Kernel
    from driver.netdev import Napi, Netdev

SEQ_MASK = 0xFFFF_FFFF
TOKEN_MAX = (1 << 31) - 1
"""Tokens are allocated in `sk_user_frags` with `xa_limit_31b` (1 .. 2^31-1)."""
DEFAULT_RCV_WND = 1 << 24


def before(a: int, b: int) -> bool:
    """`before(seq1, seq2)`: seq1 comes before seq2, modulo 2^32."""
    return ((a - b) & SEQ_MASK) >= 0x8000_0000


def after(a: int, b: int) -> bool:
    return before(b, a)


class TcpState(Enum):
    LISTEN = 'LISTEN'
    SYN_SENT = 'SYN_SENT'
    ESTABLISHED = 'ESTABLISHED'
    CLOSE_WAIT = 'CLOSE_WAIT'
    CLOSED = 'CLOSED'


@dataclass
class TcpMib:
    """Counters of the receive path (the netstat/nstat names where Linux has one)."""

    InSegs: int = 0
    InErrs: int = 0
    """Headers that did not parse, or a frame shorter than its IP length."""
    NotTcp: int = 0
    NoSocket: int = 0
    """Segments with no socket (Linux would answer RST)."""
    TCPDupData: int = 0
    """Segments wholly behind rcv_nxt (duplicates, retransmissions): dropped."""
    TCPPartialDup: int = 0
    """Segments partly behind rcv_nxt: trimmed."""
    TCPOFOQueue: int = 0
    TCPOFODup: int = 0
    """Out-of-order segments dropped because another covers them."""
    TCPOutOfWindow: int = 0
    TCPAfterFin: int = 0
    TCPPureAck: int = 0
    OutSegs: int = 0
    """Segments handed to a device (data, ACKs, SYN, SYN-ACK)."""
    OutNoRoutes: int = 0
    """Segments (mostly ACKs) not sent: the socket has no route or no neighbour."""
    TCPTxHwErrors: int = 0
    """Data segments the NIC completed with an error status (not sent; a real stack would
    retransmit them on its RTO)."""

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(eq=False)
class TcpSock:
    """`struct tcp_sock`, the receive side."""

    stack: TcpStack
    family: int
    state: TcpState
    laddr: IpAddress | None = None
    lport: int = 0
    raddr: IpAddress | None = None
    rport: int = 0
    irs: int = 0
    rcv_nxt: int = 0
    copied_seq: int = 0
    rcv_wnd: int = DEFAULT_RCV_WND
    receive_queue: deque[SkBuff] = field(default_factory=deque)
    ofo_queue: list[SkBuff] = field(default_factory=list)
    user_frags: dict[int, NetIov] = field(default_factory=dict)
    """`sk->sk_user_frags`: token -> net_iov pinned for the user."""
    accept_queue: deque[TcpSock] = field(default_factory=deque)
    fin_received: bool = False
    reset: bool = False
    bytes_received: int = 0
    # --- send side ----------------------------------------------------------------------
    iss: int = 0
    snd_una: int = 0
    snd_nxt: int = 0
    snd_wnd: int = 0
    dst_dev: Netdev | None = None
    """The device the route to `raddr` goes through (`__sk_dst_get(sk)->dev`)."""
    dst_mac: bytes | None = None
    """The neighbour's MAC address (the next hop is the peer: one link)."""
    ip_id: int = 0
    zckey: int = 0
    """`sk->sk_zckey`: the id of the next MSG_ZEROCOPY send call."""
    error_queue: deque[SockExtendedErr] = field(default_factory=deque)
    """`sk->sk_error_queue`: zero-copy notifications waiting for recvmsg(MSG_ERRQUEUE)."""
    synack_pending: bool = False
    zerocopy: bool = False
    """SOCK_ZEROCOPY (setsockopt SO_ZEROCOPY)."""
    bytes_sent: int = 0
    _token_next: int = 1
    _tokens_freed: list[int] = field(default_factory=list)

    @property
    def key(self) -> tuple:
        return (self.family, self.laddr, self.lport, self.raddr, self.rport)

    # --- user tokens (xa_alloc on sk_user_frags) -------------------------------------------

    def token_alloc(self) -> int:
        """The lowest free token, as `xa_alloc` with XA_FLAGS_ALLOC1 and `xa_limit_31b`."""
        if self._tokens_freed:
            return heapq.heappop(self._tokens_freed)
        if self._token_next > TOKEN_MAX:
            raise KernelError(errno.EBUSY, 'no free token')
        token = self._token_next
        self._token_next += 1
        return token

    def token_unalloc(self, token: int) -> None:
        """Give back a token that was allocated but not handed out."""
        heapq.heappush(self._tokens_freed, token)

    def token_put(self, token: int) -> NetIov | None:
        """`__xa_erase(&sk->sk_user_frags, token)`."""
        niov = self.user_frags.pop(token, None)
        if niov is not None:
            heapq.heappush(self._tokens_freed, token)
        return niov

    # --- receive ----------------------------------------------------------------------------

    def rcv_established(self, skb: SkBuff, h: PacketHeaders, napi: Napi | None) -> None:
        mib = self.stack.mib
        if self.state == TcpState.SYN_SENT:
            self._rcv_synsent(skb, h, napi)
            return
        if TcpFlags.ACK in h.flags and TcpFlags.RST not in h.flags:
            self._ack(h)
        if skb.len or skb.fin:
            self.stack.ack_sched(self)      # every data segment is answered (dups too)
        if TcpFlags.RST in h.flags:
            self.reset = True
            self.state = TcpState.CLOSED
            skb.free(napi)
            return
        if TcpFlags.SYN in h.flags:
            mib.TCPDupData += 1
            skb.free(napi)
            return
        if skb.len == 0 and not skb.fin:
            mib.TCPPureAck += 1
            skb.free(napi)
            return
        end = (skb.end_seq + int(skb.fin)) & SEQ_MASK
        if not after(end, self.rcv_nxt):
            mib.TCPDupData += 1
            skb.free(napi)
            return
        if self.fin_received:
            mib.TCPAfterFin += 1
            skb.free(napi)
            return
        if not before(skb.seq, (self.rcv_nxt + self.rcv_wnd) & SEQ_MASK):
            mib.TCPOutOfWindow += 1
            skb.free(napi)
            return
        if after(skb.seq, self.rcv_nxt):
            self._ofo_insert(skb, napi)
            return
        self._queue_in_order(skb, napi)
        self._ofo_drain(napi)

    def _ack(self, h: PacketHeaders) -> None:
        """`tcp_ack`: an ACK for new data moves snd_una; the window is remembered."""
        if after(h.ack_seq, self.snd_una) and not after(h.ack_seq, self.snd_nxt):
            self.snd_una = h.ack_seq
        if not before(h.ack_seq, self.snd_una):
            self.snd_wnd = h.window

    def _rcv_synsent(self, skb: SkBuff, h: PacketHeaders, napi: Napi | None) -> None:
        """`tcp_rcv_synsent_state_process`: a SYN-ACK acknowledging our SYN establishes."""
        ok = (TcpFlags.SYN in h.flags and TcpFlags.ACK in h.flags
              and h.ack_seq == (self.iss + 1) & SEQ_MASK)
        skb.free(napi)
        if TcpFlags.RST in h.flags and TcpFlags.ACK in h.flags:
            self.reset = True
            self.state = TcpState.CLOSED
            return
        if not ok:
            return
        self.irs = h.seq
        self.rcv_nxt = self.copied_seq = (h.seq + 1) & SEQ_MASK
        self.snd_una = h.ack_seq
        self.snd_wnd = h.window
        self.state = TcpState.ESTABLISHED
        self.stack.ack_sched(self)

    # --- send -------------------------------------------------------------------------------

    @property
    def mss(self) -> int:
        """`tcp_current_mss`: the route device's MTU less the IP and TCP headers (no options
        are sent)."""
        mtu = self.dst_dev.mtu if self.dst_dev is not None else 1500
        return mtu - (IPV4_HLEN if self.family == 2 else IPV6_HLEN) - TCP_HLEN

    @property
    def can_send(self) -> bool:
        return self.dst_dev is not None and self.dst_mac is not None and self.laddr is not None

    def build_skb(self, seq: int, flags: TcpFlags, payload_len: int,
                  linear: bytes = b'') -> SkBuff:
        """`tcp_transmit_skb` + `ip_queue_xmit` headers: an skb whose head holds Ethernet,
        IP and TCP headers (plus `linear` payload bytes), CHECKSUM_PARTIAL. The caller adds
        fragments for the rest of `payload_len`."""
        assert self.dst_dev is not None and self.dst_mac is not None
        assert self.laddr is not None and self.raddr is not None
        self.ip_id = (self.ip_id + 1) & 0xFFFF
        head, csum_start = build_tcp_headers(
            self.dst_dev.dev_addr, self.dst_mac, self.laddr, self.raddr, self.lport,
            self.rport, seq, self.rcv_nxt, flags, self.rcv_wnd, payload_len, self.ip_id)
        skb = SkBuff(head=head + linear, ip_summed=IpSummed.CHECKSUM_PARTIAL,
                     csum_start=csum_start, csum_offset=TCP_CSUM_OFFSET,
                     queue_mapping=self.flow_hash, seq=seq)
        return skb

    @property
    def flow_hash(self) -> int:
        """`sk->sk_txhash` stand-in: the same queue for every segment of the flow."""
        return (self.lport * 31 + self.rport) ^ int(self.raddr or 0)

    async def transmit(self, skb: SkBuff) -> bool:
        """`ip_queue_xmit` -> `dev_queue_xmit` on the route device."""
        assert self.dst_dev is not None
        self.stack.mib.OutSegs += 1
        return await self.dst_dev.dev_queue_xmit(skb)

    async def send_ack(self) -> None:
        """`tcp_send_ack` (or the SYN-ACK of a passive open: `tcp_v4_send_synack`)."""
        if not self.can_send:
            self.stack.mib.OutNoRoutes += 1
            return
        if self.synack_pending:
            self.synack_pending = False
            await self.transmit(self.build_skb(self.iss, TcpFlags.SYN | TcpFlags.ACK, 0))
            return
        await self.transmit(self.build_skb(self.snd_nxt, TcpFlags.ACK, 0))

    async def send_syn(self) -> None:
        """`tcp_connect`: the SYN of an active open."""
        self.snd_una = self.iss
        self.snd_nxt = (self.iss + 1) & SEQ_MASK
        await self.transmit(self.build_skb(self.iss, TcpFlags.SYN, 0))

    def _tx_done(self, skb: SkBuff) -> None:
        """The destructor of a data skb: runs when the driver frees it after its completion
        (or a drop)."""
        if skb.tx_status != 0:
            self.stack.mib.TCPTxHwErrors += 1

    async def sendmsg_segments(self, pieces: list[tuple[int, int]] | list[bytes],
                               binding: NetDevmemDmabufBinding | None,
                               uarg: MsgZerocopy | None, max_frags: int) -> int:
        """`tcp_sendmsg_locked`'s loop: cut the send into MSS-sized segments and transmit
        each. `pieces` are `(dma-buf offset, length)` with a binding (the payload becomes
        net_iov fragments, one per dma-buf page touched, never read: `skb_zerocopy_iter_stream`
        -> `zerocopy_fill_skb_from_devmem`), else bytes copied into the skb head. A segment
        also ends when it has `max_frags` fragments (`MAX_SKB_FRAGS`). Returns bytes sent."""
        mss = self.mss
        sent = 0
        work: list[tuple[int, int] | bytes] = list(pieces)
        total = sum(p[1] if isinstance(p, tuple) else len(p) for p in pieces)
        while work:
            seq = self.snd_nxt
            frags: list[SkbFrag] = []
            linear = bytearray()
            room = mss
            while work and room and len(frags) < max_frags:
                piece = work[0]
                if isinstance(piece, tuple):
                    assert binding is not None
                    off, n = piece
                    got = binding.get_niov_at(off)
                    assert got is not None, 'checked by sendmsg'
                    niov, page_off, page_left = got
                    k = min(n, room, page_left)
                    binding.get_net_iov(niov)
                    frags.append(SkbFrag(niov, page_off, k))
                    work[0] = (off + k, n - k)
                    if n - k == 0:
                        work.pop(0)
                else:
                    k = min(len(piece), room)
                    linear += piece[:k]
                    if k == len(piece):
                        work.pop(0)
                    else:
                        work[0] = piece[k:]
                room -= k
            n = mss - room
            last = sent + n == total
            flags = TcpFlags.ACK | (TcpFlags.PSH if last else TcpFlags(0))
            skb = self.build_skb(seq, flags, n, bytes(linear))
            skb.frags = frags
            if binding is not None:
                skb.frag_unref = binding.put_net_iov
            skb.destructor = self._tx_done
            if uarg is not None:
                skb.ubuf = uarg.get()
            self.snd_nxt = (self.snd_nxt + n) & SEQ_MASK
            self.bytes_sent += n
            sent += n
            await self.transmit(skb)
        return sent

    def zerocopy_notify(self, lo: int, length: int, code: int) -> None:
        """`__msg_zerocopy_callback`: queue `[lo, lo + length - 1]` on the error queue,
        merged into the last queued notification when it continues it
        (`skb_zerocopy_notif_merge`)."""
        if self.state == TcpState.CLOSED and self.stack.established.get(self.key) is not self:
            return                          # SOCK_DEAD: nobody to tell
        hi = (lo + length - 1) & SEQ_MASK
        tail = self.error_queue[-1] if self.error_queue else None
        if (tail is not None and tail.ee_origin == SO_EE_ORIGIN_ZEROCOPY
                and lo == (tail.ee_data + 1) & SEQ_MASK
                and ((tail.ee_data - tail.ee_info) & SEQ_MASK) + 1 + length < (1 << 32)):
            tail.ee_data = hi
            return
        self.error_queue.append(SockExtendedErr(0, SO_EE_ORIGIN_ZEROCOPY, 0, code, lo, hi))

    def _queue_in_order(self, skb: SkBuff, napi: Napi | None) -> None:
        """`tcp_queue_rcv` (+ `tcp_fin`): `skb` starts at or before rcv_nxt."""
        overlap = (self.rcv_nxt - skb.seq) & SEQ_MASK
        if overlap:
            self.stack.mib.TCPPartialDup += 1
            skb.trim_front(min(overlap, skb.len), napi)
            skb.seq = self.rcv_nxt
        if skb.len:
            self.receive_queue.append(skb)
            self.rcv_nxt = skb.end_seq
            self.bytes_received += skb.len
        if skb.fin:
            self.rcv_nxt = (self.rcv_nxt + 1) & SEQ_MASK
            self.fin_received = True
            if self.state == TcpState.ESTABLISHED:
                self.state = TcpState.CLOSE_WAIT
        if not skb.len:
            skb.free(napi)

    def _ofo_key(self, skb: SkBuff) -> int:
        return (skb.seq - self.rcv_nxt) & SEQ_MASK

    def _ofo_insert(self, skb: SkBuff, napi: Napi | None) -> None:
        """`tcp_data_queue_ofo`."""
        mib = self.stack.mib
        seq, end = skb.seq, (skb.end_seq + int(skb.fin)) & SEQ_MASK
        for other in self.ofo_queue:
            o_end = (other.end_seq + int(other.fin)) & SEQ_MASK
            if not after(other.seq, seq) and not before(o_end, end):
                mib.TCPOFODup += 1
                skb.free(napi)
                return
        keep = []
        for other in self.ofo_queue:
            o_end = (other.end_seq + int(other.fin)) & SEQ_MASK
            if not before(other.seq, seq) and not after(o_end, end):
                mib.TCPOFODup += 1
                other.free(napi)
            else:
                keep.append(other)
        key = self._ofo_key(skb)
        pos = next((i for i, o in enumerate(keep) if self._ofo_key(o) > key), len(keep))
        keep.insert(pos, skb)
        self.ofo_queue = keep
        mib.TCPOFOQueue += 1

    def _ofo_drain(self, napi: Napi | None) -> None:
        """`tcp_ofo_queue`: move what is now in order to the receive queue."""
        while self.ofo_queue and not after(self.ofo_queue[0].seq, self.rcv_nxt):
            skb = self.ofo_queue.pop(0)
            end = (skb.end_seq + int(skb.fin)) & SEQ_MASK
            if not after(end, self.rcv_nxt) or self.fin_received:
                self.stack.mib.TCPDupData += 1
                skb.free(napi)
                continue
            self._queue_in_order(skb, napi)

    # --- teardown ---------------------------------------------------------------------------

    def release_user_frags(self) -> int:
        """`tcp_release_user_frags`: drop every token's reference. Returns how many."""
        n = 0
        for niov in self.user_frags.values():
            _put(niov, None)
            n += 1
        self.user_frags.clear()
        self._tokens_freed.clear()
        self._token_next = 1
        return n

    def destroy(self) -> None:
        """`tcp_close` -> `inet_csk_destroy_sock`: tokens, queues, hash tables."""
        self.release_user_frags()
        while self.receive_queue:
            self.receive_queue.popleft().free(None)
        while self.ofo_queue:
            self.ofo_queue.pop().free(None)
        while self.accept_queue:
            self.accept_queue.popleft().destroy()
        self.stack.unhash(self)
        self.stack._ack_pending.pop(self, None)
        self.state = TcpState.CLOSED


class TcpStack:
    """The TCP layer of one kernel: hash tables, counters, the receive entry point."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.established: dict[tuple, TcpSock] = {}
        self.listeners: dict[tuple[int, int], list[TcpSock]] = {}
        self.mib = TcpMib()
        self.not_tcp_rx: int = 0
        self._ack_pending: dict[TcpSock, None] = {}
        self._iss = 0x1234_0000
        self._next_port = 32768

    # --- tables -----------------------------------------------------------------------------

    def hash_listener(self, sk: TcpSock) -> None:
        lst = self.listeners.setdefault((sk.family, sk.lport), [])
        for other in lst:
            if other.laddr is None or sk.laddr is None or other.laddr == sk.laddr:
                raise KernelError(errno.EADDRINUSE, f'port {sk.lport} in use')
        lst.append(sk)

    def unhash(self, sk: TcpSock) -> None:
        if sk.state == TcpState.LISTEN:
            lst = self.listeners.get((sk.family, sk.lport), [])
            if sk in lst:
                lst.remove(sk)
        elif self.established.get(sk.key) is sk:
            del self.established[sk.key]

    def lookup_listener(self, family: int, daddr: IpAddress, dport: int) -> TcpSock | None:
        for sk in self.listeners.get((family, dport), []):
            if sk.laddr is None or sk.laddr == daddr:
                return sk
        return None

    # --- receive ----------------------------------------------------------------------------

    def ack_sched(self, sk: TcpSock) -> None:
        """`inet_csk_schedule_ack`: an ACK goes out at the end of this NAPI poll (the
        delayed-ACK timer of this model; one ACK covers every segment of the poll)."""
        self._ack_pending[sk] = None

    async def flush_acks(self, dev: Netdev | None = None) -> int:
        """Send the scheduled ACKs (of sockets routed through `dev`, or all); ACKs sent."""
        n = 0
        for sk in list(self._ack_pending):
            if dev is not None and sk.dst_dev is not None and sk.dst_dev is not dev:
                continue
            del self._ack_pending[sk]
            if sk.state in (TcpState.CLOSED, TcpState.LISTEN):
                continue
            before_out = self.mib.OutSegs
            await sk.send_ack()
            n += self.mib.OutSegs - before_out
        return n

    def next_iss(self) -> int:
        """`secure_tcp_seq` stand-in: deterministic, different per connection."""
        self._iss = (self._iss + 0x0100_0000 + 12345) & SEQ_MASK
        return self._iss

    def route(self, daddr: IpAddress, iif: int = 0) -> Netdev | None:
        """The device the route to `daddr` goes through: the kernel's routing table, else
        (no route configured) the device the connection came in on."""
        dev = self.kernel.ip_route_output(daddr)
        if dev is None and iif:
            dev = self.kernel.dev_get_by_index(iif)
        return dev

    def rcv(self, skb: SkBuff, napi: Napi | None = None) -> None:
        """`netif_receive_skb` for an skb whose head holds all of its headers."""
        src_mac = skb.head[skb.data + 6:skb.data + 12]
        try:
            h = parse_headers(skb.head[skb.data:])
        except HeaderError:
            self.mib.InErrs += 1
            skb.free(napi)
            return
        if h.protocol != IPPROTO_TCP:
            self.mib.NotTcp += 1
            skb.free(napi)
            return
        skb.pull(h.pay_off)
        want = h.payload_len
        if skb.len < want:
            self.mib.InErrs += 1
            skb.free(napi)
            return
        skb.trim(want, napi)
        skb.seq = h.seq
        skb.fin = TcpFlags.FIN in h.flags
        self.mib.InSegs += 1
        sk = self.established.get((h.family, h.daddr, h.dport, h.saddr, h.sport))
        if sk is not None:
            sk.rcv_established(skb, h, napi)
            return
        listener = self.lookup_listener(h.family, h.daddr, h.dport)
        if listener is not None and TcpFlags.SYN in h.flags and TcpFlags.ACK not in h.flags:
            isn_next = (h.seq + 1) & SEQ_MASK
            child = TcpSock(self, h.family, TcpState.ESTABLISHED, h.daddr, h.dport, h.saddr,
                            h.sport, irs=h.seq, rcv_nxt=isn_next, copied_seq=isn_next)
            child.iss = self.next_iss()
            child.snd_una = child.iss
            child.snd_nxt = (child.iss + 1) & SEQ_MASK
            child.snd_wnd = h.window
            child.dst_dev = self.route(h.saddr, skb.skb_iif)
            child.dst_mac = self.kernel.neigh_lookup(h.saddr) or src_mac
            child.zerocopy = listener.zerocopy     # sock flags are cloned
            child.synack_pending = True
            self.ack_sched(child)
            self.established[child.key] = child
            listener.accept_queue.append(child)
            skb.free(napi)
            return
        self.mib.NoSocket += 1
        skb.free(napi)


def ip_addr(addr: str | IpAddress | None) -> IpAddress | None:
    """'' / '0.0.0.0' / '::' -> None (any address); else an ipaddress object."""
    if addr is None or addr == '':
        return None
    ip = ipaddress.ip_address(addr) if isinstance(addr, str) else addr
    return None if ip.is_unspecified else ip
