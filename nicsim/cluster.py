"""`nicsim cluster`: the seed experiment as a system simulation. N NIC/GPU pairs on one
Ethernet switch, every GPU sending a buffer to every other over devmem TCP at once, on the
RTL (N nic_top under one Verilator model, the HDL switch: tb/cluster/) or on the golden
model (tb/cluster/model_env.py). The workload is tb/cluster/workload.py; the rules and
numbers are in docs/cluster.md.

Output: progress lines while it runs; per pair and aggregate goodput as a percentage of the
line rate (exactly one line `aggregate goodput X% of line rate`), switch drops and TCP
retransmissions; a report (`report.md`, `result.json`, plots of goodput per NIC over
simulated time and of the switch's queue depth) in --out.
"""
from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tb.cluster.workload import CLK_NS, ClusterConfig, ClusterResult, run_cluster


def run_model(cfg: ClusterConfig, progress: Callable[[str], None] = print) -> ClusterResult:
    from tb.cluster.model_env import ModelClusterEnv
    return asyncio.run(run_cluster(cfg, ModelClusterEnv(cfg), progress))


def rtl_parameters(cfg: ClusterConfig) -> dict[str, int]:
    return {"N": cfg.nics, "DATA_W": cfg.data_width, "IFG_BYTES": cfg.ifg_bytes}


def run_rtl(cfg: ClusterConfig, name: str | None = None, seed: int | None = None,
            threads: int = 1, waves: bool = False) -> ClusterResult:
    """The run on the RTL (tb/cluster/cluster_sim.py through tb/sim.run_rtl_test; the
    simulator's output, with the progress lines, goes to the terminal). RuntimeError with
    the simulation's message when it did not end well."""
    from tb.cluster.cluster_tb import run_cluster_test
    from tb.sim import BUILD_ROOT
    name = name or f"nicsim-cluster-n{cfg.nics}-w{cfg.data_width}"
    work = BUILD_ROOT / "nicsim" / name
    work.mkdir(parents=True, exist_ok=True)
    job, out = work / "job.json", work / "result.json"
    job.write_text(json.dumps({"config": cfg.to_json()}))
    out.unlink(missing_ok=True)
    err = None
    try:
        run_cluster_test("tb.cluster.cluster_sim", rtl_parameters(cfg), name, threads=threads,
                         waves=waves, seed=seed,
                         extra_env={"CLUSTER_JOB": str(job), "CLUSTER_OUT": str(out),
                                    "NICSIM_PARENT": str(os.getpid())})
    except AssertionError as e:
        err = str(e)
    r: dict[str, Any] = json.loads(out.read_text()) if out.is_file() else {}
    fatal = r.get("fatal", "")
    if fatal.startswith("TimeoutError: "):
        raise TimeoutError(fatal.removeprefix("TimeoutError: "))
    if fatal or not r:
        raise RuntimeError(fatal or err or "the simulation wrote no result")
    res = ClusterResult.from_json(r)
    if err is not None and res.ok:
        res.errors.append(err.splitlines()[0])
    return res


def pct(x: float) -> str:
    return f"{100 * x:.2f}%"


def steady_fractions(res: ClusterResult, lo: float = 0.1, hi: float = 0.9) -> dict[int, float]:
    """Goodput of each receiving NIC's port in the steady part of the transfer: the bytes it received
    between the samples at `lo` and `hi` of the transfer time, over that time at line rate
    (leaves out the slow start and the tail of the last requests). Empty when the run is too
    short for two samples in that span (the samples are 1024-cycle windows)."""
    t = res.samples["t_ns"]
    span = [k for k in range(len(t)) if lo * t[-1] <= t[k] <= hi * t[-1]] if t else []
    if len(span) < 2:
        return {}
    a, b = span[0], span[-1]
    line = (t[b] - t[a]) / CLK_NS * (res.config["data_width"] // 8)
    receivers = sorted({p.dst for p in res.pairs})
    return {r: (res.samples["rx_bytes"][r][b] - res.samples["rx_bytes"][r][a]) / line for r in receivers}


def ack_wire_share(res: ClusterResult) -> float:
    """The pure ACKs' share of the switch ports' wire time over the transfer: every pure ACK
    the hosts took in (TCP MIB `TCPPureAck`; each is a 60-byte frame once padded) times its
    wire time, over the transfer's cycles times the ports. Time the data cannot use."""
    cfg = res.config
    db = cfg["data_width"] // 8
    ack_cycles = max(-(-60 // db), (60 + cfg["ifg_bytes"]) / db)
    span = (res.t_end_ns - res.t0_ns) / CLK_NS * cfg["nics"]
    return sum(t["TCPPureAck"] for t in res.tcp) * ack_cycles / span if span > 0 else 0.0


def summary_lines(res: ClusterResult) -> list[str]:
    """The report's text: per pair, aggregate (the `aggregate goodput X% of line rate` line),
    drops and retransmissions."""
    cfg = res.config
    n = cfg["nics"]
    db = cfg["data_width"] // 8
    gbps = db * 8 / CLK_NS
    lines = [f"cluster: {n} NICs at {cfg['data_width']} bits ({gbps:.0f} Gbit/s each at "
             f"{1000 // CLK_NS} MHz), MSS {cfg['mss']}, {cfg['bytes_per_pair']} B per pair, "
             f"switch buffer {cfg['switch_buffer_kib']} KiB per port, drop rate {cfg['drop_rate']:g}, "
             f"on the {res.backend}"]
    for p in res.pairs:
        t = (p.t_done_ns - res.t0_ns) / 1e3 if p.t_done_ns else float("nan")
        lines.append(f"  pair {p.src}->{p.dst}: {p.bytes} B in {t:.1f} us, goodput "
                     f"{pct(p.goodput_fraction)} of line rate, {'byte-exact' if p.exact else 'MISMATCH'}, "
                     f"{p.requests} unpack requests ({p.entries} loadMeta entries)")
    lines.append(f"aggregate goodput {100 * res.aggregate_fraction:.2f}% of line rate")
    steady = steady_fractions(res)
    if steady:
        lines.append(f"  steady state (10-90% of the transfer time): "
                     f"{', '.join(f'NIC {r} {pct(x)}' for r, x in steady.items())}; "
                     f"mean {pct(sum(steady.values()) / len(steady))} of line rate")
    share = res.payload_share
    lines.append(f"  payload share of the MAC stream (MSS / frame on the wire) {pct(share)}; "
                 f"goodput is {pct(res.aggregate_fraction / share)} of it")
    lines.append(f"  pure ACKs {sum(t['TCPPureAck'] for t in res.tcp)}: {pct(ack_wire_share(res))} "
                 f"of the ports' wire time; receive buffer {cfg.get('rcvbuf_kib', 0)} KiB per host")
    drops = [s["drops"] for s in res.switch]
    inj = [s["injected"] for s in res.switch]
    lines.append(f"  switch drops (buffer full) per port {drops}, random drops per port {inj}")
    rt = [t["RetransSegs"] for t in res.tcp]
    to = [t["TCPTimeouts"] for t in res.tcp]
    fr = [t["TCPFastRetrans"] for t in res.tcp]
    lines.append(f"  TCP retransmissions per host {rt} (timeouts {to}, fast retransmits {fr})")
    lines.append(f"  CPU reads of device memory {res.cpu_reads}; simulated "
                 f"{(res.t_end_ns - res.t0_ns) / 1e3:.1f} us of transfer, {res.cycles} cycles; "
                 f"wall {res.wall_s:.1f} s")
    for e in res.errors:
        lines.append(f"  ERROR: {e}")
    return lines


def write_report(res: ClusterResult, out_dir: Path) -> Path:
    """result.json, goodput.png (per NIC over simulated time), queue_depth.png (switch
    egress queues), report.md."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "result.json").write_text(json.dumps(res.to_json(), indent=1))
    cfg = res.config
    db = cfg["data_width"] // 8
    s = res.samples
    t_us = [t / 1e3 for t in s["t_ns"]]
    fig, ax = plt.subplots(figsize=(8, 4))
    for i, series in enumerate(s["rx_bytes"]):
        rates = []
        for k in range(len(series)):
            prev = series[k - 1] if k else 0
            dt = (s["t_ns"][k] - (s["t_ns"][k - 1] if k else 0)) or 1
            rates.append(100 * (series[k] - prev) / (dt / CLK_NS * db))
        ax.plot(t_us, rates, label=f"NIC {i}", linewidth=1)
    ax.axhline(100 * res.payload_share, color="k", linestyle=":", linewidth=1, label="payload share")
    ax.set_xlabel("simulated time since the sends started (us)")
    ax.set_ylabel("bytes received, % of line rate")
    ax.set_title(f"goodput per NIC ({cfg['nics']} NICs, {cfg['data_width']} bits, MSS {cfg['mss']}, {res.backend})")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_dir / "goodput.png", dpi=100)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(8, 4))
    cap_kib = cfg["switch_buffer_kib"]
    for i, series in enumerate(s["depth_peak"]):
        ax.plot(t_us, [d * db / 1024 for d in series], label=f"port {i}", linewidth=1)
    ax.axhline(cap_kib, color="r", linestyle=":", linewidth=1, label="buffer")
    ax.set_xlabel("simulated time since the sends started (us)")
    ax.set_ylabel("queue (KiB), peak per window")
    ax.set_title(f"switch egress queues (window {cfg['sample_cycles']} cycles)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_dir / "queue_depth.png", dpi=100)
    plt.close(fig)
    md = ["# nicsim cluster", "", "```", *summary_lines(res), "```", "",
          "![goodput per NIC](goodput.png)", "", "![switch queue depth](queue_depth.png)", "",
          "Everything of the run: `result.json`. The setup and the rules: docs/cluster.md.", ""]
    path = out_dir / "report.md"
    path.write_text("\n".join(md))
    return path
