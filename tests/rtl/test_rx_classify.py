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
from driver.steer_table import SlotOp, SteerSlots, action_fields, slot_action
from models.rss import (ALL_TYPES, NO_MASKS, NUM_CONTEXTS, STEER_TYPES, FlowTuple, FlowType,
                        RssConfig, RssType, RuleIndex, SteerRule, TypeMask, full_mask,
                        tuple_from_frame)
from tb.sim import pytest_test_name, run_rtl_test

SOURCES = ["rtl/formats/generated/nic_dma_pkg.sv", "rtl/pkg/nic_pkg.sv", "rtl/rss/rss_toeplitz.sv",
           "rtl/rss/rss_toeplitz_seq.sv", "rtl/rss/flow_steer.sv", "rtl/rss/rx_classify.sv"]
EXPECTED_LATENCY = 4          # docs/rss.md section 6
MS_KEY = bytes.fromhex('6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c'
                       '6a42b73bbeac01fa')
ALL_ONES_128 = (1 << 128) - 1

# rx_tuple_t and rx_class_t field widths, most significant field first (rtl/pkg/nic_pkg.sv).
TUPLE_FIELDS = [("l3_type", 2), ("l4_type", 2), ("ip_frag", 1), ("proto", 8), ("src_addr", 128),
                ("dst_addr", 128), ("sport", 16), ("dport", 16)]
CLASS_FIELDS = [("qid", 7), ("rss_hash", 32), ("rss_type", 4), ("steered", 1)]
# steer_mask_t and steer_slot_t (rtl/pkg/nic_pkg.sv), most significant field first.
MASK_FIELDS = [("src_len", 8), ("dst_len", 8), ("proto_mask", 8), ("sport_mask", 16),
               ("dport_mask", 16)]


def pack_mask(m: TypeMask) -> int:
    v = 0
    for name, width in MASK_FIELDS:
        v = (v << width) | getattr(m, name)
    return v


def pack_slot(op: SlotOp) -> int:
    """steer_slot_t: valid, key (the 38-byte string less the type byte's 5 zero bits), queue,
    ctx_en, ctx, loc (11 bits)."""
    if op.entry is None:
        return 0
    key = int.from_bytes(op.entry.key, "big")
    assert key >> 299 == 0
    q, ctx, ctx_en = action_fields(op.entry.queue)
    return (((((1 << 299 | key) << 8 | q) << 1 | ctx_en) << 4 | ctx) << 11) | (op.entry.loc & 0x7FF)


def rule_action(rule: SteerRule) -> int:
    return slot_action(rule.queue, rule.context)


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


def random_type_mask(rng: random.Random, ft: FlowType) -> TypeMask:
    """A mask for flow type `ft`: full, none, prefixes, partial port masks."""
    bits = ft.addr_bits

    def plen() -> int:
        return rng.choice([bits, bits, 0, rng.randrange(bits + 1), rng.randrange(256)])

    if ft.has_ports:
        def pm() -> int:
            return rng.choice([0xFFFF, 0xFFFF, 0, 0xFF00, rng.getrandbits(16)])
        return TypeMask(plen(), plen(), pm(), pm(), rng.getrandbits(8))   # proto_mask ignored
    return TypeMask(plen(), plen(), 0, 0, rng.choice([0xFF, 0xFF, 0, rng.getrandbits(8)]))


def random_context(rng: random.Random) -> int | None:
    """A rule's RSS context: mostly none, else the default table, a context of the NIC or
    (rarely) one it does not have (a bad queue)."""
    r = rng.random()
    if r < 0.5:
        return None
    if r < 0.6:
        return 0
    if r < 0.9:
        return rng.randint(1, NUM_CONTEXTS)
    return rng.randint(NUM_CONTEXTS + 1, 15)


def random_rule(rng: random.Random, pool: list[FlowTuple], queue_limit: int) -> SteerRule:
    """A rule built from a pool flow (so that frames match it), sometimes of another flow
    type than the flow's, sometimes with one field changed, about half of them with an RSS
    context (the queue then a small offset)."""
    base = rng.choice(pool)
    ctx = random_context(rng)
    q = rng.randrange(queue_limit) if ctx is None else rng.choice([0, 0, 1, rng.randrange(8)])
    r = SteerRule(**{**SteerRule.exact(base, q).__dict__, "context": ctx})
    if rng.random() < 0.3:
        f = dict(r.__dict__)
        bits = r.ftype.addr_bits
        which = rng.choice(["src_addr", "dst_addr"] + (["sport", "dport"] if r.ftype.has_ports
                                                       else ["proto"]))
        width = {"src_addr": bits, "dst_addr": bits, "sport": 16, "dport": 16, "proto": 8}[which]
        f[which] ^= 1 << rng.randrange(width)
        if which == "proto" and f["proto"] in (6, 17):
            f["proto"] ^= 0x80
        r = SteerRule(**f)
    return r


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
    """Drives rx_classify: configuration ports, the slot write port (the slots placed by the
    driver's own placement, driver/steer_table.py) and one tuple per cycle."""

    def __init__(self, dut) -> None:
        self.dut = dut
        self.buckets = int(dut.BUCKETS.value)
        self.indir_entries = int(dut.INDIR_ENTRIES.value)
        self.latency = int(dut.LATENCY.value)         # the localparam the lead integrates with
        # Up to 128-bit MACs the addresses come 3 cycles ahead and frames 4 cycles apart.
        self.seq = int(dut.DATA_W.value) <= 128
        self.lead, self.spacing = (3, 4) if self.seq else (0, 1)
        self.cfg = RssConfig(indir=(0,) * self.indir_entries,   # the table after reset
                             contexts=((0,) * self.indir_entries,) * NUM_CONTEXTS)
        self.masks: dict[FlowType, TypeMask] = dict(NO_MASKS)
        self.rules: dict[int, SteerRule] = {}
        self.slots = SteerSlots(self.buckets)
        self.num_queues = 1
        self.stats = collections.Counter()
        self.ops: collections.deque = collections.deque()     # slot ops to drive, one a cycle
        self.cycle = 0
        # Rule-set versions: (first cycle its change's ops were driven, rules); a tuple
        # classified while a change is being written may see the old or the new version.
        self.versions: list[tuple[int, int, RuleIndex, RssConfig]] = [
            (-10**9, -10**9, RuleIndex({}), self.cfg)]

    async def start(self) -> None:
        d = self.dut
        cocotb.start_soon(Clock(d.clk, 4, unit="ns").start())
        d.in_valid.value = 0
        d.in_tuple.value = 0
        d.addr_valid.value = 0
        d.indir_wr_valid.value = 0
        d.ctx_wr_valid.value = 0
        d.slot_wr_valid.value = 0
        d.slot_wr_all.value = 0
        d.type_mask.value = 0
        d.rst.value = 1
        await ClockCycles(d.clk, 3)
        d.rst.value = 0
        # Every slot empty (the memories have no reset): one bucket of every bank/way a cycle.
        for b in range(self.buckets):
            await FallingEdge(d.clk)
            d.slot_wr_valid.value = 1
            d.slot_wr_all.value = 1
            d.slot_wr_bucket.value = b
            d.slot_wr_data.value = 0
        await FallingEdge(d.clk)
        d.slot_wr_valid.value = 0
        d.slot_wr_all.value = 0
        # The context tables have no reset either (docs/rss.md 3a): written as the driver does
        # when it creates a context, here with the model's zeros.
        for c in range(1, NUM_CONTEXTS + 1):
            self.set_context(c, self.cfg.contexts[c - 1])
        await self.drain()
        await RisingEdge(d.clk)

    async def configure(self, cfg: RssConfig, num_queues: int,
                        masks: dict[FlowType, TypeMask] | None = None) -> None:
        """Drive the configuration (call with the pipeline empty and no rule of a type whose
        mask changes): ports, and the indirection table as its register writes, a word a
        cycle, as rss_table gives them."""
        assert len(cfg.indir) == self.indir_entries
        d = self.dut
        d.rss_type_en.value = sum(1 << t.ctrl_bit for t in cfg.types)
        d.rss_key.value = int.from_bytes(cfg.key, "big")
        d.num_queues.value = num_queues
        if masks is not None:
            for t, m in masks.items():
                assert m == self.masks[t] or not any(r.ftype == t for r in self.rules.values())
            self.masks = {**self.masks, **masks}
            d.type_mask.value = sum(pack_mask(self.masks[t]) << (56 * int(t)) for t in STEER_TYPES)
        if cfg.contexts != self.cfg.contexts:
            for c in range(1, NUM_CONTEXTS + 1):
                if cfg.contexts[c - 1] != self.cfg.contexts[c - 1]:
                    self.set_context(c, cfg.contexts[c - 1])
            await self.drain()
        if cfg.indir != self.cfg.indir:
            for j in range(self.indir_entries // 4):
                await FallingEdge(d.clk)
                self.cycle += 1
                d.indir_wr_valid.value = 1
                d.indir_wr_word.value = j
                d.indir_wr_data.value = sum(cfg.indir[4 * j + k] << (8 * k) for k in range(4))
            await FallingEdge(d.clk)
            self.cycle += 1
            d.indir_wr_valid.value = 0
        self.cfg, self.num_queues = cfg, num_queues
        # The pipeline is empty: the rule set in force now is classified with the new settings.
        start, end, index, _ = self.versions[-1]
        self.versions[-1] = (start, end, index, cfg)

    def set_context(self, c: int, table: tuple[int, ...]) -> None:
        """Queue the RSS_CTX_INDIR writes of context c's new table (as rss_table gives them:
        word index, data, byte enables), driven one a cycle by `run` or `drain` while traffic
        may flow (a context resized at runtime: each frame sees its entry old or new). Some
        words go in two halves (byte enables), as a 16-bit write would."""
        assert len(table) == self.indir_entries
        contexts = list(self.cfg.contexts)
        contexts[c - 1] = tuple(table)
        cfg = RssConfig(self.cfg.key, self.cfg.types, self.cfg.indir, tuple(contexts))
        words = self.indir_entries // 4
        writes = []
        for j in range(words):
            data = sum(table[4 * j + k] << (8 * k) for k in range(4))
            idx = (c - 1) * words + j
            if j % 7 == 3:
                writes += [("ctx", idx, data, 0b0011), ("ctx", idx, data ^ 0x0000_FFFF, 0b0000),
                           ("ctx", idx, data, 0b1100)]
            else:
                writes.append(("ctx", idx, data, 0b1111))
        self.ops.append(("version", self.rules, cfg))
        self.ops.extend(writes)
        self.ops.append(("done", None, None))
        self.cfg = cfg

    # --- rules ----------------------------------------------------------------------------
    def add(self, loc: int, rule: SteerRule) -> None:
        """Queue the slot writes of adding `rule` at `loc` (driven by `run` or `drain`)."""
        self._change(self.slots.add(loc, rule.key(self.masks), rule_action(rule)),
                     {**self.rules, loc: rule})

    def delete(self, loc: int) -> None:
        rules = dict(self.rules)
        del rules[loc]
        self._change(self.slots.delete(loc), rules)

    def _change(self, ops: list[SlotOp], rules: dict[int, SteerRule]) -> None:
        self.ops.append(("version", rules, self.cfg))
        self.ops.extend(ops)
        self.ops.append(("done", None, None))
        self.rules = rules

    def _drive_op(self) -> None:
        """At a falling edge: the next queued slot write on the port, if any."""
        d = self.dut
        d.slot_wr_valid.value = 0
        d.ctx_wr_valid.value = 0
        while self.ops:
            op = self.ops.popleft()
            if isinstance(op, tuple) and op[0] == "ctx":
                _, idx, data, be = op
                d.ctx_wr_valid.value = 1
                d.ctx_wr_idx.value = idx
                d.ctx_wr_data.value = data
                d.ctx_wr_be.value = be
                self.stats["ctx_writes"] += 1
                return
            if isinstance(op, tuple):
                kind, rules, cfg = op
                if kind == "version":
                    self.versions.append((self.cycle, 10**9, RuleIndex(rules, self.masks), cfg))
                else:
                    start, _, r, cfg = self.versions[-1]
                    self.versions[-1] = (start, self.cycle, r, cfg)
                continue
            d.slot_wr_valid.value = 1
            d.slot_wr_all.value = 0
            d.slot_wr_bank.value = op.bank
            d.slot_wr_way.value = op.way
            d.slot_wr_bucket.value = op.bucket
            d.slot_wr_data.value = pack_slot(op)
            self.stats["slot_writes" if op.entry is not None else "slot_clears"] += 1
            return

    async def drain(self) -> None:
        """Drive every queued slot write (no traffic)."""
        while self.ops:
            await FallingEdge(self.dut.clk)
            self.cycle += 1
            self._drive_op()
        await FallingEdge(self.dut.clk)
        self.cycle += 1
        self.dut.slot_wr_valid.value = 0
        self.dut.ctx_wr_valid.value = 0

    def allowed(self, c: int, t: FlowTuple) -> list:
        """The classifications a tuple driven in cycle `c` may get: those of every rule-set
        version in force at some point of its stages (cycles c .. c+latency)."""
        out = []
        n = len(self.versions)
        for i in range(n - 1, -1, -1):
            start, _, index, cfg = self.versions[i]
            # version i is in force from when its change starts being written until the next
            # change has been written completely
            end = self.versions[i + 1][1] if i + 1 < n else 10**9
            if start <= c + self.latency and end >= c:
                out.append(index.classify(t, cfg, self.num_queues))
            if end < c:
                break
        return out

    # --- traffic ---------------------------------------------------------------------------
    async def run(self, tuples: list[FlowTuple], rng: random.Random, gap_prob: float = 0.0,
                  expect_hash: list[int] | None = None, churn=None) -> list[dict[str, int]]:
        """Send `tuples` (back to back unless gap_prob > 0: every cycle at 512 bits, every
        4th with the addresses 3 cycles ahead up to 128 bits) and check every output cycle.

        At each falling edge the outputs (registered at the last rising edge) are compared
        with what went in exactly `latency` cycles earlier, then the next input and the next
        queued slot write are driven. `churn(tb, rng)`, if given, is called every cycle and
        may queue rule changes. Returns the DUT's results in input order.
        """
        d = self.dut
        history: collections.deque = collections.deque([None] * self.latency)
        staged: collections.deque = collections.deque()     # (cycle of in_valid, entry)
        pending = list(tuples)
        n_in = n_out = 0
        idx = 0
        next_start = self.cycle
        results = []
        while pending or staged or any(h is not None for h in history) or self.ops:
            await FallingEdge(d.clk)
            self.cycle += 1
            exp = history.popleft()
            valid = int(d.out_valid.value)
            if exp is None:
                assert valid == 0, f"out_valid high {self.latency} cycles after an idle input cycle"
            else:
                assert valid == 1, f"out_valid low {self.latency} cycles after input {exp[0]}"
                results.append(self._check(exp))
                n_out += 1
            if churn is not None and pending:
                churn(self, rng)
            self._drive_op()
            d.addr_valid.value = 0
            if pending and self.cycle >= next_start and (gap_prob == 0.0 or rng.random() >= gap_prob):
                t = pending.pop(0)
                # The addresses now (held until the next frame's), the tuple `lead` cycles on.
                d.addr_valid.value = 1
                d.addr_v6.value = int(t.l3_type is L3Type.IPV6)
                d.addr_src.value = t.src_addr
                d.addr_dst.value = t.dst_addr
                staged.append((self.cycle + self.lead,
                               (idx, t, self.cycle + self.lead,
                                None if expect_hash is None else expect_hash[idx])))
                idx += 1
                next_start = self.cycle + self.spacing
            if staged and staged[0][0] == self.cycle:
                _, entry = staged.popleft()
                d.in_tuple.value = pack_tuple(entry[1])
                d.in_valid.value = 1
                history.append(entry)
                n_in += 1
            else:
                d.in_valid.value = 0
                d.in_tuple.value = rng.getrandbits(301)     # garbage while idle
                history.append(None)
        d.slot_wr_valid.value = 0
        d.ctx_wr_valid.value = 0
        assert n_in == n_out == len(tuples)
        return results

    def _check(self, exp) -> dict[str, int]:
        idx, t, cycle, published = exp
        d = self.dut
        got = unpack_class(int(d.out_class.value))
        bad = (int(d.out_steer_bad_queue.value), int(d.out_rss_bad_queue.value))
        options = self.allowed(cycle, t)
        for want in options:
            expected = dict(qid=want.queue, rss_hash=want.rss_hash, rss_type=int(want.rss_type),
                            steered=int(want.steered))
            if got == expected and bad == (int(want.bad_queue and want.steered),
                                           int(want.bad_queue and not want.steered)):
                break
        else:
            raise AssertionError(
                f"input {idx} {t}: RTL {got} bad-queue strobes {bad}, model "
                f"{[(w.queue, w.steered, w.rule, w.bad_queue) for w in options]} "
                f"(num_queues {self.num_queues})")
        if published is not None:
            assert got["rss_hash"] == published, f"input {idx}: hash {got['rss_hash']:#x} != published {published:#x}"
        if len(options) > 1:
            self.stats["during_change"] += 1
        self.stats["steered" if want.steered else ("rss" if want.rss_type else "none")] += 1
        self.stats[f"type{int(want.rss_type)}"] += 1
        if want.bad_queue:
            self.stats["bad_queue"] += 1
        if want.steered and want.rule:
            self.stats["rule>0"] += 1
        ctx = want.context if want.steered else None
        if ctx is not None:
            self.stats["ctx0" if ctx == 0 else ("ctx" if ctx <= NUM_CONTEXTS else "ctx_bad")] += 1
        return got


def random_config(tb: ClassifyTb, rng: random.Random, pool: list[FlowTuple]):
    num_queues = rng.choice([1, 2, 4, 7, 8, 16, 64, 128])
    indir = [rng.randrange(num_queues) if rng.random() < 0.95 else rng.randrange(256)
             for _ in range(tb.indir_entries)]
    types = {t for t in ALL_TYPES if rng.random() < 0.7}
    contexts = list(tb.cfg.contexts)          # two contexts new a phase (each write a cycle)
    for c in rng.sample(range(NUM_CONTEXTS), 2):
        contexts[c] = random_context_table(rng, tb.indir_entries, num_queues)
    cfg = RssConfig(rng.randbytes(40), types, indir, tuple(contexts))
    masks = {t: random_type_mask(rng, t) for t in STEER_TYPES}
    return cfg, masks, num_queues


def random_context_table(rng: random.Random, entries: int, num_queues: int) -> tuple[int, ...]:
    """A context's table: `start S equal N` (ethtool's spelling), or random entries, some of
    them (with the rule's offset) beyond the queues."""
    if rng.random() < 0.6:
        n = rng.randint(1, num_queues)
        start = rng.randrange(num_queues - n + 1)
        return tuple(start + i % n for i in range(entries))
    return tuple(rng.randrange(num_queues) if rng.random() < 0.9 else rng.randrange(256)
                 for _ in range(entries))


def context_churn(pool: list[FlowTuple], nq: int):
    """A churn callback for `ClassifyTb.run`: now and then a context's table rewritten (a
    context resized or moved: `ethtool -X context K start S equal N`) or a rule pointing at a
    context added or deleted, while the tuples stream."""
    def churn(tb: ClassifyTb, rng: random.Random) -> None:
        if tb.ops:
            return
        r = rng.random()
        if r < 0.02:
            tb.set_context(rng.randint(1, NUM_CONTEXTS),
                           random_context_table(rng, tb.indir_entries, nq))
            tb.stats["ctx_resize"] += 1
        elif r < 0.05:
            used = [loc for loc, rule in tb.rules.items() if rule.context is not None]
            if used and rng.random() < 0.5:
                tb.delete(rng.choice(used))
            else:
                base = SteerRule.exact(rng.choice(pool), rng.randrange(4))
                tb.add(rng.randrange(64), SteerRule(**{**base.__dict__,
                                                       "context": rng.randint(0, NUM_CONTEXTS)}))
            tb.stats["ctx_rule_churn"] += 1
    return churn


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
    await tb.configure(RssConfig(MS_KEY, ALL_TYPES, [i % 128 for i in indir], tb.cfg.contexts), 128)
    await tb.run(tuples, random.Random(cocotb.RANDOM_SEED), expect_hash=hashes)


async def clear_rules(tb: ClassifyTb) -> None:
    for loc in sorted(tb.rules):
        tb.delete(loc)
    await tb.drain()


@cocotb.test()
async def run_random_classify(dut) -> None:
    """Random configurations, type masks, rules and flows, back to back; some phases with
    idle gaps, some without rules, some without RSS."""
    rng = random.Random(cocotb.RANDOM_SEED)
    tb = ClassifyTb(dut)
    await tb.start()
    for phase in range(24):
        pool = random_pool(rng)
        cfg, masks, nq = random_config(tb, rng, pool)
        if phase % 8 == 2:
            cfg = RssConfig(cfg.key, ALL_TYPES, cfg.indir, cfg.contexts)
        if phase % 8 == 3:
            cfg = RssConfig(cfg.key, set(), cfg.indir, cfg.contexts)                    # no RSS
        await clear_rules(tb)
        await tb.configure(cfg, nq, masks)
        if phase % 8 != 1:                                                              # RSS only
            for _ in range(rng.randrange(1, 40)):
                tb.add(rng.randrange(64), random_rule(rng, pool, min(nq + 2, 256)))
            await tb.drain()
        tuples = [random_tuple(rng, pool) for _ in range(400)]
        if phase % 4 == 0:
            tuples += tuples_from_frames(rng, 40)
            rng.shuffle(tuples)
        await tb.run(tuples, rng, gap_prob=0.3 if phase % 3 == 2 else 0.0,
                     churn=context_churn(pool, nq) if phase % 3 == 1 else None)
    dut._log.info("classified: %s", dict(tb.stats))
    # The random run must have exercised every outcome, or it proves little.
    for what in ("steered", "rss", "none", "bad_queue", "rule>0", "ctx", "ctx0", "ctx_bad",
                 "ctx_resize", "ctx_rule_churn", *(f"type{t}" for t in range(7))):
        assert tb.stats[what] > 0, f"no {what} outcome in the random run: {dict(tb.stats)}"


def flows_for_table(rng: random.Random, n: int) -> list[FlowTuple]:
    """n distinct flows: random 5-tuples of every flow type, and runs of consecutive ports
    and addresses (structured keys a linear hash must still spread)."""
    out: list[FlowTuple] = []
    base4 = FlowTuple(L3Type.IPV4, L4Type.TCP, False, 6, 0x0A000001, 0x0A000002, 40000, 0)
    base6 = FlowTuple(L3Type.IPV6, L4Type.UDP, False, 17, 0xFD00 << 112, (0xFD00 << 112) | 2, 0, 4791)
    for i in range(n // 4):
        out.append(FlowTuple(**{**base4.__dict__, "dport": i}))                  # ports 0..
        out.append(FlowTuple(**{**base6.__dict__, "sport": 1000 + i}))
    seen = set(out)
    while len(out) < n:
        t = random_tuple(rng, [])
        if t.is_ip and t not in seen:
            seen.add(t)
            out.append(t)
    return out[:n]


@cocotb.test()
async def run_full_table_and_churn(dut) -> None:
    """The table full (rules in 3/4 of the slots, so that keys move, random and structured keys, every
    flow type) against the rules as ethtool defines them; then rules deleted, added and
    replaced while tuples stream back to back: each tuple gets the old or the new answer of
    the change being written, and the exact answer otherwise."""
    rng = random.Random(cocotb.RANDOM_SEED + 2)
    tb = ClassifyTb(dut)
    await tb.start()
    num_rules = tb.buckets * 3            # three quarters of the slots: keys must move
    nq = 8
    masks = {t: full_mask(t) for t in STEER_TYPES}
    masks[FlowType.IP4] = TypeMask(24, 32, 0, 0, 0xFF)                 # a /24 source prefix
    await tb.configure(RssConfig(rng.randbytes(40), ALL_TYPES, [rng.randrange(nq) for _ in range(tb.indir_entries)],
                                  tb.cfg.contexts),
                 nq, masks)
    flows = flows_for_table(rng, num_rules)
    locs = list(range(num_rules))
    rng.shuffle(locs)
    for loc, f in zip(locs, flows):
        tb.add(loc, SteerRule.exact(f, rng.randrange(nq + 1)))         # some bad queues
    await tb.drain()
    assert len(tb.slots.slots) == num_rules
    moves = tb.stats["slot_writes"] - num_rules
    dut._log.info("%d rules in %d slots, %d moves", num_rules, 4 * tb.buckets, moves)
    assert moves > 0, "a table 3/4 full should have needed cuckoo moves"
    probe = [rng.choice(flows) for _ in range(1000)] + [random_tuple(rng, flows) for _ in range(300)]
    rng.shuffle(probe)
    await tb.run(probe, rng)
    assert tb.stats["steered"] >= 800, dict(tb.stats)

    # Churn: deletes, adds (new keys, keys of existing rules at lower and higher locations:
    # the winner changes), replacements at a location.
    taken = set(flows)
    spare = [f for f in flows_for_table(random.Random(rng.random()), 4000) if f not in taken]

    def churn(tb: ClassifyTb, rng: random.Random) -> None:
        if tb.ops or rng.random() < 0.7:
            return
        r = rng.random()
        used = sorted(tb.rules)
        if r < 0.35 and used:
            tb.delete(rng.choice(used))
            tb.stats["churn_delete"] += 1
        elif r < 0.6 and used:
            same = tb.rules[rng.choice(used)]                    # a second rule, same key
            free = [loc for loc in range(num_rules) if loc not in tb.rules]
            if free:
                tb.add(rng.choice(free), SteerRule(**{**same.__dict__, "queue": rng.randrange(nq)}))
                tb.stats["churn_same_key"] += 1
        elif len(tb.rules) < num_rules:
            free = [loc for loc in range(num_rules) if loc not in tb.rules]
            tb.add(rng.choice(free), SteerRule.exact(spare.pop(), rng.randrange(nq)))
            tb.stats["churn_add"] += 1
        else:
            tb.add(rng.choice(used), SteerRule.exact(spare.pop(), rng.randrange(nq)))
            tb.stats["churn_replace"] += 1

    keys = list(flows)
    for _ in range(3):
        probe = [rng.choice(keys) for _ in range(800)] + [rng.choice(spare) for _ in range(200)]
        rng.shuffle(probe)
        await tb.run(probe, rng, churn=churn)
    dut._log.info("full table and churn: %s", dict(tb.stats))
    for what in ("churn_delete", "churn_same_key", "churn_add", "during_change", "bad_queue"):
        assert tb.stats[what] > 0, f"no {what} in the churn run: {dict(tb.stats)}"


@cocotb.test()
async def run_precedence_and_removal(dut) -> None:
    """Steering beats RSS; of two rules with the same key the lowest location wins; removing
    it returns the flow to the other rule and then to RSS; a mask of zeros matches every frame
    of the type and no other (reasoned outcomes, not only the model's)."""
    rng = random.Random(cocotb.RANDOM_SEED + 1)
    tb = ClassifyTb(dut)
    await tb.start()
    flow = FlowTuple(L3Type.IPV4, L4Type.TCP, False, 6, 0x0A000001, 0x0A000002, 40000, 5201)
    udp = FlowTuple(L3Type.IPV4, L4Type.UDP, False, 17, 0x0A000001, 0x0A000002, 40000, 5201)
    cfg = RssConfig(rng.randbytes(40), ALL_TYPES, [3] * tb.indir_entries, tb.cfg.contexts)
    await tb.configure(cfg, 8, {FlowType.TCP4: full_mask(FlowType.TCP4)})
    steps = [(lambda: None, 3, 0),                                               # RSS
             (lambda: tb.add(9, SteerRule.exact(flow, 5)), 5, 1),                # one rule
             (lambda: tb.add(4, SteerRule.exact(flow, 6)), 6, 1),                # lower wins
             (lambda: tb.add(4, SteerRule.exact(flow, 9)), 0, 1),                # bad queue
             (lambda: tb.delete(4), 5, 1),                                       # back to 9
             (lambda: tb.delete(9), 3, 0)]                                       # RSS again
    for change, want_q, want_steered in steps:
        change()
        await tb.drain()
        for got in await tb.run([flow] * 4, rng):
            assert (got["qid"], got["steered"]) == (want_q, want_steered), (tb.rules, got)
    await tb.configure(cfg, 8, {FlowType.TCP4: TypeMask()})                           # masks of zeros
    tb.add(0, SteerRule(FlowType.TCP4, 7))
    await tb.drain()
    other = FlowTuple(L3Type.IPV4, L4Type.TCP, False, 6, 0xC0A80001, 0x01020304, 1, 2)
    got = await tb.run([flow, other, udp], rng)
    assert [(g["qid"], g["steered"]) for g in got] == [(7, 1), (7, 1), (3, 0)], got
    # RSS contexts (docs/rss.md 3a): context 2's table all 5, a rule pointing at it with an
    # offset of 2: queue 7; with offset 3: 8, beyond the 8 queues (queue 0, bad); context 0
    # is the default table (3) plus the offset; context 9 does not exist (queue 0, bad).
    tb.delete(0)
    await tb.drain()
    await tb.configure(cfg, 8, {FlowType.TCP4: full_mask(FlowType.TCP4)})
    tb.set_context(2, (5,) * tb.indir_entries)
    await tb.drain()
    for ctx, offset, want in ((2, 2, (7, 1)), (2, 3, (0, 1)), (0, 1, (4, 1)), (9, 0, (0, 1))):
        tb.add(0, SteerRule(**{**SteerRule.exact(flow, offset).__dict__, "context": ctx}))
        await tb.drain()
        got = (await tb.run([flow], rng))[0]       # the strobes are checked against the model
        assert (got["qid"], got["steered"]) == want[:2], (ctx, offset, got)


# --------------------------------------------------------------------------------------------
# pytest entry point
# --------------------------------------------------------------------------------------------
@pytest.mark.rtl
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("data_w,buckets,indir_entries", [(64, 512, 128), (512, 512, 128),
                                                          (512, 64, 256)])
def test_rx_classify(data_w: int, buckets: int, indir_entries: int) -> None:
    """At 64 bits the hash is sequential (addresses 3 cycles ahead, a frame per 4 cycles), at
    512 bits parallel (a frame per cycle)."""
    run_rtl_test("rx_classify", SOURCES, "tests.rtl.test_rx_classify",
                 {"DATA_W": data_w, "BUCKETS": buckets, "INDIR_ENTRIES": indir_entries},
                 pytest_test_name())
