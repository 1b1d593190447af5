"""The demo's simulation half (cocotb): a devmem RX story on the RTL.

A queue with header/data split and threshold 0 gets header buffers in host memory and payload
buffers cut from a dma-buf in device (GPU) memory. Four TCP/UDP flows over IPv4 and IPv6 send
the Linux devmem reference pattern; the driver polls completions, reassembles each flow's
byte stream from the payload fragments through the GPU accessor and recycles the buffers.
The CPU never reads device memory (the model would raise). Results go to $DEMO_OUT as JSON.
"""
from __future__ import annotations

import json
import os
from collections import defaultdict

import cocotb
from cocotb.utils import get_sim_time

from driver import regs
from driver.rx_queue import RxQueueConfig
from tb.frames import Flow, build, pattern
from tb.nic_tb import CLK_NS, NicTb, TrafficProfile
from tb.rx_env import bring_up, run_traffic

FLOWS = [
    Flow(proto="tcp", dport=5201),
    Flow(proto="udp", dport=4791),
    Flow(ipv6=True, proto="tcp", dport=5201),
    Flow(ipv6=True, proto="udp", dport=4791, vlan_tags=1),
]


@cocotb.test()
async def run_demo(dut) -> None:
    frames_per_flow = int(os.environ.get("DEMO_FRAMES", "16"))
    tb = NicTb(dut, cocotb.RANDOM_SEED, TrafficProfile(rx_idle=0.1, dma_stall=0.1))
    await tb.reset()
    rxq, sb = await bring_up(tb, RxQueueConfig(hdr_ring_log2=5, pay_ring_log2=5, cq_log2=6))

    # Each flow sends a byte stream cut into segments of growing size (1 byte up to the MTU).
    sizes = [1, 8, 64, 100, 512, 1000, 1400]
    frames, streams = [], defaultdict(bytearray)
    offsets = defaultdict(int)
    for k in range(frames_per_flow):
        for flow in FLOWS:
            n = min(sizes[k % len(sizes)], flow.max_payload())
            data = pattern(n, period=7, start=offsets[flow])
            offsets[flow] += n
            streams[flow.describe()] += data
            frames.append(build(flow, data, seq=1000 + offsets[flow] - n))
    t0 = get_sim_time("ns")
    await run_traffic(tb, rxq, sb, frames)
    t1 = get_sim_time("ns")

    # Reassemble each flow's stream from the payload fragments, as the GPU read them when
    # the frame completed (the buffers were recycled afterwards).
    got = defaultdict(bytearray)
    for index, payload in zip(sb.delivered_index, sb.delivered_payload):
        got[FLOWS[index % len(FLOWS)].describe()] += payload
    for name, want in streams.items():
        assert bytes(got[name]) == bytes(want), f"stream {name} differs"

    out = {
        "data_width_bits": tb.data_bytes * 8,
        "frames_sent": len(frames),
        "frames_delivered": sb.checked,
        "frames_split": sum(1 for f in sb.delivered if f.split),
        "header_bytes_to_host": sb.hdr_bytes_to_host,
        "payload_bytes_to_device": sb.payload_bytes_to_device,
        "payload_bytes_to_host": sb.payload_bytes_to_host,
        "cpu_reads_of_device_memory": tb.dev.cpu_reads,
        "rx_frames_counter": await tb.read32(regs.RX_FRAMES),
        "streams_verified": {name: len(data) for name, data in streams.items()},
        "sim_ns": t1 - t0,
        "sim_cycles": int((t1 - t0) // CLK_NS),
    }
    path = os.environ.get("DEMO_OUT")
    if path:
        with open(path, "w") as fh:
            json.dump(out, fh, indent=2)
