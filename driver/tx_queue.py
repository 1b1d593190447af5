"""One TX queue's rings: the descriptor ring the driver fills and the completion ring the NIC
fills (docs/tx.md).

The names are what a Linux NIC driver calls these steps: `alloc_tx_rings`/`free_tx_rings`
(`*_setup_tx_resources`/`*_free_tx_resources`), `xmit_frame` (the ring half of
`ndo_start_xmit`: map the segments, write descriptors, ring the doorbell unless
`netdev_xmit_more()`), `clean_tx_irq` (the TX half of the NAPI poll: completions by generation
bit, descriptor slots freed, one callback per frame) and `arm_irq`.

The queue knows nothing about skbs: a frame is a list of `(bus address, length)` segments
(header bytes the driver wrote into host memory, payload anywhere, device memory included),
an optional checksum-offload request and a 16-bit tag that comes back in the completion.
Segments are cut at 4 KiB boundaries here, because a descriptor must not cross one.

Ring ownership:
- `sw_idx` (next descriptor to write) and `clean_idx` (first descriptor not yet completed)
  are free-running 16-bit indices; `sw_idx - clean_idx` descriptors are owned by the NIC.
- A frame needs all of its descriptors free, else `xmit_frame` returns `NetdevTx.BUSY`
  (`NETDEV_TX_BUSY`, the queue is full: try again after `clean_tx_irq` freed slots) and
  writes nothing.
- The completion ring has at least as many entries as the descriptor ring, so it cannot
  overflow: every completion covers at least one descriptor, and descriptors are only
  reused after their completion was read.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Callable, Sequence

from driver import regs
from driver.hw import NicHw
from driver.ring import Ring, program_ring, wait_not_busy
from driver.rx_queue import check_coalesce
from models.formats import (TX_CPL_BYTES, TX_DESC_BYTES, TX_MAX_SEGS, TX_SEG_PAGE,
                            TX_TSO_MAX_SEGS, TxCompletion, TxDesc, TxStatus, TxTsoCtx)

MAX_TX_RING_LOG2 = 15
IDX_MASK = 0xFFFF


class NetdevTx(IntEnum):
    """`netdev_tx_t`: what `ndo_start_xmit` returns."""

    OK = 0x00
    """`NETDEV_TX_OK`: the frame is the driver's now (posted, or dropped and counted)."""
    BUSY = 0x10
    """`NETDEV_TX_BUSY`: no room in the ring; nothing was written, the caller keeps the frame."""


class TxFrameError(ValueError):
    """A frame the NIC could never send (no segments, more descriptors than `max_segs`):
    a driver bug, refused before anything is written."""


@dataclass(frozen=True)
class TxCsum:
    """Checksum offload of one frame (`CHECKSUM_PARTIAL`): the NIC sums from `csum_start` to
    the end of the frame and writes the result at `csum_start + csum_offset`, where the driver
    has seeded the pseudo-header sum. `udp`: a computed 0 is sent as 0xFFFF."""

    csum_start: int
    csum_offset: int
    udp: bool = False


@dataclass(frozen=True)
class TxTso:
    """TCP segmentation offload of one send (docs/tx.md, "TCP segmentation offload"; the
    `skb_shinfo(skb)->gso_size` / `skb_tcp_all_headers()` a Linux TSO driver reads): the
    send's first `hdr_len` bytes are its headers, the IP header starts at `l3_offset`, the
    TCP header at `csum_start`, and the NIC cuts the payload into `mss`-byte segments. The
    TCP checksum field must hold the pseudo-header sum *without* the length
    (`models.tso.tso_seed`), as Linux drivers prepare it for their hardware."""

    mss: int
    hdr_len: int
    l3_offset: int
    csum_start: int
    ipv6: bool = False


@dataclass(frozen=True)
class TxDone:
    """One completed frame, as `clean_tx_irq` reports it."""

    tag: int
    status: TxStatus
    len: int
    csum: int
    desc_idx: int
    ndesc: int
    tso_segs: int = 0
    """A `TSO` send: the segments the NIC sent (the completion's `tso_segs`)."""

    @property
    def ok(self) -> bool:
        return self.status == TxStatus.OK


@dataclass
class TxQueueConfig:
    """Ring sizes (log2 of the entries); the completion ring is never smaller than the
    descriptor ring."""

    ring_log2: int = 8
    cq_log2: int | None = None
    tx_usecs: int = 0
    """`TXQ.COALESCE.usecs` (ethtool `tx-usecs`): longest wait of a held completion; 0: none."""
    tx_frames: int = 1
    """`TXQ.COALESCE.frames` (ethtool `tx-frames`): completions per batch; 1 (reset): each alone."""

    @property
    def cq_log2_eff(self) -> int:
        return self.ring_log2 if self.cq_log2 is None else self.cq_log2

    def validate(self) -> None:
        for name, v in (('ring_log2', self.ring_log2), ('cq_log2', self.cq_log2_eff)):
            if not 1 <= v <= MAX_TX_RING_LOG2:
                raise ValueError(f'{name}={v}: ring sizes are 2^1 .. 2^{MAX_TX_RING_LOG2} entries')
        if self.cq_log2_eff < self.ring_log2:
            raise ValueError('the completion ring must have at least as many entries as the '
                             'descriptor ring (it could overflow otherwise)')
        check_coalesce(self.tx_usecs, self.tx_frames, kind='tx')



@dataclass
class _InFlight:
    """`struct *_tx_buffer` of a frame's first descriptor slot."""

    tag: int
    ndesc: int
    failed: TxStatus | None = None
    """Set on the tail of a frame whose descriptor read failed (`DESC_RD_ERR` ended the
    frame early): the NIC completes the tail on its own; it is reported as the frame's."""


def split_at_pages(segments: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Cut `(addr, len)` segments so that none crosses a 4 KiB boundary; empty ones vanish."""
    out: list[tuple[int, int]] = []
    for addr, n in segments:
        if n < 0:
            raise TxFrameError(f'segment 0x{addr:x} has a negative length {n}')
        while n > 0:
            k = min(n, TX_SEG_PAGE - (addr % TX_SEG_PAGE))
            out.append((addr, k))
            addr += k
            n -= k
    return out


@dataclass
class TxQueue:
    """Driver state of TX queue `index`."""

    hw: NicHw
    index: int
    config: TxQueueConfig = field(default_factory=TxQueueConfig)
    max_segs: int = TX_MAX_SEGS
    on_complete: Callable[[TxDone], None] | None = None
    """Called once per completed frame, in completion order, from `clean_tx_irq`."""
    _ring: Ring | None = None
    _cq: Ring | None = None
    clean_idx: int = 0
    """First descriptor not completed yet (`next_to_clean`)."""
    _doorbell_idx: int = 0
    """`SW_IDX` as last written to the NIC."""
    _inflight: dict[int, _InFlight] = field(default_factory=dict)
    enabled: bool = False
    stopped: bool = False
    """`netif_tx_stop_queue`: the last `xmit_frame` found no room (cleared by a clean that
    freed slots: `netif_tx_wake_queue`)."""
    frames_posted: int = 0
    frames_completed: int = 0
    busy_returns: int = 0
    doorbells: int = 0

    # --- setup ------------------------------------------------------------------------------

    def _reg(self, offset: int) -> int:
        return regs.txq_reg(self.index, offset)

    def _need_rings(self) -> tuple[Ring, Ring]:
        if self._ring is None or self._cq is None:
            raise RuntimeError(f'tx queue {self.index}: alloc_tx_rings() first')
        return self._ring, self._cq

    @property
    def ring_size(self) -> int:
        return self._need_rings()[0].size

    @property
    def allocated(self) -> bool:
        return self._ring is not None

    async def _write_ring_regs(self, ring_off: int, ring: Ring) -> None:
        await program_ring(self.hw, regs.txq_reg(self.index, 0), ring_off, ring)

    async def alloc_tx_rings(self) -> None:
        """Allocate both rings in host memory, zero the completion ring, program the queue."""
        cfg = self.config
        cfg.validate()
        if self.enabled:
            raise RuntimeError(f'tx queue {self.index}: disable it before reallocating its rings')
        host = self.hw.host
        self._ring = Ring(host.alloc(TX_DESC_BYTES << cfg.ring_log2), cfg.ring_log2)
        self._cq = Ring(host.alloc(TX_CPL_BYTES << cfg.cq_log2_eff), cfg.cq_log2_eff)
        host.fill(self._cq.base, TX_CPL_BYTES << cfg.cq_log2_eff, 0)
        self._reset_indices()
        await self._write_ring_regs(regs.TXQ_DESC_RING, self._ring)
        await self._write_ring_regs(regs.TXQ_CQ, self._cq)

    def _reset_indices(self) -> None:
        assert self._ring is not None and self._cq is not None
        self._ring.sw_idx = self._cq.sw_idx = 0
        self.clean_idx = self._doorbell_idx = 0
        self._inflight.clear()
        self.stopped = False

    async def free_tx_rings(self) -> list[_InFlight]:
        """Forget the rings (the queue must be disabled); returns the frames that were posted
        and never completed (the caller frees their buffers, as `*_clean_tx_ring` does)."""
        if self.enabled:
            raise RuntimeError(f'tx queue {self.index}: disable it before freeing its rings')
        lost = list(self._inflight.values())
        self._inflight.clear()
        self._ring = self._cq = None
        return lost

    async def set_coalesce(self, usecs: int, frames: int) -> None:
        """Completion moderation (`tx-usecs`, `tx-frames`; docs/tx.md, "Completion
        moderation"); takes effect with the next batch, also while the queue runs. ValueError
        when out of range."""
        check_coalesce(usecs, frames, kind='tx')
        await self.hw.write32(self._reg(regs.TXQ_COALESCE),
                              regs.TXQ_COALESCE_USECS.put(usecs) | regs.TXQ_COALESCE_FRAMES.put(frames))
        self.config.tx_usecs, self.config.tx_frames = usecs, frames

    async def enable(self) -> None:
        ring, cq = self._need_rings()
        await self.set_coalesce(self.config.tx_usecs, self.config.tx_frames)
        await self.hw.write32(self._reg(regs.TXQ_CTRL), regs.TXQ_CTRL_ENABLE.put(1))
        self.enabled = True

    async def disable(self, timeout_ns: int = 1_000_000) -> None:
        """Clear `CTRL.enable` and wait for `STATUS.busy == 0` (a started frame is finished
        and its completion written); then the hardware indices read 0 (docs/tx.md).
        Completions written before the queue stopped must be collected with `clean_tx_irq`
        before `reset_indices` writes the `SW_IDX` registers back to 0."""
        await self.hw.write32(self._reg(regs.TXQ_CTRL), 0)
        self.enabled = False
        await wait_not_busy(self.hw, self._reg(regs.TXQ_STATUS), regs.TXQ_STATUS_BUSY,
                            f'tx queue {self.index}', timeout_ns)

    async def reset_indices(self) -> None:
        """After `disable` (and a last `clean_tx_irq`): ring indices back to 0 on both sides."""
        if self._ring is None or self._cq is None:
            return
        await self.hw.write32(self._reg(regs.TXQ_DESC_RING + regs.RING_SW_IDX), 0)
        await self.hw.write32(self._reg(regs.TXQ_CQ + regs.RING_SW_IDX), 0)
        self.hw.host.fill(self._cq.base, TX_CPL_BYTES << self._cq.log2, 0)
        self._reset_indices()

    # --- transmit ---------------------------------------------------------------------------

    @property
    def in_flight(self) -> int:
        """Descriptors owned by the NIC (posted, not completed)."""
        ring, _ = self._need_rings()
        return (ring.sw_idx - self.clean_idx) & IDX_MASK

    @property
    def desc_unused(self) -> int:
        """`*_desc_unused`: descriptor slots free for new frames."""
        return self.ring_size - self.in_flight

    @property
    def frames_in_flight(self) -> int:
        return len(self._inflight)

    async def xmit_frame(self, segments: Sequence[tuple[int, int]], *, tag: int,
                         csum: TxCsum | None = None, xmit_more: bool = False) -> NetdevTx:
        """Post one frame: `segments` are `(bus address, length)` in frame order, cut here
        at 4 KiB boundaries; the first descriptor carries the checksum request and `tag`.
        The doorbell (`DESC_RING.SW_IDX`) is written unless `xmit_more` says another frame
        follows at once. `NetdevTx.BUSY` when the ring lacks room (nothing written; any
        frames held back by `xmit_more` are rung now so the NIC is not left waiting)."""
        ring = self._ready_to_post(tag)
        descs = split_at_pages(segments)
        if not descs:
            raise TxFrameError('a frame needs at least one byte')
        if len(descs) > self.max_segs:
            raise TxFrameError(f'{len(descs)} descriptors, the NIC takes at most '
                               f'{self.max_segs} per frame')
        if len(descs) > self.desc_unused:
            return await self._ring_full()
        first = ring.sw_idx
        for i, (addr, n) in enumerate(descs):
            # The tag goes into every descriptor (the NIC reads the first's): a frame cut short
            # by a failed descriptor read completes its tail under the same tag.
            d = TxDesc(addr=addr, len=n, eop=i == len(descs) - 1, tag=tag)
            if i == 0:
                if csum is not None:
                    d.csum, d.csum_udp = True, csum.udp
                    d.csum_start, d.csum_offset = csum.csum_start, csum.csum_offset
            self.hw.host.write(ring.entry_addr(ring.sw_idx), d.pack())
            ring.sw_idx = (ring.sw_idx + 1) & IDX_MASK
        self._inflight[first] = _InFlight(tag, len(descs))
        self.frames_posted += 1
        if not xmit_more:
            await self.kick()
        return NetdevTx.OK

    async def xmit_tso(self, segments: Sequence[tuple[int, int]], *, tag: int, tso: TxTso,
                       xmit_more: bool = False) -> NetdevTx:
        """Post one `TSO` send (docs/tx.md, "TCP segmentation offload"): its first descriptor
        with `TSO` and `CSUM` (TCP, `csum_start`, offset 16), the TSO context entry right
        after it, then the rest of the send's segments, cut at 4 KiB boundaries, at most
        `TX_TSO_MAX_SEGS` descriptors. The NIC answers with one completion (`tso_segs`).
        Only for a NIC with TSO (`TX_OFFLOADS.tso`): a NIC without it ignores the bit and
        would read the context entry as a descriptor. `NetdevTx.BUSY` as for `xmit_frame`."""
        ring = self._ready_to_post(tag)
        descs = split_at_pages(segments)
        if not descs:
            raise TxFrameError('a send needs at least one byte')
        if len(descs) > TX_TSO_MAX_SEGS:
            raise TxFrameError(f'{len(descs)} descriptors, the NIC takes at most '
                               f'{TX_TSO_MAX_SEGS} per TSO send')
        ctx = TxTsoCtx(mss=tso.mss, hdr_len=tso.hdr_len, l3_offset=tso.l3_offset, ipv6=tso.ipv6)
        ctx.pack()                                   # fields in range, or ValueError now
        entries = len(descs) + 1
        if entries > self.desc_unused:
            return await self._ring_full()
        first = ring.sw_idx
        raws = []
        for i, (addr, n) in enumerate(descs):
            d = TxDesc(addr=addr, len=n, eop=i == len(descs) - 1, tag=tag)
            if i == 0:
                d.tso, d.csum, d.csum_start, d.csum_offset = True, True, tso.csum_start, 16
                raws += [d.pack(), ctx.pack()]
            else:
                raws.append(d.pack())
        for raw in raws:
            self.hw.host.write(ring.entry_addr(ring.sw_idx), raw)
            ring.sw_idx = (ring.sw_idx + 1) & IDX_MASK
        self._inflight[first] = _InFlight(tag, entries)
        self.frames_posted += 1
        if not xmit_more:
            await self.kick()
        return NetdevTx.OK

    def _ready_to_post(self, tag: int) -> Ring:
        """The descriptor ring, after the checks every post makes (queue enabled, u16 tag)."""
        ring, _ = self._need_rings()
        if not self.enabled:
            raise RuntimeError(f'tx queue {self.index} is not enabled')
        if not 0 <= tag <= 0xFFFF:
            raise TxFrameError(f'tag {tag} is not a u16')
        return ring

    async def _ring_full(self) -> NetdevTx:
        """No room: stop the queue and ring the doorbell for what `xmit_more` held back."""
        self.stopped = True
        self.busy_returns += 1
        await self.kick()
        return NetdevTx.BUSY

    async def kick(self) -> None:
        """Ring the doorbell for every descriptor written since the last one."""
        ring, _ = self._need_rings()
        if ring.sw_idx != self._doorbell_idx:
            await self.hw.write32(self._reg(regs.TXQ_DESC_RING + regs.RING_SW_IDX), ring.sw_idx)
            self._doorbell_idx = ring.sw_idx
            self.doorbells += 1

    # --- completion -------------------------------------------------------------------------

    async def arm_irq(self) -> None:
        """Re-enable `tx_irq` after a poll found the completion ring empty."""
        await self.hw.write32(self._reg(regs.TXQ_IRQ), regs.TXQ_IRQ_ARM.put(1))

    async def clean_tx_irq(self, budget: int = 256) -> list[TxDone]:
        """Consume up to `budget` completions (generation-bit ownership), free their
        descriptor slots and report each frame (also through `on_complete`)."""
        _, cq = self._need_rings()
        done: list[TxDone] = []
        consumed = 0
        while len(done) < budget:
            expect_gen = 1 - ((cq.sw_idx >> cq.log2) & 1)
            raw = self.hw.host.read(cq.entry_addr(cq.sw_idx), TX_CPL_BYTES)
            cpl = TxCompletion.unpack(raw)
            if cpl.gen != expect_gen:
                break
            cq.sw_idx = (cq.sw_idx + 1) & IDX_MASK
            consumed += 1
            if cpl.desc_idx != self.clean_idx:
                raise RuntimeError(f'tx queue {self.index}: completion for descriptor '
                                   f'{cpl.desc_idx}, expected {self.clean_idx}')
            if not 1 <= cpl.ndesc <= self.in_flight:
                raise RuntimeError(f'tx queue {self.index}: completion of {cpl.ndesc} '
                                   f'descriptors, {self.in_flight} posted')
            frame = self._inflight.pop(cpl.desc_idx, None)
            if frame is None:
                raise RuntimeError(f'tx queue {self.index}: completion at descriptor '
                                   f'{cpl.desc_idx}, which starts no frame')
            ndesc = cpl.ndesc
            if frame.failed is None and cpl.status != TxStatus.DESC_RD_ERR \
                    and (cpl.tag != frame.tag or ndesc != frame.ndesc):
                raise RuntimeError(f'tx queue {self.index}: completion tag {cpl.tag}/ndesc '
                                   f'{ndesc}, posted tag {frame.tag}/ndesc {frame.ndesc}')
            if ndesc > frame.ndesc:
                raise RuntimeError(f'tx queue {self.index}: completion of {ndesc} descriptors '
                                   f'for a frame of {frame.ndesc}')
            self.clean_idx = (self.clean_idx + ndesc) & IDX_MASK
            status = frame.failed if frame.failed is not None else cpl.status
            if ndesc < frame.ndesc:
                # DESC_RD_ERR ended the frame early: the NIC takes the rest of its
                # descriptors as a frame of their own; report the frame when that completes.
                self._inflight[self.clean_idx] = _InFlight(frame.tag, frame.ndesc - ndesc, status)
                continue
            self.frames_completed += 1
            d = TxDone(frame.tag, status, cpl.len if frame.failed is None else 0,
                       cpl.csum if status == TxStatus.OK else 0, cpl.desc_idx, ndesc,
                       cpl.tso_segs if frame.failed is None else 0)
            done.append(d)
            if self.on_complete is not None:
                self.on_complete(d)
        if consumed:
            await self.hw.write32(self._reg(regs.TXQ_CQ + regs.RING_SW_IDX), cq.sw_idx)
            self.stopped = False
        return done
