"""TCP: a real endpoint over headers only (net/ipv4/tcp_ipv4.c, tcp_input.c, tcp_output.c,
tcp_timer.c). Payload bytes are never read here: they may be in device memory.

Receive (`TcpStack.rcv` = `netif_receive_skb` -> `ip_rcv` -> `tcp_v4_rcv`/`tcp_v6_rcv`):
parse the headers from the skb head, pull them, trim Ethernet padding, look the 4-tuple up
(`__inet_lookup_established`, then the listener) and run the state machine
(`tcp_rcv_state_process`): the sequence check of RFC 793 as Linux does it (`tcp_sequence`),
RST (accepted only at exactly `rcv_nxt`, else a challenge ACK: RFC 5961), SYN in a
synchronized state (challenge ACK), the ACK (`tcp_ack`), then the data:

- in order (`tcp_queue_rcv`): appended to the receive queue, `rcv_nxt` advances, then the
  out-of-order queue is drained as far as it now fits;
- ahead of `rcv_nxt` (`tcp_data_queue_ofo`): **held** in sequence order (never dropped while
  inside the window); a segment wholly covered by one already queued is dropped, queued ones
  wholly covered by a new one are dropped; each one triggers an immediate duplicate ACK
  (RFC 5681 4.2), so the sender's fast retransmit can fire;
- behind `rcv_nxt` (a duplicate or retransmission): dropped, its buffers recycled at once,
  and re-acknowledged; a partial overlap is trimmed;
- FIN (when it becomes in order) advances `rcv_nxt` by one and ends the stream.

The advertised window (`tcp_select_window`): on a queue bound to a dma-buf, what the free
buffers can hold (buffers posted and empty, cached in the page pool, and free in the
binding, times the payload one buffer takes); elsewhere the socket's receive buffer less the
bytes queued. At most 65535 << the window scale (below); a multiple of the MSS without
scaling, of 2^shift with it (a scaled window field cannot say less); the right edge never
moves left (RFC 793, RFC 7323 2.4). Segments starting beyond it are dropped
(`TCPOutOfWindow`) and answered with an ACK.

Window scaling (RFC 7323 2, `net.ipv4.tcp_window_scaling`, on by default as in Linux): the
SYN carries the Window Scale option (kind 3, length 3, the shift we will apply to our
windows; `TcpStack.initial_wscale`, as Linux's `tcp_select_initial_window` derives it from
the largest receive buffer), and a SYN-ACK carries it only when the SYN did (2.2). Scaling is
in force only when both SYNs carried it; else both shifts are 0 (2.2). A shift above 14 is
taken as 14 (2.3). The window field of a SYN or SYN-ACK is never scaled (2.2: at most 65535);
every later segment's field is shifted: what the peer sends by its shift
(`snd_wnd = field << snd_wscale`), what we send right by ours (2.3).

Connections: `connect` sends a SYN with the MSS and Window Scale options (`tcp_v4_connect` +
`tcp_connect`);
a SYN-ACK acknowledging it establishes (`tcp_rcv_synsent_state_process`), anything else
acknowledging something else gets a RST. A SYN to a listener creates a request socket in
SYN_RECV (`tcp_conn_request`) that answers with a SYN-ACK (MSS option, Window Scale when the
SYN had it); the handshake's
ACK makes it ESTABLISHED and accept-able (`tcp_check_req`), a wrong ACK gets a RST. A
segment for no socket gets a RST (`tcp_v4_send_reset`, never in reply to a RST).

Send: `sendmsg_segments` cuts a send into MSS-sized skbs on the write queue
(`tcp_sendmsg_locked`); `tcp_write_xmit` sends what the peer's window allows, each skb moving
to the retransmit queue; an ACK frees what it covers (`tcp_clean_rtx_queue`) and only then
do a MSG_ZEROCOPY call's references go (the notification means "acknowledged", as in Linux).
Devmem skbs hold net_iov references of the TX binding; every transmission, retransmissions
included, is a new skb pointing at the same dma-buf pages (a clone: never a copy, never a
CPU read).

Retransmission (RFC 6298): SRTT/RTTVAR from ACKs of segments sent once (Karn), RTO = SRTT +
max(G, 4 RTTVAR), at least `rto_min` (Linux's 200 ms), at most 120 s, 1 s before the first
sample; on expiry (`tcp_retransmit_timer`) the first unacknowledged skb is sent again and
the RTO doubles (backoff); the SYN and the SYN-ACK are retransmitted the same way. Three
duplicate ACKs retransmit the first unacknowledged skb at once (fast retransmit, RFC 5681);
during recovery each partial ACK retransmits the next hole (NewReno, RFC 6582). With a
zero window and nothing in flight the same timer sends one skb as a window probe
(`tcp_probe_timer`).

Congestion control (`TcpStack.congestion_control`, "reno" by default as Linux's tcp_reno,
in segments as Linux counts): the congestion window starts at 10 segments (RFC 6928) and
what is in flight is at most the smaller of it and the peer's window; slow start below
ssthresh, then one segment more per window acknowledged (RFC 5681 3.1). Three duplicate
ACKs: ssthresh = max(flight / 2, 2), cwnd = ssthresh + 3, inflated by each further
duplicate, deflated by partial ACKs, ssthresh at the full ACK (RFC 6582). A timeout
(`tcp_enter_loss`): ssthresh halves the flight, cwnd = 1, and everything from snd_una to
snd_nxt is sent again in order, in slow start, before any new data (go-back-N, as Linux marks
the whole flight lost). "none" keeps only the peer's window.

Close: `shutdown`/`close` queue a FIN after the data (`tcp_send_fin`); FIN_WAIT1, FIN_WAIT2,
CLOSING, TIME_WAIT (60 s), CLOSE_WAIT, LAST_ACK as RFC 793. Closing with unread data sends a
RST instead (`tcp_close`, RFC 2525). A RST kills the connection (ECONNRESET, or
ECONNREFUSED in SYN_SENT).

Time comes from `Kernel.clock` (driver/clock.py); timers run when the driver polls
(`TcpStack.run_timers` from `Netdev.poll`). Segments built by the stack leave at the end of
the poll (`TcpStack.flush`), like ACKs from the delayed-ACK timer.

L4 checksums are not verified (the CPU cannot read the payload; the NIC would have to report
checksum status, see docs/driver.md).
"""
from __future__ import annotations

import errno
import heapq
import ipaddress
import struct
from collections import deque
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from driver.clock import NSEC_PER_MSEC, NSEC_PER_SEC, Clock, VirtualClock
from driver.errors import KernelError
from driver.gso import MAX_TCP_HEADER
from driver.headers import (IPPROTO_TCP, IPV4_HLEN, IPV6_HLEN, TCP_CSUM_OFFSET, TCP_HLEN,
                            HeaderError, IpAddress, PacketHeaders, TcpFlags, build_tcp_headers,
                            parse_headers)
from driver.netmem import NetIov
from driver.skbuff import (SO_EE_ORIGIN_ZEROCOPY, IpSummed, MsgZerocopy, SkBuff, SkbFrag,
                           SockExtendedErr, _put)
from models.formats import TX_TSO_MAX_PAYLOAD

if TYPE_CHECKING:
    from driver.devmem import NetDevmemDmabufBinding
    from driver.kernel import Kernel
    from driver.netdev import Napi, Netdev

SEQ_MASK = 0xFFFF_FFFF
TOKEN_MAX = (1 << 31) - 1
"""Tokens are allocated in `sk_user_frags` with `xa_limit_31b` (1 .. 2^31-1)."""
MAX_WINDOW = 0xFFFF
"""The largest window field (`MAX_TCP_WINDOW`); the window is it << the shift (RFC 7323)."""
DEFAULT_RCVBUF = 128 << 10
"""`tcp_rmem[1]`: a socket's receive buffer unless SO_RCVBUF sets it (the receive buffer
autotuning of Linux, `tcp_rcv_space_adjust`, is not modelled)."""
TCP_TIMEOUT_INIT = 1 * NSEC_PER_SEC
"""RTO before the first RTT sample (RFC 6298 2.1)."""
TCP_RTO_MIN = 200 * NSEC_PER_MSEC
TCP_RTO_MAX = 120 * NSEC_PER_SEC
TCP_TIMEWAIT_LEN = 60 * NSEC_PER_SEC
TCP_RETRIES2 = 15
"""Retransmissions of one skb before the connection is given up (ETIMEDOUT)."""
TCP_SYN_RETRIES = 6
CLOCK_G = 1 * NSEC_PER_MSEC
"""Clock granularity G of RFC 6298."""
TCP_INIT_CWND = 10
"""The initial congestion window in segments (RFC 6928; Linux `TCP_INIT_CWND`)."""
TCP_INFINITE_SSTHRESH = 0x7FFF_FFFF
CONGESTION_CONTROLS = ("reno", "none")
"""`net.ipv4.tcp_congestion_control`: "reno" (RFC 5681 slow start and congestion avoidance,
RFC 6582 NewReno fast recovery, go-back-N loss recovery after a timeout), or "none" (only
the peer's window bounds what is in flight)."""
TCPOPT_EOL, TCPOPT_NOP, TCPOPT_MSS, TCPOPT_WINDOW = 0, 1, 2, 3
TCP_MAX_WSCALE = 14
"""RFC 7323 2.3: the largest shift; a larger one received is taken as 14."""
TCP_RMEM_MAX = 6 << 20
"""`net.ipv4.tcp_rmem[2]` (Linux's default, 6 MiB): the largest receive buffer, from which the
window scale we offer is chosen."""
TCP_TSO_WIN_DIVISOR = 3
"""`net.ipv4.tcp_tso_win_divisor` (Linux: 3): a GSO skb the window cannot take whole is sent
cut when the room is at least this fraction of the window (`tcp_tso_should_defer`)."""
TCP_MIN_TSO_SEGS = 2
"""`net.ipv4.tcp_min_tso_segs` (Linux: 2): the fewest segments `tcp_tso_autosize` allows."""
TCP_TSO_RTT_LOG = 9
"""`net.ipv4.tcp_tso_rtt_log` (Linux: 9): flows with a min RTT under 2^9 us get up to
`gso_max_size` more bytes per TSO send than 1 ms of pacing (`tcp_tso_autosize`, 5.18+)."""
SK_PACING_SHIFT = 10
"""`sk->sk_pacing_shift` (Linux: 10): `tcp_tso_autosize` takes 1/1024 s (~1 ms) of the
pacing rate."""
TCP_PACING_SS_RATIO = 200
TCP_PACING_CA_RATIO = 120
"""`net.ipv4.tcp_pacing_ss_ratio` / `tcp_pacing_ca_ratio` (Linux: 200, 120): the pacing
rate in percent of cwnd x MSS / SRTT in slow start (cwnd < ssthresh / 2) and after."""
TCP_MSS_DEFAULT = 536
"""RFC 9293 3.7.1: the MSS a peer that sent no MSS option is assumed to take (IPv4)."""
TCP_MSS_DEFAULT_V6 = 1220


def before(a: int, b: int) -> bool:
    """`before(seq1, seq2)`: seq1 comes before seq2, modulo 2^32."""
    return ((a - b) & SEQ_MASK) >= 0x8000_0000


def after(a: int, b: int) -> bool:
    return before(b, a)


def parse_tcp_options(opts: bytes) -> dict[int, bytes]:
    """TCP options (kind -> value bytes); a malformed list stops the parse (as Linux's
    `tcp_parse_options` does)."""
    out: dict[int, bytes] = {}
    i = 0
    while i < len(opts):
        kind = opts[i]
        if kind == TCPOPT_EOL:
            break
        if kind == TCPOPT_NOP:
            i += 1
            continue
        if i + 1 >= len(opts) or opts[i + 1] < 2 or i + opts[i + 1] > len(opts):
            break
        out[kind] = opts[i + 2:i + opts[i + 1]]
        i += opts[i + 1]
    return out


def mss_option(mss: int) -> bytes:
    return struct.pack('!BBH', TCPOPT_MSS, 4, mss)


def wscale_option(shift: int) -> bytes:
    """NOP + Window Scale (RFC 7323 2.2: kind 3, length 3, shift.cnt), 4 bytes as Linux
    aligns it."""
    return struct.pack('!BBBB', TCPOPT_NOP, TCPOPT_WINDOW, 3, shift)


def wscale_of(opts: dict[int, bytes]) -> int | None:
    """The shift of a Window Scale option (at most 14, RFC 7323 2.3), None without one (or
    with a malformed one: length other than 3)."""
    v = opts.get(TCPOPT_WINDOW)
    if v is None or len(v) != 1:
        return None
    return min(v[0], TCP_MAX_WSCALE)


class TcpState(Enum):
    LISTEN = 'LISTEN'
    SYN_SENT = 'SYN_SENT'
    SYN_RECV = 'SYN_RECV'
    ESTABLISHED = 'ESTABLISHED'
    FIN_WAIT1 = 'FIN_WAIT1'
    FIN_WAIT2 = 'FIN_WAIT2'
    CLOSING = 'CLOSING'
    TIME_WAIT = 'TIME_WAIT'
    CLOSE_WAIT = 'CLOSE_WAIT'
    LAST_ACK = 'LAST_ACK'
    CLOSED = 'CLOSED'


SYNCHRONIZED = {TcpState.SYN_RECV, TcpState.ESTABLISHED, TcpState.FIN_WAIT1,
                TcpState.FIN_WAIT2, TcpState.CLOSING, TcpState.TIME_WAIT,
                TcpState.CLOSE_WAIT, TcpState.LAST_ACK}
RECEIVING = {TcpState.ESTABLISHED, TcpState.FIN_WAIT1, TcpState.FIN_WAIT2}
"""States that still take data (`RCV_SHUTDOWN` not set)."""
SENDING = {TcpState.ESTABLISHED, TcpState.CLOSE_WAIT}


@dataclass
class TcpMib:
    """Counters (the netstat/nstat names where Linux has one)."""

    InSegs: int = 0
    InErrs: int = 0
    """Headers that did not parse, or a frame shorter than its IP length."""
    NotTcp: int = 0
    NoSocket: int = 0
    """Segments with no socket (answered with a RST unless they were one)."""
    TCPDupData: int = 0
    """Segments wholly behind rcv_nxt (duplicates, retransmissions): dropped."""
    TCPPartialDup: int = 0
    TCPOFOQueue: int = 0
    TCPOFODup: int = 0
    TCPOutOfWindow: int = 0
    TCPAfterFin: int = 0
    TCPPureAck: int = 0
    OutSegs: int = 0
    OutNoRoutes: int = 0
    """Segments (mostly ACKs) not sent: the socket has no route or no neighbour."""
    TCPTxHwErrors: int = 0
    """Data segments the NIC completed with an error status (not sent; the RTO retransmits
    them)."""
    RetransSegs: int = 0
    TCPSlowStartRetrans: int = 0
    """Retransmissions of the lost window after a timeout, beyond its first segment."""
    TCPTimeouts: int = 0
    TCPFastRetrans: int = 0
    TCPWinProbe: int = 0
    OutRsts: int = 0
    InRsts: int = 0
    TCPChallengeACK: int = 0
    TCPAckUnsent: int = 0
    """ACKs of data never sent: answered with an ACK, segment dropped (`tcp_ack` < 0)."""
    ActiveOpens: int = 0
    PassiveOpens: int = 0
    AttemptFails: int = 0
    EstabResets: int = 0
    TCPAbortOnData: int = 0
    """Closes with unread data: a RST instead of a FIN."""
    TCPAbortOnTimeout: int = 0
    DupAcksIn: int = 0
    DupAcksOut: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(eq=False)
class TcpTxSkb:
    """An skb of the write queue or the retransmit queue: `TCP_SKB_CB` (seq, end_seq,
    flags) and the payload (copied bytes, or net_iov fragments of a TX binding, each holding
    a binding reference), plus the MSG_ZEROCOPY reference of its send call."""

    seq: int
    end_seq: int
    """SYN and FIN count one."""
    flags: TcpFlags
    linear: bytes = b''
    frags: list[SkbFrag] = field(default_factory=list)
    binding: NetDevmemDmabufBinding | None = None
    uarg: MsgZerocopy | None = None
    sent_ns: int | None = None
    """First transmission (`skb->skb_mstamp_ns`), for the RTT sample."""
    retrans: int = 0
    """Times sent again (`TCPCB_RETRANS`): such an skb gives no RTT sample (Karn)."""
    pcount: int = 1
    """`tcp_skb_pcount`: the segments it makes on the wire, `ceil(len / mss)` (a GSO skb of
    the write queue holds up to 64 KiB: `tcp_set_skb_tso_segs`); SYN, FIN: 1."""
    freed: bool = False

    @property
    def len(self) -> int:
        return len(self.linear) + sum(f.size for f in self.frags)

    def free(self) -> None:
        """Out of the queues (acknowledged or purged): the binding references and the
        zero-copy reference go; the notification comes when the last reference does."""
        if self.freed:
            return
        self.freed = True
        if self.binding is not None:
            for f in self.frags:
                self.binding.put_net_iov(f.netmem)
        self.frags = []
        if self.uarg is not None:
            uarg, self.uarg = self.uarg, None
            uarg.put()


@dataclass(eq=False)
class TcpSock:
    """`struct tcp_sock`."""

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
    rcv_wnd: int = MAX_WINDOW
    """The window last advertised, from `rcv_wup`."""
    rcv_wup: int = 0
    """`rcv_nxt` when the window was last advertised."""
    rcvbuf: int = DEFAULT_RCVBUF
    receive_queue: deque[SkBuff] = field(default_factory=deque)
    ofo_queue: list[SkBuff] = field(default_factory=list)
    user_frags: dict[int, NetIov] = field(default_factory=dict)
    """`sk->sk_user_frags`: token -> net_iov pinned for the user."""
    accept_queue: deque[TcpSock] = field(default_factory=deque)
    syn_queue: list[TcpSock] = field(default_factory=list)
    """A listener's request sockets (SYN_RECV, handshake not complete)."""
    parent: TcpSock | None = None
    """The listener a request socket came from."""
    fin_received: bool = False
    reset: bool = False
    err: int = 0
    """`sk->sk_err`: ECONNRESET, ECONNREFUSED, ETIMEDOUT."""
    dead: bool = False
    """`SOCK_DEAD`: closed by the user (an orphan finishing its FIN exchange)."""
    bytes_received: int = 0
    rx_ifindex: int = 0
    rx_queue: int = -1
    """Device and RX queue the connection's segments arrive on (the window's buffers)."""
    dupacks_owed: int = 0
    """Immediate duplicate ACKs to send (one per out-of-order or old segment)."""
    # --- send side ----------------------------------------------------------------------
    iss: int = 0
    snd_una: int = 0
    snd_nxt: int = 0
    write_seq: int = 0
    """End of the data queued for sending (`tp->write_seq`)."""
    snd_wnd: int = 0
    snd_wl1: int = 0
    snd_wl2: int = 0
    mss_clamp: int = 0
    """The peer's MSS option (0: none seen yet)."""
    wscale_ok: bool = False
    """Window scaling in force (`rx_opt.wscale_ok`): both SYNs carried the option."""
    snd_wscale: int = 0
    """The peer's shift: its window fields are `<<` it (0 unless `wscale_ok`)."""
    rcv_wscale: int = 0
    """Our shift: the windows we advertise are `>>` it (offered in our SYN; 0 unless
    `wscale_ok`)."""
    ws_offered: bool = False
    """Our SYN or SYN-ACK carries the Window Scale option."""
    write_queue: deque[TcpTxSkb] = field(default_factory=deque)
    rtx_queue: deque[TcpTxSkb] = field(default_factory=deque)
    fin_seq: int | None = None
    """Sequence number of our FIN once queued."""
    srtt_ns: int = 0
    rttvar_ns: int = 0
    min_rtt_ns: int | None = None
    """`tcp_min_rtt`: the smallest RTT sample (Linux keeps it over `tcp_min_rtt_wlen`, 300 s,
    longer than any run here); None before the first sample (Linux: ~0U)."""
    wstamp_ns: int = 0
    """`tp->tcp_wstamp_ns`: when this socket last sent a segment."""
    rto_ns: int = TCP_TIMEOUT_INIT
    backoff: int = 0
    timer_ns: int | None = None
    """Deadline of the retransmit / probe / TIME_WAIT timer (`icsk_timeout`)."""
    retransmits: int = 0
    """Consecutive timeouts without progress (`icsk_retransmits`)."""
    dupacks: int = 0
    recover: int | None = None
    """`snd_nxt` when recovery started (fast retransmit or RTO); None when not recovering."""
    ca_state: str = 'open'
    """`icsk_ca_state`: 'open', 'recovery' (fast recovery after three duplicate ACKs) or
    'loss' (after a retransmission timeout: everything in flight is taken as lost and
    retransmitted in slow start, go-back-N, before new data)."""
    snd_cwnd: int = TCP_INIT_CWND
    """The congestion window in segments (`tp->snd_cwnd`, Linux counts packets)."""
    snd_ssthresh: int = TCP_INFINITE_SSTHRESH
    snd_cwnd_cnt: int = 0
    """Segments acknowledged in congestion avoidance since the window last grew."""
    loss_next: int | None = None
    """'loss' state: sequence number of the next lost segment to send again."""
    packets_out: int = 0
    """`tp->packets_out`: segments on the retransmit queue (the sum of their `pcount`); the
    congestion window is compared with it."""
    is_cwnd_limited: bool = False
    """`tp->is_cwnd_limited`: the congestion window stopped a send in the current window of
    data (`tcp_cwnd_validate`)."""
    max_packets_out: int = 0
    """`tp->max_packets_out`: the most segments in flight in the current window of data."""
    cwnd_usage_seq: int = 0
    """`tp->cwnd_usage_seq`: `snd_nxt` when the current window of data began; once it is
    acknowledged the two above start over."""
    max_window: int = 0
    """`tp->max_window`: the largest window the peer has offered (GSO skbs are at most half
    of it: `tcp_bound_to_half_wnd`)."""
    dst_dev: Netdev | None = None
    """The device the route to `raddr` goes through (`__sk_dst_get(sk)->dev`)."""
    dst_mac: bytes | None = None
    """The neighbour's MAC address (the next hop is the peer: one link)."""
    ip_id: int = 0
    zckey: int = 0
    """`sk->sk_zckey`: the id of the next MSG_ZEROCOPY send call."""
    error_queue: deque[SockExtendedErr] = field(default_factory=deque)
    """`sk->sk_error_queue`: zero-copy notifications waiting for recvmsg(MSG_ERRQUEUE)."""
    zerocopy: bool = False
    """SOCK_ZEROCOPY (setsockopt SO_ZEROCOPY)."""
    bytes_sent: int = 0
    """Bytes queued by send calls."""
    bytes_acked: int = 0
    total_retrans: int = 0
    _token_next: int = 1
    _tokens_freed: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.rto_ns == TCP_TIMEOUT_INIT:
            self.rto_ns = getattr(self.stack, 'rto_init_ns', TCP_TIMEOUT_INIT)

    @property
    def key(self) -> tuple:
        return (self.family, self.laddr, self.lport, self.raddr, self.rport)

    @property
    def now(self) -> int:
        return self.stack.clock.now_ns()

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

    # --- receive: the state machine ---------------------------------------------------------

    def rcv_state_process(self, skb: SkBuff, h: PacketHeaders, napi: Napi | None) -> None:
        """`tcp_rcv_state_process` (with `tcp_rcv_established` and `tcp_validate_incoming`)
        for every state but LISTEN."""
        mib = self.stack.mib
        if self.state == TcpState.SYN_SENT:
            self._rcv_synsent(skb, h, napi)
            return
        flags = h.flags
        seg_end = (skb.end_seq + int(skb.fin) + int(TcpFlags.SYN in flags)) & SEQ_MASK
        # 1. sequence check (`tcp_sequence`)
        win_end = (self.rcv_nxt + self.receive_window()) & SEQ_MASK
        if before(seg_end, self.rcv_wup) or after(skb.seq, win_end) or (
                skb.len and skb.seq == win_end and self.receive_window() == 0):
            if TcpFlags.RST not in flags:
                if after(skb.seq, self.rcv_nxt):
                    mib.TCPOutOfWindow += 1
                else:
                    mib.TCPDupData += 1
                self._send_dupack()
            skb.free(napi)
            return
        # 2. RST: only at exactly rcv_nxt (RFC 5961 3.2), else a challenge ACK
        if TcpFlags.RST in flags:
            mib.InRsts += 1
            skb.free(napi)
            if skb.seq == self.rcv_nxt or self.state == TcpState.SYN_RECV:
                self._reset_received()
            else:
                mib.TCPChallengeACK += 1
                self._send_dupack()
            return
        # 3. SYN in a synchronized state
        if TcpFlags.SYN in flags:
            skb.free(napi)
            if self.state == TcpState.SYN_RECV and h.seq == self.irs:
                self.stack.xmit_sched(self)          # our SYN-ACK got lost: again
                self.synack_again = True
                return
            mib.TCPChallengeACK += 1
            self._send_dupack()
            return
        # 4. no ACK: dropped
        if TcpFlags.ACK not in flags:
            skb.free(napi)
            return
        # 5. the ACK
        if self.state == TcpState.SYN_RECV:
            if after(h.ack_seq, self.snd_una) and not after(h.ack_seq, self.snd_nxt):
                self._established_passive(h)
            else:
                skb.free(napi)
                self.stack.send_reset_for(skb, h, self.dst_dev, self.dst_mac)
                return
        if not self._ack(skb, h):
            skb.free(napi)
            return
        if self.state == TcpState.CLOSED:        # LAST_ACK done
            skb.free(napi)
            return
        # 6. data
        if skb.len == 0 and not skb.fin:
            mib.TCPPureAck += 1
            skb.free(napi)
            return
        if self.state == TcpState.TIME_WAIT:
            self._send_dupack()                  # a retransmitted FIN: ACK it again
            self._arm_timer(TCP_TIMEWAIT_LEN)
            skb.free(napi)
            return
        end = (skb.end_seq + int(skb.fin)) & SEQ_MASK
        if not after(end, self.rcv_nxt):
            mib.TCPDupData += 1
            self._send_dupack()
            skb.free(napi)
            return
        if self.fin_received or self.state not in RECEIVING:
            mib.TCPAfterFin += 1
            skb.free(napi)
            return
        self.stack.ack_sched(self)
        if after(skb.seq, self.rcv_nxt):
            self._ofo_insert(skb, napi)
            self._send_dupack()
            return
        self._queue_in_order(skb, napi)
        self._ofo_drain(napi)
        if self.ofo_queue:
            self._send_dupack()                  # still a hole: tell the sender at once

    # kept for callers of the receive-only driver
    rcv_established = rcv_state_process

    synack_again: bool = False

    def _send_dupack(self) -> None:
        self.dupacks_owed += 1
        self.stack.ack_sched(self)

    def _reset_received(self) -> None:
        """`tcp_reset`."""
        mib = self.stack.mib
        if self.state == TcpState.SYN_RECV:
            self.stack.mib.AttemptFails += 1
            self._done()
            return
        if self.state in (TcpState.ESTABLISHED, TcpState.CLOSE_WAIT):
            mib.EstabResets += 1
        self.err = errno.EPIPE if self.state == TcpState.CLOSE_WAIT else errno.ECONNRESET
        self.reset = True
        self._done()

    def _done(self) -> None:
        """`tcp_done`: CLOSED, out of the hash tables, queues purged, timers off."""
        self.state = TcpState.CLOSED
        self.timer_ns = None
        self._purge_write_queues()
        self.stack.unhash(self)
        if self.parent is not None:
            if self in self.parent.syn_queue:
                self.parent.syn_queue.remove(self)

    def _established_passive(self, h: PacketHeaders) -> None:
        """`tcp_check_req` + `tcp_child_process`: the handshake's ACK."""
        self.state = TcpState.ESTABLISHED
        self.snd_wl1 = h.seq
        self.snd_wnd = self.peer_window(h)
        self.max_window = max(self.max_window, self.snd_wnd)
        self.retransmits = 0
        parent = self.parent
        if parent is not None and self in parent.syn_queue:
            parent.syn_queue.remove(self)
            parent.accept_queue.append(self)

    def _ack(self, skb: SkBuff, h: PacketHeaders) -> bool:
        """`tcp_ack`: False when the segment is to be dropped (it acknowledges data never
        sent). Moves snd_una, frees what is acknowledged, updates the window, counts
        duplicate ACKs (fast retransmit at 3), arms or stops the retransmit timer."""
        mib = self.stack.mib
        ack = h.ack_seq
        prior_una = self.snd_una
        if after(ack, self.snd_nxt):
            mib.TCPAckUnsent += 1
            self._send_dupack()
            return False
        if before(ack, prior_una):
            return True                          # old ACK: the data is still processed
        # the window (`tcp_ack_update_window`, RFC 793 SND.WL1/WL2)
        window_changed = False
        wnd = self.peer_window(h)
        if (after(ack, prior_una) or after(h.seq, self.snd_wl1)
                or (h.seq == self.snd_wl1 and wnd != self.snd_wnd)):
            window_changed = wnd != self.snd_wnd
            self.snd_wnd = wnd
            self.max_window = max(self.max_window, wnd)
            self.snd_wl1 = h.seq
            self.snd_wl2 = ack
        if after(ack, prior_una):
            self.snd_una = ack
            self.dupacks = 0
            self.retransmits = 0
            self.backoff = 0
            acked = self._clean_rtx_queue(ack)
            self._cong_ack(ack, acked)
            if self.rtx_queue:
                self._arm_timer(self.rto_ns)
            else:
                self.timer_ns = None
            self._fin_acked_transition()
            if self.write_queue:
                self.stack.xmit_sched(self)
        elif (not skb.len and not skb.fin and not window_changed and self.rtx_queue):
            self.dupacks += 1
            mib.DupAcksIn += 1
            if self.dupacks == 3 and self.recover is None:
                mib.TCPFastRetrans += 1
                self.recover = self.snd_nxt
                self._retransmit_head()
                if self.cc_on:                   # RFC 5681 3.2 steps 2-3
                    self.snd_ssthresh = max(self.packets_out // 2, 2)
                    self.snd_cwnd = self.snd_ssthresh + 3
                    self.ca_state = 'recovery'
            elif self.dupacks > 3 and self.ca_state == 'recovery':
                self.snd_cwnd += 1               # step 4: inflate; new data may go
                if self.write_queue:
                    self.stack.xmit_sched(self)
        elif window_changed and self.write_queue:
            self.stack.xmit_sched(self)
        return True

    def _fin_acked_transition(self) -> None:
        if self.fin_seq is None or not after(self.snd_una, self.fin_seq):
            return
        if self.state == TcpState.FIN_WAIT1:
            self.state = TcpState.FIN_WAIT2
        elif self.state == TcpState.CLOSING:
            self.state = TcpState.TIME_WAIT
            self._arm_timer(TCP_TIMEWAIT_LEN)
        elif self.state == TcpState.LAST_ACK:
            self._done()

    def _clean_rtx_queue(self, ack: int) -> int:
        """`tcp_clean_rtx_queue`: free every skb wholly acknowledged; an RTT sample from the
        newest one that was sent once (Karn's rule). Returns the segments freed."""
        sample: TcpTxSkb | None = None
        n = 0
        while self.rtx_queue and not after(self.rtx_queue[0].end_seq, ack):
            t = self._rtx_popleft()
            if t.retrans == 0 and t.sent_ns is not None:
                sample = t
            self.bytes_acked += t.len
            t.free()
            n += t.pcount
        head = self.rtx_queue[0] if self.rtx_queue else None
        if head is not None and head.pcount > 1 and after(ack, head.seq):
            # part of a GSO skb acknowledged (`tcp_tso_acked` -> `tcp_trim_head`): the acked
            # bytes go now, with their references; the rest stays queued
            acked = self._fragment(self.rtx_queue, 0, (ack - head.seq) & SEQ_MASK)
            t = self._rtx_popleft()
            assert t is acked
            if t.retrans == 0 and t.sent_ns is not None:
                sample = t
            self.bytes_acked += t.len
            t.free()
            n += t.pcount
        if sample is not None:
            self._rtt_sample(sample)
        return n

    # --- GSO skbs: segments, splitting (`tcp_set_skb_tso_segs`, `tcp_fragment`) ------------

    def _pcount(self, length: int) -> int:
        """`tcp_set_skb_tso_segs`: the segments `length` bytes make at the current MSS."""
        return max(1, -(-length // self.mss))

    def _rtx_append(self, t: TcpTxSkb) -> None:
        self.rtx_queue.append(t)
        self.packets_out += t.pcount

    def _rtx_popleft(self) -> TcpTxSkb:
        t = self.rtx_queue.popleft()
        self.packets_out -= t.pcount
        return t

    def _fragment(self, queue: deque[TcpTxSkb], index: int, length: int) -> TcpTxSkb:
        """`tcp_fragment`: cut `queue[index]` after its first `length` payload bytes into two
        skbs, both in the queue in order; returns the first. A fragment straddling the cut is
        split, the second part holding one more binding reference; the second skb holds one
        more reference on the send call's zero-copy completion, keeps PSH and FIN
        (the first loses them) and the transmission history (first send time, retransmits)."""
        t = queue[index]
        assert 0 < length < t.len, (length, t.len)
        lin_keep = min(length, len(t.linear))
        rest_linear = t.linear[lin_keep:]
        left = length - lin_keep
        keep: list[SkbFrag] = []
        rest: list[SkbFrag] = []
        for f in t.frags:
            if left >= f.size:
                keep.append(f)
                left -= f.size
            elif left > 0:
                keep.append(SkbFrag(f.netmem, f.offset, left))
                rest.append(SkbFrag(f.netmem, f.offset + left, f.size - left))
                assert t.binding is not None
                t.binding.get_net_iov(f.netmem)
                left = 0
            else:
                rest.append(f)
        mid = (t.seq + length) & SEQ_MASK
        second = TcpTxSkb(mid, t.end_seq, t.flags, rest_linear, rest, t.binding,
                          t.uarg.get() if t.uarg else None, t.sent_ns, t.retrans)
        t.linear, t.frags, t.end_seq = t.linear[:lin_keep], keep, mid
        t.flags = t.flags & ~(TcpFlags.PSH | TcpFlags.FIN)
        old = t.pcount
        t.pcount, second.pcount = self._pcount(t.len), self._pcount(second.len)
        if queue is self.rtx_queue:
            self.packets_out += t.pcount + second.pcount - old
        queue.insert(index + 1, second)
        return t

    def _cut_to_segs(self, queue: deque[TcpTxSkb], index: int, segs: int) -> TcpTxSkb:
        """`queue[index]`, cut to at most `segs` segments (`tso_fragment` at an MSS
        multiple) when it has more."""
        t = queue[index]
        if t.pcount > segs and t.len > segs * self.mss:
            self._fragment(queue, index, segs * self.mss)
        return queue[index]

    @property
    def gso_ok(self) -> bool:
        """`sk_can_gso`: the route's device has TSO on for this IP version."""
        dev = self.dst_dev
        return dev is not None and bool(dev.features & dev.gso_feature(self.family != 2))

    def size_goal(self) -> int:
        """`tcp_send_mss` -> `tcp_xmit_size_goal`: the payload of one write-queue skb. The
        MSS without GSO; with it, the device's `gso_max_size` less `MAX_TCP_HEADER` less
        one, at most half the largest window the peer offered (`tcp_bound_to_half_wnd`), a
        multiple of the MSS, at most the device's `gso_max_segs` segments, within the NIC's
        TSO payload limit."""
        mss = self.mss
        if not self.gso_ok:
            return mss
        assert self.dst_dev is not None
        goal = self.dst_dev.gso_max_size - 1 - MAX_TCP_HEADER
        if self.max_window > TCP_MSS_DEFAULT:
            goal = min(goal, self.max_window >> 1)
        goal = min(goal, TX_TSO_MAX_PAYLOAD)
        return max(mss, min(goal // mss, self.dst_dev.gso_max_segs) * mss)

    def pacing_rate(self) -> float | None:
        """`tcp_update_pacing_rate`, bytes per second: MSS x max(cwnd, packets out) / SRTT,
        times `tcp_pacing_ss_ratio` in slow start's first half (cwnd < ssthresh / 2), else
        `tcp_pacing_ca_ratio`. None (unlimited, Linux's initial ~0UL) without an RTT sample
        or without congestion control."""
        if not self.srtt_ns or not self.cc_on:
            return None
        st = self.stack
        ratio = st.pacing_ss_ratio if self.snd_cwnd < self.snd_ssthresh // 2 else st.pacing_ca_ratio
        return self.mss * ratio / 100 * max(self.snd_cwnd, self.packets_out) * 1e9 / self.srtt_ns

    def tso_segs(self) -> int:
        """`tcp_tso_segs` -> `tcp_tso_autosize` (Linux 5.18+, net/ipv4/tcp_output.c): the most
        segments one transmission of a GSO skb may carry: ~1 ms of the pacing rate
        (`sk_pacing_rate >> sk_pacing_shift`), plus `gso_max_size >> (min_rtt_us >>
        tcp_tso_rtt_log)` (a min RTT under 512 us adds a whole `gso_max_size`), at most
        `gso_max_size`, at least `tcp_min_tso_segs`; then at most the device's
        `gso_max_segs` (`tcp_tso_segs`). In this fabric that is `gso_max_size` from the first
        send, whatever `tcp_tso_rtt_log`: 1 ms of a pacing rate of gigabytes per second is
        megabytes."""
        st = self.stack
        gso_max = self.dst_dev.gso_max_size if self.dst_dev is not None else 0
        rate = self.pacing_rate()
        size = gso_max if rate is None else int(rate) >> SK_PACING_SHIFT
        if self.min_rtt_ns is not None:
            r = (self.min_rtt_ns // 1000) >> st.tso_rtt_log
            if r < 32:
                size += gso_max >> r
        size = min(size, gso_max)
        segs = max(size // self.mss, st.min_tso_segs)
        return min(segs, self.dst_dev.gso_max_segs) if self.dst_dev is not None else segs

    def tso_should_defer(self, t: TcpTxSkb, wnd_end: int, max_segs: int) -> str | None:
        """`tcp_tso_should_defer` (net/ipv4/tcp_output.c, "a kind of TSO Nagle test"): hold
        back a GSO skb `t` that the peer's window or the congestion window cannot take whole
        while an ACK that opens more is due soon, so that TSO sends are not cut small. Sent
        now when: recovering from a loss; the last send was over 1 ms ago; the room takes
        `max_segs` segments, or all of `t` while more data is queued behind it, or at least
        1/`tcp_tso_win_divisor` of min(peer window, cwnd); nothing is in flight; the oldest
        unacknowledged segment went out less than half an SRTT ago (its ACK would come too
        late); the room is more than `t` needs. Called once the first segment fits both
        windows (`tcp_snd_wnd_test`, `tcp_cwnd_test`). Returns None (send now) or why it
        waits: 'cwnd' (`*is_cwnd_limited`), 'rwnd' (`*is_rwnd_limited`) or 'more' (a bigger
        send is due)."""
        if self.ca_state != 'open':
            return None
        if self.now - self.wstamp_ns > NSEC_PER_MSEC:
            return None
        mss = self.mss
        send_win = (wnd_end - t.seq) & SEQ_MASK
        cwnd_bytes = self.snd_cwnd * mss if self.cc_on else None
        cong_win = (self.snd_cwnd - self.packets_out) * mss if self.cc_on else send_win
        limit = min(send_win, cong_win)
        if limit >= max_segs * mss:
            return None
        if t is not self.write_queue[-1] and limit >= t.len:
            return None
        divisor = self.stack.tso_win_divisor
        if divisor:
            chunk = self.snd_wnd if cwnd_bytes is None else min(self.snd_wnd, cwnd_bytes)
            if limit >= chunk // divisor:
                return None
        elif limit > 3 * mss:                        # `tcp_max_tso_deferred_mss`
            return None
        if not self.rtx_queue:
            return None
        head = self.rtx_queue[0]
        if head.sent_ns is None or self.now - head.sent_ns < self.srtt_ns // 2:
            return None
        if cong_win < send_win:
            if cong_win <= t.len:
                return 'cwnd'
        elif send_win <= t.len:
            return 'rwnd'
        return None if t.flags & TcpFlags.FIN else 'more'

    # --- congestion control (RFC 5681, RFC 6582; Linux's tcp_cong.c "reno") ---------------

    @property
    def cc_on(self) -> bool:
        return self.stack.congestion_control == 'reno'

    def _cong_ack(self, ack: int, acked: int) -> None:
        """An ACK of new data: leave or continue recovery, grow the window."""
        if self.ca_state == 'recovery':
            if self.recover is not None and before(ack, self.recover) and self.rtx_queue:
                self._retransmit_head()          # partial ACK: the next hole (RFC 6582 3.2)
                if self.cc_on:                   # deflate by what was acknowledged, add one back
                    self.snd_cwnd = max(1, self.snd_cwnd - acked + 1)
                return
            self.recover = None                  # full ACK: recovery done
            self.ca_state = 'open'
            if self.cc_on:
                self.snd_cwnd = max(1, min(self.snd_ssthresh, self.packets_out + 1))
            return
        if self.ca_state == 'loss':
            if self.recover is not None and before(ack, self.recover):
                if self.loss_next is None or before(self.loss_next, ack):
                    self.loss_next = ack         # what the ACK covered need not go again
                self._slow_start_or_avoid(acked)
                self.stack.xmit_sched(self)      # more of the lost window (tcp_write_xmit)
                return
            self.recover = None                  # everything lost has been acknowledged
            self.loss_next = None
            self.ca_state = 'open'
        elif self.recover is not None:           # congestion control off: NewReno holes
            if before(ack, self.recover) and self.rtx_queue:
                self._retransmit_head()
                return
            self.recover = None
        self._slow_start_or_avoid(acked)

    def _slow_start_or_avoid(self, acked: int) -> None:
        """`tcp_reno_cong_avoid`: slow start below ssthresh (one segment per segment
        acknowledged), else one segment per window of ACKed segments; neither while the
        window is not what limits the sender (`tcp_is_cwnd_limited`: a flow held back by the
        peer's receive window does not grow cwnd without bound)."""
        if not self.cc_on or acked <= 0 or not self.tcp_is_cwnd_limited():
            return
        if self.snd_cwnd < self.snd_ssthresh:
            grow = min(acked, self.snd_ssthresh - self.snd_cwnd)
            self.snd_cwnd += grow
            acked -= grow
        if acked and self.snd_cwnd >= self.snd_ssthresh:
            self.snd_cwnd_cnt += acked
            if self.snd_cwnd_cnt >= self.snd_cwnd:
                self.snd_cwnd_cnt -= self.snd_cwnd
                self.snd_cwnd += 1
        self.snd_cwnd = min(self.snd_cwnd, 0xFFFF)

    def tcp_is_cwnd_limited(self) -> bool:
        """`tcp_is_cwnd_limited`: cwnd stopped a send in this window of data, or (slow start)
        cwnd is below twice the most segments that were in flight in it."""
        if self.is_cwnd_limited:
            return True
        if self.snd_cwnd < self.snd_ssthresh:
            return self.snd_cwnd < 2 * self.max_packets_out
        return False

    def tcp_cwnd_validate(self, cwnd_limited: bool) -> None:
        """`tcp_cwnd_validate` (RFC 7661's idea, as Linux does it), after `tcp_write_xmit`:
        remember for the current window of data whether cwnd limited a send, else the most
        segments in flight; a new window of data starts once `cwnd_usage_seq` is
        acknowledged. (Linux also decays cwnd after an idle or application-limited
        period, `tcp_cwnd_application_limited`: not modelled.)"""
        if (not before(self.snd_una, self.cwnd_usage_seq) or cwnd_limited
                or (not self.is_cwnd_limited and self.packets_out > self.max_packets_out)):
            self.is_cwnd_limited = cwnd_limited
            self.max_packets_out = self.packets_out
            self.cwnd_usage_seq = self.snd_nxt

    def _enter_loss(self) -> None:
        """`tcp_enter_loss`: a retransmission timeout. ssthresh halves the flight (once per
        episode), cwnd goes to one segment, and everything from snd_una to snd_nxt is sent
        again in order as the window opens (the head now)."""
        if not self.cc_on:
            return
        if self.ca_state != 'loss':
            self.snd_ssthresh = max(self.packets_out // 2, 2)
        self.snd_cwnd = 1
        self.snd_cwnd_cnt = 0
        self.ca_state = 'loss'
        self.loss_next = self.rtx_queue[0].end_seq if self.rtx_queue else None

    def _send_window_end(self) -> int:
        """The right edge of what the peer's window lets be in flight (`tcp_snd_wnd_test`;
        the congestion window is counted in segments, in `tcp_write_xmit`)."""
        return (self.snd_una + self.snd_wnd) & SEQ_MASK

    async def _loss_retransmit(self) -> int:
        """'loss' state: send again the lost segments from `loss_next` while the retransmitted
        ones in flight are fewer than cwnd (`tcp_xmit_retransmit_queue`)."""
        sent = 0
        if self.ca_state != 'loss' or self.loss_next is None or self.recover is None:
            return 0
        while before(self.loss_next, self.recover):
            out = sum(t.pcount for t in self.rtx_queue if before(t.seq, self.loss_next))
            if out >= self.snd_cwnd:
                break
            i = next((i for i, t in enumerate(self.rtx_queue)
                      if not before(t.seq, self.loss_next)), None)
            if i is None:
                break
            t = self._cut_to_segs(self.rtx_queue, i, self.snd_cwnd - out)
            t.retrans += 1
            self.total_retrans += 1
            self.stack.mib.RetransSegs += t.pcount
            self.stack.mib.TCPSlowStartRetrans += t.pcount
            await self.tcp_transmit_skb(t)
            self.loss_next = t.end_seq
            sent += 1
        return sent

    def _rtt_sample(self, t: TcpTxSkb) -> None:
        """RFC 6298 2.2/2.3: SRTT, RTTVAR, RTO."""
        if t.sent_ns is None or t.retrans:
            return
        r = max(1, self.now - t.sent_ns)
        self.min_rtt_ns = r if self.min_rtt_ns is None else min(self.min_rtt_ns, r)
        if self.srtt_ns == 0:
            self.srtt_ns, self.rttvar_ns = r, r // 2
        else:
            self.rttvar_ns = (3 * self.rttvar_ns + abs(self.srtt_ns - r)) // 4
            self.srtt_ns = (7 * self.srtt_ns + r) // 8
        self.rto_ns = min(TCP_RTO_MAX, max(self.stack.rto_min_ns,
                                           self.srtt_ns + max(self.stack.clock_g_ns, 4 * self.rttvar_ns)))

    def _rcv_synsent(self, skb: SkBuff, h: PacketHeaders, napi: Napi | None) -> None:
        """`tcp_rcv_synsent_state_process`: a SYN-ACK acknowledging our SYN establishes; an
        ACK of anything else gets a RST (RFC 793 3.4); RST with an acceptable ACK refuses."""
        flags = h.flags
        mib = self.stack.mib
        skb.free(napi)
        if TcpFlags.ACK in flags and h.ack_seq != (self.iss + 1) & SEQ_MASK:
            if TcpFlags.RST not in flags:
                self.stack.send_reset_for(skb, h, self.dst_dev, self.dst_mac)
            return
        if TcpFlags.RST in flags:
            if TcpFlags.ACK in flags:
                mib.InRsts += 1
                mib.AttemptFails += 1
                self.err = errno.ECONNREFUSED
                self.reset = True
                self._done()
            return
        if TcpFlags.SYN not in flags or TcpFlags.ACK not in flags:
            return                                 # simultaneous open is not supported
        self.irs = h.seq
        self.rcv_nxt = self.copied_seq = self.rcv_wup = (h.seq + 1) & SEQ_MASK
        self.snd_wl1 = h.seq
        self.snd_wnd = h.window                    # a SYN's window is never scaled (RFC 7323 2.2)
        self.max_window = max(self.max_window, self.snd_wnd)
        self._take_mss(skb, h)
        self._take_wscale(skb)
        self.state = TcpState.ESTABLISHED
        self.snd_una = h.ack_seq
        self.timer_ns = None
        self.retransmits = 0
        if self.rtx_queue:
            self._rtt_sample(self.rtx_queue[0])
            self._rtx_popleft().free()
        self.stack.ack_sched(self)
        if self.write_queue:
            self.stack.xmit_sched(self)

    def peer_window(self, h: PacketHeaders) -> int:
        """The window a segment advertises in bytes: its field shifted by the peer's scale,
        except on a SYN (RFC 7323 2.2, 2.3)."""
        if TcpFlags.SYN in h.flags:
            return h.window
        return h.window << self.snd_wscale

    def _take_wscale(self, skb: SkBuff) -> None:
        """The peer's SYN (or SYN-ACK): scaling is on when it carries the option and we offer
        it (RFC 7323 2.2, `tcp_parse_options` + `tcp_finish_connect`/`tcp_openreq_init`),
        else both shifts are 0."""
        shift = wscale_of(skb.tcp_options)
        if shift is not None and self.ws_offered:
            self.wscale_ok = True
            self.snd_wscale = shift
        else:
            self.wscale_ok = False
            self.snd_wscale = self.rcv_wscale = 0

    def _take_mss(self, skb: SkBuff, h: PacketHeaders) -> None:
        opts = skb.tcp_options
        if TCPOPT_MSS in opts and len(opts[TCPOPT_MSS]) == 2:
            self.mss_clamp = struct.unpack('!H', opts[TCPOPT_MSS])[0]
        else:
            self.mss_clamp = TCP_MSS_DEFAULT if self.family == 2 else TCP_MSS_DEFAULT_V6

    # --- the receive window -----------------------------------------------------------------

    def receive_window(self) -> int:
        """`tcp_receive_window`: what is left of the window last advertised."""
        w = (self.rcv_wup + self.rcv_wnd - self.rcv_nxt) & SEQ_MASK
        return 0 if w >= 0x8000_0000 else w

    @property
    def adv_mss(self) -> int:
        """The MSS we announce: the route device's MTU less the headers."""
        mtu = self.dst_dev.mtu if self.dst_dev is not None else 1500
        return mtu - (IPV4_HLEN if self.family == 2 else IPV6_HLEN) - TCP_HLEN

    def free_space(self) -> int:
        """Bytes the receiver can take now: the receive buffer (`sk_rcvbuf`, SO_RCVBUF) less
        what is queued and not yet read (`tcp_space`); on a queue bound to a dma-buf also at
        most this socket's share of the buffers the NIC can still fill (posted and empty,
        cached in the page pool, free in the binding, times the payload one buffer takes,
        divided among the sockets receiving on the queue, so that the windows together never
        promise more buffers than there are)."""
        queued = sum(s.len for s in self.receive_queue) + sum(s.len for s in self.ofo_queue)
        space = max(0, self.rcvbuf - queued)
        dev = self.stack.kernel.dev_get_by_index(self.rx_ifindex) if self.rx_ifindex else None
        if dev is not None and 0 <= self.rx_queue < dev.num_rx_queues:
            q = dev.rx_queue(self.rx_queue)
            if q.mp_params is not None and q.pay_pool is not None:
                pages = len(q.pay_bufs) + q.pay_pool.cached + q.mp_params.pages_free
                buf = dev.ringparam.rx_buf_len
                mss = self.adv_mss
                seg = -(-mss // dev.rx_mpb_stride) * dev.rx_mpb_stride
                if dev.priv_flags.get('rx-mpb') and seg <= buf:   # multi-packet buffers
                    per_buf = buf // seg * mss
                else:
                    per_buf = mss // -(-mss // buf)
                return min(space, pages * per_buf // self._queue_sharers())
        return space

    @property
    def window_clamp(self) -> int:
        """The largest window we can advertise: 65535 << our shift (`tp->window_clamp`)."""
        return MAX_WINDOW << self.rcv_wscale

    def new_window(self) -> int:
        """`__tcp_select_window`: the free space as a window, before the never-shrink rule:
        a multiple of the MSS without scaling, of 2^shift with it (RFC 7323 2.3: a scaled
        field cannot say less), at most `window_clamp`."""
        space = min(self.window_clamp, self.free_space())
        if self.rcv_wscale:
            return space & ~((1 << self.rcv_wscale) - 1)
        mss = self.adv_mss
        return (space // mss) * mss if space >= mss else space

    def _queue_sharers(self) -> int:
        """Sockets still receiving (no FIN yet) on this socket's device and RX queue, this one
        included: the queue's buffers are shared among them."""
        n = sum(1 for sk in self.stack.established.values()
                if sk.rx_ifindex == self.rx_ifindex and sk.rx_queue == self.rx_queue
                and sk.state in RECEIVING and not sk.fin_received)
        return max(1, n + (0 if self.stack.established.get(self.key) is self
                           and self.state in RECEIVING and not self.fin_received else 1))

    def select_window(self, syn: bool = False) -> int:
        """`tcp_select_window`: the window to advertise in bytes, never moving the right edge
        left (a window below what is left of the last one is rounded up to 2^shift: RFC 7323
        2.4); records it. `syn`: for a SYN or SYN-ACK, whose field is not scaled (at most
        65535, RFC 7323 2.2) and which is the first window. The field is this
        `>> rcv_wscale` (`build_skb`)."""
        new = self.new_window()
        if syn:
            new = min(new, MAX_WINDOW)           # the first window: nothing to keep
        else:
            cur = self.receive_window()
            if new < cur:
                m = (1 << self.rcv_wscale) - 1
                new = (cur + m) & ~m
        self.rcv_wnd = new
        self.rcv_wup = self.rcv_nxt
        return new

    def window_update_due(self) -> bool:
        """`__tcp_cleanup_rbuf`: the window the reader opened is worth an ACK (at least
        twice what the peer sees, and at least one more MSS)."""
        if self.state not in RECEIVING:
            return False
        cur = self.receive_window()
        if 2 * cur > self.window_clamp:
            return False
        space = self.new_window()
        return space >= 2 * cur and space >= cur + self.adv_mss

    # --- send -------------------------------------------------------------------------------

    @property
    def mss(self) -> int:
        """`tcp_current_mss`: ours, and the peer's MSS option if smaller (no options are
        sent on data segments)."""
        m = self.adv_mss
        return min(m, self.mss_clamp) if self.mss_clamp else m

    @property
    def can_send(self) -> bool:
        return self.dst_dev is not None and self.dst_mac is not None and self.laddr is not None

    def build_skb(self, seq: int, flags: TcpFlags, payload_len: int,
                  linear: bytes = b'', options: bytes = b'', segs: int = 1) -> SkBuff:
        """`tcp_transmit_skb` + `ip_queue_xmit` headers: an skb whose head holds Ethernet,
        IP and TCP headers (plus `linear` payload bytes), CHECKSUM_PARTIAL; the window is
        chosen now. The caller adds fragments for the rest of `payload_len`. `segs`: the
        segments a GSO skb makes; the IPv4 ID advances by as many (`ip_select_ident_segs`:
        each segment takes the next)."""
        assert self.dst_dev is not None and self.dst_mac is not None
        assert self.laddr is not None and self.raddr is not None
        ip_id = (self.ip_id + 1) & 0xFFFF          # this skb's first segment
        self.ip_id = (self.ip_id + segs) & 0xFFFF
        syn = bool(flags & TcpFlags.SYN)
        window = self.select_window(syn)
        if not syn:
            window >>= self.rcv_wscale              # RFC 7323 2.3
        ack = self.rcv_nxt if flags & TcpFlags.ACK else 0
        head, csum_start = build_tcp_headers(
            self.dst_dev.dev_addr, self.dst_mac, self.laddr, self.raddr, self.lport,
            self.rport, seq, ack, flags, window, payload_len, ip_id, options)
        skb = SkBuff(head=head + linear, ip_summed=IpSummed.CHECKSUM_PARTIAL,
                     csum_start=csum_start, csum_offset=TCP_CSUM_OFFSET,
                     queue_mapping=self.dst_dev.xps_queue(self.rx_queue, self.flow_hash), seq=seq)
        return skb

    @property
    def flow_hash(self) -> int:
        """`sk->sk_txhash` stand-in: the same queue for every segment of the flow."""
        return (self.lport * 31 + self.rport) ^ int(self.raddr or 0)

    async def transmit(self, skb: SkBuff) -> bool:
        """`ip_queue_xmit` -> `dev_queue_xmit` on the route device; `OutSegs` counts the
        segments (`tcp_skb_pcount`)."""
        assert self.dst_dev is not None
        self.stack.mib.OutSegs += max(1, skb.gso_segs)
        return await self.dst_dev.dev_queue_xmit(skb)

    async def send_ack(self) -> None:
        """`tcp_send_ack`: a pure ACK with the current window."""
        if not self.can_send:
            self.stack.mib.OutNoRoutes += 1
            return
        await self.transmit(self.build_skb(self.snd_nxt, TcpFlags.ACK, 0))

    def queue_syn(self, ack: bool) -> None:
        """The SYN (active open, `tcp_connect`) or SYN-ACK (`tcp_conn_request`), with the MSS
        option and, when offered (`ws_offered`), the Window Scale option, on the retransmit
        queue; `tcp_write_xmit` sends it."""
        flags = TcpFlags.SYN | (TcpFlags.ACK if ack else TcpFlags(0))
        self.snd_una = self.iss
        self.snd_nxt = self.write_seq = (self.iss + 1) & SEQ_MASK
        t = TcpTxSkb(self.iss, self.snd_nxt, flags)
        self._rtx_append(t)
        self._syn_pending = t

    _syn_pending: TcpTxSkb | None = None

    async def send_syn(self) -> None:
        """`tcp_connect`: queue and send the SYN, offering window scaling when the stack
        does (`tcp_connect_init`)."""
        if self.stack.window_scaling:
            self.ws_offered = True
            self.rcv_wscale = self.stack.initial_wscale()
        self.queue_syn(ack=False)
        await self.tcp_write_xmit()

    def _tx_done(self, skb: SkBuff) -> None:
        """The destructor of a data skb: runs when the driver frees it after its completion
        (or a drop)."""
        if skb.tx_status not in (0,):
            self.stack.mib.TCPTxHwErrors += 1

    async def tcp_transmit_skb(self, t: TcpTxSkb) -> None:
        """Send `t` once: a new skb with fresh headers whose fragments point at the same
        dma-buf pages (each holding its own binding reference), and one more reference on
        the send call's zero-copy completion (the clone shares `skb_shinfo`)."""
        if not self.can_send:
            self.stack.mib.OutNoRoutes += 1
            return
        opts = self.syn_options() if t.flags & TcpFlags.SYN else b''
        mss = self.mss
        segs = -(-t.len // mss) if t.len > mss else 1
        skb = self.build_skb(t.seq, t.flags, t.len, t.linear, opts, segs)
        if segs > 1:                       # a GSO skb (`tcp_set_skb_tso_segs`)
            skb.gso_size, skb.gso_segs = mss, segs
        if t.binding is not None:
            for f in t.frags:
                t.binding.get_net_iov(f.netmem)
            skb.frags = [SkbFrag(f.netmem, f.offset, f.size) for f in t.frags]
            skb.frag_unref = t.binding.put_net_iov
            skb.frag_ref = t.binding.get_net_iov
        skb.destructor = self._tx_done
        if t.uarg is not None:
            skb.ubuf = t.uarg.get()
        if t.sent_ns is None:
            t.sent_ns = self.now
        self.wstamp_ns = self.now
        await self.transmit(skb)

    def syn_options(self) -> bytes:
        """`tcp_syn_options` / `tcp_synack_options`: MSS, then NOP + Window Scale when offered
        (no SACK, no timestamps: data segments carry no options)."""
        return mss_option(self.adv_mss) + (wscale_option(self.rcv_wscale) if self.ws_offered else b'')

    async def tcp_write_xmit(self, probe: bool = False, max_segs: int | None = None) -> int:
        """`tcp_write_xmit`: send the SYN/SYN-ACK if due, then write-queue skbs while they fit
        the peer's window (`tcp_snd_wnd_test`), moving each to the retransmit queue; with
        `probe`, one skb even if it does not fit; at most `max_segs` new skbs (a turn of the
        per-flow round robin, `TcpStack.flush_acks`). Returns the skbs sent."""
        n = 0
        if self._syn_pending is not None or self.synack_again:
            t = self._syn_pending or (self.rtx_queue[0] if self.rtx_queue else None)
            self._syn_pending = None
            self.synack_again = False
            if t is not None and t.flags & TcpFlags.SYN:
                if t.sent_ns is not None:
                    t.retrans += 1
                    self.total_retrans += 1
                    self.stack.mib.RetransSegs += 1
                await self.tcp_transmit_skb(t)
                if self.timer_ns is None:
                    self._arm_timer(self.rto_ns)
                n += 1
        if self.state not in SYNCHRONIZED or self.state == TcpState.SYN_RECV:
            return n
        n += await self._loss_retransmit()
        if self.ca_state == 'loss' and not probe:
            if n and self.cc_on:
                self.tcp_cwnd_validate(self.packets_out >= self.snd_cwnd)
            return n                         # the lost window first
        cwnd_limited = False
        wnd_end = self._send_window_end()
        new = 0
        mss = self.mss
        tso_max = self.tso_segs()       # whatever the device has now: software GSO cuts the rest
        while self.write_queue and (max_segs is None or new < max_segs):
            t = self.write_queue[0]
            fits = not after(t.end_seq, wnd_end) or (t.len == 0 and t.flags & TcpFlags.FIN)
            room_segs = None
            if not fits and t.pcount > 1:
                # a GSO skb: send what the window takes, whole segments (`tcp_mss_split_point`);
                # a probe sends one segment (`tcp_write_wakeup`)
                room = (wnd_end - t.seq) & SEQ_MASK
                room = 0 if room >= 0x8000_0000 else room
                segs = 1 if probe and room < mss else room // mss
                if segs:
                    room_segs = segs
                    fits = True
            if not fits and not probe:
                if not self.rtx_queue and self.timer_ns is None:
                    self._arm_timer(self.rto_ns)     # the probe timer
                break
            quota = None
            if self.cc_on and not probe and self.rtx_queue:
                quota = self.snd_cwnd - self.packets_out
                if quota <= 0:
                    cwnd_limited = True
                    break                        # the congestion window is full
            elif self.cc_on and not probe:
                quota = max(1, self.snd_cwnd)
            defer = self.tso_should_defer(t, wnd_end, tso_max) if not probe and t.pcount > 1 \
                else None
            if defer is not None:
                cwnd_limited |= defer == 'cwnd'
                break                            # an ACK due soon lets a bigger send out
            if room_segs is not None:
                t = self._cut_to_segs(self.write_queue, 0, room_segs)
            if quota is not None:
                t = self._cut_to_segs(self.write_queue, 0, quota)   # `tcp_cwnd_test`
            if not probe:
                t = self._cut_to_segs(self.write_queue, 0, tso_max)  # `tcp_tso_segs`
            probe = False
            self.write_queue.popleft()
            self._rtx_append(t)
            self.snd_nxt = t.end_seq
            await self.tcp_transmit_skb(t)
            n += 1
            new += 1
            if self.timer_ns is None:
                self._arm_timer(self.rto_ns)
        if self.cc_on:
            cwnd_limited |= self.packets_out >= self.snd_cwnd
            if new or cwnd_limited:
                self.tcp_cwnd_validate(cwnd_limited)
        return n

    def _arm_timer(self, ns: int) -> None:
        """`inet_csk_reset_xmit_timer`."""
        self.timer_ns = self.now + ns

    def _retransmit_head(self) -> None:
        """Mark the first unacknowledged skb for retransmission at the end of this poll."""
        self._rtx_due = True
        self.stack.xmit_sched(self)

    _rtx_due: bool = False

    async def tcp_retransmit_skb(self) -> None:
        """`tcp_retransmit_skb` of the retransmit queue's head."""
        if not self.rtx_queue:
            return
        t = self._cut_to_segs(self.rtx_queue, 0, 1)   # one MSS at a time (`tcp_fragment`)
        t.retrans += 1
        self.total_retrans += 1
        self.stack.mib.RetransSegs += 1
        await self.tcp_transmit_skb(t)

    async def tcp_retransmit_timer(self) -> None:
        """The retransmit timer fired (`tcp_write_timer_handler`): SYN/SYN-ACK, the first
        unacknowledged skb (RTO backoff, NewReno recovery until snd_nxt is acknowledged), a
        window probe, or the end of TIME_WAIT."""
        mib = self.stack.mib
        self.timer_ns = None
        if self.state == TcpState.TIME_WAIT:
            self._done()
            return
        if self.state == TcpState.CLOSED:
            return
        if not self.rtx_queue:
            if self.write_queue and self.state in SYNCHRONIZED:
                mib.TCPWinProbe += 1                    # `tcp_probe_timer`
                self.backoff += 1
                await self.tcp_write_xmit(probe=True)
                self._arm_timer(min(TCP_RTO_MAX, self.rto_ns << self.backoff))
            return
        limit = TCP_SYN_RETRIES if self.state in (TcpState.SYN_SENT, TcpState.SYN_RECV) \
            else TCP_RETRIES2
        if self.retransmits >= limit:
            mib.TCPAbortOnTimeout += 1
            self.err = errno.ETIMEDOUT
            self.reset = True
            self._done()
            return
        mib.TCPTimeouts += 1
        self.retransmits += 1
        self.backoff += 1
        self.dupacks = 0
        if self.state in SYNCHRONIZED and self.state != TcpState.SYN_RECV:
            self.recover = self.snd_nxt
            self._cut_to_segs(self.rtx_queue, 0, 1)   # the head's first MSS goes now; the
            self._enter_loss()                         # rest of a GSO skb with the lost window
        await self.tcp_retransmit_skb()
        self.rto_ns = min(TCP_RTO_MAX, self.rto_ns * 2)
        self._arm_timer(self.rto_ns)

    async def sendmsg_segments(self, pieces: list[tuple[int, int]] | list[bytes],
                               binding: NetDevmemDmabufBinding | None,
                               uarg: MsgZerocopy | None, max_frags: int) -> int:
        """`tcp_sendmsg_locked`'s loop: cut the send into MSS-sized skbs on the write queue,
        then `tcp_push`. `pieces` are `(dma-buf offset, length)` with a binding (the payload
        becomes net_iov fragments, one per dma-buf page touched, never read:
        `skb_zerocopy_iter_stream` -> `zerocopy_fill_skb_from_devmem`), else bytes copied
        into the skb. An skb also ends when it has `max_frags` fragments (`MAX_SKB_FRAGS`).
        Every skb holds a reference on `uarg` until it is acknowledged. Returns bytes queued.
        With GSO (`gso_ok`: TSO on at the route's device) an skb holds up to `size_goal`
        bytes, several MSS, which the NIC cuts (`tcp_sendmsg_locked` fills skbs to
        `size_goal`)."""
        mss = self.size_goal()
        sent = 0
        work: list[tuple[int, int] | bytes] = list(pieces)
        total = sum(p[1] if isinstance(p, tuple) else len(p) for p in pieces)
        while work:
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
            t = TcpTxSkb(self.write_seq, (self.write_seq + n) & SEQ_MASK, flags,
                         bytes(linear), frags, binding, uarg.get() if uarg else None,
                         pcount=self._pcount(n))
            self.write_queue.append(t)
            self.write_seq = t.end_seq
            self.bytes_sent += n
            sent += n
        await self.tcp_write_xmit()
        return sent

    def send_fin(self) -> None:
        """`tcp_send_fin`: a FIN after everything queued; sent by the next `tcp_write_xmit`."""
        if self.fin_seq is not None:
            return
        self.fin_seq = self.write_seq
        t = TcpTxSkb(self.write_seq, (self.write_seq + 1) & SEQ_MASK, TcpFlags.FIN | TcpFlags.ACK)
        self.write_seq = t.end_seq
        self.write_queue.append(t)
        if self.state == TcpState.ESTABLISHED:
            self.state = TcpState.FIN_WAIT1
        elif self.state == TcpState.CLOSE_WAIT:
            self.state = TcpState.LAST_ACK
        self.stack.xmit_sched(self)

    def zerocopy_notify(self, lo: int, length: int, code: int) -> None:
        """`__msg_zerocopy_callback`: queue `[lo, lo + length - 1]` on the error queue,
        merged into the last queued notification when it continues it
        (`skb_zerocopy_notif_merge`)."""
        if self.dead:
            return                          # SOCK_DEAD: nobody to tell
        hi = (lo + length - 1) & SEQ_MASK
        tail = self.error_queue[-1] if self.error_queue else None
        if (tail is not None and tail.ee_origin == SO_EE_ORIGIN_ZEROCOPY
                and lo == (tail.ee_data + 1) & SEQ_MASK
                and ((tail.ee_data - tail.ee_info) & SEQ_MASK) + 1 + length < (1 << 32)):
            tail.ee_data = hi
            return
        self.error_queue.append(SockExtendedErr(0, SO_EE_ORIGIN_ZEROCOPY, 0, code, lo, hi))

    # --- receive: queues --------------------------------------------------------------------

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
            self._fin_transition()
        if not skb.len:
            skb.free(napi)

    def _fin_transition(self) -> None:
        """`tcp_fin`."""
        if self.state == TcpState.ESTABLISHED:
            self.state = TcpState.CLOSE_WAIT
        elif self.state == TcpState.FIN_WAIT1:
            if self.fin_seq is not None and after(self.snd_una, self.fin_seq):
                self.state = TcpState.TIME_WAIT
                self._arm_timer(TCP_TIMEWAIT_LEN)
            else:
                self.state = TcpState.CLOSING
        elif self.state == TcpState.FIN_WAIT2:
            self.state = TcpState.TIME_WAIT
            self._arm_timer(TCP_TIMEWAIT_LEN)

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

    def _purge_write_queues(self) -> None:
        """`tcp_write_queue_purge`."""
        while self.write_queue:
            self.write_queue.popleft().free()
        while self.rtx_queue:
            self._rtx_popleft().free()

    def close(self) -> None:
        """`tcp_close`: tokens and queued data released at once; then a FIN after the data
        (the socket lives on as an orphan until the FIN exchange ends), or a RST when unread
        data was thrown away (RFC 2525) or the handshake had not completed."""
        unread = bool(self.receive_queue) or bool(self.ofo_queue)
        self.release_user_frags()
        while self.receive_queue:
            self.receive_queue.popleft().free(None)
        while self.ofo_queue:
            self.ofo_queue.pop().free(None)
        while self.accept_queue:
            child = self.accept_queue.popleft()
            child.dead = True
            child.abort()
        for child in list(self.syn_queue):
            child._done()
        self.dead = True
        if self.state == TcpState.LISTEN:
            self.stack.unhash(self)
            self.state = TcpState.CLOSED
            return
        if self.state in (TcpState.CLOSED, TcpState.SYN_SENT):
            self._done()
            return
        if unread and self.state in SYNCHRONIZED and self.state != TcpState.TIME_WAIT:
            self.stack.mib.TCPAbortOnData += 1
            self.abort()
            return
        if self.state in SENDING:
            self.send_fin()

    def abort(self) -> None:
        """`tcp_send_active_reset` + `tcp_done`: a RST (it leaves at the next poll), then
        CLOSED at once."""
        dev = self.dst_dev
        if self.can_send and dev is not None:       # can_send: a route, so dst_dev is set
            self.stack._resets.append(
                (dev, self.build_skb(self.snd_nxt, TcpFlags.RST | TcpFlags.ACK, 0)))
        else:
            self.stack.mib.OutNoRoutes += 1
        self._done()

    def destroy(self) -> None:
        """`inet_csk_destroy_sock` at once: tokens, queues, hash tables (no FIN)."""
        self.release_user_frags()
        while self.receive_queue:
            self.receive_queue.popleft().free(None)
        while self.ofo_queue:
            self.ofo_queue.pop().free(None)
        while self.accept_queue:
            self.accept_queue.popleft().destroy()
        self.dead = True
        self._done()


class TcpStack:
    """The TCP layer of one kernel: hash tables, counters, timers, the receive entry point."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.established: dict[tuple, TcpSock] = {}
        self.listeners: dict[tuple[int, int], list[TcpSock]] = {}
        self.mib = TcpMib()
        self.not_tcp_rx: int = 0
        self._ack_pending: dict[TcpSock, None] = {}
        self._xmit_pending: dict[TcpSock, None] = {}
        self._resets: list[tuple[Netdev, SkBuff]] = []
        self._iss = 0x1234_0000
        self._next_port = 32768
        self.rto_min_ns = TCP_RTO_MIN
        """`TCP_RTO_MIN` (200 ms, Linux; RFC 6298 says 1 s). A backend whose time runs much
        slower than the peer's may lower it."""
        self.clock_g_ns = CLOCK_G
        """The clock granularity G of RFC 6298 (1 ms: a jiffy at HZ=1000), a floor under
        4 RTTVAR. A backend whose time runs much slower than the peer's may lower it."""
        self.rto_init_ns = TCP_TIMEOUT_INIT
        """`TCP_TIMEOUT_INIT` (1 s): the RTO of a new socket before its first RTT sample (SYN,
        SYN-ACK). A backend whose time runs much slower than the peer's may lower it."""
        self.congestion_control = 'reno'
        """`net.ipv4.tcp_congestion_control` (`CONGESTION_CONTROLS`)."""
        self.xmit_quantum: int | None = 1
        """Frames of credit a socket gets per turn when several sockets have data to send at
        the end of a poll, in turns until none can send more: the per-flow round robin of the
        default qdisc (fq_codel's deficit round robin with a quantum of one MTU-sized frame,
        RFC 8290 4.2; Linux's `fq` does the same per socket), so that one flow's burst does
        not queue ahead of the others' on the device. A socket sends skbs while it has
        credit; a GSO skb costs its segments, so a flow sending a k-segment TSO skb sits
        out its next k - 1 turns. None: each socket sends all it may in one go (a FIFO
        qdisc)."""
        self.tso_win_divisor = TCP_TSO_WIN_DIVISOR
        """`net.ipv4.tcp_tso_win_divisor` (0: defer only while the room is at most 3 MSS)."""
        self.min_tso_segs = TCP_MIN_TSO_SEGS
        """`net.ipv4.tcp_min_tso_segs`."""
        self.tso_rtt_log = TCP_TSO_RTT_LOG
        """`net.ipv4.tcp_tso_rtt_log`."""
        self.pacing_ss_ratio = TCP_PACING_SS_RATIO
        self.pacing_ca_ratio = TCP_PACING_CA_RATIO
        """`net.ipv4.tcp_pacing_ss_ratio` / `tcp_pacing_ca_ratio` (percent)."""
        self.window_scaling = True
        """`net.ipv4.tcp_window_scaling` (Linux: 1): offer RFC 7323 window scaling in SYNs and
        accept it in SYN-ACKs."""
        self.rmem_max = TCP_RMEM_MAX
        """`net.ipv4.tcp_rmem[2]`: the largest receive buffer, which sets the shift offered."""
        self.repair_iss: dict[tuple, int] = {}
        """ISS a passive connection with this key `(family, laddr, lport, raddr, rport)`
        takes instead of a fresh one, as a `TCP_REPAIR` socket would set its sequence: a
        capture replay uses it so the captured client's ACKs match."""

    @property
    def clock(self) -> Clock:
        return self.kernel.get_clock()

    def initial_wscale(self) -> int:
        """The shift we offer (`tcp_select_initial_window`): the smallest that lets the
        largest receive buffer (`rmem_max`) be advertised, i.e. floor(log2(rmem_max)) - 15,
        within 0..14 (7 for Linux's 6 MiB default)."""
        return max(0, min(TCP_MAX_WSCALE, self.rmem_max.bit_length() - 1 - 15))

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
        self._ack_pending.pop(sk, None)

    def lookup_listener(self, family: int, daddr: IpAddress, dport: int) -> TcpSock | None:
        for sk in self.listeners.get((family, dport), []):
            if sk.laddr is None or sk.laddr == daddr:
                return sk
        return None

    # --- output scheduling (the end of the poll) --------------------------------------------

    def ack_sched(self, sk: TcpSock) -> None:
        """`inet_csk_schedule_ack`: an ACK goes out at the end of this NAPI poll (the
        delayed-ACK timer of this model; one ACK covers every in-order segment of the
        poll, plus one immediate duplicate ACK per out-of-order or old segment)."""
        self._ack_pending[sk] = None

    def xmit_sched(self, sk: TcpSock) -> None:
        """`tcp_push` / `tcp_data_snd_check` from the receive path: run `tcp_write_xmit`
        (and due retransmissions) at the end of the poll."""
        self._xmit_pending[sk] = None

    async def flush_acks(self, dev: Netdev | None = None) -> int:
        """The end of a poll: RSTs, retransmissions, data the window lets out, then the ACKs
        still owed (data segments carry the ACK already) and window updates. Of sockets
        routed through `dev`, or all. Returns the segments sent."""
        before_out = self.mib.OutSegs
        for rdev, skb in list(self._resets):
            if dev is None or rdev is dev:
                self._resets.remove((rdev, skb))
                self.mib.OutSegs += 1
                self.mib.OutRsts += 1
                await rdev.dev_queue_xmit(skb)
        turn: dict[TcpSock, int] = {}
        for sk in list(self._xmit_pending):
            if dev is not None and sk.dst_dev is not None and sk.dst_dev is not dev:
                continue
            del self._xmit_pending[sk]
            if sk.state == TcpState.CLOSED:
                continue
            turn[sk] = 0
            if sk._rtx_due:
                sk._rtx_due = False
                await sk.tcp_retransmit_skb()
                turn[sk] += 1
        q = self.xmit_quantum
        deficit: dict[TcpSock, int] = {}
        while turn:                             # the flows in turns (`xmit_quantum`)
            for sk in list(turn):
                done = sk.state == TcpState.CLOSED
                if not done and q is None:
                    turn[sk] += await sk.tcp_write_xmit()
                    done = True
                elif not done and q is not None:
                    # deficit round robin (RFC 8290 4.2): a turn adds `q` frames of credit;
                    # the flow sends skbs while it has credit, each costing its segments (a
                    # TSO skb several), so that a flow sending GSO skbs waits its turns out
                    deficit[sk] = deficit.get(sk, 0) + q
                    while deficit[sk] > 0:
                        out = self.mib.OutSegs
                        k = await sk.tcp_write_xmit(max_segs=1)
                        if not k or sk.state == TcpState.CLOSED:
                            done = True
                            break
                        turn[sk] += k
                        deficit[sk] -= self.mib.OutSegs - out
                if done:
                    sent = turn.pop(sk)
                    if sent and sk in self._ack_pending and not sk.dupacks_owed:
                        del self._ack_pending[sk]       # the data carried the ACK
        for sk in list(self.established.values()):
            if (sk not in self._ack_pending and sk.window_update_due()
                    and (dev is None or sk.dst_dev is dev)):
                self._ack_pending[sk] = None
        for sk in list(self._ack_pending):
            if dev is not None and sk.dst_dev is not None and sk.dst_dev is not dev:
                continue
            del self._ack_pending[sk]
            if sk.state in (TcpState.CLOSED, TcpState.LISTEN, TcpState.SYN_SENT):
                continue
            n = max(1, sk.dupacks_owed)
            self.mib.DupAcksOut += n - 1
            sk.dupacks_owed = 0
            for _ in range(n):
                await sk.send_ack()
        return self.mib.OutSegs - before_out

    flush = flush_acks

    async def run_timers(self) -> int:
        """The timer softirq at poll time: every socket whose retransmit/probe/TIME_WAIT
        timer is due runs it. Returns how many fired."""
        now = self.clock.now_ns()
        fired = 0
        for sk in list(self.established.values()):
            if sk.timer_ns is not None and sk.timer_ns <= now:
                fired += 1
                await sk.tcp_retransmit_timer()
        return fired

    def next_timer_ns(self) -> int | None:
        """The earliest armed timer, or None."""
        t = [sk.timer_ns for sk in self.established.values() if sk.timer_ns is not None]
        return min(t) if t else None

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

    # --- RST for no socket ------------------------------------------------------------------

    def send_reset_for(self, skb: SkBuff, h: PacketHeaders, dev: Netdev | None = None,
                       mac: bytes | None = None) -> None:
        """`tcp_v4_send_reset`: never for a RST; `<SEQ=SEG.ACK><CTL=RST>` when the segment
        has an ACK, else `<SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>` (RFC 793 3.4). Sent out
        of the device the segment came in on, at the end of the poll."""
        if TcpFlags.RST in h.flags:
            return
        dev = dev or (self.kernel.dev_get_by_index(skb.skb_iif) if skb.skb_iif else None)
        mac = mac or skb.src_mac
        if dev is None or mac is None:
            self.mib.OutNoRoutes += 1
            return
        if TcpFlags.ACK in h.flags:
            seq, ack, flags = h.ack_seq, 0, TcpFlags.RST
        else:
            seg_len = h.payload_len + int(TcpFlags.SYN in h.flags) + int(TcpFlags.FIN in h.flags)
            seq, ack, flags = 0, (h.seq + seg_len) & SEQ_MASK, TcpFlags.RST | TcpFlags.ACK
        head, csum_start = build_tcp_headers(dev.dev_addr, mac, h.daddr, h.saddr, h.dport,
                                             h.sport, seq, ack, flags, 0, 0)
        self._resets.append((dev, SkBuff(head=head, ip_summed=IpSummed.CHECKSUM_PARTIAL,
                                         csum_start=csum_start, csum_offset=TCP_CSUM_OFFSET)))

    # --- receive ----------------------------------------------------------------------------

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
        opts = skb.head[skb.data + h.l4_off + TCP_HLEN:skb.data + h.pay_off]
        skb.pull(h.pay_off)
        want = h.payload_len
        if skb.len < want:
            self.mib.InErrs += 1
            skb.free(napi)
            return
        skb.trim(want, napi)
        skb.seq = h.seq
        skb.fin = TcpFlags.FIN in h.flags
        skb.src_mac = src_mac
        skb.tcp_options = parse_tcp_options(opts) if opts else {}
        self.mib.InSegs += 1
        sk = self.established.get((h.family, h.daddr, h.dport, h.saddr, h.sport))
        if sk is not None:
            if skb.skb_iif:
                sk.rx_ifindex, sk.rx_queue = skb.skb_iif, skb.queue_mapping
            sk.rcv_state_process(skb, h, napi)
            return
        listener = self.lookup_listener(h.family, h.daddr, h.dport)
        if listener is not None:
            if TcpFlags.SYN in h.flags and not h.flags & (TcpFlags.ACK | TcpFlags.RST):
                self._conn_request(listener, skb, h, src_mac)
                skb.free(napi)
                return
            if TcpFlags.RST in h.flags:
                skb.free(napi)
                return
        self.mib.NoSocket += 1
        self.send_reset_for(skb, h, mac=src_mac)
        skb.free(napi)

    def _conn_request(self, listener: TcpSock, skb: SkBuff, h: PacketHeaders,
                      src_mac: bytes) -> None:
        """`tcp_conn_request`: a request socket in SYN_RECV (hashed, so the handshake's ACK
        finds it), a SYN-ACK with the MSS option (and Window Scale when the SYN offered it) at
        the end of the poll."""
        isn_next = (h.seq + 1) & SEQ_MASK
        child = TcpSock(self, h.family, TcpState.SYN_RECV, h.daddr, h.dport, h.saddr,
                        h.sport, irs=h.seq, rcv_nxt=isn_next, copied_seq=isn_next,
                        rcv_wup=isn_next)
        child.parent = listener
        iss = self.repair_iss.get(child.key)
        child.iss = iss if iss is not None else self.next_iss()
        child.snd_wnd = h.window
        child.snd_wl1 = h.seq
        child.rx_ifindex, child.rx_queue = skb.skb_iif, skb.queue_mapping
        child.dst_dev = self.route(h.saddr, skb.skb_iif)
        child.dst_mac = self.kernel.neigh_lookup(h.saddr) or src_mac
        child.zerocopy = listener.zerocopy     # sock flags are cloned
        child.rcvbuf = listener.rcvbuf         # and sk_rcvbuf (`sk_clone_lock`)
        child._take_mss(skb, h)
        if self.window_scaling and wscale_of(skb.tcp_options) is not None:
            child.ws_offered = True            # a SYN-ACK offers it only in reply (RFC 7323 2.2)
            child.rcv_wscale = self.initial_wscale()
        child._take_wscale(skb)
        child.queue_syn(ack=True)
        self.established[child.key] = child
        listener.syn_queue.append(child)
        self.mib.PassiveOpens += 1
        self.xmit_sched(child)


def ip_addr(addr: str | IpAddress | None) -> IpAddress | None:
    """'' / '0.0.0.0' / '::' -> None (any address); else an ipaddress object."""
    if addr is None or addr == '':
        return None
    ip = ipaddress.ip_address(addr) if isinstance(addr, str) else addr
    return None if ip.is_unspecified else ip
