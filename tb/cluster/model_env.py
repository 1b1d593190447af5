"""The cluster on the golden model: N `ModelHw` NICs (models/nic_model.py) joined by the
switch's golden model (models/eth_switch.py), in simulated clock cycles.

The NIC model has no time of its own: a frame is processed when it arrives and a TX doorbell
sends at once. Time comes from the switch: a frame the NIC sends enters its ingress port at
the current cycle (the port serializes: one beat per cycle plus the wire overhead), and a
frame out of an egress reaches the receiving NIC at the cycle of its last beat. A discrete
event loop moves from event to event (an admission decision in the switch, a frame's
arrival, a TCP timer, a sample) and runs the NAPI step of every host that had something
happen, as its interrupt would, at most once per NAPI interval (`napi_interval_ns`, as on the
RTL); the driver's work itself takes no simulated time. So the model
backend gives the goodput of an ideal NIC and an instant host behind the same switch, and
the same TCP behaviour (windows, drops, retransmissions) as the RTL backend.
"""
from __future__ import annotations

import heapq
from typing import Callable

from driver.backends.model import ModelHw
from models.eth_switch import EthSwitchModel
from tb.cluster.workload import CLK_NS, Cluster, ClusterConfig

STEPS_PER_INSTANT = 16
"""With a NAPI interval of 0: steps of one host at one instant at most (a step that moved
something is repeated)."""


class CycleClock:
    """The driver's clock: the event loop's cycle times CLK_NS."""

    def __init__(self) -> None:
        self.cycle = 0

    def now_ns(self) -> int:
        return self.cycle * CLK_NS


class ModelClusterEnv:
    backend = "model"

    def __init__(self, cfg: ClusterConfig) -> None:
        self.cfg = cfg
        self.n = cfg.nics
        db = cfg.data_bytes
        self.clock = CycleClock()
        self.switch = EthSwitchModel(cfg.nics, db, cfg.cap_cells, ifg_bytes=cfg.ifg_bytes,
                                     drop_thr=drop_threshold(cfg.drop_rate), drop_seed=cfg.seed)
        self.hws: list[ModelHw] = []
        for i in range(cfg.nics):
            hw = ModelHw(num_rxq=2, num_txq=2, dma_bytes=2 * db, data_bytes=db, seed=i,
                         clock=self.clock)
            hw.wire.keep_tx_frames = False
            hw.nic.tx.tso = True            # TX_OFFLOADS.tso 1, as the RTL's nic_top
            hw.wire.on_tx = self._tx(i)
            self.hws.append(hw)
        self._arrivals: list[tuple[int, int, int, bytes]] = []   # (cycle, seq, port, frame)
        self._seq = 0

    def _tx(self, port: int) -> Callable[[bytes], None]:
        def on_tx(frame: bytes) -> None:
            self.switch.send(port, frame, self.clock.cycle)
        return on_tx

    def now_ns(self) -> int:
        return self.clock.now_ns()

    def cycles(self) -> int:
        return self.clock.cycle

    async def set_forwarding(self, table: list[tuple[bytes, int]]) -> None:
        for i, (mac, port) in enumerate(table):
            self.switch.set_entry(i, mac, port)

    def switch_counters(self) -> list[dict[str, int]]:
        return [dict(vars(c), depth=self.switch.depth(p)) for p, c in enumerate(self.switch.counters)]

    async def run(self, cluster: Cluster, until: Callable[[], bool]) -> None:
        sw = self.switch
        hosts = cluster.hosts
        dirty = set(range(self.n))
        ready_at = [0] * self.n             # a host polls at most once per NAPI interval
        interval = -(-self.cfg.napi_interval_ns // CLK_NS)
        sample_every = self.cfg.sample_cycles
        next_sample = (self.clock.cycle // sample_every + 1) * sample_every
        while True:
            now = self.clock.cycle
            for f in sw.advance(now):
                self._seq += 1
                heapq.heappush(self._arrivals, (f.last, self._seq, f.port, f.frame))
            while self._arrivals and self._arrivals[0][0] <= now:
                _, _, port, frame = heapq.heappop(self._arrivals)
                await self.hws[port].wire.send(frame)
                dirty.add(port)
            for h in hosts:
                t = h.next_timer_ns()
                if t is not None and t <= self.clock.now_ns():
                    dirty.add(h.index)
            for i in sorted(dirty):
                if now < ready_at[i]:
                    continue
                ready_at[i] = now + interval
                work = False
                for _ in range(STEPS_PER_INSTANT if not interval else 1):
                    if not await hosts[i].step(self.clock.now_ns()):
                        break
                    work = True
                if not work:
                    dirty.discard(i)
            if cluster.phase == "transfer":
                while now >= next_sample:
                    cluster.sample(next_sample * CLK_NS, sw.take_peaks())
                    next_sample += sample_every
                cluster.maybe_progress()
            cluster.check_timeout()
            if until():
                return
            # the next event
            cands = [next_sample] if cluster.phase == "transfer" else []
            cands += [max(ready_at[i], now + 1) for i in dirty]
            a = sw.next_admission()
            if a is not None:
                cands.append(max(a + 1, now + 1))
            if self._arrivals:
                cands.append(max(self._arrivals[0][0], now + 1))
            for h in hosts:
                t = h.next_timer_ns()
                if t is not None:
                    cands.append(max(-(-t // CLK_NS), now + 1))
            if not cands:
                raise RuntimeError(f"cluster (model): nothing moves and no timer is armed: {cluster.status()}")
            self.clock.cycle = min(cands)


def drop_threshold(p: float) -> int:
    """A probability as the switch's random-drop threshold (p * 2^32)."""
    return min(int(p * (1 << 32)), (1 << 32) - 1) if p > 0 else 0
