"""cocotb half of the RX line-rate benchmark (see bench/rx_linerate.py).

For each RX mode (BENCH_MODES: `RX_MODES` below, "base" = every mechanism at its reset value),
header/data split setting (BENCH_SPLIT, "1,0": on and off) and frame size, a train of
back-to-back TCP frames (no idle cycles, RSS and a flow-steering rule on, buffers posted in
advance so the driver never has to keep up) goes into the RX port. Input and output are timed
in clock cycles from simulation time: exact and repeatable. A passive monitor counts the write
bursts and beats on the DMA port, those of completions apart.

`latency_cycles_last_frame`: cycles from the rising edge on which the last frame's last beat
(tlast) was accepted on the RX port to the rising edge on which the write response (B) came
back for the completion write covering that frame's last completion (the last CQ write burst
whose bytes include that completion's ring slot; see `last_frame_latency_cycles`). None when any
frame was dropped: the bench does not tell which frame a drop hit, so it cannot know that the
last one got through. (It was "last change of CQ.HW_IDX minus the time the RX source reported
idle": HW_IDX, not the write, and no check that the change counted the last frame.)
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import cocotb
from cocotb.triggers import RisingEdge
from cocotb.utils import get_sim_time

from driver import ethtool, regs
from driver.rx_queue import RxBuffer, RxQueue, RxQueueConfig
from models.device_memory import DmaBuf
from tb.frames import Flow, build, pattern
from tb.nic_tb import CLK_NS, NicTb

FIFO_BYTES = 16384
HDR_BUF = 256
PAY_BUF = 4096
ETH_IP_TCP = 54                 # header bytes of the bench's frames (no VLAN, IPv4, TCP)
CLK_MHZ = 1000 / CLK_NS
ETH_WIRE_EXTRA = 20             # preamble + SFD (8) and inter-frame gap (12) per frame
RX_MODES: dict[str, dict] = {
    "base": {},                                                   # reset values: no batching, one buffer per frame
    "mpb": dict(pay_mpb=True, pay_stride_log2=4, rx_frames=16),    # multi-packet buffers (16-byte strides), batches of 16
    "mpb-usecs2": dict(pay_mpb=True, pay_stride_log2=4, rx_frames=16, rx_usecs=2),  # and a batch waits up to 2 us
}
"""The RX settings the benches compare (RxQueueConfig fields)."""


def eth100g_frames_per_cycle(size: int) -> float:
    """100GbE's frame rate in frames per clock cycle at this clock (250 MHz): `size` bytes plus
    20 of preamble, SFD and gap on the wire (counting `size` as Ethernet's frame size, as the
    issue's 148.8 Mpps at 64 bytes does; the bench's frames leave out the FCS, so this line is
    the stricter of the two)."""
    return 100e9 / 8 / (size + ETH_WIRE_EXTRA) / (CLK_MHZ * 1e6)


def frames_for(size: int) -> int:
    """Enough frames to overflow the frame FIFO four times over, at least 64, at most 600."""
    return max(64, min(600, 4 * FIFO_BYTES // size))


def bufs_per_frame(size: int, split: bool) -> int:
    """Payload buffers (= completions) one frame of `size` bytes takes."""
    pay = size - ETH_IP_TCP if split else size
    return max(1, -(-pay // PAY_BUF))


@dataclass
class CplWrite:
    """One completion-ring write burst seen on the DMA port: its bytes [addr, addr + nbytes)
    and the simulation time (ns) of its write response, None while none has come back."""
    addr: int
    nbytes: int
    t_resp: float | None = None


def last_frame_latency_cycles(t_last_beat: float | None, writes: list[CplWrite], slot_addr: int,
                              all_delivered: bool) -> float | None:
    """Cycles from the last frame's last beat (`t_last_beat`, ns) to the write response of the
    last completion write covering `slot_addr` (the ring slot of that frame's last completion),
    or None when a frame was dropped, the beat was not seen or no covering write was answered."""
    if not all_delivered or t_last_beat is None:
        return None
    covering = [w for w in writes if w.addr <= slot_addr < w.addr + w.nbytes]
    if not covering or covering[-1].t_resp is None:
        return None
    return (covering[-1].t_resp - t_last_beat) / CLK_NS


@dataclass
class RxSetup:
    rxq: RxQueue
    hdr_base: int
    hdr_bytes: int
    dmabuf: DmaBuf

    def regions(self) -> list[tuple[int, int, str]]:
        """Bus address ranges and what the NIC writes there (for bench/rx_metrics_sim.py)."""
        cq = self.rxq.cq_base
        out = [(cq, cq + 16 * self.rxq.cq_size, "completion"),
               (self.hdr_base, self.hdr_base + self.hdr_bytes, "header")]
        out += [(c.bus_addr, c.bus_addr + c.length, "payload") for c in self.dmabuf.chunks]
        return out


async def setup_rx(tb: NicTb, n_frames: int, size: int, split: bool, mode: str = "base") -> RxSetup:
    """After `tb.reset()`: queue 0 with buffers for `n_frames` frames of `size` bytes posted
    (payload in device memory), split on or off, the RX mode's settings (`RX_MODES`), RSS with
    all hash types and a steering rule for the bench flow, and the prefetchers given time to
    fill their caches."""
    dut = tb.dut
    await tb.write32(regs.RX_FRAME_LIMIT, 9022)
    cfg = RxQueueConfig(hdr_ring_log2=10, pay_ring_log2=12, cq_log2=12, pay_buf_log2=12,
                        hdr_buf_bytes=HDR_BUF, tcp_data_split=split, **RX_MODES[mode])
    rxq = RxQueue(tb, 0, cfg, dma_bytes=tb.dma_bytes)
    await rxq.alloc_rx_rings()
    await rxq.enable()
    n_hdr = min(n_frames, 1024)
    hdr = tb.host.alloc(n_hdr * HDR_BUF)
    await rxq.post_hdr_buffers([RxBuffer(hdr + HDR_BUF * i, i) for i in range(n_hdr)])
    bpf = bufs_per_frame(size, split)
    dmabuf = tb.dev.export_dmabuf(n_frames * bpf * PAY_BUF, chunk_size=64 * PAY_BUF)
    await rxq.post_pay_buffers([RxBuffer(dmabuf.offset_to_bus(PAY_BUF * i), i)
                                for i in range(min(n_frames * bpf, 4096))])
    # RSS (all hash types, a fixed non-zero key, every table entry on queue 0) and one steering
    # rule matching the flow: the classifier works on every frame, as in real use.
    nq = int(dut.NUM_RXQ.value)
    await ethtool.set_rxfh(tb, key=bytes(range(7, 47)), indir=[0] * 128, num_queues=nq)
    await ethtool.set_rx_flow_hash(tb, {"ip4", "tcp4", "udp4", "ip6", "tcp6", "udp6"})
    rules = ethtool.NtupleRules(tb, nq)
    await rules.add(ethtool.NtupleSpec("tcp4", action=0, dst_port=Flow().dport))
    await tb.delay(20_000)                    # let the prefetchers fill their caches
    return RxSetup(rxq, hdr, n_hdr * HDR_BUF, dmabuf)


def bench_frames(size: int, n: int) -> list[bytes]:
    frames = [build(Flow(), pattern(size - ETH_IP_TCP, start=i)) for i in range(n)]
    assert all(len(f) == size for f in frames)
    return frames


PLAN_STEPS = ("none", "flush", "close", "drop", "piece", "abort")
"""rx_split_dma's step_e, in declaration order."""
PLAN_PORTS = ("cmd", "rng", "note", "rec", "bclose")
"""The planner's output queues (want_<port> / <port>_ready): a step goes only when all it
pushes are taken."""


def plan_cycle(v: dict[str, int]) -> str:
    """What the RX planner (rx_split_dma) did in one cycle, from its signals sampled in that
    cycle: a step that went (`piece`: a frame's payload piece with its header, range, note and
    record; `flush`: the held payload beat written; `close`: a completion batch closed on its
    own; `drop`, `abort`), a pending write command pushed (`pending payload command`: the
    piece's when the header took the port; `pending batch command`: the batch that closed with
    a record), a step that waited for an output queue (`stalled: <port>`), or no step (`frame
    waits for a header descriptor` / `... for payload descriptors`, `no frame in stage B`)."""
    if v["pcmd_v_q"]:
        return "pending payload command"
    if v["bcmd_v_q"]:
        return "pending batch command"
    step = PLAN_STEPS[v["step"]] if v["step"] < len(PLAN_STEPS) else f"step {v['step']}"
    if step != "none":
        if v["step_go"]:
            return step
        for port in PLAN_PORTS:
            if v[f"want_{port}"] and not v[f"{port}_ready"]:
                return f"stalled: {port}"
        return f"stalled: {step}"
    if not v["b_valid_q"]:
        return "no frame in stage B"
    if not (v["hdr_desc_valid"] >> v["q"]) & 1 and v["first"]:
        return "frame waits for a header descriptor"
    return "frame waits for payload descriptors"


class CycleProbe:
    """Every cycle: the planner's activity (`plan_cycle`) and whether the DMA write port's AW
    and W channels moved (an address, a beat), kept with the cycle's time so that a window can
    be counted afterwards. The planner's category is None when the build does not expose the planner's signals
    (the counts of the channels are kept anyway)."""

    NAMES = ("pcmd_v_q", "bcmd_v_q", "step", "step_go", "b_valid_q", "first", "q", "hdr_desc_valid") + tuple(
        n for port in PLAN_PORTS for n in (f"want_{port}", f"{port}_ready"))

    def __init__(self, dut) -> None:
        self.dut = dut
        self.samples: list[tuple[float, str | None, bool, bool]] = []
        self.handles: dict[str, Any] | None
        try:
            plan = dut.u_dma.u_plan
            self.handles = {n: getattr(plan, n) for n in self.NAMES}
        except AttributeError:
            self.handles = None

    async def run(self) -> None:
        dut = self.dut
        while True:
            await RisingEdge(dut.clk)
            cat = None
            if self.handles is not None:
                cat = plan_cycle({n: int(h.value) for n, h in self.handles.items()})
            aw = bool(dut.m_axi_awvalid.value and dut.m_axi_awready.value)
            w = bool(dut.m_axi_wvalid.value and dut.m_axi_wready.value)
            self.samples.append((get_sim_time("ns"), cat, aw, w))

    def window(self, t_lo: float, t_hi: float) -> dict:
        """Counts over the cycles in (t_lo, t_hi]: cycles, the planner's categories (sorted by
        count), AW and W channel use (fraction of the cycles that moved an address / a beat)."""
        sel = [s for s in self.samples if t_lo < s[0] <= t_hi]
        n = len(sel)
        cats: dict[str, int] = {}
        for _, cat, _, _ in sel:
            if cat is not None:
                cats[cat] = cats.get(cat, 0) + 1
        return {"cycles": n,
                "planner": dict(sorted(cats.items(), key=lambda kv: -kv[1])) if self.handles is not None else None,
                "aw_busy": sum(s[2] for s in sel) / n if n else None,
                "w_busy": sum(s[3] for s in sel) / n if n else None}


async def measure(tb: NicTb, size: int, split: bool, mode: str = "base") -> dict:
    dut = tb.dut
    data_bytes = tb.data_bytes
    await tb.reset()
    n = frames_for(size)
    setup = await setup_rx(tb, n, size, split, mode)
    frames = bench_frames(size, n)
    cq_lo, cq_hi = setup.rxq.cq_base, setup.rxq.cq_base + 16 * setup.rxq.cq_size

    # (time, CQ.HW_IDX of queue 0) at every change: a batch moves it by several completions.
    cpl_times: list[tuple[float, int]] = []
    aw = {"bursts": 0, "beats": 0, "cpl_bursts": 0, "cpl_beats": 0}
    cpl_writes: list[CplWrite] = []
    # write bursts waiting for their response, per AXI ID (responses of one ID come in order);
    # None for a burst that is not a completion write
    pending_b: dict[int, list[CplWrite | None]] = {}
    last_beat_ns: list[float] = []            # the time of every tlast beat accepted on RX

    async def watch_completions() -> None:
        while True:
            await dut.u_dma.cq_hw_idx.value_change
            cpl_times.append((get_sim_time("ns"), int(dut.u_dma.cq_hw_idx.value) & 0xFFFF))

    async def watch_aw() -> None:
        while True:
            await RisingEdge(dut.clk)
            if dut.m_axi_awvalid.value and dut.m_axi_awready.value:
                beats = int(dut.m_axi_awlen.value) + 1
                aw["bursts"] += 1
                aw["beats"] += beats
                addr = int(dut.m_axi_awaddr.value)
                w: CplWrite | None = None
                if cq_lo <= addr < cq_hi:
                    aw["cpl_bursts"] += 1
                    aw["cpl_beats"] += beats
                    w = CplWrite(addr, beats * tb.dma_bytes)
                    cpl_writes.append(w)
                pending_b.setdefault(int(dut.m_axi_awid.value), []).append(w)
            if dut.m_axi_bvalid.value and dut.m_axi_bready.value:
                done = pending_b[int(dut.m_axi_bid.value)].pop(0)
                if done is not None:
                    done.t_resp = get_sim_time("ns")
            if dut.s_axis_rx_tvalid.value and dut.s_axis_rx_tready.value and dut.s_axis_rx_tlast.value:
                last_beat_ns.append(get_sim_time("ns"))

    watcher = cocotb.start_soon(watch_completions())
    aw_watcher = cocotb.start_soon(watch_aw())
    probe = CycleProbe(dut)
    probe_task = cocotb.start_soon(probe.run())
    t0 = get_sim_time("ns")
    for f in frames:
        await tb.send(f)
    await tb.wait_rx_idle()
    t_in = get_sim_time("ns")
    waited = 0
    while await tb.read32(regs.RX_FRAMES) + await tb.read32(regs.RX_DROP_FIFO) < n and waited < 2_000_000:
        await tb.delay(1000)
        waited += 1000
    await tb.delay(4000)                      # the last batch (rx-usecs) and its write response
    watcher.cancel()
    aw_watcher.cancel()
    probe_task.cancel()
    # the next measurement exports its own: without this a sweep of every size and mode
    # runs out of device memory
    tb.dev.release_dmabuf(setup.dmabuf)
    delivered = await tb.read32(regs.RX_FRAMES)
    fifo_drops = await tb.read32(regs.RX_DROP_FIFO)
    other_drops = sum([await tb.read32(getattr(regs, c)) for c in
                       ("RX_DROP_NO_HDR_BUF", "RX_DROP_NO_PAY_BUF", "RX_DROP_CQ_FULL")])
    beats_per_frame = -(-size // data_bytes)
    beats = n * beats_per_frame
    in_cycles = (t_in - t0) / CLK_NS
    cpf = bufs_per_frame(size, split)         # completions per frame: one per payload buffer
    # Steady state: completions between the first and the last change of CQ.HW_IDX (a change
    # may be a batch of several), over the cycles between them.
    out_cycles = (cpl_times[-1][0] - cpl_times[0][0]) / CLK_NS if len(cpl_times) > 1 else float("nan")
    frames_out = ((cpl_times[-1][1] - cpl_times[0][1]) & 0xFFFF) / cpf if cpl_times else 0
    in_frame_rate = n / in_cycles
    out_frame_rate = frames_out / out_cycles if out_cycles else float("nan")
    eth = eth100g_frames_per_cycle(size)
    return {
        "frame_bytes": size,
        "mode": mode,
        "settings": RX_MODES[mode],
        "split": split,
        "frames": n,
        "delivered": delivered,
        "fifo_drops": fifo_drops,
        "other_drops": other_drops,
        "mac_beats_per_frame": beats_per_frame,
        "input_beats_per_cycle": beats / in_cycles,
        "input_frames_per_cycle": in_frame_rate,
        "delivered_frames_per_cycle": out_frame_rate,
        "delivered_beats_per_cycle": out_frame_rate * beats_per_frame,
        "line_rate_fraction": min(1.0, out_frame_rate * beats_per_frame),
        "delivered_mpps": out_frame_rate * CLK_MHZ,
        "eth100g_frames_per_cycle": eth,
        "eth100g_fraction": out_frame_rate / eth,
        "write_bursts_per_frame": aw["bursts"] / delivered if delivered else None,
        "write_beats_per_frame": aw["beats"] / delivered if delivered else None,
        "cpl_write_beats_per_frame": aw["cpl_beats"] / delivered if delivered else None,
        "cpl_bytes_per_frame": 16 * cpf,
        "cpl_bus_bytes_per_frame": aw["cpl_beats"] * tb.dma_bytes / delivered if delivered else None,
        "completion_batches": len(cpl_times),
        "latency_cycles_last_frame": last_frame_latency_cycles(
            last_beat_ns[-1] if len(last_beat_ns) == n else None, cpl_writes,
            cq_lo + 16 * ((n * cpf - 1) % setup.rxq.cq_size), delivered == n),
        # where the steady state's cycles go (the same window as delivered_frames_per_cycle)
        "steady_cycles": probe.window(cpl_times[0][0], cpl_times[-1][0]) if len(cpl_times) > 1 else None,
    }


@cocotb.test()
async def run_linerate(dut) -> None:
    sizes = [int(s) for s in os.environ["BENCH_SIZES"].split(",")]
    splits = [s.strip() not in ("0", "off") for s in os.environ.get("BENCH_SPLIT", "1").split(",")]
    modes = [m.strip() for m in os.environ.get("BENCH_MODES", "base").split(",")]
    out_path = os.environ["BENCH_OUT"]
    results = []
    tb = NicTb(dut, cocotb.RANDOM_SEED)
    for mode in modes:
        for split in splits:
            for size in sizes:
                results.append(await measure(tb, size, split, mode))
                dut._log.info("bench mode=%s split=%d %5d B: %s", mode, split, size, results[-1])
    with open(out_path, "w") as fh:
        json.dump({"data_bits": tb.data_bytes * 8, "dma_bits": tb.dma_bytes * 8, "clk_ns": CLK_NS,
                   "results": results}, fh, indent=2)
