"""The scoreboard: the golden-model check of tb/rx_scoreboard.RxScoreboard, one per queue,
with the queue of every frame predicted by tb/rx_env.MultiQueueEnv.route (the model
classifier mirrors the RTL's RSS and steering registers). It is fed by the MAC RX monitor
(each frame that went into the NIC: expectations, and expected drops, at once), polls the
completion rings like NAPI (the host side) and checks every delivered frame transaction by
transaction, recycles the buffers (through the DMA agent's error injector), checks each DMA
write the DMA monitor reports against the posted buffers, samples functional coverage, and at
the end compares the NIC's counters with the model's.
"""
from __future__ import annotations

from cocotb.triggers import Timer
from pyuvm import ConfigDB, uvm_component, uvm_subscriber

from driver import regs
from models.formats import CPL_BYTES
from models.nic_model import FRAME_COUNTERS, INFO_COUNTERS, expected_placement
from models.rx_parser import L3Type, L4Type
from tb.failure import sim_ns, waves_command
from tb.rx_env import MultiQueueEnv
from tb.rx_scoreboard import CANARY
from tb.uvm.coverage import nic_rx_covergroup, size_bin
from tb.uvm.seq_items import DmaWriteItem, RxFrameItem
from tb.uvm.starve import QueueHold

POLL_NS = 400
STALL_LIMIT_NS = 300_000


def protocol_of(parse) -> str:
    if parse is None:
        return "unparsed"
    if parse.l3_type is L3Type.NONE:
        return "non_ip"
    l3 = "ipv4" if parse.l3_type is L3Type.IPV4 else "ipv6"
    l4 = {L4Type.TCP: "tcp", L4Type.UDP: "udp"}.get(parse.l4_type, "other")
    return f"{l3}/{l4}"


class _DmaWriteCheck(uvm_subscriber):
    """Every DMA write lies inside a buffer lent to some queue or a completion ring."""

    def build_phase(self) -> None:
        self.ranges: list[tuple[int, int]] = []
        self.checked = 0

    def write(self, item: DmaWriteItem) -> None:
        assert any(a <= item.addr and item.addr + item.length <= a + n for a, n in self.ranges), \
            f"{item} is outside every posted buffer and completion ring"
        self.checked += 1


class _MacExpect(uvm_subscriber):
    """Turns each frame the MAC RX monitor saw into an expectation at once (at tlast, so it
    is always recorded before the NIC can complete that frame)."""

    def write(self, item: RxFrameItem) -> None:
        self.get_parent()._expect(item)


class NicScoreboard(uvm_component):
    def build_phase(self) -> None:
        self.mac_in = _MacExpect("mac_in", self)
        self.dma_check = _DmaWriteCheck("dma_check", self)
        self.tb = ConfigDB().get(self, "", "tb")
        self.profile = ConfigDB().get(self, "", "profile")
        self.cov = nic_rx_covergroup()
        self.mq: MultiQueueEnv | None = None      # set by the test after bring-up
        self.injector = None
        self.frames_in = 0
        self.dropped = 0
        self.dma_err_frames = 0
        self.errors: list[str] = []
        self.pending_kind: dict[tuple[int, int], RxFrameItem] = {}   # (queue, index) -> item
        self.final: dict[str, dict[str, int]] = {}
        self.idle_ns = 0
        self.holds: dict[int, QueueHold] = {}      # queues the starve phase holds back (tb/uvm/starve.py)
        self.starve_drops: dict[str, int] = {}     # drops the model predicted for held queues
        self.fifo_hold: list[RxFrameItem] | None = None   # frames of the FIFO phase, decided after it

    def start(self, mq: MultiQueueEnv, injector) -> None:
        self.mq = mq
        self.injector = injector
        for rxq, sb in mq.queues:
            self.dma_check.ranges += [(a, sb.cfg.hdr_buf_bytes) for a in sb.hdr_bufs.values()]
            self.dma_check.ranges += [(a, sb.cfg.pay_buf_bytes) for a in sb.pay_bufs.values()]
            self.dma_check.ranges.append((rxq.cq_base, sb.cq_size * CPL_BYTES))

    # ------------------------------------------------------------------ state
    def _polled(self, q: int) -> bool:
        h = self.holds.get(q)
        return h is None or h.polled

    @property
    def resolved(self) -> int:
        """Frames dropped or checked, and those parked in a completion ring the starve phase
        does not poll (decided: the MAC driver need not wait for them)."""
        return self.dropped + len(self.fifo_hold or ()) + \
            sum(sb.checked if self._polled(q) else sb.checked + sb.outstanding
                for q, (_, sb) in enumerate(self.mq.queues))

    @property
    def outstanding(self) -> int:
        return sum(sb.outstanding for q, (_, sb) in enumerate(self.mq.queues) if self._polled(q))

    def queue_kind(self, q: int, cls) -> str:
        steer = "steered" if cls is not None and cls.steered else "rss" if self.profile.rss else "default"
        mem = "host" if q in self.profile.host_payload_queues else "devmem"
        return f"{steer}/{mem}"

    # ------------------------------------------------------------------ MAC side: expectations
    def _expect(self, item: RxFrameItem) -> None:
        self.frames_in += 1
        if self.fifo_hold is not None:        # the FIFO phase decides these when it ends
            self.fifo_hold.append(item)
            return
        self.predict(item)

    def predict(self, item: RxFrameItem) -> None:
        """The model's outcome for a frame that went into the NIC: an expectation on its
        queue, or a drop (counted and sampled at once)."""
        q, cls = self.mq.route(item.frame, item.bad_fcs)
        sb = self.mq.queues[q][1]
        h = self.holds.get(q)
        p = sb.sent_frame(item.frame, item.bad_fcs, cls, admit=h.admit if h is not None else None)
        if h is not None:
            h.note(p)
        kind = self.queue_kind(q, cls)
        if p.dropped:
            self.dropped += 1
            self.cov.sample(protocol=protocol_of(p.parse), split="dropped", queue_kind=kind, error=item.error,
                            vlan=str(p.parse.vlan_tags if p.parse else item.vlan), size=size_bin(len(item.frame)),
                            pay_bufs="0", drop=p.drop_counter)
        else:
            self.pending_kind[(q, sb.sent - 1)] = (item, kind)

    def fifo_dropped(self, item: RxFrameItem) -> None:
        """A frame the ingress dropped because the frame FIFO was full (rx-rules.md section 1
        rule 4), as the FIFO phase (tb/uvm/starve.py) decided: counted on queue 0 and sampled
        as any other ingress drop (unparsed)."""
        self.mq.queues[0][1].fifo_dropped()
        self.dropped += 1
        self.cov.sample(protocol="unparsed", split="dropped", queue_kind=self.queue_kind(0, None),
                        error=item.error, vlan=str(item.vlan), size=size_bin(len(item.frame)),
                        pay_bufs="0", drop="RX_DROP_FIFO")

    # ------------------------------------------------------------------ host side: completions
    def _check(self, q: int, frame) -> tuple[list[int], list[int]]:
        sb = self.mq.queues[q][1]
        exp = sb.expected[0] if sb.expected else None
        poisoned = []
        if exp is not None:
            ids = list(sb.pay_order)[:exp.placement.n_pay_bufs]
            for buf_id, piece in zip(ids, exp.placement.payload_pieces()):
                addr = sb.pay_bufs[buf_id]
                if self.injector.is_poisoned(addr):
                    # The write was refused (SLVERR): nothing may have landed. Then put the
                    # model's bytes there so the unchanged model comparison checks the rest.
                    got = sb._read_pay(addr, sb.cfg.pay_buf_bytes)
                    assert got == bytes([CANARY]) * len(got), \
                        f"queue {q}: payload buffer {buf_id} answered SLVERR but was written"
                    if self.tb.dev.contains(addr, len(piece)):
                        self.tb.dev.gpu.write(addr, piece)
                    else:
                        self.tb.host.write(addr, piece)
                    poisoned.append(addr)
        hdr_ids, pay_ids = sb.check(frame)
        item, kind = self.pending_kind.pop((q, sb.delivered_index[-1]))
        p = expected_placement(item.frame, sb.cfg, bad_fcs=item.bad_fcs, queue=q)
        split = "split" if p.split else "hdr_overflow" if p.hdr_overflow else "no_split"
        nb = p.n_pay_bufs
        self.cov.sample(protocol=protocol_of(p.parse), split=split, queue_kind=kind,
                        error="dma_wr_err" if poisoned else item.error, vlan=str(p.parse.vlan_tags),
                        size=size_bin(len(item.frame)), pay_bufs=str(nb) if nb < 3 else "3+", drop="none")
        if poisoned:
            self.dma_err_frames += 1
        for addr in poisoned:
            self.injector.heal(addr)
        return hdr_ids, pay_ids

    async def poll_once(self) -> bool:
        progress = False
        for q, (rxq, sb) in enumerate(self.mq.queues):
            h = self.holds.get(q)
            if h is not None and not h.polled:
                continue
            for frame in await rxq.napi_poll():
                progress = True
                hdr_ids, pay_ids = self._check(q, frame)
                if hdr_ids:
                    if h is None or h.posts_hdr:
                        await sb.post_hdr(rxq, hdr_ids)
                    else:
                        h.held_hdr += hdr_ids
                if pay_ids:
                    if h is None or h.posts_pay:
                        await self.post_pay(q, pay_ids)
                    else:
                        h.held_pay += pay_ids
        return progress

    async def post_pay(self, q: int, ids: list[int]) -> None:
        """Post payload buffers of queue `q` again, each maybe answering SLVERR next time."""
        rxq, sb = self.mq.queues[q]
        for i in ids:
            self.injector.maybe_poison(sb.pay_bufs[i], sb.cfg.pay_buf_bytes)
        await sb.post_pay(rxq, ids)

    async def run_phase(self) -> None:
        """The only poller of the completion rings (NAPI): drain() just waits on it."""
        self.idle_ns = 0
        while self.mq is None:
            await Timer(POLL_NS, unit="ns")
        while True:
            await Timer(POLL_NS, unit="ns")
            progress = await self.poll_once()
            self.idle_ns = 0 if progress or not self.outstanding else self.idle_ns + POLL_NS

    async def drain(self, sent) -> None:
        """Wait until every frame the driver sent is resolved (delivered and checked, or
        dropped as the model says); fails after STALL_LIMIT_NS without progress."""
        while self.frames_in < sent() or self.outstanding:
            await Timer(POLL_NS, unit="ns")
            if self.idle_ns >= STALL_LIMIT_NS:
                now = sim_ns()
                raise AssertionError(
                    f"no completion for {STALL_LIMIT_NS} ns: waited for {self.outstanding} frames the "
                    f"model expects ({self.frames_in} of {sent()} frames seen on the MAC)"
                    + (f"\n  waves: {waves_command(now - STALL_LIMIT_NS, now)}" if now is not None else ""))
        await Timer(4 * POLL_NS, unit="ns")
        await self.wait_quiet()

    async def wait_quiet(self) -> None:
        """One more poll round so a completion the model does not expect would show up."""
        await Timer(2000, unit="ns")

    async def read_counters(self) -> None:
        """The NIC's counters, and the model's sums over the queues' scoreboards."""
        tb = self.tb
        rtl = {n: await tb.read32(getattr(regs, n)) for n in (*FRAME_COUNTERS, *INFO_COUNTERS, "RX_DMA_WR_ERR")}
        model = {n: 0 for n in (*FRAME_COUNTERS, *INFO_COUNTERS)}
        for _, sb in self.mq.queues:
            model["RX_FRAMES"] += sb.checked
            for n, k in sb.dropped.items():
                model[n] += k
            for n, k in sb.info.items():
                model[n] += k
        self.final = {"rtl": rtl, "model": model}

    def check_phase(self) -> None:
        if not self.final:
            return
        rtl, model = self.final["rtl"], self.final["model"]
        diff = {n: (rtl[n], v) for n, v in model.items() if rtl[n] != v}
        assert not diff, f"counters differ (name: (rtl, model)): {diff}"
        if self.dma_err_frames:
            assert rtl["RX_DMA_WR_ERR"] >= self.dma_err_frames, \
                f"RX_DMA_WR_ERR={rtl['RX_DMA_WR_ERR']} but {self.dma_err_frames} frames hit a failing buffer"
        else:
            assert rtl["RX_DMA_WR_ERR"] == 0, f"RX_DMA_WR_ERR={rtl['RX_DMA_WR_ERR']} without injected errors"

    def report_phase(self) -> None:
        per_q = [sb.checked for _, sb in self.mq.queues] if self.mq else []
        self.logger.info(f"scoreboard: {self.frames_in} frames in, delivered per queue {per_q}, "
                         f"{self.dropped} dropped as the model says, {self.dma_err_frames} with DMA write "
                         f"errors, {self.dma_check.checked} DMA writes in bounds"
                         + (f"; drops predicted on held queues {self.starve_drops}" if self.starve_drops else ""))
