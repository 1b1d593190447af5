"""`nicsim demo` (and `make demo`): the end-to-end devmem story on the RTL.

Traffic: eight ordinary TCP/UDP flows (IPv4 and IPv6) that RSS spreads over queues 0..6 (no
connection behind them: the driver answers their TCP segments with RSTs), one TCP connection
(SYN, the handshake's ACK, data, FIN, as the server's NIC receives them) that an n-tuple rule
steers to queue 7, which is bound to a dma-buf in device (GPU) memory, and three odd frames
(a 40-byte frame, which the replay pads to 60 bytes and the NIC delivers; an oversize frame and
a frame with a broken IP header, which it drops). The reference
driver runs it all (Netdev, ethtool RSS and NtupleRules, netlink bind_rx, the TCP endpoint
and a devmem socket that reads the payload through the GPU accessor and returns its tokens
with SO_DEVMEM_DONTNEED), through the same engine as `nicsim replay`. Output: a summary
table, and in --out a Markdown report with PNG plots (queue distribution, bytes per memory,
drops by reason, a waveform snapshot).
"""
from __future__ import annotations

import argparse
import json
import random
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:                      # imported when the run starts (the CLI starts fast)
    from nicsim.dma import Txn
    from nicsim.engine import ReplayResult

DEVMEM_PORT = 5201
DEVMEM_QUEUE = 7


def build_traffic(frames_per_flow: int, devmem_bytes: int, seed: int) -> tuple[list[bytes], bytes]:
    from tb.frames import Flow, build, pattern
    from tb.scenario import TcpPeer
    rng = random.Random(seed)
    devmem = TcpPeer(Flow(sport=40000, dport=DEVMEM_PORT), isn=rng.getrandbits(32))
    want = rng.randbytes(devmem_bytes)
    devmem.write(want)
    devmem.shutdown()
    # The devmem flow is a whole TCP conversation as the server's NIC receives it: SYN, the
    # handshake's ACK of the server's SYN-ACK, the data, FIN. The server's ISS is the one
    # this client saw (the replay engine gives our passive socket the ISS the client's
    # handshake ACK acknowledges, as a TCP_REPAIR socket would take it).
    server_iss = rng.getrandbits(32)
    dm_frames = [devmem.syn(), devmem.handshake_ack(server_iss)] + devmem.all_frames()
    flows = [Flow(proto="tcp" if i % 2 == 0 else "udp", ipv6=i >= 4, sport=41000 + 97 * i,
                  dport=6000 + i) for i in range(8)]
    other: list[bytes] = []
    for k in range(frames_per_flow):
        for i, f in enumerate(flows):
            n = 1 + (k * 211 + i * 57) % min(1400, f.max_payload())
            other.append(build(f, pattern(n, period=7, start=k), seq=1000 + k * 1400))
    hdr_err = bytearray(build(Flow(), b"x" * 100))
    hdr_err[14] = 0x35                      # IPv4 with IHL 5 but version 3: header error
    bad = [bytes(40), bytes(2000), bytes(hdr_err)]
    # interleave: the devmem flow, ordinary flows, and the bad frames spread through
    out: list[bytes] = []
    oi = 0
    per = max(1, len(other) // max(len(dm_frames), 1))
    todo = list(bad)
    for j, frame in enumerate(dm_frames):
        out.append(frame)
        out += other[oi:oi + per]
        oi += per
        if j % 3 == 2 and todo:
            out.append(todo.pop(0))
    out += other[oi:] + todo
    return out, want


def main(args: argparse.Namespace) -> int:
    from nicsim.cli import print_table, summarize
    from nicsim.engine import ReplayConfig, parse_steer
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 2**31)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    frames, want = build_traffic(args.frames_per_flow, args.devmem_bytes, seed)
    cfg = ReplayConfig(steer=[parse_steer(f"proto=tcp,dst-port={DEVMEM_PORT},queue={DEVMEM_QUEUE}")],
                       devmem_queues=[DEVMEM_QUEUE], rss_equal=DEVMEM_QUEUE,
                       dump_streams=str((out_dir / "streams").resolve()))
    waves = None if args.no_waves or args.backend == "model" else str((out_dir / "demo.fst").resolve())
    print(f"demo: {len(frames)} frames ({args.devmem_bytes} B devmem flow, 8 ordinary flows, 3 odd "
          f"frames) on the {args.backend} (DATA_W={args.data_width}, "
          + (f"{args.testbench} testbench, " if args.backend == "rtl" else "") + f"seed {seed}); "
          "the first RTL build takes a few minutes", flush=True)
    t0 = time.monotonic()
    try:
        if args.backend == "model":
            from nicsim.backends import run_model
            res = run_model(frames, cfg, [None] * len(frames), args.data_width)
        else:
            from nicsim.backends import run_rtl
            from tb.fast.build import run_name
            res = run_rtl(frames, cfg, [None] * len(frames), args.data_width, waves=waves,
                          name=run_name(f"nicsim-demo-w{args.data_width}", args.testbench),
                          seed=seed, testbench=args.testbench)
    except AssertionError as exc:
        print(f"demo: FAILED\n{exc}")
        return 1
    wall = time.monotonic() - t0
    got, eof = b"", False
    for s in res.streams.values():
        if s.get("file") and s["devmem_queue"]:
            got = Path(s["file"]).read_bytes()
            eof = s["eof"]
    tcp = res.stats["tcp"]
    # a correct conversation: accepted after the handshake, every byte, the FIN, and no
    # reset, challenge ACK or out-of-window segment on the way
    clean = eof and tcp["PassiveOpens"] == 1 and not any(
        tcp[k] for k in ("EstabResets", "TCPChallengeACK", "TCPOutOfWindow", "InRsts"))
    ok = got == want and clean
    recs = res.records
    deliv = [r for r in recs if r["status"] == "delivered"]
    rows = [("MAC / DMA width", f"{args.data_width} / {2 * args.data_width} bits"),
            ("frames sent / delivered", f"{len(recs)} / {len(deliv)}"),
            *summarize(res)[1:],
            ("devmem stream via GPU accessor", f"{len(got)} B, {'identical' if got == want else 'DIFFERENT'} to what was sent"),
            ("devmem TCP connection", "handshake, data, FIN: clean" if clean else
             f"NOT clean (end of stream {eof}, passive opens {tcp['PassiveOpens']}, "
             f"resets {tcp['EstabResets']}, challenge ACKs {tcp['TCPChallengeACK']}, "
             f"out of window {tcp['TCPOutOfWindow']}, RSTs in {tcp['InRsts']})"),
            ("wall time", f"{wall:.1f} s")]
    print("\ndemo: RSS + a steered devmem flow on the " + args.backend.upper(), end="")
    print_table(rows)
    (out_dir / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    report = write_report(out_dir, res, rows, waves)
    print(f"report: {report}")
    if waves:
        print(f"waveform: {waves}  (nicsim waves {waves})")
    return 0 if ok and res.stats["cpu_reads_of_device_memory"] == 0 else 1


def _cell(text: str) -> str:
    """A Markdown table cell: a `|` in the text ("frames split (header | payload)") would end
    the cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def write_report(out_dir: Path, res: ReplayResult, rows: list[tuple[str, str]], waves: str | None) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    recs = res.records
    deliv = [r for r in recs if r["status"] == "delivered"]
    nq = res.stats["num_rxq"]
    perq = Counter(r["queue"] for r in deliv)
    steered = Counter(r["queue"] for r in deliv if r["steered"])
    fig, ax = plt.subplots(figsize=(7, 3.5))
    qs = list(range(nq))
    ax.bar(qs, [perq[q] - steered[q] for q in qs], label="RSS")
    ax.bar(qs, [steered[q] for q in qs], bottom=[perq[q] - steered[q] for q in qs], label="n-tuple steered")
    ax.set_xlabel("RX queue")
    ax.set_ylabel("frames")
    ax.set_title("frames per queue")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out_dir / "queues.png", dpi=100)
    plt.close(fig)

    mem = {"headers → host": sum(r["hdr_len"] for r in deliv if r["split"]),
           "payload → host": sum(r["payload_len"] for r in deliv if r["payload_in"] == "host"),
           "payload → device": sum(r["payload_len"] for r in deliv if r["payload_in"] == "device")}
    fig, ax = plt.subplots(figsize=(7, 3))
    ax.barh(list(mem), list(mem.values()), color=["#888", "#1f77b4", "#2ca02c"])
    for i, v in enumerate(mem.values()):
        ax.text(v, i, f" {v} B", va="center")
    ax.set_xlabel("bytes")
    ax.set_title("bytes per memory")
    fig.tight_layout()
    fig.savefig(out_dir / "memory.png", dpi=100)
    plt.close(fig)

    drops = Counter(r["drop_reason"] for r in recs if r["status"] == "dropped")
    fig, ax = plt.subplots(figsize=(7, 3))
    ax.bar(list(drops) or ["none"], list(drops.values()) or [0], color="#d62728")
    ax.set_ylabel("frames")
    ax.set_title("drops by reason")
    fig.tight_layout()
    fig.savefig(out_dir / "drops.png", dpi=100)
    plt.close(fig)

    snap: Path | None = None
    bursts: list[Txn] = []
    if waves and Path(waves).is_file():
        from nicsim.waves import WaveError, frame_dma_window, render
        try:
            # zoomed on the bursts of the first devmem frame: header to host, payload to the
            # GPU, completion, as the decoded DMA rows label them
            t0, t1, bursts = frame_dma_window(waves, DEVMEM_QUEUE)
            snap = render(waves, out_dir / "waves.png", groups=["dma"], start=t0, end=t1,
                          caption=f"the DMA of the first frame whose payload went to device memory "
                                  f"(RX queue {DEVMEM_QUEUE})")
        except WaveError as e:
            print(f"demo: no waveform picture: {e}")
    md = ["# nicsim demo: RSS and a steered devmem flow", "", "| | |", "|---|---|"]
    md += [f"| {_cell(k)} | {_cell(v)} |" for k, v in rows]
    md += ["", "![frames per queue](queues.png)", "", "![bytes per memory](memory.png)", "",
           "![drops by reason](drops.png)", ""]
    if snap:
        md += [f"The DMA of the first frame whose payload went to device memory (RX queue "
               f"{DEVMEM_QUEUE}), decoded from `demo.fst` (`nicsim waves demo.fst --start "
               f"{bursts[0].time_ns - 40:.0f} --end {max(b.end_ns or b.time_ns for b in bursts) + 40:.0f}`; "
               f"every transaction: `nicsim waves demo.fst --transactions`):", "",
               "| time (ns) | burst | memory | address | bytes |", "|---|---|---|---|---|"]
        md += [f"| {b.time_ns:.0f} | {b.kind} | {b.memory} | `0x{b.addr:x}` | {b.nbytes} |" for b in bursts]
        md += ["", "![waveform](waves.png)", ""]
    md += ["Per-frame records: `records.jsonl` (the `nicsim replay --report` format).", ""]
    path = out_dir / "report.md"
    path.write_text("\n".join(md))
    return path
