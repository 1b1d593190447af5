"""cocotb half of the RX metrics benchmark (see bench/rx_metrics.py).

`AxiMonitor` watches the handshakes of nic_top's ports every clock cycle without driving
anything: s_axis_rx (beats, frame ends and whether the ingress kept the frame), m_axi AW/W/B
(bursts, write strobes, completion records, write responses), AR/R (descriptor reads) and the
completion index register (`u_dma.cq_hw_idx`). From that it computes DMA efficiency, burst
histograms, outstanding transactions and per-frame latency, all in clock cycles.

Two cocotb tests:
- `dma_metrics`: per RX mode (bench/rx_linerate_sim.RX_MODES: completion batches and
  multi-packet buffers off, on, on with rx-usecs 2), split setting and frame size, a
  back-to-back train of frames into queue 0 (the line-rate bench's setup,
  bench/rx_linerate_sim.setup_rx), then a few isolated frames (one at a time, the NIC idle in
  between) for the unloaded latency.
- `devmem_goodput`: a long TCP stream steered by an n-tuple rule to a bound devmem queue,
  sent back to back, with the reference driver (NAPI on the queue's interrupt, page pools,
  recvmsg with devmem cmsgs, SO_DEVMEM_DONTNEED) running concurrently as the application.
"""
from __future__ import annotations

import itertools
import json
import os
from collections import Counter, deque
from dataclasses import dataclass, field

import cocotb
from cocotb.triggers import Event, First, RisingEdge, Timer

from bench.rx_linerate_sim import RX_MODES, bench_frames, bufs_per_frame, setup_rx
from driver import ethtool, regs
from models.formats import CPL_BYTES, RxCompletion
from tb.frames import Flow
from tb.nic_tb import CLK_NS, DEV_BASE, DEV_SIZE, NicTb
from tb.scenario import RSS_KEY, Reader, Rig, RtlEnv, TcpPeer, make_data

KINDS = ("header", "payload", "completion", "other")


def percentiles(xs: list[int]) -> dict | None:
    """Nearest-rank percentiles of cycle counts."""
    if not xs:
        return None
    s = sorted(xs)
    n = len(s)

    def p(q: float) -> int:
        return s[max(0, min(n - 1, -(-int(q * n) // 100) - 1))]

    return {"n": n, "min": s[0], "p50": p(50), "p90": p(90), "p99": p(99), "max": s[-1],
            "mean": round(sum(s) / n, 2)}


@dataclass
class _Burst:
    addr: int
    beats: int
    id: int
    kind: str
    aw_cycle: int
    seen: int = 0
    data: bytearray | None = None
    wlast_cycle: int = 0
    b_cycle: int = 0
    records: list[RxCompletion] = field(default_factory=list)
    """A completion burst's records (a batch holds several)."""


@dataclass
class _Stats:
    rx_beats: int = 0
    rx_frames: int = 0
    rx_first: int = 0
    rx_last: int = 0
    kept_tlast: list[int] = field(default_factory=list)     # cycle of each kept frame's tlast
    aw_hist: dict[str, Counter] = field(default_factory=lambda: {k: Counter() for k in KINDS})
    w_beats: Counter = field(default_factory=Counter)
    w_bytes: Counter = field(default_factory=Counter)
    w_first: int = 0
    w_last: int = 0
    dev_bytes: int = 0
    dev_first: int = 0
    dev_last: int = 0
    cpls: list[tuple[RxCompletion, _Burst]] = field(default_factory=list)  # completions in W order
    hw_idx: dict[int, list[int]] = field(default_factory=dict)  # queue -> cycle per increment
    cycles: int = 0
    wr_sum: int = 0
    wr_max: int = 0
    wr_busy: int = 0
    rd_sum: int = 0
    rd_max: int = 0
    rd_busy: int = 0
    ar: int = 0
    r_beats: int = 0
    wr_hist: Counter = field(default_factory=Counter)
    rd_hist: Counter = field(default_factory=Counter)


class AxiMonitor:
    """Passive per-cycle monitor (see the module doc). `regions` maps bus address ranges to
    what the NIC writes there; statistics accumulate while `measuring` is set (the in-flight
    bookkeeping always runs) and `reset_stats` starts a new window."""

    def __init__(self, dut, regions: list[tuple[int, int, str]] | None = None) -> None:
        self.dut = dut
        self.db = len(dut.m_axi_wdata) // 8
        self.regions = regions or []
        self.cycle = 0
        self.measuring = False
        self.aw_q: deque[_Burst] = deque()
        self.b_wait: dict[int, deque[_Burst]] = {}
        self.wr_out = 0
        self.rd_out = 0
        self.keep_sig = getattr(dut, "frame_keep", None)
        self.hw_idx_sig = dut.u_dma.cq_hw_idx
        self.nq = int(dut.NUM_RXQ.value)
        self.hw_prev = int(self.hw_idx_sig.value)
        self.s = _Stats()
        self._task = cocotb.start_soon(self._run())

    def reset_stats(self) -> None:
        self.s = _Stats()

    def kind(self, addr: int) -> str:
        for lo, hi, k in self.regions:
            if lo <= addr < hi:
                return k
        return "other"

    async def _run(self) -> None:
        d = self.dut
        clk = d.clk
        db = self.db
        while True:
            await RisingEdge(clk)
            self.cycle += 1
            c = self.cycle
            s = self.s
            m = self.measuring
            # ---- RX port
            if d.s_axis_rx_tvalid.value and d.s_axis_rx_tready.value:
                if m:
                    s.rx_beats += 1
                    s.rx_first = s.rx_first or c
                    s.rx_last = c
                if d.s_axis_rx_tlast.value:
                    keep = True if self.keep_sig is None else bool(self.keep_sig.value)
                    if m:
                        s.rx_frames += 1
                        if keep:
                            s.kept_tlast.append(c)
            # ---- AW
            if d.m_axi_awvalid.value and d.m_axi_awready.value:
                addr = int(d.m_axi_awaddr.value)
                beats = int(d.m_axi_awlen.value) + 1
                kind = self.kind(addr)
                b = _Burst(addr, beats, int(d.m_axi_awid.value), kind, c)
                if kind == "completion":
                    b.data = bytearray()
                self.aw_q.append(b)
                self.wr_out += 1
                if m:
                    s.aw_hist[kind][beats] += 1
            # ---- W
            if d.m_axi_wvalid.value and d.m_axi_wready.value:
                b = self.aw_q[0]
                strb = int(d.m_axi_wstrb.value)
                n = strb.bit_count()
                if m:
                    s.w_beats[b.kind] += 1
                    s.w_bytes[b.kind] += n
                    s.w_first = s.w_first or c
                    s.w_last = c
                    if DEV_BASE <= b.addr < DEV_BASE + DEV_SIZE:
                        s.dev_bytes += n
                        s.dev_first = s.dev_first or c
                        s.dev_last = c
                if b.data is not None:
                    raw = int(d.m_axi_wdata.value).to_bytes(db, "little")
                    b.data += bytes(raw[i] for i in range(db) if strb >> i & 1)
                b.seen += 1
                if d.m_axi_wlast.value:
                    self.aw_q.popleft()
                    b.wlast_cycle = c
                    self.b_wait.setdefault(b.id, deque()).append(b)
                    if b.data is not None:
                        if len(b.data) % CPL_BYTES == 0:
                            b.records = [RxCompletion.unpack(bytes(b.data[i:i + CPL_BYTES]))
                                         for i in range(0, len(b.data), CPL_BYTES)]
                        if m:
                            s.cpls.extend((r, b) for r in b.records)
            # ---- B
            if d.m_axi_bvalid.value and d.m_axi_bready.value:
                waiting = self.b_wait.get(int(d.m_axi_bid.value))
                if waiting:
                    waiting.popleft().b_cycle = c
                self.wr_out -= 1
            # ---- AR / R
            if d.m_axi_arvalid.value and d.m_axi_arready.value:
                self.rd_out += 1
                if m:
                    s.ar += 1
            if d.m_axi_rvalid.value and d.m_axi_rready.value:
                if m:
                    s.r_beats += 1
                if d.m_axi_rlast.value:
                    self.rd_out -= 1
            # ---- completion index
            v = int(self.hw_idx_sig.value)
            if v != self.hw_prev:
                if m:
                    for q in range(self.nq):
                        delta = ((v >> (16 * q)) - (self.hw_prev >> (16 * q))) & 0xFFFF
                        if delta and delta < 0x8000:
                            s.hw_idx.setdefault(q, []).extend([c] * delta)
                self.hw_prev = v
            # ---- outstanding
            if m:
                s.cycles += 1
                s.wr_sum += self.wr_out
                s.rd_sum += self.rd_out
                s.wr_max = max(s.wr_max, self.wr_out)
                s.rd_max = max(s.rd_max, self.rd_out)
                s.wr_busy += self.wr_out > 0
                s.rd_busy += self.rd_out > 0
                s.wr_hist[self.wr_out] += 1
                s.rd_hist[self.rd_out] += 1

    # ------------------------------------------------------------------ results
    def dma_summary(self) -> dict:
        s = self.s
        db = self.db
        per_kind = {}
        for k in KINDS:
            if s.w_beats[k]:
                per_kind[k] = {"beats": s.w_beats[k], "bytes": s.w_bytes[k],
                               "bytes_per_beat": round(s.w_bytes[k] / s.w_beats[k], 2),
                               "efficiency": round(s.w_bytes[k] / (s.w_beats[k] * db), 4),
                               "bursts": sum(s.aw_hist[k].values()),
                               "burst_beats_hist": {str(b): n for b, n in sorted(s.aw_hist[k].items())}}
        beats = sum(s.w_beats.values())
        nbytes = sum(s.w_bytes.values())
        hist: Counter = Counter()
        for k in KINDS:
            hist.update(s.aw_hist[k])
        w_span = s.w_last - s.w_first + 1 if s.w_first else 0
        return {
            "bus_bytes": db,
            "write_beats": beats,
            "write_bytes": nbytes,
            "bytes_per_write_beat": round(nbytes / beats, 2) if beats else None,
            "write_efficiency": round(nbytes / (beats * db), 4) if beats else None,
            "w_channel_busy": round(beats / w_span, 4) if w_span else None,
            "bursts": sum(hist.values()),
            "burst_beats_hist": {str(b): n for b, n in sorted(hist.items())},
            "mean_burst_beats": round(beats / sum(hist.values()), 2) if hist else None,
            "by_kind": per_kind,
            "outstanding_writes": {"max": s.wr_max,
                                   "mean": round(s.wr_sum / s.cycles, 3) if s.cycles else None,
                                   "mean_while_busy": round(s.wr_sum / s.wr_busy, 3) if s.wr_busy else None,
                                   "hist": {str(k): v for k, v in sorted(s.wr_hist.items())}},
            "outstanding_reads": {"max": s.rd_max,
                                  "mean": round(s.rd_sum / s.cycles, 3) if s.cycles else None,
                                  "mean_while_busy": round(s.rd_sum / s.rd_busy, 3) if s.rd_busy else None,
                                  "reads": s.ar, "read_beats": s.r_beats},
            "window_cycles": s.cycles,
        }

    def frame_latencies(self, queue: int = 0, first_frame: int = 0) -> dict:
        """Per kept frame (in order, all on `queue`), cycles from its tlast handshake to the W
        handshake of its last (EOP) completion's last beat, to CQ.HW_IDX counting that
        completion, and to the completion burst's write response."""
        s = self.s
        cpls = [(r, b) for r, b in s.cpls if r.queue == queue]
        hw = s.hw_idx.get(queue, [])
        eop_w, eop_hw, eop_b = [], [], []
        for i, (r, b) in enumerate(cpls):
            if r.eop:
                eop_w.append(b.wlast_cycle)
                eop_b.append(b.b_cycle)
                eop_hw.append(hw[i] if i < len(hw) else 0)
        tl = s.kept_tlast[first_frame:]
        eop_w, eop_hw, eop_b = eop_w[first_frame:], eop_hw[first_frame:], eop_b[first_frame:]
        n = min(len(tl), len(eop_w))
        return {
            "frames": n,
            "unmatched": abs(len(tl) - len(eop_w)),
            "tlast_to_cpl_w": percentiles([eop_w[i] - tl[i] for i in range(n)]),
            "tlast_to_hw_idx": percentiles([eop_hw[i] - tl[i] for i in range(n) if eop_hw[i]]),
            "tlast_to_cpl_b": percentiles([eop_b[i] - tl[i] for i in range(n) if eop_b[i]]),
        }


async def wait_quiet(tb: NicTb, mon: AxiMonitor, cycles: int = 64, limit: int = 4_000_000) -> None:
    """Until nothing is in flight on the write or read channels and the RX FIFO has been empty
    long enough for the last frame to be written (checked as `cycles` quiet cycles)."""
    quiet = 0
    last = -1
    for _ in range(limit // CLK_NS):
        await RisingEdge(tb.dut.clk)
        busy = mon.wr_out or mon.rd_out or mon.aw_q
        w = mon.s.w_last
        if busy or w != last:
            quiet = 0
            last = w
        else:
            quiet += 1
            if quiet >= cycles:
                return
    raise AssertionError("the NIC did not go quiet")


# ------------------------------------------------------------------------------ dma_metrics
@cocotb.test()
async def dma_metrics(dut) -> None:
    sizes = [int(s) for s in os.environ["BENCH_SIZES"].split(",")]
    splits = [s.strip() not in ("0", "off") for s in os.environ.get("BENCH_SPLIT", "1,0").split(",")]
    max_frames = int(os.environ.get("BENCH_MAX_FRAMES", "200"))
    modes = [m.strip() for m in os.environ.get("BENCH_MODES", "base").split(",")]
    isolated = int(os.environ.get("BENCH_ISOLATED", "16"))
    out_path = os.environ["BENCH_OUT"] + ".dma.json"
    tb = NicTb(dut, cocotb.RANDOM_SEED)
    await tb.reset()
    mon = AxiMonitor(dut)
    results = []
    for mode, split, size in itertools.product(modes, splits, sizes):
        n = max(48, min(max_frames, 2 * 16384 // size))
        await tb.reset()
        setup = await setup_rx(tb, n + isolated, size, split, mode)
        mon.regions = setup.regions()
        frames = bench_frames(size, n + isolated)
        # back to back
        await wait_quiet(tb, mon)
        mon.reset_stats()
        mon.measuring = True
        for f in frames[:n]:
            await tb.send(f)
        await tb.wait_rx_idle()
        await wait_quiet(tb, mon)
        mon.measuring = False
        dma = mon.dma_summary()
        lat = mon.frame_latencies()
        s = mon.s
        fifo_drops = s.rx_frames - len(s.kept_tlast)
        rx_span = s.rx_last - s.rx_first + 1
        # isolated frames: one at a time, the NIC idle in between
        mon.reset_stats()
        mon.measuring = True
        for f in frames[n:]:
            before = len(mon.s.cpls)
            await tb.send(f)
            await tb.wait_rx_idle()
            while len(mon.s.cpls) < before + bufs_per_frame(size, split):
                await RisingEdge(dut.clk)
            await wait_quiet(tb, mon, cycles=32)
        mon.measuring = False
        iso = mon.frame_latencies()
        drops = {c: await tb.read32(getattr(regs, c)) for c in
                 ("RX_DROP_NO_HDR_BUF", "RX_DROP_NO_PAY_BUF", "RX_DROP_CQ_FULL")}
        res = {"frame_bytes": size, "mode": mode, "settings": RX_MODES[mode], "split": split,
               "frames": n, "fifo_drops": fifo_drops,
               "other_drops": sum(drops.values()),
               "rx_beats_per_cycle": round(s.rx_beats / rx_span, 4) if s.rx_first else None,
               "dma": dma, "latency_back_to_back": lat, "latency_isolated": iso}
        results.append(res)
        dut._log.info("metrics %s split=%d %5d B: %.2f B/beat, bursts %s, out wr max %d rd max %d, "
                      "lat b2b p50 %s iso p50 %s", mode, split, size, dma["bytes_per_write_beat"] or 0,
                      dma["burst_beats_hist"], dma["outstanding_writes"]["max"],
                      dma["outstanding_reads"]["max"],
                      (lat["tlast_to_cpl_w"] or {}).get("p50"), (iso["tlast_to_cpl_w"] or {}).get("p50"))
    with open(out_path, "w") as fh:
        json.dump({"data_bits": tb.data_bytes * 8, "dma_bits": tb.dma_bytes * 8, "clk_ns": CLK_NS,
                   "results": results}, fh, indent=2)


# ------------------------------------------------------------------------------ goodput
TCP_TS_OPTION = 12           # NOP, NOP, timestamps: what Linux puts in every data segment


@dataclass
class TsPeer(TcpPeer):
    """The TCP sender with the timestamp option in every segment, as Linux sends: MSS 1448
    at MTU 1500 (frame 1514 bytes), 8948 at MTU 9000 (frame 9014 bytes)."""

    @property
    def mss(self) -> int:
        return self.flow.max_payload(self.mtu) - TCP_TS_OPTION

    def frame(self, seq: int, payload: bytes = b'', flags: str = 'PA', window: int = 65535,
              ack: int | None = None, options: list | None = None) -> bytes:
        """TcpPeer.frame with NOP, NOP, timestamps unless the caller names other options
        (the SYN names its MSS option)."""
        assert not self.flow.ipv6
        return super().frame(seq, payload, flags, window, ack,
                             options if options is not None else [('NOP', None), ('NOP', None), ('Timestamp', (1, 0))])


async def goodput_run(tb: NicTb, mon: AxiMonitor, mtu: int, size: int, rx_pending: int,
                      pages: int, poll_ns: int) -> dict:
    dut = tb.dut
    await tb.reset()
    nq = 2                          # queue 0: RSS for everything else; queue 1: the devmem flow
    env = RtlEnv(tb, seed=1, steering=True)
    rig = await Rig.create(env, rx_pending=rx_pending, channels=nq, num_rxq=nq, mtu=mtu)
    nd = rig.netdev
    await ethtool.set_rx_flow_hash(nd.hw, {'ip4', 'tcp4', 'udp4', 'ip6', 'tcp6', 'udp6'})
    await ethtool.set_rxfh(nd.hw, key=RSS_KEY, num_queues=nq)
    await ethtool.set_rxfh_equal(nd.hw, nq - 1, nq)
    rules = ethtool.NtupleRules(nd.hw, nd.real_num_rx_queues)
    await rules.clear()
    flow = Flow(sport=40000, dport=5201)
    peer = TsPeer(flow, mtu=mtu)
    await rules.add(ethtool.NtupleSpec('tcp4', nq - 1, src_ip=peer.src, dst_ip=peer.dst,
                                       src_port=flow.sport, dst_port=flow.dport))
    b = await rig.bind([nq - 1], pages=pages)
    sock = await rig.connect(peer, rig.listen(5201))
    reader = Reader(sock, {b.id: b.dmabuf})
    want = make_data('random', size, seed=7)
    peer.write(want)
    peer.shutdown()
    q = nd.rx_queue(nq - 1)
    ring = q.ring
    assert ring is not None
    mon.regions = [(ring.cq_base, ring.cq_base + 16 * ring.cq_size, "completion"),
                   (DEV_BASE, DEV_BASE + DEV_SIZE, "payload")]
    await wait_quiet(tb, mon)
    stats = {"polls": 0, "empty_polls": 0, "irq_wakeups": 0, "timeouts": 0,
             "full_budget_polls": 0, "window_waits": 0, "segments": 0}
    progress = Event()
    limit = [1 << 62]               # stream offset the receiver's window allows up to

    def ack() -> None:
        """What the receiver's ACK would tell the sender now, with no wire delay (the bench
        has no TX path to carry it): the window edge it advertises (`select_window`, as
        `tcp_send_ack` does) and the data acknowledged."""
        sk = sock.sk
        if sk is not None and hasattr(sk, "select_window") and hasattr(sk, "rcv_wup"):
            sk.select_window()
            limit[0] = ((sk.rcv_wup + sk.rcv_wnd) - peer.seq_of(0)) & 0xFFFF_FFFF
        progress.set()

    def take_frames() -> list[bytes]:
        out = []
        while peer.snd_nxt < peer.end:
            seg = peer.segment_at(peer.snd_nxt)
            end = peer.snd_nxt + len(seg.payload)
            if end > limit[0]:
                break
            out.append(peer.segment_frame(seg))
            peer.snd_nxt = end + int("F" in seg.flags)
        return out

    async def application() -> None:
        """NAPI on the bound queue's interrupt (poll until a poll finds nothing, then re-arm
        and sleep), the application draining the socket and returning tokens."""
        irq = dut.irq
        while not reader.eof:
            n = await nd.napi_poll(nq - 1, budget=64)
            stats["polls"] += 1
            stats["full_budget_polls"] += n == 64
            reader.drain()
            ack()
            if n == 0:
                stats["empty_polls"] += 1
                await ring.arm_irq()
                t = await First(irq.value_change, Timer(poll_ns, unit="ns"))
                if isinstance(t, Timer):
                    stats["timeouts"] += 1
                else:
                    stats["irq_wakeups"] += 1

    async def sender() -> None:
        """The far end: every segment the window allows goes straight onto the RX port
        queue (back to back); when the window is closed, wait for the next ACK."""
        while peer.snd_nxt < peer.end:
            frames = take_frames()
            if frames:
                stats["segments"] += len(frames)
                await rig.send(frames)
            else:
                stats["window_waits"] += 1
                progress.clear()
                await progress.wait()

    ack()
    mon.reset_stats()
    mon.measuring = True
    app = cocotb.start_soon(application())
    snd = cocotb.start_soon(sender())
    for _ in range(20_000):
        if reader.eof:
            break
        await Timer(1000, unit="ns")
    await wait_quiet(tb, mon)
    mon.measuring = False
    blast_complete = reader.eof
    snd.cancel()
    app.cancel()
    retransmits = 0
    if not blast_complete:
        # Frames were dropped: finish with go-back-N from the last ACK (not in the goodput).
        peer.ack(sock.tcp_info().rcv_nxt)
        peer.rewind()
        await rig.transfer(peer, reader)
        retransmits = peer.retransmits
    frame_bytes = len(peer.segment_frame(peer.segment_at(0)))
    s = mon.s
    hw = await nd.hw_stats()
    db = tb.data_bytes
    cycles = s.dev_last - s.rx_first + 1
    goodput = s.dev_bytes / cycles
    mss = peer.mss
    beats = -(-frame_bytes // db)
    exact = bytes(reader.got) == want
    cpu_reads = tb.dev.cpu_reads
    # Steady state: payload of every frame but the first, over the cycles between the first
    # and the last frame's final completion (no pipeline fill or drain).
    cpls_q = [(r, b) for r, b in s.cpls if r.queue == nq - 1]
    eop_at = [i for i, (r, _) in enumerate(cpls_q) if r.eop]
    eops = [cpls_q[i][1] for i in eop_at]
    first_eop = eop_at[0] if eop_at else 0
    later_pay = sum(r.pay_len for r, _ in cpls_q[first_eop + 1:])
    steady = later_pay / (eops[-1].wlast_cycle - eops[0].wlast_cycle) if len(eops) > 1 else float("nan")
    res = {
        "mtu": mtu, "mss": mss, "frame_bytes": frame_bytes, "stream_bytes": size,
        "frames": stats["segments"], "ring_entries": rx_pending, "dmabuf_pages": pages,
        "poll_timeout_ns": poll_ns,
        "cycles": cycles,
        "input_cycles": s.rx_last - s.rx_first + 1,
        "input_beats_per_cycle": round(s.rx_beats / (s.rx_last - s.rx_first + 1), 4),
        "payload_bytes_landed": s.dev_bytes,
        "goodput_bytes_per_cycle": round(goodput, 4),
        "goodput_fraction_of_mac_line_rate": round(goodput / db, 5),
        "theoretical": {
            "mac_stream_beats": round(mss / (beats * db), 5),
            "mac_stream_bytes": round(mss / frame_bytes, 5),
            "wire": round(mss / (frame_bytes + 4 + 20), 5),
        },
        "goodput_fraction_of_theoretical_mac_stream": round(goodput / db / (mss / (beats * db)), 5),
        "steady_state_bytes_per_cycle": round(steady, 4),
        "steady_state_fraction_of_mac_line_rate": round(steady / db, 5),
        "goodput_gbps_at_clk": round(goodput * 8 / CLK_NS, 3),
        "byte_exact": exact,
        "cpu_reads_of_device_memory": cpu_reads,
        "devmem_bytes_read": reader.devmem_bytes,
        "frames_on_devmem_queue": nd.qstats(nq - 1).packets,
        "hw_drops": {k: v for k, v in hw.items() if k.startswith("RX_DROP") and v},
        "alloc_fail": nd.qstats(nq - 1).alloc_fail,
        "completed_in_one_pass": blast_complete,
        "retransmits": retransmits,
        "driver": stats,
        "dma": mon.dma_summary(),
        "latency": mon.frame_latencies(queue=nq - 1),
    }
    assert exact, "devmem stream read back through the GPU differs from what was sent"
    assert cpu_reads == 0, "the CPU read device memory"
    assert reader.devmem_bytes == size
    sock.close()
    await rig.finish()
    env.close()
    return res


@cocotb.test()
async def devmem_goodput(dut) -> None:
    mtus = [int(m) for m in os.environ.get("GOODPUT_MTUS", "1500,9000").split(",")]
    size = int(os.environ.get("GOODPUT_BYTES", str(2 << 20)))
    rx_pending = int(os.environ.get("GOODPUT_RING", "256"))
    pages = int(os.environ.get("GOODPUT_PAGES", "512"))
    poll_ns = int(os.environ.get("GOODPUT_POLL_NS", "2000"))
    out_path = os.environ["BENCH_OUT"] + ".goodput.json"
    tb = NicTb(dut, cocotb.RANDOM_SEED)
    await tb.reset()
    mon = AxiMonitor(dut)
    results = []
    for mtu in mtus:
        r = await goodput_run(tb, mon, mtu, size, rx_pending, pages, poll_ns)
        results.append(r)
        dut._log.info("goodput mtu %d: %.2f%% of line rate, %.2f%% of theoretical, exact %s, drops %s",
                      mtu, 100 * r["goodput_fraction_of_mac_line_rate"],
                      100 * r["goodput_fraction_of_theoretical_mac_stream"], r["byte_exact"], r["hw_drops"])
    with open(out_path, "w") as fh:
        json.dump({"data_bits": tb.data_bytes * 8, "dma_bits": tb.dma_bytes * 8, "clk_ns": CLK_NS,
                   "results": results}, fh, indent=2)
