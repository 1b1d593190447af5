"""Where each n-tuple rule sits in the NIC's steering hash table (docs/rss.md section 4).

The NIC holds rules in two banks of buckets of two slots; a key can only sit in bucket h0(key)
of bank 0 or h1(key) of bank 1 (two-choice "cuckoo" hashing on a CRC-32C of the key). The
driver decides where every key goes, and in what order the slots are written, so that a frame
classified at any moment sees either the old or the new rule set:

- a rule is only ever written into an empty slot, and a slot only cleared; never is a valid
  slot overwritten by another rule;
- several rules with the same key: only the lowest location is in the table; the others wait
  here and the next one
  is put in (into another slot, then the old one cleared) when the winner goes; while both
  are in, either may answer a lookup, and either is right for that moment;
- room for a key is made by moving other keys to their other bucket, each move a copy into an
  empty slot followed by a clear (the moved rule is in the table throughout), found by a
  breadth-first search of at most `MAX_MOVES` moves.

`SteerSlots` only plans: `add` / `delete` return the slot operations (`SlotOp`) to perform in
order and update the plan's view of the table; nothing here touches hardware (`NtupleRules`
in driver/ethtool.py turns the operations into register writes; tests/rtl/test_rx_classify.py
into port writes). The CRC here is the driver's own, written from docs/rss.md.
"""
from __future__ import annotations

import collections
from dataclasses import dataclass

CRC32C_POLY = 0x1EDC6F41
BANKS = 2
WAYS = 2
MAX_MOVES = 16
"""Longest chain of moves tried before a key is refused (ENOSPC)."""


def _table() -> list[int]:
    out = []
    for b in range(256):
        c = b << 24
        for _ in range(8):
            c = ((c << 1) ^ CRC32C_POLY) & 0xFFFF_FFFF if c & 0x8000_0000 else (c << 1) & 0xFFFF_FFFF
        out.append(c)
    return out


_TABLE = _table()


def crc32c_msb(data: bytes) -> int:
    """CRC-32C (polynomial 0x1EDC6F41), most significant bit first, initial 0, no final XOR."""
    crc = 0
    for byte in data:
        crc = ((crc << 8) & 0xFFFF_FFFF) ^ _TABLE[(crc >> 24) ^ byte]
    return crc


ACTION_CTX_SHIFT = 8
ACTION_CTX_EN = 1 << 12


def slot_action(queue: int, context: int | None = None) -> int:
    """A slot's action as `STEER_ENTRY_ACTION` bits [12:0] hold it: `queue` [7:0] and, for a
    rule that spreads with an RSS context (ethtool `context K`), `ctx` [11:8] = K and
    `ctx_en` [12] (docs/rss.md section 3a; the queue is then the offset)."""
    if context is None:
        return queue
    return queue | context << ACTION_CTX_SHIFT | ACTION_CTX_EN


def action_fields(action: int) -> tuple[int, int, int]:
    """(queue, ctx, ctx_en) of a `slot_action` value."""
    return action & 0xFF, (action >> ACTION_CTX_SHIFT) & 0xF, int(bool(action & ACTION_CTX_EN))


@dataclass(frozen=True)
class SlotEntry:
    """What a slot holds: the 38-byte key, the action (`slot_action`: the queue, and the RSS
    context of a rule that has one; called `queue` as it is one for most rules) and the
    rule's location."""

    key: bytes
    queue: int
    loc: int


@dataclass(frozen=True)
class SlotOp:
    """Write `entry` into slot (bank, bucket, way), or clear it when `entry` is None."""

    bank: int
    bucket: int
    way: int
    entry: SlotEntry | None


class NoRoom(Exception):
    """No sequence of at most MAX_MOVES moves frees a slot for the key."""


class SteerSlots:
    """The driver's plan of the steering table: rules by location and the slot of each key."""

    def __init__(self, buckets: int) -> None:
        if buckets < 1 or buckets & (buckets - 1):
            raise ValueError(f'buckets={buckets}: a power of two')
        self.buckets = buckets
        self.slots: dict[tuple[int, int, int], SlotEntry] = {}
        self.where: dict[bytes, tuple[int, int, int]] = {}      # key -> its slot
        self.rules: dict[int, tuple[bytes, int]] = {}           # loc -> (key, queue)
        self.by_key: dict[bytes, list[int]] = collections.defaultdict(list)

    def bucket(self, key: bytes, bank: int) -> int:
        crc = crc32c_msb(key)
        return (crc if bank == 0 else crc >> 16) % self.buckets

    # --- public -----------------------------------------------------------------------------
    def add(self, loc: int, key: bytes, queue: int) -> list[SlotOp]:
        """Put the rule at `loc` (replacing any rule there); the slot operations, in order.
        Raises NoRoom (and changes nothing) if the key cannot be placed."""
        saved = self._save()
        try:
            old = self.rules.get(loc)
            if old is not None:
                self.by_key[old[0]].remove(loc)
            self.rules[loc] = (key, queue)
            self.by_key[key].append(loc)
            self.by_key[key].sort()
            ops = self._refresh(key)
            if old is not None and old[0] != key:
                ops += self._refresh(old[0])
            return ops
        except NoRoom:
            self._restore(saved)
            raise

    def delete(self, loc: int) -> list[SlotOp]:
        """Remove the rule at `loc` (KeyError if none); the slot operations, in order."""
        key, _ = self.rules.pop(loc)
        self.by_key[key].remove(loc)
        return self._refresh(key)

    def clear(self) -> None:
        self.slots.clear()
        self.where.clear()
        self.rules.clear()
        self.by_key.clear()

    # --- planning ---------------------------------------------------------------------------
    def _winner(self, key: bytes) -> SlotEntry | None:
        locs = self.by_key.get(key)
        if not locs:
            return None
        loc = locs[0]
        return SlotEntry(key, self.rules[loc][1], loc)

    def _refresh(self, key: bytes) -> list[SlotOp]:
        """Bring the table in line with the winning rule of `key`."""
        want = self._winner(key)
        have_at = self.where.get(key)
        have = self.slots.get(have_at) if have_at is not None else None
        if want == have:
            return []
        ops: list[SlotOp] = []
        if want is not None:
            ops += self._make_room(key)
            dest = self._free_slot(key)
            assert dest is not None
            ops.append(self._put(dest, want))
        if have_at is not None:
            ops.append(self._take(have_at))       # after the new winner is in: no gap
        if want is None:
            self.where.pop(key, None)
            self.by_key.pop(key, None)
        return ops

    def _put(self, slot: tuple[int, int, int], entry: SlotEntry) -> SlotOp:
        assert slot not in self.slots
        self.slots[slot] = entry
        self.where[entry.key] = slot
        return SlotOp(*slot, entry)

    def _take(self, slot: tuple[int, int, int]) -> SlotOp:
        del self.slots[slot]
        return SlotOp(*slot, None)

    def _free_slot(self, key: bytes) -> tuple[int, int, int] | None:
        for bank in range(BANKS):
            b = self.bucket(key, bank)
            for way in range(WAYS):
                if (bank, b, way) not in self.slots:
                    return (bank, b, way)
        return None

    def _make_room(self, key: bytes) -> list[SlotOp]:
        """Moves (copy into an empty slot, then clear) that free a slot in one of `key`'s
        buckets; [] if one is free already. The key itself is never moved."""
        if self._free_slot(key) is not None:
            return []
        start = [(bank, self.bucket(key, bank)) for bank in range(BANKS)]
        # BFS over buckets; an edge moves an occupant of a bucket to its other bucket.
        parent: dict[tuple[int, int], tuple[tuple[int, int], tuple[int, int, int]] | None] = {
            s: None for s in start}
        queue = collections.deque((s, 0) for s in start)
        found = None
        while queue and found is None:
            (bank, b), depth = queue.popleft()
            if depth >= MAX_MOVES:
                continue
            for way in range(WAYS):
                slot = (bank, b, way)
                occ = self.slots[slot]
                if occ.key == key:
                    continue
                other = (1 - bank, self.bucket(occ.key, 1 - bank))
                if other in parent:
                    continue
                parent[other] = ((bank, b), slot)
                if any((other[0], other[1], w) not in self.slots for w in range(WAYS)):
                    found = other
                    break
                queue.append((other, depth + 1))
        if found is None:
            raise NoRoom(f'no free slot for the key within {MAX_MOVES} moves')
        # Walk back: each step moves the occupant of `slot` into the free way of `dest`.
        ops: list[SlotOp] = []
        dest = found
        while (step := parent[dest]) is not None:
            prev, slot = step
            entry = self.slots[slot]
            way = next(w for w in range(WAYS) if (dest[0], dest[1], w) not in self.slots)
            ops.append(self._put((dest[0], dest[1], way), entry))
            ops.append(self._take(slot))
            dest = prev
        return ops

    def _save(self):
        return (dict(self.slots), dict(self.where), dict(self.rules),
                {k: list(v) for k, v in self.by_key.items()})

    def _restore(self, saved) -> None:
        self.slots, self.where, self.rules, by_key = saved
        self.by_key = collections.defaultdict(list, by_key)
