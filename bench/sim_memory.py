"""Memory benchmark: `python -m bench.sim_memory` (part of `make bench`).

The simulator process's resident memory over long bulk runs on the fast harness (tb/fast/),
DMA write recording off, every frame checked:
  - rx: 200,000 back-to-back 1500-byte TCP frames through one RX queue (bench.sim_speed_sim's
        bulk_rx, split on, refill every 128 frame times);
  - tx: 200,000 TCP/UDP frames of 60..128 bytes through one TX queue (tb.tx_env.bulk_tx).
Each run samples /proc/self/status every 5,000 frames: VmRSS and its parts (RssAnon: the
process's private heap, Python and the Verilated model; RssShmem: the pages of the memory
block shared with the harness touched so far, bounded by the block's size; RssFile: code),
and the number of live Python objects. `growth` is the largest VmRSS after warm-up (the
first 10,000 frames fill the model's memo, the frame queues and the descriptor rings once)
over the VmRSS at warm-up; the target is at most 10%. Benchmarks are never pass/fail on it:
the JSON says `within_target`.

`--tracemalloc` also lists the Python allocation sites that grew most (slower; a diagnosis
aid). Writes build/bench/sim_memory.json and build/bench/sim_memory.png.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

from bench.common import pyplot, write_report
from tb.sim import BUILD_ROOT

FRAMES = 200_000
SAMPLE_FRAMES = 5_000
WARMUP_FRAMES = 10_000
TARGET = 0.10
MIB = 1 << 20


def summarize(samples: list[dict], warmup: int = WARMUP_FRAMES) -> dict:
    """Growth of VmRSS (and of RssAnon) from the first sample at or after `warmup` frames to
    the largest later sample; per-frame growth in bytes."""
    after = [s for s in samples if s["frames"] >= warmup]
    if len(after) < 2:
        raise ValueError(f"need two samples at or after {warmup} frames, have {len(after)}")
    base, last = after[0], after[-1]
    peak = max(s["VmRSS"] for s in after)
    frames = max(last["frames"] - base["frames"], 1)
    growth = (peak - base["VmRSS"]) / base["VmRSS"]
    return {
        "warmup_frames": base["frames"], "rss_at_warmup": base["VmRSS"], "rss_peak": peak,
        "rss_end": last["VmRSS"], "growth": growth, "within_target": growth <= TARGET,
        "target": TARGET,
        "rss_bytes_per_frame": (last["VmRSS"] - base["VmRSS"]) / frames,
        "anon_bytes_per_frame": (last.get("RssAnon", 0) - base.get("RssAnon", 0)) / frames,
        "py_objects_per_frame": (last.get("py_objects", 0) - base.get("py_objects", 0)) / frames,
    }


def run_one(path: str, frames: int, frame_bytes: int, tracemalloc: bool) -> dict:
    from tb.fast.build import run_fast_test

    out = BUILD_ROOT / "bench" / f"sim_memory_{path}.json"
    out.unlink(missing_ok=True)
    env = {"BENCH_MEM_PATH": path, "BENCH_FRAMES": str(frames), "BENCH_FRAME_BYTES": str(frame_bytes),
           "BENCH_OUT": str(out), "BENCH_SAMPLE_FRAMES": str(SAMPLE_FRAMES),
           "BENCH_WARMUP_FRAMES": str(WARMUP_FRAMES), "BENCH_TRACEMALLOC": "1" if tracemalloc else "0"}
    t0 = time.monotonic()
    run_fast_test("bench.sim_memory_sim", {"DATA_W": 64}, f"bench_sim_memory-{path}", extra_env=env, seed=1)
    doc = json.loads(out.read_text())
    doc["process_wall_s"] = time.monotonic() - t0
    doc["summary"] = summarize(doc["samples"])
    return doc


def plot(doc: dict, path) -> None:
    plt = pyplot()
    runs = doc["runs"]
    fig, axes = plt.subplots(1, len(runs), figsize=(6 * len(runs), 4.5), squeeze=False)
    for ax, run in zip(axes[0], runs):
        xs = [s["frames"] / 1e3 for s in run["samples"]]
        parts = [("RssAnon", "private (Python heap, Verilated model)", "#48c"),
                 ("RssShmem", "shared block (pages touched)", "#8c4"),
                 ("RssFile", "code and files", "#bbb")]
        ax.stackplot(xs, *[[s.get(k, 0) / MIB for s in run["samples"]] for k, _, _ in parts],
                     labels=[lbl for _, lbl, _ in parts], colors=[c for _, _, c in parts], alpha=0.8)
        ax.plot(xs, [s["VmRSS"] / MIB for s in run["samples"]], "k-", lw=1.2, label="VmRSS")
        sm = run["summary"]
        ax.axhline(sm["rss_at_warmup"] * (1 + TARGET) / MIB, color="r", ls=":", lw=1,
                   label=f"VmRSS at {sm['warmup_frames'] // 1000}k frames + {TARGET:.0%}")
        what = f"{run['frame_bytes']}-byte frames" if run.get("frame_bytes") else "60..128-byte frames"
        ax.set_title(f"{run['path'].upper()}: {run['frames']:,} {what}: growth {sm['growth']:+.1%}",
                     fontsize=10)
        ax.set_xlabel("frames checked (thousands)")
        ax.set_ylabel("resident memory (MiB)")
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0)
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, fontsize=8, loc="lower center", ncol=3, frameon=False)
    fig.suptitle("Simulator process resident memory, bulk runs on the fast harness (MAC 64 / DMA 128)")
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.sim_memory", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frames", type=int, default=FRAMES, help=f"frames per run (default {FRAMES})")
    ap.add_argument("--frame-bytes", type=int, default=1500, help="RX frame size")
    ap.add_argument("--paths", default="rx,tx", help="rx,tx | rx | tx")
    ap.add_argument("--tracemalloc", action="store_true", help="also list the Python allocation sites that grew")
    args = ap.parse_args(argv)
    if args.frames < 2 * WARMUP_FRAMES:
        ap.error(f"--frames must be at least {2 * WARMUP_FRAMES} (warm-up is {WARMUP_FRAMES})")
    out_dir = BUILD_ROOT / "bench"
    out_dir.mkdir(parents=True, exist_ok=True)
    doc = {"benchmark": "sim_memory", "frames": args.frames, "sample_frames": SAMPLE_FRAMES,
           "warmup_frames": WARMUP_FRAMES, "target": TARGET, "load_start": list(os.getloadavg()), "runs": []}
    for path in args.paths.split(","):
        print(f"bench: memory, {path.upper()} bulk run of {args.frames} frames (samples every {SAMPLE_FRAMES})",
              flush=True)
        run = run_one(path, args.frames, args.frame_bytes, args.tracemalloc)
        sm = run["summary"]
        print(f"  VmRSS {sm['rss_at_warmup'] / MIB:.1f} MiB at {sm['warmup_frames']} frames, peak "
              f"{sm['rss_peak'] / MIB:.1f} MiB, end {sm['rss_end'] / MIB:.1f} MiB: growth {sm['growth']:+.1%} "
              f"({sm['rss_bytes_per_frame']:.1f} B/frame, private {sm['anon_bytes_per_frame']:.1f} B/frame; "
              f"target {TARGET:.0%}: {'met' if sm['within_target'] else 'NOT met'}) in {run['process_wall_s']:.0f} s",
              flush=True)
        for g in run.get("growth_sites", [])[:5]:
            print(f"    {g['size_diff'] / 1024:+.0f} KiB {g['count_diff']:+d} blocks at {g['site']}")
        doc["runs"].append(run)
    doc["load_end"] = list(os.getloadavg())
    write_report(doc, out_dir, "sim_memory", plot, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
