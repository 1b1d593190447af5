"""The socket API of devmem TCP: recvmsg with MSG_SOCK_DEVMEM, SO_DEVMEM_DONTNEED, close.

`Socket.recvmsg` is `tcp_recvmsg_locked` with `tcp_recvmsg_dmabuf` (net/ipv4/tcp.c), non-
blocking (an empty queue raises EAGAIN; end of stream returns 0 bytes):

- Bytes in host memory are copied into the returned data. For an skb whose payload is in
  device memory, each fragment produces one `SCM_DEVMEM_DMABUF` message (`DmabufCmsg`: the
  byte offset inside the dma-buf, the size, a fresh token, the binding id) and takes a
  reference on the buffer for the token; bytes of such an skb that are in host memory (its
  linear part) are copied and reported with one `SCM_DEVMEM_LINEAR` message.
- One call never mixes device-memory skbs and ordinary ones: it stops at the boundary.
- Device-memory data without MSG_SOCK_DEVMEM: EFAULT when nothing was read yet, else the
  bytes read so far.
- A control buffer too small for the next message (`put_cmsg_notrunc`): nothing truncated;
  the bytes delivered so far, or ETOOSMALL when none.

`setsockopt(SOL_SOCKET, SO_DEVMEM_DONTNEED, tokens)` is `sock_devmem_dontneed`
(net/core/sock.c): EBADF if not TCP; EINVAL when the length is not a multiple of 8 or above
128 entries; tokens unknown or already returned are skipped; at most 1024 fragments are
examined; returns the number freed. `close` releases every outstanding token.

Sockets are made by `Kernel.socket`. `listen`/`accept` hand out connections whose
three-way handshake completed; `connect` sends a SYN (the socket is ESTABLISHED once the
SYN-ACK was polled); `shutdown(SHUT_WR)` and `close` send a FIN after the queued data at the
next poll (driver/tcp.py has the state machine). Nothing blocks: calls that would wait raise
EAGAIN, and the driver's poll moves the connection on.
"""
from __future__ import annotations

import errno
import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

from driver.errors import ETOOSMALL, KernelError, check_buffer, check_int, check_sockaddr
from driver.headers import AF_INET, AF_INET6
from driver.netmem import NetIov
from driver.skbuff import (SO_EE_CODE_ZEROCOPY_COPIED, SO_EE_ORIGIN_ZEROCOPY, MsgZerocopy,
                           SkBuff, SockExtendedErr, _put)
from driver.tcp import SEQ_MASK, IpAddress, TcpSock, TcpState, ip_addr
from models.formats import TX_TSO_MAX_SEGS

if TYPE_CHECKING:
    from driver.kernel import Kernel

SOCK_STREAM = 1
SOCK_DGRAM = 2
SOL_SOCKET = 1
SO_DEVMEM_LINEAR = 78
SCM_DEVMEM_LINEAR = SO_DEVMEM_LINEAR
SO_DEVMEM_DMABUF = 79
SCM_DEVMEM_DMABUF = SO_DEVMEM_DMABUF
SO_DEVMEM_DONTNEED = 80
MSG_DONTWAIT = 0x40
MSG_CTRUNC = 0x08
MSG_SOCK_DEVMEM = 0x2000000
MSG_ERRQUEUE = 0x2000
MSG_ZEROCOPY = 0x4000000
SO_ZEROCOPY = 60
SO_RCVBUF = 8
SOCK_MIN_RCVBUF = 2304
"""The smallest receive buffer SO_RCVBUF sets (Linux: 2 * (2048 + sizeof(struct sk_buff)))."""
SOL_IP = 0
IP_RECVERR = 11
SOL_IPV6 = 41
IPV6_RECVERR = 25
SOCKADDR_IN_LEN = 16
SOCKADDR_IN6_LEN = 28
MAX_SKB_FRAGS = 17
MAX_DONTNEED_TOKENS = 128
MAX_DONTNEED_FRAGS = 1024

CMSGHDR_LEN = 16
"""`sizeof(struct cmsghdr)` on a 64-bit kernel (size_t len, int level, int type)."""


def CMSG_ALIGN(n: int) -> int:
    return (n + 7) & ~7


def CMSG_LEN(n: int) -> int:
    return CMSG_ALIGN(CMSGHDR_LEN) + n


def CMSG_SPACE(n: int) -> int:
    return CMSG_ALIGN(CMSGHDR_LEN) + CMSG_ALIGN(n)


@dataclass(frozen=True)
class DmabufCmsg:
    """`struct dmabuf_cmsg` (24 bytes)."""

    frag_offset: int = 0
    """Byte offset of the fragment inside the dma-buf (devmem messages only)."""
    frag_size: int = 0
    frag_token: int = 0
    dmabuf_id: int = 0
    flags: int = 0

    FORMAT = struct.Struct('<QIIII')

    def pack(self) -> bytes:
        return self.FORMAT.pack(self.frag_offset, self.frag_size, self.frag_token,
                                self.dmabuf_id, self.flags)

    @classmethod
    def unpack(cls, raw: bytes) -> DmabufCmsg:
        return cls(*cls.FORMAT.unpack(raw))


assert DmabufCmsg.FORMAT.size == 24


@dataclass(frozen=True)
class DmabufToken:
    """`struct dmabuf_token` (8 bytes): tokens `token_start .. token_start + token_count - 1`."""

    token_start: int
    token_count: int = 1

    FORMAT = struct.Struct('<II')

    def pack(self) -> bytes:
        return self.FORMAT.pack(self.token_start, self.token_count)

    @classmethod
    def unpack(cls, raw: bytes) -> DmabufToken:
        return cls(*cls.FORMAT.unpack(raw))


@dataclass(frozen=True)
class Cmsg:
    """One control message: `cmsg_level`, `cmsg_type` and its data: a `struct dmabuf_cmsg`
    (devmem receive) or a `struct sock_extended_err` (error queue)."""

    level: int
    type: int
    data: DmabufCmsg | SockExtendedErr | bytes

    @property
    def is_dmabuf(self) -> bool:
        return self.type == SCM_DEVMEM_DMABUF

    @property
    def is_linear(self) -> bool:
        return self.type == SCM_DEVMEM_LINEAR

    def pack(self) -> bytes:
        """The message as it sits in the control buffer (header, data, padding)."""
        body = self.data if isinstance(self.data, bytes) else self.data.pack()
        hdr = struct.pack('<Qii', CMSG_LEN(len(body)), self.level, self.type)
        return (hdr + body).ljust(CMSG_SPACE(len(body)), b'\0')


@dataclass
class RecvMsg:
    """What recvmsg returned: the byte count, the bytes copied (host-memory data only), the
    control messages and `msg_flags`."""

    nbytes: int
    data: bytes = b''
    cmsgs: list[Cmsg] = field(default_factory=list)
    flags: int = 0

    @property
    def dmabuf(self) -> list[DmabufCmsg]:
        return [c.data for c in self.cmsgs if c.is_dmabuf and isinstance(c.data, DmabufCmsg)]

    @property
    def linear(self) -> list[DmabufCmsg]:
        return [c.data for c in self.cmsgs if c.is_linear and isinstance(c.data, DmabufCmsg)]

    @property
    def extended_errors(self) -> list[SockExtendedErr]:
        """The `sock_extended_err` of a recvmsg(MSG_ERRQUEUE)."""
        return [c.data for c in self.cmsgs if isinstance(c.data, SockExtendedErr)]

    @property
    def tokens(self) -> list[DmabufToken]:
        return [DmabufToken(c.frag_token, 1) for c in self.dmabuf]

    @property
    def control(self) -> bytes:
        """The control buffer as userspace would see it."""
        return b''.join(c.pack() for c in self.cmsgs)


@dataclass(frozen=True)
class TcpInfo:
    """A few `struct tcp_info`-like fields, including what the next ACK would carry."""

    state: TcpState
    rcv_nxt: int
    copied_seq: int
    bytes_received: int
    ofo_segments: int
    tokens_outstanding: int
    rcv_wnd: int = 0
    """The window the next ACK would advertise (from rcv_nxt)."""
    snd_una: int = 0
    snd_nxt: int = 0
    snd_wnd: int = 0
    rto_ns: int = 0
    srtt_ns: int = 0
    total_retrans: int = 0
    bytes_acked: int = 0
    unacked: int = 0
    """skbs in the retransmit queue."""
    notsent: int = 0
    """skbs in the write queue."""
    snd_wscale: int = 0
    """`tcpi_snd_wscale`: the peer's window scale shift (0 without scaling, RFC 7323)."""
    rcv_wscale: int = 0
    """`tcpi_rcv_wscale`: ours."""


@dataclass
class _Msg:
    controllen: int
    data: bytearray = field(default_factory=bytearray)
    cmsgs: list[Cmsg] = field(default_factory=list)

    def put_cmsg_notrunc(self, type_: int, cm: DmabufCmsg) -> int:
        """`put_cmsg_notrunc`: 0, or -ETOOSMALL when the message does not fit whole."""
        if self.controllen < CMSG_LEN(DmabufCmsg.FORMAT.size):
            return -ETOOSMALL
        self.controllen -= min(CMSG_SPACE(DmabufCmsg.FORMAT.size), self.controllen)
        self.cmsgs.append(Cmsg(SOL_SOCKET, type_, cm))
        return 0



def _int_optval(value: bytes | int, name: str) -> int:
    """An int option's value as `sockopt_get_int` reads it: an int, or at least 4 bytes (a
    C int, little-endian); EINVAL for a shorter optlen, EFAULT for what is not an int."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        if len(value) < 4:
            raise KernelError(errno.EINVAL, 'optlen < sizeof(int)')
        return int(struct.unpack('<i', bytes(value[:4]))[0])
    return check_int(value, f'{name} optval', err=errno.EFAULT)

class Socket:
    """A BSD socket (`struct socket`) of a `Kernel`."""

    def __init__(self, kernel: Kernel, family: int, type_: int, sk: TcpSock | None) -> None:
        self.kernel = kernel
        self.family = family
        self.type = type_
        self.sk = sk
        self.closed = False
        self._bound: tuple[IpAddress | None, int] | None = None
        self.zerocopy = sk.zerocopy if sk is not None else False

    @classmethod
    def create(cls, kernel: Kernel, family: int, type_: int) -> Socket:
        if family not in (AF_INET, AF_INET6):
            raise KernelError(errno.EAFNOSUPPORT, f'family {family}')
        if type_ == SOCK_STREAM:
            return cls(kernel, family, type_, TcpSock(kernel.tcp, family, TcpState.CLOSED))
        if type_ == SOCK_DGRAM:
            return cls(kernel, family, type_, None)
        raise KernelError(errno.ESOCKTNOSUPPORT, f'type {type_}')

    @property
    def is_tcp(self) -> bool:
        """`sk_is_tcp`."""
        return self.sk is not None

    def _tcp(self) -> TcpSock:
        if self.closed:
            raise KernelError(errno.EBADF, 'socket is closed')
        if self.sk is None:
            raise KernelError(errno.EOPNOTSUPP, 'not a TCP socket')
        return self.sk

    # --- connection setup -------------------------------------------------------------------

    def bind(self, address: tuple[str, int]) -> None:
        if self.closed:
            raise KernelError(errno.EBADF, 'socket is closed')
        addr, port = check_sockaddr(address)
        self._bound = (ip_addr(addr), port)

    def listen(self, backlog: int = 128) -> None:
        check_int(backlog, 'backlog')
        sk = self._tcp()
        if self._bound is None:
            raise KernelError(errno.EDESTADDRREQ, 'bind first')
        sk.laddr, sk.lport = self._bound
        sk.state = TcpState.LISTEN
        self.kernel.tcp.hash_listener(sk)

    def accept(self) -> tuple[Socket, tuple[str, int]]:
        """A connection established by a SYN; EAGAIN when none is waiting."""
        sk = self._tcp()
        if sk.state != TcpState.LISTEN:
            raise KernelError(errno.EINVAL, 'socket is not listening')
        if not sk.accept_queue:
            raise KernelError(errno.EAGAIN, 'no connection waiting')
        child = sk.accept_queue.popleft()
        return Socket(self.kernel, self.family, SOCK_STREAM, child), (str(child.raddr), child.rport)

    async def connect(self, address: tuple[str, int]) -> None:
        """`connect(2)`, non-blocking: route and neighbour lookup, SYN sent; the socket is
        ESTABLISHED once the SYN-ACK has been polled. ENETUNREACH without a route,
        EADDRNOTAVAIL when the route's device has no address of the family, EHOSTUNREACH
        without a neighbour entry (`Kernel.neigh_add`), EISCONN when connected."""
        address = check_sockaddr(address)
        sk = self._tcp()
        if sk.state != TcpState.CLOSED:
            raise KernelError(errno.EISCONN, f'socket is {sk.state.value}')
        daddr = ip_addr(address[0])
        if daddr is None:
            raise KernelError(errno.EINVAL, 'no destination address')
        stack = self.kernel.tcp
        dev = self.kernel.ip_route_output(daddr)
        if dev is None:
            raise KernelError(errno.ENETUNREACH, f'no route to {daddr}')
        saddr = dev.source_addr(daddr.version)
        if saddr is None:
            raise KernelError(errno.EADDRNOTAVAIL, f'{dev.name} has no IPv{daddr.version} address')
        mac = self.kernel.neigh_lookup(daddr)
        if mac is None:
            raise KernelError(errno.EHOSTUNREACH, f'no neighbour entry for {daddr}')
        if self._bound is not None and self._bound[1]:
            sport = self._bound[1]
        else:
            sport = stack._next_port
            stack._next_port = stack._next_port + 1 if stack._next_port < 60999 else 32768
        sk.laddr, sk.lport, sk.raddr, sk.rport = saddr, sport, daddr, address[1]
        sk.dst_dev, sk.dst_mac = dev, mac
        sk.iss = stack.next_iss()
        sk.state = TcpState.SYN_SENT
        stack.established[sk.key] = sk
        stack.mib.ActiveOpens += 1
        await sk.send_syn()

    def tcp_info(self) -> TcpInfo:
        sk = self._tcp()
        wnd = max(sk.receive_window(), sk.new_window())
        return TcpInfo(sk.state, sk.rcv_nxt, sk.copied_seq, sk.bytes_received,
                       len(sk.ofo_queue), len(sk.user_frags), wnd, sk.snd_una, sk.snd_nxt,
                       sk.snd_wnd, sk.rto_ns, sk.srtt_ns,
                       sk.total_retrans,
                       sk.bytes_acked, len(sk.rtx_queue), len(sk.write_queue),
                       sk.snd_wscale, sk.rcv_wscale)

    def shutdown(self, how: int = 1) -> None:
        """`shutdown(2)`: SHUT_WR (1) or SHUT_RDWR (2) queue a FIN after the data
        (`tcp_shutdown` -> `tcp_send_fin`); it leaves at the next poll."""
        sk = self._tcp()
        if isinstance(how, bool) or how not in (0, 1, 2):
            raise KernelError(errno.EINVAL, f'how {how}')
        if sk.state in (TcpState.LISTEN, TcpState.CLOSED, TcpState.SYN_SENT):
            raise KernelError(errno.ENOTCONN, f'socket is {sk.state.value}')
        if how in (1, 2):
            sk.send_fin()

    # --- receive ----------------------------------------------------------------------------

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        """`recv(2)`: ordinary bytes."""
        return self.recvmsg(bufsize, 0, flags).data

    def recvmsg(self, bufsize: int, ancbufsize: int = 0, flags: int = 0) -> RecvMsg:
        """`recvmsg(2)`, non-blocking. `ancbufsize` is `msg_controllen` in bytes; each devmem
        message takes CMSG_SPACE(24) = 40 bytes. With MSG_ERRQUEUE: one zero-copy
        notification from the error queue (`ip_recv_error`), EAGAIN when there is none."""
        check_int(bufsize, 'recvmsg len')
        check_int(ancbufsize, 'msg_controllen', 0)
        check_int(flags, 'recvmsg flags')
        if self.sk is None:
            self._tcp()
        sk = self._tcp()
        if flags & MSG_ERRQUEUE:
            return self._recv_error(sk, ancbufsize)
        if sk.state == TcpState.LISTEN:
            raise KernelError(errno.ENOTCONN, 'listening socket')
        msg = _Msg(ancbufsize)
        copied = 0
        last_copied_dmabuf: bool | None = None
        seq = sk.copied_seq
        while copied < bufsize and sk.receive_queue:
            skb = sk.receive_queue[0]
            offset = (seq - skb.seq) & 0xFFFF_FFFF
            used = min(skb.len - offset, bufsize - copied)
            unreadable = not skb.readable
            if last_copied_dmabuf is not None and last_copied_dmabuf != unreadable:
                break
            if not unreadable:
                msg.data += skb.copy_bits(offset, used)
            else:
                if not flags & MSG_SOCK_DEVMEM:
                    if not copied:
                        copied = -errno.EFAULT
                    break
                err = self._recvmsg_dmabuf(sk, skb, offset, msg, used)
                if err < 0:
                    if not copied:
                        copied = err
                    break
                used = err
            last_copied_dmabuf = unreadable
            seq = (seq + used) & 0xFFFF_FFFF
            copied += used
            if used + offset < skb.len:
                continue
            sk.receive_queue.popleft()
            skb.free(None)
        sk.copied_seq = seq
        if copied < 0:
            raise KernelError(-copied, 'recvmsg')
        if copied == 0 and bufsize:
            if sk.reset:
                raise KernelError(sk.err if sk.err in (errno.ECONNREFUSED, errno.ETIMEDOUT)
                                  else errno.ECONNRESET, 'connection reset')
            if not sk.fin_received:
                raise KernelError(errno.EAGAIN, 'no data')
        return RecvMsg(copied, bytes(msg.data), msg.cmsgs, 0)

    def _recv_error(self, sk: TcpSock, ancbufsize: int) -> RecvMsg:
        """`ip_recv_error`/`ipv6_recv_error`: dequeue one error; its control message is
        IP_RECVERR (IPV6_RECVERR) holding `struct sock_extended_err` and the offender's
        address (all zero for zero-copy notifications). A control buffer too small for it
        gets MSG_CTRUNC and nothing (the error is consumed, as `put_cmsg` truncates)."""
        if not sk.error_queue:
            raise KernelError(errno.EAGAIN, 'error queue empty')
        serr = sk.error_queue.popleft()
        v6 = self.family == AF_INET6
        level, type_ = (SOL_IPV6, IPV6_RECVERR) if v6 else (SOL_IP, IP_RECVERR)
        size = SockExtendedErr.FORMAT.size + (SOCKADDR_IN6_LEN if v6 else SOCKADDR_IN_LEN)
        if ancbufsize < CMSG_LEN(size):
            return RecvMsg(0, b'', [], MSG_ERRQUEUE | MSG_CTRUNC)
        return RecvMsg(0, b'', [Cmsg(level, type_, serr)], MSG_ERRQUEUE)

    def zerocopy_notifications(self) -> list[tuple[int, int]]:
        """Drain the error queue: the `[lo, hi]` ranges of the zero-copy notifications."""
        out: list[tuple[int, int]] = []
        while True:
            try:
                m = self.recvmsg(0, CMSG_SPACE(64), MSG_ERRQUEUE)
            except KernelError as e:
                if e.errno == errno.EAGAIN:
                    return out
                raise
            for ee in m.extended_errors:
                assert ee.ee_origin == SO_EE_ORIGIN_ZEROCOPY
                out.append((ee.lo, ee.hi))

    # --- send -------------------------------------------------------------------------------

    async def sendmsg(self, buffers: list[tuple[int, int]] | list[bytes],
                      ancdata: list[tuple[int, int, bytes]] | None = None,
                      flags: int = 0) -> int:
        """`sendmsg(2)` on a TCP socket (`tcp_sendmsg_locked`), non-blocking; returns the
        bytes queued. `ancdata` is `(level, type, data)` control messages.

        Devmem TX: `(SOL_SOCKET, SCM_DEVMEM_DMABUF, u32 id)` makes every `buffers` entry a
        `(dma-buf offset, length)` pair. Checks, in order: the id without MSG_ZEROCOPY or
        without SO_ZEROCOPY EINVAL; an unknown id or an RX binding EINVAL; an offset at or
        past the dma-buf size EFAULT (a range that starts inside and runs past the end is a
        short send up to the end); the socket's route through another device than the
        binding's ENODEV. The payload is never read: each segment's fragments are net_iovs
        of the TX binding, cut at dma-buf pages (so never across 4 KiB).

        Without the control message `buffers` are bytes, copied into the skbs. MSG_ZEROCOPY
        on a socket with SO_ZEROCOPY gives the call a notification id (then
        SO_EE_CODE_ZEROCOPY_COPIED for copied data); MSG_ZEROCOPY without SO_ZEROCOPY is
        ignored, as in Linux."""
        check_int(flags, 'sendmsg flags')
        if isinstance(buffers, (str, bytes, bytearray, memoryview)) or not isinstance(buffers, (list, tuple)):
            raise KernelError(errno.EFAULT, f'msg_iov: a {type(buffers).__name__} is not a list of buffers')
        sk = self._tcp()
        dmabuf_id: int | None = None
        if ancdata is not None and not isinstance(ancdata, (list, tuple)):
            raise KernelError(errno.EINVAL, f'msg_control: a {type(ancdata).__name__} is not a list of cmsgs')
        for cmsg in ancdata or []:
            if not isinstance(cmsg, tuple) or len(cmsg) != 3:
                raise KernelError(errno.EINVAL, f'control message {cmsg!r}: not (level, type, data)')
            level, type_, data = cmsg
            check_int(level, 'cmsg_level')
            check_int(type_, 'cmsg_type')
            data = check_buffer(data, 'cmsg data')
            if level != SOL_SOCKET:
                continue
            if type_ != SCM_DEVMEM_DMABUF or len(data) != 4:
                raise KernelError(errno.EINVAL, f'control message {level}/{type_}')
            dmabuf_id = struct.unpack('<I', data)[0]
        zc = bool(flags & MSG_ZEROCOPY) and self.zerocopy
        binding = None
        pieces: list = []
        if dmabuf_id is not None:
            from driver.devmem import net_devmem_get_binding
            if not zc:
                raise KernelError(errno.EINVAL, 'SCM_DEVMEM_DMABUF needs MSG_ZEROCOPY and '
                                                'SO_ZEROCOPY')
            binding = net_devmem_get_binding(self.kernel, dmabuf_id)
            size = binding.dmabuf.size
            for iov in buffers:
                if not (isinstance(iov, tuple) and len(iov) == 2):
                    raise KernelError(errno.EFAULT, f'msg_iov entry {iov!r}: a devmem send takes '
                                                    f'(dma-buf offset, length) pairs')
                check_int(iov[0], 'iov_base', 0, err=errno.EFAULT)
                check_int(iov[1], 'iov_len', 0)
            for base, n in buffers:
                if n <= 0:
                    continue
                if base < 0 or base >= size:
                    break
                pieces.append((base, min(n, size - base)))
                if base + n > size:
                    break
            if not pieces and any(n > 0 for _, n in buffers):
                raise KernelError(errno.EFAULT, 'dma-buf offset at or past the dma-buf size')
            if sk.dst_dev is None or sk.dst_dev.ifindex != binding.dev.ifindex:
                raise KernelError(errno.ENODEV, 'the route does not go through the bound device')
        else:
            pieces = [check_buffer(b, 'msg_iov entry') for b in buffers]
            pieces = [b for b in pieces if b]
        if sk.state not in (TcpState.ESTABLISHED, TcpState.CLOSE_WAIT) or sk.fin_seq is not None:
            if sk.reset:
                raise KernelError(sk.err if sk.err == errno.ECONNRESET else errno.EPIPE,
                                  f'socket is {sk.state.value}')
            raise KernelError(errno.EPIPE if sk.fin_seq is not None else errno.ENOTCONN,
                              f'socket is {sk.state.value}')
        if not pieces:
            return 0
        dev = sk.dst_dev
        if not sk.can_send or dev is None:      # can_send: a route, so dst_dev is set
            raise KernelError(errno.EHOSTUNREACH, 'no route or neighbour')
        uarg = None
        if zc:
            uarg = MsgZerocopy(sk, sk.zckey, zerocopy=binding is not None)
            sk.zckey = (sk.zckey + 1) & SEQ_MASK
        # a frame: header, fragments, padding within the NIC's max_segs; a TSO send: the
        # header and MAX_SKB_FRAGS fragments within TX_TSO_MAX_SEGS (docs/tx.md)
        max_frags = (min(MAX_SKB_FRAGS, TX_TSO_MAX_SEGS - 1) if sk.gso_ok
                     else max(1, min(MAX_SKB_FRAGS, dev.tx_max_segs - 2)))
        try:
            sent = await sk.sendmsg_segments(pieces, binding, uarg, max_frags)
        finally:
            if uarg is not None:
                uarg.put()                 # the call's own reference
        return sent

    async def send(self, data: bytes, flags: int = 0) -> int:
        """`send(2)`: ordinary bytes."""
        return await self.sendmsg([data], None, flags)

    @staticmethod
    def _recvmsg_dmabuf(sk: TcpSock, skb: SkBuff, offset: int, msg: _Msg, remaining: int) -> int:
        """`tcp_recvmsg_dmabuf`: bytes delivered, or a negative errno when none were."""
        sent = 0
        err = 0
        start = skb.headlen
        copy = start - offset
        if copy > 0:
            copy = min(copy, remaining)
            err = msg.put_cmsg_notrunc(SCM_DEVMEM_LINEAR, DmabufCmsg(frag_size=copy))
            if err:
                return sent or err
            msg.data += skb.head[skb.data + offset:skb.data + offset + copy]
            offset += copy
            remaining -= copy
            sent += copy
            if remaining == 0:
                return sent
        for frag in skb.frags:
            end = start + frag.size
            copy = end - offset
            if copy > 0:
                copy = min(copy, remaining)
                niov = frag.netmem
                if not isinstance(niov, NetIov):
                    return sent or -errno.ENODEV
                try:
                    token = sk.token_alloc()
                except KernelError as e:
                    return sent or -(e.errno or errno.EBUSY)
                cm = DmabufCmsg(frag_offset=niov.virtual_addr + frag.offset + offset - start,
                                frag_size=copy, frag_token=token, dmabuf_id=niov.binding_id)
                err = msg.put_cmsg_notrunc(SCM_DEVMEM_DMABUF, cm)
                if err:
                    sk.token_unalloc(token)
                    return sent or err
                niov.pp_ref_count += 1
                sk.user_frags[token] = niov
                offset += copy
                remaining -= copy
                sent += copy
                if remaining == 0:
                    return sent
            start = end
        if remaining:
            return sent or -errno.EFAULT
        return sent

    # --- options ----------------------------------------------------------------------------

    def setsockopt(self, level: int, optname: int, value: bytes | int) -> int:
        """`setsockopt(2)`; `value` is an int or the option's bytes, as Python's socket.setsockopt
        takes it. SO_DEVMEM_DONTNEED returns the number of fragments freed."""
        if self.closed:
            raise KernelError(errno.EBADF, 'socket is closed')
        check_int(level, 'level')
        check_int(optname, 'optname')
        if level == SOL_SOCKET and optname == SO_DEVMEM_DONTNEED:
            return self._devmem_dontneed(check_buffer(value, 'optval'))
        if level == SOL_SOCKET and optname == SO_ZEROCOPY:
            return self._set_zerocopy(value)
        if level == SOL_SOCKET and optname == SO_RCVBUF:
            return self._set_rcvbuf(value)
        raise KernelError(errno.ENOPROTOOPT, f'option {level}/{optname}')

    def _set_rcvbuf(self, value: bytes | int) -> int:
        """`sock_setsockopt(SO_RCVBUF)`: the receive buffer, which bounds the window the
        socket advertises (`TcpSock.free_space`); at least SOCK_MIN_RCVBUF, at most the
        stack's `rmem_max`. Unlike Linux the value is not doubled for bookkeeping overhead:
        this stack charges payload bytes only, so the value is the window's room."""
        val = _int_optval(value, 'SO_RCVBUF')
        sk = self._tcp()
        sk.rcvbuf = max(SOCK_MIN_RCVBUF, min(val, self.kernel.tcp.rmem_max))
        return 0

    def _set_zerocopy(self, value: bytes | int) -> int:
        """`sock_setsockopt(SO_ZEROCOPY)`: TCP and UDP sockets only; 0 or 1, else EINVAL."""
        val = _int_optval(value, 'SO_ZEROCOPY')
        if val not in (0, 1):
            raise KernelError(errno.EINVAL, f'SO_ZEROCOPY {val}')
        self.zerocopy = bool(val)
        if self.sk is not None:
            self.sk.zerocopy = self.zerocopy
        return 0

    def getsockopt(self, level: int, optname: int) -> int:
        if level == SOL_SOCKET and optname == SO_ZEROCOPY:
            return int(self.zerocopy)
        if level == SOL_SOCKET and optname == SO_RCVBUF:
            return self._tcp().rcvbuf
        raise KernelError(errno.ENOPROTOOPT, f'option {level}/{optname}')

    def _devmem_dontneed(self, optval: bytes) -> int:
        """`sock_devmem_dontneed`."""
        if self.sk is None:
            raise KernelError(errno.EBADF, 'not a TCP socket')
        size = DmabufToken.FORMAT.size
        if len(optval) % size:
            raise KernelError(errno.EINVAL, f'optlen {len(optval)}: not a whole number of '
                                            f'{size}-byte struct dmabuf_token')
        if len(optval) > size * MAX_DONTNEED_TOKENS:
            raise KernelError(errno.EINVAL, f'optlen {len(optval)} is {len(optval) // size} tokens: '
                                            f'SO_DEVMEM_DONTNEED takes at most MAX_DONTNEED_TOKENS = '
                                            f'{MAX_DONTNEED_TOKENS} struct dmabuf_token ({size * MAX_DONTNEED_TOKENS} '
                                            f'bytes) per call (net/core/sock.c); return them in several calls')
        sk = self.sk
        ret = 0
        num_frags = 0
        for i in range(0, len(optval), size):
            tok = DmabufToken.unpack(optval[i:i + size])
            for j in range(tok.token_count):
                num_frags += 1
                if num_frags > MAX_DONTNEED_FRAGS:
                    return ret
                niov = sk.token_put((tok.token_start + j) & 0xFFFF_FFFF)
                if niov is None:
                    continue
                _put(niov, None)
                ret += 1
        return ret

    def dontneed(self, tokens: Iterable[DmabufToken | int | tuple[int, int]]) -> int:
        """SO_DEVMEM_DONTNEED with a list of tokens (ints, (start, count) or DmabufToken):
        the struct dmabuf_token array the application would pass. At most
        MAX_DONTNEED_TOKENS (128) entries per call, as in Linux (EINVAL beyond: split the
        list); a call frees at most MAX_DONTNEED_FRAGS (1024) fragments and returns how many
        it freed. An entry that is not a token is EINVAL, no list at all EFAULT."""
        if isinstance(tokens, (str, bytes, bytearray)) or not hasattr(tokens, '__iter__'):
            raise KernelError(errno.EFAULT, f'optval: a {type(tokens).__name__} is not a list of tokens')
        raw = b''
        for t in tokens:
            if isinstance(t, DmabufToken):
                start, count = t.token_start, t.token_count
            elif isinstance(t, tuple) and len(t) == 2:
                start, count = t
            elif isinstance(t, int) and not isinstance(t, bool):
                start, count = t, 1
            else:
                raise KernelError(errno.EINVAL, f'token {t!r}: an int, a (start, count) pair or a DmabufToken')
            check_int(start, 'token_start', 0, 0xFFFF_FFFF)
            check_int(count, 'token_count', 0, 0xFFFF_FFFF)
            raw += DmabufToken(start, count).pack()
        return self.setsockopt(SOL_SOCKET, SO_DEVMEM_DONTNEED, raw)

    # --- close ------------------------------------------------------------------------------

    def close(self) -> None:
        """`close(2)`: every outstanding token is released, queued data freed; the
        connection then ends with a FIN (sent at the next poll; the orphan finishes the
        exchange and retransmits what the peer has not acknowledged), or a RST when unread
        data was thrown away."""
        if self.closed:
            return
        self.closed = True
        if self.sk is not None:
            self.sk.close()

    def __enter__(self) -> Socket:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
