"""Scoreboard for the RX split path: the RTL's completions, header buffers and payload
buffers against the golden model's `expected_placement` (models/nic_model.py).

It also owns the buffers it lends the NIC, so it knows which buffer ids the NIC must use
(descriptors are consumed in ring order) and can check that every DMA write landed inside a
posted buffer or the completion ring and that nothing past a buffer's valid bytes changed.
With multi-packet payload buffers (`cfg.pay_mpb`) the model's `MpbCursor` says which buffer
and stride each payload takes; a shared buffer goes back to the caller (to be posted again)
only when the NIC has finished it, after a check that every byte no payload covered still
holds the canary.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from driver.rx_queue import RxBuffer, RxFrame, RxQueue
from models.bus import DmaAddressSpace
from models.device_memory import DeviceMemory
from models.formats import CPL_BYTES
from models.host_memory import HostMemory
from models.nic_model import (INFO_COUNTERS, MpbCursor, Placement, PlacementConfig,
                              expected_placement, property_counts)
from tb.failure import field_diff, sim_ns, waves_command

CANARY = 0xA5
PLACEMENT_MEMO = 1024     # distinct (frame, configuration) answers sent_frame remembers
_CANARY_BYTE = bytes([CANARY])


def _waves(start_ns: float | None, end_ns: float | None) -> str:
    cmd = waves_command(start_ns, end_ns)
    return f"\n  waves: {cmd}" if cmd else ""


def _byte_diff(got: bytes, want: bytes) -> str:
    """Where two byte strings differ: the count and the first few offsets with both values."""
    bad = [i for i in range(min(len(got), len(want))) if got[i] != want[i]]
    first = ", ".join(f"[{i}] rtl 0x{got[i]:02x} model 0x{want[i]:02x}" for i in bad[:4])
    more = f" (+{len(bad) - 4} more)" if len(bad) > 4 else ""
    size = f"; rtl {len(got)} bytes, model {len(want)}" if len(got) != len(want) else ""
    return f"{len(bad)} bytes differ: {first}{more}{size}"


def _canary_from(buf: bytes, start: int) -> bool:
    """True when every byte of `buf` from `start` on is the canary (no copy)."""
    return buf.count(_CANARY_BYTE, start) == len(buf) - start


@dataclass
class Expected:
    index: int
    frame: bytes
    placement: Placement
    rss_hash: int = 0
    rss_type: int = 0
    sent_ns: float | None = None    # simulation time the frame was queued on the MAC stream


@dataclass
class Taken:
    """A received frame matched with the model's expected frame (`RxScoreboard.take`)."""
    exp: Expected
    hdr_id: int
    pay_ids: list[int]
    cq_idx: int                     # free-running CQ index of its first completion
    got: RxFrame
    raw: list[bytes] | None         # the completion ring's bytes, one entry per completion
    pay_offs: list[int] = field(default_factory=list)   # stride offset of each piece
    finished: list[int] | None = None
    """Multi-packet buffers: the payload buffers the NIC finished with this frame (to post
    again); None: every payload buffer the frame used."""
    taken_ns: float | None = None   # simulation time the driver took it off the ring

    def buffers(self) -> tuple[list[int], list[int]]:
        """(header, payload) buffer ids the frame is done with, to post again."""
        pay = self.pay_ids if self.finished is None else self.finished
        return ([self.hdr_id] if self.exp.placement.split else []), pay


@dataclass
class RxScoreboard:
    host: HostMemory
    dev: DeviceMemory
    cfg: PlacementConfig
    queue: int = 0
    hdr_bufs: dict[int, int] = field(default_factory=dict)     # id -> host address
    pay_bufs: dict[int, int] = field(default_factory=dict)     # id -> bus address
    hdr_order: deque[int] = field(default_factory=deque)       # posted, not yet used
    pay_order: deque[int] = field(default_factory=deque)
    expected: deque[Expected] = field(default_factory=deque)
    cq_idx: int = 0
    cq_size: int = 0
    cq_base: int | None = None      # when set, completions are also compared byte for byte
    checked: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    hdr_bytes_to_host: int = 0
    payload_bytes_to_device: int = 0
    payload_bytes_to_host: int = 0
    sent: int = 0
    info: dict[str, int] = field(default_factory=lambda: dict.fromkeys(INFO_COUNTERS, 0))
    keep: int | None = None
    """How many of the newest checked frames `delivered*` hold (None: every one). A long run
    sets it: each kept frame holds its completions and payload (about 2 KiB for a 1500-byte
    frame), which is what made bulk runs grow without bound."""
    delivered: deque[RxFrame] = field(init=False)          # checked frames, in order
    delivered_index: deque[int] = field(init=False)        # their index among sent frames
    delivered_payload: deque[bytes] = field(init=False)    # payload as the GPU read it
    _placements: dict[tuple, tuple[Placement, dict[str, int]]] = field(default_factory=dict, repr=False)
    clock: Callable[[], float | None] = field(default=sim_ns, repr=False)
    """Simulation time in ns (None outside a simulation): failure messages say when the frame
    was sent and taken, with the `nicsim waves` command of that window."""
    _mpb: MpbCursor | None = field(default=None, repr=False)
    _mpb_pieces: dict[int, list[tuple[int, int]]] = field(default_factory=dict, repr=False)
    """Multi-packet buffers not finished yet: (byte offset, length) of each piece written."""

    def __post_init__(self) -> None:
        if self.keep is not None and self.keep < 0:
            raise ValueError(f"keep={self.keep}: a number of frames (0 or more) or None")
        self.delivered = deque(maxlen=self.keep)
        self.delivered_index = deque(maxlen=self.keep)
        self.delivered_payload = deque(maxlen=self.keep)
        if self.cfg.pay_mpb:
            self._mpb = self.cfg.mpb_cursor()

    # ------------------------------------------------------------------ buffers
    def _canary(self, buf_id: int, hdr: bool) -> None:
        if hdr:
            self.host.fill(self.hdr_bufs[buf_id], self.cfg.hdr_buf_bytes, CANARY)
        else:
            addr = self.pay_bufs[buf_id]
            n = self.cfg.pay_buf_bytes
            if self.dev.contains(addr, n):
                self.dev.gpu.fill(addr, n, CANARY)
            else:
                self.host.fill(addr, n, CANARY)

    def _read_pay(self, addr: int, n: int) -> bytes:
        # The GPU reads device memory; only host buffers are read by the CPU.
        return self.dev.gpu.read(addr, n) if self.dev.contains(addr, n) else self.host.read(addr, n)

    async def post_hdr(self, rxq: RxQueue, ids: list[int], refill: bool = True) -> None:
        """Post header buffers `ids` (canary refilled unless `refill=False`: done already)."""
        if refill:
            self.refill(ids, hdr=True)
        await rxq.post_hdr_buffers([RxBuffer(self.hdr_bufs[i], i) for i in ids])
        self.hdr_order.extend(ids)

    async def post_pay(self, rxq: RxQueue, ids: list[int], refill: bool = True) -> None:
        """Post payload buffers `ids` (canary refilled unless `refill=False`: done already)."""
        if refill:
            self.refill(ids, hdr=False)
        await rxq.post_pay_buffers([RxBuffer(self.pay_bufs[i], i) for i in ids])
        self.pay_order.extend(ids)

    # ------------------------------------------------------------------ traffic
    def sent_frame(self, frame: bytes, bad_fcs: bool = False, cls=None,
                   admit: Callable[[Placement], str | None] | None = None) -> Placement:
        """Record a frame given to the NIC for this queue; returns what the model says happens
        to it. `cls` is the model's classification (RSS hash and type) when RSS is on.
        `admit`, when given, applies rx-rules.md section 4's ring checks to a frame that
        passed sections 1-3 (a testbench that knows what it posted: tb/uvm/starve.py) and
        returns the drop counter, or None when the queue takes it."""
        frame = bytes(frame)
        p, counts = self.placement(frame, bad_fcs)
        if admit is not None and p.drop_counter is None:
            counter = admit(p)
            if counter is not None:
                p = replace(p, drop_counter=counter)
        self.sent += 1
        for name, n in counts.items():           # the ingress kept it: the parser saw it
            self.info[name] += n

        if p.drop_counter is not None:           # p.dropped
            self.dropped[p.drop_counter] = self.dropped.get(p.drop_counter, 0) + 1
        else:
            self.expected.append(Expected(self.sent - 1, frame, p,
                                           cls.rss_hash if cls else 0, int(cls.rss_type) if cls else 0,
                                           self.clock()))
        return p

    def fifo_dropped(self) -> None:
        """Record a frame the ingress dropped because the frame FIFO was full (rx-rules.md
        section 1 rule 4). The model has no FIFO ("the FIFO never overflows in the model"), so
        only a testbench that knows which frames found it full says so (tb/uvm/starve.py's
        `fifo` phase); the frame never reached the parser: no information counter."""
        self.sent += 1
        self.dropped["RX_DROP_FIFO"] = self.dropped.get("RX_DROP_FIFO", 0) + 1

    def placement(self, frame: bytes, bad_fcs: bool = False) -> tuple[Placement, dict[str, int]]:
        """The model's placement of `frame` on this queue and the information counters it adds
        to (non-zero ones only). The model is a pure function of the frame and the
        configuration: bulk traffic repeats frames, so the answer is remembered (the key holds
        the whole configuration, which tests may change between frames)."""
        key = (frame, bad_fcs, self.queue, *vars(self.cfg).values())
        hit = self._placements.get(key)
        if hit is None:
            p = expected_placement(frame, self.cfg, bad_fcs=bad_fcs, queue=self.queue)
            counts = property_counts(p.parse) if p.parse is not None else {}
            hit = (p, {name: n for name, n in counts.items() if n})
            if len(self._placements) < PLACEMENT_MEMO:
                self._placements[key] = hit
        return hit

    def check(self, got: RxFrame) -> tuple[list[int], list[int]]:
        """Compare one received frame with the model; returns the (header, payload) buffer ids
        it used so the caller can recycle them."""
        return self.check_taken(self.take(got))

    def check_taken(self, t: Taken) -> tuple[list[int], list[int]]:
        """`check` after `take`: verify, count as checked; the buffer ids to recycle."""
        self.record(t, self.verify(t))
        if t.finished:
            self.finish_buffers(t.finished)
        return t.buffers()

    def take(self, got: RxFrame) -> Taken:
        """The bookkeeping half of `check`: match `got` with the model's next expected frame,
        take the buffer ids it must have used and the completion ring's bytes (which the
        NIC may overwrite once the driver moves on). Touches no buffer."""
        if not self.expected:
            now = self.clock()
            raise AssertionError(f"the NIC delivered a frame the model drops or never saw "
                                 f"(taken at {now} ns): {got}" + _waves(now, now))
        exp = self.expected.popleft()
        p = exp.placement
        hdr_id = self.hdr_order.popleft() if p.split else 0
        finished: list[int] | None = None
        mpb = self._mpb
        if mpb is not None and mpb.fits(p.payload_len):
            assert isinstance(mpb.buf, int)
            pay_ids, offs, finished = [mpb.buf], [mpb.place(p.payload_len)], []
        else:
            pay_ids = [self.pay_order.popleft() for _ in range(p.n_pay_bufs)]
            offs = [0] * len(pay_ids)
            if mpb is not None and pay_ids:
                finished = [mpb.buf] if isinstance(mpb.buf, int) else []
                finished += pay_ids[:-1]
                mpb.start(pay_ids[-1], len(p.payload_pieces()[-1]))
            elif mpb is not None:
                finished = []
        if mpb is not None:
            stride = 1 << mpb.stride_log2
            for buf_id, off, piece in zip(pay_ids, offs, p.payload_pieces()):
                self._mpb_pieces.setdefault(buf_id, []).append((off * stride, len(piece)))
            if mpb.buf is not None and mpb.used << mpb.stride_log2 >= self.cfg.pay_buf_bytes:
                assert isinstance(mpb.buf, int)
                finished = (finished or []) + [mpb.buf]        # its strides are used up
                mpb.reset()
        cq_idx = self.cq_idx
        self.cq_idx = (self.cq_idx + p.n_completions) & 0xFFFF
        raw = None
        if self.cq_base is not None:
            # The bytes the driver decoded, or the ring's own when it did not keep them.
            raw = got.raw if len(got.raw) == len(got.completions) else [
                self.host.read(self.cq_base + CPL_BYTES * ((cq_idx + i) % self.cq_size), CPL_BYTES)
                for i in range(len(got.completions))]
        return Taken(exp, hdr_id, pay_ids, cq_idx, got, raw, offs, finished, self.clock())

    def verify(self, t: Taken) -> bytes:
        """The comparing half of `check`: completions (decoded, and byte for byte when the
        ring's bytes were taken), header and payload bytes, canaries past them. Raises
        AssertionError on the first difference; returns the payload as the GPU read it."""
        exp, p, got = t.exp, t.exp.placement, t.got
        when = ""
        if exp.sent_ns is not None:
            when = f", sent at {exp.sent_ns:.0f} ns" + (f", taken at {t.taken_ns:.0f} ns" if t.taken_ns is not None else "")
        where = f"queue {self.queue} frame #{exp.index} ({len(exp.frame)} bytes{when})"
        tail = _waves(exp.sent_ns, t.taken_ns)
        want = p.completions(t.hdr_id, t.pay_ids, t.cq_idx, self.cq_size, exp.rss_hash,
                             exp.rss_type, pay_offs=t.pay_offs or None)
        assert len(got.completions) == len(want), \
            f"{where}: {len(got.completions)} completions, model says {len(want)}{tail}"
        for i, (g, w) in enumerate(zip(got.completions, want)):
            assert g == w, f"{where}: completion {i} differs: {field_diff(g, w)}{tail}"
            if t.raw is not None:
                # Byte for byte, reserved bits included (the decoded compare ignores them).
                assert t.raw[i] == w.pack(), \
                    f"{where}: completion {i} bytes {t.raw[i].hex()} != model {w.pack().hex()}{tail}"

        if p.split:
            addr = self.hdr_bufs[t.hdr_id]
            buf = self.host.read(addr, self.cfg.hdr_buf_bytes)
            assert buf[:p.hdr_len] == p.hdr_bytes, \
                f"{where}: header buffer bytes differ: {_byte_diff(buf[:p.hdr_len], p.hdr_bytes)}{tail}"
            assert _canary_from(buf, p.hdr_len), \
                f"{where}: header buffer written past hdr_len={p.hdr_len}{tail}"
            self.hdr_bytes_to_host += p.hdr_len
        payload = bytearray()
        stride = 1 << self.cfg.stride_log2
        offs = t.pay_offs or [0] * len(t.pay_ids)
        for buf_id, off, piece in zip(t.pay_ids, offs, p.payload_pieces()):
            addr = self.pay_bufs[buf_id]
            buf = self._read_pay(addr, self.cfg.pay_buf_bytes)
            start = off * stride
            got_piece = buf[start:start + len(piece)]
            payload += got_piece
            assert got_piece == piece, \
                f"{where}: payload buffer {buf_id} bytes differ: {_byte_diff(got_piece, piece)}{tail}"
            if self._mpb is None:
                assert _canary_from(buf, len(piece)), \
                    f"{where}: payload buffer {buf_id} written past {len(piece)} bytes{tail}"
            else:
                # The rest of the piece's strides is never written (later pieces start after).
                gap_end = start + -(-len(piece) // stride) * stride
                assert buf.count(_CANARY_BYTE, start + len(piece), gap_end) == gap_end - start - len(piece), \
                    f"{where}: payload buffer {buf_id} written in the stride gap after byte {start + len(piece)}{tail}"
            if self.dev.contains(addr, 1):
                self.payload_bytes_to_device += len(piece)
            else:
                self.payload_bytes_to_host += len(piece)
        return bytes(payload)

    def finish_buffers(self, ids: list[int]) -> None:
        """Multi-packet buffers the NIC has finished: every byte outside the pieces written
        there must still be the canary."""
        for buf_id in ids:
            pieces = self._mpb_pieces.pop(buf_id, [])
            buf = bytearray(self._read_pay(self.pay_bufs[buf_id], self.cfg.pay_buf_bytes))
            for off, n in pieces:
                buf[off:off + n] = _CANARY_BYTE * n
            assert _canary_from(bytes(buf), 0), \
                f"payload buffer {buf_id}: bytes outside its {len(pieces)} payloads were written"

    def record(self, t: Taken, payload: bytes) -> None:
        """Count a verified frame as checked and delivered."""
        self.checked += 1
        self.info['RX_HDR_OVERFLOW'] += int(t.exp.placement.hdr_overflow)
        self.delivered.append(t.got)
        self.delivered_index.append(t.exp.index)
        self.delivered_payload.append(payload)

    def refill(self, ids: list[int], hdr: bool) -> None:
        """Put the canary back into buffers before they are posted again."""
        for i in ids:
            self._canary(i, hdr)

    @property
    def outstanding(self) -> int:
        return len(self.expected)

    def check_writes_in_bounds(self, space: DmaAddressSpace, cq_base: int) -> None:
        """Every DMA write since the start lies inside a lent buffer or the completion ring."""
        ranges = [(a, self.cfg.hdr_buf_bytes) for a in self.hdr_bufs.values()]
        ranges += [(a, self.cfg.pay_buf_bytes) for a in self.pay_bufs.values()]
        ranges.append((cq_base, self.cq_size * CPL_BYTES))
        for addr, n in space.writes:
            if not any(a <= addr and addr + n <= a + size for a, size in ranges):
                now = self.clock()
                raise AssertionError(
                    f"DMA write of {n} bytes at 0x{addr:x} is outside every posted buffer and the completion "
                    f"ring (found at {now} ns; `nicsim waves FILE --transactions` lists every write with its "
                    f"time)" + _waves(0 if now is not None else None, now))
