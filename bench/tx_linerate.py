"""TX line-rate benchmark: `python -m bench.tx_linerate` (part of `make bench`).

For MAC/DMA widths 64/128, 512/1024 and 512/512, frame layouts (`inline`: header in the
descriptor ring, payload in device memory; `hdrseg`: header segment in host memory, payload in
device memory; `linear`: the whole frame in host memory; `contig`: as `hdrseg` with
consecutive frames' payloads back to back in device memory), completion moderation settings
(TXQ.COALESCE usecs,frames: `0,1` off, the reset value; `2,8` batches of up to 8 completions
held at most 2 us) and frame sizes 60 .. 9000 bytes,
measures in clock cycles how close the TX path comes to one beat per cycle on m_axis_tx with
back-to-back frames (checksum offload on, MAC always ready, DMA memory without stalls): beats
and frames per cycle, Mpps at 250 MHz, the fraction of line rate, AXI reads and writes per
frame, completion latency percentiles. Writes build/bench/tx_linerate.json and build/bench/tx_linerate.png; the plot draws the
100GbE line (frames of S bytes without FCS take S + 24 bytes of wire time: FCS, preamble and
inter-frame gap; 148.8 Mpps at S = 60).
"""
from __future__ import annotations

import json
import sys
import time
from typing import Any

from bench.common import arg_parser, parse_configs, pyplot, rtl_sources, write_report
from tb.sim import BUILD_ROOT, run_rtl_test

SIZES = [60, 64, 65, 128, 256, 512, 1024, 1518, 4096, 9000]
CONFIGS = [(64, 128), (512, 1024), (512, 512)]
LAYOUTS = ["inline", "hdrseg", "linear", "contig"]
CLK_HZ = 250e6
WIRE_OVERHEAD = 24          # FCS 4, preamble and SFD 8, inter-frame gap 12 (IEEE 802.3)


def ethernet_frames_per_cycle(size: int, gbps: float = 100.0) -> float:
    """Frames per 250 MHz cycle that `gbps` Ethernet carries of frames of `size` bytes (no FCS)."""
    return gbps * 1e9 / (8 * (size + WIRE_OVERHEAD)) / CLK_HZ


def plot(doc: dict, path) -> None:
    plt = pyplot()
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(13, 4.8))
    sizes = sorted({r["frame_bytes"] for c in doc["configs"] for r in c["results"]})
    for cfg in doc["configs"]:
        for layout, cu, cf in dict.fromkeys((r["layout"], r["coal_usecs"], r["coal_frames"])
                                            for r in cfg["results"]):
            rs = [r for r in cfg["results"]
                  if (r["layout"], r["coal_usecs"], r["coal_frames"]) == (layout, cu, cf)]
            label = f"{cfg['data_bits']}/{cfg['dma_bits']} {layout}" + ("" if cf == 1 else f" coal {cu},{cf}")
            xs = [r["frame_bytes"] for r in rs]
            ax0.plot(xs, [r["frames_per_cycle"] for r in rs], marker="o", ms=3, label=label)
            ax1.plot(xs, [r["line_rate_fraction"] for r in rs], marker="o", ms=3, label=label)
    ax0.plot(sizes, [ethernet_frames_per_cycle(s) for s in sizes], "k--", lw=1.5,
             label="100GbE (S + 24 B on the wire)")
    ax0.set_xscale("log")
    ax0.set_yscale("log")
    ax0.set_xlabel("frame size (bytes, without FCS)")
    ax0.set_ylabel("frames per cycle (x 250 = Mpps)")
    ax0.set_title("TX frames per cycle, back to back")
    ax0.grid(True, which="both", alpha=0.3)
    ax1.set_xscale("log")
    ax1.set_xlabel("frame size (bytes, without FCS)")
    ax1.set_ylabel("m_axis_tx beats per cycle / beats needed")
    ax1.set_ylim(0, 1.05)
    ax1.set_title("TX line rate of the MAC stream")
    ax1.grid(True, which="both", alpha=0.3)
    ax1.legend(fontsize=7, loc="lower right")
    ax0.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> int:
    ap = arg_parser("bench.tx_linerate", __doc__, SIZES, CONFIGS, split=False)
    ap.add_argument("--layouts", default=",".join(LAYOUTS), help="frame layouts: inline,hdrseg,linear,contig")
    ap.add_argument("--coal", default="0,1/2,8", metavar="USECS,FRAMES[/USECS,FRAMES...]",
                    help="completion moderation settings of the queue (TXQ.COALESCE), each "
                         "measured: 0,1 = off (reset value); default 0,1/2,8")
    ap.add_argument("--out", default="tx_linerate", help="name of the JSON and PNG in build/bench/")
    args = ap.parse_args(argv)
    layouts = args.layouts.split(",")
    bad = [x for x in layouts if x not in LAYOUTS]
    if bad:
        ap.error(f"unknown layout {bad[0]!r} (inline, hdrseg, linear, contig)")
    try:
        coals = [tuple(int(v) for v in c.split(",")) for c in args.coal.split("/")]
    except ValueError:
        coals = []
    if not coals or any(len(c) != 2 or not 0 <= c[0] <= 0xFFFF or not 0 <= c[1] <= 0xFF for c in coals):
        ap.error(f"--coal {args.coal!r}: USECS,FRAMES pairs separated by '/' (usecs 0..65535, frames 0..255)")
    sources, defines = rtl_sources(args.rtl_rev)
    out_dir = BUILD_ROOT / "bench"
    out_dir.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {"benchmark": "tx_linerate", "clk_mhz": CLK_HZ / 1e6, "configs": []}
    for data_w, dma_w in parse_configs(args.configs):
        part = out_dir / f"{args.out}_{data_w}_{dma_w}.json"
        print(f"bench: tx line rate, MAC {data_w} / DMA {dma_w} bits, layouts {args.layouts}, "
              f"moderation {args.coal}, sizes {args.sizes}", flush=True)
        t0 = time.monotonic()
        run_rtl_test("nic_top", sources, "bench.tx_linerate_sim",
                     {"DATA_W": data_w, "DMA_DATA_W": dma_w}, f"bench_tx_linerate-{data_w}-{dma_w}",
                     extra_env={"BENCH_SIZES": args.sizes, "BENCH_LAYOUTS": args.layouts,
                                "BENCH_COAL": args.coal, "BENCH_OUT": str(part)},
                     seed=1, defines=defines)
        cfg = json.loads(part.read_text())
        cfg["wall_s"] = round(time.monotonic() - t0, 1)
        for r in cfg["results"]:
            r["ethernet_100g_frames_per_cycle"] = ethernet_frames_per_cycle(r["frame_bytes"])
        doc["configs"].append(cfg)
        for r in cfg["results"]:
            print(f"  {r['layout']:6s} coal {r['coal_usecs']},{r['coal_frames']} {r['frame_bytes']:5d} B  {r['beats_per_cycle']:.3f} beats/cycle  "
                  f"{r['frames_per_cycle']:.4f} frames/cycle ({r['mpps_at_250mhz']:6.1f} Mpps, 100GbE "
                  f"{r['ethernet_100g_frames_per_cycle']:.3f})  line rate {100 * r['line_rate_fraction']:5.1f}%  "
                  f"AR/frame {r['ar_per_frame']:.2f} R/frame {r['r_beats_per_frame']:.2f} "
                  f"AW/frame {r['aw_per_frame']:.2f}", flush=True)
    write_report(doc, out_dir, args.out, plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
