"""What the SystemVerilog protocol checker (tb/checker/) costs: `python -m bench.checker_cost`.

One short bulk run per traffic path (RX: back-to-back 1500-byte TCP frames, split on; TX:
60..128-byte TCP/UDP frames, checksum offload) and MAC width (64 and 512 bits), on the fast
harness (tb/fast/) with the checker bound into nic_top, as every run has it, and built with
+define+NO_AXI_CHECKER (tb.sim.CHECKER_OFF_ARGS), which leaves it out. Every frame is checked
in both builds, and the two simulate the same cycles (the checker only watches). Speeds are
simulated cycles per second of wall time and per CPU second of the simulator process, the
latter less sensitive to the other processes of a shared machine. `bench/sim_speed.py` (in
`make bench`) measures the RX path and the Verilator-only ceiling with and without the
checker over longer runs; this is the quick side-by-side of RX and TX. A measurement, never
pass/fail on time. Writes build/bench/checker_cost.json.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

from tb.sim import BUILD_ROOT, CHECKER_OFF_ARGS

FRAMES = {("rx", 64): 10000, ("rx", 512): 20000, ("tx", 64): 50000, ("tx", 512): 50000}


def run_one(path: str, width: int, frames: int, checker: bool) -> dict:
    from tb.fast.build import run_fast_test

    label = f"{path}-{width}-{'on' if checker else 'off'}"
    out = BUILD_ROOT / "bench" / f"checker_cost_{label}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    env = {"BENCH_COST_PATH": path, "BENCH_FRAMES": str(frames), "BENCH_OUT": str(out)}
    load0 = os.getloadavg()[0]
    run_fast_test("bench.checker_cost_sim", {"DATA_W": width}, f"bench_checker_cost-{label}", extra_env=env,
                  seed=1, build_args=[] if checker else list(CHECKER_OFF_ARGS))
    r = json.loads(out.read_text())
    r.update(width=width, checker=checker, load_start=round(load0, 2), load_end=round(os.getloadavg()[0], 2),
             cycles_per_s=r["cycles"] / r["wall_s"], cycles_per_cpu_s=r["cycles"] / max(r["cpu_s"], 1e-9))
    return r


def cost(on: dict, off: dict) -> dict[str, float]:
    """The fraction of the checker-off speed lost with the checker, in wall and CPU time."""
    return {"wall": 1 - on["cycles_per_s"] / off["cycles_per_s"],
            "cpu": 1 - on["cycles_per_cpu_s"] / off["cycles_per_cpu_s"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.checker_cost", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--paths", default="rx,tx", help="rx,tx | rx | tx")
    ap.add_argument("--widths", default="64,512", help="MAC widths (DMA = 2x)")
    ap.add_argument("--frames", type=int, default=0, help="frames per run (default: per path and width)")
    args = ap.parse_args(argv)
    doc: dict = {"benchmark": "checker_cost", "cpus": os.cpu_count(), "results": []}
    t0 = time.monotonic()
    for path in args.paths.split(","):
        for width in (int(w) for w in args.widths.split(",")):
            n = args.frames or FRAMES[(path, width)]
            runs = {}
            for checker in (True, False):      # the build with the checker first, then without
                print(f"bench: checker cost, {path.upper()} MAC {width}, checker {'on' if checker else 'off'}, "
                      f"{n} frames (load {os.getloadavg()[0]:.1f})", flush=True)
                runs[checker] = r = run_one(path, width, n, checker)
                print(f"  {r['cycles']} cycles in {r['wall_s']:.1f} s: {r['cycles_per_s'] / 1e3:.0f}k cycles/s, "
                      f"{r['cycles_per_cpu_s'] / 1e3:.0f}k cycles/CPU-s", flush=True)
            c = cost(runs[True], runs[False])
            doc["results"].append({"path": path, "width": width, "on": runs[True], "off": runs[False], "cost": c})
            print(f"bench: {path.upper()} MAC {width}: the checker costs {100 * c['cpu']:.1f}% of the CPU-time "
                  f"speed ({100 * c['wall']:.1f}% wall); cycles {runs[True]['cycles']} on, {runs[False]['cycles']} off",
                  flush=True)
    doc["elapsed_s"] = time.monotonic() - t0
    out = BUILD_ROOT / "bench" / "checker_cost.json"
    out.write_text(json.dumps(doc, indent=2))
    print(f"bench: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
