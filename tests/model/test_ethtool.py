"""driver/ethtool.py on the golden model: the driver programs `models.rss.Classifier` through
a NicHw-like adapter, and frames built with scapy are classified by the model.

The expectations come from docs/rss.md and the ethtool semantics the driver documents: which
queue a flow must land on, which error a bad request must get, and that a rule update never
exposes a half-written rule to traffic.
"""
from __future__ import annotations

import asyncio
import collections
import errno
import functools
import random

import pytest
from scapy.all import ICMP, IP, TCP, UDP, Ether, IPv6, Raw

from driver import ethtool, regs
from driver.errors import KernelError
from driver.ethtool import NtupleSpec, NtupleRules
from models.rss import Classifier, FlowType, RssType, TypeMask, tuple_from_frame
from models.toeplitz import MS_VERIFICATION_KEY

MAC = dict(dst='02:00:00:00:00:01', src='02:00:00:00:00:02')


class ClassifierHw:
    """The smallest NicHw: CAPS for the queue count, everything else to the Classifier."""

    def __init__(self, num_queues: int = 8) -> None:
        self.cls = Classifier(num_queues)
        self.num_queues = num_queues
        self.writes: list[tuple[int, int]] = []
        self.on_write = None        # called after every write (for mid-update checks)

    async def read32(self, addr: int) -> int:
        if addr == regs.CAPS:
            return regs.CAPS_NUM_RXQ.put(self.num_queues)
        value = self.cls.mmio_read(addr)
        return 0 if value is None else value

    async def write32(self, addr: int, value: int) -> None:
        assert self.cls.mmio_write(addr, value), f'driver wrote 0x{addr:x}, not an RSS register'
        self.writes.append((addr, value))
        if self.on_write is not None:
            self.on_write(addr, value)

    async def delay(self, ns: int) -> None:
        return None


def run(coro):
    return asyncio.run(coro)


def frame4(src='10.0.0.1', dst='10.0.0.2', sport=40000, dport=5201, proto='tcp') -> bytes:
    l4 = TCP(sport=sport, dport=dport) if proto == 'tcp' else UDP(sport=sport, dport=dport)
    return bytes(Ether(**MAC) / IP(src=src, dst=dst) / l4 / Raw(b'x' * 20)).ljust(60, b'\0')


def frame6(src='fd00::1', dst='fd00::2', sport=40000, dport=5201) -> bytes:
    return bytes(Ether(**MAC) / IPv6(src=src, dst=dst) / TCP(sport=sport, dport=dport)
                 / Raw(b'y' * 8)).ljust(60, b'\0')


def expect_errno(code: int, coro_or_fn) -> KernelError:
    with pytest.raises(KernelError) as info:
        if asyncio.iscoroutine(coro_or_fn):
            run(coro_or_fn)
        else:
            coro_or_fn()
    assert info.value.errno == code, f'{info.value} is not {errno.errorcode[code]}'
    return info.value


# --- RSS ---------------------------------------------------------------------------------------

def test_rxfh_round_trip_and_register_layout():
    hw = ClassifierHw(8)
    indir = [random.Random(1).randrange(8) for _ in range(128)]
    run(ethtool.set_rxfh(hw, MS_VERIFICATION_KEY, indir))
    assert run(ethtool.get_rxfh(hw)) == ethtool.Rxfh(MS_VERIFICATION_KEY, indir)
    # docs/rss.md section 5: key byte 0 in the top byte of RSS_KEY[0], entry 4j+k in byte k.
    assert hw.cls.mmio_read(regs.rss_key_reg(0)) == 0x6D5A56DA
    assert hw.cls.mmio_read(regs.rss_indir_reg(1)) == int.from_bytes(bytes(indir[4:8]), 'little')
    assert hw.cls.rss_config.key == MS_VERIFICATION_KEY and list(hw.cls.rss_config.indir) == indir
    # None leaves a part alone.
    run(ethtool.set_rxfh(hw, indir=[0] * 128))
    assert run(ethtool.get_rxfh(hw)).key == MS_VERIFICATION_KEY


def test_rxfh_errors_write_nothing():
    hw = ClassifierHw(4)
    expect_errno(errno.EINVAL, ethtool.set_rxfh(hw, key=bytes(39)))
    expect_errno(errno.EINVAL, ethtool.set_rxfh(hw, key=bytes(41)))
    expect_errno(errno.EINVAL, ethtool.set_rxfh(hw, indir=[0] * 127))
    expect_errno(errno.EINVAL, ethtool.set_rxfh(hw, indir=[0] * 127 + [4]))        # CAPS: 4 queues
    expect_errno(errno.EINVAL, ethtool.set_rxfh(hw, key=bytes(40), indir=[0] * 127 + [-1]))
    run(ethtool.set_rxfh(hw, indir=[0] * 127 + [4], num_queues=5))               # caller's count
    assert hw.writes == [(regs.rss_indir_reg(j), 0x04000000 if j == 31 else 0) for j in range(32)]


def test_rx_flow_hash_types():
    hw = ClassifierHw(8)
    run(ethtool.set_rx_flow_hash(hw, {'ip4', 'tcp4', 'udp6'}))
    assert run(ethtool.get_rx_flow_hash(hw)) == {'ip4', 'tcp4', 'udp6'}
    assert hw.cls.rss_config.types == {RssType.IPV4, RssType.TCP_IPV4, RssType.UDP_IPV6}
    assert hw.cls.classify_frame(frame4()).rss_type is RssType.TCP_IPV4
    assert hw.cls.classify_frame(frame4(proto='udp')).rss_type is RssType.IPV4      # fallback
    assert hw.cls.classify_frame(frame6()).rss_type is RssType.NONE                  # tcp6/ip6 off
    expect_errno(errno.EINVAL, ethtool.set_rx_flow_hash(hw, {'tcp4', 'sctp4'}))
    assert run(ethtool.get_rx_flow_hash(hw)) == {'ip4', 'tcp4', 'udp6'}
    run(ethtool.set_rx_flow_hash(hw, set()))
    assert run(ethtool.get_rx_flow_hash(hw)) == set()


@functools.cache
def _many_flows(n: int = 3000) -> list:
    """Flow tuples of `n` different frames (half TCP/IPv4, half TCP/IPv6), built once."""
    rng = random.Random(99)
    out = []
    for i in range(n):
        sport = rng.randrange(1024, 65536)
        if i % 2:
            src = f'10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}'
            out.append(tuple_from_frame(frame4(src=src, sport=sport)))
        else:
            src = f'fd00::{rng.getrandbits(16):x}:{rng.getrandbits(16):x}'
            out.append(tuple_from_frame(frame6(src=src, sport=sport)))
    return out


@pytest.mark.parametrize('n', [1, 2, 3, 5, 8])
def test_equal_n_lands_on_exactly_n_queues(n):
    """Many flows over an "equal N" table land on all N queues and never on the others."""
    hw = ClassifierHw(8)
    run(ethtool.set_rxfh(hw, key=random.Random(n).randbytes(40)))
    run(ethtool.set_rx_flow_hash(hw, set(ethtool.FLOW_HASH_BITS)))
    run(ethtool.set_rxfh_equal(hw, n, 8))
    load = collections.Counter()
    for t in _many_flows():
        c = hw.cls.classify(t)
        assert not c.steered and c.rss_type is not RssType.NONE
        load[c.queue] += 1
    assert set(load) == set(range(n)), load
    spread = max(load.values()) / min(load.values())
    print(f'equal {n}: {len(_many_flows())} flows, per-queue {dict(sorted(load.items()))}, '
          f'max/min {spread:.3f}')
    assert spread < 1.5


def test_equal_n_errors():
    hw = ClassifierHw(8)
    for n in (0, 9, -1, True):
        expect_errno(errno.EINVAL, ethtool.set_rxfh_equal(hw, n, 8))
    assert hw.writes == []


# --- n-tuple rules ------------------------------------------------------------------------------

def _rss_setup(num_queues: int = 8) -> ClassifierHw:
    hw = ClassifierHw(num_queues)
    run(ethtool.set_rxfh(hw, key=MS_VERIFICATION_KEY))
    run(ethtool.set_rx_flow_hash(hw, set(ethtool.FLOW_HASH_BITS)))
    run(ethtool.set_rxfh_equal(hw, 2, num_queues))        # RSS uses queues 0 and 1 only
    return hw


def test_rule_steers_and_delete_returns_flow_to_rss():
    hw = _rss_setup()
    rules = NtupleRules(hw, num_queues=8)
    f = frame4(dst='10.0.0.9', dport=5201)
    rss = hw.cls.classify_frame(f)
    assert rss.queue in (0, 1) and not rss.steered
    rid = run(rules.add(NtupleSpec('tcp4', action=6, dst_ip='10.0.0.9', dst_port=5201)))
    assert rid == 0
    got = hw.cls.classify_frame(f)
    assert (got.queue, got.steered, got.rss_hash) == (6, True, rss.rss_hash)
    # The rule is specific: other ports, UDP and IPv6 stay on RSS.
    assert not hw.cls.classify_frame(frame4(dst='10.0.0.9', dport=5202)).steered
    assert not hw.cls.classify_frame(frame4(dst='10.0.0.9', dport=5201, proto='udp')).steered
    run(rules.delete(rid))
    assert hw.cls.classify_frame(f) == rss
    assert rules.list() == []


def test_same_key_lowest_location_wins():
    """Two rules with the same key: the lower location wins; deleting it hands the flow to
    the other; deleting that returns it to RSS."""
    hw = _rss_setup()
    rules = NtupleRules(hw, num_queues=8)
    f = frame4(dst='10.0.0.9', dport=80)
    rss = hw.cls.classify_frame(f)
    spec = dict(dst_ip='10.0.0.9', dst_port=80)
    assert run(rules.add(NtupleSpec('tcp4', action=7, loc=9, **spec))) == 9
    assert run(rules.add(NtupleSpec('tcp4', action=3, loc=5, **spec))) == 5
    assert hw.cls.classify_frame(f).queue == 3                          # loc 5 beats loc 9
    assert len(hw.cls.table.valid_slots()) == 1                         # only the winner
    run(rules.delete(5))
    assert hw.cls.classify_frame(f).queue == 7
    first = run(rules.add(NtupleSpec('tcp4', action=4, **spec)))       # lowest free: 0
    assert first == 0 and hw.cls.classify_frame(f).queue == 4
    assert [r.rule_id for r in rules.list()] == [0, 9]
    run(rules.add(NtupleSpec('tcp4', action=5, loc=0, **spec)))          # replace in place
    assert hw.cls.classify_frame(f).queue == 5 and len(rules) == 2
    run(rules.delete(0))
    run(rules.delete(9))
    assert hw.cls.classify_frame(f) == rss and hw.cls.table.valid_slots() == []


def test_one_mask_per_flow_type():
    """Every rule of a flow type uses the type's mask: another mask is EINVAL while a rule
    of the type is installed, and becomes the type's mask once none is."""
    hw = _rss_setup()
    rules = NtupleRules(hw, num_queues=8)
    a = run(rules.add(NtupleSpec('tcp4', action=1, dst_port=80)))
    run(rules.add(NtupleSpec('tcp4', action=2, dst_port=81)))          # same mask: fine
    run(rules.add(NtupleSpec('udp4', action=3, src_ip='10.0.0.1')))    # another type: fine
    before = len(hw.writes)
    err = expect_errno(errno.EINVAL, rules.add(NtupleSpec('tcp4', action=1, src_ip='10.0.0.1')))
    assert 'one mask per flow type' in str(err) and len(hw.writes) == before
    expect_errno(errno.EINVAL, rules.add(NtupleSpec('tcp4', action=1, dst_port=80,
                                                    dst_port_mask=0xFF00)))
    run(rules.delete(a))
    run(rules.delete(1))
    rid = run(rules.add(NtupleSpec('tcp4', action=6, src_ip='10.0.0.1')))
    assert hw.cls.classify_frame(frame4(src='10.0.0.1', dport=9999)).queue == 6
    assert hw.cls.type_masks[FlowType.TCP4] == TypeMask(src_len=32)
    # Replacing the only rule of a type may change the mask too.
    run(rules.add(NtupleSpec('tcp4', action=5, dst_port=443, loc=rid)))
    assert hw.cls.classify_frame(frame4(src='10.9.9.9', dport=443)).queue == 5
    assert not hw.cls.classify_frame(frame4(src='10.0.0.1', dport=9999)).steered


def test_address_masks_are_prefixes():
    hw = _rss_setup()
    rules = NtupleRules(hw, num_queues=8)
    err = expect_errno(errno.EINVAL, rules.add(NtupleSpec('tcp4', action=1, src_ip='10.0.0.0',
                                                          src_ip_mask='255.0.255.0')))
    assert 'prefix' in str(err)
    run(rules.add(NtupleSpec('tcp4', action=1, src_ip='10.1.0.0', src_ip_mask='255.255.0.0')))
    assert hw.cls.classify_frame(frame4(src='10.1.200.3')).queue == 1
    assert not hw.cls.classify_frame(frame4(src='10.2.0.3')).steered


def test_ipv6_rule_and_masks():
    hw = _rss_setup()
    rules = NtupleRules(hw, num_queues=8)
    run(rules.add(NtupleSpec('tcp6', action=2, src_ip='fd00:1::', src_ip_mask='ffff:ffff::',
                             dst_port=443, dst_port_mask=0xFFFF)))
    assert hw.cls.classify_frame(frame6(src='fd00:1::77', dport=443)).queue == 2
    assert not hw.cls.classify_frame(frame6(src='fd00:2::77', dport=443)).steered
    assert not hw.cls.classify_frame(frame4(dport=443)).steered              # IPv4: no
    assert hw.cls.type_masks[FlowType.TCP6] == TypeMask(src_len=32, dport_mask=0xFFFF)


def test_ip4_rule_with_l4proto():
    """ip4 l4proto 17 is a udp4 rule without ports; a plain ip4 rule matches the protocols
    that are neither TCP nor UDP (docs/rss.md section 4)."""
    hw = _rss_setup()
    rules = NtupleRules(hw, num_queues=8)
    run(rules.add(NtupleSpec('ip4', action=5, l4_proto=17)))
    assert hw.cls.classify_frame(frame4(proto='udp')).queue == 5
    assert not hw.cls.classify_frame(frame4(proto='tcp')).steered
    run(rules.add(NtupleSpec('ip4', action=4, dst_ip='10.0.0.2')))
    icmp = bytes(Ether(**MAC) / IP(src='10.0.0.1', dst='10.0.0.2') / ICMP()).ljust(60, b'\0')
    assert hw.cls.classify_frame(icmp).queue == 4
    assert not hw.cls.classify_frame(frame4(proto='tcp')).steered           # TCP is tcp4
    # ip4 with l4proto 1 compares the protocol: another mask than the installed ip4 rule's.
    expect_errno(errno.EINVAL, rules.add(NtupleSpec('ip4', action=3, dst_ip='10.0.0.2', l4_proto=1)))


def test_errors():
    hw = _rss_setup(4)
    rules = NtupleRules(hw, num_queues=4, num_rules=32)
    before = len(hw.writes)
    bad = [
        NtupleSpec('tcp4', action=4),                                 # queue out of range
        NtupleSpec('tcp4', action=-1),
        NtupleSpec('sctp4', action=0),                                # unknown flow type
        NtupleSpec('tcp6', action=0, src_ip='10.0.0.1'),              # wrong IP version
        NtupleSpec('tcp4', action=0, dst_ip='10.0.0.300'),
        NtupleSpec('ip4', action=0, dst_port=80),                     # ports need tcp/udp
        NtupleSpec('tcp4', action=0, l4_proto=6),                     # implied by tcp4
        NtupleSpec('tcp4', action=0, dst_port=70000),
        NtupleSpec('tcp4', action=0, dst_port_mask=0xFFFF),           # mask without value
        NtupleSpec('tcp4', action=0, loc=32),
    ]
    for spec in bad:
        expect_errno(errno.EINVAL, rules.add(spec))
    assert len(hw.writes) == before and len(rules) == 0
    expect_errno(errno.ENOENT, rules.delete(3))
    expect_errno(errno.ENOENT, lambda: rules.get(3))
    for i in range(32):
        assert run(rules.add(NtupleSpec('udp4', action=i % 4, dst_port=1000 + i))) == i
    expect_errno(errno.ENOSPC, rules.add(NtupleSpec('udp4', action=0, dst_port=9)))
    run(rules.delete(17))
    assert run(rules.add(NtupleSpec('udp4', action=0, dst_port=9))) == 17
    # Channels: rules use queue 3, so shrinking to 3 queues is refused, to 4 allowed.
    expect_errno(errno.EINVAL, lambda: rules.check_channels(3))
    rules.check_channels(4)
    # More locations than the NIC has (STEER_CAPS.rules).
    expect_errno(errno.EINVAL, NtupleRules(hw, 4, num_rules=2000).add(
        NtupleSpec('udp4', action=0, dst_port=1)))


def test_every_location_and_enospc():
    """All 1024 locations in use with structured keys (consecutive ports, consecutive
    addresses) and random ones; each rule's flow goes to its queue; one more is ENOSPC."""
    hw = _rss_setup()
    rules = NtupleRules(hw, num_queues=8)
    rng = random.Random(11)
    flows = ([('udp4', {'dst_port': p}) for p in range(400)]
             + [('tcp6', {'src_ip': f'fd00::{i:x}'}) for i in range(400)]
             + [('tcp4', {'src_ip': f'10.{rng.randrange(256)}.{rng.randrange(256)}.{i % 200 + 1}',
                          'dst_port': rng.randrange(65536)}) for i in range(224)])
    for loc, (ft, kw) in enumerate(flows):
        assert run(rules.add(NtupleSpec(ft, action=loc % 8, **kw))) == loc
    expect_errno(errno.ENOSPC, rules.add(NtupleSpec('udp4', action=0, dst_port=9999)))
    assert len(hw.cls.table.valid_slots()) == 1024
    for loc in rng.sample(range(1024), 100):
        ft, kw = flows[loc]
        if ft == 'udp4':
            f = frame4(proto='udp', dport=kw['dport'] if 'dport' in kw else kw['dst_port'])
        elif ft == 'tcp6':
            f = frame6(src=kw['src_ip'])
        else:
            f = frame4(src=kw['src_ip'], dport=kw['dst_port'])
        c = hw.cls.classify_frame(f)
        assert (c.steered, c.queue, c.rule) == (True, loc % 8, loc), (loc, c)


def test_clear_empties_leftover_slots():
    hw = _rss_setup()
    first = NtupleRules(hw, num_queues=8)
    run(first.add(NtupleSpec('tcp4', action=3, dst_port=5201)))      # left by an earlier driver
    assert hw.cls.classify_frame(frame4()).steered
    run(NtupleRules(hw, num_queues=8).clear())
    assert not hw.cls.classify_frame(frame4()).steered and hw.cls.table.valid_slots() == []


def test_rule_updates_are_never_seen_half_written():
    """After every single register write of add/replace/delete, each probe flow is classified
    as before or as after the operation (docs/rss.md section 4)."""
    rng = random.Random(7)
    hw = _rss_setup()
    rules = NtupleRules(hw, num_queues=8)
    probes = [tuple_from_frame(frame4(src=f'10.0.{a}.{b}', dst='10.1.0.1', sport=s, dport=d))
              for a in range(2) for b in (1, 2) for s in (1000, 2000) for d in (80, 443)]

    def op(coro_fn):
        before = [hw.cls.classify(t) for t in probes]
        seen_during = []
        hw.on_write = lambda a, v: seen_during.append([hw.cls.classify(t) for t in probes])
        run(coro_fn())
        hw.on_write = None
        after = [hw.cls.classify(t) for t in probes]
        for snapshot in seen_during:
            for i, c in enumerate(snapshot):
                assert c in (before[i], after[i]), f'probe {i} classified {c} mid-update'
        return seen_during

    for i in range(16):
        spec = NtupleSpec('tcp4', action=rng.randrange(8), src_ip=f'10.0.{rng.randrange(2)}.{rng.choice([1, 2])}',
                          dst_port=rng.choice([80, 443]), loc=rng.choice([3, 3, 1, 6]))
        op(lambda: rules.add(spec))
    for loc in [r.rule_id for r in rules.list()]:
        writes = op(lambda: rules.delete(loc))
        assert writes, 'a delete writes the NIC'


def test_moves_never_lose_a_rule():
    """A small table (8 buckets: 32 slots) filled to 30 keys: the driver moves keys to make room;
    after every register write each installed rule's flow still goes to its queue."""
    hw = _rss_setup()
    hw.cls = Classifier(8, buckets=8)
    run(ethtool.set_rxfh(hw, key=MS_VERIFICATION_KEY))
    rules = NtupleRules(hw, num_queues=8)
    installed: dict[int, tuple[object, int]] = {}
    moves = 0

    def check(addr, value):
        for loc, (t, q) in installed.items():
            c = hw.cls.classify(t)
            assert (c.steered, c.queue) == (True, q), f'rule {loc} lost mid-update: {c}'

    for i in range(30):
        t = tuple_from_frame(frame4(proto='udp', dport=3000 + i))
        hw.on_write = check
        n0 = len(hw.writes)
        try:
            loc = run(rules.add(NtupleSpec('udp4', action=i % 8, dst_port=3000 + i)))
        except KernelError as exc:
            assert exc.errno == errno.ENOSPC
            continue
        hw.on_write = None
        moves += (sum(1 for a, v in hw.writes[n0:] if a == regs.STEER_SLOT_CMD) - 1) // 2
        installed[loc] = (t, i % 8)
    assert moves > 0 and len(installed) >= 26, (moves, len(installed))
