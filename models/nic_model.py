"""Golden model of the NIC's RX path at transaction level.

Written from docs/rx-rules.md (what happens to every frame) and docs/dma-formats.md (rings,
descriptors, completions); register names and offsets come from `driver.regs` (generated from
the register map, docs/registers.md).

Two levels:

- `expected_placement(frame, cfg)`: a pure function, no memory, no state. It applies the
  ingress rules (section 1), the parse (section 2) and the queue/split decision (section 3)
  and says which bytes go to the header buffer and which to payload buffers. The buffer and
  completion-ring checks of section 4 depend on ring state and are not part of it.
- `NicModel`: register state, counters and the DMA. `receive(frame)` fetches descriptors from
  the rings in memory, applies the section 4 checks, writes header, payload and completions
  through a `models.bus.DmaAddressSpace` and advances the hardware indices, as the RTL must.
  `mmio_read` / `mmio_write` expose the same state at the register offsets of `driver.regs`,
  so a driver can program the model as it programs the hardware.

The TX path (docs/tx.md) is `models.tx.TxEngine`, owned by `NicModel` as `tx`: its
registers (`TX_CAPS`, `TX_FRAME_LIMIT`, `TX_*` counters, `TXQ[t]`) are in `mmio_read` /
`mmio_write`, and `transmit()` runs it.

Modelling choices where the documents leave room are listed in `NicModel`'s docstring.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from driver import regs
from models.bus import DmaAddressSpace, DmaError
from models.formats import (DESC_BYTES, FLAG_HDR_OVERFLOW, FLAG_HDR_VALID, FLAG_SPLIT,
                            RX_MPB_MAX_STRIDES, RX_MPB_MIN_STRIDE_LOG2, RxCompletion, RxDesc)
from models.rss import Classifier as RssClassifier
from models.rx_parser import (DEFAULT_PARSE_BYTES, MIN_PARSE_BYTES, ParseResult,
                              parse_frame)
from models.formats import TX_COAL_MAX, TX_INLINE_MAX
from models.tx import TSO_COUNTER_NAMES, TX_COUNTER_NAMES, TxEngine, TxOutcome, TxQueueState, TxRing

MIN_FRAME_BYTES = 60
"""Shorter frames are runts (rx-rules.md section 1, rule 2)."""
IDX_MASK = 0xFFFF
"""Ring indices are free-running 16-bit counters (dma-formats.md, Rings)."""
ID_MAGIC_VALUE = 0x444D4E43
"""`ID.magic` ('DMNC'), docs/registers.md."""
VERSION_MAJOR_VALUE = 0
VERSION_MINOR_VALUE = 3
MAX_FRAME_LEN_RESET = 0x5F2
HDR_BUF_BYTES_RESET = 0x100
PAY_BUF_LOG2_RESET = 12
PAY_STRIDE_LOG2_RESET = 6
COALESCE_FRAMES_RESET = 1
CPL_BATCH_MAX = 16
"""`RXQ.COALESCE.frames_max`: completions one batch holds (rx-rules.md section 5)."""
AXI_BOUNDARY = 4096
AXI_MAX_BEATS = 256

COUNTER_NAMES: tuple[str, ...] = (
    'RX_FRAMES',
    'RX_DROP_RUNT',
    'RX_DROP_FCS',
    'RX_DROP_OVERSIZE',
    'RX_DROP_FIFO',
    'RX_DROP_HDR_ERR',
    'RX_DROP_QUEUE_OFF',
    'RX_DROP_NO_HDR_BUF',
    'RX_DROP_NO_PAY_BUF',
    'RX_DROP_CQ_FULL',
    'RX_DMA_WR_ERR',
    'RX_DMA_RD_ERR',
    'RX_DESC_ERR',
    'RX_VLAN',
    'RX_QINQ',
    'RX_NON_IP',
    'RX_IPV4_OPTIONS',
    'RX_IPV6_EXT',
    'RX_IP_FRAG',
    'RX_HDR_OVERFLOW',
)
"""Counter names, identical to the register names in `driver.regs`."""
FRAME_COUNTERS: tuple[str, ...] = tuple(
    n for n in COUNTER_NAMES if n == 'RX_FRAMES' or n.startswith('RX_DROP_'))
"""The counters of which exactly one counts each frame (rx-rules.md, introduction)."""
INFO_COUNTERS: tuple[str, ...] = ('RX_VLAN', 'RX_QINQ', 'RX_NON_IP', 'RX_IPV4_OPTIONS',
                                  'RX_IPV6_EXT', 'RX_IP_FRAG', 'RX_HDR_OVERFLOW')
"""Counters of frame properties (registers.md); a frame may count in several or none."""

_COUNTER_BY_ADDR = {getattr(regs, name): name for name in COUNTER_NAMES}
_TX_COUNTER_BY_ADDR = {getattr(regs, name): name for name in TX_COUNTER_NAMES + TSO_COUNTER_NAMES}


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def mpb_stride_log2(pay_buf_log2: int, setting: int) -> int:
    """The stride a queue with multi-packet payload buffers uses (rx-rules.md, "Multi-packet
    payload buffers"): `BUF_SIZE.pay_stride_log2` clamped to at least 16 bytes, at most
    256 strides per buffer and at most the buffer."""
    max_strides_log2 = RX_MPB_MAX_STRIDES.bit_length() - 1
    return min(pay_buf_log2, max(RX_MPB_MIN_STRIDE_LOG2, pay_buf_log2 - max_strides_log2, setting))


@dataclass
class MpbCursor:
    """A queue's current multi-packet payload buffer and the strides used in it
    (rx-rules.md, "Multi-packet payload buffers"). `buf` is whatever the owner names a buffer
    by (the model a descriptor, a scoreboard a buffer id); None: no current buffer."""

    buf_log2: int = PAY_BUF_LOG2_RESET
    stride_log2: int = PAY_STRIDE_LOG2_RESET
    buf: object | None = None
    used: int = 0

    def fits(self, payload_len: int) -> bool:
        """A payload of `payload_len` (> 0) bytes goes into the rest of the current buffer."""
        return (self.buf is not None and payload_len > 0
                and payload_len <= (1 << self.buf_log2) - (self.used << self.stride_log2))

    def strides(self, n: int) -> int:
        return -(-n // (1 << self.stride_log2))

    def place(self, payload_len: int) -> int:
        """Put a payload that `fits` into the current buffer; its stride offset."""
        assert self.fits(payload_len)
        off = self.used
        self.used += self.strides(payload_len)
        return off

    def start(self, buf: object, last_piece_len: int) -> None:
        """A frame took new buffers: the last one (`buf`, `last_piece_len` bytes) becomes
        the current buffer."""
        self.buf = buf
        self.used = self.strides(last_piece_len)

    def reset(self) -> None:
        self.buf = None
        self.used = 0


# ------------------------------------------------------------------------------------------
# Pure placement
# ------------------------------------------------------------------------------------------

@dataclass
class PlacementConfig:
    """The configuration `expected_placement` depends on: one queue's registers plus the
    global frame limit and the parser window."""

    enable: bool = True
    split_en: bool = False
    hds_thresh: int = 0
    hdr_buf_bytes: int = HDR_BUF_BYTES_RESET
    pay_buf_log2: int = PAY_BUF_LOG2_RESET
    max_frame_len: int = MAX_FRAME_LEN_RESET
    parse_bytes: int = DEFAULT_PARSE_BYTES
    pay_mpb: bool = False
    pay_stride_log2: int = PAY_STRIDE_LOG2_RESET
    """Multi-packet payload buffers (the setting; `stride_log2` is what the NIC uses).
    They do not change what `expected_placement` says, only which buffers and offsets the
    payload pieces take (`MpbCursor`)."""

    @property
    def pay_buf_bytes(self) -> int:
        return 1 << self.pay_buf_log2

    @property
    def stride_log2(self) -> int:
        return mpb_stride_log2(self.pay_buf_log2, self.pay_stride_log2)

    def mpb_cursor(self) -> MpbCursor:
        """An empty cursor for a queue with these settings."""
        return MpbCursor(self.pay_buf_log2, self.stride_log2)


@dataclass
class Placement:
    """Where a frame's bytes go, before the ring checks of rx-rules.md section 4.

    `drop_counter` names the counter of a drop decided by sections 1-3 (ingress, parse,
    queue off), else None. For a delivered frame, `hdr_bytes` is what the header buffer gets
    (empty unless split) and `payload_bytes` what the payload buffers get, in order.
    """

    drop_counter: str | None
    queue: int | None
    parse: ParseResult | None
    split: bool = False
    hdr_overflow: bool = False
    hdr_bytes: bytes = b''
    payload_bytes: bytes = b''
    pay_buf_bytes: int = 1 << PAY_BUF_LOG2_RESET

    @property
    def dropped(self) -> bool:
        return self.drop_counter is not None

    @property
    def hdr_len(self) -> int:
        return len(self.hdr_bytes)

    @property
    def flags(self) -> int:
        """Frame-level completion flags (byte 14): SPLIT, HDR_VALID, HDR_OVERFLOW. SOP, EOP
        and PAY_VALID differ per completion (see `completions`)."""
        return ((FLAG_SPLIT | FLAG_HDR_VALID if self.split else 0)
                | (FLAG_HDR_OVERFLOW if self.hdr_overflow else 0))

    @property
    def payload_len(self) -> int:
        return len(self.payload_bytes)

    @property
    def n_pay_bufs(self) -> int:
        """`ceil(P / B)` payload buffers (section 4)."""
        return _ceil_div(self.payload_len, self.pay_buf_bytes)

    @property
    def n_completions(self) -> int:
        """`max(1, ceil(P / B))` completions (section 4)."""
        return max(1, self.n_pay_bufs)

    def payload_pieces(self) -> list[bytes]:
        """The payload cut per buffer: each full but the last."""
        b = self.pay_buf_bytes
        return [self.payload_bytes[i:i + b] for i in range(0, self.payload_len, b)]

    def completions(self, hdr_buf_id: int, pay_buf_ids: list[int], cq_idx: int,
                    cq_size: int, rss_hash: int = 0, rss_type: int = 0,
                    pay_offs: list[int] | None = None) -> list[RxCompletion]:
        """The completions of this frame, the first written at free-running CQ index
        `cq_idx` of a ring of `cq_size` entries (which sets each one's GEN). `pay_offs` are
        the pieces' stride offsets (multi-packet buffers; default all 0)."""
        if self.dropped:
            raise ValueError(f'a dropped frame ({self.drop_counter}) has no completions')
        pieces = self.payload_pieces()
        if len(pay_buf_ids) != len(pieces):
            raise ValueError(f'{len(pieces)} payload buffers needed, {len(pay_buf_ids)} given')
        offs = pay_offs if pay_offs is not None else [0] * len(pieces)
        if len(offs) != len(pieces):
            raise ValueError(f'{len(pieces)} payload pieces, {len(offs)} offsets given')
        assert self.parse is not None and self.queue is not None
        p = self.parse
        out = []
        n = self.n_completions
        for i in range(n):
            idx = (cq_idx + i) & IDX_MASK
            has_pay = i < len(pieces)
            out.append(RxCompletion(
                pay_buf_id=pay_buf_ids[i] if has_pay else 0,
                pay_len=len(pieces[i]) if has_pay else 0,
                hdr_buf_id=hdr_buf_id if self.split else 0,
                hdr_len=self.hdr_len,
                pay_off=offs[i] if has_pay else 0,
                rss_hash=rss_hash,
                rss_type=rss_type,
                l3_type=p.l3_type,
                l4_type=p.l4_type,
                ip_frag=p.ip_frag,
                vlan_tags=p.vlan_tags,
                sop=i == 0,
                eop=i == n - 1,
                split=self.split,
                hdr_valid=self.split,
                pay_valid=has_pay,
                hdr_overflow=self.hdr_overflow,
                queue=self.queue,
                gen=1 - ((idx // cq_size) % 2),
            ))
        return out


def expected_placement(frame: bytes, cfg: PlacementConfig, bad_fcs: bool = False,
                       queue: int = 0) -> Placement:
    """Apply rx-rules.md sections 1-3 to `frame` (no FCS) under `cfg`; touches no memory.

    Section 1 (ingress): bad FCS, then runt (< 60 bytes), then oversize
    (> `max_frame_len`); the FIFO never overflows in the model. Section 2: parse, header
    error. Section 3: queue (`queue`, as the classifier chose it) and split: a frame is split
    when `split_en`, it is IPv4/IPv6 and its length is greater than `hds_thresh`; then
    `hdr_len = pay_off` unless that exceeds the header buffer or the parse window
    (HDR_OVERFLOW, delivered whole). A split frame's payload is `[hdr_len, ip_end)` (no
    Ethernet padding); an unsplit frame's payload is the whole frame.
    """
    frame = bytes(frame)
    length = len(frame)

    def drop(counter: str, parse: ParseResult | None = None) -> Placement:
        return Placement(drop_counter=counter, queue=None, parse=parse,
                         pay_buf_bytes=cfg.pay_buf_bytes)

    if bad_fcs:
        return drop('RX_DROP_FCS')
    if length < MIN_FRAME_BYTES:
        return drop('RX_DROP_RUNT')
    if length > cfg.max_frame_len:
        return drop('RX_DROP_OVERSIZE')
    parse = parse_frame(frame, cfg.parse_bytes)
    if parse.hdr_err:
        return drop('RX_DROP_HDR_ERR', parse)
    if not cfg.enable:
        return Placement(drop_counter='RX_DROP_QUEUE_OFF', queue=queue, parse=parse,
                         pay_buf_bytes=cfg.pay_buf_bytes)
    split = overflow = False
    if cfg.split_en and parse.is_ip and length > cfg.hds_thresh:
        pay_off = parse.pay_off
        if (pay_off is None or pay_off > cfg.hdr_buf_bytes
                or pay_off > cfg.parse_bytes):
            overflow = True
        else:
            split = True
    if split:
        assert parse.pay_off is not None and parse.ip_end is not None
        hdr, payload = frame[:parse.pay_off], frame[parse.pay_off:parse.ip_end]
    else:
        hdr, payload = b'', frame
    return Placement(drop_counter=None, queue=queue, parse=parse, split=split,
                     hdr_overflow=overflow, hdr_bytes=hdr, payload_bytes=payload,
                     pay_buf_bytes=cfg.pay_buf_bytes)


# ------------------------------------------------------------------------------------------
# Register state
# ------------------------------------------------------------------------------------------

@dataclass
class RingState:
    """One ring's registers (`BASE`, `SIZE`, `SW_IDX`, `HW_IDX`) plus, for buffer rings, the
    descriptors fetched but not yet consumed."""

    name: str
    base: int = 0
    log2_entries: int = 0
    sw_idx: int = 0
    hw_idx: int = 0
    fetch_idx: int = 0
    prefetched: deque[tuple[int, RxDesc | None]] = field(default_factory=deque)

    @property
    def size(self) -> int:
        """Entries in the ring, `2^log2_entries`."""
        return 1 << self.log2_entries

    def entry_addr(self, idx: int) -> int:
        """Entry `idx` lives at `base + 16 * (idx mod size)`."""
        return self.base + DESC_BYTES * (idx % self.size)

    @property
    def posted(self) -> int:
        """Buffer ring: `SW_IDX - HW_IDX` (mod 2^16) descriptors posted and not consumed."""
        return (self.sw_idx - self.hw_idx) & IDX_MASK

    @property
    def cq_free(self) -> int:
        """Completion ring: room for `size - (HW_IDX - SW_IDX)` more (never negative)."""
        return max(0, self.size - ((self.hw_idx - self.sw_idx) & IDX_MASK))

    @property
    def good_prefetched(self) -> int:
        return sum(1 for _, d in self.prefetched if d is not None)

    def reset_hw(self) -> None:
        """Queue disabled: hardware index held at zero, fetched descriptors forgotten."""
        self.hw_idx = 0
        self.fetch_idx = 0
        self.prefetched.clear()


class RxQueue:
    """Registers of one RX queue (`RXQ[q]` in docs/registers.md)."""

    def __init__(self, index: int) -> None:
        self.index = index
        self._enable = False
        self.split_en = False
        self.hds_thresh = 0
        self.hdr_buf_bytes = HDR_BUF_BYTES_RESET
        self.pay_buf_log2 = PAY_BUF_LOG2_RESET
        self.pay_mpb = False
        self.pay_stride_log2 = PAY_STRIDE_LOG2_RESET
        self.coalesce_usecs = 0
        self.coalesce_frames = COALESCE_FRAMES_RESET
        self.mpb = MpbCursor()
        """The current multi-packet payload buffer (its descriptor) and its used strides."""
        self.hdr_ring = RingState('HDR_RING')
        self.pay_ring = RingState('PAY_RING')
        self.cq = RingState('CQ')
        self.irq_armed = False
        self.dma_wr_err = False

    @property
    def rings(self) -> tuple[RingState, RingState, RingState]:
        return self.hdr_ring, self.pay_ring, self.cq

    @property
    def enable(self) -> bool:
        return self._enable

    @enable.setter
    def enable(self, value: bool) -> None:
        """`CTRL.enable`; while 0 the hardware indices are held at zero."""
        self._enable = bool(value)
        if not self._enable:
            for ring in self.rings:
                ring.reset_hw()
            self.irq_armed = False
            self.mpb.reset()

    @property
    def pay_buf_bytes(self) -> int:
        return 1 << self.pay_buf_log2

    @property
    def stride_log2(self) -> int:
        return mpb_stride_log2(self.pay_buf_log2, self.pay_stride_log2)


@dataclass
class RxOutcome:
    """What `NicModel.receive` did with one frame."""

    dropped: bool
    drop_counter: str | None
    queue: int | None
    split: bool = False
    hdr_overflow: bool = False
    hdr_len: int = 0
    payload_len: int = 0
    completions: list[RxCompletion] = field(default_factory=list)
    hdr_bytes: bytes = b''
    """Bytes written to the header buffer (empty unless split)."""
    payload_bytes: bytes = b''
    """Bytes written to the payload buffers, concatenated in completion order."""
    parse: ParseResult | None = None
    hdr_buf: RxDesc | None = None
    pay_bufs: list[RxDesc] = field(default_factory=list)
    cq_indices: list[int] = field(default_factory=list)
    """Free-running CQ indices the completions were written at."""
    pay_offs: list[int] = field(default_factory=list)
    """Stride offset of each payload piece in its buffer (0 without multi-packet buffers)."""
    dma_write_errors: int = 0


DEFAULT_DESC_CACHE = 16
"""Payload descriptors the NIC can hold prefetched (rx-rules.md section 4): a frame needing
more payload buffers than this is dropped as RX_DROP_NO_PAY_BUF."""


def ring_check_drop(pl: Placement, n_pay_new: int, hdr_posted: int, pay_posted: int, cq_free: int,
                    desc_cache: int = DEFAULT_DESC_CACHE) -> str | None:
    """rx-rules.md section 4's checks, in their order, for a frame that passed sections 1-3:
    the counter of the drop (`RX_DROP_NO_HDR_BUF`, `_NO_PAY_BUF`, `_CQ_FULL`), or None when
    the queue can take it. `n_pay_new` is the payload buffers it needs (`pl.n_pay_bufs`, or 0
    when its payload fits the current multi-packet buffer); the others are what the queue
    has: header and payload descriptors posted, free completion entries."""
    if pl.split and hdr_posted == 0:
        return 'RX_DROP_NO_HDR_BUF'
    if pay_posted < n_pay_new or n_pay_new > desc_cache:
        return 'RX_DROP_NO_PAY_BUF'
    if cq_free < pl.n_completions:
        return 'RX_DROP_CQ_FULL'
    return None


@dataclass(frozen=True)
class Classification:
    """Where queue selection (RSS, flow steering) sent a frame."""

    queue: int = 0
    rss_hash: int = 0
    rss_type: int = 0
    steered: bool = False


def property_counts(parse: ParseResult) -> dict[str, int]:
    """The RX_* information counters a frame the ingress kept adds to (registers.md);
    RX_HDR_OVERFLOW is counted at delivery instead."""
    return {
        'RX_VLAN': int(parse.vlan_tags > 0),
        'RX_QINQ': int(parse.vlan_tags == 2),
        'RX_NON_IP': int(not parse.is_ip),
        'RX_IPV4_OPTIONS': int(parse.ipv4_options),
        'RX_IPV6_EXT': int(parse.ipv6_ext),
        'RX_IP_FRAG': int(parse.ip_frag),
    }


class ClassificationLike(Protocol):
    """What the model reads of a classifier's answer (`Classification`, or
    `models.rss.Classification`, whose `rss_type` is an `RssType`)."""

    @property
    def queue(self) -> int: ...

    @property
    def rss_hash(self) -> int: ...

    @property
    def rss_type(self) -> int: ...

    @property
    def steered(self) -> bool: ...


class Classifier(Protocol):
    """Queue selection plugged into the model (RSS and flow steering implement it)."""

    def classify_frame(self, frame: bytes, parse: ParseResult, num_queues: int) -> ClassificationLike: ...

    def mmio_read(self, addr: int) -> int | None: ...

    def mmio_write(self, addr: int, value: int) -> bool: ...


def _ring_reg_read(ring: RingState | TxRing, roff: int) -> int:
    """A ring register (`RING_*` offset `roff`) of an RX or TX ring (dma-formats.md, Rings)."""
    if roff == regs.RING_BASE_LO:
        return ring.base & 0xFFFFFFFF
    if roff == regs.RING_BASE_HI:
        return ring.base >> 32
    if roff == regs.RING_SIZE:
        return ring.log2_entries
    if roff == regs.RING_SW_IDX:
        return ring.sw_idx
    if roff == regs.RING_HW_IDX:
        return ring.hw_idx
    return 0


class NicModel:
    """The NIC's RX path: registers, counters, descriptor fetch, placement and completions.

    `dma` is the address space the NIC masters; descriptors and completions are read and
    written there as the RTL does. Modelling choices where the documents leave room:

    - Descriptor fetch: the model fetches every posted descriptor (`SW_IDX` beyond what it has
      fetched, at most one ring's worth ahead of `HW_IDX`) when the doorbell is written
      through `mmio_write` and again at the start of each `receive`. A descriptor with a DMA
      read error (`RX_DMA_RD_ERR`) or a misaligned `addr` (`RX_DESC_ERR`) is counted when
      fetched, and counted as consumed at once: `HW_IDX` is the number of descriptors consumed
      (used or skipped), not a position in ring order (registers.md). A frame needs that many
      *good* fetched descriptors, so a bad one can turn into `RX_DROP_NO_*_BUF`.
    - DMA bursts: each write (header, each payload buffer, each completion) is cut at 4 KiB
      boundaries and at `max_burst_bytes` (default 256 beats of `dma_bytes`); each failing
      piece counts once in `RX_DMA_WR_ERR`, and the frame carries on.
    - Completion batches (`RXQ.COALESCE`, rx-rules.md section 5) change when completions
      appear, never what they hold: the model, which has no time, writes a frame's
      completions and moves `CQ.HW_IDX` when it receives the frame. `COALESCE` is kept and
      read back; `frames_max` reads `cpl_batch`.
    - Multi-packet payload buffers: the current buffer is the descriptor itself (`RxQueue.mpb`),
      forgotten when the queue is disabled; changing `pay_mpb`, the stride or the buffer size
      while it is enabled applies from the next frame on.
    - Every completion of a frame repeats `hdr_buf_id`, `hdr_len`, the parse fields and the
      SPLIT/HDR_VALID/HDR_OVERFLOW flags; `pay_buf_id`/`pay_len` are 0 when not PAY_VALID
      and `hdr_buf_id` is 0 when not HDR_VALID.
    - Registers of queues `>= num_rxq` are unmapped (read 0, writes ignored). Counters are
      32-bit, read-only and not cleared by reading. Register values are used as written,
      without clamping (a `SIZE.log2_entries` of 0 is a one-entry ring).
    - TX (docs/tx.md, `models.tx`): with `tx_autorun` (the default) writing a TX queue's
      `DESC_RING.SW_IDX` or `CQ.SW_IDX`, or setting its `CTRL.enable`, runs `transmit()`
      before the write returns; with `tx_autorun = False` nothing is sent until `transmit()`
      is called (a test holding the port to queue work on several queues). Every finished
      frame is handed to `on_tx` (sent or failed, in order). `TXQ[t]` for `t >= num_txq`
      reads 0 and ignores writes; `STATUS.busy` reads 0 (no frame is in flight between
      calls).
    """

    def __init__(self, dma: DmaAddressSpace, num_rxq: int = 1,
                 parse_bytes: int = DEFAULT_PARSE_BYTES, dma_bytes: int = 8, data_bytes: int = 8,
                 max_burst_bytes: int | None = None, desc_cache: int = DEFAULT_DESC_CACHE,
                 num_txq: int = 4, cpl_batch: int = CPL_BATCH_MAX) -> None:
        if not 1 <= num_rxq <= regs.RXQ_MAX:
            raise ValueError(f'num_rxq={num_rxq} out of range 1..{regs.RXQ_MAX}')
        for name, value in (('dma_bytes', dma_bytes), ('data_bytes', data_bytes)):
            if value <= 0 or value & (value - 1) or value > 128:
                raise ValueError(f'{name}={value} must be a power of two <= 128')
        if not MIN_PARSE_BYTES <= parse_bytes <= 255:
            raise ValueError(f'parse_bytes={parse_bytes} out of range {MIN_PARSE_BYTES}..255')
        self.dma = dma
        self.num_rxq = num_rxq
        self.parse_bytes = parse_bytes
        self.dma_bytes = dma_bytes
        self.data_bytes = data_bytes
        self.max_burst_bytes = max_burst_bytes or AXI_MAX_BEATS * dma_bytes
        self.desc_cache = desc_cache
        self.cpl_batch = cpl_batch
        # RSS and flow steering (models/rss.py): registers at their own addresses, and the
        # queue each frame goes to.
        self.classifier: Classifier | None = RssClassifier(num_rxq)
        self.rxq: list[RxQueue] = []
        self.max_frame_len = MAX_FRAME_LEN_RESET
        self.counters: dict[str, int] = {}
        # TX (docs/tx.md): the engine, and where its finished frames go.
        self.tx = TxEngine(dma, num_txq=num_txq)
        self.tx_autorun = True
        self.on_tx: Callable[[TxOutcome], None] | None = None
        self.reset()

    def reset(self) -> None:
        """Registers and counters to their reset values."""
        self.rxq = [RxQueue(q) for q in range(self.num_rxq)]
        self.max_frame_len = MAX_FRAME_LEN_RESET
        self.counters = {name: 0 for name in COUNTER_NAMES}
        self.tx.reset()

    @property
    def num_txq(self) -> int:
        return self.tx.num_txq

    @property
    def txq(self) -> list[TxQueueState]:
        """The TX queues' state (`models.tx.TxQueueState`)."""
        return self.tx.queues

    # --- configuration views --------------------------------------------------------------

    def placement_config(self, queue: int = 0) -> PlacementConfig:
        """The `PlacementConfig` of `queue` as currently programmed."""
        q = self.rxq[queue]
        return PlacementConfig(enable=q.enable, split_en=q.split_en, hds_thresh=q.hds_thresh,
                               hdr_buf_bytes=q.hdr_buf_bytes, pay_buf_log2=q.pay_buf_log2,
                               max_frame_len=self.max_frame_len, parse_bytes=self.parse_bytes,
                               pay_mpb=q.pay_mpb, pay_stride_log2=q.pay_stride_log2)

    @property
    def frames_seen(self) -> int:
        """Sum of the per-frame counters: every frame counted exactly once."""
        return sum(self.counters[n] for n in FRAME_COUNTERS)

    # --- descriptor fetch -----------------------------------------------------------------

    def _count(self, name: str, n: int = 1) -> None:
        self.counters[name] += n

    def _fetch(self, ring: RingState) -> None:
        while (ring.fetch_idx != ring.sw_idx
               and ((ring.fetch_idx - ring.hw_idx) & IDX_MASK) < ring.size):
            idx = ring.fetch_idx
            desc: RxDesc | None
            try:
                raw = self.dma.read(ring.entry_addr(idx), DESC_BYTES)
            except DmaError:
                self._count('RX_DMA_RD_ERR')
                desc = None
            else:
                desc = RxDesc.unpack(raw)
                if desc.addr % self.dma_bytes:
                    self._count('RX_DESC_ERR')
                    desc = None
            ring.fetch_idx = (idx + 1) & IDX_MASK
            if desc is None:
                # A skipped descriptor counts as consumed at once (HW_IDX is a count).
                ring.hw_idx = (ring.hw_idx + 1) & IDX_MASK
            else:
                ring.prefetched.append((idx, desc))

    def _take(self, ring: RingState) -> RxDesc:
        _, desc = ring.prefetched.popleft()
        assert desc is not None
        ring.hw_idx = (ring.hw_idx + 1) & IDX_MASK
        return desc

    def _count_properties(self, parse: ParseResult) -> None:
        for name, n in property_counts(parse).items():
            self._count(name, n)

    def irq_fire(self, queue: int) -> bool:
        """The interrupt of `queue` (registers.md, IRQ): fires, and disarms, when armed and
        the completion ring holds a completion the driver has not consumed."""
        q = self.rxq[queue]
        if q.enable and q.irq_armed and q.cq.hw_idx != q.cq.sw_idx:
            q.irq_armed = False
            return True
        return False

    # --- the TX path (docs/tx.md) -----------------------------------------------------------

    def transmit_outcomes(self, max_frames: int | None = None) -> list[TxOutcome]:
        """Run the TX engine until no queue can start a frame (or `max_frames`); every frame
        finished, sent or failed, in order. Each is also handed to `on_tx`."""
        outcomes = self.tx.run(max_frames)
        if self.on_tx is not None:
            for o in outcomes:
                self.on_tx(o)
        return outcomes

    def transmit(self, max_frames: int | None = None) -> list[bytes]:
        """Run the TX engine (see `transmit_outcomes`); the frames sent on `m_axis_tx`, in
        order (checksums patched, failed frames left out, a `TSO` send's segments each)."""
        return [f for o in self.transmit_outcomes(max_frames) for f in o.wire_frames]

    def irq_fire_tx(self, queue: int) -> bool:
        """`tx_irq[queue]` (docs/tx.md): fires, and disarms, when armed and the completion ring
        holds a completion the driver has not consumed."""
        return self.tx.irq_fire(queue)

    def fetch_descriptors(self, queue: int | None = None) -> None:
        """Fetch what is posted on the buffer rings of `queue` (all enabled queues if None),
        as the RTL's prefetcher eventually does."""
        queues = self.rxq if queue is None else [self.rxq[queue]]
        for q in queues:
            if q.enable:
                self._fetch(q.hdr_ring)
                self._fetch(q.pay_ring)

    # --- DMA writes -----------------------------------------------------------------------

    def _bursts(self, addr: int, n: int) -> list[tuple[int, int]]:
        out = []
        end = addr + n
        while addr < end:
            limit = min(AXI_BOUNDARY - addr % AXI_BOUNDARY,
                        self.max_burst_bytes - addr % self.dma_bytes)
            k = min(limit, end - addr)
            out.append((addr, k))
            addr += k
        return out

    def _dma_write(self, addr: int, data: bytes) -> int:
        """Write `data` burst by burst; returns the number of failed bursts (counted)."""
        errors = 0
        pos = 0
        for a, k in self._bursts(addr, len(data)):
            try:
                self.dma.write(a, data[pos:pos + k])
            except DmaError:
                errors += 1
            pos += k
        self._count('RX_DMA_WR_ERR', errors)
        return errors

    # --- the RX path ----------------------------------------------------------------------

    def receive(self, frame: bytes, bad_fcs: bool = False) -> RxOutcome:
        """One frame (without FCS) through the RX path; `bad_fcs` is the MAC's `tuser`."""
        frame = bytes(frame)
        cls: ClassificationLike = Classification()
        if not bad_fcs and MIN_FRAME_BYTES <= len(frame) <= self.max_frame_len:
            # The ingress kept the frame: the parser sees it, classification picks its queue.
            parse = parse_frame(frame, self.parse_bytes)
            self._count_properties(parse)
            if self.classifier is not None and not parse.hdr_err:
                cls = self.classifier.classify_frame(frame, parse, self.num_rxq)
        queue = cls.queue
        pl = expected_placement(frame, self.placement_config(queue), bad_fcs, queue)
        if pl.drop_counter is not None:
            self._count(pl.drop_counter)
            return RxOutcome(dropped=True, drop_counter=pl.drop_counter, queue=pl.queue,
                             parse=pl.parse)
        q = self.rxq[queue]
        self._fetch(q.hdr_ring)
        self._fetch(q.pay_ring)

        def drop(counter: str) -> RxOutcome:
            self._count(counter)
            return RxOutcome(dropped=True, drop_counter=counter, queue=queue, split=pl.split,
                             hdr_overflow=pl.hdr_overflow, hdr_len=pl.hdr_len,
                             payload_len=pl.payload_len, parse=pl.parse)

        # Multi-packet payload buffers: a payload that fits the rest of the current buffer
        # takes no new buffer (rx-rules.md section 4, "Multi-packet payload buffers").
        mpb = q.mpb if q.pay_mpb else None
        if mpb is not None:
            mpb.buf_log2, mpb.stride_log2 = q.pay_buf_log2, q.stride_log2
        fits = mpb is not None and mpb.fits(pl.payload_len)
        n_new = 0 if fits else pl.n_pay_bufs
        counter = ring_check_drop(pl, n_new, q.hdr_ring.good_prefetched, q.pay_ring.good_prefetched,
                                  q.cq.cq_free, self.desc_cache)
        if counter is not None:
            return drop(counter)

        hdr_desc = self._take(q.hdr_ring) if pl.split else None
        pieces = pl.payload_pieces()
        if fits:
            assert mpb is not None and isinstance(mpb.buf, RxDesc)
            pay_descs = [mpb.buf]
            offs = [mpb.place(pl.payload_len)]
        else:
            pay_descs = [self._take(q.pay_ring) for _ in range(n_new)]
            offs = [0] * n_new
            if mpb is not None and pay_descs:
                mpb.start(pay_descs[-1], len(pieces[-1]))
        stride = 1 << q.stride_log2
        errors = 0
        if hdr_desc is not None:
            errors += self._dma_write(hdr_desc.addr, pl.hdr_bytes)
        for desc, off, piece in zip(pay_descs, offs, pieces):
            errors += self._dma_write(desc.addr + off * stride, piece)
        cq_idx = q.cq.hw_idx
        cpls = pl.completions(hdr_desc.buf_id if hdr_desc else 0,
                              [d.buf_id for d in pay_descs], cq_idx, q.cq.size,
                              rss_hash=cls.rss_hash, rss_type=cls.rss_type, pay_offs=offs)
        indices = []
        for cpl in cpls:
            idx = q.cq.hw_idx
            errors += self._dma_write(q.cq.entry_addr(idx), cpl.pack())
            indices.append(idx)
            q.cq.hw_idx = (idx + 1) & IDX_MASK
        self._count('RX_FRAMES')
        if pl.hdr_overflow:
            self._count('RX_HDR_OVERFLOW')
        if errors:
            q.dma_wr_err = True
        return RxOutcome(dropped=False, drop_counter=None, queue=queue, split=pl.split,
                         hdr_overflow=pl.hdr_overflow, hdr_len=pl.hdr_len,
                         payload_len=pl.payload_len, completions=cpls,
                         hdr_bytes=pl.hdr_bytes, payload_bytes=pl.payload_bytes,
                         parse=pl.parse, hdr_buf=hdr_desc, pay_bufs=pay_descs,
                         cq_indices=indices, pay_offs=offs, dma_write_errors=errors)

    # --- registers ------------------------------------------------------------------------

    _RING_OFFSETS = {regs.RXQ_HDR_RING: 'hdr_ring', regs.RXQ_PAY_RING: 'pay_ring',
                     regs.RXQ_CQ: 'cq'}

    def _decode_rxq(self, addr: int) -> tuple[RxQueue, int] | None:
        rel = addr - regs.RXQ_BASE
        if rel < 0 or rel >= regs.RXQ_MAX * regs.RXQ_STRIDE:
            return None
        qn, off = divmod(rel, regs.RXQ_STRIDE)
        if qn >= self.num_rxq:
            return None
        return self.rxq[qn], off

    def _ring_at(self, q: RxQueue, off: int) -> tuple[RingState, int] | None:
        for ring_off, attr in self._RING_OFFSETS.items():
            if ring_off <= off < ring_off + 0x20:
                return getattr(q, attr), off - ring_off
        return None

    def _decode_txq(self, addr: int) -> tuple[TxQueueState, int] | None:
        """`(queue, offset)` of an implemented `TXQ[t]` register, None otherwise."""
        rel = addr - regs.TXQ_BASE
        if rel < 0 or rel >= regs.TXQ_MAX * regs.TXQ_STRIDE:
            return None
        t, off = divmod(rel, regs.TXQ_STRIDE)
        if t >= self.tx.num_txq:
            return None
        return self.tx.queues[t], off

    @staticmethod
    def _tx_ring_at(q: TxQueueState, off: int) -> tuple[TxRing, int] | None:
        for ring_off, ring in ((regs.TXQ_DESC_RING, q.desc_ring), (regs.TXQ_CQ, q.cq)):
            if ring_off <= off < ring_off + 0x20:
                return ring, off - ring_off
        return None

    def _txq_read(self, q: TxQueueState, off: int) -> int:
        if off == regs.TXQ_CTRL:
            return regs.TXQ_CTRL_ENABLE.put(int(q.enable)) | regs.TXQ_CTRL_INLINE_EN.put(int(q.inline_en))
        if off == regs.TXQ_COALESCE:
            return (regs.TXQ_COALESCE_USECS.put(q.coal_usecs)
                    | regs.TXQ_COALESCE_FRAMES.put(q.coal_frames)
                    | regs.TXQ_COALESCE_FRAMES_MAX.put(TX_COAL_MAX))
        if off == regs.TXQ_IRQ:
            return regs.TXQ_IRQ_ARM.put(int(q.irq_armed))
        if off == regs.TXQ_STATUS:
            return (regs.TXQ_STATUS_DMA_WR_ERR.put(int(q.dma_wr_err))
                    | regs.TXQ_STATUS_BUSY.put(int(q.busy))
                    | regs.TXQ_STATUS_HALTED.put(int(q.halted)))
        ring_reg = self._tx_ring_at(q, off)
        if ring_reg is None:
            return 0
        return _ring_reg_read(*ring_reg)

    def _txq_write(self, q: TxQueueState, off: int, value: int) -> bool:
        """Apply a `TXQ[t]` register write; True when it may let the queue start a frame
        (doorbell, CQ space, enable)."""
        if off == regs.TXQ_CTRL:
            q.inline_en = bool(regs.TXQ_CTRL_INLINE_EN.get(value))
            q.enable = bool(regs.TXQ_CTRL_ENABLE.get(value))
            return q.enable
        if off == regs.TXQ_COALESCE:
            q.coal_usecs = regs.TXQ_COALESCE_USECS.get(value)
            q.coal_frames = regs.TXQ_COALESCE_FRAMES.get(value)
            return False
        if off == regs.TXQ_IRQ:
            q.irq_armed = bool(regs.TXQ_IRQ_ARM.get(value))
            return False
        if off == regs.TXQ_STATUS:
            if regs.TXQ_STATUS_DMA_WR_ERR.get(value):     # write 1 to clear
                q.dma_wr_err = False
            return False
        ring_reg = self._tx_ring_at(q, off)
        if ring_reg is None:
            return False
        ring, roff = ring_reg
        if roff == regs.RING_BASE_LO:
            ring.base = (ring.base & ~0xFFFFFFFF) | (value & ~0xF)   # 16-byte aligned
        elif roff == regs.RING_BASE_HI:
            ring.base = (ring.base & 0xFFFFFFFF) | (value << 32)
        elif roff == regs.RING_SIZE:
            ring.log2_entries = value & 0xF
        elif roff == regs.RING_SW_IDX:
            ring.sw_idx = value & IDX_MASK
            return q.enable
        return False

    @staticmethod
    def _check_mmio(addr: int, value: int | None = None) -> None:
        if addr < 0 or addr % 4:
            raise ValueError(f'MMIO address 0x{addr:x} is not a 32-bit register address')
        if value is not None and not 0 <= value <= 0xFFFFFFFF:
            raise ValueError(f'MMIO value {value} does not fit 32 bits')

    def mmio_read(self, addr: int) -> int:
        """Read the 32-bit register at `addr`; unmapped addresses read 0."""
        self._check_mmio(addr)
        if addr == regs.ID:
            return regs.ID_MAGIC.put(ID_MAGIC_VALUE)
        if addr == regs.VERSION:
            return (regs.VERSION_MAJOR.put(VERSION_MAJOR_VALUE)
                    | regs.VERSION_MINOR.put(VERSION_MINOR_VALUE))
        if addr == regs.CAPS:
            return (regs.CAPS_DATA_BYTES.put(self.data_bytes)
                    | regs.CAPS_DMA_BYTES.put(self.dma_bytes)
                    | regs.CAPS_NUM_RXQ.put(self.num_rxq)
                    | regs.CAPS_PARSE_BYTES.put(self.parse_bytes))
        if addr == regs.RX_FRAME_LIMIT:
            return regs.RX_FRAME_LIMIT_MAX_FRAME_LEN.put(self.max_frame_len)
        if addr in _COUNTER_BY_ADDR:
            return self.counters[_COUNTER_BY_ADDR[addr]] & 0xFFFFFFFF
        if addr == regs.TX_CAPS:
            return (regs.TX_CAPS_NUM_TXQ.put(self.tx.num_txq)
                    | regs.TX_CAPS_MAX_SEGS.put(self.tx.max_segs)
                    | regs.TX_CAPS_FIFO_KIB.put(self.tx.fifo_kib))
        if addr == regs.TX_FRAME_LIMIT:
            return regs.TX_FRAME_LIMIT_MAX_FRAME_LEN.put(self.tx.max_frame_len)
        if addr == regs.TX_OFFLOADS:
            return (regs.TX_OFFLOADS_INLINE_MAX.put(TX_INLINE_MAX)
                    | regs.TX_OFFLOADS_TSO.put(int(self.tx.tso)))
        if addr in _TX_COUNTER_BY_ADDR:
            return self.tx.counters[_TX_COUNTER_BY_ADDR[addr]] & 0xFFFFFFFF
        tx_decoded = self._decode_txq(addr)
        if tx_decoded is not None:
            return self._txq_read(*tx_decoded)
        if self.classifier is not None:
            value = self.classifier.mmio_read(addr)
            if value is not None:
                return value
        decoded = self._decode_rxq(addr)
        if decoded is None:
            return 0
        q, off = decoded
        if off == regs.RXQ_CTRL:
            return (regs.RXQ_CTRL_ENABLE.put(int(q.enable))
                    | regs.RXQ_CTRL_SPLIT_EN.put(int(q.split_en))
                    | regs.RXQ_CTRL_PAY_MPB.put(int(q.pay_mpb)))
        if off == regs.RXQ_COALESCE:
            return (regs.RXQ_COALESCE_USECS.put(q.coalesce_usecs)
                    | regs.RXQ_COALESCE_FRAMES.put(q.coalesce_frames)
                    | regs.RXQ_COALESCE_FRAMES_MAX.put(self.cpl_batch))
        if off == regs.RXQ_HDS_THRESH:
            return regs.RXQ_HDS_THRESH_BYTES.put(q.hds_thresh)
        if off == regs.RXQ_IRQ:
            return regs.RXQ_IRQ_ARM.put(int(q.irq_armed))
        if off == regs.RXQ_STATUS:
            return regs.RXQ_STATUS_DMA_WR_ERR.put(int(q.dma_wr_err))
        if off == regs.RXQ_BUF_SIZE:
            return (regs.RXQ_BUF_SIZE_HDR_BUF_BYTES.put(q.hdr_buf_bytes)
                    | regs.RXQ_BUF_SIZE_PAY_BUF_LOG2.put(q.pay_buf_log2)
                    | regs.RXQ_BUF_SIZE_PAY_STRIDE_LOG2.put(q.pay_stride_log2))
        ring_reg = self._ring_at(q, off)
        if ring_reg is None:
            return 0
        return _ring_reg_read(*ring_reg)

    def mmio_write(self, addr: int, value: int) -> None:
        """Write the 32-bit register at `addr`; read-only and unmapped addresses ignore it.

        Writing a buffer ring's `SW_IDX` of an enabled queue is the doorbell: the model
        fetches the newly posted descriptors at once. Clearing `CTRL.enable` resets the
        queue's hardware indices.
        """
        self._check_mmio(addr, value)
        if addr == regs.RX_FRAME_LIMIT:
            self.max_frame_len = regs.RX_FRAME_LIMIT_MAX_FRAME_LEN.get(value)
            return
        if addr == regs.TX_FRAME_LIMIT:
            self.tx.max_frame_len = regs.TX_FRAME_LIMIT_MAX_FRAME_LEN.get(value)
            return
        tx_decoded = self._decode_txq(addr)
        if tx_decoded is not None:
            if self._txq_write(*tx_decoded, value) and self.tx_autorun:
                self.transmit_outcomes()
            return
        if self.classifier is not None and self.classifier.mmio_write(addr, value):
            return
        decoded = self._decode_rxq(addr)
        if decoded is None:
            return
        q, off = decoded
        if off == regs.RXQ_CTRL:
            q.split_en = bool(regs.RXQ_CTRL_SPLIT_EN.get(value))
            q.pay_mpb = bool(regs.RXQ_CTRL_PAY_MPB.get(value))
            q.enable = bool(regs.RXQ_CTRL_ENABLE.get(value))
            if q.enable:
                self.fetch_descriptors(q.index)
            return
        if off == regs.RXQ_HDS_THRESH:
            q.hds_thresh = regs.RXQ_HDS_THRESH_BYTES.get(value)
            return
        if off == regs.RXQ_IRQ:
            q.irq_armed = bool(regs.RXQ_IRQ_ARM.get(value))
            return
        if off == regs.RXQ_STATUS:
            if regs.RXQ_STATUS_DMA_WR_ERR.get(value):     # write 1 to clear
                q.dma_wr_err = False
            return
        if off == regs.RXQ_BUF_SIZE:
            q.hdr_buf_bytes = regs.RXQ_BUF_SIZE_HDR_BUF_BYTES.get(value)
            q.pay_buf_log2 = regs.RXQ_BUF_SIZE_PAY_BUF_LOG2.get(value)
            q.pay_stride_log2 = regs.RXQ_BUF_SIZE_PAY_STRIDE_LOG2.get(value)
            return
        if off == regs.RXQ_COALESCE:
            q.coalesce_usecs = regs.RXQ_COALESCE_USECS.get(value)
            q.coalesce_frames = regs.RXQ_COALESCE_FRAMES.get(value)
            return
        ring_reg = self._ring_at(q, off)
        if ring_reg is None:
            return
        ring, roff = ring_reg
        if roff == regs.RING_BASE_LO:
            ring.base = (ring.base & ~0xFFFFFFFF) | (value & ~0xF)   # 16-byte aligned
        elif roff == regs.RING_BASE_HI:
            ring.base = (ring.base & 0xFFFFFFFF) | (value << 32)
        elif roff == regs.RING_SIZE:
            ring.log2_entries = value & 0xF
        elif roff == regs.RING_SW_IDX:
            ring.sw_idx = value & IDX_MASK
            if q.enable and ring is not q.cq:
                self._fetch(ring)
