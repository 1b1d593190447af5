"""Frames that exercise the RX rules' special cases: a fixed corpus of odd and malformed
frames (docs/rx-rules.md) and a random mutator of valid frames. Tests feed both to the RTL
and the golden model and compare what each does with every frame.
"""
from __future__ import annotations

import random

from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import IPv6, IPv6ExtHdrFragment, IPv6ExtHdrHopByHop
from scapy.layers.l2 import ARP, Dot1AD, Dot1Q, Ether

from tb.frames import Flow, build, pad, pattern


def odd_frames() -> list[tuple[str, bytes, bool]]:
    """(name, frame, bad_fcs): frames the split rules treat specially (docs/rx-rules.md)."""
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    good = build(Flow(), pattern(100))
    v4 = bytearray(build(Flow(), pattern(40)))
    lying_len = bytes(v4[:16]) + (0x0400).to_bytes(2, "big") + bytes(v4[18:])
    short_ihl = bytes(v4[:14]) + bytes([0x44]) + bytes(v4[15:])
    bad_doff = bytes(v4[:46]) + bytes([0x30]) + bytes(v4[47:])
    return [
        ("arp", pad(bytes(eth / ARP())), False),
        ("icmp", pad(bytes(eth / IP() / ICMP() / pattern(30))), False),
        ("ipv4-options", pad(bytes(eth / IP(options=b"\x01" * 40) / TCP() / pattern(33))), False),
        ("ipv4-fragment", pad(bytes(eth / IP(flags="MF") / UDP() / pattern(64))), False),
        ("ipv4-later-fragment", pad(bytes(eth / IP(frag=100) / pattern(64))), False),
        ("ipv6-hop-by-hop", pad(bytes(eth / IPv6() / IPv6ExtHdrHopByHop() / TCP() / pattern(20))), False),
        ("ipv6-fragment", pad(bytes(eth / IPv6() / IPv6ExtHdrFragment() / UDP() / pattern(20))), False),
        ("qinq-long-headers", pad(bytes(eth / Dot1AD(vlan=1) / Dot1Q(vlan=2) / IP(options=b"\x01" * 40)
                                        / TCP(options=[("NOP", None)] * 40) / pattern(10))), False),
        ("runt", bytes(eth / IP() / UDP() / b"x"), False),
        ("bad-fcs", good, True),
        ("oversize", build(Flow(), pattern(1600)), False),
        ("ipv4-total-length-too-long", lying_len, False),
        ("ipv4-ihl-4", short_ihl, False),
        ("tcp-data-offset-3", bad_doff, False),
    ]



def mutate(frame: bytes, rng: random.Random) -> tuple[bytes, bool]:
    """One random corruption of a valid frame: flip header bytes, truncate, extend, rewrite a
    length field, or flag the FCS bad."""
    b = bytearray(frame)
    kind = rng.randrange(6)
    if kind == 0:
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(min(len(b), 80))] = rng.randrange(256)
    elif kind == 1:
        b = b[:rng.randint(1, len(b))]
    elif kind == 2:
        b += bytes(rng.randrange(256) for _ in range(rng.randint(1, 40)))
    elif kind == 3 and len(b) > 20:
        off = rng.choice([16, 18, 20, 22, 24])            # IPv4 total length / IPv6 payload length area
        b[off] = rng.randrange(256)
    elif kind == 4 and len(b) > 60:
        b[rng.randrange(34, 60)] = rng.randrange(256)     # L4 header region
    else:
        return bytes(b), True
    return bytes(b), False
