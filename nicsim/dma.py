"""The NIC's DMA traffic in a waveform, decoded into AXI transactions and labelled.

`decode(wave)` reads the AXI4 DMA master of nic_top (the `m_axi_*` signals, on nic_top's
waveforms and on the fast harness's alike) at every rising clock edge and returns one
`Txn` per burst: when its address was accepted and when its last data beat (reads) or its
response (writes) arrived, its ID, address, beats and bytes (writes: the bytes whose strobes
were set), the response, and what it is, from the ID map of docs/architecture.md ("DMA")
and the address map (models/address_map.py):

  writes, AWID q < 8          RX queue q: `header` (into a header buffer), `payload` (into a
                              payload buffer), `completion` (into the completion ring)
  writes, AWID 8 + t          TX queue t: `tx-completion`
  reads, ARID q < NUM_RXQ     RX queue q header ring: `hdr-desc`
  reads, ARID NUM_RXQ + q     RX queue q payload ring: `pay-desc`
  reads, ARID 16 + t          TX queue t: `tx-desc`
  reads, ARID 24              TX segment data: `tx-segment`

An RX write's target is known from what the NIC read: the descriptors in the R data of the
header and payload rings name every buffer's address (a write into one of them is a header
or a payload write), and a write into the queue's completion ring (`cq_base[q]` of the
waveform, when it has nic_top's internal signals) is a completion. A write the decoder cannot
place keeps the kind `rx-write`. `memory` is `host`, `device` or `unmapped`.
"""
from __future__ import annotations

import bisect
import csv
import io
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any

from models.address_map import window_of
from models.formats import DESC_BYTES, RxDesc
from nicsim.waves import WaveError, as_int

RX_WRITE_KINDS = ("header", "payload", "completion")
TX_CPL_ID = 8           # TX queue t's completions: AWID 8 + t (docs/architecture.md, DMA)
TX_DESC_ID = 16         # TX queue t's descriptor reads: ARID 16 + t
TX_DATA_ID = 24         # TX segment reads
CSV_FIELDS = ["time_ns", "end_ns", "dir", "kind", "queue", "id", "memory", "addr", "bytes", "beats", "resp"]
RESP = {0: "OKAY", 1: "EXOKAY", 2: "SLVERR", 3: "DECERR"}


@dataclass
class Txn:
    dir: str                 # "write" or "read"
    time_ps: int             # address handshake
    id: int
    addr: int
    beats: int
    size: int                # bytes per beat (AxSIZE)
    end_ps: int | None = None     # last data beat (read) / response (write); None: not in the file
    nbytes: int = 0          # writes: strobed bytes; reads: bytes the burst covers from addr
    resp: str = ""
    kind: str = "unknown"
    queue: int | None = None
    memory: str = ""
    data: bytearray = field(default_factory=bytearray, repr=False)   # reads: the R data
    w_beats: int = 0         # write beats seen so far
    first_beat_ps: int | None = None   # the first and last data beat (W or R)
    last_beat_ps: int | None = None

    @property
    def time_ns(self) -> float:
        return self.time_ps / 1000

    @property
    def end_ns(self) -> float | None:
        return None if self.end_ps is None else self.end_ps / 1000

    @property
    def label(self) -> str:
        """`q7 payload dev 1460 B`: short enough for a picture."""
        q = "" if self.queue is None else (f"q{self.queue} " if not self.kind.startswith("tx") else f"t{self.queue} ")
        mem = {"host": "host", "device": "dev", "unmapped": "unmapped"}.get(self.memory, self.memory)
        return f"{q}{self.kind} {mem} {self.nbytes} B"

    def row(self) -> dict[str, Any]:
        return {"time_ns": f"{self.time_ns:.3f}", "end_ns": "" if self.end_ns is None else f"{self.end_ns:.3f}",
                "dir": self.dir, "kind": self.kind, "queue": "" if self.queue is None else self.queue,
                "id": self.id, "memory": self.memory, "addr": f"0x{self.addr:x}", "bytes": self.nbytes,
                "beats": self.beats, "resp": self.resp}


class _Sampler:
    """A trace's value just before each rising clock edge (what a flip-flop samples)."""

    def __init__(self, trace: Any) -> None:
        self.times = trace.times
        self.values = [as_int(v) for v in trace.values]

    def at(self, t: int) -> int | None:
        i = bisect.bisect_left(self.times, t) - 1      # strictly before t
        return self.values[i] if i >= 0 else None


def _high_spans(s: _Sampler, end: int) -> list[tuple[int, int]]:
    """[t0, t1) spans where the signal is 1."""
    out = []
    for i, v in enumerate(s.values):
        if v == 1:
            t1 = s.times[i + 1] if i + 1 < len(s.times) else end + 1
            out.append((s.times[i], t1))
    return out


def _edges_in(edges: list[int], spans: list[tuple[int, int]]) -> list[int]:
    """Rising edges t with the signal high just before t: t in (t0, t1]."""
    out = []
    for t0, t1 in spans:
        i = bisect.bisect_right(edges, t0)
        j = bisect.bisect_right(edges, t1)
        out += edges[i:j]
    return out


def params(wave: Any) -> dict[str, int]:
    """nic_top's parameters as the waveform stores them (Verilator traces them)."""
    out = {}
    for name in ("NUM_RXQ", "NUM_TXQ", "DMA_DATA_W", "DATA_W"):
        full = wave.find(name)
        if full is not None:
            tr = wave.trace(full)
            if tr.values:
                v = as_int(tr.values[0])
                if v is not None:
                    out[name] = v
    return out


def decode(wave: Any) -> list[Txn]:
    """Every AXI burst of the DMA master in `wave` (a nicsim.waves.Wave), in address order of
    time, labelled. Raises nicsim.waves.WaveError when the file has no DMA master."""
    need = ["clk", "m_axi_awvalid", "m_axi_awready", "m_axi_awid", "m_axi_awaddr", "m_axi_awlen",
            "m_axi_awsize", "m_axi_wvalid", "m_axi_wready", "m_axi_wlast", "m_axi_wstrb",
            "m_axi_bvalid", "m_axi_bready", "m_axi_bid", "m_axi_bresp", "m_axi_arvalid",
            "m_axi_arready", "m_axi_arid", "m_axi_araddr", "m_axi_arlen", "m_axi_arsize",
            "m_axi_rvalid", "m_axi_rready", "m_axi_rid", "m_axi_rlast", "m_axi_rresp", "m_axi_rdata"]
    full = {n: wave.find(n) for n in need}
    missing = [n for n, f in full.items() if f is None]
    if missing:
        raise WaveError(f"{wave.path}: no DMA master to decode (missing {', '.join(missing[:4])}"
                        f"{' ...' if len(missing) > 4 else ''})")
    tr = {n: wave.trace(f) for n, f in full.items()}
    s = {n: _Sampler(t) for n, t in tr.items() if n != "m_axi_rdata"}
    rdata = tr["m_axi_rdata"]
    end = wave.end_ps
    clk = s["clk"]
    edges = [t for t, v in zip(clk.times, clk.values) if v == 1]
    p = params(wave)
    nrxq = p.get("NUM_RXQ", 8)
    bus_bytes = (p.get("DMA_DATA_W") or tr["m_axi_wstrb"].width * 8) // 8

    def hs(valid: str, ready: str) -> list[int]:
        ve = set(_edges_in(edges, _high_spans(s[valid], end)))
        return sorted(t for t in _edges_in(edges, _high_spans(s[ready], end)) if t in ve)

    txns: list[Txn] = []
    # ---- writes: AW, W in AW order, B by ID
    aws = [Txn("write", t, s["m_axi_awid"].at(t) or 0, s["m_axi_awaddr"].at(t) or 0,
               (s["m_axi_awlen"].at(t) or 0) + 1, 1 << (s["m_axi_awsize"].at(t) or 0)) for t in
           hs("m_axi_awvalid", "m_axi_awready")]
    ws = [(t, s["m_axi_wstrb"].at(t) or 0, s["m_axi_wlast"].at(t) == 1) for t in hs("m_axi_wvalid", "m_axi_wready")]
    wi = 0
    for a in aws:                       # W beats belong to bursts in AW order
        while wi < len(ws) and a.w_beats < a.beats:
            t, strb, _last = ws[wi]
            a.nbytes += bin(strb).count("1")
            a.w_beats += 1
            a.first_beat_ps = t if a.first_beat_ps is None else a.first_beat_ps
            a.last_beat_ps = t
            wi += 1
    waiting: dict[int, deque[Txn]] = defaultdict(deque)
    for a in aws:
        waiting[a.id].append(a)
    for t in hs("m_axi_bvalid", "m_axi_bready"):
        q = waiting.get(s["m_axi_bid"].at(t) or 0)
        if q:
            a = q.popleft()
            a.end_ps = t
            a.resp = RESP.get(s["m_axi_bresp"].at(t) or 0, "?")
    txns += aws
    # ---- reads: AR, R by ID, in order per ID
    ars = [Txn("read", t, s["m_axi_arid"].at(t) or 0, s["m_axi_araddr"].at(t) or 0,
               (s["m_axi_arlen"].at(t) or 0) + 1, 1 << (s["m_axi_arsize"].at(t) or 0)) for t in
           hs("m_axi_arvalid", "m_axi_arready")]
    rwait: dict[int, deque[Txn]] = defaultdict(deque)
    for a in ars:
        a.nbytes = a.beats * a.size - (a.addr % a.size)
        rwait[a.id].append(a)
    rd = _Sampler(rdata)
    rd.values = list(rdata.values)         # keep the raw bit strings (wide buses)
    for t in hs("m_axi_rvalid", "m_axi_rready"):
        q = rwait.get(s["m_axi_rid"].at(t) or 0)
        if not q:
            continue
        a = q[0]
        a.first_beat_ps = t if a.first_beat_ps is None else a.first_beat_ps
        a.last_beat_ps = t
        i = bisect.bisect_left(rd.times, t) - 1
        word = as_int(rd.values[i]) if i >= 0 else None
        a.data += (word or 0).to_bytes(bus_bytes, "little")
        resp = RESP.get(s["m_axi_rresp"].at(t) or 0, "?")
        if resp != "OKAY" or not a.resp:
            a.resp = resp if a.resp in ("", "OKAY") else a.resp
        if s["m_axi_rlast"].at(t) == 1 or len(a.data) >= a.beats * bus_bytes:
            a.end_ps = t
            q.popleft()
    txns += ars
    txns.sort(key=lambda x: (x.time_ps, x.dir))
    _label(wave, txns, nrxq)
    return txns


class _Rings:
    """The rings' bases and sizes over time, from nic_top's queue settings in the waveform
    (`hdr_ring_base.[q]`, `hdr_ring_log2.[q]`, ..., `txq_cq_base.[t]`); empty when the file
    has only the ports."""

    KINDS = {"hdr-desc": ("hdr_ring_base", "hdr_ring_log2"), "pay-desc": ("pay_ring_base", "pay_ring_log2"),
             "completion": ("cq_base", "cq_log2"), "tx-desc": ("txq_ring_base", "txq_ring_log2"),
             "tx-completion": ("txq_cq_base", "txq_cq_log2")}

    def __init__(self, wave: Any) -> None:
        self.rings: list[tuple[str, int, _Sampler, _Sampler]] = []
        for kind, (base, log2) in self.KINDS.items():
            for q in range(8):
                fb, fl = wave.find(f"{base}.[{q}]"), wave.find(f"{log2}.[{q}]")
                if fb is not None and fl is not None:
                    self.rings.append((kind, q, _Sampler(wave.trace(fb)), _Sampler(wave.trace(fl))))

    def __bool__(self) -> bool:
        return bool(self.rings)

    def find(self, addr: int, t: int, kinds: tuple[str, ...]) -> tuple[str, int] | None:
        """(kind, queue) of the ring holding `addr` at time `t`."""
        for kind, q, base, log2 in self.rings:
            if kind not in kinds:
                continue
            b, n = base.at(t), log2.at(t)
            if b and n is not None and b <= addr < b + (DESC_BYTES << n):
                return kind, q
        return None


def _label(wave: Any, txns: list[Txn], nrxq: int) -> None:
    """kind, queue and memory of every transaction (see the module docstring)."""
    rings = _Rings(wave)
    bufs: dict[str, list[tuple[int, int]]] = {"header": [], "payload": []}   # (address, queue)
    for x in txns:                        # in time order: descriptors are read before their use
        w = window_of(x.addr, max(x.nbytes, 1))
        x.memory = w.name if w else "unmapped"
        if x.dir == "read":
            hit = rings.find(x.addr, x.time_ps, ("hdr-desc", "pay-desc", "tx-desc")) if rings else None
            if hit is not None:
                x.kind, x.queue = hit
            elif x.id == TX_DATA_ID:
                x.kind = "tx-segment"
            elif not rings:               # only the ports: the ID map of docs/architecture.md
                if x.id < nrxq:
                    x.kind, x.queue = "hdr-desc", x.id
                elif x.id < 2 * nrxq:
                    x.kind, x.queue = "pay-desc", x.id - nrxq
                elif TX_DESC_ID <= x.id < TX_DATA_ID:
                    x.kind, x.queue = "tx-desc", x.id - TX_DESC_ID
            if x.kind in ("hdr-desc", "pay-desc") and x.end_ps is not None:
                off = x.addr % x.size
                raw = bytes(x.data[off:off + x.nbytes])
                for k in range(0, len(raw) - DESC_BYTES + 1, DESC_BYTES):
                    d = RxDesc.unpack(raw[k:k + DESC_BYTES])
                    bufs["header" if x.kind == "hdr-desc" else "payload"].append((d.addr, x.queue or 0))
            continue
        hit = rings.find(x.addr, x.time_ps, ("completion", "tx-completion")) if rings else None
        if hit is not None:
            x.kind, x.queue = hit
            continue
        if not rings and TX_CPL_ID <= x.id < TX_CPL_ID + 8:
            x.kind, x.queue = "tx-completion", x.id - TX_CPL_ID
            continue
        x.kind, x.queue = "rx-write", x.id if x.id < 8 else None
        for kind in ("header", "payload"):
            # a buffer is written from its start, a long payload in bursts (at most 4 KiB)
            for a, q in reversed(bufs[kind][-256:]):
                if a <= x.addr < a + 4096:
                    x.kind, x.queue = kind, q
                    break
            if x.kind == kind:
                break


def text_table(txns: list[Txn]) -> str:
    rows = [["time ns", "end ns", "dir", "kind", "queue", "id", "memory", "addr", "bytes", "beats", "resp"]]
    for x in txns:
        r = x.row()
        rows.append([r[k] if r[k] != "" else "-" for k in CSV_FIELDS])
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(str(c).rjust(w) if i in (0, 1, 4, 5, 8, 9) else str(c).ljust(w)
                               for i, (c, w) in enumerate(zip(r, widths))).rstrip() for r in rows) + "\n"


def csv_text(txns: list[Txn]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, lineterminator="\n")
    w.writeheader()
    for x in txns:
        w.writerow(x.row())
    return buf.getvalue()
