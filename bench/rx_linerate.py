"""RX line-rate benchmark: `python -m bench.rx_linerate` (part of `make bench`).

For MAC/DMA widths 64/128, 512/512 and 512/1024, RX modes (bench/rx_linerate_sim.RX_MODES:
`base`, every mechanism at its reset value, on every width; `mpb`, multi-packet payload
buffers with 16-byte strides and completion batches of 16, on the 512-bit widths), header/data
split on and off, and frame sizes 64 .. 9000 bytes, measures in clock cycles whether the RX
path keeps up with back-to-back frames (RSS and a steering rule active): accepted input beats
per cycle (the port never stalls, so this is 1.0 when the source sends back to back), delivered
frames per cycle in steady state (and Mpps at the 250 MHz clock, and MAC beats per cycle), FIFO
drops, the fraction of the MAC's line rate delivered and of 100GbE's frame rate, and DMA write
bursts and beats per frame (completions apart), and where the steady state's cycles go
(`steady_cycles`: what the RX planner did each cycle, AW and W channel use), and
`latency_cycles_last_frame`: cycles from the last frame's tlast beat into the MAC port to the
write response of the completion write covering it (None when a frame was dropped). Writes build/bench/rx_linerate.json and
build/bench/rx_linerate.png (the 100GbE line drawn).
"""
from __future__ import annotations

import json
import sys
import time
from typing import Any

from bench.common import arg_parser, parse_configs, pyplot, rtl_sources, write_report
from tb.sim import BUILD_ROOT, run_rtl_test

SIZES = [64, 65, 96, 128, 192, 256, 512, 1024, 1518, 4096, 9000]
CONFIGS = [(64, 128), (512, 512), (512, 1024)]
MODES = {64: "base", 512: "base,mpb"}
"""RX modes run per MAC width unless --modes says."""


def plot(doc: dict, path) -> None:
    from bench.rx_linerate_sim import CLK_MHZ, eth100g_frames_per_cycle
    plt = pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(12, 8.5), sharex=True)
    styles = {"base": "-", "mpb": "--", "mpb-usecs2": ":"}
    sizes: set[int] = set()
    for col, split in enumerate((True, False)):
        top, bottom = axes[0][col], axes[1][col]
        for i, cfg in enumerate(doc["configs"]):
            for mode in dict.fromkeys(r.get("mode", "base") for r in cfg["results"]):
                rs = [r for r in cfg["results"] if r.get("split", True) == split and r.get("mode", "base") == mode]
                if not rs:
                    continue
                sizes.update(r["frame_bytes"] for r in rs)
                label = f"MAC {cfg['data_bits']} / DMA {cfg['dma_bits']}, {mode}"
                kw = dict(marker="o", linestyle=styles.get(mode, "-"), color=f"C{i}", label=label)
                top.plot([r["frame_bytes"] for r in rs], [r["line_rate_fraction"] for r in rs], **kw)
                bottom.plot([r["frame_bytes"] for r in rs],
                            [r["delivered_frames_per_cycle"] * CLK_MHZ for r in rs], **kw)
        xs = sorted(sizes)
        bottom.plot(xs, [eth100g_frames_per_cycle(x) * CLK_MHZ for x in xs], color="black",
                    linestyle="-.", linewidth=1.5, label="100GbE (frame + 20 B on the wire)")
        for ax in (top, bottom):
            ax.set_xscale("log")
            ax.grid(True, which="both", alpha=0.3)
        top.set_ylim(0, 1.05)
        top.set_title(f"header/data split {'on' if split else 'off'}")
        bottom.set_yscale("log")
        bottom.set_xlabel("frame size (bytes, without FCS)")
        bottom.legend(loc="lower left", fontsize=7)
    axes[0][0].legend(loc="lower right", fontsize=7)
    axes[0][0].set_ylabel("delivered / offered frame rate (MAC)")
    axes[1][0].set_ylabel(f"delivered Mpps at {CLK_MHZ:.0f} MHz")
    fig.suptitle("RX line rate, back-to-back frames, RSS + steering on")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    ap = arg_parser("bench.rx_linerate", __doc__, SIZES, CONFIGS)
    ap.add_argument("--modes", default=None,
                    help="RX modes, e.g. base,mpb (default: base at MAC 64, base,mpb at MAC 512)")
    args = ap.parse_args(argv)
    sources, defines = rtl_sources(args.rtl_rev)
    configs = parse_configs(args.configs)
    out_dir = BUILD_ROOT / "bench"
    out_dir.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {"benchmark": "rx_linerate", "configs": []}
    for data_w, dma_w in configs:
        part = out_dir / f"rx_linerate_{data_w}_{dma_w}.json"
        modes = args.modes or MODES.get(data_w, "base")
        print(f"bench: rx line rate, MAC {data_w} / DMA {dma_w} bits, modes {modes}, split {args.split}, "
              f"sizes {args.sizes}", flush=True)
        t0 = time.monotonic()
        run_rtl_test("nic_top", sources, "bench.rx_linerate_sim",
                     {"DATA_W": data_w, "DMA_DATA_W": dma_w}, f"bench_rx_linerate-{data_w}-{dma_w}",
                     extra_env={"BENCH_SIZES": args.sizes, "BENCH_SPLIT": args.split,
                                "BENCH_MODES": modes, "BENCH_OUT": str(part)}, seed=1, defines=defines)
        cfg = json.loads(part.read_text())
        cfg["wall_s"] = round(time.monotonic() - t0, 1)
        doc["configs"].append(cfg)
        for r in cfg["results"]:
            print(f"  {r['mode']:>10} split {'on ' if r['split'] else 'off'} {r['frame_bytes']:5d} B  "
                  f"in {r['input_beats_per_cycle']:.3f} beats/cycle  "
                  f"out {r['delivered_frames_per_cycle']:.4f} frames/cycle ({r['delivered_mpps']:.1f} Mpps)  "
                  f"line rate {100 * r['line_rate_fraction']:5.1f}%  100GbE {100 * r['eth100g_fraction']:5.1f}%  "
                  f"W beats/frame {r['write_beats_per_frame']:.3f}  fifo drops {r['fifo_drops']}",
                  flush=True)
            sc = r.get("steady_cycles")
            if sc and sc["cycles"]:
                parts = [f"{k} {v / sc['cycles']:.0%}" for k, v in (sc["planner"] or {}).items()]
                print(f"             steady state {sc['cycles']} cycles: AW {sc['aw_busy']:.0%} W {sc['w_busy']:.0%}"
                      f" busy; planner: {', '.join(parts)}", flush=True)
    write_report(doc, out_dir, "rx_linerate", plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
