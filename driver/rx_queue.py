"""One RX queue's rings: header-buffer ring, payload-buffer ring and completion ring.

The register and memory layout is docs/dma-formats.md; the names follow what a Linux NIC
driver calls these steps (`alloc_rx_rings`, `post_rx_buffers`, `napi_poll`). Buffers are
handed in by the caller: a page pool, a dma-buf binding or a test decides where they live.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from driver import regs
from driver.hw import NicHw
from driver.ring import Ring, program_ring, wait_not_busy
from models.formats import (CPL_BYTES, DESC_BYTES, RX_MPB_MAX_STRIDES, RX_MPB_MIN_STRIDE_LOG2,
                            RxCompletion, RxDesc)

MAX_RING_LOG2 = 15
COALESCE_USECS_MAX = (1 << regs.RXQ_COALESCE_USECS.width) - 1
"""`RXQ.COALESCE.usecs` is 16 bits."""


class RingFullError(RuntimeError):
    """More buffers were posted than the ring has free entries."""


@dataclass(frozen=True)
class RxBuffer:
    """A buffer the driver lends the NIC: its bus address and the id the completion returns."""

    addr: int
    buf_id: int


@dataclass
class RxFrame:
    """One received frame as the completions describe it (SOP .. EOP). `raw` holds the
    completion ring's bytes the completions were decoded from, when the driver kept them."""

    completions: list[RxCompletion]
    raw: list[bytes] = field(default_factory=list, repr=False)

    @property
    def first(self) -> RxCompletion:
        return self.completions[0]

    @property
    def split(self) -> bool:
        return self.first.split

    @property
    def hdr_len(self) -> int:
        return self.first.hdr_len

    @property
    def hdr_buf_id(self) -> int | None:
        return self.first.hdr_buf_id if self.first.hdr_valid else None

    @property
    def fragments(self) -> list[tuple[int, int]]:
        """(payload buffer id, bytes) per payload buffer used, in order."""
        return [(c.pay_buf_id, c.pay_len) for c in self.completions if c.pay_valid]

    @property
    def payload_len(self) -> int:
        return sum(n for _, n in self.fragments)

    @property
    def pieces(self) -> list[RxCompletion]:
        """The completions that carry a payload piece (`PAY_VALID`), in order."""
        return [c for c in self.completions if c.pay_valid]


@dataclass
class RxQueueConfig:
    """Per-queue settings; the names mirror ethtool's (rx ring sizes, tcp-data-split,
    hds-thresh, rx-usecs, rx-frames). `pay_mpb` turns on multi-packet payload buffers with
    strides of `2^pay_stride_log2` bytes (docs/rx-rules.md)."""

    hdr_ring_log2: int = 8
    pay_ring_log2: int = 9
    cq_log2: int = 10
    hdr_buf_bytes: int = 256
    pay_buf_log2: int = 12
    tcp_data_split: bool = True
    hds_thresh: int = 0
    pay_mpb: bool = False
    pay_stride_log2: int = 6
    rx_usecs: int = 0
    rx_frames: int = 1

    @property
    def pay_buf_bytes(self) -> int:
        return 1 << self.pay_buf_log2

    def validate(self, dma_bytes: int) -> None:
        for name in ("hdr_ring_log2", "pay_ring_log2", "cq_log2"):
            v = getattr(self, name)
            if not 1 <= v <= MAX_RING_LOG2:
                raise ValueError(f"{name}={v}: ring sizes are 2^1 .. 2^{MAX_RING_LOG2} entries")
        if not 0 < self.hdr_buf_bytes < (1 << 16):
            raise ValueError(f"hdr_buf_bytes={self.hdr_buf_bytes} must be 1..65535")
        if not dma_bytes.bit_length() - 1 <= self.pay_buf_log2 <= 15:
            raise ValueError(f"pay_buf_log2={self.pay_buf_log2} must be log2(DMA width)..15")
        if not 0 <= self.hds_thresh < (1 << 16):
            raise ValueError(f"hds_thresh={self.hds_thresh} must be 0..65535")
        lo = max(RX_MPB_MIN_STRIDE_LOG2, self.pay_buf_log2 - (RX_MPB_MAX_STRIDES.bit_length() - 1))
        if self.pay_mpb and not lo <= self.pay_stride_log2 <= self.pay_buf_log2:
            raise ValueError(f"pay_stride_log2={self.pay_stride_log2} must be {lo}..{self.pay_buf_log2} "
                             f"(strides of 16 bytes or more, at most {RX_MPB_MAX_STRIDES} per buffer)")
        check_coalesce(self.rx_usecs, self.rx_frames)


def check_coalesce(usecs: int, frames: int, frames_max: int | None = None, kind: str = 'rx') -> None:
    """The completion-batch settings the NIC takes (docs/rx-rules.md section 5; `kind` 'tx':
    docs/tx.md "Completion moderation", the same register layout): ValueError otherwise.
    `frames_max` is `COALESCE.frames_max` when known."""
    if not 0 <= usecs <= COALESCE_USECS_MAX:
        raise ValueError(f"{kind}-usecs {usecs}: 0..{COALESCE_USECS_MAX}")
    top = frames_max if frames_max is not None else (1 << regs.RXQ_COALESCE_FRAMES.width) - 1
    if not 0 <= frames <= top:
        raise ValueError(f"{kind}-frames {frames}: 0..{top}")
    if usecs == 0 and frames == 0:
        raise ValueError(f"{kind}-usecs and {kind}-frames both 0 would never close a batch on its own")


@dataclass
class RxQueue:
    """Driver state of RX queue `index`."""

    hw: NicHw
    index: int
    config: RxQueueConfig = field(default_factory=RxQueueConfig)
    dma_bytes: int = 8
    _hdr: Ring | None = None
    _pay: Ring | None = None
    _cq: Ring | None = None
    _pending: list[RxCompletion] = field(default_factory=list)    # a frame's completions so far
    _pending_raw: list[bytes] = field(default_factory=list)       # and their ring bytes
    enabled: bool = False

    @property
    def cq_base(self) -> int:
        if self._cq is None:
            raise RuntimeError(f"rx queue {self.index}: alloc_rx_rings() first")
        return self._cq.base

    @property
    def cq_size(self) -> int:
        if self._cq is None:
            raise RuntimeError(f"rx queue {self.index}: alloc_rx_rings() first")
        return self._cq.size

    def _reg(self, offset: int) -> int:
        return regs.rxq_reg(self.index, offset)

    async def _write_ring_regs(self, ring_off: int, ring: Ring) -> None:
        await program_ring(self.hw, regs.rxq_reg(self.index, 0), ring_off, ring)

    async def alloc_rx_rings(self) -> None:
        """Allocate the three rings in host memory, zero the completion ring, program the queue."""
        cfg = self.config
        cfg.validate(self.dma_bytes)
        if self.enabled:
            raise RuntimeError(f"rx queue {self.index}: disable it before reallocating its rings")
        host = self.hw.host
        self._hdr = Ring(host.alloc(DESC_BYTES << cfg.hdr_ring_log2), cfg.hdr_ring_log2)
        self._pay = Ring(host.alloc(DESC_BYTES << cfg.pay_ring_log2), cfg.pay_ring_log2)
        self._cq = Ring(host.alloc(CPL_BYTES << cfg.cq_log2), cfg.cq_log2)
        host.fill(self._cq.base, CPL_BYTES << cfg.cq_log2, 0)
        await self._write_ring_regs(regs.RXQ_HDR_RING, self._hdr)
        await self._write_ring_regs(regs.RXQ_PAY_RING, self._pay)
        await self._write_ring_regs(regs.RXQ_CQ, self._cq)
        await self.hw.write32(self._reg(regs.RXQ_HDS_THRESH), cfg.hds_thresh)
        await self.hw.write32(
            self._reg(regs.RXQ_BUF_SIZE),
            regs.RXQ_BUF_SIZE_HDR_BUF_BYTES.put(cfg.hdr_buf_bytes) | regs.RXQ_BUF_SIZE_PAY_BUF_LOG2.put(cfg.pay_buf_log2)
            | regs.RXQ_BUF_SIZE_PAY_STRIDE_LOG2.put(cfg.pay_stride_log2),
        )
        await self.set_coalesce(cfg.rx_usecs, cfg.rx_frames)

    async def frames_max(self) -> int:
        """`COALESCE.frames_max`: the most completions one batch holds."""
        return regs.RXQ_COALESCE_FRAMES_MAX.get(await self.hw.read32(self._reg(regs.RXQ_COALESCE)))

    async def set_coalesce(self, usecs: int, frames: int) -> None:
        """Completion batching (`rx-usecs`, `rx-frames`; docs/rx-rules.md section 5); takes
        effect with the next batch, also while the queue runs. ValueError when out of range."""
        check_coalesce(usecs, frames)
        await self.hw.write32(self._reg(regs.RXQ_COALESCE),
                              regs.RXQ_COALESCE_USECS.put(usecs) | regs.RXQ_COALESCE_FRAMES.put(frames))
        self.config.rx_usecs, self.config.rx_frames = usecs, frames

    def pay_offset(self, cpl: RxCompletion) -> int:
        """Byte offset of a completion's payload piece in its buffer."""
        return cpl.pay_off << self.config.pay_stride_log2 if self.config.pay_mpb else 0

    async def enable(self) -> None:
        if self._cq is None:
            raise RuntimeError(f"rx queue {self.index}: alloc_rx_rings() first")
        ctrl = (regs.RXQ_CTRL_ENABLE.put(1) | regs.RXQ_CTRL_SPLIT_EN.put(int(self.config.tcp_data_split))
                | regs.RXQ_CTRL_PAY_MPB.put(int(self.config.pay_mpb)))
        await self.hw.write32(self._reg(regs.RXQ_CTRL), ctrl)
        self.enabled = True

    async def disable(self, timeout_ns: int = 1_000_000) -> None:
        """Stop the queue and wait until the NIC has no write for it planned or in flight
        (STATUS.busy), so its buffers and rings may be reused; RuntimeError on a timeout."""
        await self.hw.write32(self._reg(regs.RXQ_CTRL), 0)
        self.enabled = False
        await wait_not_busy(self.hw, self._reg(regs.RXQ_STATUS), regs.RXQ_STATUS_BUSY,
                            f"rx queue {self.index}", timeout_ns)
        for ring_off, ring in ((regs.RXQ_HDR_RING, self._hdr), (regs.RXQ_PAY_RING, self._pay), (regs.RXQ_CQ, self._cq)):
            if ring is not None:
                ring.sw_idx = 0
                await self.hw.write32(self._reg(ring_off + regs.RING_SW_IDX), 0)
        self._pending.clear()
        self._pending_raw.clear()

    async def _post(self, ring: Ring | None, ring_off: int, bufs: list[RxBuffer], what: str) -> None:
        if ring is None:
            raise RuntimeError(f"rx queue {self.index}: alloc_rx_rings() first")
        hw_idx = await self.hw.read32(self._reg(ring_off + regs.RING_HW_IDX))
        free = ring.size - ((ring.sw_idx - hw_idx) & 0xFFFF)
        if len(bufs) > free:
            raise RingFullError(f"rx queue {self.index}: {len(bufs)} {what} buffers posted, {free} ring entries free")
        descs = []
        for buf in bufs:
            if buf.addr % self.dma_bytes:
                raise ValueError(f"{what} buffer 0x{buf.addr:x} is not aligned to the DMA width ({self.dma_bytes} bytes)")
            descs.append(RxDesc(buf.addr, buf.buf_id).pack())
        # One host write per contiguous run of ring entries (two when the run wraps).
        done = 0
        while done < len(descs):
            slot = ring.sw_idx & (ring.size - 1)
            n = min(len(descs) - done, ring.size - slot)
            self.hw.host.write(ring.entry_addr(ring.sw_idx), b"".join(descs[done:done + n]))
            ring.sw_idx = (ring.sw_idx + n) & 0xFFFF
            done += n
        await self.hw.write32(self._reg(ring_off + regs.RING_SW_IDX), ring.sw_idx)

    async def post_hdr_buffers(self, bufs: list[RxBuffer]) -> None:
        """Post header buffers (host memory) and ring the doorbell."""
        await self._post(self._hdr, regs.RXQ_HDR_RING, bufs, "header")

    async def post_pay_buffers(self, bufs: list[RxBuffer]) -> None:
        """Post payload buffers (host or device memory) and ring the doorbell."""
        await self._post(self._pay, regs.RXQ_PAY_RING, bufs, "payload")

    async def arm_irq(self) -> None:
        """Re-enable the queue's interrupt after a poll found the ring empty (NAPI complete).
        The NIC fires at once if a completion slipped in meanwhile."""
        await self.hw.write32(self._reg(regs.RXQ_IRQ), regs.RXQ_IRQ_ARM.put(1))

    async def napi_poll(self, budget: int = 64) -> list[RxFrame]:
        """Consume up to `budget` frames from the completion ring (generation bit ownership)."""
        cq = self._cq
        if cq is None:
            raise RuntimeError(f"rx queue {self.index}: alloc_rx_rings() first")
        frames: list[RxFrame] = []
        consumed = 0
        while len(frames) < budget:
            expect_gen = 1 - ((cq.sw_idx >> cq.log2) & 1)
            raw = self.hw.host.read(cq.entry_addr(cq.sw_idx), CPL_BYTES)
            cpl = RxCompletion.unpack(raw)
            if cpl.gen != expect_gen:
                break
            cq.sw_idx = (cq.sw_idx + 1) & 0xFFFF
            consumed += 1
            if cpl.sop == bool(self._pending):
                where = "inside a frame" if cpl.sop else "without a preceding SOP"
                raise RuntimeError(f"rx queue {self.index}: completion {cq.sw_idx - 1} has SOP={cpl.sop} {where}")
            self._pending.append(cpl)
            self._pending_raw.append(raw)
            if cpl.eop:
                frames.append(RxFrame(self._pending, self._pending_raw))
                self._pending = []
                self._pending_raw = []
        if consumed:
            await self.hw.write32(self._reg(regs.RXQ_CQ + regs.RING_SW_IDX), cq.sw_idx)
        return frames
