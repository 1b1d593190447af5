"""RSS and n-tuple flow steering, named like the ethtool operations a kernel driver implements.

Works on any `NicHw` (driver/hw.py): the golden model or the RTL. The register layout is
docs/rss.md section 5 (constants from `driver.regs`); the behaviour the NIC gives it is the
rest of that page. Errors are `KernelError`s (an `OSError`: compare `err.errno` with
`errno.EINVAL`, ...), raised before any register is written.

| ethtool | here |
|---|---|
| `ethtool -x` / `ETHTOOL_MSG_RSS_GET` (`get_rxfh`) | `get_rxfh(hw)` |
| `ethtool -X hkey .. weight/..` (`set_rxfh`) | `set_rxfh(hw, key, indir)` |
| `ethtool -X equal N` | `set_rxfh_equal(hw, n, num_queues)` |
| `ethtool -X context new start S equal N` (`create_rxfh_context`) | `set_rxfh(hw, indir=equal_indir(N, S), rss_context=ETH_RXFH_CONTEXT_ALLOC, contexts=ctxs)` -> K |
| `ethtool -X context K equal N` (`modify_rxfh_context`) | `set_rxfh(hw, indir=..., rss_context=K, contexts=ctxs)` |
| `ethtool -X context K delete` (`remove_rxfh_context`) | `set_rxfh(hw, rss_context=K, rss_delete=True, contexts=ctxs)` |
| `ethtool -x context K` | `ctxs.get_rxfh(K)` |
| `ethtool -N rx-flow-hash tcp4 sdfn` (`ETHTOOL_SRXFH`) | `set_rx_flow_hash(hw, {"tcp4", ...})` |
| `ethtool -n rx-flow-hash ..` (`ETHTOOL_GRXFH`) | `get_rx_flow_hash(hw)` |
| `ethtool -N flow-type tcp4 ... action Q [loc L]` (`ETHTOOL_SRXCLSRLINS`) | `NtupleRules.add(spec)` |
| `ethtool -N flow-type tcp4 ... context K [action O]` (FLOW_RSS) | `NtupleRules.add(NtupleSpec(..., action=O, context=K))` |
| `ethtool -N delete L` (`ETHTOOL_SRXCLSRLDEL`) | `NtupleRules.delete(rule_id)` |
| `ethtool -n` (`ETHTOOL_GRXCLSRLALL`) | `NtupleRules.list()` |
| `ethtool -c` / `ETHTOOL_MSG_COALESCE_GET` | `Netdev.get_coalesce()`, `Netdev.coalesce_reply()` |
| `ethtool -C rx-usecs N rx-frames M` / `ETHTOOL_MSG_COALESCE_SET` | `Netdev.set_coalesce(parse_coalesce_args("rx-usecs N rx-frames M"))` |

Flow-hash type names are ethtool's flow types: `ip4`, `tcp4`, `udp4`, `ip6`, `tcp6`, `udp6`.
Enabling `tcp4` means TCP/IPv4 frames hash on addresses and ports ("sdfn"); without it they
hash on addresses only if `ip4` is enabled ("sd"), else not at all (queue 0).

N-tuple masks use the kernel's convention (`struct ethtool_rx_flow_spec` `m_u`): a 1 bit is
compared. (The ethtool command line's `m` argument is the inverse.)
"""
from __future__ import annotations

import errno
import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from enum import IntEnum
from typing import NamedTuple

from driver import regs
from driver.errors import KernelError
from driver.hw import NicHw
from driver.steer_table import NoRoom, SlotOp, SteerSlots, action_fields, slot_action

RSS_KEY_BYTES = regs.RSS_KEY_MAX * 4
"""Length of the Toeplitz key (40)."""
RSS_INDIR_ENTRIES = regs.RSS_INDIR_MAX * 4
"""Entries of the indirection table (128)."""
SLOT_WRITE, SLOT_CLEAR, SLOT_CLEAR_ALL = 1, 2, 3
"""`STEER_SLOT_CMD.op`: write the staged entry, clear one slot, clear every slot."""
MAX_QUEUES = 128
"""The completion's queue field has 7 bits."""

FLOW_HASH_BITS = {
    'ip4': regs.RSS_CTRL_IPV4,
    'tcp4': regs.RSS_CTRL_TCP_IPV4,
    'udp4': regs.RSS_CTRL_UDP_IPV4,
    'ip6': regs.RSS_CTRL_IPV6,
    'tcp6': regs.RSS_CTRL_TCP_IPV6,
    'udp6': regs.RSS_CTRL_UDP_IPV6,
}
"""ethtool flow type -> its enable bit in RSS_CTRL."""

_INDIR_FIELDS = (regs.RSS_INDIR_ENTRY0, regs.RSS_INDIR_ENTRY1, regs.RSS_INDIR_ENTRY2,
                 regs.RSS_INDIR_ENTRY3)
_CTX_INDIR_FIELDS = (regs.RSS_CTX_INDIR_ENTRY0, regs.RSS_CTX_INDIR_ENTRY1,
                     regs.RSS_CTX_INDIR_ENTRY2, regs.RSS_CTX_INDIR_ENTRY3)


def _einval(msg: str) -> KernelError:
    return KernelError(errno.EINVAL, msg)


# --------------------------------------------------------------------------------------------
# RSS: key, indirection table, hash types
# --------------------------------------------------------------------------------------------
class Rxfh(NamedTuple):
    """What `ethtool -x` shows."""

    key: bytes
    indir: list[int]
    hfunc: str = 'toeplitz'


async def num_rx_queues(hw: NicHw) -> int:
    """The number of RX queues the NIC has (`CAPS.num_rxq`): what queue numbers are checked
    against when the caller does not say."""
    return regs.CAPS_NUM_RXQ.get(await hw.read32(regs.CAPS))


async def get_rxfh(hw: NicHw) -> Rxfh:
    """Read the key and the indirection table back from the NIC."""
    key = b''
    for i in range(regs.RSS_KEY_MAX):
        key += (await hw.read32(regs.rss_key_reg(i))).to_bytes(4, 'big')
    indir: list[int] = []
    for j in range(regs.RSS_INDIR_MAX):
        word = await hw.read32(regs.rss_indir_reg(j))
        indir += [f.get(word) for f in _INDIR_FIELDS]
    return Rxfh(key, indir)


def _check_indir(indir: list[int], num_queues: int) -> list[int]:
    indir = list(indir)
    if len(indir) != RSS_INDIR_ENTRIES:
        raise _einval(f'indirection table has {len(indir)} entries, the NIC {RSS_INDIR_ENTRIES}')
    for i, q in enumerate(indir):
        if isinstance(q, bool) or not isinstance(q, int) or not 0 <= q < num_queues:
            raise _einval(f'indirection entry {i} = {q!r}: queues are 0..{num_queues - 1}')
    return indir


async def _write_indir(hw: NicHw, indir: list[int]) -> None:
    for j in range(regs.RSS_INDIR_MAX):
        word = 0
        for k, f in enumerate(_INDIR_FIELDS):
            word |= f.put(indir[4 * j + k])
        await hw.write32(regs.rss_indir_reg(j), word)


ETH_RXFH_CONTEXT_ALLOC = 0xFFFF_FFFF
"""`rss_context` value asking `set_rxfh` to create a context (include/uapi/linux/ethtool.h)."""


def equal_indir(n: int, start: int = 0, entries: int = RSS_INDIR_ENTRIES) -> list[int]:
    """ethtool's `equal N [start S]` table: entry i is queue S + i mod N."""
    return [start + i % n for i in range(entries)]


async def set_rxfh(hw: NicHw, key: bytes | None = None, indir: list[int] | None = None, *,
                   num_queues: int | None = None, rss_context: int = 0, rss_delete: bool = False,
                   hfunc: str | None = None, contexts: RssContexts | None = None) -> int:
    """Program the Toeplitz key and/or the indirection table (None: leave it); returns the
    RSS context set (0: the default).

    The key must be 40 bytes; the table must have 128 entries, each a queue below
    `num_queues` (default: `CAPS.num_rxq`). Key byte 0 goes to the top byte of RSS_KEY[0].
    `hfunc` may only be 'toeplitz' (EOPNOTSUPP otherwise).

    RSS contexts (docs/rss.md section 3a), as the kernel's ethtool_set_rxfh and the driver's
    create/modify/remove_rxfh_context spell it, with `contexts` the NIC's `RssContexts`:
    `rss_context=ETH_RXFH_CONTEXT_ALLOC` creates a context (its table `indir`, or without one
    the default spread over every queue) and returns its number; `rss_context=K` replaces
    context K's table; with `rss_delete=True` deletes it. Errors as the kernel gives them:
    EOPNOTSUPP for a key or hash function on a context (the NIC shares them: no
    `rxfh_per_ctx_key`) or contexts without `contexts`; ENOENT for a context that does not
    exist; EBUSY when none is free or, on delete, when an n-tuple rule points at it; EINVAL
    for a bad table, a request that changes nothing, create together with delete, and a
    table that would send a rule's frames (its offset added) beyond the queues.
    """
    if hfunc is not None and (rss_context != 0 or hfunc != 'toeplitz'):
        raise KernelError(errno.EOPNOTSUPP, f'hfunc {hfunc!r}: the NIC hashes with toeplitz, '
                          f'shared by every context')
    if rss_context != 0:
        if contexts is None:
            raise KernelError(errno.EOPNOTSUPP, 'RSS contexts need the RssContexts of the NIC')
        if key is not None:
            raise KernelError(errno.EOPNOTSUPP, 'the RSS key is shared by every context: '
                              'set it on context 0')
        return await contexts.set(rss_context, indir, delete=rss_delete, num_queues=num_queues)
    if rss_delete:
        raise _einval('context 0 cannot be deleted')
    if key is not None:
        key = bytes(key)
        if len(key) != RSS_KEY_BYTES:
            raise _einval(f'RSS key of {len(key)} bytes, the NIC takes {RSS_KEY_BYTES}')
    if indir is not None:
        if num_queues is None:
            num_queues = await num_rx_queues(hw)
        indir = _check_indir(indir, min(num_queues, MAX_QUEUES))
    if indir is not None and contexts is not None and contexts.rules is not None:
        contexts.rules.check_table(0, indir)
    if key is not None:
        for i in range(regs.RSS_KEY_MAX):
            await hw.write32(regs.rss_key_reg(i), int.from_bytes(key[4 * i:4 * i + 4], 'big'))
    if indir is not None:
        await _write_indir(hw, indir)
    return 0


class RssContexts:
    """The NIC's RSS contexts 1..`RSS_CTX_CAPS.contexts`, as the kernel's ethtool core keeps
    them (`dev->ethtool->rss_ctx`: each context's table; the NIC's context tables are
    write-only). Changed through `set_rxfh(..., rss_context=..., contexts=self)`; an
    `NtupleRules` made with `contexts=self` points rules at them (and makes a context in use
    undeletable, EBUSY). `num_queues`: the RX queues tables are checked against (default
    `CAPS.num_rxq`)."""

    def __init__(self, hw: NicHw, num_queues: int | None = None) -> None:
        self.hw = hw
        self.num_queues = num_queues
        self.max_contexts: int | None = None        # RSS_CTX_CAPS.contexts, read on first use
        self.tables: dict[int, list[int]] = {}
        self.rules: NtupleRules | None = None

    def __contains__(self, ctx: object) -> bool:
        return ctx in self.tables

    def ids(self) -> list[int]:
        """The contexts that exist, in order."""
        return sorted(self.tables)

    def get_rxfh(self, ctx: int) -> Rxfh:
        """`ethtool -x context K`: the table (the key is context 0's: shared). ENOENT."""
        if ctx not in self.tables:
            raise KernelError(errno.ENOENT, f'no RSS context {ctx!r}')
        return Rxfh(b'', list(self.tables[ctx]))

    def queues(self, ctx: int) -> list[int]:
        """The queues context `ctx`'s table spreads over (what to bind for its flows). ENOENT."""
        return sorted(set(self.get_rxfh(ctx).indir))

    async def _caps(self) -> int:
        if self.max_contexts is None:
            self.max_contexts = regs.RSS_CTX_CAPS_CONTEXTS.get(await self.hw.read32(regs.RSS_CTX_CAPS))
        return self.max_contexts

    async def set(self, ctx: int, indir: list[int] | None, *, delete: bool = False,
                  num_queues: int | None = None) -> int:
        """`set_rxfh` for a context other than 0 (see there); returns the context."""
        create = ctx == ETH_RXFH_CONTEXT_ALLOC
        if create and delete:
            raise _einval('a context cannot be created and deleted at once')
        if not create and not delete and indir is None:
            raise _einval(f'context {ctx}: nothing to change')
        nq = num_queues or self.num_queues or await num_rx_queues(self.hw)
        if indir is not None and not delete:
            indir = _check_indir(indir, min(nq, MAX_QUEUES))
        limit = await self._caps()
        if create:
            ctx = next((c for c in range(1, limit + 1) if c not in self.tables), 0)
            if ctx == 0:
                raise KernelError(errno.EBUSY, f'all {limit} RSS contexts in use')
            if indir is None:
                indir = [i % min(nq, MAX_QUEUES) for i in range(RSS_INDIR_ENTRIES)]
        elif ctx not in self.tables:
            raise KernelError(errno.ENOENT, f'no RSS context {ctx!r}')
        if delete:
            users = self.rules.users(ctx) if self.rules is not None else []
            if users:
                raise KernelError(errno.EBUSY, f'RSS context {ctx} is used by n-tuple rule(s) '
                                  f'{users}')
            del self.tables[ctx]
            return ctx
        assert indir is not None
        if self.rules is not None:
            self.rules.check_table(ctx, indir)
        await self._write(ctx, indir)
        self.tables[ctx] = indir
        return ctx

    async def _write(self, ctx: int, indir: list[int]) -> None:
        words = RSS_INDIR_ENTRIES // 4
        for j in range(words):
            word = 0
            for k, f in enumerate(_CTX_INDIR_FIELDS):
                word |= f.put(indir[4 * j + k])
            await self.hw.write32(regs.rss_ctx_indir_reg((ctx - 1) * words + j), word)

    def check_channels(self, combined: int) -> None:
        """Refuse (EINVAL) a queue count below a queue a context's table uses, as the
        kernel's ethtool_get_max_rxfh_channel check does; fits `Netdev.channel_checks`."""
        used = [c for c, t in self.tables.items() if max(t) >= combined]
        if used:
            raise _einval(f'requested channel count {combined} is too low for RSS context(s) '
                          f'{sorted(used)}')


async def set_rxfh_equal(hw: NicHw, n: int, num_queues: int) -> None:
    """`ethtool -X equal N`: entry i is queue i mod N, spreading flows over queues 0..N-1."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= min(num_queues, MAX_QUEUES):
        raise _einval(f'equal {n!r}: 1..{num_queues} queues')
    await _write_indir(hw, [i % n for i in range(RSS_INDIR_ENTRIES)])


async def set_rx_flow_hash(hw: NicHw, types: set[str] | frozenset[str] | list[str]) -> None:
    """Enable exactly the hash types named in `types` (ethtool flow types, see module doc)."""
    types = set(types)
    unknown = types - set(FLOW_HASH_BITS)
    if unknown:
        raise _einval(f'unknown flow hash type(s) {sorted(unknown)}; known: {sorted(FLOW_HASH_BITS)}')
    value = 0
    for name in types:
        value |= FLOW_HASH_BITS[name].put(1)
    await hw.write32(regs.RSS_CTRL, value)


async def get_rx_flow_hash(hw: NicHw) -> set[str]:
    """The hash types enabled now."""
    value = await hw.read32(regs.RSS_CTRL)
    return {name for name, f in FLOW_HASH_BITS.items() if f.get(value)}


# --------------------------------------------------------------------------------------------
# N-tuple rules
# --------------------------------------------------------------------------------------------
_FLOW_TYPES = {
    # flow type: (IP version, protocol or None, has ports)
    'tcp4': (4, 6, True),
    'udp4': (4, 17, True),
    'ip4': (4, None, False),
    'tcp6': (6, 6, True),
    'udp6': (6, 17, True),
    'ip6': (6, None, False),
}

Addr = str | int | ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class NtupleSpec:
    """One n-tuple rule, as `ethtool -N <dev> flow-type ...` describes it.

    `flow_type` is one of tcp4, udp4, ip4, tcp6, udp6, ip6. A field left None is not
    compared. An address or port given without a mask is compared exactly; masks (1 = bit
    compared) may be ints or, for addresses, address strings ("255.255.255.0"). `l4_proto`
    is only for ip4/ip6 (tcp/udp flow types imply it); ports only for tcp/udp flow types.
    `action` is the RX queue. `loc` picks the rule's location (its precedence: the lowest
    location wins); None takes the lowest free one. `context` K (ethtool `context K`,
    FLOW_RSS): the frames are spread by RSS context K's table (0: the default table) and
    `action` is the offset added to the queue it gives (docs/rss.md section 3a).
    """

    flow_type: str
    action: int
    src_ip: Addr | None = None
    src_ip_mask: Addr | None = None
    dst_ip: Addr | None = None
    dst_ip_mask: Addr | None = None
    src_port: int | None = None
    src_port_mask: int | None = None
    dst_port: int | None = None
    dst_port_mask: int | None = None
    l4_proto: int | None = None
    loc: int | None = None
    context: int | None = None


class NtupleRule(NamedTuple):
    rule_id: int
    spec: NtupleSpec


@dataclass(frozen=True)
class TypeMaskRegs:
    """The mask of one flow type (`STEER_TYPE[t]`): address prefix lengths and bit masks."""

    src_len: int = 0
    dst_len: int = 0
    sport_mask: int = 0
    dport_mask: int = 0
    proto_mask: int = 0


@dataclass(frozen=True)
class _HwRule:
    """A rule as the NIC holds it: its flow type (1..6), its type's mask and its key."""

    ftype: int
    mask: TypeMaskRegs
    key: bytes
    queue: int          # the slot's action (driver.steer_table.slot_action)


_TYPE_CODES = {'tcp4': 1, 'udp4': 2, 'ip4': 3, 'tcp6': 4, 'udp6': 5, 'ip6': 6}
_TYPE_NAMES = {v: k for k, v in _TYPE_CODES.items()}


def _addr(value: Addr, version: int, what: str) -> int:
    try:
        if isinstance(value, int) and not isinstance(value, bool):
            a = ipaddress.IPv4Address(value) if version == 4 else ipaddress.IPv6Address(value)
        else:
            a = ipaddress.ip_address(value)
    except (ValueError, TypeError) as exc:
        raise _einval(f'{what} {value!r}: {exc}') from None
    if a.version != version:
        raise _einval(f'{what} {value!r} is not an IPv{version} address')
    return int(a)


def _port(value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 0xFFFF:
        raise _einval(f'{what} {value!r}: 0..65535')
    return value


def check_spec(spec: NtupleSpec, num_queues: int) -> None:
    """Refuse a rule the NIC cannot take (KernelError EINVAL naming the field), without
    touching the hardware: what `NtupleRules.add` checks before it writes anything."""
    _encode(spec, num_queues)


def _prefix_len(mask: int, bits: int, what: str) -> int:
    """The prefix length of an address mask (EINVAL if the mask is not leading ones)."""
    n = bin(mask).count('1')
    if mask != ((1 << n) - 1) << (bits - n):
        raise _einval(f'{what} mask {mask:#x} is not a prefix: the NIC compares address '
                      f'prefixes (as 255.255.255.0 or ffff:ffff::)')
    return n


def _key(ftype: int, proto: int, src: int, dst: int, sport: int, dport: int) -> bytes:
    """The 38-byte key of docs/rss.md section 4."""
    return (bytes([ftype, proto]) + src.to_bytes(16, 'big') + dst.to_bytes(16, 'big')
            + sport.to_bytes(2, 'big') + dport.to_bytes(2, 'big'))


def _encode(spec: NtupleSpec, num_queues: int) -> _HwRule:
    """Check `spec` and turn it into the NIC's form (EINVAL on anything wrong or anything the
    NIC cannot match: docs/rss.md section 4, "What ethtool -N accepts")."""
    if spec.flow_type not in _FLOW_TYPES:
        raise _einval(f'flow-type {spec.flow_type!r}: one of {sorted(_FLOW_TYPES)}')
    version, proto, has_ports = _FLOW_TYPES[spec.flow_type]
    a = spec.action
    ctx = spec.context
    if ctx is not None and (isinstance(ctx, bool) or not isinstance(ctx, int) or not 0 <= ctx <= 15):
        raise _einval(f'context {ctx!r}: no such RSS context')
    if isinstance(a, bool) or not isinstance(a, int) or not 0 <= a < min(num_queues, MAX_QUEUES):
        what = 'action' if ctx is None else f'context {ctx} ring offset'
        raise _einval(f'{what} {a!r}: RX queues are 0..{num_queues - 1}')
    abits = 32 if version == 4 else 128

    def addr_pair(value, mask, what: str) -> tuple[int, int]:
        if value is None:
            if mask is not None:
                raise _einval(f'{what} mask without {what}')
            return 0, 0
        v = _addr(value, version, what)
        m = (1 << abits) - 1 if mask is None else _addr(mask, version, f'{what} mask')
        n = _prefix_len(m, abits, what)
        return v & m, n

    def port_pair(value, mask, what: str) -> tuple[int, int]:
        if value is None:
            if mask is not None:
                raise _einval(f'{what} mask without {what}')
            return 0, 0
        if not has_ports:
            raise _einval(f'{what} needs flow-type tcp4/udp4/tcp6/udp6, not {spec.flow_type}')
        v = _port(value, what)
        m = 0xFFFF if mask is None else _port(mask, f'{what} mask')
        return v & m, m

    src, src_len = addr_pair(spec.src_ip, spec.src_ip_mask, 'src-ip')
    dst, dst_len = addr_pair(spec.dst_ip, spec.dst_ip_mask, 'dst-ip')
    sport, sport_mask = port_pair(spec.src_port, spec.src_port_mask, 'src-port')
    dport, dport_mask = port_pair(spec.dst_port, spec.dst_port_mask, 'dst-port')
    ftype = _TYPE_CODES[spec.flow_type]
    proto_v, proto_m = 0, 0
    if spec.l4_proto is not None:
        if proto is not None:
            raise _einval(f'l4proto is implied by flow-type {spec.flow_type}')
        if isinstance(spec.l4_proto, bool) or not isinstance(spec.l4_proto, int) \
                or not 0 <= spec.l4_proto <= 0xFF:
            raise _einval(f'l4proto {spec.l4_proto!r}: 0..255')
        if spec.l4_proto in (6, 17):
            # ip4 l4proto 6 is a tcp4 rule without ports (its frames are tcp4 frames).
            ftype = _TYPE_CODES[('tcp' if spec.l4_proto == 6 else 'udp') + str(version)]
        else:
            proto_v, proto_m = spec.l4_proto, 0xFF
    mask = TypeMaskRegs(src_len, dst_len, sport_mask, dport_mask, proto_m)
    return _HwRule(ftype, mask, _key(ftype, proto_v, src, dst, sport, dport), slot_action(a, ctx))


async def steer_caps(hw: NicHw) -> tuple[int, int]:
    """(rule locations, buckets per bank) of the NIC's steering table (`STEER_CAPS`)."""
    caps = await hw.read32(regs.STEER_CAPS)
    return regs.STEER_CAPS_RULES.get(caps), 1 << regs.STEER_CAPS_BUCKET_LOG2.get(caps)


class NtupleRules:
    """The NIC's n-tuple rules, as the driver keeps them (`ethtool -N/-n`).

    The driver is the only writer of the steering table and keeps it in software
    (`driver/steer_table.py` decides each rule's slot); call `clear()` once at start-up (the
    hardware resets with every slot empty, but a previous driver may have left rules). Every
    add or delete follows docs/rss.md section 4 ("Changing rules while traffic runs"): slots
    are written whole from the staging registers, a rule is only written into an empty slot,
    and a replaced winner is cleared only after its successor is in, so a frame is classified
    with the old or the new rules, never with anything else.

    One mask per flow type: a rule whose mask differs from the mask of the other installed
    rules of its flow type is refused (EINVAL), as are address masks that are not prefixes.
    `num_queues` is the number of RX queues in use: rules pointing at a queue at or above it
    are refused (EINVAL). `check_channels(n)` refuses to shrink the queues under a rule.
    `num_rules` limits the locations (default: all the NIC has, `STEER_CAPS.rules`).
    `contexts` (the NIC's `RssContexts`) lets rules point at RSS contexts (`spec.context`):
    a context that does not exist is EINVAL (as the kernel's ethtool_set_rxnfc checks), and
    so is an offset that would take the context's largest queue beyond the queues.
    """

    def __init__(self, hw: NicHw, num_queues: int, num_rules: int | None = None, *,
                 contexts: RssContexts | None = None) -> None:
        if not 1 <= num_queues <= MAX_QUEUES:
            raise _einval(f'num_queues {num_queues}: 1..{MAX_QUEUES}')
        if num_rules is not None and (isinstance(num_rules, bool) or not isinstance(num_rules, int)
                                      or num_rules < 1):
            raise _einval(f'num_rules {num_rules!r}: at least 1')
        self.hw = hw
        self.num_queues = num_queues
        self._want_rules = num_rules
        self.num_rules = num_rules or 0
        self._rules: dict[int, NtupleSpec] = {}
        self._hw_rules: dict[int, _HwRule] = {}
        self._slots: SteerSlots | None = None
        self._masks: dict[int, TypeMaskRegs] = {t: TypeMaskRegs() for t in _TYPE_NAMES}
        self._staged: dict[int, int] = {}          # staging register -> value last written
        self.contexts = contexts
        self._default_indir: list[int] | None = None   # context 0's table, read for rules
        if contexts is not None:
            contexts.rules = self

    def __len__(self) -> int:
        return len(self._rules)

    async def _table(self) -> SteerSlots:
        if self._slots is None:
            rules, buckets = await steer_caps(self.hw)
            if rules < 1 or buckets < 1:
                raise KernelError(errno.EOPNOTSUPP, 'the NIC reports no steering table')
            if self._want_rules is not None and self._want_rules > rules:
                raise _einval(f'num_rules {self._want_rules}: the NIC has {rules}')
            self.num_rules = self._want_rules or rules
            await self._wait_idle()       # the NIC clears its table after reset
            self._slots = SteerSlots(buckets)
        return self._slots

    async def _wait_idle(self) -> None:
        for _ in range(1 << 20):
            if not regs.STEER_STATUS_BUSY.get(await self.hw.read32(regs.STEER_STATUS)):
                return
        raise KernelError(errno.ETIMEDOUT, 'the steering table clear never finished')

    async def clear(self) -> None:
        """Empty the NIC's table (every slot, whoever wrote it) and forget every rule."""
        table = await self._table()
        await self.hw.write32(regs.STEER_SLOT_CMD, regs.STEER_SLOT_CMD_OP.put(SLOT_CLEAR_ALL))
        await self._wait_idle()
        table.clear()
        self._rules.clear()
        self._hw_rules.clear()
        self._staged.clear()       # unknown after someone else's use
        self._masks = {t: TypeMaskRegs() for t in _TYPE_NAMES}
        for t in _TYPE_NAMES:      # every type's mask to 0, as after reset
            await self._write_mask(t, TypeMaskRegs())

    async def add(self, spec: NtupleSpec) -> int:
        """Insert `spec` (at `spec.loc`, replacing a rule there, or at the lowest free
        location) and return its rule id (= location). EINVAL for a bad spec or queue or a
        mask its flow type cannot take; ENOSPC when every location is taken or the table has
        no slot for the rule's key."""
        h = _encode(spec, self.num_queues)
        if spec.context is not None:
            await self._check_context(spec)
        table = await self._table()
        if spec.loc is not None:
            if isinstance(spec.loc, bool) or not isinstance(spec.loc, int) \
                    or not 0 <= spec.loc < self.num_rules:
                raise _einval(f'loc {spec.loc!r}: 0..{self.num_rules - 1}')
            rule_id = spec.loc
        else:
            free = next((r for r in range(self.num_rules) if r not in self._rules), None)
            if free is None:
                raise KernelError(errno.ENOSPC, f'all {self.num_rules} n-tuple rules in use')
            rule_id = free
        others = [r for r, x in self._hw_rules.items() if x.ftype == h.ftype and r != rule_id]
        if others and self._masks[h.ftype] != h.mask:
            raise _einval(f'flow type {_TYPE_NAMES[h.ftype]} already has rules with another mask '
                          f'({self._masks[h.ftype]}; rule {others[0]}): the NIC has one mask '
                          f'per flow type')
        old = self._hw_rules.get(rule_id)
        if self._masks[h.ftype] != h.mask:
            # No other rule of the type: the rule it replaces (if of this type) goes first,
            # then the type's mask changes (no slot of the type is valid meanwhile).
            if old is not None:
                await self._delete(rule_id)
                old = None
            await self._write_mask(h.ftype, h.mask)
        try:
            ops = table.add(rule_id, h.key, h.queue)
        except NoRoom:
            raise KernelError(errno.ENOSPC, f'no slot for the rule in the steering table '
                              f'({len(self._hw_rules)} rules in it)') from None
        await self._apply(ops)
        self._rules[rule_id] = spec
        self._hw_rules[rule_id] = h
        return rule_id

    async def delete(self, rule_id: int) -> None:
        """Remove rule `rule_id` (ENOENT if there is none): its flows go back to the next
        rule with the same key or to RSS."""
        if rule_id not in self._rules:
            raise KernelError(errno.ENOENT, f'no n-tuple rule {rule_id!r}')
        await self._delete(rule_id)

    async def _delete(self, rule_id: int) -> None:
        table = await self._table()
        await self._apply(table.delete(rule_id))
        del self._rules[rule_id]
        del self._hw_rules[rule_id]

    async def _check_context(self, spec: NtupleSpec) -> None:
        ctx = spec.context
        assert ctx is not None
        if ctx == 0:
            self._default_indir = (await get_rxfh(self.hw)).indir
            indir = self._default_indir
        elif self.contexts is None or ctx not in self.contexts:
            raise _einval(f'context {ctx}: no such RSS context')
        else:
            indir = self.contexts.tables[ctx]
        if max(indir) + spec.action >= min(self.num_queues, MAX_QUEUES):
            raise _einval(f'context {ctx} ring offset {spec.action}: the context reaches queue '
                          f'{max(indir) + spec.action}, RX queues are 0..{self.num_queues - 1}')

    def users(self, ctx: int) -> list[int]:
        """The rules that point at RSS context `ctx`."""
        return sorted(r for r, s in self._rules.items() if s.context == ctx)

    def check_table(self, ctx: int, indir: Sequence[int]) -> None:
        """Refuse (EINVAL) a new table for context `ctx` that would take a rule's frames
        (its offset added) beyond the queues."""
        bad = [r for r in self.users(ctx)
               if max(indir) + self._rules[r].action >= min(self.num_queues, MAX_QUEUES)]
        if bad:
            raise _einval(f'context {ctx}: the table would send n-tuple rule(s) {bad} beyond '
                          f'RX queue {self.num_queues - 1}')
        if ctx == 0:
            self._default_indir = list(indir)

    def _max_queue(self, spec: NtupleSpec) -> int:
        if spec.context is None:
            return spec.action
        if spec.context == 0:
            table = self._default_indir or [0]
        else:
            table = self.contexts.tables.get(spec.context, [0]) if self.contexts else [0]
        return max(table) + spec.action

    def get(self, rule_id: int) -> NtupleSpec:
        """`ethtool -n <dev> rule N` (ENOENT if there is none)."""
        if rule_id not in self._rules:
            raise KernelError(errno.ENOENT, f'no n-tuple rule {rule_id!r}')
        return self._rules[rule_id]

    def list(self) -> list[NtupleRule]:
        """Every rule, by location (= precedence)."""
        return [NtupleRule(r, self._rules[r]) for r in sorted(self._rules)]

    def check_channels(self, combined: int) -> None:
        """Refuse (EINVAL) a queue count that would leave a rule pointing at a missing queue,
        as the kernel's ethtool_check_max_channel does; fits `Netdev.channel_checks`."""
        used = [r for r, s in self._rules.items() if self._max_queue(s) >= combined]
        if used:
            raise _einval(f'requested channel count {combined} is too low for n-tuple rule(s) '
                          f'{sorted(used)}')

    async def _write_mask(self, ftype: int, m: TypeMaskRegs) -> None:
        w = self.hw.write32
        await w(regs.steer_type_reg(ftype, regs.STEER_TYPE_MASK),
                regs.STEER_TYPE_MASK_SRC_LEN.put(m.src_len) | regs.STEER_TYPE_MASK_DST_LEN.put(m.dst_len)
                | regs.STEER_TYPE_MASK_PROTO_MASK.put(m.proto_mask))
        await w(regs.steer_type_reg(ftype, regs.STEER_TYPE_PORT_MASK),
                regs.STEER_TYPE_PORT_MASK_SPORT_MASK.put(m.sport_mask)
                | regs.STEER_TYPE_PORT_MASK_DPORT_MASK.put(m.dport_mask))
        self._masks[ftype] = m

    async def _stage(self, addr: int, value: int) -> None:
        if self._staged.get(addr) != value:
            await self.hw.write32(addr, value)
            self._staged[addr] = value

    async def _apply(self, ops: Sequence[SlotOp]) -> None:
        """Perform slot operations in order: stage the entry, then one STEER_SLOT_CMD."""
        for op in ops:
            where = (regs.STEER_SLOT_CMD_BUCKET.put(op.bucket) | regs.STEER_SLOT_CMD_BANK.put(op.bank)
                     | regs.STEER_SLOT_CMD_WAY.put(op.way))
            if op.entry is None:
                await self.hw.write32(regs.STEER_SLOT_CMD, where | regs.STEER_SLOT_CMD_OP.put(SLOT_CLEAR))
                continue
            k = op.entry.key
            await self._stage(regs.STEER_ENTRY_CTRL, regs.STEER_ENTRY_CTRL_FTYPE.put(k[0])
                              | regs.STEER_ENTRY_CTRL_PROTO.put(k[1]))
            q, ctx, ctx_en = action_fields(op.entry.queue)
            await self._stage(regs.STEER_ENTRY_ACTION, regs.STEER_ENTRY_ACTION_QUEUE.put(q)
                              | regs.STEER_ENTRY_ACTION_CTX.put(ctx)
                              | regs.STEER_ENTRY_ACTION_CTX_EN.put(ctx_en)
                              | regs.STEER_ENTRY_ACTION_LOC.put(op.entry.loc))
            await self._stage(regs.STEER_ENTRY_PORTS, regs.STEER_ENTRY_PORTS_SPORT.put(int.from_bytes(k[34:36], 'big'))
                              | regs.STEER_ENTRY_PORTS_DPORT.put(int.from_bytes(k[36:38], 'big')))
            src, dst = int.from_bytes(k[2:18], 'big'), int.from_bytes(k[18:34], 'big')
            for word in range(4):                                # word 0 least significant
                await self._stage(regs.steer_entry_src_reg(word), (src >> (32 * word)) & 0xFFFF_FFFF)
                await self._stage(regs.steer_entry_dst_reg(word), (dst >> (32 * word)) & 0xFFFF_FFFF)
            await self.hw.write32(regs.STEER_SLOT_CMD, where | regs.STEER_SLOT_CMD_OP.put(SLOT_WRITE))


# --------------------------------------------------------------------------------------------
# Interrupt coalescing (ethtool -c / -C)
# --------------------------------------------------------------------------------------------
class CoalesceAttr(IntEnum):
    """`ETHTOOL_A_COALESCE_*`, the netlink attributes of `ETHTOOL_MSG_COALESCE_GET/SET`, with
    the kernel's values (include/uapi/linux/ethtool_netlink.h)."""

    RX_USECS = 2
    RX_MAX_FRAMES = 3
    RX_USECS_IRQ = 4
    RX_MAX_FRAMES_IRQ = 5
    TX_USECS = 6
    TX_MAX_FRAMES = 7
    TX_USECS_IRQ = 8
    TX_MAX_FRAMES_IRQ = 9
    STATS_BLOCK_USECS = 10
    USE_ADAPTIVE_RX = 11
    USE_ADAPTIVE_TX = 12
    PKT_RATE_LOW = 13
    RX_USECS_LOW = 14
    RX_MAX_FRAMES_LOW = 15
    TX_USECS_LOW = 16
    TX_MAX_FRAMES_LOW = 17
    PKT_RATE_HIGH = 18
    RX_USECS_HIGH = 19
    RX_MAX_FRAMES_HIGH = 20
    TX_USECS_HIGH = 21
    TX_MAX_FRAMES_HIGH = 22
    RATE_SAMPLE_INTERVAL = 23
    USE_CQE_MODE_TX = 24
    USE_CQE_MODE_RX = 25
    TX_AGGR_MAX_BYTES = 26
    TX_AGGR_MAX_FRAMES = 27
    TX_AGGR_TIME_USECS = 28


@dataclass
class EthtoolCoalesce:
    """`struct ethtool_coalesce` plus the `struct kernel_ethtool_coalesce` fields the
    attributes above carry, with the kernel's field names. Every field is a u32 (the
    adaptive and CQE-mode ones booleans)."""

    rx_coalesce_usecs: int = 0
    rx_max_coalesced_frames: int = 0
    rx_coalesce_usecs_irq: int = 0
    rx_max_coalesced_frames_irq: int = 0
    tx_coalesce_usecs: int = 0
    tx_max_coalesced_frames: int = 0
    tx_coalesce_usecs_irq: int = 0
    tx_max_coalesced_frames_irq: int = 0
    stats_block_coalesce_usecs: int = 0
    use_adaptive_rx_coalesce: int = 0
    use_adaptive_tx_coalesce: int = 0
    pkt_rate_low: int = 0
    rx_coalesce_usecs_low: int = 0
    rx_max_coalesced_frames_low: int = 0
    tx_coalesce_usecs_low: int = 0
    tx_max_coalesced_frames_low: int = 0
    pkt_rate_high: int = 0
    rx_coalesce_usecs_high: int = 0
    rx_max_coalesced_frames_high: int = 0
    tx_coalesce_usecs_high: int = 0
    tx_max_coalesced_frames_high: int = 0
    rate_sample_interval: int = 0
    use_cqe_mode_tx: int = 0
    use_cqe_mode_rx: int = 0
    tx_aggr_max_bytes: int = 0
    tx_aggr_max_frames: int = 0
    tx_aggr_time_usecs: int = 0


COALESCE_FIELDS: dict[CoalesceAttr, str] = dict(zip(CoalesceAttr, (f.name for f in fields(EthtoolCoalesce))))
"""Attribute -> `EthtoolCoalesce` field (both in the kernel's order)."""

COALESCE_ARGS: dict[str, CoalesceAttr] = {
    'rx-usecs': CoalesceAttr.RX_USECS, 'rx-frames': CoalesceAttr.RX_MAX_FRAMES,
    'rx-usecs-irq': CoalesceAttr.RX_USECS_IRQ, 'rx-frames-irq': CoalesceAttr.RX_MAX_FRAMES_IRQ,
    'tx-usecs': CoalesceAttr.TX_USECS, 'tx-frames': CoalesceAttr.TX_MAX_FRAMES,
    'tx-usecs-irq': CoalesceAttr.TX_USECS_IRQ, 'tx-frames-irq': CoalesceAttr.TX_MAX_FRAMES_IRQ,
    'stats-block-usecs': CoalesceAttr.STATS_BLOCK_USECS,
    'adaptive-rx': CoalesceAttr.USE_ADAPTIVE_RX, 'adaptive-tx': CoalesceAttr.USE_ADAPTIVE_TX,
    'pkt-rate-low': CoalesceAttr.PKT_RATE_LOW, 'rx-usecs-low': CoalesceAttr.RX_USECS_LOW,
    'rx-frames-low': CoalesceAttr.RX_MAX_FRAMES_LOW, 'tx-usecs-low': CoalesceAttr.TX_USECS_LOW,
    'tx-frames-low': CoalesceAttr.TX_MAX_FRAMES_LOW, 'pkt-rate-high': CoalesceAttr.PKT_RATE_HIGH,
    'rx-usecs-high': CoalesceAttr.RX_USECS_HIGH, 'rx-frames-high': CoalesceAttr.RX_MAX_FRAMES_HIGH,
    'tx-usecs-high': CoalesceAttr.TX_USECS_HIGH, 'tx-frames-high': CoalesceAttr.TX_MAX_FRAMES_HIGH,
    'sample-interval': CoalesceAttr.RATE_SAMPLE_INTERVAL,
    'cqe-mode-rx': CoalesceAttr.USE_CQE_MODE_RX, 'cqe-mode-tx': CoalesceAttr.USE_CQE_MODE_TX,
    'tx-aggr-max-bytes': CoalesceAttr.TX_AGGR_MAX_BYTES,
    'tx-aggr-max-frames': CoalesceAttr.TX_AGGR_MAX_FRAMES,
    'tx-aggr-time-usecs': CoalesceAttr.TX_AGGR_TIME_USECS,
}
"""`ethtool -C` argument names (ethtool's netlink/coalesce.c) -> attribute."""
_BOOL_ARGS = {CoalesceAttr.USE_ADAPTIVE_RX, CoalesceAttr.USE_ADAPTIVE_TX,
              CoalesceAttr.USE_CQE_MODE_RX, CoalesceAttr.USE_CQE_MODE_TX}
U32_MAX = 0xFFFF_FFFF


def parse_coalesce_args(args: str | list[str]) -> dict[CoalesceAttr, int]:
    """`ethtool -C DEV` arguments ("rx-usecs 8 rx-frames 16", "adaptive-rx off") -> the
    attributes of the request. EINVAL for an unknown name, a missing or bad value (ethtool
    itself refuses those before anything reaches the kernel)."""
    words = args.split() if isinstance(args, str) else list(args)
    if len(words) % 2:
        raise _einval(f'coalesce parameter {words[-1]!r} without a value')
    out: dict[CoalesceAttr, int] = {}
    for name, text in zip(words[::2], words[1::2]):
        attr = COALESCE_ARGS.get(name)
        if attr is None:
            raise _einval(f'unknown coalesce parameter {name!r}; known: {", ".join(COALESCE_ARGS)}')
        if attr in _BOOL_ARGS:
            if text not in ('on', 'off'):
                raise _einval(f'{name} {text!r}: on or off')
            out[attr] = int(text == 'on')
        else:
            if not text.isdigit() or int(text) > U32_MAX:
                raise _einval(f'{name} {text!r}: a number 0..{U32_MAX}')
            out[attr] = int(text)
    return out


def coalesce_attrs(attrs: Mapping[CoalesceAttr | str | int, int]) -> dict[CoalesceAttr, int]:
    """A request's attributes by `CoalesceAttr`, attribute number or `ethtool -C` name; each
    value a u32 (the netlink policy: NLA_U32, NLA_U8 for the flags). EINVAL otherwise."""
    out: dict[CoalesceAttr, int] = {}
    for key, value in attrs.items():
        try:
            attr = COALESCE_ARGS[key] if isinstance(key, str) else CoalesceAttr(key)
        except (KeyError, ValueError):
            raise _einval(f'unknown coalesce attribute {key!r}') from None
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= U32_MAX:
            raise _einval(f'{attr.name} = {value!r}: a u32')
        out[attr] = value
    return out
