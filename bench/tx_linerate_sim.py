"""cocotb half of the TX line-rate benchmark (see bench/tx_linerate.py).

For each frame layout and size, a train of TCP/IPv4 frames with checksum offload is posted on
TX queue 0 in advance; the MAC never stalls and the DMA memory answers without stalls. Every
beat accepted on m_axis_tx is counted at the clock edge from simulation time (exact and
repeatable), and every frame is checked against the expected bytes. Steady state is measured
from the first beat to the last. Layouts (docs/tx.md):

- `inline`: the 54-byte header inline in the descriptor ring (host memory), the payload in
  device memory in page-aligned segments of at most 4096 bytes: one descriptor and four
  header entries per frame up to 4150 bytes;
- `hdrseg`: the header as a segment of its own in host memory (a second descriptor), the
  payload as for `inline`: the layout before inline headers;
- `linear`: the whole frame in host memory, one descriptor per 4 KiB page (one segment up to
  4096 bytes);
- `contig`: as `hdrseg`, but consecutive frames' payloads back to back in device memory (a
  devmem TCP send cut into frames), a payload split into two descriptors where it crosses a
  4 KiB boundary: the layout whose R beats a NIC reusing fetched words could share
  (docs/tx.md, "Reusing a fetched DMA word"; today's RTL reads every segment's words itself).

BENCH_COAL="usecs,frames[/usecs,frames...]": the queue's completion moderation settings
(TXQ.COALESCE), each measured (0,1 = off, the reset value).
Where the cycles go, counted over the measured span (first to last MAC beat): AXI channel
use (AR addresses, R beats of descriptors and of frame data, AW), cycles `tx_sched` takes a
frame from the window, cycles its TAKE stage waits for a free record bank (ISSUE busy), cycles
the window is empty, cycles ISSUE holds a checked frame waiting (FIFO room, completion order)
and cycles an AR waits for the read port.
Completion latency: for every frame, the cycles from the last R beat of its segment data to
the cycle CQ.HW_IDX counts its completion (`u_tx.cq_hw_idx`, what a register read or the
interrupt sees); frames whose data is one read burst (the `inline` and `linear` layouts up
to 4096 bytes) are measured, and BENCH_ISOLATED=1 adds 16 frames posted one at a time.
"""
from __future__ import annotations

import json
import os
import statistics

import cocotb
from cocotb.triggers import RisingEdge
from cocotb.utils import get_sim_time

from driver import regs
from models.formats import TxDesc
from tb.nic_tb import CLK_NS, NicTb
from tb.tx_env import PAGE, PagePool, TxRing, inline_entries, l4_frame

HDR = 54


def frames_for(size: int) -> int:
    """Enough frames to fill the 16 KiB TX FIFO several times, at least 48, at most 400."""
    return max(48, min(400, 8 * 16384 // size))


class DevStream:
    """Device memory handed out back to back (the `contig` layout's payloads)."""

    def __init__(self, dev: PagePool) -> None:
        self.dev = dev
        self.at = dev.base

    def place(self, data: bytes) -> list[TxDesc]:
        """Write `data` at the next bytes; one descriptor per 4 KiB page it touches."""
        out = []
        while data:
            n = min(len(data), PAGE - self.at % PAGE)
            self.dev.tb.dev.gpu.write(self.at, data[:n])
            out.append(TxDesc(self.at, n))
            self.at += n
            data = data[n:]
        return out


def frame_entries(layout: str, f, size: int, tag: int, host: PagePool,
                  dev: PagePool, stream: DevStream | None = None) -> list[TxDesc | bytes]:
    """The ring entries of one frame in `layout` (`contig` places payloads with `stream`)."""
    csum = dict(csum=True, csum_start=f.csum_start, csum_offset=f.csum_offset, tag=tag)
    if layout == "linear":
        out: list[TxDesc | bytes] = [TxDesc(host.place(f.seeded[off:off + PAGE], 0),
                                            len(f.seeded[off:off + PAGE]))
                                     for off in range(0, size, PAGE)]
        for k, v in csum.items():
            setattr(out[0], k, v)
    elif layout == "contig":
        assert stream is not None
        out = [TxDesc(host.place(f.seeded[:HDR], 0), HDR, **csum), *stream.place(f.seeded[HDR:])]
    else:
        pay = [TxDesc(dev.place(f.seeded[off:off + PAGE], 0), len(f.seeded[off:off + PAGE]))
               for off in range(HDR, size, PAGE)]
        if layout == "inline":
            first = pay.pop(0)
            first.inline, first.inline_len = True, HDR
            for k, v in csum.items():
                setattr(first, k, v)
            out = [first, *inline_entries(f.seeded[:HDR]), *pay]
        else:
            out = [TxDesc(host.place(f.seeded[:HDR], 0), HDR, **csum), *pay]
    last = [e for e in out if isinstance(e, TxDesc)][-1]
    last.eop = True
    return out


def latency(layout: str, size: int, data_done: list[int], cpl_seen: list[int],
            n: int) -> dict | None:
    """Percentiles of the cycles from each frame's last data beat to its completion counted
    in CQ.HW_IDX (frames read in one burst only: then the i-th data burst is frame i's)."""
    if layout in ("hdrseg", "contig") or size > 4096 + (HDR if layout == "inline" else 0):
        return None
    assert len(data_done) >= n and len(cpl_seen) >= n, (len(data_done), len(cpl_seen), n)
    d = sorted(c - r for r, c in zip(data_done[-n:], cpl_seen[-n:]))
    return {"p50": d[len(d) // 2], "p90": d[int(len(d) * 0.9)], "p99": d[int(len(d) * 0.99)],
            "max": d[-1], "mean": round(statistics.fmean(d), 2)}


async def isolated(tb: NicTb, ring: TxRing, layout: str, size: int, host: PagePool,
                   dev: PagePool, data_done: list[int], cpl_seen: list[int]) -> dict | None:
    """The same latency for 16 frames posted one at a time, the NIC idle in between."""
    start, cstart = len(data_done), len(cpl_seen)
    for i in range(16):
        f = l4_frame(size, False, False, seed=10_000 + i)
        ring.write_descs(frame_entries(layout, f, size, 1000 + i, host, dev))
        await ring.doorbell()
        await tb.delay(4000)
        ring.poll()
        await ring.ack()
        tb.tx_frames()
    return latency(layout, size, data_done[start:], cpl_seen[cstart:], 16)


@cocotb.test()
async def run_linerate(dut) -> None:
    sizes = [int(s) for s in os.environ["BENCH_SIZES"].split(",")]
    layouts = os.environ.get("BENCH_LAYOUTS", "inline").split(",")
    coals = [[int(x) for x in c.split(",")] for c in os.environ.get("BENCH_COAL", "0,1").split("/")]
    out_path = os.environ["BENCH_OUT"]
    results = []
    tb = NicTb(dut, cocotb.RANDOM_SEED)
    data_bytes, dma_bytes = tb.data_bytes, tb.dma_bytes
    sched = dut.u_tx.u_sched
    for coal, layout, size in [(c, la, s) for c in coals for la in layouts for s in sizes]:
        await tb.reset()
        tb.tx_frames()
        await tb.write32(regs.TX_FRAME_LIMIT, 9000)
        n = frames_for(size)
        ring = TxRing(tb, 0, log2=11, cq_log2=10)
        await ring.start(inline_en=layout == "inline")
        await tb.write32(ring.reg(regs.TXQ_COALESCE),
                         regs.TXQ_COALESCE_USECS.put(coal[0]) | regs.TXQ_COALESCE_FRAMES.put(coal[1]))
        host = PagePool(tb, n * -(-size // PAGE), device=False)
        dev = PagePool(tb, n * -(-(size - HDR) // PAGE), device=True)
        wires, entries = [], []
        stream = DevStream(dev)
        for i in range(n):
            f = l4_frame(size, False, False, seed=i + 1)
            entries += frame_entries(layout, f, size, i, host, dev, stream)
            wires.append(f.wire)
        beats = 0
        first: float | None = None
        last: float | None = None
        aw = ar = r_stall = 0
        span: dict[str, int] = {}           # counters over the measured span
        acc: dict[str, int] = {}            # ... since the last MAC beat
        data_done: list[int] = []           # cycle of each frame's last data R beat
        cpl_seen: list[int] = []            # cycle CQ.HW_IDX passed each frame
        cyc = 0

        def bump(key: str, v: int = 1) -> None:
            if v:
                acc[key] = acc.get(key, 0) + v

        async def count() -> None:
            nonlocal beats, first, last, aw, ar, r_stall, cyc
            hw_prev = 0
            while True:
                await RisingEdge(dut.clk)
                cyc += 1
                r_hs = int(dut.m_axi_rvalid.value) and int(dut.m_axi_rready.value)
                if r_hs:
                    rid = int(dut.m_axi_rid.value)
                    bump("r_data_beats" if rid == 24 else "r_desc_beats" if 16 <= rid < 24
                         else "r_other_beats")
                    if int(dut.m_axi_rlast.value) and rid == 24:
                        data_done.append(cyc)
                if int(dut.m_axi_arvalid.value):
                    bump("ar_addresses" if int(dut.m_axi_arready.value) else "ar_wait_cycles")
                bump("aw_addresses", int(dut.m_axi_awvalid.value) & int(dut.m_axi_awready.value))
                bump("w_beats", int(dut.m_axi_wvalid.value) & int(dut.m_axi_wready.value))
                take = int(sched.take.value)
                bump("sched_take_cycles", take)
                if not take and not int(sched.mid_q.value):
                    if int(sched.win_n.value) == 0:
                        bump("sched_window_empty_cycles")
                    elif int(sched.full_q.value) >> int(sched.tb_q.value) & 1:
                        bump("sched_bank_busy_cycles")
                    else:
                        bump("sched_other_idle_cycles")
                if int(sched.ivalid.value) and not int(sched.checked_q.value) \
                        and not int(sched.go.value):
                    bump("issue_wait_cycles")
                bump("issue_ar_cycles", int(sched.ar_load.value))
                hw = int(dut.u_tx.cq_hw_idx.value) & 0xFFFF
                while hw_prev != hw:
                    cpl_seen.append(cyc)
                    hw_prev = (hw_prev + 1) & 0xFFFF
                if dut.m_axis_tx_tvalid.value == 1 and dut.m_axis_tx_tready.value == 1:
                    t = get_sim_time("ns")
                    beats += 1
                    if first is None:
                        first = t
                        acc.clear()
                    last = t
                    for k, v in acc.items():        # the span ends at the last beat
                        span[k] = span.get(k, 0) + v
                    acc.clear()
                aw += int(dut.m_axi_awvalid.value) & int(dut.m_axi_awready.value)
                ar += int(dut.m_axi_arvalid.value) & int(dut.m_axi_arready.value)
                r_stall += int(dut.m_axi_rvalid.value) & (1 - int(dut.m_axi_rready.value))

        counter = cocotb.start_soon(count())
        ring.write_descs(entries)
        await ring.doorbell()
        sent: list[bytes] = []
        waited = 0
        while len(sent) < n and waited < 5_000_000:
            await tb.delay(2000)
            waited += 2000
            sent += tb.tx_frames()
            ring.poll()
            await ring.ack()
        await tb.delay(2000)                # the last completions
        assert sent == wires, f"{layout} {size} B: {len(sent)} of {n} frames sent, or bytes differ"
        assert first is not None and last is not None, f"{layout} {size} B: no beat on m_axis_tx"
        cycles = (last - first) / CLK_NS + 1
        beats_per_frame = -(-size // data_bytes)
        fpc = n / cycles
        lat = latency(layout, size, data_done, cpl_seen, n)
        results.append({
            "layout": layout,
            "frame_bytes": size,
            "frames": n,
            "ring_entries_per_frame": len(entries) / n,
            "beats": beats,
            "cycles": cycles,
            "beats_per_cycle": beats / cycles,
            "frames_per_cycle": fpc,
            "mpps_at_250mhz": fpc * 1e3 / CLK_NS,
            "line_rate_fraction": min(1.0, fpc * beats_per_frame),
            "ar_per_frame": ar / n,
            "aw_per_frame": aw / n,
            "r_stall_cycles": r_stall,
            "coal_usecs": coal[0],
            "coal_frames": coal[1],
            "r_beats_per_frame": (span.get("r_data_beats", 0) + span.get("r_desc_beats", 0)) / n,
            "span_counts": span,
            "cpl_latency_cycles": lat,
        })
        assert beats == n * beats_per_frame
        if os.environ.get("BENCH_ISOLATED") == "1" and lat is not None:
            results[-1]["cpl_latency_isolated_cycles"] = await isolated(
                tb, ring, layout, size, host, dev, data_done, cpl_seen)
        counter.cancel()
        dut._log.info("bench %s %5d B: %s", layout, size, results[-1])
        await tb.write32(ring.reg(regs.TXQ_CTRL), 0)
    with open(out_path, "w") as fh:
        json.dump({"data_bits": data_bytes * 8, "dma_bits": dma_bytes * 8, "clk_ns": CLK_NS,
                   "coal": [{"usecs": c[0], "frames": c[1]} for c in coals], "results": results},
                  fh, indent=2)
