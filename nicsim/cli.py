"""`nicsim`: the NIC's command line. Subcommands:

  nicsim demo                  the devmem story on the RTL, with a report (docs/nicsim.md)
  nicsim replay CAPTURE.pcap   replay a capture through the driver on the RTL or the model
  nicsim waves FILE.fst        render named signal groups of a waveform to PNG or SVG, DMA bursts decoded
                               (--transactions: list them; --gtkw: a GTKWave layout)
  nicsim live                  the driver's TCP against the Linux stack in a namespace (root)
  nicsim cluster               N NIC/GPU pairs on a switch, all-to-all devmem TCP (docs/cluster.md)
  nicsim scenario FILE.py      run your own driver scenarios (tb/scenario API) on the model or the RTL
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:                      # the CLI starts without the engine's imports
    from nicsim.engine import ReplayResult


class Parser(argparse.ArgumentParser):
    """argparse with a one-line error: `nicsim replay: argument --mtu: ...` and exit status 2
    (argparse's own prints the whole usage first)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


class CliError(Exception):
    """A bad value found before the run starts: one line, exit status 2."""


def _queues(text: str) -> list[int]:
    """`7`, `6,7`, `4-7` (ranges inclusive, low to high)."""
    out: list[int] = []
    parts = [p.strip() for p in text.split(",")]
    if not any(parts):
        raise argparse.ArgumentTypeError(f"{text!r} names no queue (give e.g. 7, 6,7 or 4-7)")
    for part in parts:
        if not part:
            continue
        lo, dash, hi = part.partition("-")
        try:
            a = int(lo)
            b = int(hi) if dash else a
        except ValueError:
            raise argparse.ArgumentTypeError(f"{part!r} is not a queue number or a range like 4-7") from None
        if b < a:
            raise argparse.ArgumentTypeError(f"{part!r} is an empty range (low to high: {b}-{a})")
        out += range(a, b + 1)
    return out


def _number(cast: Callable[[str], float], low: float, *, above: bool = False, why: str = "",
            noun: str = "a number") -> Callable[[str], Any]:
    """An argparse type: `cast(text)` (ints also as 0x..), at least `low` (above it with
    `above`); the messages name the value, never this function."""
    def parse(text: str) -> Any:
        try:
            v = int(text, 0) if cast is int else cast(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {noun}") from None
        if v < low or (above and v == low):
            raise argparse.ArgumentTypeError(
                f"{text}: {why or (f'must be above {low:g}' if above else f'must be at least {low:g}')}")
        return v
    parse.__name__ = noun.split()[-1]
    return parse


def _rss_key(text: str) -> bytes:
    try:
        key = bytes.fromhex(text.replace(":", "").replace(" ", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not hex") from None
    if len(key) != 40:
        raise argparse.ArgumentTypeError(f"the RSS key is 40 bytes, got {len(key)}")
    return key


def _steer(text: str) -> dict:
    from nicsim.engine import parse_steer
    try:
        return parse_steer(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _rss_context(text: str) -> dict:
    from nicsim.engine import parse_rss_context
    try:
        return parse_rss_context(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _tap(text: str) -> str:
    import re
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,15}", text):
        raise argparse.ArgumentTypeError(f"{text!r}: an interface name is 1..15 letters, digits, '_', '.' or '-'")
    return text


def writable_file(path: str, what: str) -> Path:
    """`path` can be written (its folder is made): else CliError, before any work is done.
    The check leaves nothing behind."""
    p = Path(path)
    if p.is_dir():
        raise CliError(f"{what} {path}: is a directory")
    existed = p.exists()
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        with open(p, "a"):
            pass
    except OSError as e:
        raise CliError(f"{what} {path}: cannot write it ({e.strerror})") from None
    if not existed:
        p.unlink()
    return p


def writable_dir(path: str, what: str) -> Path:
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise CliError(f"{what} {path}: exists and is not a directory")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CliError(f"{what} {path}: cannot create it ({e.strerror})") from None
    if not os.access(p, os.W_OK | os.X_OK):
        raise CliError(f"{what} {path}: not writable")
    return p


def _say(msg: str) -> None:
    print(msg, flush=True)


# ----------------------------------------------------------------------------------- replay
def cmd_replay(args: argparse.Namespace) -> int:
    from nicsim.engine import ReplayConfig
    from nicsim.pcap import PcapError, read_pcap
    try:
        if args.backend == "model" and args.waves:
            raise CliError("--waves needs --backend rtl")
        for path, what in ((args.report, "--report"), (args.waves, "--waves")):
            if path:
                writable_file(path, what)
        if args.dump_streams:
            writable_dir(args.dump_streams, "--dump-streams")
        cap = read_pcap(args.capture, strict=args.strict)
    except (CliError, PcapError) as e:
        print(f"nicsim replay: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"nicsim replay: {args.capture}: {e.strerror}", file=sys.stderr)
        return 2
    for p in cap.problems:
        print(f"nicsim replay: warning: {p}", file=sys.stderr)
    frames = cap.frames
    problems = [r.problem for r in cap.records]
    _say(f"replay: {args.capture}: {len(frames)} frames "
         f"({sum(f is None for f in frames)} not replayable) on the {args.backend}"
         f" (DATA_W={args.data_width}" + (f", {args.testbench} testbench)" if args.backend == "rtl" else ")"))
    cfg = ReplayConfig(rss_key=args.rss_key, rss_equal=args.rss_equal, steer=args.steer or [],
                       rss_contexts=args.rss_context or [],
                       devmem_queues=args.devmem_queues or [], zcrx_queues=args.zcrx_queues or [],
                       mtu=args.mtu, pad=not args.no_pad,
                       dump_streams=str(Path(args.dump_streams).resolve()) if args.dump_streams else None,
                       rx_mpb=args.rx_mpb)
    from nicsim.engine import validate
    try:
        validate(cfg)
    except ValueError as e:
        print(f"nicsim replay: {e}", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    try:
        if args.backend == "model":
            from nicsim.backends import run_model
            res = run_model(frames, cfg, problems, args.data_width, _say)
        else:
            from nicsim.backends import run_rtl
            res = run_rtl(frames, cfg, problems, args.data_width,
                          waves=str(Path(args.waves).resolve()) if args.waves else None,
                          seed=args.seed, testbench=args.testbench)
    except (ValueError, AssertionError) as e:
        print(f"nicsim replay: {e}", file=sys.stderr)
        return 1
    wall = time.monotonic() - t0
    if args.report:
        Path(args.report).parent.mkdir(parents=True, exist_ok=True)
        with open(args.report, "w") as fh:
            for r in res.records:
                fh.write(json.dumps(r) + "\n")
    print_summary(res, wall)
    if args.report:
        _say(f"report: {args.report} ({len(res.records)} lines)")
    for name, s in res.streams.items():
        if "file" in s:
            via = (f"{s['zcrx_bytes']} via io_uring zcrx" if s.get("zcrx_queue")
                   else f"{s['devmem_bytes']} via device memory")
            _say(f"stream: {s['file']} ({s['bytes']} bytes, {via})")
    if args.waves:
        _say(f"waves: {args.waves} (render with: nicsim waves {args.waves} -o waves.png)")
    return 0


def summarize(res: ReplayResult) -> list[tuple[str, str]]:
    from collections import Counter
    recs = res.records
    deliv = [r for r in recs if r["status"] == "delivered"]
    drops = Counter(r["drop_reason"] for r in recs if r["status"] == "dropped")
    perq = Counter(r["queue"] for r in deliv)
    dev = sum(r["payload_len"] for r in deliv if r["payload_in"] == "device")
    host_pay = sum(r["payload_len"] for r in deliv if r["payload_in"] == "host")
    zc = sum(r["payload_len"] for r in deliv if r["payload_in"] == "zcrx")
    hdr = sum(r["hdr_len"] for r in deliv if r["split"])
    rows = [
        ("frames in / delivered / dropped", f"{len(recs)} / {len(deliv)} / {len(recs) - len(deliv)}"),
        ("frames per queue", ", ".join(f"q{q}:{n}" for q, n in sorted(perq.items())) or "-"),
        ("frames steered by n-tuple rules", str(sum(r["steered"] for r in deliv))),
        ("frames split (header | payload)", str(sum(r["split"] for r in deliv))),
        ("header bytes to host memory", str(hdr)),
        ("payload bytes to device memory", str(dev)),
        ("payload bytes to host memory", str(host_pay)),
        *([("payload bytes to io_uring zcrx areas", str(zc)),
           ("zcrx kernel copies (bytes)", str(sum(z["copy_fallback_bytes"]
                                                   for z in res.stats["zcrx"].values())))]
          if res.stats.get("zcrx") else []),
        ("drops by reason", ", ".join(f"{k}:{v}" for k, v in sorted(drops.items())) or "none"),
        ("CPU reads of device memory", str(res.stats["cpu_reads_of_device_memory"])),
        ("devmem tokens returned (dontneed)",
         str(sum(s["tokens_returned"] for s in res.streams.values() if not s.get("zcrx_queue")))),
        *([("zcrx buffers returned (refill ring)",
            str(sum(s["tokens_returned"] for s in res.streams.values() if s.get("zcrx_queue"))))]
          if res.stats.get("zcrx") else []),
    ]
    if res.stats.get("protocol_checker"):           # RTL runs: the checker bound into nic_top
        rows.append(checker_row(res.stats["protocol_checker"]))
    return rows


def checker_row(summary: dict) -> tuple[str, str]:
    """The table row of the AXI protocol checker's end-of-run summary (RTL backend)."""
    from tb.sim import checker_summary_text
    return ("AXI protocol checker", checker_summary_text(summary))


def print_table(rows: list[tuple[str, str]]) -> None:
    """Two aligned columns, indented, between blank lines."""
    w = max(len(k) for k, _ in rows)
    print()
    for k, v in rows:
        print(f"  {k:<{w}}  {v}")
    print(flush=True)


def print_summary(res: ReplayResult, wall: float) -> None:
    print_table(summarize(res) + [("wall time", f"{wall:.1f} s")])


# ------------------------------------------------------------------------------------ waves
def cmd_waves(args: argparse.Namespace) -> int:
    from nicsim.waves import WaveError, render, transactions, write_gtkw
    try:
        if args.output:
            ok = (".csv", ".txt") if args.transactions else (".png", ".svg")
            if Path(args.output).suffix.lower() not in ok:
                raise CliError(f"-o {args.output}: write {' or '.join(ok)}"
                               + (" with --transactions" if args.transactions else " (a picture)"))
            writable_file(args.output, "-o")
        if args.gtkw:
            writable_file(args.gtkw, "--gtkw")
        if args.transactions:
            text, out = transactions(args.file, args.output, start=args.start, end=args.end)
            if out is None:
                sys.stdout.write(text)
                return 0
        elif args.gtkw:
            out = write_gtkw(args.file, args.gtkw, groups=args.group, extra=args.signal)
        else:
            out = render(args.file, args.output, groups=args.group, start=args.start, end=args.end,
                         frame=args.frame, window=args.window, extra=args.signal)
    except (WaveError, CliError, OSError) as e:
        print(f"nicsim waves: {e}", file=sys.stderr)
        return 2
    _say(f"waves: wrote {out}")
    return 0


# ------------------------------------------------------------------------------------- live
def cmd_live(args: argparse.Namespace) -> int:
    from nicsim.live_net import probe
    if not 68 <= args.mtu <= 9000:
        print(f"nicsim live: --mtu {args.mtu}: between 68 and 9000", file=sys.stderr)
        return 2
    if not 0 <= args.drop_rate < 1:
        print("nicsim live: --drop-rate is a probability in [0, 1)", file=sys.stderr)
        return 2
    if args.backend == "model" and args.data_width is not None:
        print("nicsim live: --data-width needs --backend rtl", file=sys.stderr)
        return 2
    zq = args.zcrx_queues or []
    if 0 in zq:
        print("nicsim live: --zcrx-queues: queue 0 takes the ordinary traffic (ARP, ND); "
              "give queues from 1", file=sys.stderr)
        return 2
    if len(set(zq)) < len(zq) or (zq and max(zq) > 7):
        print(f"nicsim live: --zcrx-queues {zq}: distinct queues 1..7", file=sys.stderr)
        return 2
    reason = probe()
    if reason is not None:
        print(f"nicsim live: cannot create the namespace: {reason}", file=sys.stderr)
        return 2
    from nicsim.live import RTL_RTO_MIN_US, LiveConfig, NoTsoError, run_model, run_rtl
    timeout = args.timeout if args.timeout is not None else (300.0 if args.backend == "model" else 3600.0)
    cfg = LiveConfig(nbytes=args.bytes, drop_rate=args.drop_rate, seed=args.seed, mtu=args.mtu,
                     tap_name=args.tap, timeout_s=timeout,
                     rx=args.only in (None, "rx"), tx=args.only in (None, "tx"), zcrx_queues=zq,
                     rto_min_us=args.rto_min_us if args.backend == "rtl" else None, tso=args.tso)
    width = args.data_width or 64
    _say(f"live: {cfg.nbytes} B each way, drop rate {cfg.drop_rate:g}, on the {args.backend}"
         + (f" (nic_top DATA_W={width}, {args.testbench} testbench, driver rto_min {cfg.rto_min_us or RTL_RTO_MIN_US:g} us "
            f"simulated)" if args.backend == "rtl" else ""))
    t0 = time.monotonic()
    try:
        if args.backend == "model":
            res = run_model(cfg, _say)
        else:
            res = run_rtl(cfg, width, seed=args.sim_seed, testbench=args.testbench)
    except NoTsoError as e:
        print(f"nicsim live: {e}", file=sys.stderr)
        return 2
    except (RuntimeError, TimeoutError, OSError) as e:
        print(f"nicsim live: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("nicsim live: interrupted", file=sys.stderr)
        return 130
    wall = time.monotonic() - t0

    def rate(n: int, wall_s: float, sim_ns: int | None) -> str:
        out = f"{n * 8 / max(wall_s, 1e-9) / 1e6:.2f} Mbit/s wall ({wall_s:.1f} s)"
        if sim_ns is not None:
            out += f", {n * 8 / max(sim_ns, 1):.2f} Gbit/s simulated ({sim_ns / 1e3:.1f} us)"
        return out

    lx = res.linux
    rows = [
        ("zcrx RX (Linux -> driver)" if zq else "devmem RX (Linux -> driver)", f"{res.rx_bytes} B, {'byte-exact' if res.rx_ok else 'FAILED'}, "
         f"{rate(res.rx_bytes, res.rx_wall_s, res.rx_sim_ns)}" if cfg.rx else "-"),
        ("devmem TX (driver -> Linux)", f"{res.tx_bytes} B, {'byte-exact' if res.tx_ok else 'FAILED'}, "
         f"{rate(res.tx_bytes, res.tx_wall_s, res.tx_sim_ns)}" if cfg.tx else "-"),
        ("simulated time", "none (the model has no time; TCP timers on the wall clock)"
         if res.sim_ns is None else f"{res.sim_ns / 1e6:.3f} ms, {res.cycles} cycles at 250 MHz"),
        ("frames to NIC / dropped", f"{res.frames_to_nic} / {res.dropped_to_nic}"),
        ("frames to Linux / dropped", f"{res.frames_to_linux} / {res.dropped_to_linux}"),
        ("driver retransmissions", f"{res.tcp.get('RetransSegs', 0)} (timeouts "
         f"{res.tcp.get('TCPTimeouts', 0)}, fast {res.tcp.get('TCPFastRetrans', 0)})"),
        ("driver's sender SRTT / largest RTO", f"{res.tx_srtt_ns / 1e3:.1f} / {res.tx_rto_max_ns / 1e3:.1f} us"
         + (" simulated" if res.sim_ns is not None else " wall") if cfg.tx else "-"),
        ("Linux retransmissions", f"{lx.get('TcpRetransSegs', '?')} (timeouts "
         f"{lx.get('TcpExtTCPTimeouts', '?')}, fast {lx.get('TcpExtTCPFastRetrans', '?')})"),
        ("TSO (driver TX)", tso_row(res) if cfg.tx else "-"),
        ("Linux TCP checksum errors", str(lx.get("TcpInCsumErrors", "?"))),
        ("ARP / ND answered", f"{res.neigh.get('arp_requests_answered', 0)} / {res.neigh.get('ns_answered', 0)}"),
        ("CPU reads of device memory", str(res.cpu_reads)),
        *([checker_row(res.protocol_checker)] if res.protocol_checker else []),
        ("wall time", f"{wall:.1f} s" + (" (with the Verilator build, if one was needed)"
                                         if args.backend == "rtl" else "")),
    ]
    print_table(rows)
    for err in res.errors:
        print(f"nicsim live: {err}", file=sys.stderr)
    return 0 if res.ok else 1


def tso_row(res: Any) -> str:
    """The summary's TSO line: state, what the NIC cut (its completions, and its counters)."""
    if res.tso == "absent":
        return "absent (the NIC has no TSO: TX_OFFLOADS.tso reads 0)"
    out = f"{res.tso}: {res.tso_sends} TSO sends cut by the NIC into {res.tso_segs} segments"
    if res.tso_sends:
        out += f" ({res.tso_segs / res.tso_sends:.1f} per send)"
    if res.nic_tso_sends is not None:
        where = "model counters" if res.nic_tso_counters == "model" else "registers"
        out += f"; TX_TSO_SENDS / TX_TSO_SEGS {res.nic_tso_sends} / {res.nic_tso_segs} ({where})"
    if res.sw_gso:
        out += f"; {res.sw_gso} GSO skbs cut in software"
    return out


def cmd_scenario(args: argparse.Namespace) -> int:
    from tb.scenario.runner import ScenarioFileError, load, run_model, run_rtl
    if args.backend == "model" and (args.waves or args.testbench != "fast"):
        print("nicsim scenario: --waves and --testbench need --backend rtl", file=sys.stderr)
        return 2
    try:
        names = [n for n, _ in load(args.file)]
    except ScenarioFileError as e:
        print(f"nicsim scenario: {e}", file=sys.stderr)
        return 2
    unknown = [n for n in args.only or [] if n not in names]
    if unknown:
        print(f"nicsim scenario: {args.file} has no scenario {', '.join(unknown)} (it has: "
              f"{', '.join(names)})", file=sys.stderr)
        return 2
    _say(f"scenario: {args.file}: {len(names)} scenario(s) on the {args.backend} (DATA_W={args.data_width}"
         + (f", {args.testbench} testbench" if args.backend == "rtl" else "") + ")")
    t0 = time.monotonic()
    if args.backend == "model":
        res = run_model(args.file, args.data_width, seed=args.seed or 0, only=args.only)
    else:
        if args.only:
            print("nicsim scenario: --only needs --backend model (on the RTL every scenario of the "
                  "file runs)", file=sys.stderr)
            return 2
        try:
            res = run_rtl(args.file, args.data_width, seed=args.seed, testbench=args.testbench,
                          waves=args.waves, name=f"nicsim-scenario-{Path(args.file).stem}")
        except AssertionError as e:            # the build or the simulator failed
            print(f"nicsim scenario: {str(e).splitlines()[0]}", file=sys.stderr)
            return 1
    for o in res:
        _say(f"  {'PASS' if o.ok else 'FAIL'}  {o.name}  ({o.seconds:.1f} s)" + ("" if o.ok else f"\n        {o.error}"))
    bad = sum(not o.ok for o in res)
    _say(f"scenario: {len(res) - bad} passed, {bad} failed in {time.monotonic() - t0:.1f} s")
    return 1 if bad else 0


# ---------------------------------------------------------------------------------- cluster
def _size(text: str) -> int:
    """A byte count: 65536, 64K, 64KiB, 4M, 4MiB."""
    t = text.strip()
    units = {"": 1, "K": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MIB": 1 << 20}
    num = t.rstrip("KkMmIiBb")
    unit = t[len(num):].upper()
    if unit not in units or not num.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a byte count (e.g. 65536, 64K, 4MiB)")
    return int(num) * units[unit]


def cmd_cluster(args: argparse.Namespace) -> int:
    from nicsim.cluster import run_model, run_rtl, summary_lines, write_report
    from tb.cluster.workload import ClusterConfig
    n = args.nics
    pairs = [(s, 0) for s in range(1, n)] if args.incast else None
    cfg = ClusterConfig(nics=n, bytes_per_pair=args.bytes_per_pair, data_width=args.data_width,
                        mss=args.mss, switch_buffer_kib=args.switch_buffer, drop_rate=args.drop_rate,
                        pairs=pairs, seed=args.seed, rto_min_us=args.rto_min_us,
                        timeout_ms=args.timeout_ms, stall_ms=args.stall_ms, napi_interval_ns=args.napi_interval_ns,
                        rcvbuf_kib=args.rcvbuf, send_order=args.send_order,
                        xps_rxqs=args.xps == "rxqs")
    try:
        cfg.check()
        if args.backend == "model" and args.threads != 1:
            raise ValueError("--threads needs --backend rtl")
        out = Path(args.out)
        if out.exists() and not out.is_dir():
            print(f"nicsim cluster: [ENOTDIR] --out {args.out}: exists and is not a directory",
                  file=sys.stderr)
            return 2
    except ValueError as e:
        print(f"nicsim cluster: [EINVAL] {e}", file=sys.stderr)
        return 2
    pattern = f"incast {n - 1} -> 1" if args.incast else "all-to-all"
    _say(f"cluster: {n} NICs, {pattern}, {cfg.bytes_per_pair} B per pair, MSS {cfg.mss}, "
         f"{cfg.data_width} bits, switch buffer {cfg.switch_buffer_kib} KiB, drop rate {cfg.drop_rate:g}, "
         f"on the {args.backend}" + (f" ({args.threads} Verilator threads; the first build takes a few "
                                     "minutes)" if args.backend == "rtl" else ""))
    try:
        if args.backend == "model":
            res = run_model(cfg, _say)
        else:
            res = run_rtl(cfg, seed=args.sim_seed, threads=args.threads)
    except TimeoutError as e:
        print(f"nicsim cluster: [ETIMEDOUT] {str(e).splitlines()[0]}", file=sys.stderr)
        return 1
    except RuntimeError as e:
        print(f"nicsim cluster: {str(e).splitlines()[0]}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("nicsim cluster: interrupted", file=sys.stderr)
        return 130
    print()
    for line in summary_lines(res):
        print(line)
    report = write_report(res, Path(args.out))
    _say(f"report: {report} (plots goodput.png, queue_depth.png; result.json)")
    return 0 if res.ok else 1


def cmd_demo(args: argparse.Namespace) -> int:
    from nicsim.demo import main as demo_main
    try:
        writable_dir(args.out, "--out")
    except CliError as e:
        print(f"nicsim demo: {e}", file=sys.stderr)
        return 2
    return demo_main(args)


def _add_testbench(p: argparse.ArgumentParser) -> None:
    """--testbench, as tb.fast.build.TESTBENCHES (not imported here: the CLI starts without the
    simulator packages)."""
    p.add_argument("--testbench", choices=["fast", "per-beat"], default="fast",
                   help="rtl: the testbench around nic_top: fast (tb/fast/: HDL/C bus partners, "
                        "Python per frame; default) or per-beat (cocotbext-axi on every port, "
                        "~20x slower)")


def build_parser() -> argparse.ArgumentParser:
    ap = Parser(prog="nicsim", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", metavar="COMMAND", required=True)

    d = sub.add_parser("demo", help="the end-to-end devmem story on the RTL, with a report")
    d.add_argument("--data-width", type=int, default=64, choices=[64, 128, 256, 512])
    d.add_argument("--frames-per-flow", type=_number(int, 0), default=16,
                   help="frames of each ordinary flow (default 16)")
    d.add_argument("--devmem-bytes", type=_number(int, 0), default=32 << 10,
                   help="bytes of the devmem flow, any size (default 32 KiB)")
    d.add_argument("--out", default="build/demo", help="report folder (default build/demo)")
    d.add_argument("--no-waves", action="store_true", help="no waveform, no waveform snapshot")
    d.add_argument("--backend", choices=["rtl", "model"], default="rtl")
    _add_testbench(d)
    d.add_argument("--seed", type=int, default=None)
    d.set_defaults(func=cmd_demo)

    r = sub.add_parser("replay", help="replay a pcap capture through the NIC and the driver")
    r.add_argument("capture", help="classic pcap file, Ethernet link type")
    r.add_argument("--backend", choices=["rtl", "model"], default="rtl")
    _add_testbench(r)
    r.add_argument("--data-width", type=int, default=64, choices=[64, 128, 256, 512],
                   help="MAC width in bits (DMA is twice that); default 64")
    r.add_argument("--rss-key", type=_rss_key, default=None, help="40-byte Toeplitz key in hex")
    r.add_argument("--rss-equal", type=_number(int, 1), default=None,
                   help="spread RSS over queues 0..N-1 (default: the queues below the first devmem or zcrx queue, else all)")
    r.add_argument("--steer", type=_steer, action="append", metavar="RULE",
                   help="n-tuple rule, e.g. proto=tcp,dst-port=5201,queue=7 or "
                        "flow-type=tcp4,dst-port=5201,context=1 (repeatable; with context=K, "
                        "queue=O is the ring offset, default 0)")
    r.add_argument("--rss-context", type=_rss_context, action="append", metavar="start=S,equal=N",
                   help="an RSS context spreading over queues S..S+N-1 (ethtool -X context new "
                        "start S equal N); repeatable, numbered 1, 2, ... in order")
    r.add_argument("--devmem-queues", type=_queues, default=None, metavar="LIST",
                   help="bind a dma-buf (device memory) to these queues, e.g. 7 or 6,7 or 4-7")
    r.add_argument("--zcrx-queues", type=_queues, default=None, metavar="LIST",
                   help="register an io_uring zero-copy receive ifq (payload into a host-memory area) "
                        "on each of these queues, same syntax; not with --devmem-queues on a queue")
    r.add_argument("--mtu", type=_number(int, 68), default=1500, help="MTU (frame limit = MTU + 22); default 1500")
    r.add_argument("--no-pad", action="store_true", help="do not pad frames under 60 bytes as a MAC would")
    r.add_argument("--rx-mpb", action="store_true",
                   help="multi-packet payload buffers and completion batches on (ethtool --set-priv-flags "
                        "rx-mpb on, -C rx-frames max)")
    r.add_argument("--report", metavar="FILE.jsonl", help="one JSON object per input frame")
    r.add_argument("--dump-streams", metavar="DIR",
                   help="TCP streams received on devmem or zcrx queues, one .bin each")
    r.add_argument("--waves", metavar="FILE.fst", help="record an FST waveform (rtl only)")
    r.add_argument("--seed", type=int, default=None)
    r.add_argument("--strict", action="store_true",
                   help="refuse a corrupt or truncated capture (exit 2) instead of replaying the records before it")
    r.set_defaults(func=cmd_replay)

    lv = sub.add_parser("live", help="the driver's TCP against the Linux TCP stack (needs root)")
    lv.add_argument("--backend", choices=["model", "rtl"], default="model")
    _add_testbench(lv)
    lv.add_argument("--bytes", type=_number(int, 1, why="send at least 1"), default=1 << 20, help="bytes each way (default 1 MiB)")
    lv.add_argument("--drop-rate", type=float, default=0.0,
                    help="probability of dropping a frame in the bridge, both directions")
    lv.add_argument("--seed", type=int, default=1)
    lv.add_argument("--mtu", type=int, default=1500)
    lv.add_argument("--tap", type=_tap, default="nicsim0", help="TAP device name (inside the private namespace)")
    lv.add_argument("--data-width", type=int, default=None, choices=[64, 512],
                    help="rtl: MAC width in bits (DMA twice that); default 64")
    lv.add_argument("--timeout", type=_number(float, 0, above=True), default=None,
                    help="wall seconds before giving up (default 300 on the model, 3600 on the RTL)")
    lv.add_argument("--only", choices=["rx", "tx"], default=None, help="one direction only")
    lv.add_argument("--zcrx-queues", type=_queues, default=None, metavar="LIST",
                    help="RX through io_uring zero-copy receive (an ifq on each queue, from 1; the flow "
                         "steered to the first) instead of a dma-buf")
    lv.add_argument("--rto-min-us", type=_number(float, 0, above=True), default=None,
                    help="rtl: the driver's rto_min in simulated microseconds (default 200; initial RTO 5x)")
    lv.add_argument("--tso", action=argparse.BooleanOptionalAction, default=None,
                    help="TCP segmentation offload (ethtool -K eth0 tso on|off); default: on when the "
                         "NIC has it (the model and the RTL do: TX_OFFLOADS.tso); --tso on a NIC without it "
                         "is an error (exit 2)")
    lv.add_argument("--sim-seed", type=int, default=None, help="rtl: cocotb random seed")
    lv.set_defaults(func=cmd_live)

    sc = sub.add_parser("scenario", help="run the driver scenarios of a Python file on the model or the RTL")
    sc.add_argument("file", help="a .py file with `async def scenario...(env)` functions (docs/scenarios.md)")
    sc.add_argument("--backend", choices=["model", "rtl"], default="model")
    _add_testbench(sc)
    sc.add_argument("--data-width", type=int, default=64, choices=[64, 128, 256, 512],
                    help="MAC width in bits (DMA is twice that); default 64")
    sc.add_argument("--seed", type=int, default=None, help="the environments' seed (rtl: cocotb's)")
    sc.add_argument("--waves", action="store_true", help="rtl: record build/waves/nicsim-scenario-<file>.fst")
    sc.add_argument("--only", action="append", metavar="NAME", help="model: run only this scenario (repeatable)")
    sc.set_defaults(func=cmd_scenario)

    c = sub.add_parser("cluster", help="N NIC/GPU pairs on a switch, all-to-all devmem TCP (docs/cluster.md)")
    c.add_argument("--nics", type=int, default=4, help="NICs (each with its host and GPU), 2..16; default 4")
    c.add_argument("--bytes-per-pair", type=_size, default=256 << 10, metavar="B",
                   help="bytes each GPU sends to each other GPU (65536, 64K, 4MiB); default 256K")
    c.add_argument("--data-width", type=int, default=64, choices=[64, 512],
                   help="MAC width in bits (DMA twice that); default 64")
    c.add_argument("--backend", choices=["rtl", "model"], default="rtl",
                   help="rtl: N nic_top and the HDL switch under one Verilator model (default); "
                        "model: the golden NIC model and the switch model")
    c.add_argument("--switch-buffer", type=int, default=1024, metavar="KIB",
                   help="buffer per switch port in KiB, at most 1024 (default)")
    c.add_argument("--drop-rate", type=float, default=0.0, metavar="P",
                   help="probability that the switch loses a frame at its ingress (seeded)")
    c.add_argument("--mss", type=int, default=1448, help="TCP MSS (MTU = MSS + 40); default 1448")
    c.add_argument("--incast", action="store_true",
                   help="NICs 1..N-1 all send to NIC 0 only (instead of all-to-all)")
    c.add_argument("--seed", type=int, default=1, help="data and random drops")
    c.add_argument("--rto-min-us", type=float, default=200.0,
                   help="the driver's rto_min in simulated microseconds (default 200; initial RTO 5x)")
    c.add_argument("--timeout-ms", type=float, default=200.0,
                   help="simulated milliseconds after which the run gives up (default 200)")
    c.add_argument("--stall-ms", type=float, default=None,
                   help="simulated milliseconds without progress after which the run gives up, "
                        "naming the stuck connections (default 50 x rto_min: 10)")
    c.add_argument("--napi-interval-ns", type=int, default=1000, metavar="NS",
                   help="a host polls its NIC at most once per NS simulated ns, one ACK per socket "
                        "per poll (default 1000)")
    c.add_argument("--rcvbuf", type=int, default=256, metavar="KIB",
                   help="receive buffer per host in KiB, shared evenly by its incoming "
                        "connections (SO_RCVBUF), 4..6144 (default 256)")
    c.add_argument("--send-order", default="nccl", metavar="nccl|index",
                   help="order of each host's first sends: nccl (NCCL's p2p schedule, each round "
                        "a permutation; default) or index (every host starts with the lowest peer)")
    c.add_argument("--xps", choices=["rxqs", "hash"], default="rxqs",
                   help="TX queue of a socket: rxqs (XPS by receive queue: the ACKs of the devmem "
                        "receives on their own TX queue; default) or hash (the flow hash)")
    c.add_argument("--threads", type=int, default=1, choices=[1, 2],
                   help="rtl: Verilator threads of the model (docs/cluster.md: measured); default 1")
    c.add_argument("--sim-seed", type=int, default=None, help="rtl: cocotb random seed")
    c.add_argument("--out", default="build/cluster", help="report folder (default build/cluster)")
    c.set_defaults(func=cmd_cluster)

    w = sub.add_parser("waves", help="render signal groups of an FST waveform to PNG or SVG")
    w.add_argument("file", help="FST file (from --waves, make waves or WAVES=1)")
    w.add_argument("-o", "--output", default=None, help="PNG or SVG (default: FILE.png)")
    w.add_argument("--group", action="append", default=None,
                   help="signal group (repeatable): rx, dma, csr, tx, queues, all (default rx,dma,csr)")
    w.add_argument("--signal", action="append", default=None, help="extra signal by (partial) name")
    w.add_argument("--start", type=_number(float, 0, why="a time in ns, from 0", noun="a time in ns"), default=None, help="window start, ns")
    w.add_argument("--end", type=_number(float, 0, why="a time in ns, from 0", noun="a time in ns"), default=None, help="window end, ns")
    w.add_argument("--frame", type=_number(int, 0, why="frames count from 0", noun="a frame number"), default=None,
                   help="centre on the Nth frame on the RX stream (0-based, counted over the whole file)")
    w.add_argument("--window", type=_number(float, 0, above=True), default=None, help="window width in ns around --frame (default: from just before the frame to 600 ns after its last beat)")
    w.add_argument("--gtkw", metavar="FILE.gtkw", default=None,
                   help="write a GTKWave save file of the groups (default: all) instead of a picture")
    w.add_argument("--transactions", action="store_true",
                   help="list every AXI transaction of the DMA master (time, kind, queue, memory, address, "
                        "bytes) instead of a picture: text on stdout, or to -o FILE (.csv: CSV)")
    w.set_defaults(func=cmd_waves)
    for subparser in sub.choices.values():   # main() names the subcommand in an unknown-argument error
        subparser.set_defaults(parser=subparser)
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    args, extra = ap.parse_known_args(argv)
    if extra:                       # said by the subcommand's Parser: "nicsim cluster: unrecognized ..."
        args.parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return int(args.func(args) or 0)
