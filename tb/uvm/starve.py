"""Post-parse drops, predicted exactly: a phase of a pyuvm run in which the host (the
scoreboard) stops giving some queues what they need, so the NIC must drop frames that parsed
well (docs/rx-rules.md sections 3 and 4):

| `Profile.rx_starve` | what the host does to the held queues | drops |
|---|---|---|
| `queue_off` | clears `CTRL.enable` (the driver's `disable`: waits for STATUS.busy) | `RX_DROP_QUEUE_OFF` |
| `hdr_bufs`  | stops posting header buffers (payload buffers still recycled) | `RX_DROP_NO_HDR_BUF` |
| `pay_bufs`  | stops posting payload buffers (header buffers still recycled) | `RX_DROP_NO_PAY_BUF` |
| `cq`        | stops polling the completion ring (so no buffer is recycled either) | `RX_DROP_CQ_FULL` |
| `fifo`      | stalls every DMA channel (the bus, not a queue: `run_fifo`) | `RX_DROP_FIFO` |

The phase starts when the run is quiet (every frame resolved, every used buffer posted again,
every completion consumed), so what each held queue has is known from the scoreboard's own
bookkeeping: the buffers it posted and the NIC has not used (`RxScoreboard.hdr_order`,
`pay_order`) and a completion ring the driver has emptied. `QueueHold.admit` then applies
rx-rules.md section 4's checks, in order, to each frame routed there (frames are handled one
at a time in arrival order, so the MAC order is the decision order): the frame that finds no
header buffer, too few payload buffers or too few free completion entries is the one the
model drops, and every frame after it is decided the same way. Before the phase the RTL's
ring indices are compared with that bookkeeping; after it the scoreboard waits until the
NIC's frame counters account for every frame (each frame decided), then gives the queues
back (posts the held buffers, polls again; a disabled queue stays off) and sends more
traffic, which must flow again. The end-of-run counter check compares every drop counter.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

import cocotb
from cocotb.triggers import Timer
from pyuvm import uvm_sequence

from driver import regs
from models.nic_model import FRAME_COUNTERS, Placement, ring_check_drop
from tb.frames import pattern
from tb.uvm.seq_items import RxFrameItem
from tb.uvm.sequences import FlowSpec, RandomTrafficSeq, build_frame

STARVE_KINDS = ("queue_off", "hdr_bufs", "pay_bufs", "cq", "fifo")
DROP_OF = {"queue_off": "RX_DROP_QUEUE_OFF", "hdr_bufs": "RX_DROP_NO_HDR_BUF",
           "pay_bufs": "RX_DROP_NO_PAY_BUF", "cq": "RX_DROP_CQ_FULL", "fifo": "RX_DROP_FIFO"}
_PLENTY = 1 << 30            # "not held": the host keeps posting or polling as usual
HELD_FLOW_WEIGHT = 8         # flows routed to a held queue, against 1 for the others
DECIDE_LIMIT_NS = 300_000


@dataclass
class QueueHold:
    """What the host has given one queue while the phase holds it back; None: not held
    (posted again or polled as usual)."""

    kind: str
    hdr: int | None = None            # header buffers posted and not used
    pay: int | None = None            # payload buffers posted and not used
    cq: int | None = None             # free completion entries
    held_hdr: list[int] = field(default_factory=list)    # used buffers the host keeps back
    held_pay: list[int] = field(default_factory=list)
    drops: dict[str, int] = field(default_factory=dict)
    admitted: int = 0

    @property
    def polled(self) -> bool:
        return self.kind not in ("cq", "queue_off")

    @property
    def posts_hdr(self) -> bool:
        return self.kind != "hdr_bufs"

    @property
    def posts_pay(self) -> bool:
        return self.kind != "pay_bufs"

    def note(self, p: Placement) -> None:
        """Count a post-parse drop the model decided for this queue (the ring checks of
        `admit`, or RX_DROP_QUEUE_OFF from the queue's configuration)."""
        if p.drop_counter in DROP_OF.values():
            self.drops[p.drop_counter] = self.drops.get(p.drop_counter, 0) + 1

    def admit(self, p: Placement) -> str | None:
        """rx-rules.md section 4 for a frame that passed sections 1-3 (no multi-packet
        buffers here: every payload takes `ceil(P / B)` new buffers)."""
        counter = ring_check_drop(p, p.n_pay_bufs, _PLENTY if self.hdr is None else self.hdr,
                                  _PLENTY if self.pay is None else self.pay,
                                  _PLENTY if self.cq is None else self.cq)
        if counter is not None:
            return counter
        self.admitted += 1
        if p.split and self.hdr is not None:
            self.hdr -= 1
        if self.pay is not None:
            self.pay -= p.n_pay_bufs
        if self.cq is not None:
            self.cq -= p.n_completions
        return None


def held_queues(profile, num_queues: int) -> list[int]:
    """`Profile.rx_starve_queues`, negative indices counted from the last queue."""
    return sorted({q % num_queues for q in profile.rx_starve_queues})


def flow_weights(flows, queues: set[int], route, rng: random.Random) -> list[float]:
    """Per flow, HELD_FLOW_WEIGHT if the model routes it to one of `queues`, else 1 (the
    queue of a TCP/UDP/IP flow is a function of its tuple: one probe frame says it)."""
    return [HELD_FLOW_WEIGHT if route(build_frame(f, pattern(64), rng, False), False)[0] in queues else 1
            for f in flows]


async def _ring_idx(hw, q: int, ring: int) -> int:
    return await hw.read32(regs.rxq_reg(q, ring + regs.RING_HW_IDX)) & 0xFFFF


async def hold(sbd, hw, queues: list[int], kind: str) -> None:
    """Start holding `queues` back (the run is quiet: `NicScoreboard.drain` returned)."""
    if kind not in STARVE_KINDS:
        raise ValueError(f"rx_starve={kind!r}: one of {', '.join(STARVE_KINDS)}")
    for q in queues:
        rxq, sb = sbd.mq.queues[q]
        assert not sb.cfg.pay_mpb, f"queue {q}: the starve phase has no multi-packet buffer model"
        # The scoreboard's bookkeeping against the NIC's ring indices (registers.md).
        cq_hw = await _ring_idx(hw, q, regs.RXQ_CQ)
        hdr_hw = await _ring_idx(hw, q, regs.RXQ_HDR_RING)
        pay_hw = await _ring_idx(hw, q, regs.RXQ_PAY_RING)
        assert cq_hw == sb.cq_idx == rxq._cq.sw_idx, \
            f"queue {q}: CQ HW_IDX {cq_hw}, the model's {sb.cq_idx}, the driver's SW_IDX {rxq._cq.sw_idx}: not quiet"
        assert (rxq._hdr.sw_idx - hdr_hw) & 0xFFFF == len(sb.hdr_order), \
            f"queue {q}: {(rxq._hdr.sw_idx - hdr_hw) & 0xFFFF} header buffers posted, the scoreboard says {len(sb.hdr_order)}"
        assert (rxq._pay.sw_idx - pay_hw) & 0xFFFF == len(sb.pay_order), \
            f"queue {q}: {(rxq._pay.sw_idx - pay_hw) & 0xFFFF} payload buffers posted, the scoreboard says {len(sb.pay_order)}"
        h = QueueHold(kind)
        # Held before the disable: the driver's disable rewinds its CQ index to 0, where the ring
        # still holds old completions of the current generation: the poller must not look again.
        sbd.holds[q] = h
        if kind == "queue_off":
            await rxq.disable()
            sb.cfg.enable = False          # sections 1-3 of the model: RX_DROP_QUEUE_OFF
        if kind in ("hdr_bufs", "cq"):
            h.hdr = len(sb.hdr_order)
        if kind in ("pay_bufs", "cq"):
            h.pay = len(sb.pay_order)
        if kind == "cq":
            h.cq = sb.cq_size              # the driver consumed every completion (checked above)


async def wait_decided(sbd, hw) -> None:
    """Until the NIC's frame counters (exactly one per frame: RX_FRAMES or a drop) account
    for every frame the MAC carried, so no frame is still waiting for a decision."""
    waited = 0
    while True:
        total = 0
        for n in FRAME_COUNTERS:
            total += await hw.read32(getattr(regs, n))
        if total >= sbd.frames_in:
            return
        await Timer(1000, unit="ns")
        waited += 1000
        assert waited < DECIDE_LIMIT_NS, \
            f"the NIC's frame counters sum to {total} after {DECIDE_LIMIT_NS} ns, {sbd.frames_in} frames went in"


async def release(sbd) -> None:
    """Give the held queues back: post the buffers kept back, poll again (a disabled queue
    stays disabled and unpolled: its frames keep dropping as RX_DROP_QUEUE_OFF)."""
    for q, h in list(sbd.holds.items()):
        sbd.logger.info(f"starve {h.kind}: queue {q} took {h.admitted} frames while held, dropped {h.drops}")
        for n, k in h.drops.items():
            sbd.starve_drops[n] = sbd.starve_drops.get(n, 0) + k
        if h.kind == "queue_off":
            continue
        rxq, sb = sbd.mq.queues[q]
        del sbd.holds[q]
        if h.held_hdr:
            await sb.post_hdr(rxq, h.held_hdr)
        if h.held_pay:
            await sbd.post_pay(q, h.held_pay)



# ---------------------------------------------------------------------------------------------
# `fifo`: RX_DROP_FIFO (rx-rules.md section 1 rule 4), which the model cannot decide
# ---------------------------------------------------------------------------------------------
FIFO_PAYLOAD = 1400            # every frame of the phase has the same length (1454 bytes)
FIFO_GAP_NS = 3000             # between frames: whatever the last one set in motion has settled
FIFO_EXTRA = 16                # frames sent beyond what the FIFO holds
FIFO_FLOW = FlowSpec("ipv4/tcp", 0, "10.9.0.1", "10.9.0.2", 40000, 5201)


class _FixedFramesSeq(uvm_sequence):
    """The given frames, one at a time, `gap_ns` apart (after each has been handed to the MAC)."""

    def __init__(self, name: str, frames: list[bytes], gap_ns: int) -> None:
        super().__init__(name)
        self.frames = frames
        self.gap_ns = gap_ns

    async def body(self) -> None:
        for i, frame in enumerate(self.frames):
            item = RxFrameItem(f"fifo{i}", frame, False, "none", FIFO_FLOW.protocol, FIFO_FLOW.vlan, -1)
            await self.start_item(item)
            await self.finish_item(item)
            await Timer(self.gap_ns, unit="ns")


def fifo_capacity(frame_len: int, fifo_bytes: int, dma_bytes: int) -> int:
    """Frames of `frame_len` bytes the frame FIFO holds at least: it stores whole DMA words
    (`FIFO_BYTES / DMA_BYTES` of them), a frame takes ceil(len / DMA_BYTES) words, and one
    more word per frame is allowed for (nothing in rx-rules.md promises the last one)."""
    words = -(-frame_len // dma_bytes) + 1
    return (fifo_bytes // dma_bytes) // words


async def run_fifo(env, hw, seed: int) -> None:
    """The `fifo` phase, after the run's traffic was drained: every DMA channel stalls (the
    memory stops answering, as a host bus can), so nothing leaves the frame FIFO; then frames
    of one length, one at a time with time to settle between them. By rule 4 a frame is
    dropped when the FIFO fills up during it; with nothing draining and every frame of the
    same length, the first frame that does not fit and every frame after it are dropped, the
    ones before it are kept. The model has no FIFO, so *how many* fit is read from the NIC's
    RX_DROP_FIFO counter; *which* (a prefix, in MAC order) is the rule's, and it is checked:
    once the bus answers again, each kept frame must arrive byte for byte as the model places
    it (a kept frame that the scoreboard thinks dropped, or the reverse, is a wrong completion
    or a missing one), and the count must lie between what the FIFO holds
    (`fifo_capacity`, from the FIFO_BYTES and DMA_DATA_W parameters) and the frames sent less one."""
    sbd, mac, tb = env.scoreboard, env.mac_rx, env.scoreboard.tb
    dut = cocotb.top
    fifo_bytes, dma_bytes = int(dut.FIFO_BYTES.value), int(dut.DMA_DATA_W.value) // 8
    rng = random.Random(seed ^ 0xF1F0)
    frames = [build_frame(FIFO_FLOW, pattern(FIFO_PAYLOAD, period=251, start=i), rng, False)
              for i in range(fifo_capacity(len(build_frame(FIFO_FLOW, pattern(FIFO_PAYLOAD), rng, False)),
                                           fifo_bytes, dma_bytes) + FIFO_EXTRA)]
    length = len(frames[0])
    assert all(len(f) == length for f in frames)
    before = await hw.read32(regs.RX_DROP_FIFO)
    saved = tb.profile
    tb.set_profile(replace(saved, dma_stall=1.0))
    sbd.fifo_hold = []
    await _FixedFramesSeq("fifo_fill", frames, FIFO_GAP_NS).start(mac.seqr)
    waited = 0
    while len(sbd.fifo_hold) < len(frames):
        await Timer(200, unit="ns")
        waited += 200
        assert waited < DECIDE_LIMIT_NS, f"the MAC monitor saw {len(sbd.fifo_hold)} of {len(frames)} frames"
    await Timer(FIFO_GAP_NS, unit="ns")
    dropped = (await hw.read32(regs.RX_DROP_FIFO)) - before
    await Timer(FIFO_GAP_NS, unit="ns")
    again = (await hw.read32(regs.RX_DROP_FIFO)) - before
    assert again == dropped, f"fifo: RX_DROP_FIFO went on counting with the bus stalled ({dropped} -> {again})"
    kept = len(frames) - dropped
    least = fifo_capacity(length, fifo_bytes, dma_bytes)
    assert dropped >= 1, f"fifo: {len(frames)} frames of {length} bytes into a stalled bus and no RX_DROP_FIFO"
    assert kept >= least, \
        f"fifo: only {kept} frames of {length} bytes kept, the {fifo_bytes}-byte FIFO holds at least {least}"
    sbd.logger.info(f"fifo: bus stalled, {len(frames)} frames of {length} bytes: {kept} kept "
                    f"(the FIFO holds at least {least}), {dropped} RX_DROP_FIFO")
    held, sbd.fifo_hold = sbd.fifo_hold, None
    for i, item in enumerate(held):
        if i < kept:
            sbd.predict(item)
        else:
            sbd.fifo_dropped(item)
    sbd.starve_drops["RX_DROP_FIFO"] = sbd.starve_drops.get("RX_DROP_FIFO", 0) + dropped
    tb.set_profile(saved)
    await wait_decided(sbd, hw)
    await sbd.drain(lambda: mac.driver.sent)
    await RandomTrafficSeq("after_fifo", len(frames), mac.driver.sent).start(mac.seqr)


async def run(env, hw, profile, flows, seed: int, scale: float) -> None:
    """The phase, after the run's traffic was drained: hold, send `rx_starve_frames` frames
    (most of them routed to the held queues), wait until each is decided, release, check the
    phase made the drop it is for, then as many frames again, which must flow."""
    if profile.rx_starve == "fifo":
        await run_fifo(env, hw, seed)
        return
    sbd, mac = env.scoreboard, env.mac_rx
    queues = held_queues(profile, len(sbd.mq.queues))
    weights = flow_weights(flows, set(queues), sbd.mq.route, random.Random(seed ^ 0x57A4))
    await hold(sbd, hw, queues, profile.rx_starve)
    n = max(1, int(profile.rx_starve_frames * scale))
    first = mac.driver.sent
    await RandomTrafficSeq("starve", n, first, weights).start(mac.seqr)
    waited = 0
    while sbd.frames_in < mac.driver.sent:
        await Timer(200, unit="ns")
        waited += 200
        assert waited < DECIDE_LIMIT_NS, f"the MAC monitor saw {sbd.frames_in} of {mac.driver.sent} frames"
    await wait_decided(sbd, hw)
    await release(sbd)
    want = DROP_OF[profile.rx_starve]
    assert sbd.starve_drops.get(want), \
        f"starve {profile.rx_starve}: {n} frames on queues {queues} and no {want} predicted " \
        f"(predicted: {sbd.starve_drops}): the phase did not exercise its drop"
    await sbd.drain(lambda: mac.driver.sent)
    await RandomTrafficSeq("after_starve", n, first + n).start(mac.seqr)
