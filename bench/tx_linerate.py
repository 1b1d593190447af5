"""TX line-rate benchmark: `python -m bench.tx_linerate` (part of `make bench`).

For MAC/DMA widths 64/128 and 512/1024 and frame sizes 64 .. 9000 bytes, measures in clock
cycles how close the TX path comes to one beat per cycle on m_axis_tx with back-to-back
frames (checksum offload on, header segment in host memory, payload in device memory, MAC
always ready, DMA memory without stalls): beats per cycle, frames per cycle, and the fraction
of line rate. Writes build/bench/tx_linerate.json and build/bench/tx_linerate.png.
"""
from __future__ import annotations

import json
import sys
import time
from typing import Any

from bench.common import arg_parser, parse_configs, pyplot, rtl_sources
from tb.sim import BUILD_ROOT, run_rtl_test

SIZES = [64, 65, 128, 256, 512, 1024, 1518, 4096, 9000]
CONFIGS = [(64, 128), (512, 1024)]


def plot(doc: dict, path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for cfg in doc["configs"]:
        xs = [r["frame_bytes"] for r in cfg["results"]]
        ys = [r["line_rate_fraction"] for r in cfg["results"]]
        ax.plot(xs, ys, marker="o", label=f"MAC {cfg['data_bits']} / DMA {cfg['dma_bits']} bits")
    ax.set_xscale("log")
    ax.set_xlabel("frame size (bytes, without FCS)")
    ax.set_ylabel("m_axis_tx beats per cycle / beats needed")
    ax.set_ylim(0, 1.05)
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title("TX line rate, checksum offload on, back-to-back frames")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> int:
    args = arg_parser("bench.tx_linerate", __doc__, SIZES, CONFIGS, split=False).parse_args(argv)
    sources, defines = rtl_sources(args.rtl_rev)
    out_dir = BUILD_ROOT / "bench"
    out_dir.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {"benchmark": "tx_linerate", "configs": []}
    for data_w, dma_w in parse_configs(args.configs):
        part = out_dir / f"tx_linerate_{data_w}_{dma_w}.json"
        print(f"bench: tx line rate, MAC {data_w} / DMA {dma_w} bits, sizes {args.sizes}", flush=True)
        t0 = time.monotonic()
        run_rtl_test("nic_top", sources, "bench.tx_linerate_sim",
                     {"DATA_W": data_w, "DMA_DATA_W": dma_w}, f"bench_tx_linerate-{data_w}-{dma_w}",
                     extra_env={"BENCH_SIZES": args.sizes, "BENCH_OUT": str(part)}, seed=1,
                     defines=defines)
        cfg = json.loads(part.read_text())
        cfg["wall_s"] = round(time.monotonic() - t0, 1)
        doc["configs"].append(cfg)
        for r in cfg["results"]:
            print(f"  {r['frame_bytes']:5d} B  {r['beats_per_cycle']:.3f} beats/cycle  "
                  f"{r['frames_per_cycle']:.4f} frames/cycle  line rate {100 * r['line_rate_fraction']:5.1f}%")
    (out_dir / "tx_linerate.json").write_text(json.dumps(doc, indent=2))
    plot(doc, out_dir / "tx_linerate.png")
    print(f"bench: wrote {out_dir / 'tx_linerate.json'} and {out_dir / 'tx_linerate.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
