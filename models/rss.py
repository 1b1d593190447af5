"""Golden model of RSS and flow steering, written from docs/rss.md (never from the RTL).

Three levels, like models/nic_model.py:

- `tuple_from_frame(frame)`: the flow tuple (`nic_pkg::rx_tuple_t`) of a frame, reading the
  offsets the RX parser model (`models.rx_parser.parse_frame`) reports. None for frames that
  have no flow: non-IP frames and frames the parser drops for a lying header.
- `classify(tuple, rss_cfg, rules, num_queues)`: a pure function, the queue a frame goes to,
  with the hash and hash type the completion reports (docs/rss.md sections 2-4).
- `Classifier`: the register state of the RSS and STEER blocks (docs/rss.md section 5) behind
  `mmio_read`/`mmio_write`, plus the two counters, so the NIC model can delegate those
  addresses to it (`handles(addr)` says which) and classify each frame with `classify`.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum

from driver import regs
from models.formats import L3Type, L4Type
from models.rx_parser import DEFAULT_PARSE_BYTES, ParseResult, parse_frame
from models.toeplitz import KEY_BYTES, hash_input, toeplitz_hash

INDIR_ENTRIES = 128
"""Entries of the indirection table (indexed by the hash's low 7 bits)."""
NUM_RULES = regs.STEER_MAX
"""Flow-steering rules of the register map."""



class RssType(IntEnum):
    """Hash types, the completion's `rss_type` byte (`nic_dma_pkg::rss_type_e`)."""

    NONE = 0
    IPV4 = 1
    TCP_IPV4 = 2
    UDP_IPV4 = 3
    IPV6 = 4
    TCP_IPV6 = 5
    UDP_IPV6 = 6

    @property
    def ctrl_bit(self) -> int:
        """Bit of `RSS_CTRL` enabling this type (type t is bit t-1)."""
        if self is RssType.NONE:
            raise ValueError('RssType.NONE has no enable bit')
        return int(self) - 1

    @property
    def four_tuple(self) -> bool:
        return self in (RssType.TCP_IPV4, RssType.UDP_IPV4, RssType.TCP_IPV6, RssType.UDP_IPV6)


ALL_TYPES = frozenset(t for t in RssType if t is not RssType.NONE)


# --------------------------------------------------------------------------------------------
# The flow tuple
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FlowTuple:
    """`nic_pkg::rx_tuple_t` (docs/rss.md section 1).

    Addresses are numbers in network byte order (IPv4 `a.b.c.d` is `0xaabbccdd`). `sport` and
    `dport` are only looked at when `ports_valid`; whatever they hold otherwise is ignored.
    """

    l3_type: L3Type
    l4_type: L4Type = L4Type.NONE
    ip_frag: bool = False
    proto: int = 0
    src_addr: int = 0
    dst_addr: int = 0
    sport: int = 0
    dport: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, 'l3_type', L3Type(self.l3_type))
        object.__setattr__(self, 'l4_type', L4Type(self.l4_type))
        abits = 32 if self.l3_type is L3Type.IPV4 else 128
        for name, value, bits in (('proto', self.proto, 8), ('src_addr', self.src_addr, abits),
                                  ('dst_addr', self.dst_addr, abits), ('sport', self.sport, 16),
                                  ('dport', self.dport, 16)):
            if not 0 <= value < (1 << bits):
                raise ValueError(f'FlowTuple.{name}={value:#x} does not fit {bits} bits')

    @property
    def is_ip(self) -> bool:
        return self.l3_type in (L3Type.IPV4, L3Type.IPV6)

    @property
    def ip_version(self) -> int:
        """4, 6, or 0 for a non-IP frame (what a rule's `ipver` is compared with)."""
        return {L3Type.IPV4: 4, L3Type.IPV6: 6}.get(self.l3_type, 0)

    @property
    def ports_valid(self) -> bool:
        """TCP or UDP and not a fragment: the ports mean something."""
        return self.l4_type in (L4Type.TCP, L4Type.UDP) and not self.ip_frag

    def addr_bytes(self) -> tuple[bytes, bytes]:
        n = 4 if self.l3_type is L3Type.IPV4 else 16
        return self.src_addr.to_bytes(n, 'big'), self.dst_addr.to_bytes(n, 'big')


def _u16(frame: bytes, off: int) -> int:
    return (frame[off] << 8) | frame[off + 1]


def tuple_from_parse(frame: bytes, res: ParseResult) -> FlowTuple | None:
    """The flow tuple of `frame` given its parse result (see `tuple_from_frame`)."""
    if res.hdr_err or not res.is_ip or res.l4_off is None:
        return None
    l3 = res.l3_off
    if res.l3_type is L3Type.IPV4:
        src = int.from_bytes(frame[l3 + 12:l3 + 16], 'big')
        dst = int.from_bytes(frame[l3 + 16:l3 + 20], 'big')
    else:
        src = int.from_bytes(frame[l3 + 8:l3 + 24], 'big')
        dst = int.from_bytes(frame[l3 + 24:l3 + 40], 'big')
    if res.proto is None:
        raise ValueError('the parse result of an IP frame carries no proto')
    sport = dport = 0
    if res.l4_type in (L4Type.TCP, L4Type.UDP) and not res.ip_frag:
        sport = _u16(frame, res.l4_off)
        dport = _u16(frame, res.l4_off + 2)
    return FlowTuple(res.l3_type, res.l4_type, res.ip_frag, res.proto, src, dst, sport, dport)


def tuple_from_frame(frame: bytes, parse_bytes: int = DEFAULT_PARSE_BYTES) -> FlowTuple | None:
    """The flow tuple of `frame` as the parser hands it to the classifier.

    Offsets (`l3_off`, `l4_off`), `l4_type`, `ip_frag` and `proto` (the IPv6 next header after
    the extension headers the parser walks) come from `models.rx_parser.parse_frame`;
    addresses and ports are read at those offsets. None for non-IP frames and for frames with
    a header error (they are dropped).
    """
    frame = bytes(frame)
    return tuple_from_parse(frame, parse_frame(frame, parse_bytes))


# --------------------------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RssConfig:
    """Key, enabled hash types and indirection table (docs/rss.md sections 2 and 3)."""

    key: bytes = bytes(KEY_BYTES)
    types: frozenset[RssType] = frozenset()
    indir: tuple[int, ...] = (0,) * INDIR_ENTRIES

    def __post_init__(self) -> None:
        object.__setattr__(self, 'key', bytes(self.key))
        object.__setattr__(self, 'types', frozenset(RssType(t) for t in self.types))
        object.__setattr__(self, 'indir', tuple(self.indir))
        if len(self.key) != KEY_BYTES:
            raise ValueError(f'RSS key must be {KEY_BYTES} bytes, got {len(self.key)}')
        if RssType.NONE in self.types:
            raise ValueError('RssType.NONE cannot be enabled')
        n = len(self.indir)
        if n == 0 or n & (n - 1):
            raise ValueError(f'indirection table size {n} is not a power of two')
        if any(not 0 <= q <= 0xFF for q in self.indir):
            raise ValueError('indirection entries are 8-bit queue numbers')

    @staticmethod
    def equal(n: int, entries: int = INDIR_ENTRIES) -> tuple[int, ...]:
        """The "equal N" table: entry i is queue i mod n."""
        if n < 1:
            raise ValueError('equal N needs N >= 1')
        return tuple(i % n for i in range(entries))


@dataclass(frozen=True)
class SteerRule:
    """One flow-steering rule (docs/rss.md section 4). Mask bits of 1 must match."""

    queue: int
    enable: bool = True
    ipver: int = 0
    ipver_mask: int = 0
    proto: int = 0
    proto_mask: int = 0
    src_addr: int = 0
    src_mask: int = 0
    dst_addr: int = 0
    dst_mask: int = 0
    sport: int = 0
    sport_mask: int = 0
    dport: int = 0
    dport_mask: int = 0

    _WIDTHS = dict(queue=8, ipver=4, ipver_mask=4, proto=8, proto_mask=8, src_addr=128,
                   src_mask=128, dst_addr=128, dst_mask=128, sport=16, sport_mask=16,
                   dport=16, dport_mask=16)

    def __post_init__(self) -> None:
        for name, bits in self._WIDTHS.items():
            value = getattr(self, name)
            if not 0 <= value < (1 << bits):
                raise ValueError(f'SteerRule.{name}={value:#x} does not fit {bits} bits')

    def matches(self, t: FlowTuple) -> bool:
        """docs/rss.md section 4, "A rule matches a frame when ..."."""
        if not self.enable or not t.is_ip:
            return False
        if (self.sport_mask or self.dport_mask) and not t.ports_valid:
            return False
        return (((t.ip_version ^ self.ipver) & self.ipver_mask) == 0
                and ((t.proto ^ self.proto) & self.proto_mask) == 0
                and ((t.src_addr ^ self.src_addr) & self.src_mask) == 0
                and ((t.dst_addr ^ self.dst_addr) & self.dst_mask) == 0
                and ((t.sport ^ self.sport) & self.sport_mask) == 0
                and ((t.dport ^ self.dport) & self.dport_mask) == 0)

    @classmethod
    def exact(cls, t: FlowTuple, queue: int, with_ports: bool | None = None) -> SteerRule:
        """A rule matching exactly `t`'s version, protocol, addresses and (if valid) ports."""
        if with_ports is None:
            with_ports = t.ports_valid
        pm = 0xFFFF if with_ports else 0
        return cls(queue=queue, ipver=t.ip_version, ipver_mask=0xF, proto=t.proto,
                   proto_mask=0xFF, src_addr=t.src_addr, src_mask=(1 << 128) - 1,
                   dst_addr=t.dst_addr, dst_mask=(1 << 128) - 1,
                   sport=t.sport if with_ports else 0, sport_mask=pm,
                   dport=t.dport if with_ports else 0, dport_mask=pm)


# --------------------------------------------------------------------------------------------
# Classification
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Classification:
    """`nic_pkg::rx_class_t` plus what the counters need.

    `bad_queue`: the rule's (if `steered`) or the table entry's queue number was not below the
    number of queues; `queue` is then 0. `rule`: the winning rule's number, if any.
    """

    queue: int
    rss_hash: int
    rss_type: RssType
    steered: bool
    bad_queue: bool = False
    rule: int | None = None


def hash_type(t: FlowTuple | None, types: Iterable[RssType]) -> RssType:
    """The hash type a frame gets (docs/rss.md section 2, "Which type a frame gets")."""
    if t is None or not t.is_ip:
        return RssType.NONE
    types = frozenset(types)
    if t.l3_type is L3Type.IPV4:
        two, tcp, udp = RssType.IPV4, RssType.TCP_IPV4, RssType.UDP_IPV4
    else:
        two, tcp, udp = RssType.IPV6, RssType.TCP_IPV6, RssType.UDP_IPV6
    if t.ports_valid:
        four = tcp if t.l4_type is L4Type.TCP else udp
        if four in types:
            return four
    return two if two in types else RssType.NONE


def rss_hash(t: FlowTuple, key: bytes, rtype: RssType) -> int:
    """The Toeplitz hash of `t`'s fields for hash type `rtype` (0 for NONE)."""
    if rtype is RssType.NONE:
        return 0
    src, dst = t.addr_bytes()
    if rtype.four_tuple:
        return toeplitz_hash(key, hash_input(src, dst, t.sport, t.dport))
    return toeplitz_hash(key, hash_input(src, dst))


def classify(t: FlowTuple | None, rss_cfg: RssConfig, rules: Sequence[SteerRule | None],
             num_queues: int) -> Classification:
    """The queue, hash and hash type of a frame with flow tuple `t` (None: no flow).

    `rules[i]` is rule number i (None or disabled: not considered); the lowest-numbered
    matching rule wins over RSS. `num_queues` is the number of RX queues.
    """
    if t is None or not t.is_ip:
        return Classification(0, 0, RssType.NONE, False)
    rtype = hash_type(t, rss_cfg.types)
    h = rss_hash(t, rss_cfg.key, rtype)
    for i, rule in enumerate(rules):
        if rule is not None and rule.matches(t):
            bad = rule.queue >= min(num_queues, 128)
            return Classification(0 if bad else rule.queue, h, rtype, True, bad, i)
    if rtype is RssType.NONE:
        return Classification(0, 0, RssType.NONE, False)
    q = rss_cfg.indir[h & (len(rss_cfg.indir) - 1)]
    bad = q >= min(num_queues, 128)      # the completion's queue field has 7 bits
    return Classification(0 if bad else q, h, rtype, False, bad)


# --------------------------------------------------------------------------------------------
# Register view
# --------------------------------------------------------------------------------------------
def _reg_mask(*fields: regs.Field) -> int:
    m = 0
    for f in fields:
        m |= f.mask
    return m


_CTRL_MASK = _reg_mask(regs.RSS_CTRL_IPV4, regs.RSS_CTRL_TCP_IPV4, regs.RSS_CTRL_UDP_IPV4,
                       regs.RSS_CTRL_IPV6, regs.RSS_CTRL_TCP_IPV6, regs.RSS_CTRL_UDP_IPV6)
_STEER_MASKS = {
    regs.STEER_CTRL: _reg_mask(regs.STEER_CTRL_ENABLE, regs.STEER_CTRL_IPVER,
                               regs.STEER_CTRL_IPVER_MASK, regs.STEER_CTRL_PROTO,
                               regs.STEER_CTRL_PROTO_MASK),
    regs.STEER_QUEUE: regs.STEER_QUEUE_QUEUE.mask,
    regs.STEER_PORTS: _reg_mask(regs.STEER_PORTS_SPORT, regs.STEER_PORTS_DPORT),
    regs.STEER_PORT_MASK: _reg_mask(regs.STEER_PORT_MASK_SPORT_MASK,
                                    regs.STEER_PORT_MASK_DPORT_MASK),
}
for _base, _n in ((regs.STEER_SRC_ADDR, regs.STEER_SRC_ADDR_MAX),
                  (regs.STEER_SRC_MASK, regs.STEER_SRC_MASK_MAX),
                  (regs.STEER_DST_ADDR, regs.STEER_DST_ADDR_MAX),
                  (regs.STEER_DST_MASK, regs.STEER_DST_MASK_MAX)):
    for _w in range(_n):
        _STEER_MASKS[_base + 4 * _w] = 0xFFFF_FFFF

COUNTER_NAMES = ('RX_STEER_BAD_QUEUE', 'RX_RSS_BAD_QUEUE')
"""The counters this block owns, named as in `driver.regs`."""

_INDIR_FIELDS = (regs.RSS_INDIR_ENTRY0, regs.RSS_INDIR_ENTRY1, regs.RSS_INDIR_ENTRY2,
                 regs.RSS_INDIR_ENTRY3)


def _words_to_int(words: Sequence[int]) -> int:
    """Register words w = 0..3 (word 0 least significant) to a 128-bit number."""
    return sum(w << (32 * i) for i, w in enumerate(words))


class Classifier:
    """RSS_CTRL, RSS_KEY, RSS_INDIR, STEER and their counters, as the driver sees them.

    Register behaviour (docs/registers.md): every field is RW with reset 0, bits outside the
    fields read 0, unmapped offsets inside a rule read 0 and ignore writes; the counters are
    read-only 32-bit counters. `classify(t)` classifies with the current register contents
    and counts `RX_STEER_BAD_QUEUE` / `RX_RSS_BAD_QUEUE`. `num_queues` is the number of RX
    queues (`CAPS.num_rxq`) that queue numbers are checked against.
    """

    def __init__(self, num_queues: int = 1) -> None:
        if not 1 <= num_queues <= 128:
            raise ValueError(f'num_queues={num_queues} out of range 1..128')
        self.num_queues = num_queues
        self._regs: dict[int, int] = {}
        self.counters: dict[str, int] = {}
        self._cache: tuple[RssConfig, list[SteerRule]] | None = None
        self.reset()

    def reset(self) -> None:
        """Registers and counters to their reset values (all zero)."""
        self._regs = {}
        self.counters = {name: 0 for name in COUNTER_NAMES}
        self._cache = None

    # --- address decoding -------------------------------------------------------------------
    @staticmethod
    def _mask_of(addr: int) -> int | None:
        """Implemented bits of the RW register at `addr`, or None if `addr` is not one."""
        if addr == regs.RSS_CTRL:
            return _CTRL_MASK
        if regs.RSS_KEY_BASE <= addr < regs.RSS_KEY_BASE + regs.RSS_KEY_MAX * regs.RSS_KEY_STRIDE:
            return 0xFFFF_FFFF if (addr - regs.RSS_KEY_BASE) % regs.RSS_KEY_STRIDE == 0 else None
        if (regs.RSS_INDIR_BASE <= addr
                < regs.RSS_INDIR_BASE + regs.RSS_INDIR_MAX * regs.RSS_INDIR_STRIDE):
            return 0xFFFF_FFFF if (addr - regs.RSS_INDIR_BASE) % regs.RSS_INDIR_STRIDE == 0 else None
        if regs.STEER_BASE <= addr < regs.STEER_BASE + regs.STEER_MAX * regs.STEER_STRIDE:
            return _STEER_MASKS.get((addr - regs.STEER_BASE) % regs.STEER_STRIDE)
        return None

    @staticmethod
    def handles(addr: int) -> bool:
        """True for every address of the RSS, STEER and counter registers of this block."""
        return (addr in (regs.RX_STEER_BAD_QUEUE, regs.RX_RSS_BAD_QUEUE, regs.RSS_CTRL)
                or regs.RSS_KEY_BASE <= addr < regs.RSS_KEY_BASE + regs.RSS_KEY_MAX * 4
                or regs.RSS_INDIR_BASE <= addr < regs.RSS_INDIR_BASE + regs.RSS_INDIR_MAX * 4
                or regs.STEER_BASE <= addr < regs.STEER_BASE + regs.STEER_MAX * regs.STEER_STRIDE)

    @staticmethod
    def _check(addr: int, value: int | None = None) -> None:
        if addr < 0 or addr % 4:
            raise ValueError(f'MMIO address 0x{addr:x} is not a 32-bit register address')
        if value is not None and not 0 <= value <= 0xFFFF_FFFF:
            raise ValueError(f'MMIO value {value} does not fit 32 bits')

    def mmio_read(self, addr: int) -> int | None:
        """The register at `addr`, or None if `addr` is not one of this block's."""
        self._check(addr)
        if not self.handles(addr):
            return None
        if addr == regs.RX_STEER_BAD_QUEUE:
            return self.counters['RX_STEER_BAD_QUEUE'] & 0xFFFF_FFFF
        if addr == regs.RX_RSS_BAD_QUEUE:
            return self.counters['RX_RSS_BAD_QUEUE'] & 0xFFFF_FFFF
        if self._mask_of(addr) is None:
            return 0
        return self._regs.get(addr, 0)

    def mmio_write(self, addr: int, value: int) -> bool:
        """Write the register at `addr`; False (nothing done) if it is not this block's.

        Read-only counters and unmapped offsets inside the block ignore the write (True)."""
        self._check(addr, value)
        if not self.handles(addr):
            return False
        mask = self._mask_of(addr)
        if mask is not None:
            self._regs[addr] = value & mask
            self._cache = None
        return True

    # --- configuration views ------------------------------------------------------------------
    def _reg(self, addr: int) -> int:
        return self._regs.get(addr, 0)

    def _build(self) -> tuple[RssConfig, list[SteerRule]]:
        ctrl = self._reg(regs.RSS_CTRL)
        types = frozenset(t for t in ALL_TYPES if (ctrl >> t.ctrl_bit) & 1)
        key = b''.join(self._reg(regs.rss_key_reg(i)).to_bytes(4, 'big')
                       for i in range(regs.RSS_KEY_MAX))
        indir = []
        for j in range(regs.RSS_INDIR_MAX):
            word = self._reg(regs.rss_indir_reg(j))
            indir += [f.get(word) for f in _INDIR_FIELDS]
        rules = []
        for r in range(regs.STEER_MAX):
            def reg(off: int, r: int = r) -> int:
                return self._reg(regs.steer_reg(r, off))

            def words(base: int) -> int:
                return _words_to_int([reg(base + 4 * w) for w in range(4)])

            ctrl_r, ports, pmask = reg(regs.STEER_CTRL), reg(regs.STEER_PORTS), reg(regs.STEER_PORT_MASK)
            rules.append(SteerRule(
                queue=regs.STEER_QUEUE_QUEUE.get(reg(regs.STEER_QUEUE)),
                enable=bool(regs.STEER_CTRL_ENABLE.get(ctrl_r)),
                ipver=regs.STEER_CTRL_IPVER.get(ctrl_r),
                ipver_mask=regs.STEER_CTRL_IPVER_MASK.get(ctrl_r),
                proto=regs.STEER_CTRL_PROTO.get(ctrl_r),
                proto_mask=regs.STEER_CTRL_PROTO_MASK.get(ctrl_r),
                src_addr=words(regs.STEER_SRC_ADDR), src_mask=words(regs.STEER_SRC_MASK),
                dst_addr=words(regs.STEER_DST_ADDR), dst_mask=words(regs.STEER_DST_MASK),
                sport=regs.STEER_PORTS_SPORT.get(ports), dport=regs.STEER_PORTS_DPORT.get(ports),
                sport_mask=regs.STEER_PORT_MASK_SPORT_MASK.get(pmask),
                dport_mask=regs.STEER_PORT_MASK_DPORT_MASK.get(pmask)))
        return RssConfig(key, types, tuple(indir)), rules

    @property
    def rss_config(self) -> RssConfig:
        if self._cache is None:
            self._cache = self._build()
        return self._cache[0]

    @property
    def rules(self) -> list[SteerRule]:
        if self._cache is None:
            self._cache = self._build()
        return list(self._cache[1])

    # --- classification -----------------------------------------------------------------------
    def classify(self, t: FlowTuple | None, num_queues: int | None = None) -> Classification:
        """Classify a frame with the current registers, counting bad queue numbers.

        `num_queues` overrides the number of RX queues given at construction."""
        if self._cache is None:
            self._cache = self._build()
        c = classify(t, self._cache[0], self._cache[1],
                     self.num_queues if num_queues is None else num_queues)
        if c.bad_queue:
            self.counters['RX_STEER_BAD_QUEUE' if c.steered else 'RX_RSS_BAD_QUEUE'] += 1
        return c

    def classify_frame(self, frame: bytes, parse: ParseResult | None = None,
                       num_queues: int | None = None) -> Classification:
        """Classify `frame`; `parse` is its parse result if the caller has it (else the
        frame is parsed with the default window). Matches `models.nic_model.Classifier`."""
        frame = bytes(frame)
        if parse is None:
            parse = parse_frame(frame)
        return self.classify(tuple_from_parse(frame, parse), num_queues)
