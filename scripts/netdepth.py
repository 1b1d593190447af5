"""Logic depth between registers in a mapped Yosys JSON netlist (used by scripts/synth.py).

What it measures: the netlist is read as a graph of technology cells. Register outputs
(flip-flops, block RAM read data, SRL outputs) and top-level inputs start a path; register
inputs (D, enables, resets, block RAM address/data/enables, LUT RAM write ports) and
top-level outputs end one. Combinational cells are LUTs, the wide-function muxes that
combine LUTs (ECP5 PFUMX/L6MUX21, Xilinx MUXF7/8/9), carry cells (ECP5 CCU2C, Xilinx
CARRY4/CARRY8) and the asynchronous read of LUT RAM (read address to data, one LUT's delay).

For every path two numbers are computed:
- `lut_levels`: LUTs on the path (an LUT RAM read counts as one LUT; a CCU2C entered on its
  LUT inputs A/B/C/D counts one LUT for the LUT in front of the carry, carry-in to
  carry-out counts none). This is the "LUT levels" an FPGA designer quotes.
- `cell_levels`: every combinational cell on the path, carries and muxes included (a
  64-bit ECP5 adder alone is 32 CCU2C cells deep): Vivado's "logic levels" count.
The worst path for each measure is reported with its start and end register names (the
nets' names in the flat netlist carry the instance path, so `u_dma.u_split.plan_q` names
the register and its module). Nothing here knows delays: these are depths, not timing;
nextpnr (`make synth-pnr`) gives the timing.
"""
from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

# Cell kinds: (lut, mux, carry) weight of a pass through the cell, by family.
LUT, MUX, CARRY, RAMREAD = "lut", "mux", "carry", "ramread"

_ECP5_COMB = {
    "LUT4": LUT, "LUT2": LUT, "LUT3": LUT, "LUT1": LUT,
    "PFUMX": MUX, "L6MUX21": MUX,
    "CCU2C": CARRY,
}
_XILINX_COMB = {
    **{f"LUT{i}": LUT for i in range(1, 7)},
    "MUXF7": MUX, "MUXF8": MUX, "MUXF9": MUX,
    "CARRY4": CARRY, "CARRY8": CARRY,
    "INV": LUT,
}
# LUT RAM and SRL cells: which input ports reach the outputs combinationally.
_ASYNC_READ = {
    # ECP5
    "TRELLIS_DPR16X4": re.compile(r"^RAD"),
    # Xilinx distributed RAM (read address -> data out); SRL: address -> Q
    "RAM32M": re.compile(r"^ADDR[A-H]"), "RAM64M": re.compile(r"^ADDR[A-H]"),
    "RAM32M16": re.compile(r"^ADDR[A-H]"), "RAM64M8": re.compile(r"^ADDR[A-H]"),
    "RAM32X1D": re.compile(r"^(A\d|DPRA)"), "RAM64X1D": re.compile(r"^(A\d|DPRA)"),
    "RAM128X1D": re.compile(r"^(A$|DPRA)"), "RAM256X1D": re.compile(r"^(A$|DPRA)"),
    "RAM32X1S": re.compile(r"^A\d"), "RAM64X1S": re.compile(r"^A\d"),
    "RAM128X1S": re.compile(r"^A\d"), "RAM256X1S": re.compile(r"^A$"),
    "RAM512X1S": re.compile(r"^A$"),
    "SRL16E": re.compile(r"^A\d"), "SRLC16E": re.compile(r"^A\d"), "SRLC32E": re.compile(r"^A$"),
}
_CLOCKS = {"CLK", "C", "CLKA", "CLKB", "CLKARDCLK", "CLKBWRCLK", "WCK", "WCLK", "CLKW", "CLKR"}
# Cells that carry no logic for this purpose (constants, scope markers).
_IGNORE = {"VCC", "GND", "$scopeinfo", "VHI", "VLO"}


@dataclass
class PathReport:
    """The worst path for one measure."""

    measure: str
    lut_levels: int
    mux_levels: int
    carry_cells: int
    cell_levels: int
    start: str
    end: str
    cells: list[str] = field(default_factory=list)
    through: list[str] = field(default_factory=list)   # RTL signals the path passes, in order

    def as_dict(self) -> dict:
        return {"lut_levels": self.lut_levels, "mux_levels": self.mux_levels,
                "carry_cells": self.carry_cells, "cell_levels": self.cell_levels,
                "start": self.start, "end": self.end, "through": self.through,
                "cells": self.cells[:200]}


@dataclass
class DepthReport:
    family: str
    worst_lut: PathReport
    worst_cells: PathReport
    by_module: dict[str, int]             # top-level instance -> worst LUT levels ending there
    top_endpoints: list[tuple[int, str]]  # (LUT levels, register) deepest distinct registers
    unknown_cells: dict[str, int]         # cell types treated as path boundaries, not understood

    def as_dict(self) -> dict:
        return {"family": self.family, "worst_lut": self.worst_lut.as_dict(),
                "worst_cells": self.worst_cells.as_dict(), "by_module": self.by_module,
                "top_endpoints": [{"lut_levels": n, "end": e} for n, e in self.top_endpoints],
                "unknown_cells": self.unknown_cells}


# Names Yosys's autoname made up from cell types (not an RTL signal).
_AUTONAME = re.compile(r"_(TRELLIS_|CCU2C|LUT\d|PFUMX|L6MUX|DP16KD|PDPW16KD|DPR16X4|FD[RSCP]E|"
                       r"MUXF|CARRY|RAMB|RAM\d|SRL)|\.\d+(\.\d+)*_")


def _strip_bit(name: str) -> str:
    return re.sub(r"\[\d+\]$", "", name)


def _module_of(name: str) -> str:
    """The top-level instance a flat-netlist name belongs to (`u_dma.u_split.x` -> `u_dma`)."""
    name = name.lstrip("\\")
    return name.split(".", 1)[0] if "." in name else "(nic_top)"


def analyse(netlist: Path | dict, top: str, family: str) -> DepthReport:
    """Depths of the flat module `top` in a Yosys JSON netlist (see the module doc)."""
    data = json.loads(Path(netlist).read_text()) if not isinstance(netlist, dict) else netlist
    mod = data["modules"][top]
    comb_kind = _ECP5_COMB if family == "ecp5" else _XILINX_COMB

    # A readable name for every net bit: of its public names the one deepest in the
    # hierarchy (the register's own name in its module, not a port alias above it), then
    # the shortest.
    bit_name: dict[int, str] = {}
    rank: dict[int, tuple[int, int, int, int]] = {}
    for nname, net in mod["netnames"].items():
        public = not net.get("hide_name", 0) and not nname.startswith("$")
        for i, b in enumerate(net["bits"]):
            if not isinstance(b, int):
                continue
            label = nname if len(net["bits"]) == 1 else f"{nname}[{i}]"
            r = (int(public), int(not _AUTONAME.search(nname)), nname.count("."), -len(label))
            if b not in rank or r > rank[b]:
                rank[b] = r
                bit_name[b] = label

    # Drivers of each bit: (cell, kind, comb input bits with weights) or a start point.
    # node = output bit; preds[bit] = list of (input bit, weights) through a comb cell.
    preds: dict[int, list[tuple[int, tuple[int, int, int]]]] = {}
    driver_cell: dict[int, str] = {}
    sinks: list[tuple[int, str]] = []     # (bit, endpoint label)
    unknown: dict[str, int] = defaultdict(int)

    for cname, cell in mod["cells"].items():
        ctype = cell["type"]
        if ctype in _IGNORE:
            continue
        dirs = cell.get("port_directions", {})
        conns = cell["connections"]
        outs = [b for p, bits in conns.items() if dirs.get(p) == "output" for b in bits
                if isinstance(b, int)]
        ins = [(p, b) for p, bits in conns.items() if dirs.get(p) == "input" for b in bits
               if isinstance(b, int)]
        kind = comb_kind.get(ctype)
        if kind is not None:
            if ctype == "CCU2C":
                w_in = []
                for p, b in ins:
                    if p.startswith("CIN"):
                        w_in.append((b, (0, 0, 1)))
                    else:
                        w_in.append((b, (1, 0, 1)))   # the LUT in front of the carry
            elif kind == CARRY:   # Xilinx CARRY4/8: the LUTs feeding S are separate cells
                w_in = [(b, (0, 0, 1)) for p, b in ins]
            elif kind == MUX:
                w_in = [(b, (0, 1, 0)) for p, b in ins]
            else:
                w_in = [(b, (1, 0, 0)) for p, b in ins]
            for o in outs:
                preds[o] = w_in
                driver_cell[o] = cname
            continue
        rd = _ASYNC_READ.get(ctype)
        if rd is not None:
            w_in = [(b, (1, 0, 0)) for p, b in ins if rd.match(p)]
            for o in outs:
                preds[o] = w_in
                driver_cell[o] = cname
            for p, b in ins:
                if not rd.match(p) and p not in _CLOCKS:
                    sinks.append((b, f"{cname} ({ctype}.{p})"))
            continue
        # A register or a hard block: outputs start paths, inputs end them. A flip-flop is
        # named after the net it drives (the register's name), a hard block after the cell.
        if not (ctype.startswith(("TRELLIS_FF", "FD", "DP16KD", "PDPW16KD", "RAMB", "URAM",
                                  "MULT18", "ALU54", "DSP48", "TRELLIS_IO", "IB", "OB"))):
            unknown[ctype] += 1
        q = conns.get("Q", [])
        label = cname
        if q and isinstance(q[0], int) and q[0] in bit_name and not bit_name[q[0]].startswith("$"):
            label = bit_name[q[0]]
        for p, b in ins:
            if p in _CLOCKS:
                continue
            sinks.append((b, f"{label} ({ctype}.{p})"))
        for o in outs:
            preds[o] = []          # a start point
            driver_cell[o] = cname

    for pname, port in mod["ports"].items():
        if port["direction"] in ("output", "inout"):
            for i, b in enumerate(port["bits"]):
                if isinstance(b, int):
                    sinks.append((b, f"output {pname}[{i}]"))
        # inputs: no driver entry -> level 0 below

    # Longest path DP over the bits, for two measures; iterative DFS with memo.
    def longest(key_index: int) -> tuple[dict[int, tuple[int, int, int, int]], dict[int, int | None]]:
        best: dict[int, tuple[int, int, int, int]] = {}
        via: dict[int, int | None] = {}
        onstack: set[int] = set()

        def score(t: tuple[int, int, int, int]) -> tuple[int, int]:
            # primary measure, then the other as tie-break
            return (t[0], t[3]) if key_index == 0 else (t[3], t[0])

        for root in list(preds.keys()):
            if root in best:
                continue
            stack = [(root, 0)]
            while stack:
                b, state = stack.pop()
                if state == 0:
                    if b in best:
                        continue
                    onstack.add(b)
                    stack.append((b, 1))
                    for ib, _w in preds.get(b, ()):
                        if ib in preds and ib not in best:
                            if ib in onstack:
                                continue       # combinational loop: broken here
                            stack.append((ib, 0))
                else:
                    onstack.discard(b)
                    top_t = (0, 0, 0, 0)
                    top_v: int | None = None
                    for ib, w in preds.get(b, ()):
                        base = best.get(ib, (0, 0, 0, 0))
                        t = (base[0] + w[0], base[1] + w[1], base[2] + w[2],
                             base[3] + (1 if any(w) else 0))
                        if top_v is None or score(t) > score(top_t):
                            top_t, top_v = t, ib
                    best[b] = top_t if top_v is not None else (0, 0, 0, 0)
                    via[b] = top_v
        return best, via

    def trace(via: dict[int, int | None], b: int) -> tuple[str, list[str]]:
        cells = []
        names = []
        cur: int | None = b
        seen = set()
        last = b
        while cur is not None and cur not in seen:
            seen.add(cur)
            if cur in driver_cell and preds.get(cur):
                cells.append(driver_cell[cur])
            n = bit_name.get(cur, "$")
            if not n.startswith("$") and not _AUTONAME.search(n):
                names.append(_strip_bit(n))
            last = cur
            cur = via.get(cur)
        through.clear()
        for n in reversed(names[1:-1] if len(names) > 2 else []):
            if n not in through:
                through.append(n)
        start = bit_name.get(last, f"bit {last}")
        cells.reverse()
        if start.startswith("$") and last in driver_cell:
            # A register whose output net kept no RTL name (one Yosys made, such as a
            # memory's read address register): its RTL source if it has one, and the first
            # named cell it feeds.
            cell = mod["cells"][driver_cell[last]]
            src = cell.get("attributes", {}).get("src", "").split("|")[0]
            named = next((c for c in cells if not c.startswith("$")), None)
            start = (f"{cell['type']}" + (f" of {src}" if src and not src.startswith("/share") else "")
                     + (f" feeding {named}" if named else ""))
        return start, cells

    through: list[str] = []
    reports = []
    by_module: dict[str, int] = defaultdict(int)
    endpoints: dict[str, int] = {}
    for idx, measure in ((0, "lut_levels"), (1, "cell_levels")):
        best, via = longest(idx)
        worst = None
        for b, label in sinks:
            t = best.get(b, (0, 0, 0, 0))
            key = (t[0], t[3]) if idx == 0 else (t[3], t[0])
            if worst is None or key > worst[0]:
                worst = (key, b, label, t)
            if idx == 0:
                reg = _endpoint_name(label, b, bit_name)
                mod_name = _module_of(reg)
                by_module[mod_name] = max(by_module[mod_name], t[0])
                base = _strip_bit(reg)
                endpoints[base] = max(endpoints.get(base, 0), t[0])
        if worst is None:
            reports.append(PathReport(measure, 0, 0, 0, 0, "-", "-"))
            continue
        _, b, label, t = worst
        start, cells = trace(via, b)
        reports.append(PathReport(measure, t[0], t[1], t[2], t[3], start,
                                  _endpoint_name(label, b, bit_name), cells, list(through[:8])))
    top_eps = sorted(((n, e) for e, n in endpoints.items()), reverse=True)[:15]
    return DepthReport(family, reports[0], reports[1], dict(sorted(by_module.items())),
                       top_eps, dict(unknown))


def _endpoint_name(label: str, bit: int, bit_name: dict[int, str]) -> str:
    """The name of what a path ends in: the register's input net name (Yosys names a
    flip-flop's D net after the register only sometimes), else the cell."""
    if label.startswith("output "):
        return label[len("output "):]
    cell = label.split(" (", 1)[0]
    return cell if not cell.startswith("$") else bit_name.get(bit, cell)


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print("usage: netdepth.py NETLIST.json TOP ecp5|xilinx", file=sys.stderr)
        return 2
    rep = analyse(Path(argv[1]), argv[2], argv[3])
    print(json.dumps(rep.as_dict(), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
