"""Functional coverage in pyvsc: the RX and TX cover models, their exclusions with reasons,
UCIS XML per run (pyucis) and the merge and report over a regression.

A cover model is a `GroupSpec`: named cover points (each a list of bin names) and crosses,
each cross with its `Exclusion`s: combinations that cannot happen (`ignore`) or must never
happen (`illegal`), each with the reason beside it. `CoverGroup(spec)` builds the pyvsc
covergroup (one pyvsc bin per name; the cross exclusions become pyvsc ignore bins, named
after their reason) and samples it with bin names.

pyvsc semantics, measured (tests/model/test_coverage.py):
- a cross's coverage on the *instance* (`get_inst_coverage`, and the INST part of pyvsc's
  report) leaves ignore bins out of numerator and denominator; the *type* coverage
  (`covergroup.get_coverage()`, the TYPE part of the report) does NOT: it counts the ignored
  bins in the denominator (and a hit on one in the numerator), so a cross with a third of
  its bins ignored reads low there. This module reports instance figures only, computed from
  the UCIS data itself (ignore bins are not written to it) and checked against pyvsc's.
- pyvsc's `cross` has no illegal bins (its model has them; its API does not pass them): an
  illegal exclusion is an ignore bin to pyvsc, and `CoverGroup.sample` raises
  `IllegalBinHit` when a sample falls into one (as an illegal bin hit is an error in SV).

A run writes every covergroup of the process to one UCIS XML file (`write_ucis`); the
regression merges the files (`merge_ucis`, pyucis DbMerger) and `summarize` gives per group
and per item the bins hit of the bins that count, and the holes.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree as ET

import vsc

from models.nic_model import FRAME_COUNTERS


class IllegalBinHit(AssertionError):
    """A sample fell into a cross combination declared illegal."""


@dataclass(frozen=True)
class Exclusion:
    kind: str                                  # "ignore" or "illegal"
    reason: str
    when: Callable[[dict[str, str]], bool]     # bin names by cover point -> excluded?

    def __post_init__(self) -> None:
        if self.kind not in ("ignore", "illegal"):
            raise ValueError(f"exclusion kind {self.kind!r}: ignore or illegal")
        if "," in self.reason:
            raise ValueError(f"exclusion reason {self.reason!r}: no commas (pyvsc bin names)")


@dataclass(frozen=True)
class CrossSpec:
    name: str
    points: tuple[str, ...]
    exclusions: tuple[Exclusion, ...] = ()


@dataclass(frozen=True)
class GroupSpec:
    name: str
    points: dict[str, tuple[str, ...]]
    crosses: tuple[CrossSpec, ...] = ()

    def cross(self, name: str) -> CrossSpec:
        return next(c for c in self.crosses if c.name == name)


class CoverGroup:
    """One pyvsc covergroup instance built from `spec`, sampled with bin names."""

    def __init__(self, spec: GroupSpec) -> None:
        for p, bins in spec.points.items():
            bad = [b for b in bins if "," in b or "<" in b or ">" in b]
            if bad:
                raise ValueError(f"{spec.name}.{p}: bin names {bad} may not contain , < >")
        self.spec = spec
        self.samples = 0
        self._index = {p: {b: i for i, b in enumerate(bins)} for p, bins in spec.points.items()}
        self._illegal = [(c, e) for c in spec.crosses for e in c.exclusions if e.kind == "illegal"]
        self.cg = _vsc_class(spec)()

    def sample(self, **values: str) -> None:
        """One sample; every cover point of the group must be given a bin name."""
        missing = set(self.spec.points) - set(values)
        if missing:
            raise ValueError(f"{self.spec.name}: no value for {sorted(missing)}")
        idx = []
        for p in self.spec.points:
            try:
                idx.append(self._index[p][values[p]])
            except KeyError:
                raise ValueError(f"{self.spec.name}.{p}: {values[p]!r} is not one of its bins "
                                 f"{list(self.spec.points[p])}") from None
        for c, e in self._illegal:
            if e.when({p: values[p] for p in c.points}):
                raise IllegalBinHit(f"{self.spec.name}.{c.name}: illegal combination "
                                    f"{ {p: values[p] for p in c.points} }: {e.reason}")
        self.samples += 1
        self.cg.sample(*idx)

    def inst_coverage(self) -> dict[str, float]:
        """pyvsc's own instance coverage per cover point and cross (percent)."""
        out = {p: getattr(self.cg, f"cp_{p}").get_inst_coverage() for p in self.spec.points}
        out.update({c.name: getattr(self.cg, c.name).model.get_coverage() for c in self.spec.crosses})
        return out


def _vsc_class(spec: GroupSpec):
    """A pyvsc covergroup class for `spec` (pyvsc builds its model from the attributes)."""

    def __init__(self) -> None:
        self.with_sample({p: vsc.uint16_t() for p in spec.points})
        for p, bins in spec.points.items():
            setattr(self, f"cp_{p}", vsc.coverpoint(getattr(self, p), bins={b: vsc.bin(i) for i, b in enumerate(bins)}))
        for c in spec.crosses:
            ignore = {f"{e.kind}: {e.reason}": _bin_pred(c.points, e.when) for e in c.exclusions} or None
            setattr(self, c.name, vsc.cross([getattr(self, f"cp_{p}") for p in c.points], ignore_bins=ignore))

    return vsc.covergroup(type(spec.name, (object,), {"__init__": __init__}))


def _bin_pred(points: tuple[str, ...], when: Callable[[dict[str, str]], bool]):
    return lambda *bins: bool(when({p: b.name for p, b in zip(points, bins)}))


# ---------------------------------------------------------------------------------------------
# UCIS XML: write per run, merge, summarize
# ---------------------------------------------------------------------------------------------
def write_ucis(path: Path) -> Path:
    """Every pyvsc covergroup instance of this process to UCIS XML at `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    vsc.write_coverage_db(str(path), fmt="xml")
    return path


def merge_ucis(paths: Sequence[Path], out: Path) -> Path:
    """Merge UCIS XML files (pyucis DbMerger: hit counts of the same bins add up)."""
    from ucis.mem.mem_ucis import MemUCIS
    from ucis.merge.db_merger import DbMerger
    from ucis.xml.xml_factory import XmlFactory

    dbs = [XmlFactory.read(str(p)) for p in paths]
    merged = MemUCIS()
    DbMerger().merge(merged, dbs)
    out.parent.mkdir(parents=True, exist_ok=True)
    XmlFactory.write(merged, str(out))
    return out


@dataclass
class ItemCov:
    name: str
    kind: str                        # "point" or "cross"
    bins: dict[str, int] = field(default_factory=dict)   # bins that count -> hits

    @property
    def hit(self) -> int:
        return sum(1 for v in self.bins.values() if v)

    @property
    def total(self) -> int:
        return len(self.bins)

    @property
    def percent(self) -> float:
        return 100.0 * self.hit / self.total if self.total else 100.0

    @property
    def holes(self) -> list[str]:
        return [b for b, v in self.bins.items() if not v]


@dataclass
class GroupCov:
    name: str
    items: dict[str, ItemCov] = field(default_factory=dict)

    @property
    def hit(self) -> int:
        return sum(i.hit for i in self.items.values())

    @property
    def total(self) -> int:
        return sum(i.total for i in self.items.values())

    @property
    def percent(self) -> float:
        """Bins hit of all the bins that count, points and crosses together."""
        return 100.0 * self.hit / self.total if self.total else 100.0


def _excluded(spec: GroupSpec | None, cross: str, key: str) -> bool:
    """The cross bin `key` ("a|b|c") falls in one of the cross's exclusions of `spec` (the
    current cover model: UCIS files written before an exclusion was added still hold it)."""
    if spec is None:
        return False
    c = next((c for c in spec.crosses if c.name == cross), None)
    if c is None:
        return False
    v = dict(zip(c.points, key.split("|")))
    return any(e.when(v) for e in c.exclusions)


def read_ucis(path: Path, specs: Iterable[GroupSpec] | None = None) -> dict[str, GroupCov]:
    """Per covergroup (summed over its instances), the hits of every bin that counts. The
    cross bins that the exclusions of `specs` (default: this module's SPECS) exclude do not
    count, as in the run that sampled them."""
    by_name = {s.name: s for s in (SPECS if specs is None else specs)}
    root = ET.parse(path).getroot()
    groups: dict[str, GroupCov] = {}
    for inst in root.iter("cgInstance"):
        cg_id = inst.find("cgId")
        gname = cg_id.get("cgName") if cg_id is not None else inst.get("name")
        g = groups.setdefault(gname, GroupCov(gname))
        spec = by_name.get(gname)
        for cp in inst.findall("coverpoint"):
            name = cp.get("name").removeprefix("cp_")
            item = g.items.setdefault(name, ItemCov(name, "point"))
            for b in cp.findall("coverpointBin"):
                n = sum(int(c.get("coverageCount", 0)) for c in b.iter("contents"))
                item.bins[b.get("name")] = item.bins.get(b.get("name"), 0) + n
        for cr in inst.findall("cross"):
            item = g.items.setdefault(cr.get("name"), ItemCov(cr.get("name"), "cross"))
            for b in cr.findall("crossBin"):
                n = sum(int(c.get("coverageCount", 0)) for c in b.iter("contents"))
                key = b.get("name").strip("<>").replace(",", "|")
                if _excluded(spec, cr.get("name"), key):
                    continue
                item.bins[key] = item.bins.get(key, 0) + n
    return groups


def exclusion_lines(specs: Iterable[GroupSpec]) -> list[str]:
    out = []
    for s in specs:
        for c in s.crosses:
            for e in c.exclusions:
                out.append(f"  {s.name}.{c.name}: {e.kind}: {e.reason}")
    return out


def report(groups: dict[str, GroupCov], specs: Iterable[GroupSpec] = (), max_holes: int = 40) -> str:
    lines = []
    for g in groups.values():
        lines.append(f"covergroup {g.name}: {g.percent:.1f}% ({g.hit}/{g.total} bins that count)")
        for it in g.items.values():
            lines.append(f"  {it.kind:5s} {it.name:<26} {it.percent:5.1f}%  ({it.hit}/{it.total})")
            holes = it.holes
            if holes:
                lines.append(f"        holes ({len(holes)}): " + "; ".join(holes[:max_holes])
                             + (" ..." if len(holes) > max_holes else ""))
    specs = list(specs)
    if specs:
        lines.append("exclusions (not counted; an illegal one fails the run when hit):")
        lines += exclusion_lines(specs)
    return "\n".join(lines)


def report_json(groups: dict[str, GroupCov], specs: Iterable[GroupSpec] = ()) -> dict:
    return {
        "groups": {g.name: {"percent": round(g.percent, 2), "hit": g.hit, "total": g.total,
                            "items": {i.name: {"kind": i.kind, "percent": round(i.percent, 2), "hit": i.hit,
                                               "total": i.total, "bins": i.bins, "holes": i.holes}
                                      for i in g.items.values()}}
                   for g in groups.values()},
        "exclusions": [{"group": s.name, "cross": c.name, "kind": e.kind, "reason": e.reason}
                       for s in specs for c in s.crosses for e in c.exclusions],
    }


def write_reports(groups: dict[str, GroupCov], stem: Path, specs: Iterable[GroupSpec] = ()) -> tuple[Path, Path]:
    """stem.txt (text report) and stem.json (per bin hits, percentages, holes, exclusions)."""
    specs = list(specs)
    stem.parent.mkdir(parents=True, exist_ok=True)
    txt, js = stem.with_suffix(".txt"), stem.with_suffix(".json")
    txt.write_text(report(groups, specs) + "\n")
    js.write_text(json.dumps(report_json(groups, specs), indent=1))
    return txt, js


def summary_lines(groups: dict[str, GroupCov], runs: int, where: str) -> list[str]:
    out = [f"  functional coverage ({runs} runs merged, UCIS XML): "
           + ", ".join(f"{g.name} {g.percent:.1f}% ({g.hit}/{g.total})" for g in groups.values())]
    for g in groups.values():
        out.append(f"    {g.name}: " + ", ".join(f"{i.name} {i.percent:.0f}%" for i in g.items.values()))
    out.append(f"    report: {where}.txt (.json, .xml)")
    return out


# ---------------------------------------------------------------------------------------------
# RX cover model (sampled by tb/uvm/scoreboard.py once per resolved frame)
# ---------------------------------------------------------------------------------------------
PROTOCOLS = ("ipv4/tcp", "ipv4/udp", "ipv4/other", "ipv6/tcp", "ipv6/udp", "ipv6/other", "non_ip", "unparsed")
SPLIT = ("split", "no_split", "hdr_overflow", "dropped")
QUEUE_KINDS = ("rss/devmem", "rss/host", "steered/devmem", "steered/host", "default/devmem", "default/host")
ERRORS = ("none", "bad_fcs", "byte_flip", "truncate", "extend", "len_field", "l4_field", "dma_wr_err")
VLANS = ("0", "1", "2")
SIZES = ("60", "61-127", "128-511", "512-1517", "1518+")
N_BUFS = ("0", "1", "2", "3+")
DROPS = ("none", *(n for n in FRAME_COUNTERS if n != "RX_FRAMES"))


def size_bin(n: int) -> str:
    return "60" if n <= 60 else "61-127" if n < 128 else "128-511" if n < 512 else "512-1517" if n < 1518 else "1518+"


_UNPARSED_NO_SPLIT = Exclusion(
    "ignore", "a frame the ingress drops (runt / bad FCS / oversize / FIFO full) is never parsed: no split decision",
    lambda v: v["protocol"] == "unparsed" and v["split"] != "dropped")
_NON_IP_SPLIT = Exclusion(
    "illegal", "a frame without an IP header is never split (docs/rx-rules.md)",
    lambda v: v["protocol"] == "non_ip" and v["split"] in ("split", "hdr_overflow"))
_DMA_ERR_DROPPED = Exclusion(
    "ignore", "a DMA write error needs a frame that was written",
    lambda v: v["error"] == "dma_wr_err" and v["split"] == "dropped")

_BAD_FCS_UNPARSED = Exclusion(
    "illegal", "a frame with a bad FCS is dropped by the ingress before it is parsed (docs/rx-rules.md section 1)",
    lambda v: v.get("error") == "bad_fcs" and (v.get("split", "dropped") != "dropped"
                                               or v.get("protocol", "unparsed") != "unparsed"))
_UNPARSED_NOT_STEERED = Exclusion(
    "ignore", "an unparsed frame has no flow tuple: RSS and steering never see it",
    lambda v: v["protocol"] == "unparsed" and v["queue_kind"].startswith("steered"))
_NON_IP_NOT_STEERED = Exclusion(
    "ignore", "n-tuple rules match IP flows only (flow types tcp4 udp4 ip4 tcp6 udp6 ip6: docs/rss.md)",
    lambda v: v["protocol"] == "non_ip" and v["queue_kind"].startswith("steered"))
# (No exclusion for IPv4 UDP/ICMP header overflow: their headers end by byte 90, inside the
# 128-byte parse window, but BUF_SIZE.hdr_buf_bytes is the queue's setting (1..65535): a header
# buffer of 64 bytes overflows them (scenario rx_overflow_faults), so the bins are reachable.)

_IP_TCP_UDP = ("ipv4/tcp", "ipv4/udp", "ipv6/tcp", "ipv6/udp")
_TRUNCATED_IP = Exclusion(
    "ignore", "a truncated IP frame has lost bytes of its datagram (Ethernet pads only up to 60 bytes and a cut "
              "below 60 is a runt: unparsed): l3_off + IP length > frame length is RX_DROP_HDR_ERR before the L4 "
              "header is looked at (docs/rx-rules.md section 2) so it parses as ipv4/other or ipv6/other and is "
              "dropped: never TCP/UDP and never delivered",
    lambda v: v["error"] == "truncate" and (v.get("protocol", "ipv4/tcp") in _IP_TCP_UDP
                                            or (v.get("protocol", "ipv4/other") in ("ipv4/other", "ipv6/other")
                                                and v.get("split", "split") != "dropped")))
_TRUNCATED_NOT_SPLIT = Exclusion(
    "ignore", "a truncated frame is never split: an IP one is RX_DROP_HDR_ERR (docs/rx-rules.md section 2) and a "
              "non-IP one is never split",
    lambda v: v["error"] == "truncate" and v["split"] in ("split", "hdr_overflow"))

_TRUNCATED_NOT_STEERED = Exclusion(
    "ignore", "a truncated frame is never steered: an IP one has a header error and frames with a header error are "
              "not classified (docs/rx-rules.md section 2); a non-IP one matches no n-tuple rule (docs/rss.md)",
    lambda v: v["error"] == "truncate" and v["queue_kind"].startswith("steered"))

_BAD_FCS_NOT_STEERED = Exclusion(
    "ignore", "a frame with a bad FCS is dropped before it is parsed: no flow tuple for an n-tuple rule (docs/rx-rules.md section 1)",
    lambda v: v["error"] == "bad_fcs" and v["queue_kind"].startswith("steered"))

RX_SPEC = GroupSpec("nic_rx", {
    "protocol": PROTOCOLS, "split": SPLIT, "queue_kind": QUEUE_KINDS, "error": ERRORS,
    "vlan": VLANS, "size": SIZES, "pay_bufs": N_BUFS, "drop": DROPS,
}, (
    # protocol x split x error: every fault on every parse result and placement decision. The
    # queue kind is crossed with split and with error separately (split_queue, queue_error), not
    # in a 4-way product: the queue (RSS hash, n-tuple rule, default queue) and its payload
    # memory are chosen from the flow tuple and the queue's registers, and the placement rules
    # (docs/rx-rules.md sections 2-3) are the same in every queue but for the memory the
    # payload buffers are in; the 4-way cross (968 bins that count) asked for every fault on
    # every protocol in every queue kind, combinations the design does not tell apart.
    CrossSpec("proto_split_error", ("protocol", "split", "error"),
              (_UNPARSED_NO_SPLIT, _NON_IP_SPLIT, _DMA_ERR_DROPPED, _BAD_FCS_UNPARSED, _TRUNCATED_IP)),
    CrossSpec("split_queue", ("split", "queue_kind")),
    CrossSpec("queue_error", ("queue_kind", "error"), (_BAD_FCS_NOT_STEERED, _TRUNCATED_NOT_STEERED)),
    CrossSpec("proto_split", ("protocol", "split"), (_UNPARSED_NO_SPLIT, _NON_IP_SPLIT)),
    CrossSpec("split_error", ("split", "error"), (_DMA_ERR_DROPPED, _BAD_FCS_UNPARSED, _TRUNCATED_NOT_SPLIT)),
    CrossSpec("proto_queue", ("protocol", "queue_kind"), (
        Exclusion("ignore", "an unparsed frame has no flow tuple: RSS and steering never see it",
                  lambda v: v["protocol"] == "unparsed"), _NON_IP_NOT_STEERED)),
    CrossSpec("proto_vlan", ("protocol", "vlan")),
))


def nic_rx_covergroup() -> CoverGroup:
    return CoverGroup(RX_SPEC)


# ---------------------------------------------------------------------------------------------
# TX cover model (sampled by tb/uvm/tx_agent.py's scoreboard once per completed frame)
# ---------------------------------------------------------------------------------------------
TX_SEGMENTS = ("1", "2", "3-4", "5-8", "9-15", "16")
TX_OFFSETS = ("page_start", "unaligned", "ends_at_4k")
TX_PAY_OFFSETS = ("none", "page_start", "unaligned", "ends_at_4k")
TX_CROSSING = ("none", "crosses_4k")
TX_CSUM = ("none", "tcp4", "udp4", "tcp6", "udp6", "udp_zero")
TX_STATUS = ("OK", "BAD_SEG", "BAD_LEN", "BAD_CSUM", "DMA_RD_ERR", "DESC_RD_ERR")
TX_QUEUES = ("0", "1", "2", "3")
TX_INTERLEAVE = ("first", "same_queue", "other_queue")
TX_PAY_MEM = ("none", "host", "device")


def tx_segments_bin(n: int) -> str:
    return "1" if n == 1 else "2" if n == 2 else "3-4" if n <= 4 else "5-8" if n <= 8 else "9-15" if n < 16 else "16"


def tx_offset_bin(addr: int, length: int, page: int = 4096) -> str:
    off = addr % page
    if off == 0:
        return "page_start"
    return "ends_at_4k" if off + length == page else "unaligned"


TX_SPEC = GroupSpec("nic_tx", {
    "segments": TX_SEGMENTS, "hdr_offset": TX_OFFSETS, "pay_offset": TX_PAY_OFFSETS,
    "crossing": TX_CROSSING, "csum": TX_CSUM, "status": TX_STATUS, "queue": TX_QUEUES,
    "interleave": TX_INTERLEAVE, "pay_mem": TX_PAY_MEM,
}, (
    CrossSpec("status_csum", ("status", "csum"), (
        Exclusion("ignore", "BAD_CSUM needs a checksum request", lambda v: v["status"] == "BAD_CSUM" and v["csum"] == "none"),
        Exclusion("ignore", "a computed checksum of zero (sent as 0xFFFF) exists only for a frame that was sent",
                  lambda v: v["csum"] == "udp_zero" and v["status"] != "OK"),
    )),
    CrossSpec("crossing_status", ("crossing", "status"), (
        Exclusion("illegal", "a segment crossing 4 KiB is BAD_SEG before the length and checksum rules and any read (docs/tx.md)",
                  lambda v: v["crossing"] == "crosses_4k" and v["status"] in ("OK", "BAD_LEN", "BAD_CSUM", "DMA_RD_ERR")),
    )),
    CrossSpec("segments_status", ("segments", "status")),
    CrossSpec("segments_pay_offset", ("segments", "pay_offset"), (
        Exclusion("ignore", "a one-segment frame has no payload segment", lambda v: v["segments"] == "1" and v["pay_offset"] != "none"),
        Exclusion("ignore", "a frame of two or more segments has a payload segment", lambda v: v["segments"] != "1" and v["pay_offset"] == "none"),
    )),
    CrossSpec("queue_interleave", ("queue", "interleave"), (
        Exclusion("ignore", "first is a run's first completion (one sample per run): the queue it falls on is the "
                            "seed's draw and not a state of the design; the interleave point counts it and the "
                            "cross is over same/other queue",
                  lambda v: v["interleave"] == "first"),
    )),
    CrossSpec("status_pay_mem", ("status", "pay_mem")),
))


def nic_tx_covergroup() -> CoverGroup:
    return CoverGroup(TX_SPEC)


# ---------------------------------------------------------------------------------------------
# TSO cover model (sampled by tb/uvm/tx_agent.py's scoreboard once per completed TSO send;
# the send's frames do not sample nic_tx: its points describe frames, not sends)
# ---------------------------------------------------------------------------------------------
TSO_SEGS = ("0", "1", "2", "3-8", "9-44", "45")
TSO_MSS = ("536", "537-1447", "1448", "1449-8947", "8948", "bad")
TSO_IP = ("ipv4", "ipv6")
TSO_STATUS = ("OK", "BAD_SEG", "TSO_BAD_HDR", "TSO_BAD_LEN", "TSO_BAD_MSS")

_TSO_SENT = Exclusion(
    "illegal", "a send that passes rules 1-4 sends ceil(P / mss) >= 1 segments and one that fails them "
               "sends none (docs/tx.md TSO rules; no DMA_RD_ERR in this stimulus)",
    lambda v: (v["status"] == "OK") == (v["segs"] == "0"))
_TSO_NO_SEGS_IP = Exclusion(
    "ignore", "segs 0 is a failed send: its IP version is crossed in status_ip",
    lambda v: v["segs"] == "0")

TSO_SPEC = GroupSpec("nic_tso", {
    "segs": TSO_SEGS, "mss": TSO_MSS, "ip": TSO_IP, "vlan": VLANS, "status": TSO_STATUS, "pay_mem": TX_PAY_MEM[1:],
}, (
    CrossSpec("segs_ip", ("segs", "ip"), (_TSO_NO_SEGS_IP,)),
    CrossSpec("mss_ip", ("mss", "ip")),
    CrossSpec("status_ip", ("status", "ip")),
    CrossSpec("vlan_ip", ("vlan", "ip")),
    CrossSpec("status_segs", ("status", "segs"), (_TSO_SENT,)),
))


def nic_tso_covergroup() -> CoverGroup:
    return CoverGroup(TSO_SPEC)


SPECS = (RX_SPEC, TX_SPEC, TSO_SPEC)


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=+-]+", "_", text)
