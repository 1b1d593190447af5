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
from driver.headers import IPPROTO_TCP, HeaderError, IpAddress, PacketHeaders, TcpFlags, parse_headers
from driver.netmem import NetIov
from driver.skbuff import SkBuff, _put

if TYPE_CHECKING:
    from driver.kernel import Kernel
    from driver.netdev import Napi

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
        self.state = TcpState.CLOSED


class TcpStack:
    """The TCP layer of one kernel: hash tables, counters, the receive entry point."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.established: dict[tuple, TcpSock] = {}
        self.listeners: dict[tuple[int, int], list[TcpSock]] = {}
        self.mib = TcpMib()
        self.not_tcp_rx: int = 0

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

    def rcv(self, skb: SkBuff, napi: Napi | None = None) -> None:
        """`netif_receive_skb` for an skb whose head holds all of its headers."""
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
