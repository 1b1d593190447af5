"""RX test environment on the RTL: queue bring-up with buffers in host and device memory,
the traffic loop (send, NAPI-style poll, check against the model, recycle), and a
multi-queue version in which RSS and flow steering decide where each frame goes, mirrored
into the golden model's classifier through the very register writes the driver makes.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from driver.rx_queue import RxQueue, RxQueueConfig
from models.host_memory import HostMemory
from models.nic_model import PlacementConfig
from models.rss import Classification, Classifier
from models.rx_parser import parse_frame
from tb.nic_tb import NicTb
from tb.rx_scoreboard import RxScoreboard

N_HDR_BUFS = 32
N_PAY_BUFS = 32
MAX_IN_FLIGHT = 12
STALL_LIMIT_NS = 200_000
MIN_FRAME = 60


async def bring_up(tb: NicTb, qcfg: RxQueueConfig, queue: int = 0, hw=None, *,
                   pay_in_host: bool = False) -> tuple[RxQueue, RxScoreboard]:
    """Rings of RX queue `queue`, header buffers in host memory, payload buffers in a dma-buf
    in device memory (in host memory with `pay_in_host`), and a scoreboard that owns those
    buffers. `hw` (default `tb`) is what the driver writes registers through."""
    rxq = RxQueue(hw or tb, queue, qcfg, dma_bytes=tb.dma_bytes)
    await rxq.alloc_rx_rings()
    cfg = PlacementConfig(enable=True, split_en=qcfg.tcp_data_split, hds_thresh=qcfg.hds_thresh,
                          hdr_buf_bytes=qcfg.hdr_buf_bytes, pay_buf_log2=qcfg.pay_buf_log2,
                          parse_bytes=int(tb.dut.PARSE_BYTES.value), pay_mpb=qcfg.pay_mpb,
                          pay_stride_log2=qcfg.pay_stride_log2)
    sb = RxScoreboard(tb.host, tb.dev, cfg, queue=queue, cq_size=rxq.cq_size, cq_base=rxq.cq_base)
    # Each header buffer starts on a DMA-width boundary (the driver's rule), so a size that is not
    # a multiple of the width (48 bytes on a 128-byte bus) leaves a gap after each buffer.
    hdr_stride = -(-qcfg.hdr_buf_bytes // tb.dma_bytes) * tb.dma_bytes
    hdr_base = tb.host.alloc(N_HDR_BUFS * hdr_stride)
    sb.hdr_bufs = {i: hdr_base + i * hdr_stride for i in range(N_HDR_BUFS)}
    if pay_in_host:
        pay_base = tb.host.alloc(N_PAY_BUFS * cfg.pay_buf_bytes)
        sb.pay_bufs = {0x100 + i: pay_base + i * cfg.pay_buf_bytes for i in range(N_PAY_BUFS)}
    else:
        dmabuf = tb.dev.export_dmabuf(N_PAY_BUFS * cfg.pay_buf_bytes, chunk_size=4 * 4096)
        sb.pay_bufs = {0x100 + i: dmabuf.offset_to_bus(i * cfg.pay_buf_bytes) for i in range(N_PAY_BUFS)}
    await rxq.enable()
    # Post as many as the rings hold; the rest stay with the scoreboard for later.
    await sb.post_hdr(rxq, list(sb.hdr_bufs)[:1 << qcfg.hdr_ring_log2])
    await sb.post_pay(rxq, list(sb.pay_bufs)[:1 << qcfg.pay_ring_log2])
    return rxq, sb


Route = Callable[[bytes, bool], tuple[int, Classification | None]]


async def run_queues(tb: NicTb, queues: Sequence[tuple[RxQueue, RxScoreboard]], frames: Sequence[bytes],
                     route: Route, bad_fcs: Sequence[bool] | None = None) -> None:
    """Send `frames` while a NAPI-style loop polls every queue, checks each delivered frame
    against the model on the queue `route` predicts, and recycles its buffers."""
    bad = list(bad_fcs) if bad_fcs is not None else [False] * len(frames)
    sent = 0
    idle_ns = 0

    def outstanding() -> int:
        return sum(sb.outstanding for _, sb in queues)

    while sent < len(frames) or outstanding():
        while sent < len(frames) and outstanding() < MAX_IN_FLIGHT:
            q, cls = route(frames[sent], bad[sent])
            queues[q][1].sent_frame(frames[sent], bad[sent], cls)
            await tb.send(frames[sent], bad[sent])
            sent += 1
        await tb.delay(400)
        progress = False
        for rxq, sb in queues:
            for frame in await rxq.napi_poll():
                progress = True
                hdr_ids, pay_ids = sb.check(frame)
                if hdr_ids:
                    await sb.post_hdr(rxq, hdr_ids)
                if pay_ids:
                    await sb.post_pay(rxq, pay_ids)
        idle_ns = 0 if progress else idle_ns + 400
        assert idle_ns < STALL_LIMIT_NS, \
            f"no completion for {STALL_LIMIT_NS} ns with {outstanding()} frames outstanding (sent {sent})"


async def run_traffic(tb: NicTb, rxq: RxQueue, sb: RxScoreboard, frames: Sequence[bytes],
                      bad_fcs: Sequence[bool] | None = None) -> None:
    """`run_queues` for one queue that receives everything (RSS and steering off)."""
    await run_queues(tb, [(rxq, sb)], frames, lambda f, b: (0, None), bad_fcs)


class MirrorHw:
    """The driver's hardware interface to the RTL that also hands every register write to
    the golden model's RSS/steering classifier, so both are programmed by the same driver
    calls (driver/ethtool.py) and the model predicts the RTL's queue for every frame."""

    def __init__(self, tb: NicTb, classifier: Classifier) -> None:
        self.tb = tb
        self.classifier = classifier

    @property
    def host(self) -> HostMemory:
        return self.tb.host

    async def read32(self, addr: int) -> int:
        return await self.tb.read32(addr)

    async def write32(self, addr: int, value: int) -> None:
        await self.tb.write32(addr, value)
        self.classifier.mmio_write(addr, value)

    async def delay(self, ns: int) -> None:
        await self.tb.delay(ns)


@dataclass
class MultiQueueEnv:
    """`num_queues` RX queues on the RTL, each with its own buffers and scoreboard, and the
    model classifier that mirrors the RTL's RSS and steering registers."""

    tb: NicTb
    hw: MirrorHw
    queues: list[tuple[RxQueue, RxScoreboard]]

    @classmethod
    async def create(cls, tb: NicTb, num_queues: int, qcfg: RxQueueConfig) -> MultiQueueEnv:
        hw = MirrorHw(tb, Classifier(int(tb.dut.NUM_RXQ.value)))
        queues = [await bring_up(tb, qcfg, q, hw) for q in range(num_queues)]
        return cls(tb, hw, queues)

    def route(self, frame: bytes, bad_fcs: bool) -> tuple[int, Classification | None]:
        """The queue the model says the frame goes to. Frames the ingress drops or whose
        headers lie are not classified (as in the RTL) and count on queue 0."""
        frame = bytes(frame)
        sb0 = self.queues[0][1]
        if bad_fcs or not MIN_FRAME <= len(frame) <= sb0.cfg.max_frame_len:
            return 0, None
        parse = parse_frame(frame, sb0.cfg.parse_bytes)
        if parse.hdr_err:
            return 0, None
        cls = self.hw.classifier.classify_frame(frame, parse)
        return cls.queue, cls

    async def run(self, frames: Sequence[bytes], bad_fcs: Sequence[bool] | None = None) -> None:
        await run_queues(self.tb, self.queues, frames, self.route, bad_fcs)

    @property
    def delivered_per_queue(self) -> list[int]:
        return [sb.checked for _, sb in self.queues]
