"""RX line-rate benchmark: `python -m bench.rx_linerate` (part of `make bench`).

For MAC/DMA widths 64/128, 512/512 and 512/1024, header/data split on and off, and frame
sizes 64 .. 9000 bytes, measures in clock cycles whether the RX path keeps up with
back-to-back frames (RSS and a steering rule active): accepted input beats per cycle (the
port never stalls, so this is 1.0 when the source sends back to back), delivered frames per
cycle in steady state (and the same in MAC beats per cycle), FIFO drops, and the fraction of
line rate delivered. Writes build/bench/rx_linerate.json and build/bench/rx_linerate.png.
"""
from __future__ import annotations

import json
import sys
import time
from typing import Any

from bench.common import arg_parser, parse_configs, pyplot, rtl_sources
from tb.sim import BUILD_ROOT, run_rtl_test

SIZES = [64, 65, 96, 128, 192, 256, 512, 1024, 1518, 4096, 9000]
CONFIGS = [(64, 128), (512, 512), (512, 1024)]


def plot(doc: dict, path) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    for ax, split in zip(axes, (True, False)):
        for cfg in doc["configs"]:
            rs = [r for r in cfg["results"] if r.get("split", True) == split]
            if not rs:
                continue
            ax.plot([r["frame_bytes"] for r in rs], [r["line_rate_fraction"] for r in rs],
                    marker="o", label=f"MAC {cfg['data_bits']} / DMA {cfg['dma_bits']} bits")
        ax.set_xscale("log")
        ax.set_xlabel("frame size (bytes, without FCS)")
        ax.set_ylim(0, 1.05)
        ax.grid(True, which="both", alpha=0.3)
        ax.set_title(f"header/data split {'on' if split else 'off'}")
        ax.legend(loc="lower right")
    axes[0].set_ylabel("delivered / offered frame rate")
    fig.suptitle("RX line rate, back-to-back frames, RSS + steering on")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    ap = arg_parser("bench.rx_linerate", __doc__, SIZES, CONFIGS)
    args = ap.parse_args(argv)
    sources, defines = rtl_sources(args.rtl_rev)
    configs = parse_configs(args.configs)
    out_dir = BUILD_ROOT / "bench"
    out_dir.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {"benchmark": "rx_linerate", "configs": []}
    for data_w, dma_w in configs:
        part = out_dir / f"rx_linerate_{data_w}_{dma_w}.json"
        print(f"bench: rx line rate, MAC {data_w} / DMA {dma_w} bits, split {args.split}, "
              f"sizes {args.sizes}", flush=True)
        t0 = time.monotonic()
        run_rtl_test("nic_top", sources, "bench.rx_linerate_sim",
                     {"DATA_W": data_w, "DMA_DATA_W": dma_w}, f"bench_rx_linerate-{data_w}-{dma_w}",
                     extra_env={"BENCH_SIZES": args.sizes, "BENCH_SPLIT": args.split,
                                "BENCH_OUT": str(part)}, seed=1, defines=defines)
        cfg = json.loads(part.read_text())
        cfg["wall_s"] = round(time.monotonic() - t0, 1)
        doc["configs"].append(cfg)
        for r in cfg["results"]:
            print(f"  split {'on ' if r['split'] else 'off'} {r['frame_bytes']:5d} B  "
                  f"in {r['input_beats_per_cycle']:.3f} beats/cycle  "
                  f"out {r['delivered_frames_per_cycle']:.4f} frames/cycle  "
                  f"line rate {100 * r['line_rate_fraction']:5.1f}%  fifo drops {r['fifo_drops']}",
                  flush=True)
    (out_dir / "rx_linerate.json").write_text(json.dumps(doc, indent=2))
    plot(doc, out_dir / "rx_linerate.png")
    print(f"bench: wrote {out_dir / 'rx_linerate.json'} and {out_dir / 'rx_linerate.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
