"""Golden model of the NIC's TX path (docs/tx.md), at transaction level.

Two levels, as `models.nic_model` for RX:

- Pure functions, no memory and no state: `ones_complement_sum` and `l4_checksum` (docs/tx.md,
  "Checksum offload"; RFC 1071), `pseudo_header_sum` (the seed a driver writes, RFC 793/768/
  8200), `parse_frame` (a frame's descriptors and inline header entries, "Inline headers"),
  `frame_extent` (which ring entries make the next frame, "Rings and registers") and
  `check_frame` (the descriptor rules of "Bad input", in the table's order).
- `TxEngine`: the registers of every `TXQ[t]`, the counters, descriptor fetch through a
  `models.bus.DmaAddressSpace`, segment gathering, checksum patching, completions with
  generation bits, round robin between queues, and `tx_irq`. `run()` returns one `TxOutcome`
  per frame, in the order the NIC finishes them; the sent ones are what leaves `m_axis_tx`.

The model is synchronous: a frame it starts is finished (read, checked, sent or failed, its
completion written) within the same call, so `STATUS.busy` always reads 0. Modelling choices
are listed in `TxEngine`'s docstring and in docs/tx.md ("Golden model").
"""
from __future__ import annotations

import ipaddress
import itertools
import struct
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from models.bus import DmaAddressSpace, DmaError
from models.formats import (TX_COAL_MAX, TX_DESC_BYTES, TX_FIFO_KIB, TX_FRAME_LIMIT_RESET,
                            TX_INLINE_MAX, TX_MAX_SEGS, TX_MIN_FRAME_LEN, TX_SEG_MAX_LEN,
                            TX_SEG_PAGE, TX_TSO_MAX_SEGS, TxCompletion, TxDesc, TxStatus,
                            TxTsoCtx)
from models.tso import TsoSend, tso_segments, tso_sent_bounds, tso_status

IDX_MASK = 0xFFFF
"""Ring indices are free-running 16-bit counters (dma-formats.md, Rings)."""
COUNTER_MASK = 0xFFFF_FFFF
"""TX counters wrap at 2^32 (docs/tx.md, "Rings and registers")."""

TX_COUNTER_NAMES: tuple[str, ...] = (
    'TX_FRAMES',
    'TX_BYTES',
    'TX_ERR_BAD_SEG',
    'TX_ERR_BAD_LEN',
    'TX_ERR_BAD_CSUM',
    'TX_DMA_RD_ERR',
    'TX_DESC_RD_ERR',
)
"""Counter names, identical to the register names in `driver.regs`."""

TSO_COUNTER_NAMES: tuple[str, ...] = (
    'TX_TSO_SENDS',
    'TX_TSO_SEGS',
    'TX_ERR_TSO_HDR',
    'TX_ERR_TSO_LEN',
    'TX_ERR_TSO_MSS',
)
"""The TSO counters of docs/tx.md ("TCP segmentation offload"), identical to the register
names in `driver.regs` (0x19C on); `NicModel` maps them (0 while `tso` is off)."""

STATUS_COUNTER: dict[TxStatus, str] = {
    TxStatus.OK: 'TX_FRAMES',
    TxStatus.BAD_SEG: 'TX_ERR_BAD_SEG',
    TxStatus.BAD_LEN: 'TX_ERR_BAD_LEN',
    TxStatus.BAD_CSUM: 'TX_ERR_BAD_CSUM',
    TxStatus.DMA_RD_ERR: 'TX_DMA_RD_ERR',
    TxStatus.DESC_RD_ERR: 'TX_DESC_RD_ERR',
    TxStatus.TSO_BAD_HDR: 'TX_ERR_TSO_HDR',
    TxStatus.TSO_BAD_LEN: 'TX_ERR_TSO_LEN',
    TxStatus.TSO_BAD_MSS: 'TX_ERR_TSO_MSS',
}
"""The counter of each status (docs/tx.md, "Bad input" table): every frame counts in exactly
one of them."""

IPPROTO_TCP = 6
IPPROTO_UDP = 17
CSUM_OFFSET_TCP = 16
"""`csum_offset` of TCP (docs/tx.md, "TX descriptor")."""
CSUM_OFFSET_UDP = 6
"""`csum_offset` of UDP."""


# ------------------------------------------------------------------------------------------
# Checksum (docs/tx.md, "Checksum offload (Linux CHECKSUM_PARTIAL)"; RFC 1071)
# ------------------------------------------------------------------------------------------

def _fold(total: int) -> int:
    """End-around carry until the sum fits 16 bits (RFC 1071 section 4.1)."""
    while total > 0xFFFF:
        total = (total & 0xFFFF) + (total >> 16)
    return total


def ones_complement_sum(data: bytes | bytearray | memoryview, initial: int = 0) -> int:
    """The folded 16-bit ones'-complement sum of `data` read as big-endian 16-bit words, an
    odd last byte padded with a zero byte (RFC 1071), plus `initial`. Not complemented."""
    raw = bytes(data)
    if len(raw) % 2:
        raw += b'\x00'
    # Deferring the carries to the end is allowed (RFC 1071 section 2, "Deferred carries").
    total = initial + sum(struct.unpack(f'>{len(raw) // 2}H', raw))
    return _fold(total)


def l4_checksum(frame: bytes | bytearray, csum_start: int, csum_offset: int,
                udp: bool = False) -> tuple[bytes, int]:
    """Apply docs/tx.md's checksum offload to `frame`: return the patched frame and the
    checksum written.

    1. Sum `frame[csum_start:]` (the seed the driver wrote in the checksum field included) in
       ones'-complement arithmetic; 2. complement; with `udp`, 0x0000 becomes 0xFFFF;
    3. write it big-endian at `csum_start + csum_offset`.

    Raises `ValueError` if the field does not fit the frame: the NIC answers that with
    `BAD_CSUM` (see `check_frame`), so it is a misuse of this function.
    """
    frame = bytes(frame)
    pos = csum_start + csum_offset
    if csum_start < 0 or csum_offset < 0 or pos + 2 > len(frame):
        raise ValueError(f'checksum field at {csum_start}+{csum_offset} does not fit a '
                         f'{len(frame)}-byte frame')
    csum = ~ones_complement_sum(frame[csum_start:]) & 0xFFFF
    if udp and csum == 0:
        csum = 0xFFFF
    return frame[:pos] + csum.to_bytes(2, 'big') + frame[pos + 2:], csum


def pseudo_header_sum(src: str | bytes | ipaddress.IPv4Address | ipaddress.IPv6Address,
                      dst: str | bytes | ipaddress.IPv4Address | ipaddress.IPv6Address,
                      proto: int, l4_len: int) -> int:
    """The seed of CHECKSUM_PARTIAL: the folded, **not** complemented, ones'-complement sum of
    the pseudo-header (source and destination address, protocol, L4 length), as Linux writes
    it into the checksum field (docs/tx.md; RFC 793, RFC 768, RFC 8200 section 8.1).

    Addresses may be strings, packed bytes (4 or 16) or `ipaddress` objects; both must be of
    the same family.
    """
    def packed(a: str | bytes | ipaddress.IPv4Address | ipaddress.IPv6Address) -> bytes:
        if isinstance(a, (bytes, bytearray)):
            if len(a) not in (4, 16):
                raise ValueError(f'packed address of {len(a)} bytes (4 or 16)')
            return bytes(a)
        return ipaddress.ip_address(a).packed

    s, d = packed(src), packed(dst)
    if len(s) != len(d):
        raise ValueError('source and destination addresses of different families')
    if not 0 <= proto <= 0xFF:
        raise ValueError(f'proto={proto} out of range 0..255')
    if not 0 <= l4_len <= 0xFFFF_FFFF:
        raise ValueError(f'l4_len={l4_len} out of range')
    # IPv4: zero, proto, 16-bit length; IPv6: 32-bit length, 3 zero bytes, next header.
    # Either way the sum is that of the addresses + proto + length.
    tail = (l4_len.to_bytes(4, 'big') + bytes(3) + bytes([proto]) if len(s) == 16
            else bytes([0, proto]) + l4_len.to_bytes(2, 'big'))
    return ones_complement_sum(s + d + tail)


# ------------------------------------------------------------------------------------------
# Descriptor rules (docs/tx.md, "Rings and registers" and "Bad input")
# ------------------------------------------------------------------------------------------

Entry = TxDesc | bytes | None
"""A ring entry as the NIC read it: a descriptor (`TxDesc`, or its 16 raw bytes), the raw bytes
of an inline header entry, or None when its read failed (docs/tx.md, "Bad input")."""


def _desc(entry: TxDesc | bytes) -> TxDesc:
    return entry if isinstance(entry, TxDesc) else TxDesc.unpack(bytes(entry))


def inline_entries(inline_len: int) -> int:
    """Ring entries of an inline header of `inline_len` bytes: 16 bytes each."""
    return -(-inline_len // TX_DESC_BYTES)


def seg_is_bad(desc: TxDesc, first_inline: bool = False) -> bool:
    """BAD_SEG for one segment: `len == 0` (allowed on the first descriptor of an `INLINE`
    frame: no segment), `len > 4096`, or `[addr, addr + len)` crossing a 4 KiB boundary."""
    if desc.len == 0:
        return not first_inline
    if desc.len > TX_SEG_MAX_LEN:
        return True
    return desc.addr // TX_SEG_PAGE != (desc.addr + desc.len - 1) // TX_SEG_PAGE


@dataclass
class ParsedFrame:
    """The ring entries of one frame, sorted out (docs/tx.md, "Inline headers")."""

    entries: int
    """Ring entries the frame takes: its descriptors and inline header entries."""
    descs: list[TxDesc | None]
    """Its descriptors in order (None: read failed); the first one is `descs[0]`."""
    inline: list[bytes | None]
    """The raw inline header entries (None: read failed)."""
    inline_len: int
    """Bytes of the inline header (0 without `INLINE`)."""
    inline_on: bool = False
    """The first descriptor's `INLINE` is honoured (its `len` may be 0)."""
    tso_on: bool = False
    """The first descriptor's `TSO` is honoured: the entry after it is a TSO context."""
    tso_ctx: TxTsoCtx | None = None
    """The TSO context entry (None: its read failed, or no `TSO`)."""

    @property
    def desc_err(self) -> bool:
        return (any(d is None for d in self.descs) or any(e is None for e in self.inline)
                or (self.tso_on and self.tso_ctx is None))

    def header(self) -> bytes:
        """The inline header bytes (every inline entry read)."""
        raw = b''.join(e for e in self.inline if e is not None)
        return raw[:self.inline_len]


def parse_frame(entries: Sequence[Entry], max_segs: int = TX_MAX_SEGS,
                inline_en: bool = True, tso: bool = False) -> ParsedFrame | None:
    """The frame at the start of the posted ring entries `entries`, or None when its end is not
    posted yet (the NIC waits). `inline_en` is the queue's `CTRL.inline_en`: without it
    `INLINE` and `inline_len` are ignored. `tso`: the NIC has TSO (`TX_OFFLOADS.tso`);
    without it the `TSO` bit is ignored, as the reserved bit it was. With it a first
    descriptor with `TSO` is followed by its context entry (before any inline entries) and
    the send may have `TX_TSO_MAX_SEGS` descriptors instead of `max_segs`.

    The first entry is a descriptor. With `INLINE` (and `inline_len` > 0) the next
    `ceil(inline_len / 16)` entries are its inline header, whatever their bytes; the entries
    after them are descriptors. The frame ends at the first descriptor with `EOP`, at a
    descriptor whose read failed, or at its `max_segs`-th descriptor (then BAD_SEG). A failed
    read of the first descriptor ends the frame there (its inline length is unknown)."""
    if max_segs < 1:
        raise ValueError(f'max_segs={max_segs} must be >= 1')
    if not entries:
        return None
    first = entries[0]
    if first is None:
        return ParsedFrame(1, [None], [], 0)
    d0 = _desc(first)
    honoured = inline_en and d0.inline
    tso_on = tso and d0.tso
    c = 1 if tso_on else 0
    hlen = d0.inline_len if honoured else 0
    k = inline_entries(hlen)
    if len(entries) < 1 + c + k:
        return None
    ctx: TxTsoCtx | None = None
    if tso_on and entries[1] is not None:
        e1 = entries[1]
        ctx = TxTsoCtx.unpack(e1.pack() if isinstance(e1, TxDesc) else bytes(e1))
    inline = [None if e is None else (e.pack() if isinstance(e, TxDesc) else bytes(e))
              for e in entries[1 + c:1 + c + k]]
    descs: list[TxDesc | None] = [d0]
    limit = TX_TSO_MAX_SEGS if tso_on else max_segs
    pos = 1 + c + k
    while True:
        last = descs[-1]
        if last is None or last.eop or len(descs) == limit:
            return ParsedFrame(pos, descs, inline, hlen, honoured, tso_on, ctx)
        if pos >= len(entries):
            return None
        e = entries[pos]
        descs.append(None if e is None else _desc(e))
        pos += 1


def frame_extent(entries: Sequence[Entry], max_segs: int = TX_MAX_SEGS,
                 inline_en: bool = True, tso: bool = False) -> int | None:
    """How many of the posted ring entries `entries` (in ring order) the next frame takes, or
    None when the NIC cannot start it yet (see `parse_frame`)."""
    f = parse_frame(entries, max_segs, inline_en, tso)
    return None if f is None else f.entries


def effective_frame_limit(max_frame_len: int, fifo_bytes: int) -> int:
    """`TX_FRAME_LIMIT.max_frame_len`, values above the TX FIFO acting as the FIFO size."""
    return min(max_frame_len, fifo_bytes)


def frame_length(frame: ParsedFrame) -> int:
    """The frame's length: inline header bytes plus every segment (read descriptors only)."""
    return frame.inline_len + sum(d.len for d in frame.descs if d is not None)


def check_frame(entries: Sequence[Entry] | ParsedFrame, frame_limit: int = TX_FRAME_LIMIT_RESET,
                fifo_bytes: int = TX_FIFO_KIB * 1024,
                max_segs: int = TX_MAX_SEGS, inline_en: bool = True,
                tso: bool = False) -> TxStatus:
    """The status the descriptor rules give the frame made of `entries` (exactly the frame's
    ring entries, as `frame_extent` cut them; None is an entry whose read failed; or the
    `ParsedFrame`), or `OK` when the frame may be read.

    docs/tx.md, "Bad input", in the table's order: BAD_SEG (a bad segment, or `max_segs`
    descriptors without EOP), BAD_LEN (< 60 or > the effective frame limit, or an inline
    header over `TX_INLINE_MAX`), BAD_CSUM. A frame holding a failed read (descriptor,
    inline entry or TSO context) is DESC_RD_ERR before anything else. DMA_RD_ERR comes from
    reading the segments, which only a frame passing these rules does. A `TSO` send (with
    `tso`) follows docs/tx.md "TCP segmentation offload" instead: BAD_SEG, TSO_BAD_HDR,
    TSO_BAD_LEN, TSO_BAD_MSS (`models.tso.tso_status`).
    """
    if isinstance(entries, ParsedFrame):
        frame = entries
    else:
        if not entries:
            raise ValueError('a frame has at least one descriptor')
        parsed = parse_frame(entries, max_segs, inline_en, tso)
        if parsed is None or parsed.entries != len(entries):
            raise ValueError(f'{len(entries)} entries are not exactly one frame')
        frame = parsed
    if frame.desc_err:
        return TxStatus.DESC_RD_ERR
    good: list[TxDesc] = [d for d in frame.descs if d is not None]
    first = good[0]
    segs_ok = not (any(seg_is_bad(d, frame.inline_on and i == 0) for i, d in enumerate(good))
                   or not good[-1].eop)
    length = frame_length(frame)
    if frame.tso_on:
        assert frame.tso_ctx is not None
        return tso_status(TsoSend(first, frame.tso_ctx, frame.inline_len, length), segs_ok,
                          effective_frame_limit(frame_limit, fifo_bytes))
    if not segs_ok:
        return TxStatus.BAD_SEG
    if (length < TX_MIN_FRAME_LEN or length > effective_frame_limit(frame_limit, fifo_bytes)
            or frame.inline_len > TX_INLINE_MAX):
        return TxStatus.BAD_LEN
    if first.csum and (first.csum_start % 2 or first.csum_offset % 2
                       or first.csum_start + first.csum_offset + 2 > length):
        return TxStatus.BAD_CSUM
    return TxStatus.OK


# ------------------------------------------------------------------------------------------
# Queue state and the engine
# ------------------------------------------------------------------------------------------

@dataclass
class TxRing:
    """One ring's registers: `BASE`, `SIZE.log2_entries`, `SW_IDX`, `HW_IDX`."""

    name: str
    base: int = 0
    log2_entries: int = 0
    sw_idx: int = 0
    hw_idx: int = 0

    @property
    def size(self) -> int:
        """Entries in the ring, `2^log2_entries`."""
        return 1 << self.log2_entries

    def entry_addr(self, idx: int) -> int:
        """Entry `idx` lives at `base + 16 * (idx mod size)`."""
        return self.base + TX_DESC_BYTES * (idx % self.size)

    @property
    def posted(self) -> int:
        """Descriptor ring: `SW_IDX - HW_IDX` (mod 2^16), at most the ring size."""
        return min(self.size, (self.sw_idx - self.hw_idx) & IDX_MASK)

    @property
    def cq_free(self) -> int:
        """Completion ring: room for `size - (HW_IDX - SW_IDX)` more (never negative)."""
        return max(0, self.size - ((self.hw_idx - self.sw_idx) & IDX_MASK))

    def gen(self, idx: int) -> int:
        """Generation bit of entry `idx`: `1 - ((idx / size) mod 2)`."""
        return 1 - ((idx // self.size) % 2)


class TxQueueState:
    """Registers and fetched descriptors of one TX queue (`TXQ[t]`, docs/tx.md)."""

    def __init__(self, index: int) -> None:
        self.index = index
        self._enable = False
        self.inline_en = False
        """`CTRL.inline_en`: INLINE is honoured; a failed first descriptor halts the queue."""
        self.halted = False
        """`STATUS.halted` (docs/tx.md, "Inline headers")."""
        self.desc_ring = TxRing('DESC_RING')
        self.cq = TxRing('CQ')
        self.irq_armed = False
        self.dma_wr_err = False
        self.fetch_idx = 0
        self.fetched: deque[tuple[int, bytes | None]] = deque()
        """Ring entries read and not consumed: (index, 16 raw bytes or None if the read failed).
        Whether an entry is a descriptor or inline header bytes is decided when its frame is
        parsed (`parse_frame`)."""
        self.coal_usecs = 0
        """`COALESCE.usecs` (ethtool `tx-usecs`): stored; see `TxEngine` for what the model does."""
        self.coal_frames = 1
        """`COALESCE.frames` (ethtool `tx-frames`), reset 1."""

    @property
    def enable(self) -> bool:
        return self._enable

    @enable.setter
    def enable(self, value: bool) -> None:
        """`CTRL.enable`. The model has no frame in flight between calls, so clearing it makes
        `busy` 0 at once and the hardware indices are held at zero (docs/tx.md)."""
        self._enable = bool(value)
        if not self._enable:
            self.desc_ring.hw_idx = 0
            self.cq.hw_idx = 0
            self.fetch_idx = 0
            self.fetched.clear()
            self.irq_armed = False
            self.halted = False

    @property
    def busy(self) -> bool:
        """`STATUS.busy`: a frame started and not completed; never between model calls."""
        return False


@dataclass
class TxOutcome:
    """One frame the engine finished: its completion and, if sent, the bytes on the wire."""

    queue: int
    completion: TxCompletion
    cq_idx: int
    """Free-running CQ index the completion was written at."""
    descs: list[TxDesc | None] = field(default_factory=list)
    """The frame's descriptors (None: read failed); inline header entries are not among them."""
    frame: bytes | None = None
    """The bytes sent on `m_axis_tx` (checksum patched); None when the frame failed, and for
    a `TSO` send (its frames are `segments`)."""
    cpl_write_failed: bool = False
    segments: list[bytes] = field(default_factory=list)
    """A `TSO` send: the TCP segments sent on `m_axis_tx`, in order (also those sent before a
    DMA_RD_ERR)."""
    segments_max: int = 0
    """A `TSO` send ending in DMA_RD_ERR: the most segments the RTL may have sent (it may
    send those holding bytes of the failed segment read before the failing beat; the model
    sends `len(segments)`, the fewest: docs/tx.md, rule 5)."""

    @property
    def wire_frames(self) -> list[bytes]:
        """Every frame this outcome put on `m_axis_tx`, in order."""
        return [self.frame] if self.frame is not None else list(self.segments)

    @property
    def status(self) -> TxStatus:
        return self.completion.status

    @property
    def sent(self) -> bool:
        return self.completion.status == TxStatus.OK


class TxEngine:
    """The TX path of docs/tx.md: queues, counters, DMA, completions, round robin, tx_irq.

    Modelling choices where docs/tx.md leaves room (the normative ones are written there):

    - Descriptor fetch: every posted ring entry (`DESC_RING.SW_IDX` beyond what is fetched,
      at most one ring's worth ahead of `HW_IDX`) is read, one 16-byte read each, when the
      queue is considered for a frame. A failed read is remembered as `None` and ends the
      frame it falls in (DESC_RD_ERR; in an inline header it only marks the frame). Entries
      are read once: rewriting a posted entry has no effect once fetched.
    - A frame starts only when `frame_extent` says it is complete and the CQ has room for
      one completion; a full CQ makes the queue wait (no descriptor consumed).
    - Segments of a frame passing `check_frame` are read in order, one read per segment; the
      first `DmaError` makes the frame DMA_RD_ERR and the rest are not read.
    - `TSO` sends (with `tso`): the segments are read in order, one read per segment; the
      first `DmaError` sends the TCP segments made of bytes before the failed read (the
      fewest docs/tx.md allows; `TxOutcome.segments_max` is the most).
    - Completions are one 16-byte write; a failed write sets `STATUS.dma_wr_err` and
      `CQ.HW_IDX` still advances.
    - Round robin: `rr_next` is the queue looked at first; after a frame of queue `t` it is
      `t + 1` (mod `num_txq`).
    - Completion moderation (`COALESCE`): the model finishes every frame it starts within one
      call, so rule 4 of docs/tx.md ("no other frame started") writes each batch before the
      call returns: completions appear exactly as without moderation, which is what a
      driver sees of the RTL once the NIC is idle. The registers are stored and read back.
    """

    def __init__(self, dma: DmaAddressSpace, num_txq: int = 4, max_segs: int = TX_MAX_SEGS,
                 fifo_kib: int = TX_FIFO_KIB, tso: bool = False) -> None:
        if not 1 <= num_txq <= 8:
            raise ValueError(f'num_txq={num_txq} out of range 1..8')
        if not 1 <= max_segs <= 0xFF:
            raise ValueError(f'max_segs={max_segs} out of range 1..255')
        if not 1 <= fifo_kib <= 0xFF:
            raise ValueError(f'fifo_kib={fifo_kib} out of range 1..255')
        self.dma = dma
        self.num_txq = num_txq
        self.max_segs = max_segs
        self.fifo_kib = fifo_kib
        self.tso = tso
        """The NIC has TSO (`TX_OFFLOADS.tso`, docs/tx.md "TCP segmentation offload"):
        without it the `TSO` bit is ignored, as the RTL before TSO did."""
        self.queues: list[TxQueueState] = []
        self.max_frame_len = TX_FRAME_LIMIT_RESET
        self.counters: dict[str, int] = {}
        self.rr_next = 0
        self.reset()

    def reset(self) -> None:
        """Every queue disabled, indices and counters zero, frame limit 1522."""
        self.queues = [TxQueueState(t) for t in range(self.num_txq)]
        self.max_frame_len = TX_FRAME_LIMIT_RESET
        self.counters = {name: 0 for name in TX_COUNTER_NAMES + TSO_COUNTER_NAMES}
        self.rr_next = 0

    @property
    def fifo_bytes(self) -> int:
        return 1024 * self.fifo_kib

    @property
    def frame_limit(self) -> int:
        """The longest frame sent: `max_frame_len`, capped at the FIFO size."""
        return effective_frame_limit(self.max_frame_len, self.fifo_bytes)

    @property
    def frames_seen(self) -> int:
        """Frames finished, sent or failed: the sum of the per-status counters (a `TSO` send
        counts its segments in `TX_FRAMES` and itself in `TX_TSO_SENDS` or its error)."""
        return sum(self.counters[n] for n in STATUS_COUNTER.values())

    def _count(self, name: str, n: int = 1) -> None:
        self.counters[name] = (self.counters[name] + n) & COUNTER_MASK

    # --- fetch and readiness --------------------------------------------------------------

    def fetch(self, q: TxQueueState) -> None:
        """Read the posted ring entries of `q` not yet fetched."""
        ring = q.desc_ring
        while (q.fetch_idx != ring.sw_idx
               and ((q.fetch_idx - ring.hw_idx) & IDX_MASK) < ring.size):
            idx = q.fetch_idx
            raw: bytes | None
            try:
                raw = bytes(self.dma.read(ring.entry_addr(idx), TX_DESC_BYTES))
            except DmaError:
                raw = None
            q.fetched.append((idx, raw))
            q.fetch_idx = (idx + 1) & IDX_MASK

    def ready(self, queue: int) -> int | None:
        """Ring entries of the frame queue `queue` can start now, or None (disabled, frame
        not complete, or completion ring full)."""
        q = self.queues[queue]
        if not q.enable or q.halted:
            return None
        self.fetch(q)
        if q.cq.cq_free < 1:
            return None
        # a frame's most entries: descriptors, a TSO context, inline entries
        most = max(self.max_segs, TX_TSO_MAX_SEGS) + 1 + inline_entries(0xFF)
        head = itertools.islice(q.fetched, most)
        return frame_extent([e for _, e in head], self.max_segs, q.inline_en, self.tso)

    # --- one frame ------------------------------------------------------------------------

    def _gather(self, descs: list[TxDesc]) -> bytes | None:
        parts = []
        for d in descs:
            try:
                parts.append(self.dma.read(d.addr, d.len))
            except DmaError:
                return None
        return b''.join(parts)

    def process_frame(self, queue: int, ndesc: int) -> TxOutcome:
        """Consume the next `ndesc` fetched ring entries of `queue` as one frame: check, read,
        checksum, count, write the completion. The caller has checked `ready`."""
        q = self.queues[queue]
        taken = [q.fetched.popleft() for _ in range(ndesc)]
        desc_idx = taken[0][0]
        parsed = parse_frame([e for _, e in taken], self.max_segs, q.inline_en, self.tso)
        assert parsed is not None and parsed.entries == ndesc
        if parsed.descs[0] is None and q.inline_en:
            q.halted = True
        descs = parsed.descs
        status = check_frame(parsed, self.max_frame_len, self.fifo_bytes, self.max_segs)
        if parsed.tso_on and status != TxStatus.DESC_RD_ERR:
            return self._process_tso(queue, ndesc, desc_idx, parsed, status)
        frame: bytes | None = None
        csum = 0
        length = tag = 0
        if status != TxStatus.DESC_RD_ERR:
            length = frame_length(parsed)
            tag = parsed.descs[0].tag if parsed.descs[0] is not None else 0
        if status == TxStatus.OK:
            good = [d for d in descs if d is not None and d.len]
            data = self._gather(good)
            if data is None:
                status = TxStatus.DMA_RD_ERR
            else:
                data = parsed.header() + data
                first = descs[0]
                assert first is not None
                if first.csum:
                    data, csum = l4_checksum(data, first.csum_start, first.csum_offset,
                                             first.csum_udp)
                frame = data
        q.desc_ring.hw_idx = (q.desc_ring.hw_idx + ndesc) & IDX_MASK
        if status == TxStatus.OK:
            assert frame is not None
            self._count('TX_FRAMES')
            self._count('TX_BYTES', len(frame))
        else:
            self._count(STATUS_COUNTER[status])
        cpl = TxCompletion(desc_idx=desc_idx, ndesc=ndesc, len=length & 0xFFFF, tag=tag,
                           csum=csum, status=status, queue=queue)
        cq_idx, failed = self._write_completion(q, cpl)
        return TxOutcome(queue=queue, completion=cpl, cq_idx=cq_idx, descs=descs, frame=frame,
                         cpl_write_failed=failed)

    def _write_completion(self, q: TxQueueState, cpl: TxCompletion) -> tuple[int, bool]:
        """Write `cpl` (its `gen` set here) at the queue's next CQ slot; advance `CQ.HW_IDX`.
        Returns the slot's free-running index and whether the write failed."""
        cq_idx = q.cq.hw_idx
        cpl.gen = q.cq.gen(cq_idx)
        failed = False
        try:
            self.dma.write(q.cq.entry_addr(cq_idx), cpl.pack())
        except DmaError:
            q.dma_wr_err = True
            failed = True
        q.cq.hw_idx = (cq_idx + 1) & IDX_MASK
        return cq_idx, failed

    def _process_tso(self, queue: int, ndesc: int, desc_idx: int, parsed: ParsedFrame,
                     status: TxStatus) -> TxOutcome:
        """A `TSO` send whose descriptors and context entry were read (docs/tx.md, "TCP
        segmentation offload"): check, read, cut, count, one completion."""
        q = self.queues[queue]
        first = parsed.descs[0]
        ctx = parsed.tso_ctx
        assert first is not None and ctx is not None
        send_len = frame_length(parsed)
        payload = max(0, send_len - ctx.hdr_len)
        segments: list[bytes] = []
        seg_max = 0
        if status == TxStatus.OK:
            good = [d for d in parsed.descs if d is not None and d.len]
            parts = [parsed.header()] if parsed.inline_len else []
            failed_at: int | None = None
            for d in good:
                try:
                    parts.append(self.dma.read(d.addr, d.len))
                except DmaError:
                    failed_at = len(parts)
                    break
            lens = ([parsed.inline_len] if parsed.inline_len else []) + [d.len for d in good]
            data = b''.join(parts)
            # Unread bytes are zeros: only segments made of read bytes are kept.
            cut = tso_segments(data + bytes(send_len - len(data)), first, ctx)
            if failed_at is None:
                segments = cut
            else:
                status = TxStatus.DMA_RD_ERR
                lo, seg_max = tso_sent_bounds(lens, failed_at, ctx)
                segments = cut[:lo]
        q.desc_ring.hw_idx = (q.desc_ring.hw_idx + ndesc) & IDX_MASK
        for seg in segments:
            self._count('TX_FRAMES')
            self._count('TX_BYTES', len(seg))
        self._count('TX_TSO_SEGS', len(segments))
        self._count('TX_TSO_SENDS' if status == TxStatus.OK else STATUS_COUNTER[status])
        cpl = TxCompletion(desc_idx=desc_idx, ndesc=ndesc, len=payload & 0xFFFF, tag=first.tag,
                           csum=0, tso_segs=len(segments), status=status, queue=queue)
        cq_idx, failed = self._write_completion(q, cpl)
        return TxOutcome(queue=queue, completion=cpl, cq_idx=cq_idx, descs=parsed.descs,
                         cpl_write_failed=failed, segments=segments,
                         segments_max=max(seg_max, len(segments)))

    # --- scheduling -----------------------------------------------------------------------

    def step(self) -> TxOutcome | None:
        """One frame from the next queue, round robin, that can start one; None if none can."""
        for k in range(self.num_txq):
            t = (self.rr_next + k) % self.num_txq
            ndesc = self.ready(t)
            if ndesc is not None:
                self.rr_next = (t + 1) % self.num_txq
                return self.process_frame(t, ndesc)
        return None

    def run(self, max_frames: int | None = None) -> list[TxOutcome]:
        """Frames until no queue can start one (or `max_frames`), in the order finished."""
        out: list[TxOutcome] = []
        while max_frames is None or len(out) < max_frames:
            o = self.step()
            if o is None:
                break
            out.append(o)
        return out

    def irq_fire(self, queue: int) -> bool:
        """`tx_irq[queue]`: fires, and disarms, when armed and the completion ring holds a
        completion the driver has not consumed (docs/tx.md, as for RX)."""
        q = self.queues[queue]
        if q.enable and q.irq_armed and q.cq.hw_idx != q.cq.sw_idx:
            q.irq_armed = False
            return True
        return False
