"""TX line rate with TCP segmentation offload: `python -m bench.tx_tso` (part of `make bench`).

Trains of TSO sends (docs/tx.md, "TCP segmentation offload") on TX queue 0: TCP/IPv4, a
54-byte header, payload in device memory in page-aligned 4 KiB descriptors, each send as
large as Linux builds one for a device with the default `gso_max_size` (`tcp_xmit_size_goal`:
(65536 - 1 - MAX_TCP_HEADER 320) // MSS segments: 45 x 1448 = 65160 bytes at MSS 1448, 7 x
8948 = 62636 at MSS 8948). Layouts: `hdrseg` (the header a segment of its own in host
memory, as the driver posts a GSO skb) and `inline` (the header inline in the ring).

Per MSS and layout: segments and ring entries (descriptors, context entry, inline entries)
per send and per segment, host-memory bytes read per segment (ring entries and the header,
which is read once per send) and device bytes per segment, reads of the header per send.

Backends:
- `model` (default; what `make bench` runs until the RTL has TSO): the golden model
  (`models.tx.TxEngine(tso=True)`), its DMA reads counted. The model has no clock: the
  frames-per-cycle figure is a bound from the bus traffic, not a measurement: the fewer of
  the MAC's beats (one 64-byte beat per cycle at 512 bits) and the read channel's beats
  (one 128-byte R beat per cycle at 1024 bits) per segment, with the reads the RTL plans
  (`models.tso.tso_read_plan`, a read never crossing a descriptor or a segment) and the ring
  read in whole beats. Every segment is checked against `models.tso.tso_segments`.
- `rtl`: nic_top under Verilator (bench/tx_tso_sim.py), cycles counted from the first to
  the last beat on m_axis_tx, AXI reads counted by region; frames checked against the golden
  model. A NIC without TSO (`TX_OFFLOADS.tso` reads 0, the RTL before branch tso21) is
  reported as such (exit 1, nothing written).

Writes build/bench/tx_tso.json and build/bench/tx_tso.png.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.common import parse_configs, pyplot, rtl_sources, write_report
from bench.tx_linerate import CLK_HZ, ethernet_frames_per_cycle

MSS = [1448, 8948]
LAYOUTS = ["hdrseg", "inline"]
CONFIGS = [(512, 1024)]
HDR = 54
PAGE = 4096
GSO_MAX_SIZE = 65536
MAX_TCP_HEADER = 320
SENDS = 8
L3_OFFSET = 14
L4_OFFSET = 34


def send_payload(mss: int) -> int:
    """Payload bytes of one send: Linux's size goal for a 64 KiB `gso_max_size`."""
    return (GSO_MAX_SIZE - 1 - MAX_TCP_HEADER) // mss * mss


def tso_header(seq: int, ip_id: int, payload: int) -> bytes:
    """Ethernet + IPv4 + TCP (ACK, PSH) of a send, the TCP checksum seeded as for TSO (the
    pseudo-header sum without the length)."""
    import ipaddress

    from driver.gso import gso_headers, tso_seed_header
    from driver.headers import build_tcp_headers
    hdr, _ = build_tcp_headers(bytes.fromhex("020000000001"), bytes.fromhex("020000000002"),
                               ipaddress.ip_address("10.0.0.1"), ipaddress.ip_address("10.0.0.2"),
                               40000, 5201, seq, 1, 0x18, 512, payload, ip_id)
    return tso_seed_header(hdr, gso_headers(hdr))


@dataclass
class Send:
    entries: list[Any]
    """Ring entries: `TxDesc`s and 16-byte blobs (context entry, inline header entries)."""
    frames: list[bytes]
    """The segments the NIC must send (`models.tso.tso_segments`)."""
    hdr_addr: int | None
    segs: list[tuple[int, int]]
    """`(addr, len)` of the send's descriptors in order."""


def build_send(i: int, mss: int, layout: str, place: Callable[[bytes, bool], int]) -> Send:
    """Send `i` of a train: header and payload placed with `place(data, device)` (returns the
    bus address; device memory for the payload, one page per 4 KiB), its ring entries and
    the golden segments."""
    import random

    from models.formats import TxDesc, TxTsoCtx
    from models.tso import tso_segments
    from tb.tx_env import inline_entries
    p = send_payload(mss)
    payload = random.Random(i).randbytes(p)
    hdr = tso_header(1000 + i * p, i * 64, p)
    ctx = TxTsoCtx(mss=mss, hdr_len=HDR, l3_offset=L3_OFFSET, ipv6=False)
    pay = [(place(payload[o:o + PAGE], True), len(payload[o:o + PAGE])) for o in range(0, p, PAGE)]
    first = TxDesc(addr=0, len=0, tso=True, csum=True, csum_start=L4_OFFSET, csum_offset=16, tag=i)
    descs = [TxDesc(addr=a, len=n, tag=i) for a, n in pay]
    hdr_addr: int | None = None
    if layout == "hdrseg":
        hdr_addr = place(hdr, False)
        first.addr, first.len = hdr_addr, HDR
        entries: list[Any] = [first, ctx.pack(), *descs]
        segs = [(hdr_addr, HDR), *pay]
    else:
        first.inline, first.inline_len = True, HDR
        entries = [first, ctx.pack(), *inline_entries(hdr), *descs]
        segs = pay
    descs[-1].eop = True
    return Send(entries, tso_segments(hdr + payload, first, ctx), hdr_addr, segs)


def r_beats(reads: list[tuple[int, int]], beat: int) -> int:
    """R beats of reads `(addr, len)` on a bus of `beat` bytes (a read's first and last
    beats may be partial)."""
    return sum(-(-(a % beat + n) // beat) for a, n in reads)


def summarize(mss: int, layout: str, sends: list[Send], counts: dict[str, int],
              data_bits: int, dma_bits: int, cycles: float | None) -> dict[str, Any]:
    """One result row: per send and per segment, from what was posted and what was read."""
    from models.tso import tso_read_plan
    nsegs = sum(len(s.frames) for s in sends)
    n = len(sends)
    entries = sum(len(s.entries) for s in sends)
    descs = sum(sum(1 for e in s.entries if not isinstance(e, (bytes, bytearray))) for s in sends)
    frame = HDR + mss
    mac_beats = -(-frame // (data_bits // 8))
    beat = dma_bits // 8
    plan_beats = 0
    for s in sends:
        plan = tso_read_plan(s.segs, HDR if layout == "inline" else 0, HDR, mss)
        plan_beats += r_beats([(r.addr, r.len) for r in plan], beat)
    ring_beats = -(-entries * 16 // beat)
    r_per_seg = (plan_beats + ring_beats) / nsegs
    row: dict[str, Any] = {
        "mss": mss, "layout": layout, "sends": n, "payload_per_send": send_payload(mss),
        "frame_bytes": frame,
        "segments_per_send": nsegs / n,
        "ring_entries_per_send": entries / n, "descriptors_per_send": descs / n,
        "ring_entries_per_segment": entries / nsegs, "descriptors_per_segment": descs / nsegs,
        "host_bytes_read_per_segment": counts["host_bytes"] / nsegs,
        "ring_bytes_read_per_segment": counts["ring_bytes"] / nsegs,
        "device_bytes_read_per_segment": counts["device_bytes"] / nsegs,
        "header_reads_per_send": counts["header_reads"] / n,
        "mac_beats_per_segment": mac_beats,
        "r_beats_per_segment_planned": r_per_seg,
        "ethernet_100g_frames_per_cycle": ethernet_frames_per_cycle(frame),
    }
    bound = min(1 / mac_beats, 1 / r_per_seg)
    row["frames_per_cycle_bound"] = bound
    if cycles is None:
        row["frames_per_cycle"] = None
        row["line_rate_fraction_bound"] = min(1.0, bound * mac_beats)
    else:
        fpc = nsegs / cycles
        row.update(cycles=cycles, frames_per_cycle=fpc, mpps_at_250mhz=fpc * CLK_HZ / 1e6,
                   line_rate_fraction=min(1.0, fpc * mac_beats),
                   gbit_per_s=fpc * CLK_HZ * frame * 8 / 1e9)
    return row


class CountingDma:
    """The model's DMA address space, counting the TX engine's reads: ring entries, the
    header buffers, other host memory, device memory."""

    def __init__(self, inner: Any, ring: tuple[int, int], headers: set[int], dev: tuple[int, int]):
        self.inner, self.ring, self.headers, self.dev = inner, ring, headers, dev
        self.counts = dict.fromkeys(("ring_bytes", "host_bytes", "device_bytes", "header_reads"), 0)

    def read(self, addr: int, n: int) -> bytes:
        c = self.counts
        if self.dev[0] <= addr < self.dev[1]:
            c["device_bytes"] += n
        else:
            c["host_bytes"] += n
            if self.ring[0] <= addr < self.ring[1]:
                c["ring_bytes"] += n
            if addr in self.headers:
                c["header_reads"] += 1
        return bytes(self.inner.read(addr, n))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def _model_one(mss: int, layout: str, nsends: int, data_bits: int,
                     dma_bits: int) -> dict[str, Any]:
    from driver import regs
    from driver.backends.model import ModelHw
    from models.address_map import DEV_BASE, DEV_SIZE
    from tb.tx_env import PagePool, TxRing
    hw = ModelHw(data_bytes=data_bits // 8, dma_bytes=dma_bits // 8)
    hw.nic.tx.tso = True
    if not regs.TX_OFFLOADS_TSO.get(await hw.read32(regs.TX_OFFLOADS)):
        raise RuntimeError("the model has no TSO")
    await hw.write32(regs.TX_FRAME_LIMIT, 9100)
    ring = TxRing(hw, 0, log2=9, cq_log2=9)
    await ring.start(inline_en=layout == "inline")
    pages = -(-send_payload(mss) // PAGE)
    host = PagePool(hw, nsends, device=False)
    dev = PagePool(hw, nsends * pages, device=True)

    def place(data: bytes, device: bool) -> int:
        return (dev if device else host).place(data, 0)
    sends = [build_send(i, mss, layout, place) for i in range(nsends)]
    counting = CountingDma(hw.nic.tx.dma, (ring.base, ring.base + (16 << ring.log2)),
                           {s.hdr_addr for s in sends if s.hdr_addr is not None},
                           (DEV_BASE, DEV_BASE + DEV_SIZE))
    hw.nic.tx.dma = counting            # type: ignore[assignment]  # the same read/write
    for s in sends:
        ring.write_descs(s.entries)
    await ring.doorbell()
    want = [f for s in sends for f in s.frames]
    if hw.wire.tx_frames != want:
        raise RuntimeError(f"MSS {mss} {layout}: {len(hw.wire.tx_frames)} frames sent, "
                           f"{len(want)} expected, or their bytes differ from models.tso")
    cpls = ring.poll()
    if len(cpls) != nsends or any(c.tso_segs != len(s.frames) for c, s in zip(cpls, sends)):
        raise RuntimeError(f"MSS {mss} {layout}: completions {cpls}")
    if counting.counts["header_reads"] != (nsends if layout == "hdrseg" else 0):
        raise RuntimeError(f"MSS {mss} {layout}: header read {counting.counts['header_reads']} "
                           f"times for {nsends} sends")
    row = summarize(mss, layout, sends, counting.counts, data_bits, dma_bits, None)
    row["nic_tso_sends"] = hw.nic.tx.counters["TX_TSO_SENDS"]
    row["nic_tso_segs"] = hw.nic.tx.counters["TX_TSO_SEGS"]
    return row


def run_model(mss_list: list[int], layouts: list[str], nsends: int, data_bits: int,
              dma_bits: int) -> dict[str, Any]:
    rows = [asyncio.run(_model_one(m, la, nsends, data_bits, dma_bits))
            for m in mss_list for la in layouts]
    return {"data_bits": data_bits, "dma_bits": dma_bits, "backend": "model", "results": rows}


class NoTso(RuntimeError):
    """The NIC under test has no TSO."""


def run_rtl(mss_list: list[int], layouts: list[str], nsends: int, data_bits: int, dma_bits: int,
            rtl_rev: str | None) -> dict[str, Any]:
    from tb.sim import BUILD_ROOT, run_rtl_test
    sources, defines = rtl_sources(rtl_rev)
    part = BUILD_ROOT / "bench" / f"tx_tso_{data_bits}_{dma_bits}.json"
    part.unlink(missing_ok=True)
    err = None
    try:
        run_rtl_test("nic_top", sources, "bench.tx_tso_sim",
                     {"DATA_W": data_bits, "DMA_DATA_W": dma_bits},
                     f"bench_tx_tso-{data_bits}-{dma_bits}",
                     extra_env={"BENCH_MSS": ",".join(map(str, mss_list)),
                                "BENCH_LAYOUTS": ",".join(layouts), "BENCH_SENDS": str(nsends),
                                "BENCH_OUT": str(part)},
                     seed=1, defines=defines)
    except AssertionError as e:
        err = str(e)
    doc = json.loads(part.read_text()) if part.is_file() else {}
    if doc.get("no_tso"):
        raise NoTso(doc["no_tso"])
    if err is not None or "results" not in doc:
        raise RuntimeError(err or "the simulation wrote no result")
    doc["backend"] = "rtl"
    return doc


def plot(doc: dict, path: Any) -> None:
    plt = pyplot()
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(13, 4.8))
    for cfg in doc["configs"]:
        rows = cfg["results"]
        labels = [f"MSS {r['mss']}\n{r['layout']}" for r in rows]
        xs = list(range(len(rows)))
        measured = [r["frames_per_cycle"] for r in rows]
        tag = f"{cfg['backend']} {cfg['data_bits']}/{cfg['dma_bits']}"
        if all(v is not None for v in measured):
            ax0.bar([x - 0.2 for x in xs], measured, 0.4, label=f"{tag}: measured")
        ax0.bar([x + 0.2 for x in xs], [r["frames_per_cycle_bound"] for r in rows], 0.4,
                label=f"{tag}: bound (MAC and R beats per segment)", alpha=0.6)
        ax0.plot(xs, [r["ethernet_100g_frames_per_cycle"] for r in rows], "k_", ms=30, mew=2,
                 label="100GbE")
        ax0.set_xticks(xs, labels)
        ax1.bar([x - 0.2 for x in xs], [r["host_bytes_read_per_segment"] for r in rows], 0.4,
                label=f"{tag}: host bytes read / segment")
        ax1.bar([x + 0.2 for x in xs], [16 * r["ring_entries_per_segment"] for r in rows], 0.4,
                label=f"{tag}: ring bytes / segment", alpha=0.6)
        ax1.set_xticks(xs, labels)
    ax0.set_ylabel("segments per cycle (x 250 = Mpps)")
    ax0.set_title("TX with TSO, 64 KiB sends")
    ax0.legend(fontsize=7)
    ax0.grid(True, axis="y", alpha=0.3)
    ax1.set_ylabel("bytes per segment")
    ax1.set_title("host-memory reads per segment (header once per send)")
    ax1.legend(fontsize=7)
    ax1.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.tx_tso", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--configs", default=",".join(f"{d}/{m}" for d, m in CONFIGS),
                    help="MAC/DMA widths, e.g. 512/1024,64/128")
    ap.add_argument("--rtl-rev", default=None,
                    help="rtl: simulate rtl/ as of this git revision (default: the working tree)")
    ap.add_argument("--mss", default=",".join(map(str, MSS)), help="MSS values (default 1448,8948)")
    ap.add_argument("--layouts", default=",".join(LAYOUTS), help="hdrseg,inline")
    ap.add_argument("--sends", type=int, default=SENDS, help=f"sends per train (default {SENDS})")
    ap.add_argument("--backend", choices=["model", "rtl"], default="model")
    ap.add_argument("--out", default="tx_tso", help="name of the JSON and PNG in build/bench/")
    args = ap.parse_args(argv)
    try:
        mss_list = [int(m) for m in args.mss.split(",")]
    except ValueError:
        ap.error(f"--mss {args.mss!r}: comma-separated numbers")
    if any(not 88 <= m <= 9000 for m in mss_list):
        ap.error(f"--mss {args.mss}: each 88..9000 (TX_TSO_MIN_MSS .. a jumbo frame)")
    layouts = args.layouts.split(",")
    if any(x not in LAYOUTS for x in layouts):
        ap.error(f"--layouts {args.layouts!r}: hdrseg, inline")
    if not 1 <= args.sends <= 24:
        ap.error(f"--sends {args.sends}: 1..24 (the ring holds 512 entries)")
    from tb.sim import BUILD_ROOT
    out_dir = BUILD_ROOT / "bench"
    out_dir.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {"benchmark": "tx_tso", "clk_mhz": CLK_HZ / 1e6, "configs": []}
    for data_w, dma_w in parse_configs(args.configs):
        print(f"bench: tx TSO, {args.backend}, MAC {data_w} / DMA {dma_w} bits, MSS {args.mss}, "
              f"layouts {args.layouts}, {args.sends} sends each", flush=True)
        t0 = time.monotonic()
        try:
            if args.backend == "model":
                cfg = run_model(mss_list, layouts, args.sends, data_w, dma_w)
            else:
                cfg = run_rtl(mss_list, layouts, args.sends, data_w, dma_w, args.rtl_rev)
        except NoTso as e:
            print(f"bench.tx_tso: the NIC has no TSO: {e}", file=sys.stderr)
            return 1
        except RuntimeError as e:
            print(f"bench.tx_tso: {e}", file=sys.stderr)
            return 1
        cfg["wall_s"] = round(time.monotonic() - t0, 1)
        doc["configs"].append(cfg)
        for r in cfg["results"]:
            fpc = r["frames_per_cycle"]
            got = (f"{fpc:.4f} segments/cycle ({100 * r['line_rate_fraction']:.1f}% of the MAC)"
                   if fpc is not None else
                   f"bound {r['frames_per_cycle_bound']:.4f} segments/cycle "
                   f"({100 * r['line_rate_fraction_bound']:.1f}% of the MAC)")
            print(f"  MSS {r['mss']:5d} {r['layout']:6s} {r['segments_per_send']:.0f} segments/send  "
                  f"{got}, 100GbE {r['ethernet_100g_frames_per_cycle']:.4f}  "
                  f"entries/segment {r['ring_entries_per_segment']:.3f} "
                  f"(descriptors {r['descriptors_per_segment']:.3f})  host B/segment "
                  f"{r['host_bytes_read_per_segment']:.1f}  header reads/send "
                  f"{r['header_reads_per_send']:.0f}", flush=True)
    write_report(doc, out_dir, args.out, plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
