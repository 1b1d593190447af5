"""Calls of the system-call mirrors with arguments C could not even express (a str where a
buffer goes, a non-int length, a sockaddr that is not one) give the errno the kernel gives
their nearest C equivalent, never a TypeError or struct.error: a pointer it cannot read is
EFAULT, a value or length it refuses EINVAL (driver/errors.py). And SO_DEVMEM_DONTNEED's
limit is the kernel's: MAX_DONTNEED_TOKENS = 128 struct dmabuf_token per call (net/core/sock.c,
EINVAL beyond), said in the error."""
from __future__ import annotations

import asyncio
import errno

import pytest

from driver.errors import KernelError
from driver.socket import MSG_SOCK_DEVMEM, SO_DEVMEM_DONTNEED, SO_ZEROCOPY, SOL_SOCKET
from tb.frames import Flow
from tb.scenario import ModelEnv, Rig, TcpPeer

E, F = errno.EINVAL, errno.EFAULT
CASES = [
    # (what, call, errno)
    ("dontneed of a str token", lambda s, k, r: s.dontneed(["x"]), E),
    ("dontneed of no list", lambda s, k, r: s.dontneed(None), F),
    ("dontneed of a negative token", lambda s, k, r: s.dontneed([-1]), E),
    ("dontneed of a token over 32 bits", lambda s, k, r: s.dontneed([(1 << 32, 1)]), E),
    ("DONTNEED optval a str", lambda s, k, r: s.setsockopt(SOL_SOCKET, SO_DEVMEM_DONTNEED, "abc"), F),
    ("DONTNEED optlen 7", lambda s, k, r: s.setsockopt(SOL_SOCKET, SO_DEVMEM_DONTNEED, b"1234567"), E),
    ("SO_ZEROCOPY optval None", lambda s, k, r: s.setsockopt(SOL_SOCKET, SO_ZEROCOPY, None), F),
    ("SO_ZEROCOPY optval a str", lambda s, k, r: s.setsockopt(SOL_SOCKET, SO_ZEROCOPY, "x"), F),
    ("SO_ZEROCOPY optlen 2", lambda s, k, r: s.setsockopt(SOL_SOCKET, SO_ZEROCOPY, b"\1\0"), E),
    ("setsockopt level a str", lambda s, k, r: s.setsockopt("sol", SO_ZEROCOPY, b"\1\0\0\0"), E),
    ("recvmsg len a str", lambda s, k, r: s.recvmsg("a", 0, 0), E),
    ("recvmsg controllen < 0", lambda s, k, r: s.recvmsg(10, -5, MSG_SOCK_DEVMEM), E),
    ("recvmsg flags a str", lambda s, k, r: s.recvmsg(10, 0, "x"), E),
    ("bind to a str", lambda s, k, r: k.socket(2, 1).bind("x"), E),
    ("bind host an int", lambda s, k, r: k.socket(2, 1).bind((1, 2)), E),
    ("bind port a str", lambda s, k, r: k.socket(2, 1).bind(("0.0.0.0", "80")), E),
    ("bind port 70000", lambda s, k, r: k.socket(2, 1).bind(("0.0.0.0", 70000)), E),
    ("bind host 1.2.3.4.5", lambda s, k, r: k.socket(2, 1).bind(("1.2.3.4.5", 80)), E),
    ("listen backlog a str", lambda s, k, r: k.socket(2, 1).listen("x"), E),
    ("shutdown how a str", lambda s, k, r: s.shutdown("x"), E),
    ("dma_buf_fd of None", lambda s, k, r: k.dma_buf_fd(None), E),
    ("sendmsg of a str", lambda s, k, r: s.sendmsg("hello"), F),
    ("sendmsg of an int buffer", lambda s, k, r: s.sendmsg([1]), F),
    ("sendmsg cmsg not a triple", lambda s, k, r: s.sendmsg([b"x"], [(SOL_SOCKET,)]), E),
    ("sendmsg flags a str", lambda s, k, r: s.sendmsg([b"x"], None, "z"), E),
    ("connect to a str", lambda s, k, r: k.socket(2, 1).connect("x"), E),
    ("bind_rx queues an int", lambda s, k, r: r.nl.bind_rx(r.netdev.ifindex, r.b.fd, 0), E),
    ("bind_rx queue id a str", lambda s, k, r: r.nl.bind_rx(r.netdev.ifindex, r.b.fd, ["a"]), E),
    ("bind_rx ifindex a str", lambda s, k, r: r.nl.bind_rx("eth0", r.b.fd, [0]), errno.ENODEV),
    ("bind_rx fd a str", lambda s, k, r: r.nl.bind_rx(r.netdev.ifindex, "fd", [0]), errno.EBADF),
    ("bind_tx ifindex a str", lambda s, k, r: r.nl.bind_tx("eth0", r.b.fd), errno.ENODEV),
]


async def _connected():
    rig = await Rig.create(ModelEnv(num_rxq=1))
    rig.b = await rig.bind([0], pages=16)          # type: ignore[attr-defined]
    sock = await rig.connect(TcpPeer(Flow()), rig.listen(5201))
    return rig, sock


@pytest.mark.parametrize("what, call, err", CASES, ids=[c[0] for c in CASES])
def test_typed_misuse_gives_an_errno(what: str, call, err: int) -> None:  # type: ignore[no-untyped-def]
    async def go() -> None:
        rig, sock = await _connected()
        with pytest.raises(KernelError) as e:
            r = call(sock, rig.kernel, rig)
            if asyncio.iscoroutine(r):
                await r
        assert e.value.errno == err, f"{what}: {e.value}"
    asyncio.run(go())


def test_dontneed_limit_is_explained() -> None:
    async def go() -> None:
        _, sock = await _connected()
        with pytest.raises(KernelError) as e:
            sock.dontneed(list(range(129)))
        assert e.value.errno == errno.EINVAL
        msg = str(e.value)
        assert "129 tokens" in msg and "MAX_DONTNEED_TOKENS = 128" in msg and "several calls" in msg
        assert sock.dontneed(list(range(128))) == 0     # 128 unknown tokens: accepted, nothing freed
    asyncio.run(go())
