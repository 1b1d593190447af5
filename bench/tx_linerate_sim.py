"""cocotb half of the TX line-rate benchmark (see bench/tx_linerate.py).

For each frame size, a train of TCP/IPv4 frames with checksum offload (a 54-byte header
segment in host memory, the payload in device memory in page-aligned segments of at most
4096 bytes) is posted on TX queue 0 in advance; the MAC never stalls and the DMA memory
answers without stalls. Every beat accepted on m_axis_tx is counted at the clock edge from
simulation time (exact and repeatable), and every frame is checked against the expected
bytes. Steady state is measured from the first beat to the last.
"""
from __future__ import annotations

import json
import os
import random

import cocotb
from cocotb.triggers import RisingEdge
from cocotb.utils import get_sim_time

from driver import regs
from models.formats import TxDesc
from tb.nic_tb import CLK_NS, NicTb
from tb.tx_env import PAGE, PagePool, TxRing, l4_frame


def frames_for(size: int) -> int:
    """Enough frames to fill the 16 KiB TX FIFO several times, at least 48, at most 400."""
    return max(48, min(400, 8 * 16384 // size))


@cocotb.test()
async def run_linerate(dut) -> None:
    sizes = [int(s) for s in os.environ["BENCH_SIZES"].split(",")]
    out_path = os.environ["BENCH_OUT"]
    results = []
    tb = NicTb(dut, cocotb.RANDOM_SEED)
    data_bytes, dma_bytes = tb.data_bytes, tb.dma_bytes
    rng = random.Random(1)
    for size in sizes:
        await tb.reset()
        tb.tx_frames()
        await tb.write32(regs.TX_FRAME_LIMIT, 9000)
        n = frames_for(size)
        ring = TxRing(tb, 0, log2=11, cq_log2=10)
        await ring.start()
        host = PagePool(tb, n, device=False)
        dev = PagePool(tb, n * -(-(size - 54) // PAGE), device=True)
        wires, descs = [], []
        for i in range(n):
            f = l4_frame(size, False, False, seed=i + 1)
            descs.append(TxDesc(host.place(f.seeded[:54], 0), 54, csum=True, csum_start=f.csum_start,
                                csum_offset=f.csum_offset, tag=i))
            for off in range(54, size, PAGE):
                chunk = f.seeded[off:off + PAGE]
                descs.append(TxDesc(dev.place(chunk, 0), len(chunk)))
            descs[-1].eop = True
            wires.append(f.wire)
        beats = 0
        first: float | None = None
        last: float | None = None

        async def count() -> None:
            nonlocal beats, first, last
            while True:
                await RisingEdge(dut.clk)
                if dut.m_axis_tx_tvalid.value == 1 and dut.m_axis_tx_tready.value == 1:
                    t = get_sim_time("ns")
                    beats += 1
                    first = t if first is None else first
                    last = t

        counter = cocotb.start_soon(count())
        ring.write_descs(descs)
        await ring.doorbell()
        sent: list[bytes] = []
        waited = 0
        while len(sent) < n and waited < 5_000_000:
            await tb.delay(2000)
            waited += 2000
            sent += tb.tx_frames()
            ring.poll()
            await ring.ack()
        counter.cancel()
        assert sent == wires, f"{size} B: {len(sent)} of {n} frames sent, or bytes differ"
        assert first is not None and last is not None, f"{size} B: no beat on m_axis_tx"
        cycles = (last - first) / CLK_NS + 1
        beats_per_frame = -(-size // data_bytes)
        results.append({
            "frame_bytes": size,
            "frames": n,
            "beats": beats,
            "cycles": cycles,
            "beats_per_cycle": beats / cycles,
            "frames_per_cycle": n / cycles,
            "line_rate_fraction": min(1.0, (n / cycles) * beats_per_frame),
        })
        assert beats == n * beats_per_frame
        dut._log.info("bench %5d B: %s", size, results[-1])
        await tb.write32(ring.reg(regs.TXQ_CTRL), 0)
    with open(out_path, "w") as fh:
        json.dump({"data_bits": data_bytes * 8, "dma_bits": dma_bytes * 8, "clk_ns": CLK_NS,
                   "results": results}, fh, indent=2)
