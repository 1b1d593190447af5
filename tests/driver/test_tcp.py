"""driver/tcp.py and driver/headers.py: sequence arithmetic, header checks, RST, segments
without a socket."""
from __future__ import annotations

import errno

import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1AD, Dot1Q, Ether

from driver.errors import KernelError
from driver.headers import AF_INET6, HeaderError, TcpFlags, eth_get_headlen, parse_headers
from driver.skbuff import SkBuff
from driver.socket import MSG_SOCK_DEVMEM
from driver.tcp import after, before
from tests.driver.synth import Synth


def E(**kw: int) -> Ether:
    return Ether(src='02:00:00:00:00:01', dst='02:00:00:00:00:02', **kw)  # type: ignore[arg-type]


def test_sequence_comparison_wraps() -> None:
    assert before(1, 2) and after(2, 1) and not before(2, 2)
    assert before(0xFFFF_FFF0, 0x10) and after(0x10, 0xFFFF_FFF0)
    assert before(0, 0x7FFF_FFFF) and not before(0, 0x8000_0001)


def test_parse_headers() -> None:
    raw = bytes(E() / Dot1AD(vlan=2) / Dot1Q(vlan=3) / IPv6(src='fd00::1', dst='fd00::2')
                / TCP(sport=1, dport=2, seq=77, flags='FA', options=[('NOP', None)] * 4) / b'hi')
    h = parse_headers(raw)
    assert h.family == AF_INET6 and h.l3_off == 22 and h.pay_off == 22 + 40 + 24
    assert h.seq == 77 and h.flags == TcpFlags.FIN | TcpFlags.ACK and h.payload_len == 2
    assert eth_get_headlen(raw) == h.pay_off
    udp = parse_headers(bytes(E() / IP() / UDP() / b'x'))
    assert udp.protocol == 17 and udp.pay_off == 42
    good = bytearray(bytes(E() / IP(src='1.2.3.4', dst='5.6.7.8') / TCP()))
    parse_headers(bytes(good))
    bad_csum = good.copy()
    bad_csum[24] ^= 1
    frag = bytes(E() / IP(flags='MF') / TCP())
    short_doff = good.copy()
    short_doff[46] = 0x40
    for bad in (bytes(bad_csum), frag, bytes(short_doff), bytes(good[:30]),
                bytes(E(type=0x0806) / (b'x' * 40))):
        with pytest.raises(HeaderError):
            parse_headers(bad)


def test_segments_without_a_socket_are_dropped_and_recycled() -> None:
    s = Synth(pages=4)
    s.rcv(s.skb(0, b'x' * 100))                      # no listener, no SYN
    assert s.kernel.tcp.mib.NoSocket == 1 and s.pool.in_use == 0
    s.rcv(SkBuff(head=bytes(E() / IP() / UDP() / b'payload')))
    assert s.kernel.tcp.mib.NotTcp == 1
    s.rcv(SkBuff(head=b'\x00' * 20))
    assert s.kernel.tcp.mib.InErrs == 1


def test_truncated_frame_is_dropped() -> None:
    s = Synth(pages=4)
    s.connect()
    skb = s.skb(0, b'x' * 100)
    skb.frags[0].size = 50                           # the IP length says 100
    s.rcv(skb)
    assert s.kernel.tcp.mib.InErrs == 1 and s.pool.in_use == 0


def test_reset_after_data() -> None:
    s = Synth()
    sock = s.connect()
    s.rcv(s.skb(0, b'y' * 10))
    s.rcv(s.skb(10, b'', flags='R'))
    m = sock.recvmsg(100, 400, MSG_SOCK_DEVMEM)
    assert m.nbytes == 10
    with pytest.raises(KernelError) as e:
        sock.recvmsg(100, 400, MSG_SOCK_DEVMEM)
    assert e.value.errno == errno.ECONNRESET


def test_out_of_window_and_after_fin() -> None:
    s = Synth()
    sock = s.connect()
    sk = sock.sk
    assert sk is not None
    sk.rcv_wnd = 1000
    s.rcv(s.skb(5000, b'z' * 10))
    assert s.kernel.tcp.mib.TCPOutOfWindow == 1 and s.pool.in_use == 0
    s.rcv(s.skb(0, b'a' * 10, flags='FA'))
    s.rcv(s.skb(11, b'b' * 10))
    assert s.kernel.tcp.mib.TCPAfterFin == 1
    assert sock.recvmsg(100, 400, MSG_SOCK_DEVMEM).nbytes == 10
    assert sock.recvmsg(100, 400, MSG_SOCK_DEVMEM).nbytes == 0, 'end of stream'
