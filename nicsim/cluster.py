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

from tb.cluster.workload import CLK_NS, HDR_BYTES, ClusterConfig, ClusterResult, run_cluster


def run_model(cfg: ClusterConfig, progress: Callable[[str], None] = print) -> ClusterResult:
    from tb.cluster.model_env import ModelClusterEnv
    return asyncio.run(run_cluster(cfg, ModelClusterEnv(cfg), progress))


def rtl_parameters(cfg: ClusterConfig) -> dict[str, int]:
    return {"N": cfg.nics, "DATA_W": cfg.data_width, "IFG_BYTES": cfg.ifg_bytes}


def run_rtl(cfg: ClusterConfig, name: str | None = None, seed: int | None = None,
            threads: int = 1, waves: bool = False, cxx_opt: str | None = None) -> ClusterResult:
    """The run on the RTL (tb/cluster/cluster_sim.py through tb/sim.run_rtl_test; the
    simulator's output, with the progress lines, goes to the terminal). RuntimeError with
    the simulation's message when it did not end well. `cxx_opt` (e.g. "-O0"): the model's
    C++ optimisation, for short runs where the build dominates (tests); None: the default,
    fastest simulation."""
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
                         waves=waves, seed=seed, cxx_opt=cxx_opt,
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


RAMP_LEVEL = 0.9
"""The ramp ends with the first sampling window in which the receiving ports together carry
at least this fraction of their payload share (`loss_accounting`)."""

LOSS_KEYS = ("framing", "pure_acks", "duplicates", "ramp", "steady", "tail")
"""The parts of `loss_accounting`, in the order they are printed; they add up to
1 - aggregate goodput."""


def loss_accounting(res: ClusterResult) -> dict[str, float]:
    """Where the gap between the aggregate goodput and the line rate goes: fractions of the
    receiving ports' line-rate time over the transfer (t0 to the last pair done, the
    aggregate's denominator) that add up to 1 - `aggregate_fraction`, from the run's
    counters and time series (docs/cluster.md, "Where the time goes"):

    - `framing`: the wire time of the delivered payload's frames beyond the payload itself
      (headers, preamble/SFD/FCS/IFG, the last beat's padding): aggregate x (1/share - 1);
    - `pure_acks`: the pure ACKs the receiving hosts took in (TCP MIB `TCPPureAck`; they
      leave the switch through the same ports as the data to those hosts), 60-byte frames.
      A busy port needs max(its beats, its wire bytes / DB) cycles (the switch's rule S2: a
      frame's padding in its last beat pays for the next frame's wire overhead), so an ACK
      costs what it adds to that over the port's data frames alone: one beat when the data
      frames' padding covers its preamble and gap (MSS 1448 at 512 bits), its 84-byte wire
      time when not (MSS 8948);
    - `duplicates`: retransmitted segments beyond the frames the switch lost (`RetransSegs`
      - drops - random losses, at least 0), full data frames sent twice; a retransmission that
      replaces a lost frame is counted in the goodput and its framing;
    - the rest is port time in which nothing was sent, split by the time series of the bytes
      received (pure ACKs and duplicates taken as spread like the bytes): `ramp`, from the
      start to the end of the first sampling window in which the receiving ports carried
      RAMP_LEVEL of their payload share (to the tail when none did); `tail`, from the first
      pair done to the last;
      `steady`, between (queueing, uneven sharing of a port, loss recovery).

    Also `t_ramp_ns` and `t_tail_ns` (since t0), not fractions."""
    cfg = res.config
    db = cfg["data_width"] // 8
    span_ns = res.t_end_ns - res.t0_ns
    receivers = sorted({p.dst for p in res.pairs})
    agg, share = res.aggregate_fraction, res.payload_share
    zero = dict.fromkeys(LOSS_KEYS, 0.0) | {"t_ramp_ns": 0.0, "t_tail_ns": 0.0}
    total = sum(p.bytes for p in res.pairs)
    if span_ns <= 0 or not receivers or not total:
        return zero
    cap_cycles = span_ns / CLK_NS * len(receivers)
    cap_bytes = cap_cycles * db
    ifg = cfg["ifg_bytes"]
    frame = cfg["mss"] + HDR_BYTES
    data_beats, data_wire = -(-frame // db), (frame + ifg) / db
    ack_beats, ack_wire = -(-60 // db), (60 + ifg) / db
    frame_cycles = max(data_beats, data_wire)
    lost = sum(s["drops"] + s["injected"] for s in res.switch)
    dup_segs = max(0, sum(t["RetransSegs"] for t in res.tcp) - lost)
    out = dict(zero)
    out["framing"] = agg * (1 / share - 1)
    ack_cycles = 0.0
    for r in receivers:
        frames = sum(p.bytes for p in res.pairs if p.dst == r) / cfg["mss"]     # data frames of MSS
        acks = res.tcp[r]["TCPPureAck"]
        ack_cycles += max(frames * data_beats + acks * ack_beats,
                          frames * data_wire + acks * ack_wire) - frames * frame_cycles
    out["pure_acks"] = ack_cycles / cap_cycles
    out["duplicates"] = dup_segs * frame_cycles / cap_cycles
    # bytes received by the receiving ports together, a piecewise-linear function of time
    ts: list[float] = [0.0]
    bs: list[float] = [0.0]
    for k, t in enumerate(res.samples["t_ns"]):
        if 0 < t < span_ns:
            ts.append(t)
            bs.append(min(total, sum(res.samples["rx_bytes"][r][k] for r in receivers)))
    ts.append(span_ns)
    bs.append(total)

    def bytes_at(t: float) -> float:
        for k in range(1, len(ts)):
            if t <= ts[k]:
                return bs[k - 1] + (bs[k] - bs[k - 1]) * (t - ts[k - 1]) / ((ts[k] - ts[k - 1]) or 1)
        return bs[-1]
    done = [p.t_done_ns - res.t0_ns for p in res.pairs if p.t_done_ns]
    t_tail = float(min(done)) if done else float(span_ns)
    t_ramp = t_tail
    for k in range(1, len(ts)):
        if ts[k] > t_tail:
            break
        if bs[k] - bs[k - 1] >= RAMP_LEVEL * share * (ts[k] - ts[k - 1]) / CLK_NS * db * len(receivers):
            t_ramp = ts[k]
            break
    other = out["pure_acks"] + out["duplicates"]
    for key, a, b in (("ramp", 0.0, t_ramp), ("steady", t_ramp, t_tail), ("tail", t_tail, float(span_ns))):
        got = bytes_at(b) - bytes_at(a)
        out[key] = (b - a) / span_ns - got / (share * cap_bytes) - other * got / total
    out["t_ramp_ns"], out["t_tail_ns"] = t_ramp, t_tail
    return out


def loss_line(res: ClusterResult) -> str:
    """The summary's line of `loss_accounting`, in points of line rate."""
    la = loss_accounting(res)
    pts = {k: f"{100 * la[k]:.2f}" for k in LOSS_KEYS}
    return (f"  where the rest of line rate goes ({100 * (1 - res.aggregate_fraction):.2f} points): "
            f"framing {pts['framing']}, pure ACKs {pts['pure_acks']}, duplicate retransmissions "
            f"{pts['duplicates']}, ramp {pts['ramp']} (to {la['t_ramp_ns'] / 1e3:.1f} us), "
            f"steady {pts['steady']}, tail {pts['tail']} (from the first pair done at "
            f"{la['t_tail_ns'] / 1e3:.1f} us)")


def tso_line(res: ClusterResult) -> str:
    """The summary's TSO line: its state on the hosts and the TSO sends' size."""
    states = sorted({t["tso"] for t in res.tx})
    sends = sum(t["tx-hw-gso-packets"] for t in res.tx)
    segs = sum(t["tx-hw-gso-wire-packets"] for t in res.tx)
    frames = sum(t["tx-packets"] for t in res.tx)
    out = f"  TSO {'/'.join(states)}: {sends} TSO sends"
    if sends:
        out += f" of {segs / sends:.2f} segments on average"
    return out + f"; {frames} frames sent, {segs} of them TSO segments"


def mean_srtt_us(res: ClusterResult) -> float | None:
    """The mean over the transfer's samples and the sending hosts of the hosts' mean smoothed
    RTT (`tcpi_rtt`) of their sends, in us; None without samples (older results)."""
    series = res.samples.get("srtt_ns")
    vals = [v for host in series or [] for v in host if v]
    return sum(vals) / len(vals) / 1e3 if vals else None


def summary_lines(res: ClusterResult) -> list[str]:
    """The report's text: per pair, aggregate (the `aggregate goodput X% of line rate` line),
    the loss accounting, drops and retransmissions."""
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
    lines.append(f"  pure ACKs {sum(t['TCPPureAck'] for t in res.tcp)}; receive buffer "
                 f"{cfg.get('rcvbuf_kib', 0)} KiB per host")
    if res.tx:
        lines.append(tso_line(res))
    rtt = mean_srtt_us(res)
    if rtt is not None:
        lines.append(f"  smoothed RTT of the sends, mean over the samples: {rtt:.2f} us")
    lines.append(loss_line(res))
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
    (out_dir / "result.json").write_text(json.dumps(res.to_json() | {"loss_accounting": loss_accounting(res)},
                                                    indent=1))
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
