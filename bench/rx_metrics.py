"""RX metrics benchmark: `python -m bench.rx_metrics` (part of `make bench`).

Runs bench/rx_metrics_sim.py on nic_top at MAC/DMA widths 64/128 and 512/1024, in RX modes
(bench/rx_linerate_sim.RX_MODES: `base` everywhere; at MAC 512 also `mpb`, multi-packet payload
buffers and completion batches of 16, and `mpb-usecs2`, the same with batches that wait up to
2 us: the latency cost of moderation) and collects:
- DMA efficiency (useful bytes per write beat from the write strobes, by header / payload /
  completion), the AW burst-length histogram and the outstanding write and read
  transactions, per frame size and split setting, from passive per-cycle AXI monitors;
- latency from a frame's tlast handshake to the W handshake of the last beat of its last
  completion, to CQ.HW_IDX counting it, and to that write's response: p50/p90/p99/max per
  frame size, back to back and for isolated frames;
- devmem goodput: a TCP stream steered by an n-tuple rule to a bound devmem queue, sent back
  to back, the reference driver running as the application; payload bytes landed in device
  memory per cycle as a fraction of the MAC line rate and of the theoretical TCP goodput.
Writes build/bench/rx_metrics.json and build/bench/rx_{dma_efficiency,bursts,latency,goodput}.png.
"""
from __future__ import annotations

import json
import sys
import time
from typing import Any

from bench.common import arg_parser, parse_configs, pyplot, rtl_sources
from tb.sim import BUILD_ROOT, run_rtl_test

SIZES = [64, 128, 256, 512, 1024, 1518, 4096, 9000]
CONFIGS = [(64, 128), (512, 1024)]
MODES = {64: "base", 512: "base,mpb,mpb-usecs2"}
STYLES = {"base": "-", "mpb": "--", "mpb-usecs2": ":"}


def _series(cfg: dict, split: bool = True):
    """(mode, results of that mode and split) of a configuration, in the order run."""
    for mode in dict.fromkeys(r.get("mode", "base") for r in cfg["dma"]):
        yield mode, [r for r in cfg["dma"] if r["split"] == split and r.get("mode", "base") == mode]


def plot_efficiency(doc: dict, path) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    for ax, split in zip(axes, (True, False)):
        for i, cfg in enumerate(doc["configs"]):
            for mode, rs in _series(cfg, split):
                if mode == "mpb-usecs2" or not rs:
                    continue                   # the same writes as mpb
                label = f"{cfg['data_bits']}/{cfg['dma_bits']} {mode}"
                xs = [r["frame_bytes"] for r in rs]
                ax.plot(xs, [r["dma"]["write_efficiency"] for r in rs], marker="o", color=f"C{2 * i}",
                        linestyle=STYLES.get(mode, "-"), label=f"all writes, MAC/DMA {label}")
                ax.plot(xs, [r["dma"]["by_kind"]["payload"]["efficiency"] for r in rs], marker="x",
                        color=f"C{2 * i + 1}", linestyle=STYLES.get(mode, "-"), label=f"payload only, {label}")
        ax.set_xscale("log")
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("frame size (bytes)")
        ax.grid(True, which="both", alpha=0.3)
        ax.set_title(f"header/data split {'on' if split else 'off'}")
        ax.legend(fontsize=8, loc="lower right")
    axes[0].set_ylabel("useful bytes / (write beats x bus bytes)")
    fig.suptitle("DMA write efficiency (write strobes), back-to-back frames")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def plot_bursts(doc: dict, path, sizes=(64, 1518, 9000)) -> None:
    plt = pyplot()
    cfgs = doc["configs"]
    fig, axes = plt.subplots(len(cfgs), len(sizes), figsize=(4 * len(sizes), 3.2 * len(cfgs)),
                             squeeze=False)
    for i, cfg in enumerate(cfgs):
        for j, size in enumerate(sizes):
            ax = axes[i][j]
            r = next((r for r in cfg["dma"] if r["split"] and r["frame_bytes"] == size
                      and r.get("mode", "base") == "base"), None)
            if r is None:
                ax.set_visible(False)
                continue
            kinds = r["dma"]["by_kind"]
            keys = sorted({int(b) for k in kinds.values() for b in k["burst_beats_hist"]})
            bottom = [0] * len(keys)
            for kind, v in kinds.items():
                ys = [v["burst_beats_hist"].get(str(b), 0) for b in keys]
                ax.bar([str(b) for b in keys], ys, bottom=bottom, label=kind)
                bottom = [a + b for a, b in zip(bottom, ys)]
            ax.set_title(f"{cfg['data_bits']}/{cfg['dma_bits']} bits, {size} B, split on", fontsize=9)
            ax.set_xlabel("AW burst length (beats)")
            ax.set_ylabel("bursts")
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def plot_latency(doc: dict, path) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, key, title in ((axes[0], "latency_isolated", "isolated frames (NIC idle)"),
                           (axes[1], "latency_back_to_back", "back-to-back frames (queueing)")):
        for i, cfg in enumerate(doc["configs"]):
            for j, (mode, rs) in enumerate(_series(cfg)):
                rs = [r for r in rs if r[key]["tlast_to_hw_idx"]]
                xs = [r["frame_bytes"] for r in rs]
                label = f"{cfg['data_bits']}/{cfg['dma_bits']} {mode}"
                for p, marker in (("p50", "o"), ("p99", "x")):
                    ax.plot(xs, [r[key]["tlast_to_hw_idx"][p] for r in rs], marker=marker,
                            color=f"C{3 * i + j}", linestyle=STYLES.get(mode, "-"), label=f"{p}, {label}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("frame size (bytes)")
        ax.set_ylabel("cycles, tlast -> CQ.HW_IDX counts the frame")
        ax.grid(True, which="both", alpha=0.3)
        ax.set_title(f"split on, {title}")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def plot_goodput(doc: dict, path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    labels, got, theo_beats, wire = [], [], [], []
    for cfg in doc["configs"]:
        for r in cfg.get("goodput", []):
            labels.append(f"{cfg['data_bits']} bit\nMSS {r['mss']}")
            got.append(r["goodput_fraction_of_mac_line_rate"])
            theo_beats.append(r["theoretical"]["mac_stream_beats"])
            wire.append(r["theoretical"]["wire"])
    x = range(len(labels))
    w = 0.27
    ax.bar([i - w for i in x], got, w, label="measured: payload landed in device memory")
    ax.bar(list(x), theo_beats, w, label="max on the MAC stream (MSS / frame beats)")
    ax.bar([i + w for i in x], wire, w, label="max on the wire (MSS / frame+FCS+preamble+IFG)")
    for i, g in enumerate(got):
        ax.text(i - w, g + 0.005, f"{100 * g:.1f}%", ha="center", fontsize=8)
    ax.set_xticks(list(x))
    ax.set_xticklabels(labels)
    ax.set_ylim(0.85, 1.01)
    ax.set_ylabel("fraction of MAC line rate (DATA_W/8 bytes per cycle)")
    ax.set_title("devmem TCP goodput, back-to-back stream, reference driver as the application")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    ap = arg_parser("bench.rx_metrics", __doc__, SIZES, CONFIGS)
    ap.add_argument("--goodput-bytes", type=int, default=2 << 20, help="TCP stream length")
    ap.add_argument("--mtus", default="1500,9000", help="MTUs of the goodput streams")
    ap.add_argument("--tests", default="dma_metrics,devmem_goodput", help="cocotb tests to run")
    ap.add_argument("--modes", default=None,
                    help="RX modes of dma_metrics (default: base at MAC 64, base,mpb,mpb-usecs2 at 512)")
    args = ap.parse_args(argv)
    sources, defines = rtl_sources(args.rtl_rev)
    configs = parse_configs(args.configs)
    out_dir = BUILD_ROOT / "bench"
    out_dir.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {"benchmark": "rx_metrics", "configs": []}
    for data_w, dma_w in configs:
        part = out_dir / f"rx_metrics_{data_w}_{dma_w}"
        for suffix in (".dma.json", ".goodput.json"):
            (out_dir / (part.name + suffix)).unlink(missing_ok=True)
        print(f"bench: rx metrics, MAC {data_w} / DMA {dma_w} bits: {args.tests} "
              f"(sizes {args.sizes}, split {args.split}; goodput {args.goodput_bytes} B, MTU {args.mtus})",
              flush=True)
        t0 = time.monotonic()
        run_rtl_test("nic_top", sources, "bench.rx_metrics_sim",
                     {"DATA_W": data_w, "DMA_DATA_W": dma_w}, f"bench_rx_metrics-{data_w}-{dma_w}",
                     extra_env={"BENCH_SIZES": args.sizes, "BENCH_SPLIT": args.split,
                                "BENCH_MODES": args.modes or MODES.get(data_w, "base"),
                                "GOODPUT_BYTES": str(args.goodput_bytes), "GOODPUT_MTUS": args.mtus,
                                "BENCH_OUT": str(part)},
                     seed=1, testcase=args.tests, defines=defines)
        cfg: dict[str, Any] = {"data_bits": data_w, "dma_bits": dma_w, "dma": [], "goodput": []}
        dma_path = out_dir / (part.name + ".dma.json")
        gp_path = out_dir / (part.name + ".goodput.json")
        if dma_path.exists():
            cfg["dma"] = json.loads(dma_path.read_text())["results"]
        if gp_path.exists():
            cfg["goodput"] = json.loads(gp_path.read_text())["results"]
        cfg["wall_s"] = round(time.monotonic() - t0, 1)
        doc["configs"].append(cfg)
        for r in cfg["dma"]:
            d, lat = r["dma"], r["latency_isolated"]["tlast_to_cpl_w"] or {}
            b2b = r["latency_back_to_back"]["tlast_to_cpl_w"] or {}
            hw_iso = r["latency_isolated"]["tlast_to_hw_idx"] or {}
            print(f"  {r.get('mode', 'base'):>10} split {'on ' if r['split'] else 'off'} {r['frame_bytes']:5d} B  "
                  f"{d['bytes_per_write_beat']:6.1f} B/beat ({100 * d['write_efficiency']:5.1f}%)  "
                  f"mean burst {d['mean_burst_beats']:5.1f}  outstanding wr max {d['outstanding_writes']['max']} "
                  f"rd max {d['outstanding_reads']['max']}  latency isolated p50 {lat.get('p50')} "
                  f"(HW_IDX {hw_iso.get('p50')}) b2b p50/p99 {b2b.get('p50')}/{b2b.get('p99')}", flush=True)
        for r in cfg["goodput"]:
            print(f"  goodput MTU {r['mtu']} (MSS {r['mss']}, frame {r['frame_bytes']} B): "
                  f"{100 * r['goodput_fraction_of_mac_line_rate']:.2f}% of line rate, "
                  f"{100 * r['goodput_fraction_of_theoretical_mac_stream']:.2f}% of the MAC-stream maximum; "
                  f"byte-exact {r['byte_exact']}, CPU reads {r['cpu_reads_of_device_memory']}, "
                  f"drops {r['hw_drops']}", flush=True)
    (out_dir / "rx_metrics.json").write_text(json.dumps(doc, indent=2))
    written = [out_dir / "rx_metrics.json"]
    if any(c["dma"] for c in doc["configs"]):
        for name, fn in (("rx_dma_efficiency.png", plot_efficiency), ("rx_bursts.png", plot_bursts),
                         ("rx_latency.png", plot_latency)):
            fn(doc, out_dir / name)
            written.append(out_dir / name)
    if any(c["goodput"] for c in doc["configs"]):
        plot_goodput(doc, out_dir / "rx_goodput.png")
        written.append(out_dir / "rx_goodput.png")
    print("bench: wrote " + ", ".join(str(p) for p in written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
