"""cocotb half of the TSO bench (see bench/tx_tso.py): nic_top under Verilator.

After reset `TX_OFFLOADS.tso` is read: 0 (a NIC without TSO) writes `{"no_tso": ...}` and
ends. Otherwise, per MSS and layout, a train of sends (`bench.tx_tso.build_send`) is posted
on TX queue 0 in advance; the MAC never stalls, the DMA memory answers without stalls. Every
beat accepted on m_axis_tx is counted at the clock edge; the span is the first beat to the
last. AR addresses are classified by region (descriptor ring, the header buffers, other host
memory, device memory) and their bytes counted from ARLEN/ARSIZE; every frame sent is
checked against the golden segments; every send has one completion with its `tso_segs`.

BENCH_MSS, BENCH_LAYOUTS, BENCH_SENDS, BENCH_OUT: as bench/tx_tso.py passes them.
"""
from __future__ import annotations

import json
import os

import cocotb
from cocotb.triggers import RisingEdge
from cocotb.utils import get_sim_time

from bench.tx_tso import PAGE, build_send, send_payload, summarize
from driver import regs
from models.address_map import DEV_BASE, DEV_SIZE
from models.formats import TxCompletion
from tb.nic_tb import CLK_NS, NicTb
from tb.tx_env import PagePool, TxRing


@cocotb.test()
async def run_tso(dut) -> None:
    mss_list = [int(m) for m in os.environ["BENCH_MSS"].split(",")]
    layouts = os.environ["BENCH_LAYOUTS"].split(",")
    nsends = int(os.environ["BENCH_SENDS"])
    out_path = os.environ["BENCH_OUT"]
    tb = NicTb(dut, cocotb.RANDOM_SEED)
    await tb.reset()
    offloads = await tb.read32(regs.TX_OFFLOADS)
    if not regs.TX_OFFLOADS_TSO.get(offloads):
        with open(out_path, "w") as fh:
            json.dump({"no_tso": f"nic_top's TX_OFFLOADS reads 0x{offloads:08x}: tso is 0 "
                                 f"(docs/tx.md, \"TCP segmentation offload\")"}, fh)
        return
    results = []
    for mss in mss_list:
        for layout in layouts:
            await tb.reset()
            tb.tx_frames()
            await tb.write32(regs.TX_FRAME_LIMIT, 9100)
            ring = TxRing(tb, 0, log2=9, cq_log2=9)
            await ring.start(inline_en=layout == "inline")
            pages = -(-send_payload(mss) // PAGE)
            host = PagePool(tb, nsends, device=False)
            dev = PagePool(tb, nsends * pages, device=True)

            def place(data: bytes, device: bool) -> int:
                return (dev if device else host).place(data, 0)
            sends = [build_send(i, mss, layout, place) for i in range(nsends)]
            headers = {s.hdr_addr for s in sends if s.hdr_addr is not None}
            ring_lo, ring_hi = ring.base, ring.base + (16 << ring.log2)
            counts = dict.fromkeys(("ring_bytes", "host_bytes", "device_bytes", "header_reads"), 0)
            state: dict[str, float | None] = {"first": None, "last": None}
            beats = [0]

            async def count() -> None:
                while True:
                    await RisingEdge(dut.clk)
                    if int(dut.m_axi_arvalid.value) and int(dut.m_axi_arready.value):
                        addr = int(dut.m_axi_araddr.value)
                        n = (int(dut.m_axi_arlen.value) + 1) << int(dut.m_axi_arsize.value)
                        if DEV_BASE <= addr < DEV_BASE + DEV_SIZE:
                            counts["device_bytes"] += n
                        else:
                            counts["host_bytes"] += n
                            if ring_lo <= addr < ring_hi:
                                counts["ring_bytes"] += n
                            if addr in headers:
                                counts["header_reads"] += 1
                    if int(dut.m_axis_tx_tvalid.value) and int(dut.m_axis_tx_tready.value):
                        t = get_sim_time("ns")
                        beats[0] += 1
                        if state["first"] is None:
                            state["first"] = t
                        state["last"] = t
            counter = cocotb.start_soon(count())
            for s in sends:
                ring.write_descs(s.entries)
            await ring.doorbell()
            want = [f for s in sends for f in s.frames]
            sent: list[bytes] = []
            cpls: list[TxCompletion] = []
            waited = 0
            while (len(sent) < len(want) or len(cpls) < nsends) and waited < 5_000_000:
                await tb.delay(2000)
                waited += 2000
                sent += tb.tx_frames()
                cpls += ring.poll()
                await ring.ack()
            counter.cancel()
            assert sent == want, (f"MSS {mss} {layout}: {len(sent)} of {len(want)} segments sent, "
                                  f"or their bytes differ from models.tso")
            assert len(cpls) == nsends and all(c.tso_segs == len(s.frames)
                                               for c, s in zip(cpls, sends)), cpls
            first, last = state["first"], state["last"]
            assert first is not None and last is not None
            cycles = (last - first) / CLK_NS + 1
            row = summarize(mss, layout, sends, counts, tb.data_bytes * 8, tb.dma_bytes * 8, cycles)
            row["mac_beats"] = beats[0]
            row["nic_counters"] = {n: await tb.read32(getattr(regs, n))
                                   for n in ("TX_FRAMES", "TX_BYTES", "TX_TSO_SENDS", "TX_TSO_SEGS")
                                   if isinstance(getattr(regs, n, None), int)}
            results.append(row)
            dut._log.info("bench tso MSS %d %s: %s", mss, layout, row)
            await tb.write32(ring.reg(regs.TXQ_CTRL), 0)
    with open(out_path, "w") as fh:
        json.dump({"data_bits": tb.data_bytes * 8, "dma_bits": tb.dma_bytes * 8, "clk_ns": CLK_NS,
                   "results": results}, fh, indent=2)
