"""What the benchmark front ends (`bench/rx_linerate.py`, `rx_metrics.py`, `tx_linerate.py`)
share: the RTL sources to simulate, the command-line options every one of them takes,
matplotlib without a display, and writing a run's JSON and plot."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

from tb.sim import BUILD_ROOT, REPO_ROOT, rtl_file_list


def rtl_sources(rev: str | None) -> tuple[list[Path], dict[str, object]]:
    """The RTL to simulate: rtl/files.f of the working tree, or (`rev`, e.g. HEAD) a snapshot
    of rtl/ at that git revision in build/bench/rtl-<rev>/, built in its own build folder (a
    define names it), so a bench can run while rtl/ is being edited."""
    if not rev:
        return rtl_file_list(), {}
    sha = subprocess.run(["git", "rev-parse", "--short", rev], cwd=REPO_ROOT, check=True,
                         capture_output=True, text=True).stdout.strip()
    root = BUILD_ROOT / "bench" / f"rtl-{sha}"
    if not (root / "rtl" / "files.f").is_file():
        root.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", sha, "rtl"], cwd=REPO_ROOT, check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    lines = (root / "rtl" / "files.f").read_text().splitlines()
    files = [root / ln.split("#", 1)[0].strip() for ln in lines if ln.split("#", 1)[0].strip()]
    return files, {"BENCH_RTL_REV": sha}


def arg_parser(prog: str, doc: str, sizes: list[int], configs: list[tuple[int, int]],
               split: bool = True) -> argparse.ArgumentParser:
    """The options every benchmark takes: --sizes, --configs, --rtl-rev (and --split)."""
    ap = argparse.ArgumentParser(prog=f"python -m {prog}", description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default=",".join(map(str, sizes)), help="comma-separated frame sizes")
    if split:
        ap.add_argument("--split", default="1,0", help="header/data split settings: 1,0 | 1 | 0")
    ap.add_argument("--configs", default=",".join(f"{d}/{m}" for d, m in configs),
                    help="MAC/DMA widths, e.g. 64/128,512/1024")
    ap.add_argument("--rtl-rev", default=None,
                    help="simulate rtl/ as of this git revision (default: the working tree)")
    return ap


def parse_configs(text: str) -> list[tuple[int, int]]:
    """"64/128,512/1024" -> [(64, 128), (512, 1024)]."""
    out = []
    for c in text.split(","):
        try:
            data_w, dma_w = (int(x) for x in c.split("/"))
        except ValueError:
            print(f"--configs: {c!r} is not MAC/DMA widths like 64/128", file=sys.stderr)
            raise SystemExit(2) from None
        out.append((data_w, dma_w))
    return out


def pyplot():
    """matplotlib.pyplot on the Agg backend (no display needed)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def write_report(doc: dict[str, Any], out_dir: Path, name: str,
                 plot: Callable[[dict[str, Any], Path], None], indent: int = 2) -> None:
    """Write `doc` to out_dir/<name>.json, draw it with `plot` to out_dir/<name>.png, say so."""
    js, png = out_dir / f"{name}.json", out_dir / f"{name}.png"
    js.write_text(json.dumps(doc, indent=indent))
    plot(doc, png)
    print(f"bench: wrote {js} and {png}")
