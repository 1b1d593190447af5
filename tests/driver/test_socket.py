"""driver/socket.py on synthetic skbs: cmsgs, tokens, SO_DEVMEM_DONTNEED limits, linear
messages, the zero-copy guard."""
from __future__ import annotations

import errno

import pytest

from driver.errors import ETOOSMALL, KernelError
from driver.headers import AF_INET
from driver.socket import (CMSG_SPACE, MSG_SOCK_DEVMEM, SCM_DEVMEM_DMABUF, SCM_DEVMEM_LINEAR,
                           SOCK_DGRAM, DmabufCmsg, DmabufToken)
from models.device_memory import CpuAccessError
from tests.driver.synth import Synth

CM = CMSG_SPACE(24)


def test_struct_layouts() -> None:
    c = DmabufCmsg(0x1122334455, 4096, 7, 3, 0)
    assert len(c.pack()) == 24 and DmabufCmsg.unpack(c.pack()) == c
    assert DmabufToken(5, 2).pack() == b'\x05\0\0\0\x02\0\0\0'
    assert CM == 40


def test_dontneed_examines_at_most_1024_fragments() -> None:
    s = Synth(pages=1100)
    sock = s.connect()
    for i in range(1100):
        s.rcv(s.skb(i, bytes([i & 0xFF])))
    m = sock.recvmsg(1 << 20, 1100 * CM, MSG_SOCK_DEVMEM)
    assert m.nbytes == 1100 and [c.frag_token for c in m.dmabuf] == list(range(1, 1101))
    assert sock.dontneed([(1, 1100)]) == 1024
    assert sock.dontneed([(1, 1100)]) == 0, 'the first 1024 examined are gone: none freed'
    assert sock.dontneed([(1, 600), (601, 600)]) == 0
    assert sock.dontneed([(1025, 76)]) == 76
    assert sock.tcp_info().tokens_outstanding == 0
    assert s.pool.in_use == 0 and s.binding.pages_free == 1100 - s.pool.cached


def test_dontneed_entry_and_length_limits() -> None:
    s = Synth()
    sock = s.connect()
    from driver.socket import SO_DEVMEM_DONTNEED, SOL_SOCKET
    for bad in (b'\0' * 4, b'\0' * 9, b'\0' * (8 * 129)):
        with pytest.raises(KernelError) as e:
            sock.setsockopt(SOL_SOCKET, SO_DEVMEM_DONTNEED, bad)
        assert e.value.errno == errno.EINVAL
    assert sock.setsockopt(SOL_SOCKET, SO_DEVMEM_DONTNEED, b'\0' * (8 * 128)) == 0
    with pytest.raises(KernelError) as e:
        sock.setsockopt(SOL_SOCKET, 12345, b'')
    assert e.value.errno == errno.ENOPROTOOPT
    udp = s.kernel.socket(AF_INET, SOCK_DGRAM)
    with pytest.raises(KernelError) as e:
        udp.setsockopt(SOL_SOCKET, SO_DEVMEM_DONTNEED, b'\0' * 9)
    assert e.value.errno == errno.EBADF, 'EBADF comes before the length check'
    with pytest.raises(KernelError) as e:
        udp.recvmsg(100)
    assert e.value.errno == errno.EOPNOTSUPP


def test_tokens_are_the_lowest_free() -> None:
    s = Synth()
    sock = s.connect()
    for i in range(4):
        s.rcv(s.skb(100 * i, bytes(100)))
    m = sock.recvmsg(300, 10 * CM, MSG_SOCK_DEVMEM)
    assert [c.frag_token for c in m.dmabuf] == [1, 2, 3]
    assert sock.dontneed([2]) == 1
    m = sock.recvmsg(100, 10 * CM, MSG_SOCK_DEVMEM)
    assert [c.frag_token for c in m.dmabuf] == [2]


def test_linear_bytes_then_fragments() -> None:
    s = Synth()
    sock = s.connect()
    payload = bytes(range(200)) * 30                # 6000 bytes: 10 linear, 2 fragments
    s.rcv(s.skb(0, payload, linear=10))
    m = sock.recvmsg(5, 10 * CM, MSG_SOCK_DEVMEM)   # part of the linear bytes
    assert m.nbytes == 5 and m.data == payload[:5]
    assert [(c.type, c.data.frag_size) for c in m.cmsgs] == [(SCM_DEVMEM_LINEAR, 5)]
    assert m.linear[0].frag_token == 0 and m.linear[0].dmabuf_id == 0
    m = sock.recvmsg(1 << 16, 10 * CM, MSG_SOCK_DEVMEM)
    assert [(c.type, c.data.frag_size) for c in m.cmsgs] == [
        (SCM_DEVMEM_LINEAR, 5), (SCM_DEVMEM_DMABUF, 4096), (SCM_DEVMEM_DMABUF, 6000 - 10 - 4096)]
    assert m.nbytes == 5995 and m.data == payload[5:10]
    got = payload[:10] + b''.join(s.dmabuf.gpu_read(c.frag_offset, c.frag_size) for c in m.dmabuf)
    assert got == payload
    assert {c.dmabuf_id for c in m.dmabuf} == {s.binding.id}


def test_control_buffer_too_small_is_never_truncated() -> None:
    s = Synth()
    sock = s.connect()
    s.rcv(s.skb(0, bytes(range(100)), linear=10))
    for controllen in (0, CM - 1):
        with pytest.raises(KernelError) as e:
            sock.recvmsg(1000, controllen, MSG_SOCK_DEVMEM)
        assert e.value.errno == ETOOSMALL
    m = sock.recvmsg(1000, CM, MSG_SOCK_DEVMEM)     # room for the linear message only
    assert m.nbytes == 10 and len(m.cmsgs) == 1 and m.cmsgs[0].is_linear
    m = sock.recvmsg(1000, CM, MSG_SOCK_DEVMEM)
    assert m.nbytes == 90 and m.dmabuf[0].frag_size == 90


def test_fragment_offset_inside_the_buffer() -> None:
    s = Synth()
    sock = s.connect()
    skb = s.skb(0, b'abcdef' * 50, frag_offset=1000, frag_size=100)
    niovs = [f.netmem for f in skb.frags]
    s.rcv(skb)
    m = sock.recvmsg(1000, 10 * CM, MSG_SOCK_DEVMEM)
    assert [c.frag_offset for c in m.dmabuf] == [n.virtual_addr + 1000 for n in niovs]  # type: ignore[attr-defined]
    assert b''.join(s.dmabuf.gpu_read(c.frag_offset, c.frag_size) for c in m.dmabuf) == b'abcdef' * 50


def test_the_cpu_cannot_copy_devmem_payload() -> None:
    s = Synth()
    s.connect()
    skb = s.skb(0, b'x' * 100)
    skb.pull(s.hdr_len)
    with pytest.raises(CpuAccessError):
        skb.copy_bits(0, 10)
    assert s.dev.cpu_reads == 1


def test_close_releases_tokens_and_queued_data() -> None:
    s = Synth(pages=8)
    sock = s.connect()
    for i in range(6):
        s.rcv(s.skb(10 * i, bytes(10)))
    m = sock.recvmsg(30, 10 * CM, MSG_SOCK_DEVMEM)
    assert len(m.dmabuf) == 3
    assert s.pool.in_use == 6
    sock.close()
    assert s.pool.in_use == 0 and s.kernel.tcp.established == {}
    with pytest.raises(KernelError) as e:
        sock.recvmsg(10)
    assert e.value.errno == errno.EBADF
