"""Functional coverage: a small collector (cover points with named bins, crosses of them),
JSON save/merge and a text report, plus the NIC RX cover model sampled by the scoreboard.

No dependency: cocotb-coverage is not pinned in this project, and this is all the
regression needs (sample, merge runs, list hits and holes).
"""
from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from models.nic_model import FRAME_COUNTERS


@dataclass
class CoverPoint:
    name: str
    bins: list[str]
    hits: dict[str, int] = field(default_factory=dict)

    def sample(self, value: str) -> None:
        if value not in self.bins:
            raise ValueError(f"cover point {self.name}: {value!r} is not one of its bins {self.bins}")
        self.hits[value] = self.hits.get(value, 0) + 1

    @property
    def covered(self) -> int:
        return sum(1 for b in self.bins if self.hits.get(b))

    @property
    def holes(self) -> list[str]:
        return [b for b in self.bins if not self.hits.get(b)]


@dataclass
class Cross:
    name: str
    points: list[CoverPoint]
    ignore: Callable[[dict[str, str]], bool] | None = None   # bins that cannot happen
    hits: dict[tuple[str, ...], int] = field(default_factory=dict)

    def all_bins(self) -> list[tuple[str, ...]]:
        names = [p.name for p in self.points]
        out = []
        for combo in itertools.product(*(p.bins for p in self.points)):
            if self.ignore and self.ignore(dict(zip(names, combo))):
                continue
            out.append(combo)
        return out

    def sample(self, values: dict[str, str]) -> None:
        key = tuple(values[p.name] for p in self.points)
        self.hits[key] = self.hits.get(key, 0) + 1

    @property
    def holes(self) -> list[tuple[str, ...]]:
        return [b for b in self.all_bins() if not self.hits.get(b)]


class CoverGroup:
    def __init__(self, name: str, points: Sequence[CoverPoint]) -> None:
        self.name = name
        self.points = {p.name: p for p in points}
        self.crosses: dict[str, Cross] = {}
        self.samples = 0

    def cross(self, name: str, *point_names: str, ignore=None) -> Cross:
        c = Cross(name, [self.points[n] for n in point_names], ignore)
        self.crosses[name] = c
        return c

    def sample(self, **values: str) -> None:
        self.samples += 1
        for name, p in self.points.items():
            if name in values:
                p.sample(values[name])
        for c in self.crosses.values():
            if all(p.name in values for p in c.points):
                c.sample(values)

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict:
        return {
            "name": self.name, "samples": self.samples,
            "points": {n: p.hits for n, p in self.points.items()},
            "crosses": {n: {"|".join(k): v for k, v in c.hits.items()} for n, c in self.crosses.items()},
        }

    def merge_dict(self, d: dict) -> None:
        self.samples += d.get("samples", 0)
        for n, hits in d.get("points", {}).items():
            if n in self.points:
                for b, v in hits.items():
                    self.points[n].hits[b] = self.points[n].hits.get(b, 0) + v
        for n, hits in d.get("crosses", {}).items():
            if n in self.crosses:
                for k, v in hits.items():
                    key = tuple(k.split("|"))
                    self.crosses[n].hits[key] = self.crosses[n].hits.get(key, 0) + v

    def percent(self) -> dict[str, float]:
        out = {}
        for n, p in self.points.items():
            out[n] = 100.0 * p.covered / len(p.bins)
        for n, c in self.crosses.items():
            bins = c.all_bins()
            out[n] = 100.0 * sum(1 for b in bins if c.hits.get(b)) / len(bins) if bins else 100.0
        return out

    def report(self, max_holes: int = 40) -> str:
        pct = self.percent()
        lines = [f"functional coverage '{self.name}': {self.samples} samples"]
        for n, p in self.points.items():
            lines.append(f"  point {n:<14} {pct[n]:5.1f}%  ({p.covered}/{len(p.bins)})")
            lines.append("      hit:   " + ", ".join(f"{b}={p.hits[b]}" for b in p.bins if p.hits.get(b)))
            if p.holes:
                lines.append("      holes: " + ", ".join(p.holes))
        for n, c in self.crosses.items():
            bins = c.all_bins()
            hit = [b for b in bins if c.hits.get(b)]
            lines.append(f"  cross {n:<14} {pct[n]:5.1f}%  ({len(hit)}/{len(bins)}: "
                         f"{' x '.join(p.name for p in c.points)})")
            holes = c.holes
            if holes:
                shown = holes[:max_holes]
                lines.append(f"      holes ({len(holes)}): " + "; ".join("/".join(h) for h in shown)
                             + (" ..." if len(holes) > len(shown) else ""))
        return "\n".join(lines)

    def report_json(self) -> dict:
        d = self.to_dict()
        d["percent"] = {k: round(v, 2) for k, v in self.percent().items()}
        d["holes"] = {n: p.holes for n, p in self.points.items()}
        d["cross_holes"] = {n: ["|".join(h) for h in c.holes] for n, c in self.crosses.items()}
        return d


# ---------------------------------------------------------------------------------------------
# The NIC RX cover model
# ---------------------------------------------------------------------------------------------
PROTOCOLS = ["ipv4/tcp", "ipv4/udp", "ipv4/other", "ipv6/tcp", "ipv6/udp", "ipv6/other", "non_ip", "unparsed"]
SPLIT = ["split", "no_split", "hdr_overflow", "dropped"]
QUEUE_KINDS = ["rss/devmem", "rss/host", "steered/devmem", "steered/host", "default/devmem", "default/host"]
ERRORS = ["none", "bad_fcs", "byte_flip", "truncate", "extend", "len_field", "l4_field", "dma_wr_err"]
VLANS = ["0", "1", "2"]
SIZES = ["60", "61-127", "128-511", "512-1517", "1518+"]
N_BUFS = ["0", "1", "2", "3+"]
DROPS = ["none", *(n for n in FRAME_COUNTERS if n != "RX_FRAMES")]


def size_bin(n: int) -> str:
    return "60" if n <= 60 else "61-127" if n < 128 else "128-511" if n < 512 else "512-1517" if n < 1518 else "1518+"


def nic_rx_covergroup() -> CoverGroup:
    g = CoverGroup("nic_rx", [
        CoverPoint("protocol", PROTOCOLS), CoverPoint("split", SPLIT), CoverPoint("queue_kind", QUEUE_KINDS),
        CoverPoint("error", ERRORS), CoverPoint("vlan", VLANS), CoverPoint("size", SIZES),
        CoverPoint("pay_bufs", N_BUFS), CoverPoint("drop", DROPS),
    ])

    def impossible(v: dict[str, str]) -> bool:
        # An unparsed frame (dropped by the ingress) has no split decision; a DMA write error
        # needs a delivered frame; a frame without an IP header is never split.
        if v.get("protocol") == "unparsed" and v.get("split") not in (None, "dropped"):
            return True
        if v.get("error") == "dma_wr_err" and v.get("split") == "dropped":
            return True
        if v.get("protocol") == "non_ip" and v.get("split") in ("split", "hdr_overflow"):
            return True
        return False

    g.cross("proto_split_queue_error", "protocol", "split", "queue_kind", "error", ignore=impossible)
    g.cross("proto_split", "protocol", "split", ignore=impossible)
    g.cross("split_error", "split", "error", ignore=impossible)
    g.cross("proto_queue", "protocol", "queue_kind", ignore=lambda v: v["protocol"] == "unparsed")
    g.cross("proto_vlan", "protocol", "vlan")
    return g


def merge_files(paths: Iterable[Path]) -> CoverGroup | None:
    paths = list(paths)
    if not paths:
        return None
    g = nic_rx_covergroup()
    for p in paths:
        g.merge_dict(json.loads(Path(p).read_text()))
    return g


def write_reports(g: CoverGroup, stem: Path) -> tuple[Path, Path]:
    """stem.txt (the text report) and stem.json (hits, percentages, holes)."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    txt, js = stem.with_suffix(".txt"), stem.with_suffix(".json")
    txt.write_text(g.report() + "\n")
    js.write_text(json.dumps(g.report_json(), indent=1))
    return txt, js


def summary_lines(g: CoverGroup, where: str = "build/regress/functional_coverage") -> list[str]:
    pct = g.percent()
    pts = ", ".join(f"{n} {pct[n]:.0f}%" for n in g.points)
    main = "proto_split_queue_error"
    c = g.crosses[main]
    return [f"  functional coverage ({g.samples} frames): {pts}",
            f"    cross protocol x split x queue kind x error: {pct[main]:.1f}% "
            f"({len(c.all_bins()) - len(c.holes)}/{len(c.all_bins())} bins); "
            + ", ".join(f"{n} {pct[n]:.0f}%" for n in g.crosses if n != main),
            f"    report: {where}.txt (.json)"]
