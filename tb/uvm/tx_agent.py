"""The TX side of the pyuvm environment (docs/tx.md):

- `TxFrameItem`: one frame as the driver hands it to a TX queue: its descriptors (segments
  already in host or device memory), the bytes it must put on the wire when OK, and what the
  sequence meant (checksum kind, injected fault) for coverage;
- `TxRandomSeq`: constrained-random frames from the profile's TX knobs: TCP/UDP over
  IPv4/IPv6 with checksum offload, 1..16 segments at any offset (page start, odd, ending at
  4 KiB), header in host memory and payload in device or host memory, and faults: a segment
  crossing 4 KiB or of length 0 (BAD_SEG), a frame too short or too long (BAD_LEN), a checksum offset
  out of the frame (BAD_CSUM), a payload page that answers SLVERR (DMA_RD_ERR), and an
  8-entry aligned block of the descriptor ring that answers SLVERR (DESC_RD_ERR: each failed
  entry completes as a frame of its own, as tests/rtl/test_tx.py injects it);
- `TxAgent`: sequencer, `TxDriver` (writes each item's descriptors into its queue's ring
  when they fit and rings the doorbell), `TxMonitor` (every frame on m_axis_tx);
- `TxScoreboard`: the expected completion of each posted frame from `tb.tx_env.spec_outcomes`
  (docs/tx.md's rules, the golden model's `check_frame`, scapy's checksums), every
  completion compared field by field in ring order per queue, every frame on the wire
  byte for byte in its queue's order (queues interleave on the port), the TX counters at the
  end against the sums of the expected statuses, and TX functional coverage per completion.
"""
from __future__ import annotations

import random
from collections import deque

from cocotb.triggers import Timer
from pyuvm import ConfigDB, uvm_agent, uvm_analysis_port, uvm_component, uvm_driver, uvm_monitor, uvm_sequence
from pyuvm import uvm_sequence_item, uvm_sequencer, uvm_subscriber

from models.formats import TX_MAX_SEGS, TX_SEG_PAGE, TxDesc, TxStatus
from driver import regs
from models.tx import STATUS_COUNTER, TSO_COUNTER_NAMES
from tb import tx_env
from tb.uvm.coverage import nic_tso_covergroup, nic_tx_covergroup, tx_offset_bin, tx_segments_bin
from tb.uvm.tso import TsoSend, tso_completion, tso_counts, tso_item_send, tso_mss_bin, tso_segs_bin

POLL_NS = 800
STALL_LIMIT_NS = 400_000
FRAME_LIMIT = 1522            # TX_FRAME_LIMIT's reset value (Profile.tx_frame_limit's default)


class TxFrameItem(uvm_sequence_item):
    def __init__(self, name: str = "tx_frame", queue: int = 0, descs: list[TxDesc] | None = None,
                 wire: bytes | None = None, csum: str = "none", fault: str = "none",
                 dma_fail: tuple[int, int] | None = None, pay_mem: str = "none") -> None:
        super().__init__(name)
        self.queue = queue
        self.descs = descs or []
        self.wire = wire
        self.csum = csum                 # none, tcp4, udp4, tcp6, udp6 (udp_zero decided by the result)
        self.fault = fault               # none, crossing, zero_len, short, bad_csum, dma_rd_err, long
        self.dma_fail = dma_fail         # (addr, len) answering SLVERR while the frame is read
        self.pay_mem = pay_mem
        self.first_idx = 0               # ring index of its first descriptor (set by the driver)
        self.desc_fail = False           # DESC_RD_ERR block: the driver pads to an aligned block
        self.fail_from = 0               # descs[fail_from:] are the failing ring entries
        self.release: tuple[int, int] | None = None   # error range to remove at its last completion
        self.pad = 0                     # DESC_RD_ERR item: filler entries the driver put first
        self.tso: TsoSend | None = None  # a TSO send: what the model says of it (tb/uvm/tso.py)
        self.lead = 0                    # DESC_RD_ERR item: entries of the frame running into the block

    def __str__(self) -> str:
        return (f"TxFrameItem(q{self.queue}, {len(self.descs)} descriptors, "
                f"{len(self.wire) if self.wire else 0} B, csum={self.csum}, fault={self.fault})")


class TxRandomSeq(uvm_sequence):
    """`profile.tx_frames` frames (times the frames scale) over `profile.tx_queues`."""

    async def body(self) -> None:
        db = ConfigDB()
        prof = db.get(None, "", "profile")
        rng: random.Random = db.get(None, "", "tx_rng")
        pools = db.get(None, "", "tx_pools")
        scale = db.get(None, "", "frames_scale")
        for k in range(max(1, int(prof.tx_frames * scale)) if prof.tx_frames else 0):
            item = make_item(rng, prof, pools, k)
            await self.start_item(item)
            await self.finish_item(item)


def make_item(rng: random.Random, prof, pools: dict[str, tx_env.PagePool], tag: int) -> TxFrameItem:
    if prof.tx_tso_rate and rng.random() < prof.tx_tso_rate:
        return tso_tx_item(rng, prof, pools, tag)
    q = rng.choice(prof.tx_queues)
    kind = rng.randrange(4)              # bit 0 IPv6, bit 1 UDP
    size = rng.randint(*prof.tx_sizes)
    host, pay_pool = pools["host"], pools["host" if rng.random() < prof.tx_host_payload else "device"]
    fault = rng.choices(["none", "crossing", "zero_len", "short", "bad_csum", "dma_rd_err", "long", "desc_rd_err"],
                        [1 - prof.tx_fault_rate - prof.tx_desc_err_rate] + [prof.tx_fault_rate / 6] * 6
                        + [prof.tx_desc_err_rate])[0]
    if fault == "long":                  # past TX_FRAME_LIMIT: BAD_LEN with its segments
        size = rng.randint(prof.tx_frame_limit + 1, 2 * prof.tx_frame_limit)
    use_csum = rng.random() < prof.tx_csum_rate or fault == "bad_csum"
    if size < 14 + (40 if kind & 1 else 20) + (8 if kind & 2 else 20) + 2:
        kind &= ~1
    f = tx_env.l4_frame(size, bool(kind & 1), bool(kind & 2), seed=rng.randrange(1 << 30),
                        zero_csum=bool(kind & 2) and use_csum and rng.random() < prof.tx_zero_csum_rate
                        and (size - 2 - (14 + (40 if kind & 1 else 20))) % 2 == 0)
    data = f.seeded if use_csum else f.wire
    descs = tx_env.frame_descs(rng, data, f.hdr_len, host, pay_pool, tag & 0xFFFF,
                               (f.csum_start, f.csum_offset, f.udp) if use_csum else None)
    if rng.random() < prof.tx_max_segs_rate and len(data) - f.hdr_len >= TX_MAX_SEGS - 1:
        descs = _max_segments(rng, data, f.hdr_len, host, pay_pool, descs[0])
    elif prof.tx_one_seg_rate and len(data) <= TX_SEG_PAGE and rng.random() < prof.tx_one_seg_rate:
        d0 = descs[0]                        # the whole frame in one descriptor (no payload segment)
        descs = [TxDesc(pay_pool.place(data, tx_env.seg_offset(rng, len(data))), len(data), eop=True,
                        csum=d0.csum, csum_udp=d0.csum_udp, csum_start=d0.csum_start,
                        csum_offset=d0.csum_offset, tag=d0.tag)]
    wire: bytes | None = None if fault == "long" else f.wire
    dma_fail = None
    if fault == "crossing":              # a payload segment that runs over its 4 KiB page
        d = descs[-1]
        start = TX_SEG_PAGE - max(1, d.len // 2)
        descs[-1] = TxDesc(pay_pool.place(data[-d.len:], start, cross=True), d.len, eop=True)
        if d.len < 2:
            fault = "none"
    elif fault == "zero_len":                # (never past TX_MAX_SEGS: one item, one completion)
        if len(descs) == 1:                  # before the frame's only (EOP) descriptor
            descs.insert(0, TxDesc(host.place(b"", 0), 0, tag=descs[0].tag))
        elif len(descs) < TX_MAX_SEGS:
            descs.insert(1, TxDesc(host.place(b"", 0), 0))
        else:
            descs[1] = TxDesc(descs[1].addr, 0)
    elif fault == "short":
        n = rng.randint(1, tx_env.MIN_LEN - 1)
        descs = [TxDesc(host.place(data[:n], tx_env.seg_offset(rng, n)), n, eop=True, tag=tag & 0xFFFF)]
    elif fault == "bad_csum":                # an odd csum_start: BAD_CSUM whatever the frame
        d0 = descs[0]
        d0.csum, d0.csum_start, d0.csum_offset = True, f.csum_start + 1, f.csum_offset
    elif fault == "dma_rd_err":              # the first payload segment (or the only segment) fails
        d = descs[1] if len(descs) > 1 else descs[0]
        dma_fail = (d.addr, d.len)
    csum = "none" if not descs[0].csum else f"{'udp' if f.udp else 'tcp'}{6 if kind & 1 else 4}"
    pay_mem = "none" if len(descs) == 1 else ("host" if pay_pool is host else "device")
    if fault == "desc_rd_err":
        return desc_err_item(rng, q, host, tag, descs, csum, pay_mem)
    return TxFrameItem("tx_frame", q, descs, wire, csum, fault, dma_fail, pay_mem)


def tso_tx_item(rng: random.Random, prof, pools: dict[str, tx_env.PagePool], tag: int) -> TxFrameItem:
    """A TSO send (tb/uvm/tso.py) on one of the profile's queues."""
    q = rng.choice(prof.tx_queues)
    mem = "host" if rng.random() < prof.tx_host_payload else "device"
    send, entries = tso_item_send(rng, pools["host"], pools[mem], tag, prof.tx_frame_limit, prof.tx_tso_fault_rate)
    item = TxFrameItem("tso_send", q, entries, None, f"tcp{6 if send.ipv6 else 4}", send.fault, None, mem)
    item.tso = send
    return item


DESC_BLOCK = 8                # ring entries of one failing block: 128 bytes, one bus word up to 1024 bits


def desc_err_item(rng: random.Random, q: int, host, tag: int, lead: list[TxDesc], csum: str,
                  pay_mem: str) -> TxFrameItem:
    """A frame (`lead`) whose last j >= 1 descriptors lie in a block of DESC_BLOCK ring entries
    that answer SLVERR, the rest of the block one-descriptor frames. docs/tx.md: a failed
    descriptor read ends its frame (the frame's entries up to it are consumed, DESC_RD_ERR) and
    the next entry starts a new frame, so the block's other failed entries are a frame each. The
    driver puts the block on a 128-byte aligned place of the ring (after filler frames of 30
    bytes: BAD_LEN, sent nowhere), so no entry outside it shares a failing bus word at any
    DMA width (up to 1024 bits)."""
    # j entries of the frame in the block: often only its last (long frames end there), and
    # sometimes a segment read before the block runs over 4 KiB (DESC_RD_ERR still: docs/tx.md)
    j = 1 if rng.random() < 0.5 else rng.randint(1, min(len(lead), DESC_BLOCK))
    if j < len(lead) and rng.random() < 0.3:
        n = lead[0].len
        lead[0] = TxDesc(host.place(bytes(n), TX_SEG_PAGE - max(1, n // 2), cross=True), n,
                         csum=lead[0].csum, csum_udp=lead[0].csum_udp, csum_start=lead[0].csum_start,
                         csum_offset=lead[0].csum_offset, tag=lead[0].tag)
    rest = []
    for k in range(DESC_BLOCK - j):
        n = rng.randint(tx_env.MIN_LEN, 256)
        rest.append(TxDesc(host.place(bytes(n), tx_env.seg_offset(rng, n)), n, eop=True, tag=(tag + k) & 0xFFFF))
    item = TxFrameItem("tx_frame", q, lead + rest, None, csum, "desc_rd_err", None, pay_mem)
    item.desc_fail = True
    item.fail_from = len(lead) - j       # (the driver adds its filler entries)
    item.lead = len(lead)
    return item


def _max_segments(rng: random.Random, data: bytes, hdr_len: int, host, pool, d0: TxDesc) -> list[TxDesc]:
    """The frame as TX_MAX_SEGS descriptors: the header and 15 payload pieces, the first one
    anywhere in its page (start, any byte, ending at 4 KiB), the others at a page start."""
    pay = data[hdr_len:]
    n = TX_MAX_SEGS - 1
    cuts = [len(pay) * i // n for i in range(n + 1)]
    descs = [TxDesc(host.place(data[:hdr_len], 0), hdr_len, csum=d0.csum, csum_udp=d0.csum_udp,
                    csum_start=d0.csum_start, csum_offset=d0.csum_offset, tag=d0.tag)]
    for k, (a, b) in enumerate(zip(cuts, cuts[1:])):
        descs.append(TxDesc(pool.place(pay[a:b], tx_env.seg_offset(rng, b - a) if k == 0 else 0), b - a))
    descs[-1].eop = True
    return descs


class TxDriver(uvm_driver):
    """Posts each item's descriptors to its queue's ring when they fit (the scoreboard frees
    entries as completions come) and rings the doorbell."""

    def build_phase(self) -> None:
        self.tb = ConfigDB().get(self, "", "tb")
        self.ap = uvm_analysis_port("ap", self)
        self.rings: dict[int, tx_env.TxRing] = {}
        self.in_ring: dict[int, int] = {}        # descriptors posted and not completed, per queue
        self.fail_blocks: dict[int, list[tuple[int, int]]] = {}   # queue -> failing ring blocks still read
        self.sent = 0

    async def run_phase(self) -> None:
        while True:
            item = await self.seq_item_port.get_next_item()
            ring = self.rings[item.queue]
            if item.desc_fail:
                self._pad_to_block(item, ring)
            waited = 0
            while (self.in_ring[item.queue] + len(item.descs) > (1 << ring.log2)
                   or self._over_block(item, ring)):
                await Timer(POLL_NS, unit="ns")
                waited += POLL_NS
                assert waited < STALL_LIMIT_NS, f"TX driver: TXQ[{item.queue}] ring full for {STALL_LIMIT_NS} ns"
            if item.dma_fail:
                self.tb.space.add_error_range(*item.dma_fail)
            item.first_idx = ring.write_descs(item.descs)
            if item.desc_fail:
                item.release = (ring.entry_addr(item.first_idx + item.fail_from), 16 * DESC_BLOCK)
                self.tb.space.add_error_range(*item.release)
                self.fail_blocks.setdefault(item.queue, []).append(item.release)
            self.in_ring[item.queue] += len(item.descs)
            self.ap.write(item)                  # the expectation first, then the doorbell
            await ring.doorbell()
            self.sent += 1
            self.seq_item_port.item_done()


    def _over_block(self, item: TxFrameItem, ring: tx_env.TxRing) -> bool:
        """Some of the item's ring slots are in a failing block whose entries are not all
        completed (the ring wrapped onto it): posting there now would make them fail too."""
        blocks = self.fail_blocks.get(item.queue, [])
        return any(a <= ring.entry_addr(ring.sw_idx + i) < a + n
                   for a, n in blocks for i in range(len(item.descs)))

    def _pad_to_block(self, item: TxFrameItem, ring: tx_env.TxRing) -> None:
        """Filler frames (30 bytes: BAD_LEN) before the failing entries, so that they start on a
        128-byte boundary and do not wrap the ring's end."""
        size = 1 << ring.log2
        pad = 0
        while (ring.entry_addr(ring.sw_idx + pad + item.fail_from) % (16 * DESC_BLOCK)
               or (ring.sw_idx + pad + item.fail_from) % size + DESC_BLOCK > size):
            pad += 1
        host = ConfigDB().get(None, "", "tx_pools")["host"]
        item.descs = [TxDesc(host.place(bytes(30), 0), 30, eop=True) for _ in range(pad)] + item.descs
        item.fail_from += pad
        item.pad = pad


class TxMonitor(uvm_monitor):
    """Every frame the NIC sent on m_axis_tx (the testbench's sink), in order."""

    def build_phase(self) -> None:
        self.tb = ConfigDB().get(self, "", "tb")
        self.ap = uvm_analysis_port("ap", self)
        self.seen = 0

    async def run_phase(self) -> None:
        while True:
            frame = bytes((await self.tb.tx.recv()).tdata)
            self.seen += 1
            self.ap.write(frame)


class TxAgent(uvm_agent):
    def build_phase(self) -> None:
        self.seqr = uvm_sequencer("seqr", self)
        self.driver = TxDriver("driver", self)
        self.monitor = TxMonitor("monitor", self)

    def connect_phase(self) -> None:
        self.driver.seq_item_port.connect(self.seqr.seq_item_export)


class _Posted(uvm_subscriber):
    def write(self, item: TxFrameItem) -> None:
        self.get_parent().posted(item)


class _Wire(uvm_subscriber):
    def write(self, frame: bytes) -> None:
        self.get_parent().on_wire(frame)


def _frame_of(item: TxFrameItem, k: int, n: int) -> TxFrameItem:
    """The frame of a DESC_RD_ERR item completed from its entries k..k+n-1: a filler frame, the
    frame that runs into the failing block (its checksum kind and payload memory as made), or
    one failed entry; coverage samples what the driver posted."""
    lead = k == item.pad and item.lead
    fault = "desc_rd_err" if k + n > item.fail_from else "short"
    sub = TxFrameItem("tx_frame", item.queue, item.descs[k:k + n], None, item.csum if lead else "none",
                      fault, None, item.pay_mem if lead and n > 1 else "none")
    sub.first_idx = (item.first_idx + k) & 0xFFFF
    return sub


class TxScoreboard(uvm_component):
    def build_phase(self) -> None:
        self.posted_in = _Posted("posted_in", self)
        self.wire_in = _Wire("wire_in", self)
        self.tb = ConfigDB().get(self, "", "tb")
        self.limit = ConfigDB().get(self, "", "profile").tx_frame_limit
        self.cov = nic_tx_covergroup()
        self.tso_cov = nic_tso_covergroup()
        self.rings: dict[int, tx_env.TxRing] = {}
        self.driver: TxDriver | None = None
        self.expect: dict[int, deque] = {}         # queue -> (item, Expected) in ring order
        self.wire_expect: dict[int, list[bytes]] = {}
        self.cq_idx: dict[int, int] = {}
        self.completed = 0
        self.posted_n = 0
        self.status_counts: dict[str, int] = {}
        self.ok_bytes = 0
        self.last_queue: int | None = None
        self.errors: list[str] = []
        self.final: dict[str, int] = {}
        self.idle_ns = 0

    def start(self, rings: dict[int, tx_env.TxRing], driver: TxDriver) -> None:
        self.rings = rings
        self.driver = driver
        for t in rings:
            self.expect[t] = deque()
            self.wire_expect[t] = []
            self.cq_idx[t] = 0
        # the completion-in-ring rule: each completion write inside its ring, at the slot expected
        self.ring_check = tx_env.CplRingCheck(self.tb.space, list(rings.values()))

    # ------------------------------------------------------------------ expectations
    def posted(self, item: TxFrameItem) -> None:
        ring = self.rings[item.queue]
        if item.tso is not None:             # one completion, its segments on the wire
            cpl = tso_completion(item.tso, item.first_idx, len(item.descs), item.queue,
                                 self.cq_idx[item.queue] + len(self.expect[item.queue]), ring.cq_log2)
            self.expect[item.queue].append((item, tx_env.Expected(cpl, None)))
            self.ring_check.expect(item.queue)
            self.wire_expect[item.queue].extend(item.tso.segments)
            self.posted_n += 1
            return
        fail = {item.first_idx} if item.dma_fail else set()
        entries = (item.descs[:item.fail_from] + [None] * (len(item.descs) - item.fail_from)
                   if item.desc_fail else item.descs)
        exps = tx_env.spec_outcomes(entries, item.first_idx, item.queue, self.cq_idx[item.queue]
                                    + len(self.expect[item.queue]), ring.cq_log2, self.limit,
                                    {item.first_idx: item.wire} if item.wire else {}, fail)
        if item.desc_fail:                   # filler, the frame running in, failed entries: an item each
            assert sum(e.cpl.ndesc for e in exps) == len(item.descs)
            items = [_frame_of(item, (e.cpl.desc_idx - item.first_idx) & 0xFFFF, e.cpl.ndesc) for e in exps]
            items[-1].release = item.release
        else:
            assert len(exps) == 1
            items = [item]
        for it, exp in zip(items, exps):
            self.expect[item.queue].append((it, exp))
            self.ring_check.expect(item.queue)
            if exp.wire is not None:
                self.wire_expect[item.queue].append(exp.wire)
        self.posted_n += 1

    def on_wire(self, frame: bytes) -> None:
        tx_env.match_sent([frame], self.wire_expect)

    # ------------------------------------------------------------------ completions
    def _sample(self, item: TxFrameItem, cpl) -> None:
        status = TxStatus(cpl.status).name
        csum = item.csum
        if csum.startswith("udp") and cpl.status == TxStatus.OK and cpl.csum == 0xFFFF:
            csum = "udp_zero"
        pays = item.descs[1:]
        crossing = any(d.addr % TX_SEG_PAGE + d.len > TX_SEG_PAGE for d in item.descs)
        inter = "first" if self.last_queue is None else "same_queue" if self.last_queue == item.queue else "other_queue"
        self.last_queue = item.queue
        self.cov.sample(segments=tx_segments_bin(len(item.descs)),
                        hdr_offset=tx_offset_bin(item.descs[0].addr, item.descs[0].len),
                        pay_offset=tx_offset_bin(pays[0].addr, pays[0].len) if pays else "none",
                        crossing="crosses_4k" if crossing else "none", csum=csum, status=status,
                        queue=str(item.queue), interleave=inter, pay_mem=item.pay_mem)

    def _sample_tso(self, item: TxFrameItem) -> None:
        s = item.tso
        self.tso_cov.sample(segs=tso_segs_bin(len(s.segments)), mss=tso_mss_bin(s, self.limit),
                            ip="ipv6" if s.ipv6 else "ipv4", vlan=str(s.vlans), status=s.status.name,
                            pay_mem=item.pay_mem)

    async def poll_once(self) -> bool:
        progress = False
        self.ring_check.scan()
        for t, ring in self.rings.items():
            cpls = ring.poll()
            for c in cpls:
                assert self.expect[t], f"TXQ[{t}]: completion {c} for no posted frame"
                item, exp = self.expect[t].popleft()
                assert c == exp.cpl, f"TXQ[{t}] completion {self.cq_idx[t]} ({item}): got {c}, want {exp.cpl}"
                if item.dma_fail:
                    self.tb.space.remove_error_range(*item.dma_fail)
                if item.release:                 # the failing ring block's last entry completed
                    self.tb.space.remove_error_range(*item.release)
                    self.driver.fail_blocks[t].remove(item.release)
                self.cq_idx[t] += 1
                self.driver.in_ring[t] -= c.ndesc
                self.completed += 1
                if item.tso is not None:
                    for name, n in tso_counts(item.tso).items():
                        self.status_counts[name] = self.status_counts.get(name, 0) + n
                    self._sample_tso(item)
                else:
                    name = STATUS_COUNTER[c.status]
                    self.status_counts[name] = self.status_counts.get(name, 0) + 1
                    if c.status == TxStatus.OK:
                        self.ok_bytes += c.len
                    self._sample(item, c)
                progress = True
            if cpls:
                await ring.ack()
        return progress

    async def run_phase(self) -> None:
        while self.driver is None:
            await Timer(POLL_NS, unit="ns")
        while True:
            await Timer(POLL_NS, unit="ns")
            progress = await self.poll_once()
            busy = any(self.expect.values())
            self.idle_ns = 0 if progress or not busy else self.idle_ns + POLL_NS

    async def drain(self, sent) -> None:
        """Wait until every posted frame completed and every OK frame left the NIC."""
        while self.posted_n < sent() or any(self.expect.values()) or any(self.wire_expect.values()):
            await Timer(POLL_NS, unit="ns")
            assert self.idle_ns < STALL_LIMIT_NS, (
                f"TX: no completion for {STALL_LIMIT_NS} ns: {self.completed} of {self.posted_n} frames "
                f"completed, frames still to leave {[len(v) for v in self.wire_expect.values()]}")
        await Timer(2000, unit="ns")

    async def read_counters(self) -> None:
        self.final = await tx_env.read_counters(self.tb)
        self.final.update({n: await self.tb.read32(getattr(regs, n)) for n in TSO_COUNTER_NAMES})

    def check_phase(self) -> None:
        if not self.final:
            return
        want = {c: 0 for c in (*tx_env.COUNTERS, *TSO_COUNTER_NAMES)}
        for name, n in self.status_counts.items():
            want[name] += n
        want["TX_BYTES"] += self.ok_bytes
        diff = {c: (self.final[c], v) for c, v in want.items() if self.final[c] != v}
        assert not diff, f"TX counters differ (name: (rtl, expected)): {diff}"

    def report_phase(self) -> None:
        checked = self.ring_check.scan() if self.rings else 0
        self.logger.info(f"TX scoreboard: {self.completed} frames completed of {self.posted_n} posted, "
                         f"statuses {self.status_counts}, {self.ok_bytes} bytes sent, "
                         f"{checked} completion writes in their ring at the expected slot")
