#!/usr/bin/env python3
"""The critical register-to-register path of a placed (or routed) design from nextpnr's SDF.

    scripts/sdfpath.py design.sdf [--json out.json] [--paths 5]

nextpnr-ecp5 0.11 prints its "Critical path report" only after routing; after placement
(`--no-route`) it prints the Fmax alone and its `--report` JSON has no path. Its `--sdf`
file, written after placement too, holds every cell's delays (IOPATH) and every net's
delay as nextpnr estimates it from the placement (INTERCONNECT), so the longest path is a
longest-path search over that graph: it starts at a clock-to-output arc (a flip-flop's
CLK -> Q, a block RAM's clock -> read data), runs through cell arcs and nets, and ends at an
input with a setup check (SETUPHOLD), whose setup time it adds. Delays are the SDF's maximum
(the third of min:typ:max, the value nextpnr times with). Only paths within the clock
domain are searched (top-level pins are not start or end points). Clock skew is not
modelled, so the period can differ from nextpnr's own Fmax by a little;
tests/synth/test_synth.py checks the two agree on a small design.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

_CLOCK_PINS = {"CLK", "CLKA", "CLKB", "CLKR", "CLKW", "WCK", "CLKI"}
_TRIPLE = r"\((-?[\d.]*):(-?[\d.]*):(-?[\d.]*)\)"
_IOPATH = re.compile(r"\(IOPATH (\S+) (\S+) " + _TRIPLE + r"(?: " + _TRIPLE + r")?\)")
_INTERCONNECT = re.compile(r"\(INTERCONNECT (\S+) (\S+) " + _TRIPLE + r"(?: " + _TRIPLE + r")?\)")
_SETUPHOLD = re.compile(r"\(SETUPHOLD \((?:posedge|negedge) (\S+)\) \((?:posedge|negedge) (\S+)\) "
                        + _TRIPLE + r" " + _TRIPLE + r"\)")
_SETUP = re.compile(r"\(SETUP \((?:posedge|negedge) (\S+)\) \((?:posedge|negedge) (\S+)\) " + _TRIPLE + r"\)")
_INSTANCE = re.compile(r"\(INSTANCE ?(.*)\)")
_CELLTYPE = re.compile(r'\(CELLTYPE "([^"]*)"\)')


def _unescape(name: str) -> str:
    return re.sub(r"\\(.)", r"\1", name)


def _split_pin(ref: str) -> tuple[str, str]:
    """`cell/pin` in SDF (the divider is '/'; an escaped '\\/' belongs to the name)."""
    i = len(ref) - 1
    while i >= 0:
        if ref[i] == "/" and (i == 0 or ref[i - 1] != "\\"):
            return _unescape(ref[:i]), ref[i + 1:]
        i -= 1
    return _unescape(ref), ""


def _maxval(*groups: str | None) -> float:
    vals = [float(g) for g in groups if g not in (None, "")]
    return max(vals) if vals else 0.0


@dataclass
class Step:
    cell: str
    pin: str
    kind: str          # clk-to-q, logic, routing, setup
    delay_ns: float
    total_ns: float


@dataclass
class CritPath:
    delay_ns: float                    # arrival at the endpoint plus its setup time
    start: str
    end: str
    logic_ns: float
    routing_ns: float
    steps: list[Step] = field(default_factory=list)

    @property
    def fmax_mhz(self) -> float:
        return 1000.0 / self.delay_ns if self.delay_ns > 0 else float("inf")

    def as_dict(self) -> dict:
        return {"delay_ns": round(self.delay_ns, 3), "fmax_mhz": round(self.fmax_mhz, 2),
                "from": self.start, "to": self.end, "logic_ns": round(self.logic_ns, 3),
                "routing_ns": round(self.routing_ns, 3), "steps": len(self.steps),
                "cells": [s.cell for s in self.steps if s.kind in ("clk-to-q", "logic")],
                "path": [{"cell": s.cell, "pin": s.pin, "type": s.kind, "delay_ns": round(s.delay_ns, 3),
                          "total_ns": round(s.total_ns, 3)} for s in self.steps]}


def analyse(sdf: Path | str, npaths: int = 1) -> list[CritPath]:
    """The `npaths` worst paths (distinct endpoints), worst first."""
    text = Path(sdf).read_text(errors="replace") if isinstance(sdf, Path) or "\n" not in sdf else sdf
    ps_per_unit = 1.0
    m = re.search(r"\(TIMESCALE (\d+)\s*(ps|ns)\)", text)
    if m:
        ps_per_unit = float(m.group(1)) * (1000.0 if m.group(2) == "ns" else 1.0)
    node_id: dict[tuple[str, str], int] = {}
    names: list[tuple[str, str]] = []

    def nid(cell: str, pin: str) -> int:
        k = (cell, pin)
        i = node_id.get(k)
        if i is None:
            i = node_id[k] = len(names)
            names.append(k)
        return i

    edges: list[tuple[int, int, float, str]] = []     # (from, to, ps, kind)
    launch: dict[int, float] = {}                     # output node -> clock-to-output ps
    setup: dict[int, float] = {}                      # endpoint node -> setup ps
    cell = ""
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("(INSTANCE"):
            mi = _INSTANCE.match(s)
            cell = _unescape(mi.group(1).strip()) if mi else ""
        elif s.startswith("(IOPATH"):
            mi = _IOPATH.match(s)
            if not mi:
                continue
            a, b = mi.group(1), mi.group(2)
            d = _maxval(*mi.groups()[2:]) * ps_per_unit
            if a in _CLOCK_PINS:
                o = nid(cell, b)
                launch[o] = max(launch.get(o, 0.0), d)
            else:
                edges.append((nid(cell, a), nid(cell, b), d, "logic"))
        elif s.startswith("(INTERCONNECT"):
            mi = _INTERCONNECT.match(s)
            if not mi:
                continue
            sc, sp = _split_pin(mi.group(1))
            dc, dp = _split_pin(mi.group(2))
            if dp in _CLOCK_PINS:
                continue
            edges.append((nid(sc, sp), nid(dc, dp), _maxval(*mi.groups()[2:]) * ps_per_unit, "routing"))
        elif s.startswith("(SETUPHOLD") or s.startswith("(SETUP "):
            mi = _SETUPHOLD.match(s) or _SETUP.match(s)
            if not mi:
                continue
            d = _maxval(*mi.groups()[2:5]) * ps_per_unit    # the setup value
            n = nid(cell, mi.group(1))
            setup[n] = max(setup.get(n, 0.0), d)

    n = len(names)
    succ: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    for k, (a, b, _, _) in enumerate(edges):
        succ[a].append(k)
        indeg[b] += 1
    arr = [float("-inf")] * n
    back: list[int] = [-1] * n                        # edge index that set the arrival
    for o, d in launch.items():
        arr[o] = d
    order = [i for i in range(n) if indeg[i] == 0]
    head = 0
    while head < len(order):
        u = order[head]
        head += 1
        au = arr[u]
        for k in succ[u]:
            _, v, d, _ = edges[k]
            if au != float("-inf") and au + d > arr[v]:
                arr[v] = au + d
                back[v] = k
            indeg[v] -= 1
            if indeg[v] == 0:
                order.append(v)
    if len(order) < n:
        print(f"sdfpath: {n - len(order)} pins on combinational loops were not timed", file=sys.stderr)

    ends = sorted((arr[e] + su, e) for e, su in setup.items() if arr[e] != float("-inf"))
    out: list[CritPath] = []
    seen_cells: set[str] = set()
    for total, e in reversed(ends):
        if len(out) >= npaths:
            break
        if names[e][0] in seen_cells:
            continue
        seen_cells.add(names[e][0])
        chain: list[int] = []
        v = e
        while back[v] != -1:
            chain.append(back[v])
            v = edges[back[v]][0]
        chain.reverse()
        steps = [Step(names[v][0], names[v][1], "clk-to-q", launch[v] / 1000, launch[v] / 1000)]
        t = launch[v]
        logic, routing = launch[v], 0.0
        for k in chain:
            _, b, d, kind = edges[k]
            t += d
            if kind == "logic":
                logic += d
            else:
                routing += d
            steps.append(Step(names[b][0], names[b][1], kind, d / 1000, t / 1000))
        steps.append(Step(names[e][0], names[e][1], "setup", setup[e] / 1000, total / 1000))
        logic += setup[e]
        out.append(CritPath(total / 1000, f"{names[v][0]}.{names[v][1]}", f"{names[e][0]}.{names[e][1]}",
                            logic / 1000, routing / 1000, steps))
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="scripts/sdfpath.py", description=__doc__.split("\n")[0])
    ap.add_argument("sdf", type=Path)
    ap.add_argument("--paths", type=int, default=1, help="worst paths to print (distinct end cells)")
    ap.add_argument("--json", type=Path, help="write the paths here")
    args = ap.parse_args(argv)
    if not args.sdf.exists():
        print(f"sdfpath: {args.sdf}: no such file", file=sys.stderr)
        return 2
    paths = analyse(args.sdf, args.paths)
    for p in paths:
        print(f"{p.delay_ns:.2f} ns ({p.fmax_mhz:.2f} MHz): {p.start} -> {p.end}; "
              f"{p.logic_ns:.2f} ns logic, {p.routing_ns:.2f} ns routing, {len(p.steps)} steps")
        for s in p.steps:
            print(f"  {s.kind:>8} {s.delay_ns:6.2f} {s.total_ns:7.2f}  {s.cell}.{s.pin}")
    if args.json:
        args.json.write_text(json.dumps([p.as_dict() for p in paths], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
