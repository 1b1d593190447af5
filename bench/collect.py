"""Merge the benchmarks' top-level results into one document: build/bench/bench.json.

`make bench` runs each benchmark (each writes its own JSON and plots), then this. The merged
document has the git revision, the time, the machine's load, and one key per benchmark holding
that benchmark's document unchanged. A benchmark whose JSON is missing (not run, or failed)
is listed under `missing`, and the command exits 1 so `make bench` does not look complete.

    python -m bench.collect [--dir build/bench] [--out build/bench/bench.json]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = {
    "rx_linerate": "rx_linerate.json",   # RX beats/frames per cycle, per size, width, split
    "rx_metrics": "rx_metrics.json",     # DMA efficiency, bursts, outstanding, latency, goodput
    "tx_linerate": "tx_linerate.json",   # TX beats/frames per cycle, per size and width
    "tx_tso": "tx_tso.json",             # TX with TSO: 64 KiB sends, segments/cycle, reads per segment
    "sim_speed": "sim_speed.json",       # simulated cycles/s: fast path, per-beat baseline, ceiling
    "sim_memory": "sim_memory.json",     # simulator resident memory over 200k-frame RX and TX runs
    "cluster": "cluster.json",           # N NICs on a switch, all-to-all devmem TCP, RTL vs model (docs/cluster.md)
}


def _git_rev() -> str:
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
        return rev + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def collect(bench_dir: Path) -> tuple[dict, list[str]]:
    doc: dict = {
        "revision": _git_rev(),
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "load_average": list(os.getloadavg()),
        "cpus": os.cpu_count(),
        # the DMA write slave's AWREADY behaviour the simulations took by default
        # (tb/nic_tb.awready_default; docs/verification.md)
        "dma_awready": os.environ.get("DMA_AWREADY", "").strip() or "independent",
        "benchmarks": {},
        "missing": [],
    }
    for name, fname in BENCHMARKS.items():
        path = bench_dir / fname
        try:
            doc["benchmarks"][name] = json.loads(path.read_text())
        except FileNotFoundError:
            doc["missing"].append(name)
        except json.JSONDecodeError as e:
            raise SystemExit(f"bench.collect: {path} is not valid JSON: {e}") from None
    return doc, doc["missing"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, default=ROOT / "build/bench")
    ap.add_argument("--out", type=Path, default=None, help="default: DIR/bench.json")
    args = ap.parse_args(argv)
    doc, missing = collect(args.dir)
    out = args.out or args.dir / "bench.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1) + "\n")
    have = ", ".join(doc["benchmarks"]) or "none"
    print(f"bench: {out} ({have})")
    if missing:
        print(f"bench: missing results: {', '.join(missing)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
