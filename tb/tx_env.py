"""TX test helpers for the RTL (docs/tx.md): queue bring-up with plain register writes, the
descriptor and completion rings in host memory, segment placement in host and device memory,
frames built with scapy, and the expected outcome of every frame.

Expectations come from the golden model (models/tx.py), docs/tx.md and scapy, never from the
RTL:
- `spec_outcomes` walks the posted descriptors with the rules of docs/tx.md ("Rings and
  registers", "Bad input"); every frame's status is also asked of the model's
  `check_frame`, and the two must agree;
- an OK frame must be byte-equal to the model's `l4_checksum` of the seeded frame (the
  driver-side seed is the pseudo-header sum; the NIC finishes the checksum), which must
  equal the frame scapy built with its own L4 checksum.
"""
from __future__ import annotations

import random
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, replace

import cocotb
from cocotb.triggers import RisingEdge
from cocotb.utils import get_sim_time
from scapy.layers.inet import IP, TCP, UDP, in4_pseudoheader
from scapy.layers.inet6 import IPv6, in6_pseudoheader
from scapy.layers.l2 import Ether
from scapy.utils import checksum

from driver import regs
from models.formats import TX_FRAME_LIMIT_RESET
from models.formats import TX_INLINE_MAX as INLINE_MAX
from models.formats import TX_MAX_SEGS as MAX_SEGS
from models.formats import TX_MIN_FRAME_LEN as MIN_LEN
from models.formats import TX_SEG_PAGE as PAGE
from models.formats import TxCompletion, TxDesc, TxStatus
from models.tx import STATUS_COUNTER, TX_COUNTER_NAMES, check_frame, frame_extent, l4_checksum
from tb.failure import field_diff, sim_ns, waves_command
from tb.nic_tb import CLK_NS, NicTb


# ------------------------------------------------------------------------------------------
# Frames
# ------------------------------------------------------------------------------------------
@dataclass
class L4Frame:
    """A TCP/UDP frame as the driver hands it to the NIC (checksum field = pseudo-header sum)
    and as it must leave the NIC (`wire`, checksum computed by scapy)."""

    seeded: bytes
    wire: bytes
    csum_start: int
    csum_offset: int
    udp: bool
    hdr_len: int            # Ethernet + IP + L4 header bytes


def l4_frame(total_len: int, ipv6: bool, udp: bool, seed: int, zero_csum: bool = False) -> L4Frame:
    """A frame of exactly `total_len` bytes (payload from `seed`). `zero_csum` (UDP) picks the
    last two payload bytes so that the computed checksum is 0x0000 (sent as 0xFFFF)."""
    l3 = (IPv6(src="2001:db8::1", dst="2001:db8::2") if ipv6
          else IP(src="10.0.0.1", dst="10.0.0.2", id=seed & 0xFFFF))
    l4 = UDP(sport=4000 + (seed & 0xFF), dport=9000) if udp else TCP(sport=5000, dport=80, seq=seed, flags="PA")
    hdr_len = 14 + (40 if ipv6 else 20) + (8 if udp else 20)
    n = total_len - hdr_len
    assert n >= 2, "frame too short for this test helper"
    rnd = random.Random(seed)
    payload = bytearray(rnd.randbytes(n))
    pkt = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / l3 / l4 / bytes(payload)
    csum_start = 14 + (40 if ipv6 else 20)
    csum_offset = 6 if udp else 16
    if zero_csum:
        payload[-2:] = b"\0\0"
        if (total_len - 2 - csum_start) % 2:
            raise ValueError("zero_csum needs the last payload word at an even offset")
        pkt = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / l3 / l4 / bytes(payload)
        raw = bytes(pkt)
        c = int.from_bytes(raw[csum_start + csum_offset:csum_start + csum_offset + 2], "big")
        s = (~c) & 0xFFFF if c != 0xFFFF else 0          # the sum without the last word
        w = (0xFFFF - s) & 0xFFFF
        payload[-2:] = w.to_bytes(2, "big")
        pkt = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / l3 / l4 / bytes(payload)
    wire = bytes(pkt)                                  # scapy computes every checksum
    assert len(wire) == total_len
    parsed = Ether(wire)
    l4p = parsed[UDP] if udp else parsed[TCP]
    plen = len(bytes(l4p))
    proto = 17 if udp else 6
    ph = (in6_pseudoheader(proto, parsed[IPv6], plen) if ipv6
          else in4_pseudoheader(proto, parsed[IP], plen))
    seed_sum = (~checksum(bytes(ph))) & 0xFFFF         # folded sum, not complemented
    pos = csum_start + csum_offset
    seeded = wire[:pos] + seed_sum.to_bytes(2, "big") + wire[pos + 2:]
    # scapy as the reference: rebuilding the seeded frame's checksum gives `wire` again.
    again = Ether(seeded)
    del (again[UDP] if udp else again[TCP]).chksum
    assert bytes(again) == wire
    # The golden model: checksum offload of the seeded frame gives the same frame.
    model, csum = l4_checksum(seeded, csum_start, csum_offset, udp)
    assert model == wire, "models/tx.py l4_checksum disagrees with scapy"
    assert csum == int.from_bytes(wire[pos:pos + 2], "big")
    return L4Frame(seeded, wire, csum_start, csum_offset, udp, hdr_len)


# ------------------------------------------------------------------------------------------
# Memory for segments
# ------------------------------------------------------------------------------------------
class PagePool:
    """Pages of host or device memory handed out round robin; one segment per page, placed
    anywhere in it (the page is long enough that a wrap never reuses a page in flight)."""

    def __init__(self, tb, npages: int, device: bool) -> None:
        self.tb = tb
        self.device = device
        if device:
            buf = tb.dev.export_dmabuf(npages * PAGE, chunk_size=npages * PAGE, scatter=False)
            self.base = buf.offset_to_bus(0)
        else:
            self.base = tb.host.alloc(npages * PAGE)
        self.npages = npages
        self.next = 0
        self.used = 0          # pages handed out; more than npages means one was reused

    @property
    def wrapped(self) -> bool:
        return self.used > self.npages

    def place(self, data: bytes, offset: int, cross: bool = False) -> int:
        """Write `data` at `offset` in the next page; `cross` lets it run into the page after
        (a bad segment that the NIC must refuse, never read)."""
        assert 0 <= offset and (cross or offset + len(data) <= PAGE)
        addr = self.base + PAGE * self.next + offset
        self.next = (self.next + 1 + (1 if cross else 0)) % self.npages
        self.used += 1 + (1 if cross else 0)
        if self.device:
            self.tb.dev.gpu.write(addr, data)
        else:
            self.tb.host.write(addr, data)
        return addr


def split_payload(rng: random.Random, n: int, max_segs: int) -> list[int]:
    """Segment lengths (each 1..4096) summing to n, at most max_segs of them."""
    lens: list[int] = []
    while n > 0:
        left_segs = max_segs - len(lens)
        lo = max(1, n - 4096 * (left_segs - 1))
        k = n if left_segs == 1 else min(n, rng.choice([1, 2, 3, 7, 64, 65, 511, 1000, 1500, 4095, 4096, rng.randint(1, 4096)]))
        k = max(k, lo)
        lens.append(min(k, 4096, n))
        n -= lens[-1]
    return lens


def seg_offset(rng: random.Random, length: int) -> int:
    """Where a segment of `length` bytes starts in its page: any byte, the page start, or
    ending exactly at the 4 KiB boundary."""
    choice = rng.random()
    if choice < 0.15:
        return 0
    if choice < 0.3:
        return PAGE - length
    return rng.randint(0, PAGE - length)


def inline_entries(header: bytes, pad: int = 0xEE) -> list[bytes]:
    """The ring entries of an inline header (docs/tx.md, "Inline headers"): 16 bytes each, the
    last one padded with `pad` (the NIC must ignore it)."""
    padded = header + bytes([pad]) * (-len(header) % 16)
    return [padded[i:i + 16] for i in range(0, len(padded), 16)]


def frame_descs(rng: random.Random, frame: bytes, hdr_len: int, host: PagePool, dev: PagePool,
                tag: int, csum: tuple[int, int, bool] | None) -> list[TxDesc]:
    """Header segment from host memory, the rest in device memory at odd places."""
    descs = []
    hdr = frame[:hdr_len]
    descs.append(TxDesc(host.place(hdr, seg_offset(rng, len(hdr))), len(hdr)))
    pos = hdr_len
    for n in split_payload(rng, len(frame) - hdr_len, MAX_SEGS - 1):
        descs.append(TxDesc(dev.place(frame[pos:pos + n], seg_offset(rng, n)), n))
        pos += n
    descs[-1].eop = True
    d0 = descs[0]
    d0.tag = tag
    if csum is not None:
        d0.csum, d0.csum_start, d0.csum_offset, d0.csum_udp = True, csum[0], csum[1], csum[2]
    return descs


# ------------------------------------------------------------------------------------------
# Expected outcome (docs/tx.md)
# ------------------------------------------------------------------------------------------
def seg_bad(d: TxDesc) -> bool:
    return d.len == 0 or d.len > 4096 or (d.addr % PAGE) + d.len > PAGE


Entry = TxDesc | bytes | None
"""A posted ring entry: a descriptor, the 16 raw bytes of an inline header entry, or None for
an entry whose read fails."""


def _as_desc(e: TxDesc | bytes) -> TxDesc:
    return e if isinstance(e, TxDesc) else TxDesc.unpack(bytes(e))


def spec_split(entries: Sequence[Entry]) -> tuple[list[TxDesc | None], list[bytes | None], int]:
    """A frame's ring entries as docs/tx.md "Inline headers" sorts them: (descriptors, inline
    header entries, inline_len). The first entry is a descriptor; with INLINE its next
    ceil(inline_len / 16) entries are header bytes, the rest descriptors."""
    first = entries[0]
    if first is None:
        return [None], [], 0
    d0 = _as_desc(first)
    hlen = d0.inline_len if d0.inline else 0
    k = -(-hlen // 16)
    inline = [None if e is None else (e.pack() if isinstance(e, TxDesc) else bytes(e))
              for e in entries[1:1 + k]]
    descs = [d0] + [None if e is None else _as_desc(e) for e in entries[1 + k:]]
    return descs, inline, hlen


def spec_status(entries: Sequence[Entry], limit: int) -> TxStatus:
    """docs/tx.md "Bad input" for exactly one frame's entries. A failed read (descriptor or
    inline entry) makes the frame DESC_RD_ERR (its length and checksum settings are unknown;
    completion len and tag 0)."""
    descs, inline, hlen = spec_split(entries)
    if any(d is None for d in descs) or any(e is None for e in inline):
        return TxStatus.DESC_RD_ERR
    good = [d for d in descs if d is not None]
    first_inline = good[0].inline
    if (any(seg_bad(d) and not (i == 0 and first_inline and d.len == 0) for i, d in enumerate(good))
            or not good[-1].eop):
        return TxStatus.BAD_SEG
    n = hlen + sum(d.len for d in good)
    if n < MIN_LEN or n > limit or hlen > INLINE_MAX:
        return TxStatus.BAD_LEN
    f = good[0]
    if f.csum and (f.csum_start % 2 or f.csum_offset % 2 or f.csum_start + f.csum_offset + 2 > n):
        return TxStatus.BAD_CSUM
    return TxStatus.OK


@dataclass
class Expected:
    cpl: TxCompletion
    wire: bytes | None         # the frame on m_axis_tx when OK


def spec_outcomes(descs: Sequence[Entry], first_idx: int, queue: int, cq_first: int,
                  cq_log2: int, limit: int, wire_by_idx: dict[int, bytes],
                  dma_fail_idx: set[int], check_model: bool = True) -> list[Expected]:
    """The completions (and sent frames) of the posted ring entries `descs` (ring indices from
    `first_idx`; None = its read fails; raw bytes = inline header entries). `wire_by_idx[i]`: the frame that must leave when the
    frame starting at index i is OK; `dma_fail_idx`: frames (by first index) whose segment
    read fails. Only complete frames are returned."""
    out = []
    i = 0
    cq = cq_first
    size = 1 << cq_log2
    while i < len(descs):
        k = frame_extent(descs[i:])
        if k is None:
            break
        fr = descs[i:i + k]
        st = spec_status(fr, limit)
        if check_model:
            model_check(fr, limit, st)
        idx = (first_idx + i) & 0xFFFF
        wire = None
        if st == TxStatus.OK and idx in dma_fail_idx:
            st = TxStatus.DMA_RD_ERR
        fdescs, _, hlen = spec_split(fr)
        d0 = fdescs[0]
        if st == TxStatus.DESC_RD_ERR:
            length, tag = 0, 0
        else:
            assert d0 is not None
            length = (hlen + sum(d.len for d in fdescs if d is not None)) & 0xFFFF
            tag = d0.tag
        csum = 0
        if st == TxStatus.OK:
            assert d0 is not None
            wire = wire_by_idx[idx]
            assert len(wire) == length
            if d0.csum:
                pos = d0.csum_start + d0.csum_offset
                csum = int.from_bytes(wire[pos:pos + 2], "big")
        cpl = TxCompletion(desc_idx=idx, ndesc=k, len=length, tag=tag, csum=csum, status=st,
                           queue=queue, gen=1 - ((cq // size) % 2))
        out.append(Expected(cpl, wire))
        cq += 1
        i += k
    return out


def model_check(frame: Sequence[Entry], limit: int, want: TxStatus) -> None:
    """The golden model's descriptor rules must give the status this file derives from
    docs/tx.md."""
    got = check_frame(frame, limit)
    assert got == want, f"models/tx.py check_frame says {got!r}, docs/tx.md says {want!r} for {frame}"


# ------------------------------------------------------------------------------------------
# One TX queue on the RTL, by register writes
# ------------------------------------------------------------------------------------------
class TxRing:
    """TXQ[t]: descriptor ring and completion ring in host memory."""

    def __init__(self, tb, t: int, log2: int = 8, cq_log2: int = 8, offset: int = 0,
                 cq_offset: int = 0) -> None:
        """`offset`, `cq_offset`: 16-byte multiples added to page-aligned ring bases (a ring
        that starts mid-page, mid bus word, or straddles a 4 KiB boundary)."""
        assert offset % 16 == 0 and cq_offset % 16 == 0
        self.tb = tb
        self.t = t
        self.log2 = log2
        self.cq_log2 = cq_log2
        self.base = tb.host.alloc((16 << log2) + offset) + offset
        self.cq_base = tb.host.alloc((16 << cq_log2) + cq_offset) + cq_offset
        self.sw_idx = 0
        self.cq_sw_idx = 0

    def reg(self, off: int) -> int:
        return regs.txq_reg(self.t, off)

    async def start(self, inline_en: bool = False) -> None:
        """Zero both rings, program them, enable the queue (with CTRL.inline_en if asked)."""
        tb = self.tb
        tb.host.write(self.base, bytes(16 << self.log2))
        tb.host.write(self.cq_base, bytes(16 << self.cq_log2))
        self.sw_idx = self.cq_sw_idx = 0
        for ring, base, log2 in ((regs.TXQ_DESC_RING, self.base, self.log2),
                                 (regs.TXQ_CQ, self.cq_base, self.cq_log2)):
            await tb.write32(self.reg(ring + regs.RING_BASE_LO), base & 0xFFFF_FFFF)
            await tb.write32(self.reg(ring + regs.RING_BASE_HI), base >> 32)
            await tb.write32(self.reg(ring + regs.RING_SIZE), log2)
            await tb.write32(self.reg(ring + regs.RING_SW_IDX), 0)
        await tb.write32(self.reg(regs.TXQ_CTRL),
                         regs.TXQ_CTRL_ENABLE.put(1) | regs.TXQ_CTRL_INLINE_EN.put(int(inline_en)))

    def entry_addr(self, idx: int) -> int:
        return self.base + 16 * (idx % (1 << self.log2))

    def write_descs(self, descs: list[TxDesc | bytes]) -> int:
        """Write ring entries at SW_IDX onwards (no doorbell): descriptors, or the raw 16 bytes
        of an inline header entry; returns the first index. More than the ring holds would
        overwrite entries of the same call before the NIC read them: a ValueError (size the
        ring for the worst case: frames x TX_MAX_SEGS)."""
        if len(descs) > (1 << self.log2):
            raise ValueError(f"TXQ[{self.t}]: {len(descs)} descriptors do not fit a ring of "
                             f"{1 << self.log2}")
        first = self.sw_idx
        for d in descs:
            raw = d.pack() if isinstance(d, TxDesc) else bytes(d)
            assert len(raw) == 16
            self.tb.host.write(self.entry_addr(self.sw_idx), raw)
            self.sw_idx = (self.sw_idx + 1) & 0xFFFF
        return first

    async def doorbell(self) -> None:
        await self.tb.write32(self.reg(regs.TXQ_DESC_RING + regs.RING_SW_IDX), self.sw_idx)

    def poll(self) -> list[TxCompletion]:
        """Completions written since the last poll, by generation bit (no register read)."""
        out = []
        size = 1 << self.cq_log2
        while True:
            raw = self.tb.host.read(self.cq_base + 16 * (self.cq_sw_idx % size), 16)
            c = TxCompletion.unpack(raw, strict=True)
            if c.gen != 1 - ((self.cq_sw_idx // size) % 2):
                break
            out.append(c)
            self.cq_sw_idx = (self.cq_sw_idx + 1) & 0xFFFF
        return out

    async def ack(self) -> None:
        await self.tb.write32(self.reg(regs.TXQ_CQ + regs.RING_SW_IDX), self.cq_sw_idx)

    def cq_entry(self, idx: int) -> TxCompletion:
        """The completion-ring entry of free-running index `idx`, whatever its GEN."""
        size = 1 << self.cq_log2
        return TxCompletion.unpack(self.tb.host.read(self.cq_base + 16 * (idx % size), 16), strict=True)

    def cq_addr(self, idx: int) -> int:
        return self.cq_base + 16 * (idx % (1 << self.cq_log2))

    async def hw_idx(self) -> tuple[int, int]:
        """(DESC_RING.HW_IDX, CQ.HW_IDX)."""
        return (await self.tb.read32(self.reg(regs.TXQ_DESC_RING + regs.RING_HW_IDX)),
                await self.tb.read32(self.reg(regs.TXQ_CQ + regs.RING_HW_IDX)))


class CplRingCheck:
    """The completion-in-ring rule on the memory side (docs/verification.md): every DMA write
    that touches a TX completion ring, or the `guard` bytes just past its end, is a batch of
    completions (or a piece of one, one W beat of a 64-bit bus) lying inside
    `[cq_base, cq_base + 16 * size)`, starting at the slot of the next completion the model
    expects for that queue (free-running index mod size) and no more completions than frames
    were posted. A batch written linearly past the ring's end, a wrong wrap (slot 1 instead of
    0, a lap off), a rewritten or skipped slot and a completion for no frame all fail here, at
    the write, instead of as a hang of the driver waiting on a slot that is never written.

    It reads `space.writes` (the address space's write record, per write burst or strobed
    span) from where it was created on; `expect(t, n)` says n more completions may come on
    queue t; `scan()` checks the writes recorded since the last call."""

    def __init__(self, space, rings: Sequence[TxRing], guard: int = 0) -> None:
        if not space.record_writes:
            raise ValueError("CplRingCheck needs an address space that records its writes")
        self.space = space
        self.rings = {r.t: r for r in rings}
        self.guard = guard
        self.pos = len(space.writes)
        self.written = {r.t: r.cq_sw_idx for r in rings}     # next free-running index to be written
        self.allowed = dict(self.written)                    # completions the posted frames make
        self.checked = 0
        self.last: dict[int, str] = {}                       # per queue: its previous write, for messages
        self.part: dict[int, int] = {}                       # bytes of the next completion already written

    def expect(self, t: int, n: int = 1) -> None:
        self.allowed[t] += n

    def _fail(self, msg: str) -> None:
        now = sim_ns()
        raise AssertionError(msg + (f" (seen by {now:.0f} ns)\n  waves: {waves_command(now - 2000, now)}"
                                    if now is not None else ""))

    def scan(self) -> int:
        writes = self.space.writes
        while self.pos < len(writes):
            addr, n = writes[self.pos]
            self.pos += 1
            for t, r in self.rings.items():
                size = 1 << r.cq_log2
                end = r.cq_base + 16 * size
                if not (addr < end + self.guard and r.cq_base < addr + max(n, 1)):
                    continue
                where = (f"TXQ[{t}] completion write [0x{addr:x}, +{n})"
                         f" (previous: {self.last.get(t, 'none')})")
                if addr + n > end or addr < r.cq_base:
                    self._fail(f"{where} is not inside its completion ring [0x{r.cq_base:x}, 0x{end:x}) "
                               f"({size} entries)")
                # A completion may come in pieces (one per W beat on a 64-bit bus): the write
                # must start where the expected completion's bytes continue.
                part = self.part.get(t, 0)
                want = self.written[t] % size
                if addr - r.cq_base != 16 * want + part:
                    off = addr - r.cq_base
                    self._fail(f"{where} writes slot {off // 16} byte {off % 16}, the model expects completion "
                               f"{self.written[t]} next, at slot {want} byte {part}")
                done, part = divmod(part + n, 16)
                if self.written[t] + done + (1 if part else 0) > self.allowed[t]:
                    self._fail(f"{where} writes completions from free-running index {self.written[t]}, "
                               f"only {self.allowed[t] - self.written[t]} frames are waiting for one")
                self.last[t] = f"slot {want} byte {self.part.get(t, 0)} to completion {self.written[t] + done}" \
                               f" byte {part}"
                self.part[t] = part
                self.written[t] += done
                self.checked += done
        return self.checked


# ------------------------------------------------------------------------------------------
# MAC-side checks
# ------------------------------------------------------------------------------------------
def match_sent(sent: list[bytes], pending: dict[int, list[bytes]]) -> None:
    """Each sent frame must be the next expected frame of one queue (queues interleave on the
    port, each in its own order); consumed from `pending`."""
    for k, f in enumerate(sent):
        for q, lst in pending.items():
            if lst and lst[0] == f:
                lst.pop(0)
                break
        else:
            heads = {q: (len(lst[0]), lst[0][:16].hex()) for q, lst in pending.items() if lst}
            diff = ""
            for q, lst in pending.items():
                if lst and len(lst[0]) == len(f):
                    bad = [i for i in range(len(f)) if f[i] != lst[0][i]]
                    diff += f" q{q}: {len(bad)} bytes differ, first at {bad[:8]}"
            now = sim_ns()
            raise AssertionError(f"sent frame {k} ({len(f)} B, {f[:16].hex()}) is no queue's next "
                                 f"frame (seen at {now} ns); heads {heads};{diff}"
                                 + (f"\n  waves: {waves_command(now - 2000, now)}" if now is not None else ""))


# ------------------------------------------------------------------------------------------
# The AXI rules of the DMA port and the MAC stream (and the NIC's own port contracts: R of
# TX descriptor reads never back-pressured, INCR full-width bursts, no empty W beat) are checked by
# the SystemVerilog protocol checker bound into nic_top in every run (tb/checker/,
# docs/verification.md); this file keeps what that checker cannot see: the TX data checks
# (completions field by field, frames on the wire byte for byte, counters) and IrqMonitor
# (tx_irq is a one-cycle pulse: a NIC output, no AXI interface).
# ------------------------------------------------------------------------------------------
class IrqMonitor:
    """Counts tx_irq pulses per queue and checks each lasts one cycle."""

    def __init__(self, dut) -> None:
        self.dut = dut
        n = len(dut.tx_irq)
        self.count = [0] * n
        self.errors: list[str] = []
        self.task = cocotb.start_soon(self._run(n))

    async def _run(self, n: int) -> None:
        prev = 0
        while True:
            await RisingEdge(self.dut.clk)
            v = int(self.dut.tx_irq.value)
            for t in range(n):
                if v >> t & 1:
                    if prev >> t & 1:
                        self.errors.append(f"tx_irq[{t}] high for more than one cycle")
                    else:
                        self.count[t] += 1
            prev = v


# ------------------------------------------------------------------------------------------
# Plans of frames per queue, posted and checked on the RTL
# ------------------------------------------------------------------------------------------
COUNTERS = TX_COUNTER_NAMES


class QueuePlan:
    """What one queue posts: descriptors (in ring order), the frame each OK frame must put on
    the wire (by the ring index of its first descriptor), injected read failures."""

    def __init__(self, ring: TxRing) -> None:
        self.ring = ring
        self.descs: list[TxDesc | bytes] = []
        self.wire: dict[int, bytes] = {}
        self.desc_fail: set[int] = set()      # ring indices whose read fails
        self.dma_fail: set[int] = set()       # frames (first index) whose segment read fails
        self.frame_bounds: list[int] = []     # index where each posted unit starts

    def add(self, descs: Sequence[TxDesc | bytes], wire: bytes | None = None) -> int:
        first = len(self.descs)
        self.frame_bounds.append(first)
        self.descs.extend(descs)
        if wire is not None:
            self.wire[first] = wire
        return first

    def expected(self, limit: int) -> list[Expected]:
        seen = [None if i in self.desc_fail else d for i, d in enumerate(self.descs)]
        return spec_outcomes(seen, 0, self.ring.t, 0, self.ring.cq_log2, limit, self.wire, self.dma_fail)


async def run_plans(tb: NicTb, plans: list[QueuePlan], limit: int, max_wait_us: int = 4000) -> dict[str, int]:
    """Post every plan (as far as the rings allow, in whole units), check completions and sent
    frames against the expectation as they come; returns the expected counter increments."""
    exp = {p.ring.t: p.expected(limit) for p in plans}
    pending = {t: [e.wire for e in lst if e.wire is not None] for t, lst in exp.items()}
    got_n = {t: 0 for t in exp}
    posted_units = {p.ring.t: 0 for p in plans}
    consumed = {p.ring.t: 0 for p in plans}
    size = {p.ring.t: 1 << p.ring.log2 for p in plans}
    ring_check = CplRingCheck(tb.space, [p.ring for p in plans]) if tb.space.record_writes else None
    for t, lst in exp.items():
        if ring_check is not None:
            ring_check.expect(t, len(lst))
    waited = 0
    since = sim_ns()          # the last progress: a failure's window starts there
    while True:
        for p in plans:
            t = p.ring.t
            rung = False
            while posted_units[t] < len(p.frame_bounds):
                u = posted_units[t]
                start = p.frame_bounds[u]
                end = p.frame_bounds[u + 1] if u + 1 < len(p.frame_bounds) else len(p.descs)
                if end - consumed[t] > size[t]:
                    break
                p.ring.write_descs(p.descs[start:end])
                posted_units[t] += 1
                rung = True
            if rung:
                await p.ring.doorbell()
        await tb.delay(500)
        waited += 500
        progress = False
        if ring_check is not None:
            ring_check.scan()
        for p in plans:
            t = p.ring.t
            cpls = p.ring.poll()
            for c in cpls:
                now = sim_ns()
                tail = (f" (between {since:.0f} and {now:.0f} ns)\n  waves: {waves_command(since, now)}"
                        if now is not None and since is not None else "")
                assert got_n[t] < len(exp[t]), f"queue {t}: unexpected completion {c}{tail}"
                want = exp[t][got_n[t]].cpl
                assert c == want, f"queue {t} completion {got_n[t]} differs: {field_diff(c, want)}{tail}"
                got_n[t] += 1
                consumed[t] += c.ndesc
                progress = True
            if cpls:
                await p.ring.ack()
        match_sent(tb.tx_frames(), pending)
        if all(got_n[t] == len(exp[t]) for t in exp) and not any(pending.values()):
            break
        if progress:
            waited = 0
            since = sim_ns()
        if waited >= max_wait_us * 1000:
            now = sim_ns()
            raise AssertionError(
                f"no progress for {max_wait_us} us of simulated time (since {since} ns): waited for "
                f"completions {got_n} of { {t: len(v) for t, v in exp.items()} } and frames still to send "
                f"{ {t: len(v) for t, v in pending.items()} }"
                + (f"\n  waves: {waves_command(since, now)}" if now is not None else ""))
    await tb.delay(200)
    assert not tb.tx_frames(), "extra frames on m_axis_tx"
    if ring_check is not None:
        ring_check.scan()
    inc = {c: 0 for c in COUNTERS}
    for lst in exp.values():
        for e in lst:
            inc[STATUS_COUNTER[e.cpl.status]] += 1
            if e.cpl.status == TxStatus.OK:
                inc["TX_BYTES"] += e.cpl.len
    return inc


async def read_counters(tb: NicTb) -> dict[str, int]:
    return {c: await tb.read32(getattr(regs, c)) for c in COUNTERS}


def good_frame(rng: random.Random, plan: QueuePlan, host: PagePool, dev: PagePool, size: int,
               kind: int, tag: int, csum: bool = True, zero_csum: bool = False) -> None:
    """A TCP/UDP over IPv4/IPv6 frame of `size` bytes (kind: bit 0 IPv6, bit 1 UDP; a frame
    too short for the kind's headers falls back to IPv4)."""
    if size < 14 + (40 if kind & 1 else 20) + (8 if kind & 2 else 20) + 2:
        kind &= ~1
    f = l4_frame(size, bool(kind & 1), bool(kind & 2), seed=rng.randrange(1 << 30), zero_csum=zero_csum)
    data = f.seeded if csum else f.wire
    descs = frame_descs(rng, data, f.hdr_len, host, dev, tag,
                        (f.csum_start, f.csum_offset, f.udp) if csum else None)
    plan.add(descs, f.wire)


def inline_frame_entries(rng: random.Random, frame: bytes, hlen: int, dev: PagePool, tag: int,
                         csum: tuple[int, int, bool] | None,
                         max_descs: int = MAX_SEGS) -> list[TxDesc | bytes]:
    """An INLINE frame (docs/tx.md, "Inline headers"): the frame's first `hlen` bytes in the
    ring after the first descriptor (the last entry padded with random bytes), the rest in
    device memory at odd places, cut into 1..`max_descs` segments; the first descriptor carries
    the first segment, or none (len 0)."""
    rest = frame[hlen:]
    lens = split_payload(rng, len(rest), max_descs) if rest else []
    if lens and rng.random() < 0.25 and len(lens) < max_descs:
        lens = [0] + lens                    # the INLINE descriptor carries no segment
    descs, pos = [], 0
    for n in lens or [0]:
        addr = dev.place(rest[pos:pos + n], seg_offset(rng, n)) if n else 0
        descs.append(TxDesc(addr, n))
        pos += n
    descs[-1].eop = True
    d0 = descs[0]
    d0.tag, d0.inline, d0.inline_len = tag, True, hlen
    if csum is not None:
        d0.csum, d0.csum_start, d0.csum_offset, d0.csum_udp = True, csum[0], csum[1], csum[2]
    return [d0, *inline_entries(frame[:hlen], pad=rng.randrange(256)), *descs[1:]]


def good_inline_frame(rng: random.Random, plan: QueuePlan, dev: PagePool, size: int, kind: int,
                      tag: int, hlen: int | None = None) -> None:
    """A TCP/UDP over IPv4/IPv6 frame of `size` bytes with checksum offload whose first `hlen`
    bytes (default: its headers; at most 128) are inline in the ring."""
    if size < 14 + (40 if kind & 1 else 20) + (8 if kind & 2 else 20) + 2:
        kind &= ~1
    f = l4_frame(size, bool(kind & 1), bool(kind & 2), seed=rng.randrange(1 << 30))
    h = min(f.hdr_len if hlen is None else hlen, INLINE_MAX, size)
    plan.add(inline_frame_entries(rng, f.seeded, h, dev, tag, (f.csum_start, f.csum_offset, f.udp)),
             f.wire)


async def bring_up(tb: NicTb, queues: list[int], log2: int = 8,
                   inline_en: bool = False) -> list[TxRing]:
    rings = [TxRing(tb, t, log2=log2, cq_log2=log2) for t in queues]
    for r in rings:
        await r.start(inline_en)
    return rings


# ------------------------------------------------------------------------------------------
# Bulk TX: many frames through one queue, little Python per frame
# ------------------------------------------------------------------------------------------
@dataclass
class BulkTxFrame:
    """One of the distinct frames a bulk run repeats: its descriptors packed once (the
    segments never move), the completion it must get (ring and CQ indices filled in per
    instance) and the bytes it must put on the wire (None when it fails)."""

    descs: bytes
    ndesc: int
    cpl: TxCompletion
    wire: bytes | None


def bulk_tx_frames(tb, rng: random.Random, ring: TxRing, n_distinct: int = 64,
                   sizes: tuple[int, int] = (60, 128), limit: int = TX_FRAME_LIMIT_RESET,
                   bad_every: int = 16) -> list[BulkTxFrame]:
    """`n_distinct` frames for `bulk_tx`: TCP/UDP over IPv4/IPv6 of `sizes[0]..sizes[1]`
    bytes with checksum offload, the header segment in host memory and the payload in 1 to
    15 device-memory segments at odd offsets (some ending at a 4 KiB boundary); every
    `bad_every`-th frame is too short (BAD_LEN: no wire bytes, nothing read). Expected
    outcomes from docs/tx.md's rules, the golden model and scapy (`spec_outcomes`)."""
    host = PagePool(tb, n_distinct * MAX_SEGS, device=False)
    dev = PagePool(tb, n_distinct * MAX_SEGS, device=True)
    out = []
    for k in range(n_distinct):
        plan = QueuePlan(ring)
        if bad_every and k % bad_every == bad_every - 1:
            short = rng.randint(1, MIN_LEN - 1)
            plan.add([TxDesc(host.place(bytes(short), seg_offset(rng, short)), short, eop=True, tag=k)])
        else:
            good_frame(rng, plan, host, dev, rng.randint(*sizes), kind=k % 4, tag=k)
        (exp,) = spec_outcomes(plan.descs, 0, ring.t, 0, ring.cq_log2, limit, plan.wire, set())
        ring_bytes = b"".join(d.pack() if isinstance(d, TxDesc) else bytes(d) for d in plan.descs)
        out.append(BulkTxFrame(ring_bytes, len(plan.descs), exp.cpl, exp.wire))
    return out


async def bulk_tx(tb, n_frames: int, *, queue: int = 0, log2: int = 10, n_distinct: int = 64,
                  sizes: tuple[int, int] = (60, 128), seed: int = 1, poll_cycles: int = 2048,
                  progress_s: float = 5.0, on_poll=None) -> dict:
    """Send `n_frames` frames through TX queue `queue` (rings of 2^`log2` entries) and check
    every completion (every field, desc_idx and GEN included, against `spec_outcomes`) and
    every frame on the wire (byte for byte, in order), keeping the descriptor ring as full as
    it goes. The frames repeat `bulk_tx_frames`'s `n_distinct` frames, so Python per frame
    is one descriptor write, one completion compare and one frame compare. `tb` (reset
    already) is a NicTb or a FastNicTb. Returns counts (frames, descriptors, OK frames,
    bytes) and the simulated cycles; AssertionError on the first difference or after 50
    polls without a completion. `on_poll(frames_done)` is called after every poll."""
    ring = TxRing(tb, queue, log2=log2, cq_log2=log2)
    await ring.start()
    frames = bulk_tx_frames(tb, random.Random(seed), ring, n_distinct, sizes)
    size = 1 << log2
    clk_ns = CLK_NS
    c0 = get_sim_time("ns") / clk_ns
    sent = done = descs = ok = ok_bytes = 0
    clean = 0                                   # first descriptor not completed (16-bit)
    cq_idx = 0                                  # free-running completions consumed
    expect: deque[tuple[BulkTxFrame, int]] = deque()
    wires: deque[bytes] = deque()
    on_wire = 0
    idle = 0
    t0 = last = time.perf_counter()
    while done < n_frames:
        posted = False
        while sent < n_frames:
            f = frames[sent % n_distinct]
            if ((ring.sw_idx - clean) & 0xFFFF) + f.ndesc > size:
                break
            slot = ring.sw_idx % size
            head = min(f.ndesc, size - slot)
            tb.host.write(ring.entry_addr(ring.sw_idx), f.descs[:16 * head])
            if head < f.ndesc:                  # the frame's descriptors wrap the ring
                tb.host.write(ring.base, f.descs[16 * head:])
            expect.append((f, ring.sw_idx))
            if f.wire is not None:
                wires.append(f.wire)
            ring.sw_idx = (ring.sw_idx + f.ndesc) & 0xFFFF
            sent += 1
            descs += f.ndesc
            posted = True
        if posted:
            await ring.doorbell()
        await tb.delay(poll_cycles * clk_ns)
        cpls = ring.poll()
        for c in cpls:
            assert expect, f"TXQ[{queue}]: completion {cq_idx} for no posted frame: {c}"
            f, first = expect.popleft()
            want = replace(f.cpl, desc_idx=first, gen=1 - ((cq_idx >> log2) & 1))
            assert c == want, f"TXQ[{queue}] completion {cq_idx} (frame {done}): got {c}, want {want}"
            clean = (clean + c.ndesc) & 0xFFFF
            cq_idx += 1
            done += 1
            if c.status == TxStatus.OK:
                ok += 1
                ok_bytes += c.len
        if cpls:
            await ring.ack()
        for g in tb.tx_frames():
            assert wires, f"TXQ[{queue}]: frame {on_wire} on the wire that no posted frame explains"
            w = wires.popleft()
            assert g == w, (f"TXQ[{queue}]: frame {on_wire} on the wire ({len(g)} B) differs from "
                            f"the expected {len(w)} B: {g[:32].hex()} vs {w[:32].hex()}")
            on_wire += 1
        if on_poll is not None:
            on_poll(done)
        idle = 0 if cpls else idle + 1
        assert idle < 50, f"TXQ[{queue}]: no completion for 50 polls: {done} of {n_frames} frames done"
        now = time.perf_counter()
        if now - last > progress_s:
            tb.dut._log.info("bulk TX: %d/%d frames checked", done, n_frames)
            last = now
    for _ in range(50):                         # the last frames may still be on their way out
        if not wires:
            break
        await tb.delay(poll_cycles * clk_ns)
        for g in tb.tx_frames():
            w = wires.popleft()
            assert g == w, f"TXQ[{queue}]: frame {on_wire} on the wire differs from the expected bytes"
            on_wire += 1
    assert not wires, f"TXQ[{queue}]: {len(wires)} expected frames never left the NIC"
    return {"frames": n_frames, "descriptors": descs, "completions": cq_idx, "ok": ok,
            "ok_bytes": ok_bytes, "on_wire": on_wire, "ring": ring,
            "cycles": int(get_sim_time("ns") / clk_ns - c0), "wall_s": time.perf_counter() - t0}
