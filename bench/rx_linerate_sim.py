"""cocotb half of the RX line-rate benchmark (see bench/rx_linerate.py).

For each frame size, a train of back-to-back TCP frames (no idle cycles, split on, RSS and a
flow-steering rule on, buffers posted in advance so the driver never has to keep up) goes
into the RX port. Input and
output are timed in clock cycles from simulation time: exact and repeatable.
"""
from __future__ import annotations

import json
import os

import cocotb
from cocotb.triggers import Edge
from cocotb.utils import get_sim_time

from driver import ethtool, regs
from driver.rx_queue import RxBuffer, RxQueue, RxQueueConfig
from tb.frames import Flow, build, pattern
from tb.nic_tb import CLK_NS, NicTb

FIFO_BYTES = 16384


def frames_for(size: int) -> int:
    """Enough frames to overflow the frame FIFO four times over, at least 64, at most 600."""
    return max(64, min(600, 4 * FIFO_BYTES // size))


@cocotb.test()
async def run_linerate(dut) -> None:
    sizes = [int(s) for s in os.environ["BENCH_SIZES"].split(",")]
    out_path = os.environ["BENCH_OUT"]
    results = []
    tb = NicTb(dut, cocotb.RANDOM_SEED)
    data_bytes, dma_bytes = tb.data_bytes, tb.dma_bytes
    for size in sizes:
        await tb.reset()
        await tb.write32(regs.RX_FRAME_LIMIT, 9022)
        n = frames_for(size)
        cfg = RxQueueConfig(hdr_ring_log2=10, pay_ring_log2=12, cq_log2=12, pay_buf_log2=12)
        rxq = RxQueue(tb, 0, cfg, dma_bytes=dma_bytes)
        await rxq.alloc_rx_rings()
        await rxq.enable()
        hdr = tb.host.alloc(n * 256)
        await rxq.post_hdr_buffers([RxBuffer(hdr + 256 * i, i) for i in range(min(n, 1024))])
        bufs_per_frame = -(-size // 4096)
        dmabuf = tb.dev.export_dmabuf(n * bufs_per_frame * 4096, chunk_size=64 * 4096)
        await rxq.post_pay_buffers([RxBuffer(dmabuf.offset_to_bus(4096 * i), i)
                                    for i in range(min(n * bufs_per_frame, 4096))])
        # RSS (all hash types, a fixed non-zero key, every table entry on queue 0) and one steering
        # rule matching the flow: the classifier works on every frame, as in real use.
        await ethtool.set_rxfh(tb, key=bytes(range(7, 47)), indir=[0] * 128, num_queues=int(dut.NUM_RXQ.value))
        await ethtool.set_rx_flow_hash(tb, {"ip4", "tcp4", "udp4", "ip6", "tcp6", "udp6"})
        rules = ethtool.NtupleRules(tb, int(dut.NUM_RXQ.value))
        await rules.add(ethtool.NtupleSpec("tcp4", action=0, dst_port=Flow().dport))
        await tb.delay(20_000)                    # let the prefetchers fill their caches
        payload = size - 54
        frames = [build(Flow(), pattern(payload, start=i)) for i in range(n)]
        assert all(len(f) == size for f in frames)

        cpl_times: list[float] = []

        async def watch_completions() -> None:
            while True:
                await Edge(dut.u_dma.cq_hw_idx)
                cpl_times.append(get_sim_time("ns"))

        watcher = cocotb.start_soon(watch_completions())
        t0 = get_sim_time("ns")
        for f in frames:
            await tb.send(f)
        await tb.wait_rx_idle()
        t_in = get_sim_time("ns")
        waited = 0
        while await tb.read32(regs.RX_FRAMES) + await tb.read32(regs.RX_DROP_FIFO) < n and waited < 2_000_000:
            await tb.delay(1000)
            waited += 1000
        watcher.cancel()
        delivered = await tb.read32(regs.RX_FRAMES)
        fifo_drops = await tb.read32(regs.RX_DROP_FIFO)
        other_drops = sum([await tb.read32(getattr(regs, c)) for c in
                           ("RX_DROP_NO_HDR_BUF", "RX_DROP_NO_PAY_BUF", "RX_DROP_CQ_FULL")])
        beats = n * -(-size // data_bytes)
        in_cycles = (t_in - t0) / CLK_NS
        # Completions per frame: one per payload buffer.
        cpf = bufs_per_frame
        out_cycles = (cpl_times[-1] - cpl_times[0]) / CLK_NS if len(cpl_times) > 1 else float("nan")
        frames_out = (len(cpl_times) - 1) / cpf if cpl_times else 0
        in_frame_rate = n / in_cycles
        out_frame_rate = frames_out / out_cycles if out_cycles else float("nan")
        results.append({
            "frame_bytes": size,
            "frames": n,
            "delivered": delivered,
            "fifo_drops": fifo_drops,
            "other_drops": other_drops,
            "input_beats_per_cycle": beats / in_cycles,
            "input_frames_per_cycle": in_frame_rate,
            "delivered_frames_per_cycle": out_frame_rate,
            "line_rate_fraction": min(1.0, out_frame_rate / (1 / -(-size // data_bytes))),
            "latency_cycles_last_frame": (cpl_times[-1] - t_in) / CLK_NS if cpl_times else None,
        })
        dut._log.info("bench %5d B: %s", size, results[-1])
    with open(out_path, "w") as fh:
        json.dump({"data_bits": data_bytes * 8, "dma_bits": dma_bytes * 8, "clk_ns": CLK_NS,
                   "results": results}, fh, indent=2)
