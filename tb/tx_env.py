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
from dataclasses import dataclass, field

from cocotb.triggers import RisingEdge
from scapy.layers.inet import IP, TCP, UDP, in4_pseudoheader
from scapy.layers.inet6 import IPv6, in6_pseudoheader
from scapy.layers.l2 import Ether
from scapy.utils import checksum

from driver import regs
from models.formats import TxCompletion, TxDesc, TxStatus
from models.tx import check_frame, l4_checksum

MAX_SEGS = 16
MIN_LEN = 60
PAGE = 4096


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


def csum_field(frame: bytes, f: L4Frame) -> int:
    pos = f.csum_start + f.csum_offset
    return int.from_bytes(frame[pos:pos + 2], "big")


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

    def place(self, data: bytes, offset: int, cross: bool = False) -> int:
        """Write `data` at `offset` in the next page; `cross` lets it run into the page after
        (a bad segment that the NIC must refuse, never read)."""
        assert 0 <= offset and (cross or offset + len(data) <= PAGE)
        addr = self.base + PAGE * self.next + offset
        self.next = (self.next + 1 + (1 if cross else 0)) % self.npages
        if self.device:
            self.tb.dev.gpu.write(addr, data)
        else:
            self.tb.host.write(addr, data)
        return addr


def split_payload(rng: random.Random, n: int, max_segs: int) -> list[int]:
    """Segment lengths (each 1..4096) summing to n, at most max_segs of them."""
    lens = []
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


def spec_status(descs: list[TxDesc | None], limit: int) -> TxStatus:
    """docs/tx.md "Bad input". A failed descriptor read makes the frame DESC_RD_ERR (its
    length and checksum settings are unknown; completion len and tag 0)."""
    if any(d is None for d in descs):
        return TxStatus.DESC_RD_ERR
    if any(seg_bad(d) for d in descs) or not descs[-1].eop:
        return TxStatus.BAD_SEG
    n = sum(d.len for d in descs)
    if n < MIN_LEN or n > limit:
        return TxStatus.BAD_LEN
    f = descs[0]
    if f.csum and (f.csum_start % 2 or f.csum_offset % 2 or f.csum_start + f.csum_offset + 2 > n):
        return TxStatus.BAD_CSUM
    return TxStatus.OK


@dataclass
class Expected:
    cpl: TxCompletion
    wire: bytes | None         # the frame on m_axis_tx when OK


def spec_outcomes(descs: list[TxDesc | None], first_idx: int, queue: int, cq_first: int,
                  cq_log2: int, limit: int, wire_by_idx: dict[int, bytes],
                  dma_fail_idx: set[int], check_model: bool = True) -> list[Expected]:
    """The completions (and sent frames) of the posted descriptors `descs` (ring indices from
    `first_idx`; None = its read fails). `wire_by_idx[i]`: the frame that must leave when the
    frame starting at index i is OK; `dma_fail_idx`: frames (by first index) whose segment
    read fails. Only complete frames are returned."""
    out = []
    i = 0
    cq = cq_first
    size = 1 << cq_log2
    while i < len(descs):
        k = None
        for j, d in enumerate(descs[i:i + MAX_SEGS]):
            if d is None or d.eop:
                k = j + 1
                break
        if k is None:
            if len(descs) - i < MAX_SEGS:
                break
            k = MAX_SEGS
        fr = descs[i:i + k]
        st = spec_status(fr, limit)
        if check_model:
            model_check(fr, limit, st)
        idx = (first_idx + i) & 0xFFFF
        wire = None
        if st == TxStatus.OK and idx in dma_fail_idx:
            st = TxStatus.DMA_RD_ERR
        if st == TxStatus.DESC_RD_ERR:
            length, tag = 0, 0
        else:
            length, tag = sum(d.len for d in fr) & 0xFFFF, fr[0].tag
        csum = 0
        if st == TxStatus.OK:
            wire = wire_by_idx[idx]
            assert len(wire) == length
            if fr[0].csum:
                pos = fr[0].csum_start + fr[0].csum_offset
                csum = int.from_bytes(wire[pos:pos + 2], "big")
        cpl = TxCompletion(desc_idx=idx, ndesc=k, len=length, tag=tag, csum=csum, status=st,
                           queue=queue, gen=1 - ((cq // size) % 2))
        out.append(Expected(cpl, wire))
        cq += 1
        i += k
    return out


def model_check(frame: list[TxDesc | None], limit: int, want: TxStatus) -> None:
    """The golden model's descriptor rules must give the status this file derives from
    docs/tx.md."""
    got = check_frame(frame, limit)
    assert got == want, f"models/tx.py check_frame says {got!r}, docs/tx.md says {want!r} for {frame}"


# ------------------------------------------------------------------------------------------
# One TX queue on the RTL, by register writes
# ------------------------------------------------------------------------------------------
class TxRing:
    """TXQ[t]: descriptor ring and completion ring in host memory."""

    def __init__(self, tb, t: int, log2: int = 8, cq_log2: int = 8) -> None:
        self.tb = tb
        self.t = t
        self.log2 = log2
        self.cq_log2 = cq_log2
        self.base = tb.host.alloc(16 << log2)
        self.cq_base = tb.host.alloc(16 << cq_log2)
        self.sw_idx = 0
        self.cq_sw_idx = 0

    def reg(self, off: int) -> int:
        return regs.txq_reg(self.t, off)

    async def start(self) -> None:
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
        await tb.write32(self.reg(regs.TXQ_CTRL), 1)

    def entry_addr(self, idx: int) -> int:
        return self.base + 16 * (idx % (1 << self.log2))

    def write_descs(self, descs: list[TxDesc]) -> int:
        """Write descriptors at SW_IDX onwards (no doorbell); returns the first index."""
        first = self.sw_idx
        for d in descs:
            self.tb.host.write(self.entry_addr(self.sw_idx), d.pack())
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


# ------------------------------------------------------------------------------------------
# MAC-side checks
# ------------------------------------------------------------------------------------------
@dataclass
class TxMonitor:
    """Checks every accepted m_axis_tx beat: tkeep contiguous from bit 0, all ones except on
    tlast. Counts beats."""

    dut: object
    beats: int = 0
    errors: list[str] = field(default_factory=list)

    async def run(self) -> None:
        dut = self.dut
        nb = len(dut.m_axis_tx_tkeep)
        full = (1 << nb) - 1
        while True:
            await RisingEdge(dut.clk)
            if dut.m_axis_tx_tvalid.value == 1 and dut.m_axis_tx_tready.value == 1:
                self.beats += 1
                keep = int(dut.m_axis_tx_tkeep.value)
                last = int(dut.m_axis_tx_tlast.value)
                ok = keep == full if not last else (keep != 0 and (keep & (keep + 1)) == 0)
                if not ok and len(self.errors) < 10:
                    self.errors.append(f"beat {self.beats}: tkeep {keep:#x} tlast {last}")


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
            raise AssertionError(f"sent frame {k} ({len(f)} B, {f[:16].hex()}) is no queue's next "
                                 f"frame; heads {heads};{diff}")
