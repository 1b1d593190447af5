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

Sockets are made by `Kernel.socket`; `bind`/`listen`/`accept` give an established socket
(see driver/tcp.py for how it is established without a TX path).
"""
from __future__ import annotations

import errno
import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

from driver.errors import ETOOSMALL, KernelError
from driver.headers import AF_INET, AF_INET6
from driver.netmem import NetIov
from driver.skbuff import SkBuff, _put
from driver.tcp import TcpSock, TcpState, ip_addr

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
    """One control message: `cmsg_level`, `cmsg_type` and its `struct dmabuf_cmsg`."""

    level: int
    type: int
    data: DmabufCmsg

    @property
    def is_dmabuf(self) -> bool:
        return self.type == SCM_DEVMEM_DMABUF

    @property
    def is_linear(self) -> bool:
        return self.type == SCM_DEVMEM_LINEAR

    def pack(self) -> bytes:
        """The message as it sits in the control buffer (header, data, padding)."""
        body = self.data.pack()
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
        return [c.data for c in self.cmsgs if c.is_dmabuf]

    @property
    def linear(self) -> list[DmabufCmsg]:
        return [c.data for c in self.cmsgs if c.is_linear]

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


class Socket:
    """A BSD socket (`struct socket`) of a `Kernel`."""

    def __init__(self, kernel: Kernel, family: int, type_: int, sk: TcpSock | None) -> None:
        self.kernel = kernel
        self.family = family
        self.type = type_
        self.sk = sk
        self.closed = False
        self._bound: tuple[object, int] | None = None

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
        addr, port = address
        self._bound = (ip_addr(addr), port)

    def listen(self, backlog: int = 128) -> None:
        sk = self._tcp()
        if self._bound is None:
            raise KernelError(errno.EDESTADDRREQ, 'bind first')
        sk.laddr, sk.lport = self._bound  # type: ignore[assignment]
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

    def tcp_info(self) -> TcpInfo:
        sk = self._tcp()
        return TcpInfo(sk.state, sk.rcv_nxt, sk.copied_seq, sk.bytes_received,
                       len(sk.ofo_queue), len(sk.user_frags))

    # --- receive ----------------------------------------------------------------------------

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        """`recv(2)`: ordinary bytes."""
        return self.recvmsg(bufsize, 0, flags).data

    def recvmsg(self, bufsize: int, ancbufsize: int = 0, flags: int = 0) -> RecvMsg:
        """`recvmsg(2)`, non-blocking. `ancbufsize` is `msg_controllen` in bytes; each devmem
        message takes CMSG_SPACE(24) = 40 bytes."""
        if self.sk is None:
            self._tcp()
        sk = self._tcp()
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
                raise KernelError(errno.ECONNRESET, 'connection reset')
            if not sk.fin_received:
                raise KernelError(errno.EAGAIN, 'no data')
        return RecvMsg(copied, bytes(msg.data), msg.cmsgs, 0)

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

    def setsockopt(self, level: int, optname: int, value: bytes) -> int:
        """`setsockopt(2)`; SO_DEVMEM_DONTNEED returns the number of fragments freed."""
        if self.closed:
            raise KernelError(errno.EBADF, 'socket is closed')
        if level == SOL_SOCKET and optname == SO_DEVMEM_DONTNEED:
            return self._devmem_dontneed(bytes(value))
        raise KernelError(errno.ENOPROTOOPT, f'option {level}/{optname}')

    def _devmem_dontneed(self, optval: bytes) -> int:
        """`sock_devmem_dontneed`."""
        if self.sk is None:
            raise KernelError(errno.EBADF, 'not a TCP socket')
        size = DmabufToken.FORMAT.size
        if len(optval) % size or len(optval) > size * MAX_DONTNEED_TOKENS:
            raise KernelError(errno.EINVAL, f'optlen {len(optval)}')
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
        """SO_DEVMEM_DONTNEED with a list of tokens (ints, (start, count) or DmabufToken)."""
        raw = b''
        for t in tokens:
            if isinstance(t, int):
                t = DmabufToken(t, 1)
            elif isinstance(t, tuple):
                t = DmabufToken(*t)
            raw += t.pack()
        return self.setsockopt(SOL_SOCKET, SO_DEVMEM_DONTNEED, raw)

    # --- close ------------------------------------------------------------------------------

    def close(self) -> None:
        """`close(2)`: every outstanding token is released, queued data freed."""
        if self.closed:
            return
        self.closed = True
        if self.sk is not None:
            self.sk.destroy()

    def __enter__(self) -> Socket:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
