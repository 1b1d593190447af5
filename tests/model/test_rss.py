"""The RSS / flow-steering golden model (models/rss.py) against docs/rss.md.

Expectations are reasoned from the specification: tuple fields from the values scapy put in
the frames, hashes from the reference Toeplitz over input bytes built here with `socket`
(not with the model's own helpers) or from Microsoft's published vectors, queues from the
indirection-table and precedence rules.
"""
from __future__ import annotations

import collections
import ipaddress
import random
import socket
import struct

import pytest
from scapy.all import (ARP, ICMP, IP, TCP, UDP, Dot1AD, Dot1Q, Ether, IPOption_NOP, IPv6,
                       IPv6ExtHdrDestOpt, IPv6ExtHdrFragment, IPv6ExtHdrHopByHop, Raw)

from driver import regs
from models.formats import L3Type, L4Type
from models.rss import (ALL_TYPES, STEER_TYPES, Classification, Classifier, FlowTuple, FlowType,
                        RssConfig, RssType, RuleIndex, Slot, SteerRule, SteerTable, TypeMask,
                        buckets_of, classify, flow_type, frame_key, full_mask, hash_type, key_crc,
                        key_crc_bitwise, make_key, tuple_from_frame)
from models.toeplitz import MS_VERIFICATION_KEY, toeplitz_hash

MAC = dict(dst='02:00:00:00:00:01', src='02:00:00:00:00:02')
ALL_ONES_128 = (1 << 128) - 1


def pad60(raw) -> bytes:
    raw = bytes(raw)
    return raw + bytes(max(0, 60 - len(raw)))


def l2(tags: int):
    if tags == 0:
        return Ether(**MAC)
    if tags == 1:
        return Ether(**MAC) / Dot1Q(vlan=100)
    return Ether(**MAC) / Dot1AD(vlan=200) / Dot1Q(vlan=100)


def ip_int(text: str) -> int:
    return int(ipaddress.ip_address(text))


def v4_input(src: str, dst: str, sport: int | None = None, dport: int | None = None) -> bytes:
    out = socket.inet_pton(socket.AF_INET, src) + socket.inet_pton(socket.AF_INET, dst)
    return out if sport is None else out + struct.pack('>HH', sport, dport)


def v6_input(src: str, dst: str, sport: int | None = None, dport: int | None = None) -> bytes:
    out = socket.inet_pton(socket.AF_INET6, src) + socket.inet_pton(socket.AF_INET6, dst)
    return out if sport is None else out + struct.pack('>HH', sport, dport)


# --- tuple extraction ----------------------------------------------------------------------------

@pytest.mark.parametrize('tags', [0, 1, 2])
@pytest.mark.parametrize('proto', ['tcp', 'udp'])
def test_tuple_ipv4(tags, proto):
    l4 = TCP(sport=1234, dport=80) if proto == 'tcp' else UDP(sport=5353, dport=53)
    f = pad60(l2(tags) / IP(src='10.1.2.3', dst='192.168.7.9') / l4 / Raw(b'x' * 10))
    t = tuple_from_frame(f)
    assert t == FlowTuple(L3Type.IPV4, L4Type.TCP if proto == 'tcp' else L4Type.UDP, False,
                          6 if proto == 'tcp' else 17, 0x0A010203, 0xC0A80709,
                          l4.sport, l4.dport)


def test_tuple_ipv4_options_move_the_ports():
    f = pad60(l2(1) / IP(src='1.2.3.4', dst='5.6.7.8', options=[IPOption_NOP()] * 12)
              / TCP(sport=4321, dport=8765) / Raw(b'abc'))
    t = tuple_from_frame(f)
    assert (t.src_addr, t.dst_addr, t.sport, t.dport) == (0x01020304, 0x05060708, 4321, 8765)


@pytest.mark.parametrize('tags', [0, 2])
@pytest.mark.parametrize('proto', ['tcp', 'udp'])
def test_tuple_ipv6(tags, proto):
    l4 = TCP(sport=40000, dport=5201) if proto == 'tcp' else UDP(sport=40001, dport=4791)
    f = pad60(l2(tags) / IPv6(src='2001:db8::1', dst='fd00:1:2:3::abcd') / l4 / Raw(b'y' * 5))
    t = tuple_from_frame(f)
    assert t == FlowTuple(L3Type.IPV6, L4Type.TCP if proto == 'tcp' else L4Type.UDP, False,
                          6 if proto == 'tcp' else 17, ip_int('2001:db8::1'),
                          ip_int('fd00:1:2:3::abcd'), l4.sport, l4.dport)


@pytest.mark.parametrize('frag', [dict(flags='MF', frag=0), dict(flags=0, frag=100)])
def test_tuple_ipv4_fragment_has_no_ports(frag):
    f = pad60(Ether(**MAC) / IP(src='9.9.9.9', dst='8.8.8.8', proto=6, **frag) / Raw(b'z' * 40))
    t = tuple_from_frame(f)
    assert t.l3_type is L3Type.IPV4 and t.ip_frag and t.proto == 6
    assert not t.ports_valid and (t.sport, t.dport) == (0, 0)


def test_tuple_ipv6_fragment_and_other():
    f = pad60(Ether(**MAC) / IPv6(src='::1', dst='::2') / IPv6ExtHdrFragment(nh=17, m=1)
              / Raw(b'q' * 16))
    t = tuple_from_frame(f)
    assert t.l3_type is L3Type.IPV6 and t.ip_frag and not t.ports_valid
    f = pad60(Ether(**MAC) / IP(src='1.1.1.1', dst='2.2.2.2') / ICMP())
    t = tuple_from_frame(f)
    assert (t.l4_type, t.proto, t.ports_valid) == (L4Type.OTHER, 1, False)


def test_tuple_ipv6_extension_headers():
    """Extension headers move the ports; proto is the L4 protocol after them."""
    f = pad60(Ether(**MAC) / IPv6(src='2001:db8::5', dst='2001:db8::6') / IPv6ExtHdrHopByHop()
              / IPv6ExtHdrDestOpt() / TCP(sport=1111, dport=2222) / Raw(b'p'))
    assert tuple_from_frame(f) == FlowTuple(L3Type.IPV6, L4Type.TCP, False, 6,
                                            ip_int('2001:db8::5'), ip_int('2001:db8::6'), 1111, 2222)
    f = pad60(Ether(**MAC) / IPv6(src='2001:db8::5', dst='2001:db8::6') / IPv6ExtHdrHopByHop()
              / UDP(sport=3333, dport=4444))
    t = tuple_from_frame(f)
    assert (t.l4_type, t.proto, t.sport, t.dport) == (L4Type.UDP, 17, 3333, 4444)
    key = bytes(range(40))
    c = classify(t, RssConfig(key, ALL_TYPES), [], 1)
    assert (c.rss_type, c.rss_hash) == (RssType.UDP_IPV6, toeplitz_hash(
        key, v6_input('2001:db8::5', '2001:db8::6', 3333, 4444)))


def test_tuple_none_for_non_ip_and_header_errors():
    assert tuple_from_frame(pad60(Ether(**MAC) / ARP())) is None
    bad = bytearray(pad60(Ether(**MAC) / IP(src='1.1.1.1', dst='2.2.2.2') / UDP()))
    bad[14] = 0x43                      # IHL 3 < 5: header error, dropped
    assert tuple_from_frame(bytes(bad)) is None
    assert classify(None, RssConfig(types=ALL_TYPES), [SteerRule(ft, 3) for ft in STEER_TYPES], 8) == \
        Classification(0, 0, RssType.NONE, False)


# --- hash types and values -----------------------------------------------------------------------

def test_microsoft_vector_through_a_frame():
    """Published vector 1 (docs/rss.md cites it), end to end from a VLAN-tagged frame."""
    f = pad60(l2(1) / IP(src='66.9.149.187', dst='161.142.100.80')
              / TCP(sport=2794, dport=1766) / Raw(b'hello'))
    indir = [random.Random(5).randrange(8) for _ in range(128)]
    cfg = RssConfig(MS_VERIFICATION_KEY, ALL_TYPES, indir)
    c = classify(tuple_from_frame(f), cfg, [], 8)
    assert (c.rss_hash, c.rss_type) == (0x51CCC178, RssType.TCP_IPV4)
    assert c.queue == indir[0x51CCC178 % 128] and not c.steered
    cfg = RssConfig(MS_VERIFICATION_KEY, {RssType.IPV4}, indir)     # 2-tuple fallback
    c = classify(tuple_from_frame(f), cfg, [], 8)
    assert (c.rss_hash, c.rss_type, c.queue) == (0x323E8FC2, RssType.IPV4, indir[0x323E8FC2 % 128])


def test_microsoft_ipv6_vector_through_a_frame():
    f = pad60(Ether(**MAC) / IPv6(src='3ffe:2501:200:1fff::7', dst='3ffe:2501:200:3::1')
              / UDP(sport=2794, dport=1766))
    cfg = RssConfig(MS_VERIFICATION_KEY, ALL_TYPES, RssConfig.equal(3))
    c = classify(tuple_from_frame(f), cfg, [], 3)
    assert (c.rss_hash, c.rss_type, c.queue) == (0x40207D3D, RssType.UDP_IPV6, (0x40207D3D % 128) % 3)


def _frames_by_kind():
    s4, d4, s6, d6 = '10.0.0.1', '10.0.0.2', 'fd00::1', 'fd00::2'
    return {
        'tcp4': (pad60(Ether(**MAC) / IP(src=s4, dst=d4) / TCP(sport=1, dport=2)), v4_input(s4, d4, 1, 2), v4_input(s4, d4)),
        'udp4': (pad60(Ether(**MAC) / IP(src=s4, dst=d4) / UDP(sport=3, dport=4)), v4_input(s4, d4, 3, 4), v4_input(s4, d4)),
        'frag4': (pad60(Ether(**MAC) / IP(src=s4, dst=d4, flags='MF', proto=6) / Raw(b'a' * 30)), None, v4_input(s4, d4)),
        'icmp4': (pad60(Ether(**MAC) / IP(src=s4, dst=d4) / ICMP()), None, v4_input(s4, d4)),
        'tcp6': (pad60(Ether(**MAC) / IPv6(src=s6, dst=d6) / TCP(sport=5, dport=6)), v6_input(s6, d6, 5, 6), v6_input(s6, d6)),
        'udp6': (pad60(Ether(**MAC) / IPv6(src=s6, dst=d6) / UDP(sport=7, dport=8)), v6_input(s6, d6, 7, 8), v6_input(s6, d6)),
        'frag6': (pad60(Ether(**MAC) / IPv6(src=s6, dst=d6) / IPv6ExtHdrFragment(nh=6) / Raw(b'b' * 20)), None, v6_input(s6, d6)),
    }


# kind -> (4-tuple type, 2-tuple type)
_TYPES = {'tcp4': (RssType.TCP_IPV4, RssType.IPV4), 'udp4': (RssType.UDP_IPV4, RssType.IPV4),
          'frag4': (None, RssType.IPV4), 'icmp4': (None, RssType.IPV4),
          'tcp6': (RssType.TCP_IPV6, RssType.IPV6), 'udp6': (RssType.UDP_IPV6, RssType.IPV6),
          'frag6': (None, RssType.IPV6)}


@pytest.mark.parametrize('enables', range(64))
def test_every_enable_combination(enables):
    """docs/rss.md section 2: the 4-tuple type if enabled, else the 2-tuple type if enabled,
    else no hash and queue 0."""
    rng = random.Random(enables)
    key = rng.randbytes(40)
    types = {t for t in ALL_TYPES if (enables >> (t - 1)) & 1}
    indir = [rng.randrange(16) for _ in range(128)]
    cfg = RssConfig(key, types, indir)
    for kind, (frame, four_in, two_in) in _frames_by_kind().items():
        four, two = _TYPES[kind]
        if four is not None and four in types:
            want_type, want_hash = four, toeplitz_hash(key, four_in)
        elif two in types:
            want_type, want_hash = two, toeplitz_hash(key, two_in)
        else:
            want_type, want_hash = RssType.NONE, 0
        c = classify(tuple_from_frame(frame), cfg, [], 16)
        assert (c.rss_type, c.rss_hash) == (want_type, want_hash), kind
        want_q = indir[want_hash % 128] if want_type is not RssType.NONE else 0
        assert c.queue == want_q and not c.steered and not c.bad_queue, kind
        assert hash_type(tuple_from_frame(frame), types) == want_type


def test_fragments_of_a_flow_share_a_queue():
    """A fragment hashes on addresses only, so the first and later fragments agree, and they
    agree with the 2-tuple hash of unfragmented packets when 4-tuple hashing is off."""
    key = random.Random(3).randbytes(40)
    first = pad60(Ether(**MAC) / IP(src='3.3.3.3', dst='4.4.4.4', flags='MF', proto=17) / Raw(b'u' * 40))
    later = pad60(Ether(**MAC) / IP(src='3.3.3.3', dst='4.4.4.4', frag=5, proto=17) / Raw(b'u' * 40))
    cfg = RssConfig(key, ALL_TYPES, RssConfig.equal(8))
    a, b = (classify(tuple_from_frame(f), cfg, [], 8) for f in (first, later))
    assert a == b and a.rss_type is RssType.IPV4
    assert a.rss_hash == toeplitz_hash(key, v4_input('3.3.3.3', '4.4.4.4'))


def test_non_ip_gets_no_hash():
    cfg = RssConfig(bytes(range(40)), ALL_TYPES, [5] * 128)
    c = classify(tuple_from_frame(pad60(Ether(**MAC) / ARP())), cfg, [SteerRule(ft, 2) for ft in STEER_TYPES], 8)
    assert c == Classification(0, 0, RssType.NONE, False)


# --- indirection table ----------------------------------------------------------------------------

@pytest.mark.parametrize('n', [1, 3, 4, 7, 8])
def test_equal_n_spreads_over_exactly_n_queues(n):
    rng = random.Random(n)
    key = rng.randbytes(40)
    cfg = RssConfig(key, ALL_TYPES, RssConfig.equal(n))
    assert list(cfg.indir) == [i % n for i in range(128)]
    load = collections.Counter()
    for _ in range(3000):
        t = FlowTuple(L3Type.IPV4, L4Type.TCP, False, 6, rng.getrandbits(32), rng.getrandbits(32),
                      rng.getrandbits(16), rng.getrandbits(16))
        c = classify(t, cfg, [], 8)
        assert c.queue == (c.rss_hash % 128) % n
        load[c.queue] += 1
    assert set(load) == set(range(n))
    spread = max(load.values()) / min(load.values())
    print(f'equal {n}: per-queue load {dict(sorted(load.items()))}, max/min {spread:.2f}')
    assert spread < 1.5


def test_indirection_entry_out_of_range_goes_to_queue_0():
    t = FlowTuple(L3Type.IPV4, L4Type.UDP, False, 17, 1, 2, 3, 4)
    key = bytes(range(40))
    h = toeplitz_hash(key, v4_input('0.0.0.1', '0.0.0.2', 3, 4))
    indir = [1] * 128
    indir[h % 128] = 4                  # 4 queues: 0..3 exist
    c = classify(t, RssConfig(key, ALL_TYPES, indir), [], 4)
    assert (c.queue, c.bad_queue, c.steered, c.rss_hash) == (0, True, False, h)
    c = classify(t, RssConfig(key, ALL_TYPES, indir), [], 5)
    assert (c.queue, c.bad_queue) == (4, False)


# --- flow steering -----------------------------------------------------------------------------

T4 = FlowTuple(L3Type.IPV4, L4Type.TCP, False, 6, ip_int('10.0.0.1'), ip_int('10.0.0.2'), 40000, 5201)
T6 = FlowTuple(L3Type.IPV6, L4Type.UDP, False, 17, ip_int('fd00::1'), ip_int('fd00::2'), 1000, 2000)
CFG = RssConfig(bytes(range(1, 41)), ALL_TYPES, RssConfig.equal(2))
FULL = {t: full_mask(t) for t in STEER_TYPES}


def test_flow_types():
    """docs/rss.md section 4: IP version and proto; fragments keep their protocol's type."""
    assert flow_type(T4) is FlowType.TCP4 and flow_type(T6) is FlowType.UDP6
    frag = FlowTuple(L3Type.IPV4, L4Type.NONE, True, 6, 1, 2)
    assert flow_type(frag) is FlowType.TCP4 and not frag.ports_valid
    assert flow_type(FlowTuple(L3Type.IPV6, L4Type.OTHER, False, 58, 1, 2)) is FlowType.IP6
    assert flow_type(FlowTuple(L3Type.IPV4, L4Type.OTHER, False, 1, 1, 2)) is FlowType.IP4
    assert flow_type(FlowTuple(L3Type.NONE)) is FlowType.NONE and flow_type(None) is FlowType.NONE


def test_key_layout():
    """The 38-byte key: type, proto, src, dst (16 bytes each, IPv4 in the last four), ports,
    each under the type's mask."""
    masks = {**FULL, FlowType.TCP4: TypeMask(24, 32, 0, 0xFFFF, 0xFF)}
    key = frame_key(T4, masks)
    want = (bytes([1, 0]) + bytes(12) + socket.inet_aton('10.0.0.0') + bytes(12)
            + socket.inet_aton('10.0.0.2') + struct.pack('>HH', 0, 5201))
    assert key == want and len(key) == 38
    k6 = frame_key(FlowTuple(L3Type.IPV6, L4Type.OTHER, False, 58, ip_int('fd00::1'), ip_int('fd01::2')),
                   {**FULL, FlowType.IP6: TypeMask(16, 0, 0xFFFF, 0xFFFF, 0xF0)})
    assert k6 == bytes([6, 0x30]) + socket.inet_pton(socket.AF_INET6, 'fd00::') + bytes(16) + bytes(4)


def poly_mod_crc(data: bytes) -> int:
    """CRC with initial value 0, no reflection, no final XOR, from its definition as
    polynomials over GF(2): the remainder of M(x) * x^32 divided by P(x) = x^32 + 0x1EDC6F41."""
    m = int.from_bytes(data, 'big') << 32
    p = (1 << 32) | 0x1EDC6F41
    for shift in range(m.bit_length() - 33, -1, -1):
        if m >> (shift + 32) & 1:
            m ^= p << shift
    return m


def test_crc_and_buckets():
    """The model's bit-serial CRC (docs/rss.md) is the polynomial remainder, and its
    byte-wise table agrees with it; the buckets are the CRC's bits [IW-1:0] and [16+IW-1:16]."""
    rng = random.Random(3)
    for k in [b'123456789', bytes(38), b'\x80' + bytes(37)] + [rng.randbytes(38) for _ in range(200)]:
        assert key_crc_bitwise(k) == poly_mod_crc(k) == key_crc(k)
        h0, h1 = buckets_of(k, 512)
        assert (h0, h1) == (key_crc(k) & 511, (key_crc(k) >> 16) & 511)


def test_rule_beats_rss_and_keeps_the_hash():
    rss_only = classify(T4, CFG, [], 8, FULL)
    c = classify(T4, CFG, [None, SteerRule.exact(T4, queue=6)], 8, FULL)
    assert (c.queue, c.steered, c.rule) == (6, True, 1)
    assert (c.rss_hash, c.rss_type) == (rss_only.rss_hash, rss_only.rss_type)


def test_same_key_lowest_location_wins():
    a, b = SteerRule.exact(T4, queue=5), SteerRule.exact(T4, queue=3)
    assert classify(T4, CFG, [a, b], 8, FULL).queue == 5
    assert classify(T4, CFG, [b, a], 8, FULL).queue == 3
    assert classify(T4, CFG, [None, a], 8, FULL).rule == 1
    # Removing every rule returns the flow to RSS.
    assert classify(T4, CFG, [None, None], 8, FULL) == classify(T4, CFG, [], 8, FULL)


def test_masks():
    subnet = SteerRule(FlowType.TCP4, 7, src_addr=ip_int('10.0.0.0'))
    m = {FlowType.TCP4: TypeMask(src_len=24)}
    assert subnet.matches(T4, m)
    assert not subnet.matches(FlowTuple(**{**T4.__dict__, 'src_addr': ip_int('10.0.1.1')}), m)
    port = SteerRule(FlowType.TCP4, 7, dport=5200)
    pm = {FlowType.TCP4: TypeMask(dport_mask=0xFFFE)}                   # 5200 or 5201
    assert port.matches(T4, pm)
    assert not port.matches(FlowTuple(**{**T4.__dict__, 'dport': 5202}), pm)
    # A rule of all-zero masks matches every frame of its type and of no other type.
    anyt = SteerRule(FlowType.TCP4, 1)
    assert anyt.matches(T4, {}) and not anyt.matches(T6, {})
    assert not anyt.matches(FlowTuple(**{**T4.__dict__, 'proto': 17, 'l4_type': L4Type.UDP}), {})
    hi = SteerRule(FlowType.UDP6, 1, dst_addr=ip_int('fd00::'))
    assert hi.matches(T6, {FlowType.UDP6: TypeMask(dst_len=64)})
    assert not hi.matches(T6, {FlowType.UDP6: TypeMask(dst_len=128)})
    # ip4/ip6: other protocols, proto under proto_mask; prefix lengths above the address clamp.
    icmp = FlowTuple(L3Type.IPV4, L4Type.OTHER, False, 1, ip_int('10.0.0.1'), ip_int('10.0.0.2'))
    r = SteerRule(FlowType.IP4, 2, proto=1, src_addr=ip_int('10.0.0.1'))
    assert r.matches(icmp, {FlowType.IP4: TypeMask(src_len=200, proto_mask=0xFF)})
    assert not r.matches(T4, {FlowType.IP4: TypeMask()})                # TCP is not ip4
    with pytest.raises(ValueError):
        SteerRule(FlowType.IP4, 1, sport=1)                                 # no ports in ip4
    with pytest.raises(ValueError):
        SteerRule(FlowType.TCP4, 1, proto=6)                                # the type is it


def test_port_masks_never_match_frames_without_ports():
    frag = FlowTuple(L3Type.IPV4, L4Type.NONE, True, 6, T4.src_addr, T4.dst_addr, 40000, 5201)
    other = FlowTuple(L3Type.IPV4, L4Type.OTHER, False, 6, T4.src_addr, T4.dst_addr, 40000, 5201)
    with_ports = {FlowType.TCP4: full_mask(FlowType.TCP4)}
    no_ports = {FlowType.TCP4: full_mask(FlowType.TCP4, ports=False)}
    rule = SteerRule.exact(T4, queue=2)
    addr_rule = SteerRule(FlowType.TCP4, 2, src_addr=T4.src_addr, dst_addr=T4.dst_addr)
    assert rule.matches(T4, with_ports) and addr_rule.matches(T4, no_ports)
    assert frame_key(frag, with_ports) is None and frame_key(other, with_ports) is None
    assert addr_rule.matches(frag, no_ports) and addr_rule.matches(other, no_ports)
    zero = SteerRule(FlowType.TCP4, 2)
    assert not zero.matches(FlowTuple(**{**frag.__dict__, 'sport': 0, 'dport': 0}),
                            {FlowType.TCP4: TypeMask(sport_mask=0xFFFF)})


def test_rule_queue_out_of_range():
    c = classify(T4, CFG, [SteerRule.exact(T4, queue=8), SteerRule.exact(T4, queue=1)], 8, FULL)
    assert (c.queue, c.steered, c.bad_queue, c.rule) == (0, True, True, 0)


def test_rule_index_is_classify():
    rng = random.Random(9)
    rules = [SteerRule.exact(T4, 1), None, SteerRule(FlowType.TCP4, 2), SteerRule.exact(T6, 3)]
    idx = RuleIndex(rules, FULL)
    for t in (T4, T6, FlowTuple(**{**T4.__dict__, 'sport': 1})):
        assert idx.classify(t, CFG, 8) == classify(t, CFG, rules, 8, FULL)
    del rng


# --- the table ---------------------------------------------------------------------------------

def test_table_lookup_order_and_buckets():
    """A key is found only in its bucket h0 of bank 0 or h1 of bank 1; among several hits the
    first in slot order answers."""
    t = SteerTable(8)
    k = frame_key(T4, FULL)
    h0, h1 = buckets_of(k, 8)
    t.write(1, h1, 1, Slot(k, 4, 9))
    assert t.lookup(k) == Slot(k, 4, 9)
    t.write(0, h0, 1, Slot(k, 5, 2))
    assert t.lookup(k).queue == 5                      # bank 0 before bank 1
    t.write(0, (h0 + 1) % 8, 0, Slot(k, 6, 0))         # a wrong bucket: never looked at
    t.write(0, h0, 1, None)
    assert t.lookup(k).queue == 4 and t.lookup(None) is None


def _program(c: Classifier, bank: int, bucket: int, way: int, key: bytes, queue: int, loc: int) -> None:
    c.mmio_write(regs.STEER_ENTRY_CTRL, key[0] | (key[1] << 8))
    c.mmio_write(regs.STEER_ENTRY_ACTION, queue | (loc << 16))
    c.mmio_write(regs.STEER_ENTRY_PORTS, int.from_bytes(key[34:36], 'big')
                 | (int.from_bytes(key[36:38], 'big') << 16))
    src, dst = int.from_bytes(key[2:18], 'big'), int.from_bytes(key[18:34], 'big')
    for w in range(4):
        c.mmio_write(regs.steer_entry_src_reg(w), (src >> (32 * w)) & 0xFFFF_FFFF)
        c.mmio_write(regs.steer_entry_dst_reg(w), (dst >> (32 * w)) & 0xFFFF_FFFF)
    c.mmio_write(regs.STEER_SLOT_CMD, bucket | (bank << 16) | (way << 17) | (1 << 30))


# --- the register view ------------------------------------------------------------------------

def test_classifier_registers_reset_and_masks():
    c = Classifier(num_queues=4)
    steer = [regs.steer_type_reg(t, off) for t in range(8) for off in (0, 4)] + [
        regs.STEER_ENTRY_CTRL, regs.STEER_ENTRY_ACTION, regs.STEER_ENTRY_PORTS, regs.STEER_SLOT_CMD,
        regs.STEER_STATUS] + [regs.steer_entry_src_reg(w) for w in range(4)]
    addrs = ([regs.RSS_CTRL] + [regs.rss_key_reg(i) for i in range(10)]
             + [regs.rss_indir_reg(j) for j in range(32)] + steer)
    for a in addrs:
        assert c.handles(a) and c.mmio_read(a) == 0
    caps = c.mmio_read(regs.STEER_CAPS)
    assert (regs.STEER_CAPS_RULES.get(caps), regs.STEER_CAPS_BUCKET_LOG2.get(caps),
            regs.STEER_CAPS_WAYS.get(caps), regs.STEER_CAPS_BANKS.get(caps)) == (1024, 9, 2, 2)
    c.mmio_write(regs.RSS_CTRL, 0xFFFF_FFFF)
    assert c.mmio_read(regs.RSS_CTRL) == 0x3F
    c.mmio_write(regs.steer_type_reg(3, regs.STEER_TYPE_MASK), 0xFFFF_FFFF)
    assert c.mmio_read(regs.steer_type_reg(3, regs.STEER_TYPE_MASK)) == 0x00FF_FFFF
    c.mmio_write(regs.STEER_ENTRY_CTRL, 0xFFFF_FFFF)
    assert c.mmio_read(regs.STEER_ENTRY_CTRL) == 0xFF07
    c.mmio_write(regs.STEER_SLOT_CMD, 0)                          # write-only, reads 0
    assert c.mmio_read(regs.STEER_SLOT_CMD) == 0
    c.mmio_write(regs.STEER_CAPS, 0)                              # read-only
    assert c.mmio_read(regs.STEER_CAPS) == caps
    c.mmio_write(regs.STEER_CAPS + 0xF0, 0x1234)                  # unmapped offset in the block
    assert c.mmio_read(regs.STEER_CAPS + 0xF0) == 0
    c.mmio_write(regs.RX_STEER_BAD_QUEUE, 5)                     # counters are read-only
    assert c.mmio_read(regs.RX_STEER_BAD_QUEUE) == 0
    assert not c.handles(regs.RX_FRAMES) and not c.handles(regs.rxq_reg(0, 0))
    # Other blocks' registers are not touched: read None, write not taken.
    assert c.mmio_read(regs.RX_FRAMES) is None and c.mmio_read(regs.rxq_reg(1, 0)) is None
    assert c.mmio_write(regs.rxq_reg(1, 0), 1) is False
    assert c.mmio_write(regs.RSS_CTRL, 1) is True
    assert not c.handles(regs.STEER_CAPS + 0x100)
    with pytest.raises(ValueError):
        c.mmio_read(regs.RSS_CTRL + 2)


def test_classifier_key_indir_and_slot_layout():
    """docs/rss.md section 5: key big-endian per register, table little-endian per register,
    address words least significant first, a slot written whole by STEER_SLOT_CMD."""
    c = Classifier(num_queues=8)
    for i in range(10):
        c.mmio_write(regs.rss_key_reg(i), int.from_bytes(MS_VERIFICATION_KEY[4 * i:4 * i + 4], 'big'))
    c.mmio_write(regs.RSS_CTRL, 1 << 1)                          # tcp_ipv4 only
    c.mmio_write(regs.rss_indir_reg(1), 0x04030201)
    cfg = c.rss_config
    assert cfg.key == MS_VERIFICATION_KEY
    assert cfg.types == {RssType.TCP_IPV4}
    assert cfg.indir[:8] == (0, 0, 0, 0, 1, 2, 3, 4)

    c.mmio_write(regs.steer_type_reg(1, regs.STEER_TYPE_MASK), 32 | (32 << 8))
    c.mmio_write(regs.steer_type_reg(1, regs.STEER_TYPE_PORT_MASK), 0xFFFF_0000)   # dport only
    assert c.type_masks[FlowType.TCP4] == TypeMask(32, 32, 0, 0xFFFF, 0)
    c.mmio_write(regs.steer_entry_src_reg(0), 0x0A000001)                         # 10.0.0.1
    c.mmio_write(regs.steer_entry_dst_reg(0), 0x0A000002)
    c.mmio_write(regs.STEER_ENTRY_PORTS, 5201 << 16)
    c.mmio_write(regs.STEER_ENTRY_CTRL, 1)
    c.mmio_write(regs.STEER_ENTRY_ACTION, 6 | (17 << 16))
    assert c.staged_slot() == Slot(frame_key(T4, c.type_masks), 6, 17)
    h0, _ = buckets_of(frame_key(T4, c.type_masks), 512)
    c.mmio_write(regs.STEER_SLOT_CMD, h0 | (1 << 17) | (1 << 30))                 # bank 0 way 1
    assert c.table.slots[0][h0][1] == Slot(frame_key(T4, c.type_masks), 6, 17)
    got = c.classify(T4)
    assert (got.queue, got.steered, got.rule) == (6, True, 17)
    c.mmio_write(regs.STEER_SLOT_CMD, h0 | (1 << 17) | (2 << 30))                 # clear it
    assert not c.classify(T4).steered
    _program(c, 0, h0, 0, frame_key(T4, c.type_masks), 5, 3)
    assert c.classify(T4).queue == 5
    c.mmio_write(regs.STEER_SLOT_CMD, 3 << 30)                                    # clear all
    assert not c.classify(T4).steered and c.table.valid_slots() == []


def test_classifier_classifies_and_counts():
    c = Classifier(num_queues=4)
    for i in range(10):
        c.mmio_write(regs.rss_key_reg(i), int.from_bytes(MS_VERIFICATION_KEY[4 * i:4 * i + 4], 'big'))
    c.mmio_write(regs.RSS_CTRL, 0x3F)
    for j in range(32):
        c.mmio_write(regs.rss_indir_reg(j), 0x09090909)           # every entry: queue 9 > 3
    f = pad60(Ether(**MAC) / IP(src='66.9.149.187', dst='161.142.100.80') / TCP(sport=2794, dport=1766))
    got = c.classify_frame(f)
    assert (got.queue, got.rss_hash, got.bad_queue) == (0, 0x51CCC178, True)
    assert c.mmio_read(regs.RX_RSS_BAD_QUEUE) == 1 and c.mmio_read(regs.RX_STEER_BAD_QUEUE) == 0
    # A tcp4 rule of all-zero masks (every TCP/IPv4 frame) to a bad queue, then a good one.
    key = make_key(FlowType.TCP4, 0, 0, 0, 0, 0)
    h0, _ = buckets_of(key, 512)
    _program(c, 0, h0, 0, key, 200, 0)
    got = c.classify_frame(f)
    assert (got.queue, got.steered, got.bad_queue) == (0, True, True)
    assert c.mmio_read(regs.RX_STEER_BAD_QUEUE) == 1
    _program(c, 0, h0, 1, key, 3, 0)                                              # way 1
    c.mmio_write(regs.STEER_SLOT_CMD, h0 | (2 << 30))                             # clear way 0
    assert (c.classify_frame(f).queue, c.mmio_read(regs.RX_STEER_BAD_QUEUE)) == (3, 1)
    assert c.classify_frame(pad60(Ether(**MAC) / ARP())) == Classification(0, 0, RssType.NONE, False)
