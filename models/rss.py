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

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum

from driver import regs
from models.formats import L3Type, L4Type
from models.rx_parser import DEFAULT_PARSE_BYTES, ParseResult, parse_frame
from models.toeplitz import KEY_BYTES, hash_input, toeplitz_hash

INDIR_ENTRIES = 128
"""Entries of the indirection table (indexed by the hash's low 7 bits)."""
NUM_RULES = 1024
"""Flow-steering rule locations of the hardware (`STEER_CAPS.rules`)."""
STEER_BUCKETS = 512
"""Buckets per bank of the hardware table (`STEER_CAPS.bucket_log2` = 9)."""
NUM_CONTEXTS = 8
"""RSS contexts besides the default (`RSS_CTX_CAPS.contexts`): contexts 1..8 (docs/rss.md 3a)."""
MAX_QUEUES = 128
"""The completion's queue field has 7 bits."""



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
    """Key, enabled hash types, indirection table (docs/rss.md sections 2 and 3) and the
    tables of the RSS contexts: `contexts[c - 1]` is context c's (section 3a; contexts share
    the key and the hash types)."""

    key: bytes = bytes(KEY_BYTES)
    types: frozenset[RssType] = frozenset()
    indir: tuple[int, ...] = (0,) * INDIR_ENTRIES
    contexts: tuple[tuple[int, ...], ...] = ((0,) * INDIR_ENTRIES,) * NUM_CONTEXTS

    def __post_init__(self) -> None:
        object.__setattr__(self, 'key', bytes(self.key))
        object.__setattr__(self, 'types', frozenset(RssType(t) for t in self.types))
        object.__setattr__(self, 'indir', tuple(self.indir))
        object.__setattr__(self, 'contexts', tuple(tuple(c) for c in self.contexts))
        if len(self.key) != KEY_BYTES:
            raise ValueError(f'RSS key must be {KEY_BYTES} bytes, got {len(self.key)}')
        if RssType.NONE in self.types:
            raise ValueError('RssType.NONE cannot be enabled')
        n = len(self.indir)
        if n == 0 or n & (n - 1):
            raise ValueError(f'indirection table size {n} is not a power of two')
        if any(not 0 <= q <= 0xFF for q in self.indir):
            raise ValueError('indirection entries are 8-bit queue numbers')
        for c, table in enumerate(self.contexts, 1):
            if len(table) != n or any(not 0 <= q <= 0xFF for q in table):
                raise ValueError(f'context {c}: {n} 8-bit queue numbers, as the default table')

    def table(self, ctx: int) -> tuple[int, ...] | None:
        """The indirection table of RSS context `ctx` (0: the default), None if it has none."""
        if ctx == 0:
            return self.indir
        return self.contexts[ctx - 1] if 1 <= ctx <= len(self.contexts) else None

    @staticmethod
    def equal(n: int, entries: int = INDIR_ENTRIES) -> tuple[int, ...]:
        """The "equal N" table: entry i is queue i mod n."""
        if n < 1:
            raise ValueError('equal N needs N >= 1')
        return tuple(i % n for i in range(entries))


class FlowType(IntEnum):
    """The flow type of a frame or a rule (docs/rss.md section 4, "Flow types")."""

    NONE = 0
    TCP4 = 1
    UDP4 = 2
    IP4 = 3
    TCP6 = 4
    UDP6 = 5
    IP6 = 6

    @property
    def ipv6(self) -> bool:
        return self in (FlowType.TCP6, FlowType.UDP6, FlowType.IP6)

    @property
    def has_ports(self) -> bool:
        return self in (FlowType.TCP4, FlowType.UDP4, FlowType.TCP6, FlowType.UDP6)

    @property
    def addr_bits(self) -> int:
        return 128 if self.ipv6 else 32

    @property
    def ethtool_name(self) -> str:
        return self.name.lower()


STEER_TYPES = tuple(t for t in FlowType if t is not FlowType.NONE)


def flow_type(t: FlowTuple | None) -> FlowType:
    """The flow type of a frame: its IP version and protocol (TCP 6, UDP 17, other)."""
    if t is None or not t.is_ip:
        return FlowType.NONE
    base = {6: FlowType.TCP4, 17: FlowType.UDP4}.get(t.proto, FlowType.IP4)
    return FlowType(base + 3) if t.l3_type is L3Type.IPV6 else base


def prefix_mask(length: int, bits: int) -> int:
    """The first `length` bits of a `bits`-bit address (a length above `bits` acts as `bits`)."""
    n = min(length, bits)
    return ((1 << n) - 1) << (bits - n)


@dataclass(frozen=True)
class TypeMask:
    """`STEER_TYPE[t]`: the mask every rule of one flow type is compared with."""

    src_len: int = 0
    dst_len: int = 0
    sport_mask: int = 0
    dport_mask: int = 0
    proto_mask: int = 0

    _WIDTHS = dict(src_len=8, dst_len=8, sport_mask=16, dport_mask=16, proto_mask=8)

    def __post_init__(self) -> None:
        for name, bits in self._WIDTHS.items():
            value = getattr(self, name)
            if not 0 <= value < (1 << bits):
                raise ValueError(f'TypeMask.{name}={value:#x} does not fit {bits} bits')


NO_MASKS: dict[FlowType, TypeMask] = {t: TypeMask() for t in STEER_TYPES}
"""Every type mask 0, as after reset."""

KEY_BYTES_STEER = 38
"""Length of a steering key (docs/rss.md section 4)."""


def make_key(ftype: FlowType, proto: int, src: int, dst: int, sport: int, dport: int) -> bytes:
    """The 38-byte key: type, proto, src, dst (16 bytes each), sport, dport."""
    return (bytes([int(ftype), proto]) + src.to_bytes(16, 'big') + dst.to_bytes(16, 'big')
            + sport.to_bytes(2, 'big') + dport.to_bytes(2, 'big'))


def frame_key(t: FlowTuple | None, masks: Mapping[FlowType, TypeMask]) -> bytes | None:
    """The key of a frame under the type masks, or None when no rule can match it (not IP,
    or a TCP/UDP type with port masks and a frame without valid ports)."""
    ft = flow_type(t)
    if ft is FlowType.NONE:
        return None
    assert t is not None
    m = masks.get(ft, TypeMask())
    src = t.src_addr & prefix_mask(m.src_len, ft.addr_bits)
    dst = t.dst_addr & prefix_mask(m.dst_len, ft.addr_bits)
    if not ft.has_ports:
        return make_key(ft, t.proto & m.proto_mask, src, dst, 0, 0)
    if not t.ports_valid:
        if m.sport_mask or m.dport_mask:
            return None
        return make_key(ft, 0, src, dst, 0, 0)
    return make_key(ft, 0, src, dst, t.sport & m.sport_mask, t.dport & m.dport_mask)


@dataclass(frozen=True)
class SteerRule:
    """One flow-steering rule (docs/rss.md section 4): its flow type, match values and queue.

    `context` None: the frames go to `queue`. `context` K (ethtool `context K`, FLOW_RSS):
    they go to the queue RSS context K's table gives plus `queue` (section 3a; K = 0 is the
    default table).

    The values are compared under the type's `TypeMask`, so the same rule matches more or
    less depending on the mask (the driver keeps one mask per type). Values that do not apply
    to the type (ports for ip4/ip6, proto for the TCP/UDP types) must be 0.
    """

    ftype: FlowType
    queue: int
    proto: int = 0
    src_addr: int = 0
    dst_addr: int = 0
    sport: int = 0
    dport: int = 0
    context: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, 'ftype', FlowType(self.ftype))
        if self.context is not None and not 0 <= self.context <= 15:
            raise ValueError(f'SteerRule.context={self.context} does not fit 4 bits')
        if self.ftype is FlowType.NONE:
            raise ValueError('a steering rule needs a flow type')
        abits = self.ftype.addr_bits
        for name, value, bits in (('queue', self.queue, 8), ('proto', self.proto, 8),
                                  ('src_addr', self.src_addr, abits),
                                  ('dst_addr', self.dst_addr, abits),
                                  ('sport', self.sport, 16), ('dport', self.dport, 16)):
            if not 0 <= value < (1 << bits):
                raise ValueError(f'SteerRule.{name}={value:#x} does not fit {bits} bits')
        if self.ftype.has_ports and self.proto:
            raise ValueError(f'a {self.ftype.ethtool_name} rule has no proto (the type is it)')
        if not self.ftype.has_ports and (self.sport or self.dport):
            raise ValueError(f'a {self.ftype.ethtool_name} rule has no ports')

    def key(self, masks: Mapping[FlowType, TypeMask]) -> bytes:
        """The rule's key: its values under its type's mask."""
        m = masks.get(self.ftype, TypeMask())
        ft = self.ftype
        return make_key(ft, self.proto & m.proto_mask if not ft.has_ports else 0,
                        self.src_addr & prefix_mask(m.src_len, ft.addr_bits),
                        self.dst_addr & prefix_mask(m.dst_len, ft.addr_bits),
                        self.sport & m.sport_mask if ft.has_ports else 0,
                        self.dport & m.dport_mask if ft.has_ports else 0)

    def matches(self, t: FlowTuple, masks: Mapping[FlowType, TypeMask]) -> bool:
        """docs/rss.md section 4, "A rule matches a frame when ..."."""
        k = frame_key(t, masks)
        return k is not None and k == self.key(masks)

    @classmethod
    def exact(cls, t: FlowTuple, queue: int) -> SteerRule:
        """A rule with all of `t`'s fields its flow type has (under full masks: exact)."""
        ft = flow_type(t)
        ports = ft.has_ports and t.ports_valid
        return cls(ft, queue, proto=0 if ft.has_ports else t.proto, src_addr=t.src_addr,
                   dst_addr=t.dst_addr, sport=t.sport if ports else 0,
                   dport=t.dport if ports else 0)


def full_mask(ftype: FlowType, ports: bool = True) -> TypeMask:
    """The mask comparing every field of `ftype` (ports only if `ports`)."""
    ftype = FlowType(ftype)
    bits = ftype.addr_bits
    if ftype.has_ports:
        pm = 0xFFFF if ports else 0
        return TypeMask(bits, bits, pm, pm, 0)
    return TypeMask(bits, bits, 0, 0, 0xFF)


# --------------------------------------------------------------------------------------------
# The hash table of the hardware (docs/rss.md section 4, "The table")
# --------------------------------------------------------------------------------------------
CRC32C_POLY = 0x1EDC6F41
STEER_BANKS = 2
STEER_WAYS = 2


def key_crc_bitwise(key: bytes) -> int:
    """CRC-32C of the key bits, most significant bit of byte 0 first, initial value 0, no
    reflection and no final XOR: the bit-serial definition of docs/rss.md."""
    crc = 0
    for byte in key:
        for i in range(7, -1, -1):
            top = (crc >> 31) & 1
            crc = (crc << 1) & 0xFFFF_FFFF
            if top ^ ((byte >> i) & 1):
                crc ^= CRC32C_POLY
    return crc


def _crc_table() -> list[int]:
    table = []
    for b in range(256):
        crc = b << 24
        for _ in range(8):
            crc = ((crc << 1) ^ CRC32C_POLY if crc & 0x8000_0000 else crc << 1) & 0xFFFF_FFFF
        table.append(crc)
    return table


_CRC_TABLE = _crc_table()


def key_crc(key: bytes) -> int:
    """`key_crc_bitwise`, a byte at a time (the same function; tests/model/test_rss.py)."""
    crc = 0
    for byte in key:
        crc = ((crc << 8) & 0xFFFF_FFFF) ^ _CRC_TABLE[(crc >> 24) ^ byte]
    return crc


def buckets_of(key: bytes, buckets: int) -> tuple[int, int]:
    """(h0, h1): the key's bucket in bank 0 and in bank 1."""
    crc = key_crc(key)
    return crc % buckets, (crc >> 16) % buckets


@dataclass(frozen=True)
class Slot:
    """One slot of the table: the key, the queue, the rule's location and its RSS context
    (None: the queue is the queue; K: the queue is an offset into context K, section 3a)."""

    key: bytes
    queue: int
    loc: int
    ctx: int | None = None


class SteerTable:
    """The slots of the hardware table and its lookup (two banks of `buckets` buckets of
    `STEER_WAYS` slots). `slots[bank][bucket][way]` is a `Slot` or None (invalid)."""

    def __init__(self, buckets: int) -> None:
        if buckets < 1 or buckets & (buckets - 1) or buckets > 1 << 16:
            raise ValueError(f'buckets={buckets}: a power of two up to 65536')
        self.buckets = buckets
        self.slots: list[list[list[Slot | None]]] = [
            [[None] * STEER_WAYS for _ in range(buckets)] for _ in range(STEER_BANKS)]

    def write(self, bank: int, bucket: int, way: int, slot: Slot | None) -> None:
        self.slots[bank][bucket][way] = slot

    def lookup(self, key: bytes | None) -> Slot | None:
        """The first hit among the slots of the key's two buckets, in the order bank 0 way 0,
        bank 0 way 1, bank 1 way 0, bank 1 way 1."""
        if key is None:
            return None
        h = buckets_of(key, self.buckets)
        return next((s for bank in range(STEER_BANKS) for s in self.slots[bank][h[bank]]
                     if s is not None and s.key == key), None)

    def valid_slots(self) -> list[tuple[int, int, int, Slot]]:
        return [(b, k, w, s) for b in range(STEER_BANKS) for k in range(self.buckets)
                for w, s in enumerate(self.slots[b][k]) if s is not None]


# --------------------------------------------------------------------------------------------
# Classification
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Classification:
    """`nic_pkg::rx_class_t` plus what the counters need.

    `bad_queue`: the rule's (if `steered`) or the table entry's queue number was not below the
    number of queues; `queue` is then 0. `rule`: the winning rule's number, if any; `context`:
    its RSS context, if it has one.
    """

    queue: int
    rss_hash: int
    rss_type: RssType
    steered: bool
    bad_queue: bool = False
    rule: int | None = None
    context: int | None = None


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
             num_queues: int, masks: Mapping[FlowType, TypeMask] = NO_MASKS) -> Classification:
    """The queue, hash and hash type of a frame with flow tuple `t` (None: no flow).

    `rules[i]` is the rule at location i (None: no rule); `masks` the type masks. The lowest
    located matching rule wins over RSS (docs/rss.md sections 2-4, no hash table involved).
    `num_queues` is the number of RX queues.
    """
    return RuleIndex(rules, masks).classify(t, rss_cfg, num_queues)


class RuleIndex:
    """`classify` for many frames under one rule set: the rules by key, lowest location
    first (the same semantics, without a pass over every rule per frame)."""

    def __init__(self, rules: Sequence[SteerRule | None] | Mapping[int, SteerRule],
                 masks: Mapping[FlowType, TypeMask] = NO_MASKS) -> None:
        items = rules.items() if isinstance(rules, Mapping) else enumerate(rules)
        self.masks = dict(masks)
        self.by_key: dict[bytes, tuple[int, SteerRule]] = {}
        for loc, rule in sorted(items, key=lambda kv: kv[0], reverse=True):
            if rule is not None:
                self.by_key[rule.key(self.masks)] = (loc, rule)     # the lowest loc last

    def classify(self, t: FlowTuple | None, rss_cfg: RssConfig, num_queues: int) -> Classification:
        if t is None or not t.is_ip:
            return Classification(0, 0, RssType.NONE, False)
        rtype = hash_type(t, rss_cfg.types)
        h = rss_hash(t, rss_cfg.key, rtype)
        key = frame_key(t, self.masks)
        hit = self.by_key.get(key) if key is not None else None
        if hit is not None:
            return steered(hit[1].queue, hit[0], h, rtype, num_queues, hit[1].context, rss_cfg)
        return by_rss(t, rss_cfg, h, rtype, num_queues)


def steered(queue: int, loc: int, h: int, rtype: RssType, num_queues: int,
            ctx: int | None = None, rss_cfg: RssConfig | None = None) -> Classification:
    """The classification of a frame a rule at `loc` sends to `queue` or, with RSS context
    `ctx`, to entry `h mod 128` of that context's table (in `rss_cfg`) plus `queue`
    (docs/rss.md section 3a; a context the NIC does not have is a bad queue)."""
    q: int | None = queue
    if ctx is not None:
        table = (rss_cfg or RssConfig()).table(ctx)
        q = None if table is None else table[h & (len(table) - 1)] + queue
    bad = q is None or q >= min(num_queues, MAX_QUEUES)
    return Classification(0 if bad or q is None else q, h, rtype, True, bad, loc, ctx)


def by_rss(t: FlowTuple, rss_cfg: RssConfig, h: int, rtype: RssType,
           num_queues: int) -> Classification:
    """The classification of an IP frame no rule matched (section 3)."""
    if rtype is RssType.NONE:
        return Classification(0, 0, RssType.NONE, False)
    q = rss_cfg.indir[h & (len(rss_cfg.indir) - 1)]
    bad = q >= min(num_queues, 128)
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
_STEER_RW: dict[int, int] = {
    regs.STEER_ENTRY_CTRL: _reg_mask(regs.STEER_ENTRY_CTRL_FTYPE, regs.STEER_ENTRY_CTRL_PROTO),
    regs.STEER_ENTRY_ACTION: _reg_mask(regs.STEER_ENTRY_ACTION_QUEUE, regs.STEER_ENTRY_ACTION_CTX,
                                       regs.STEER_ENTRY_ACTION_CTX_EN, regs.STEER_ENTRY_ACTION_LOC),
    regs.STEER_ENTRY_PORTS: _reg_mask(regs.STEER_ENTRY_PORTS_SPORT, regs.STEER_ENTRY_PORTS_DPORT),
}
for _w in range(regs.STEER_ENTRY_SRC_MAX):
    _STEER_RW[regs.steer_entry_src_reg(_w)] = 0xFFFF_FFFF
    _STEER_RW[regs.steer_entry_dst_reg(_w)] = 0xFFFF_FFFF
for _t in range(regs.STEER_TYPE_MAX):
    _STEER_RW[regs.steer_type_reg(_t, regs.STEER_TYPE_MASK)] = _reg_mask(
        regs.STEER_TYPE_MASK_SRC_LEN, regs.STEER_TYPE_MASK_DST_LEN, regs.STEER_TYPE_MASK_PROTO_MASK)
    _STEER_RW[regs.steer_type_reg(_t, regs.STEER_TYPE_PORT_MASK)] = _reg_mask(
        regs.STEER_TYPE_PORT_MASK_SPORT_MASK, regs.STEER_TYPE_PORT_MASK_DPORT_MASK)
STEER_BLOCK_BYTES = 0x100
"""The STEER block's address window (registers above the last read 0)."""
SLOT_WRITE, SLOT_CLEAR, SLOT_CLEAR_ALL = 1, 2, 3
"""`STEER_SLOT_CMD.op` (the model clears every slot at once, so `STEER_STATUS.busy` reads 0)."""

COUNTER_NAMES = ('RX_STEER_BAD_QUEUE', 'RX_RSS_BAD_QUEUE')
"""The counters this block owns, named as in `driver.regs`."""

_INDIR_FIELDS = (regs.RSS_INDIR_ENTRY0, regs.RSS_INDIR_ENTRY1, regs.RSS_INDIR_ENTRY2,
                 regs.RSS_INDIR_ENTRY3)
CTX_WORDS = INDIR_ENTRIES // 4
"""RSS_CTX_INDIR words per context: context c's word j is RSS_CTX_INDIR[CTX_WORDS (c-1) + j]."""
_CTX_END = regs.RSS_CTX_INDIR_BASE + regs.RSS_CTX_INDIR_MAX * regs.RSS_CTX_INDIR_STRIDE


def _words_to_int(words: Sequence[int]) -> int:
    """Register words w = 0..3 (word 0 least significant) to a 128-bit number."""
    return sum(w << (32 * i) for i, w in enumerate(words))


class Classifier:
    """RSS_CTRL, RSS_KEY, RSS_INDIR, the STEER block and their counters, as the driver sees
    them, with the slots of the steering table (`table`).

    Register behaviour (docs/registers.md, docs/rss.md section 5): every field is RW with reset
    0, bits outside the fields read 0, unmapped offsets inside the blocks read 0 and ignore
    writes; `STEER_CAPS` is read-only; `STEER_SLOT_CMD` reads 0 and a write of it writes the
    staged entry into a slot (op 1) or clears it (op 2); the counters are read-only 32-bit
    counters. `classify(t)` classifies with the current registers and slots, as the hardware
    does, and counts `RX_STEER_BAD_QUEUE` / `RX_RSS_BAD_QUEUE`. `num_queues` is the number of
    RX queues (`CAPS.num_rxq`) that queue numbers are checked against.
    """

    def __init__(self, num_queues: int = 1, num_rules: int = NUM_RULES,
                 buckets: int = STEER_BUCKETS) -> None:
        if not 1 <= num_queues <= 128:
            raise ValueError(f'num_queues={num_queues} out of range 1..128')
        self.num_queues = num_queues
        self.num_rules = num_rules
        self.buckets = buckets
        self._regs: dict[int, int] = {}
        self._ctx_words: list[int] = []
        self.counters: dict[str, int] = {}
        self.table = SteerTable(buckets)
        self._cache: tuple[RssConfig, dict[FlowType, TypeMask]] | None = None
        self.reset()

    def reset(self) -> None:
        """Registers, slots and counters to their reset values (all zero, every slot empty)."""
        self._regs = {}
        self._ctx_words = [0] * regs.RSS_CTX_INDIR_MAX   # RSS_CTX_INDIR (write-only; the RTL
        #                                                  leaves them undefined until written)
        self.counters = {name: 0 for name in COUNTER_NAMES}
        self.table = SteerTable(self.buckets)
        self._cache = None

    @property
    def caps(self) -> int:
        return (regs.STEER_CAPS_RULES.put(self.num_rules)
                | regs.STEER_CAPS_BUCKET_LOG2.put(self.buckets.bit_length() - 1)
                | regs.STEER_CAPS_WAYS.put(STEER_WAYS) | regs.STEER_CAPS_BANKS.put(STEER_BANKS))

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
        return _STEER_RW.get(addr)

    @staticmethod
    def handles(addr: int) -> bool:
        """True for every address of the RSS, STEER and counter registers of this block."""
        return (addr in (regs.RX_STEER_BAD_QUEUE, regs.RX_RSS_BAD_QUEUE, regs.RSS_CTRL,
                         regs.RSS_CTX_CAPS)
                or regs.RSS_CTX_INDIR_BASE <= addr < _CTX_END
                or regs.RSS_KEY_BASE <= addr < regs.RSS_KEY_BASE + regs.RSS_KEY_MAX * 4
                or regs.RSS_INDIR_BASE <= addr < regs.RSS_INDIR_BASE + regs.RSS_INDIR_MAX * 4
                or regs.STEER_CAPS <= addr < regs.STEER_CAPS + STEER_BLOCK_BYTES)

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
        if addr == regs.STEER_CAPS:
            return self.caps
        if addr == regs.RSS_CTX_CAPS:
            return (regs.RSS_CTX_CAPS_CONTEXTS.put(NUM_CONTEXTS)
                    | regs.RSS_CTX_CAPS_INDIR_ENTRIES.put(INDIR_ENTRIES))
        if self._mask_of(addr) is None:      # also RSS_CTX_INDIR: write-only, reads 0
            return 0
        return self._regs.get(addr, 0)

    def mmio_write(self, addr: int, value: int) -> bool:
        """Write the register at `addr`; False (nothing done) if it is not this block's.

        Read-only registers and unmapped offsets inside the block ignore the write (True)."""
        self._check(addr, value)
        if not self.handles(addr):
            return False
        if addr == regs.STEER_SLOT_CMD:
            self._slot_cmd(value)
            return True
        if regs.RSS_CTX_INDIR_BASE <= addr < _CTX_END:
            self._ctx_words[(addr - regs.RSS_CTX_INDIR_BASE) // regs.RSS_CTX_INDIR_STRIDE] = value
            self._cache = None
            return True
        mask = self._mask_of(addr)
        if mask is not None:
            self._regs[addr] = value & mask
            self._cache = None
        return True

    def _slot_cmd(self, value: int) -> None:
        op = regs.STEER_SLOT_CMD_OP.get(value)
        bank = regs.STEER_SLOT_CMD_BANK.get(value)
        way = regs.STEER_SLOT_CMD_WAY.get(value)
        bucket = regs.STEER_SLOT_CMD_BUCKET.get(value) % self.buckets
        if op == SLOT_CLEAR_ALL:
            self.table = SteerTable(self.buckets)
        elif op == SLOT_CLEAR:
            self.table.write(bank, bucket, way, None)
        elif op == SLOT_WRITE:
            self.table.write(bank, bucket, way, self.staged_slot())

    def staged_slot(self) -> Slot:
        """The slot the staging registers describe."""
        ctrl = self._reg(regs.STEER_ENTRY_CTRL)
        action = self._reg(regs.STEER_ENTRY_ACTION)
        ports = self._reg(regs.STEER_ENTRY_PORTS)
        src = _words_to_int([self._reg(regs.steer_entry_src_reg(w)) for w in range(4)])
        dst = _words_to_int([self._reg(regs.steer_entry_dst_reg(w)) for w in range(4)])
        key = (bytes([regs.STEER_ENTRY_CTRL_FTYPE.get(ctrl), regs.STEER_ENTRY_CTRL_PROTO.get(ctrl)])
               + src.to_bytes(16, 'big') + dst.to_bytes(16, 'big')
               + regs.STEER_ENTRY_PORTS_SPORT.get(ports).to_bytes(2, 'big')
               + regs.STEER_ENTRY_PORTS_DPORT.get(ports).to_bytes(2, 'big'))
        ctx = (regs.STEER_ENTRY_ACTION_CTX.get(action)
               if regs.STEER_ENTRY_ACTION_CTX_EN.get(action) else None)
        # The slot keeps the location's low 11 bits (docs/rss.md section 5).
        return Slot(key, regs.STEER_ENTRY_ACTION_QUEUE.get(action),
                    regs.STEER_ENTRY_ACTION_LOC.get(action) & 0x7FF, ctx)

    # --- configuration views ------------------------------------------------------------------
    def _reg(self, addr: int) -> int:
        return self._regs.get(addr, 0)

    def _build(self) -> tuple[RssConfig, dict[FlowType, TypeMask]]:
        ctrl = self._reg(regs.RSS_CTRL)
        types = frozenset(t for t in ALL_TYPES if (ctrl >> t.ctrl_bit) & 1)
        key = b''.join(self._reg(regs.rss_key_reg(i)).to_bytes(4, 'big')
                       for i in range(regs.RSS_KEY_MAX))
        indir = []
        for j in range(regs.RSS_INDIR_MAX):
            word = self._reg(regs.rss_indir_reg(j))
            indir += [f.get(word) for f in _INDIR_FIELDS]
        masks: dict[FlowType, TypeMask] = {}
        for t in STEER_TYPES:
            m = self._reg(regs.steer_type_reg(t, regs.STEER_TYPE_MASK))
            p = self._reg(regs.steer_type_reg(t, regs.STEER_TYPE_PORT_MASK))
            masks[t] = TypeMask(regs.STEER_TYPE_MASK_SRC_LEN.get(m),
                                regs.STEER_TYPE_MASK_DST_LEN.get(m),
                                regs.STEER_TYPE_PORT_MASK_SPORT_MASK.get(p),
                                regs.STEER_TYPE_PORT_MASK_DPORT_MASK.get(p),
                                regs.STEER_TYPE_MASK_PROTO_MASK.get(m))
        contexts = []
        for c in range(NUM_CONTEXTS):
            table: list[int] = []
            for word in self._ctx_words[CTX_WORDS * c:CTX_WORDS * (c + 1)]:
                table += [f.get(word) for f in _INDIR_FIELDS]
            contexts.append(tuple(table))
        return RssConfig(key, types, tuple(indir), tuple(contexts)), masks

    @property
    def rss_config(self) -> RssConfig:
        if self._cache is None:
            self._cache = self._build()
        return self._cache[0]

    @property
    def type_masks(self) -> dict[FlowType, TypeMask]:
        if self._cache is None:
            self._cache = self._build()
        return dict(self._cache[1])

    # --- classification -----------------------------------------------------------------------
    def classify(self, t: FlowTuple | None, num_queues: int | None = None) -> Classification:
        """Classify a frame with the current registers and slots, counting bad queue numbers.

        `num_queues` overrides the number of RX queues given at construction."""
        if self._cache is None:
            self._cache = self._build()
        cfg, masks = self._cache
        nq = self.num_queues if num_queues is None else num_queues
        if t is None or not t.is_ip:
            c = Classification(0, 0, RssType.NONE, False)
        else:
            rtype = hash_type(t, cfg.types)
            h = rss_hash(t, cfg.key, rtype)
            hit = self.table.lookup(frame_key(t, masks))
            c = (steered(hit.queue, hit.loc, h, rtype, nq, hit.ctx, cfg) if hit is not None
                 else by_rss(t, cfg, h, rtype, nq))
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
