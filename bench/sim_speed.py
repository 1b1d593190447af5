"""Simulation-speed benchmark: `python -m bench.sim_speed` (part of `make bench`).

Simulated clock cycles per wall second and frames per wall second for bulk RX traffic
(back-to-back 1500-byte TCP frames, header/data split on, one queue, the driver's refill done
in bulk every 128 frame times, every frame checked against the golden model) at MAC width
64 (DMA 128) and 512 (DMA 1024), on
  - fast:     the tb/fast/ harness (HDL clock, RX source, DMA target and CSR master in HDL and
              DPI-C over memory shared with numpy; Python wakes per poll and per CSR access);
  - baseline: nic_top with tb/nic_tb.py (cocotb Clock, cocotbext-axi AxiStreamSource and
              AxiSlave: Python per beat), the path the functional tests used before;
  - ceiling:  the fast harness with no Python at all (tb/fast/standalone.py), the same frames;
fast and ceiling again without the protocol checker (tb/checker/, built with
+define+NO_AXI_CHECKER: what the checker that every other run has costs; --no-checker-off
skips these), and fast and ceiling again with profile-guided optimisation (bench/pgo.py: clang compiles the
model, a short instrumented training run of the same kind of traffic, and clang compiles it
again with the measured branch counts), when clang's profile runtime is installed (--no-pgo:
skip); the PGO fast path runs twice, with the scoreboard's comparisons in the simulator
process (fast_pgo) and in a forked checker process on the other core (fast_pgo_par).
Fast and baseline runs alternate (fast, baseline, fast, baseline, ...) so machine load hits
both alike; load averages are recorded at the start and end of every run. Besides wall-clock
rates the JSON has CPU-time rates (process CPU seconds), less sensitive to other processes on
a shared machine. Benchmarks are never pass/fail on time; a run fails only when a frame is
wrong. Writes build/bench/sim_speed.json and build/bench/sim_speed.png.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time

from bench import pgo
from bench.common import write_report
from tb.sim import BUILD_ROOT, CHECKER_OFF_ARGS, rtl_file_list, run_rtl_test

WIDTHS = [64, 512]
FRAMES = {64: 3000, 512: 20000}


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_one(path: str, width: int, frames: int, rep: int, frame_bytes: int, build_args: list[str],
            label: str = "", checker: str = "inline", extra_env: dict[str, str] | None = None) -> dict:
    """One run of `path` ("fast" or "base"); `label` names it in the JSON (default: path);
    `checker`: "inline" or "process" (bench/sim_speed_sim.py, fast path only); `extra_env`
    for the simulator (a PGO training run's LLVM_PROFILE_FILE)."""
    label = label or path
    out = BUILD_ROOT / "bench" / f"sim_speed_{label}_{width}_{rep}.json"
    out.unlink(missing_ok=True)
    env = {"BENCH_PATH": path, "BENCH_FRAMES": str(frames), "BENCH_OUT": str(out),
           "BENCH_FRAME_BYTES": str(frame_bytes), "BENCH_CHECKER": checker, **(extra_env or {})}
    load0 = _load()
    cpu0 = _children_cpu()
    t0 = time.monotonic()
    if path == "fast":
        from tb.fast.build import run_fast_test
        run_fast_test("bench.sim_speed_sim", {"DATA_W": width}, f"bench_sim_speed-{label}-{width}",
                      extra_env=env, seed=1, build_args=build_args)
    else:
        run_rtl_test("nic_top", rtl_file_list(), "bench.sim_speed_sim", {"DATA_W": width},
                     f"bench_sim_speed-base-{width}", extra_env=env, seed=1, build_args=build_args)
    res = json.loads(out.read_text())
    res.update(path=label, rep=rep, load_start=load0, load_end=_load(), process_wall_s=time.monotonic() - t0,
               process_cpu_s=_children_cpu() - cpu0)
    return res


def _summary(runs: list[dict]) -> dict:
    if not runs:
        return {}
    med = lambda k: statistics.median(r[k] for r in runs)  # noqa: E731
    return {"runs": len(runs), "cycles": runs[0]["cycles"], "frames": runs[0]["frames"],
            "cycles_per_s": med("cycles_per_s"), "frames_per_s": med("frames_per_s"),
            "cycles_per_cpu_s": med("cycles_per_cpu_s"), "cycles_per_total_cpu_s": med("cycles_per_total_cpu_s"),
            "cycles_per_s_excl_check": med("cycles_per_s_excl_check"),
            "check_share": med("check_share"),
            "checker_cpu_s": med("checker_cpu_s") if all("checker_cpu_s" in r for r in runs) else None}


def checker_cost(entry: dict) -> dict[str, dict[str, float]]:
    """What the protocol checker costs on each path measured with and without it: simulated
    cycles per CPU second on and off (CPU time: less sensitive to other load than wall time)
    and `cost`, the fraction of the checker-off speed lost with it (1 - on / off)."""
    out = {}
    for on, off in (("fast", "fast_nochk"), ("ceiling", "ceiling_nochk")):
        a, b = entry.get(on) or {}, entry.get(off) or {}
        key = "cycles_per_total_cpu_s" if on == "fast" else "cycles_per_cpu_s"
        if a.get(key) and b.get(key):
            out[on] = {"on": a[key], "off": b[key], "cost": 1 - a[key] / b[key]}
    return out


def plot(doc: dict, path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = [("baseline", "baseline (cocotbext-axi, Python per beat)", "#c44"),
             ("fast", "fast path (tb/fast)", "#48c"),
             ("fast_nochk", "fast path without the protocol checker", "#9bd"),
             ("fast_pgo", "fast path, PGO build", "#26a"),
             ("fast_pgo_par", "fast path, PGO build, checker in a 2nd process", "#036"),
             ("ceiling", "Verilator only (no Python)", "#aaa"),
             ("ceiling_nochk", "Verilator only, without the protocol checker", "#ddd"),
             ("ceiling_pgo", "Verilator only, PGO build", "#555")]
    kinds = [k for k in kinds if any(w.get(k[0]) for w in doc["widths"])]
    fig, axes = plt.subplots(1, 2, figsize=(12, 5.2), sharey=True)
    labels = [f"MAC {w['data_bits']} / DMA {w['dma_bits']}" for w in doc["widths"]]
    bw = 0.8 / len(kinds)
    for ax, metric, title in ((axes[0], "cycles_per_s", "per wall second"),
                              (axes[1], "cycles_per_total_cpu_s", "per CPU second (simulator + checker)")):
        for k, (key, label, color) in enumerate(kinds):
            xs, ys = [], []
            for i, w in enumerate(doc["widths"]):
                v = (w.get(key) or {}).get(metric)
                if v:
                    xs.append(i + (k - (len(kinds) - 1) / 2) * bw)
                    ys.append(v)
            bars = ax.bar(xs, ys, bw, label=label, color=color)
            for bar, y in zip(bars, ys):
                ax.text(bar.get_x() + bar.get_width() / 2, y * 1.05, f"{y / 1e3:.0f}k", ha="center",
                        va="bottom", fontsize=7, rotation=90)
        ax.axhline(1e6, color="k", ls=":", lw=1, label="target: 1M cycles/s")
        ax.set_yscale("log")
        ax.set_ylim(top=4e6)            # room for the labels above the tallest bars
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels)
        ax.set_title(f"simulated cycles {title}", fontsize=10)
        ax.grid(True, axis="y", which="both", alpha=0.3)
    axes[0].set_ylabel("simulated clock cycles")
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, fontsize=8, loc="lower center", ncol=4, frameon=False)
    fig.suptitle(f"Simulation speed, bulk RX ({doc['frame_bytes']}-byte frames, every frame checked)")
    fig.tight_layout(rect=(0, 0.1, 1, 1))          # the legend below the plots
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.sim_speed", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--widths", default=",".join(map(str, WIDTHS)), help="MAC widths (DMA = 2x)")
    ap.add_argument("--frames-64", type=int, default=FRAMES[64], help="frames per run at width 64")
    ap.add_argument("--frames-512", type=int, default=FRAMES[512], help="frames per run at width 512")
    ap.add_argument("--baseline-frames-div", type=int, default=1,
                    help="baseline runs send frames/DIV frames (same traffic, shorter): default 1")
    ap.add_argument("--frame-bytes", type=int, default=1500)
    ap.add_argument("--reps", type=int, default=2, help="fast/baseline pairs per width")
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--no-ceiling", action="store_true")
    ap.add_argument("--no-checker-off", action="store_true",
                    help="skip the fast and ceiling runs without the protocol checker (its cost)")
    ap.add_argument("--no-pgo", action="store_true",
                    help="skip the profile-guided (PGO) builds of the fast path and the ceiling")
    ap.add_argument("--verilator-arg", action="append", default=[],
                    help="extra Verilator build argument for every build (repeatable)")
    args = ap.parse_args(argv)
    out_dir = BUILD_ROOT / "bench"
    out_dir.mkdir(parents=True, exist_ok=True)
    frames_for = {64: args.frames_64, 512: args.frames_512}
    pgo_why = "--no-pgo" if args.no_pgo else pgo.unavailable()
    if pgo_why:
        print(f"bench: no PGO builds: {pgo_why}", flush=True)
    doc = {"benchmark": "sim_speed", "frame_bytes": args.frame_bytes, "load_start": _load(),
           "cpus": os.cpu_count(), "widths": [], "pgo": pgo_why or "on",
           "note": "wall-clock rates on a shared machine: see load_start/load_end per run; "
                   "cycles_per_cpu_s uses the simulator process's CPU time"}
    for width in [int(w) for w in args.widths.split(",")]:
        n = frames_for.get(width, 6000)
        n_base = max(1, n // args.baseline_frames_div)
        entry: dict = {"data_bits": width, "dma_bits": 2 * width, "runs": [], "pgo_training": []}
        kinds = [("fast", "fast", args.verilator_arg, "inline")]
        if not args.no_checker_off:
            kinds.append(("fast", "fast_nochk", [*args.verilator_arg, *CHECKER_OFF_ARGS], "inline"))
        if not pgo_why:
            print(f"bench: PGO training of the fast path, MAC {width} bits (instrumented build and a short run; "
                  "may take minutes)", flush=True)
            pgo_args, rec = pgo.train_fast(width, args.verilator_arg, lambda build_args, env: run_one(
                "fast", width, pgo.TRAIN_FRAMES[width], 0, args.frame_bytes, build_args, "pgo_train", extra_env=env))
            entry["pgo_training"].append(rec)
            print(f"  trained on {rec['frames']} frames in {rec['train_s']:.0f} s: {rec['profile']}", flush=True)
            kinds.append(("fast", "fast_pgo", pgo_args, "inline"))
            kinds.append(("fast", "fast_pgo_par", pgo_args, "process"))
        if not args.no_baseline:
            kinds.append(("base", "base", args.verilator_arg, "inline"))
        for rep in range(args.reps):
            for path, label, build_args, checker in kinds:
                nf = n if path == "fast" else n_base
                print(f"bench: sim speed, {label}, MAC {width} bits, {nf} frames, run {rep + 1}/{args.reps} "
                      f"(load {_load()[0]})", flush=True)
                r = run_one(path, width, nf, rep, args.frame_bytes, build_args, label, checker)
                r["cycles_per_cpu_s"] = r["cycles"] / max(r.get("cpu_s", r["wall_s"]), 1e-9)
                # CPU of the simulator process and of the checker process, if any, together
                r["cycles_per_total_cpu_s"] = r["cycles"] / max(r.get("cpu_s", r["wall_s"]) + r.get("checker_cpu_s", 0.0), 1e-9)
                r["check_share"] = r["check_s"] / r["wall_s"]
                entry["runs"].append(r)
                print(f"  {label:12s}: {r['cycles']} cycles in {r['wall_s']:.1f} s wall: "
                      f"{r['cycles_per_s'] / 1e3:.0f}k cycles/s, {r['frames_per_s']:.0f} frames/s, "
                      f"{r['cycles_per_cpu_s'] / 1e3:.0f}k cycles/CPU-s; checking {100 * r['check_share']:.0f}% "
                      f"of the time; {r['checked']} frames checked", flush=True)
        entry["fast"] = _summary([r for r in entry["runs"] if r["path"] == "fast"])
        entry["fast_nochk"] = _summary([r for r in entry["runs"] if r["path"] == "fast_nochk"])
        entry["fast_pgo"] = _summary([r for r in entry["runs"] if r["path"] == "fast_pgo"])
        entry["fast_pgo_par"] = _summary([r for r in entry["runs"] if r["path"] == "fast_pgo_par"])
        entry["baseline"] = _summary([r for r in entry["runs"] if r["path"] == "base"])
        for key, suffix in (("fast", ""), ("fast_pgo", "_pgo"), ("fast_pgo_par", "_pgo_par")):
            if entry["baseline"] and entry[key]:
                entry["speedup" + suffix] = entry[key]["cycles_per_s"] / entry["baseline"]["cycles_per_s"]
                entry["speedup_cpu" + suffix] = entry[key]["cycles_per_cpu_s"] / entry["baseline"]["cycles_per_cpu_s"]
                print(f"bench: MAC {width}: {key} {entry[key]['cycles_per_s'] / 1e3:.0f}k vs baseline "
                      f"{entry['baseline']['cycles_per_s'] / 1e3:.0f}k cycles/s: {entry['speedup' + suffix]:.1f}x "
                      f"({entry['speedup_cpu' + suffix]:.1f}x in CPU time)", flush=True)
        if not args.no_ceiling:
            from bench.sim_speed_sim import bulk_frames
            from tb.fast import standalone
            frames = bulk_frames(args.frame_bytes)
            keys = ("ceiling",) + (() if args.no_checker_off else ("ceiling_nochk",)) + (() if pgo_why else ("ceiling_pgo",))
            for key in keys:
                print(f"bench: Verilator-only {key}, MAC {width} bits, {n} frames (build may take minutes)", flush=True)
                if key == "ceiling":
                    binary = standalone.build(width, args.verilator_arg)
                elif key == "ceiling_nochk":
                    binary = standalone.build(width, [*args.verilator_arg, *CHECKER_OFF_ARGS], tag="-nochk")
                else:
                    binary, rec = pgo.train_standalone(width, args.verilator_arg, frames)
                    entry["pgo_training"].append(rec)
                    print(f"  trained on {rec['frames']} frames in {rec['train_s']:.0f} s: {rec['profile']}", flush=True)
                load0 = _load()
                c = standalone.run_frames(binary, width, frames, n, out_dir / f"sim_speed_standalone_{width}.img")
                c.update(load_start=load0, load_end=_load(), cycles_per_total_cpu_s=c["cycles_per_cpu_s"])
                entry[key] = c
                print(f"  {key}: {c['cycles']} cycles in {c['wall_s']:.1f} s: {c['cycles_per_s'] / 1e3:.0f}k cycles/s, "
                      f"{c['frames_per_s']:.0f} frames/s, {(c.get('cycles_per_cpu_s') or 0) / 1e3:.0f}k cycles/CPU-s",
                      flush=True)
        entry["checker_cost"] = checker_cost(entry)
        for key, c in entry["checker_cost"].items():
            print(f"bench: MAC {width}: protocol checker on {key}: {c['on'] / 1e3:.0f}k cycles/CPU-s with it, "
                  f"{c['off'] / 1e3:.0f}k without: it costs {100 * c['cost']:.1f}% of the CPU time", flush=True)
        doc["widths"].append(entry)
    doc["load_end"] = _load()
    write_report(doc, out_dir, "sim_speed", plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
