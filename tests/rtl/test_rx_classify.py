"""rx_classify (RSS hash, indirection table, flow steering) against the golden model.

Every cycle a flow tuple goes in (back to back, or with random gaps in some phases) and every
cycle the result LATENCY cycles earlier is checked against `models.rss.classify` with the
configuration the ports hold: queue, hash, hash type, steered flag and the bad-queue strobes.
Configurations are random per phase: keys, the six type enables, indirection tables (with
some out-of-range entries), numbers of queues and rule sets built around a small pool of
flows so that rules overlap and precedence matters. Microsoft's published vectors are checked
with their published hashes, not with the model.

The cocotb tests below run inside the simulator; the pytest function at the bottom builds and
runs them for a few NUM_RULES / INDIR_ENTRIES combinations.
"""
from __future__ import annotations

import collections
import ipaddress
import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge, RisingEdge

from models.formats import L3Type, L4Type
from models.rss import ALL_TYPES, FlowTuple, RssConfig, RssType, SteerRule, classify
from models.rss import tuple_from_frame
from tb.sim import pytest_test_name, run_rtl_test

SOURCES = ["rtl/formats/generated/nic_dma_pkg.sv", "rtl/pkg/nic_pkg.sv", "rtl/rss/rss_toeplitz.sv",
           "rtl/rss/flow_steer.sv", "rtl/rss/rx_classify.sv"]
EXPECTED_LATENCY = 3          # docs/rss.md section 6
MS_KEY = bytes.fromhex('6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c'
                       '6a42b73bbeac01fa')
ALL_ONES_128 = (1 << 128) - 1

# rx_tuple_t and rx_class_t field widths, most significant field first (rtl/pkg/nic_pkg.sv).
TUPLE_FIELDS = [("l3_type", 2), ("l4_type", 2), ("ip_frag", 1), ("proto", 8), ("src_addr", 128),
                ("dst_addr", 128), ("sport", 16), ("dport", 16)]
CLASS_FIELDS = [("qid", 7), ("rss_hash", 32), ("rss_type", 4), ("steered", 1)]


def pack_tuple(t: FlowTuple) -> int:
    v = 0
    for name, width in TUPLE_FIELDS:
        value = int(getattr(t, name))
        assert 0 <= value < (1 << width)
        v = (v << width) | value
    return v


def unpack_class(v: int) -> dict[str, int]:
    out = {}
    for name, width in reversed(CLASS_FIELDS):
        out[name] = v & ((1 << width) - 1)
        v >>= width
    return out


# --------------------------------------------------------------------------------------------
# Stimulus
# --------------------------------------------------------------------------------------------
def random_addr(rng: random.Random, v6: bool) -> int:
    return rng.getrandbits(128 if v6 else 32)


def random_tuple(rng: random.Random, pool: list[FlowTuple]) -> FlowTuple:
    """A flow: often a pool flow with some fields changed, sometimes anything."""
    if pool and rng.random() < 0.6:
        base = rng.choice(pool)
        v6 = base.l3_type is L3Type.IPV6
        kind = rng.choice(["same", "same", "src", "dst", "sport", "dport", "lowbits", "frag", "l4"])
        f = dict(base.__dict__)
        if kind == "src":
            f["src_addr"] = random_addr(rng, v6)
        elif kind == "dst":
            f["dst_addr"] = random_addr(rng, v6)
        elif kind == "sport":
            f["sport"] = rng.getrandbits(16)
        elif kind == "dport":
            f["dport"] = rng.getrandbits(16)
        elif kind == "lowbits":
            f["src_addr"] ^= rng.getrandbits(8)
            f["dst_addr"] ^= rng.getrandbits(8)
        elif kind == "frag":
            f["ip_frag"], f["l4_type"] = True, L4Type.NONE
        elif kind == "l4":
            f["l4_type"] = rng.choice(list(L4Type))
        return FlowTuple(**f)
    r = rng.random()
    if r < 0.05:
        # Not IP: every other field is garbage the RTL must ignore.
        return FlowTuple(L3Type.NONE, rng.choice(list(L4Type)), rng.random() < 0.5,
                         rng.getrandbits(8), rng.getrandbits(128), rng.getrandbits(128),
                         rng.getrandbits(16), rng.getrandbits(16))
    v6 = rng.random() < 0.5
    kind = rng.choice(["tcp", "tcp", "udp", "udp", "other", "frag"])
    l4 = {"tcp": L4Type.TCP, "udp": L4Type.UDP, "other": L4Type.OTHER, "frag": L4Type.NONE}[kind]
    proto = {"tcp": 6, "udp": 17}.get(kind, rng.choice([1, 6, 17, 47, 58, rng.getrandbits(8)]))
    # Ports of frames without valid ports are random too: they must not matter.
    return FlowTuple(L3Type.IPV6 if v6 else L3Type.IPV4, l4, kind == "frag", proto,
                     random_addr(rng, v6), random_addr(rng, v6),
                     rng.getrandbits(16), rng.getrandbits(16))


def random_mask(rng: random.Random, width: int) -> int:
    r = rng.random()
    if r < 0.35:
        return (1 << width) - 1
    if r < 0.65:
        return 0
    if r < 0.85:        # a prefix
        n = rng.randrange(width + 1)
        return ((1 << n) - 1) << (width - n)
    return rng.getrandbits(width)


def random_rule(rng: random.Random, pool: list[FlowTuple], queue_limit: int) -> SteerRule:
    base = rng.choice(pool)
    abits = 128 if base.l3_type is L3Type.IPV6 else 32
    amask = random_mask(rng, abits)
    return SteerRule(
        queue=rng.randrange(queue_limit),
        enable=rng.random() < 0.6,
        ipver=base.ip_version if rng.random() < 0.9 else rng.getrandbits(4),
        ipver_mask=rng.choice([0xF, 0xF, 0, rng.getrandbits(4)]),
        proto=base.proto, proto_mask=random_mask(rng, 8),
        src_addr=base.src_addr, src_mask=amask if rng.random() < 0.8 else random_mask(rng, 128),
        dst_addr=base.dst_addr, dst_mask=random_mask(rng, abits),
        sport=base.sport, sport_mask=random_mask(rng, 16) if rng.random() < 0.5 else 0,
        dport=base.dport, dport_mask=random_mask(rng, 16))


def tuples_from_frames(rng: random.Random, n: int) -> list[FlowTuple]:
    """Tuples the parser model extracts from real frames: VLAN/QinQ, IPv4 options, IPv6 with
    extension headers, fragments."""
    from scapy.all import (IP, TCP, UDP, Dot1AD, Dot1Q, Ether, IPOption_NOP, IPv6,
                           IPv6ExtHdrDestOpt, IPv6ExtHdrFragment, IPv6ExtHdrHopByHop, Raw)
    out = []
    for _ in range(n):
        l2 = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
        tags = rng.randrange(3)
        if tags == 1:
            l2 = l2 / Dot1Q(vlan=rng.randrange(1, 4095))
        elif tags == 2:
            l2 = l2 / Dot1AD(vlan=200) / Dot1Q(vlan=100)
        sp, dp = rng.getrandbits(16), rng.getrandbits(16)
        l4 = TCP(sport=sp, dport=dp) if rng.random() < 0.5 else UDP(sport=sp, dport=dp)
        frag = rng.random() < 0.15
        if rng.random() < 0.5:
            l3 = IP(src=str(ipaddress.IPv4Address(rng.getrandbits(32))),
                    dst=str(ipaddress.IPv4Address(rng.getrandbits(32))),
                    options=[IPOption_NOP()] * (4 * rng.randrange(11)),
                    flags="MF" if frag else 0)
        else:
            l3 = IPv6(src=str(ipaddress.IPv6Address(rng.getrandbits(128))),
                      dst=str(ipaddress.IPv6Address(rng.getrandbits(128))))
            for ext in rng.sample([IPv6ExtHdrHopByHop, IPv6ExtHdrDestOpt], rng.randrange(3)):
                l3 = l3 / ext()
            if frag:
                l3 = l3 / IPv6ExtHdrFragment(m=1)
        frame = bytes(l2 / l3 / l4 / Raw(b"d" * rng.randrange(40)))
        t = tuple_from_frame(frame.ljust(60, b"\0"))
        assert t is not None
        out.append(t)
    return out


# --------------------------------------------------------------------------------------------
# Driving the DUT
# --------------------------------------------------------------------------------------------
class ClassifyTb:
    def __init__(self, dut) -> None:
        self.dut = dut
        self.num_rules = int(dut.NUM_RULES.value)
        self.indir_entries = int(dut.INDIR_ENTRIES.value)
        self.latency = int(dut.LATENCY.value)         # the localparam the lead integrates with
        self.cfg = RssConfig()
        self.rules: list[SteerRule] = []
        self.num_queues = 1
        self.stats = collections.Counter()

    async def start(self) -> None:
        cocotb.start_soon(Clock(self.dut.clk, 4, unit="ns").start())
        self.dut.in_valid.value = 0
        self.dut.in_tuple.value = 0
        self.dut.rst.value = 1
        await ClockCycles(self.dut.clk, 3)
        self.dut.rst.value = 0
        await RisingEdge(self.dut.clk)

    def configure(self, cfg: RssConfig, rules: list[SteerRule], num_queues: int) -> None:
        """Drive the configuration ports (call only with the pipeline empty)."""
        assert len(cfg.indir) == self.indir_entries and len(rules) == self.num_rules
        d = self.dut
        d.rss_type_en.value = sum(1 << t.ctrl_bit for t in cfg.types)
        d.rss_key.value = int.from_bytes(cfg.key, "big")
        d.rss_indir.value = sum(q << (8 * i) for i, q in enumerate(cfg.indir))
        d.num_queues.value = num_queues

        def arr(name: str, width: int, value=lambda r, n: getattr(r, n)) -> None:
            getattr(d, f"rule_{name}").value = sum(int(value(r, name)) << (width * i)
                                                   for i, r in enumerate(rules))
        arr("en", 1, lambda r, n: r.enable)
        for name, width in (("ipver", 4), ("ipver_mask", 4), ("proto", 8), ("proto_mask", 8),
                            ("src_addr", 128), ("src_mask", 128), ("dst_addr", 128),
                            ("dst_mask", 128), ("sport", 16), ("sport_mask", 16),
                            ("dport", 16), ("dport_mask", 16), ("queue", 8)):
            arr(name, width)
        self.cfg, self.rules, self.num_queues = cfg, rules, num_queues

    async def run(self, tuples: list[FlowTuple], rng: random.Random, gap_prob: float = 0.0,
                  expect_hash: list[int] | None = None) -> list[dict[str, int]]:
        """Send `tuples` (back to back unless gap_prob > 0) and check every output cycle.

        At each falling edge the outputs (registered at the last rising edge) are compared
        with what went in exactly `latency` cycles earlier, then the next input is driven.
        Returns the DUT's results in input order.
        """
        d = self.dut
        history: collections.deque = collections.deque([None] * self.latency)
        pending = list(tuples)
        n_in = n_out = 0
        idx = 0
        results = []
        while pending or any(h is not None for h in history):
            await FallingEdge(d.clk)
            # Check what the DUT produced for the input of `latency` cycles ago.
            exp = history.popleft()
            valid = int(d.out_valid.value)
            if exp is None:
                assert valid == 0, f"out_valid high {self.latency} cycles after an idle input cycle"
            else:
                assert valid == 1, f"out_valid low {self.latency} cycles after input {exp[0]}"
                results.append(self._check(exp))
                n_out += 1
            # Drive the next input.
            if pending and (gap_prob == 0.0 or rng.random() >= gap_prob):
                t = pending.pop(0)
                want = classify(t, self.cfg, self.rules, self.num_queues)
                d.in_tuple.value = pack_tuple(t)
                d.in_valid.value = 1
                history.append((idx, t, want, None if expect_hash is None else expect_hash[idx]))
                idx += 1
                n_in += 1
            else:
                d.in_valid.value = 0
                d.in_tuple.value = rng.getrandbits(301)     # garbage while idle
                history.append(None)
        assert n_in == n_out == len(tuples)
        return results

    def _check(self, exp) -> dict[str, int]:
        idx, t, want, published = exp
        d = self.dut
        got = unpack_class(int(d.out_class.value))
        expected = dict(qid=want.queue, rss_hash=want.rss_hash, rss_type=int(want.rss_type),
                        steered=int(want.steered))
        assert got == expected, (
            f"input {idx} {t}: RTL {got} != model {expected} "
            f"(rule {want.rule}, bad_queue {want.bad_queue}, num_queues {self.num_queues})")
        steer_bad, rss_bad = int(d.out_steer_bad_queue.value), int(d.out_rss_bad_queue.value)
        assert (steer_bad, rss_bad) == (int(want.bad_queue and want.steered),
                                        int(want.bad_queue and not want.steered)), \
            f"input {idx}: bad-queue strobes {(steer_bad, rss_bad)} for {want}"
        if published is not None:
            assert got["rss_hash"] == published, f"input {idx}: hash {got['rss_hash']:#x} != published {published:#x}"
        self.stats["steered" if want.steered else ("rss" if want.rss_type else "none")] += 1
        self.stats[f"type{int(want.rss_type)}"] += 1
        if want.bad_queue:
            self.stats["bad_queue"] += 1
        if want.steered and want.rule:
            self.stats["rule>0"] += 1
        return got


def random_config(tb: ClassifyTb, rng: random.Random, pool: list[FlowTuple]):
    num_queues = rng.choice([1, 2, 4, 7, 8, 16, 64, 128])
    limit = min(num_queues + 2, 256)
    indir = [rng.randrange(num_queues) if rng.random() < 0.95 else rng.randrange(256)
             for _ in range(tb.indir_entries)]
    types = {t for t in ALL_TYPES if rng.random() < 0.7}
    cfg = RssConfig(rng.randbytes(40), types, indir)
    rules = [random_rule(rng, pool, limit) for _ in range(tb.num_rules)]
    return cfg, rules, num_queues


def random_pool(rng: random.Random, n: int = 8) -> list[FlowTuple]:
    pool = []
    while len(pool) < n:
        t = random_tuple(rng, [])
        if t.is_ip:
            pool.append(t)
    return pool


# --------------------------------------------------------------------------------------------
# cocotb tests
# --------------------------------------------------------------------------------------------
@cocotb.test()
async def run_published_vectors(dut) -> None:
    """Microsoft's verification vectors with their published hashes, all four input kinds."""
    tb = ClassifyTb(dut)
    assert tb.latency == EXPECTED_LATENCY
    await tb.start()
    v4 = [("66.9.149.187", 2794, "161.142.100.80", 1766, 0x323E8FC2, 0x51CCC178),
          ("199.92.111.2", 14230, "65.69.140.83", 4739, 0xD718262A, 0xC626B0EA),
          ("24.19.198.95", 12898, "12.22.207.184", 38024, 0xD2D0A5DE, 0x5C2B394A),
          ("38.27.205.30", 48228, "209.142.163.6", 2217, 0x82989176, 0xAFC7327F),
          ("153.39.163.191", 44251, "202.188.127.2", 1303, 0x5D1809C5, 0x10E828A2)]
    v6 = [("3ffe:2501:200:1fff::7", 2794, "3ffe:2501:200:3::1", 1766, 0x2CC18CD5, 0x40207D3D),
          ("3ffe:501:8::260:97ff:fe40:efab", 14230, "ff02::1", 4739, 0x0F0C461C, 0xDDE51BBF),
          ("3ffe:1900:4545:3:200:f8ff:fe21:67cf", 44251, "fe80::200:f8ff:fe21:67cf", 38024,
           0x4B61E985, 0x02D1FEEF)]
    tuples, hashes = [], []
    for vecs, l3 in ((v4, L3Type.IPV4), (v6, L3Type.IPV6)):
        for src, sp, dst, dp, h2, h4 in vecs:
            s, d = int(ipaddress.ip_address(src)), int(ipaddress.ip_address(dst))
            tuples += [FlowTuple(l3, L4Type.TCP, False, 6, s, d, sp, dp),
                       FlowTuple(l3, L4Type.UDP, False, 17, s, d, sp, dp),
                       FlowTuple(l3, L4Type.NONE, True, 6, s, d, sp, dp),      # fragment
                       FlowTuple(l3, L4Type.OTHER, False, 1, s, d, sp, dp)]
            hashes += [h4, h4, h2, h2]
    indir = list(range(tb.indir_entries))
    tb.configure(RssConfig(MS_KEY, ALL_TYPES, [i % 128 for i in indir]),
                 [SteerRule(queue=0, enable=False)] * tb.num_rules, 128)
    await tb.run(tuples, random.Random(cocotb.RANDOM_SEED), expect_hash=hashes)


@cocotb.test()
async def run_random_classify(dut) -> None:
    """Random configurations and flows, back to back; some phases with idle gaps."""
    rng = random.Random(cocotb.RANDOM_SEED)
    tb = ClassifyTb(dut)
    await tb.start()
    for phase in range(32):
        pool = random_pool(rng)
        cfg, rules, nq = random_config(tb, rng, pool)
        if phase % 8 == 1:
            rules = [SteerRule(**{**r.__dict__, "enable": False}) for r in rules]     # RSS only
        if phase % 8 == 2:
            cfg = RssConfig(cfg.key, ALL_TYPES, cfg.indir)
        if phase % 8 == 3:
            cfg = RssConfig(cfg.key, set(), cfg.indir)                                  # no RSS
        tuples = [random_tuple(rng, pool) for _ in range(500)]
        if phase % 4 == 0:
            tuples += tuples_from_frames(rng, 40)
            rng.shuffle(tuples)
        tb.configure(cfg, rules, nq)
        await tb.run(tuples, rng, gap_prob=0.3 if phase % 3 == 2 else 0.0)
    dut._log.info("classified: %s", dict(tb.stats))
    # The random run must have exercised every outcome, or it proves little.
    for what in ("steered", "rss", "none", "bad_queue", "rule>0",
                 *(f"type{t}" for t in range(7))):
        assert tb.stats[what] > 0, f"no {what} outcome in the random run: {dict(tb.stats)}"


@cocotb.test()
async def run_precedence_and_removal(dut) -> None:
    """Steering beats RSS, the lowest-numbered matching rule wins, removing a rule returns
    its flow to the next rule and then to RSS (reasoned outcomes, not only the model's)."""
    rng = random.Random(cocotb.RANDOM_SEED + 1)
    tb = ClassifyTb(dut)
    await tb.start()
    flow = FlowTuple(L3Type.IPV4, L4Type.TCP, False, 6, 0x0A000001, 0x0A000002, 40000, 5201)
    cfg = RssConfig(rng.randbytes(40), ALL_TYPES, [3] * tb.indir_entries)
    off = SteerRule(queue=0, enable=False)
    low = tb.num_rules // 2
    for rules, want_q, want_steered in (
            ({}, 3, 0),                                                           # RSS
            ({tb.num_rules - 1: SteerRule.exact(flow, 5)}, 5, 1),                 # last rule
            ({tb.num_rules - 1: SteerRule.exact(flow, 5), low: SteerRule(queue=6)}, 6, 1),
            ({tb.num_rules - 1: SteerRule.exact(flow, 5), low: SteerRule(queue=9)}, 0, 1),
            ({tb.num_rules - 1: SteerRule.exact(flow, 5)}, 5, 1),                 # low removed
            ({}, 3, 0)):                                                          # all removed
        tb.configure(cfg, [rules.get(i, off) for i in range(tb.num_rules)], 8)
        for got in await tb.run([flow] * 4, rng):
            assert (got["qid"], got["steered"]) == (want_q, want_steered), (rules, got)


# --------------------------------------------------------------------------------------------
# pytest entry point
# --------------------------------------------------------------------------------------------
@pytest.mark.rtl
@pytest.mark.parametrize("num_rules,indir_entries", [(32, 128), (48, 256)])
def test_rx_classify(num_rules: int, indir_entries: int) -> None:
    run_rtl_test("rx_classify", SOURCES, "tests.rtl.test_rx_classify",
                 {"NUM_RULES": num_rules, "INDIR_ENTRIES": indir_entries}, pytest_test_name())
