"""The cluster's Ethernet switch as a golden model, written from the rules of docs/cluster.md
("The switch", S1-S7), independently of the HDL (tb/cluster/eth_switch.sv); the RTL test
tests/rtl/test_eth_switch.py runs both on the same traffic and compares every frame's
cycles, the egress order and the counters.

Time is the switch's clock cycle (edge) number. A beat "moves in cycle t" when its
valid/ready handshake happens at edge t. The model is exact to the cycle:

- Ingress (S2): a port takes a frame's beats on consecutive cycles, starting at the first
  cycle at or after the cycle it is offered in and at which the port is ready; after the
  frame it owes `g = max(0, g + L + IFG - B*DB)` wire bytes (L bytes in B beats), pays DB in
  every cycle in which no beat moves, and is ready while it owes less than DB.
- Random loss (S6), if asked: one xorshift32 draw per frame at each ingress.
- Routing (S3) at the first beat, admission (S4) at the edge of the last beat, in port
  order within one edge: a frame of B cells fits output o when the cells admitted there and
  not yet sent (sent: a beat loaded onto the egress at an earlier edge) plus B are at most
  the capacity; else it is dropped (drop tail).
- Egress (S5): frames leave in admission order; the egress loads a beat at edge u (the NIC
  takes it at u + 1), the first of a frame admitted at edge c at the earliest at c + 1, and a
  new frame only while it owes less than DB (the same wire rule as the ingress).

`EthSwitchModel.send` offers a frame on an ingress port at a cycle; `advance(t)` processes
everything that happens before cycle t; `delivered` lists the frames out of each egress with
their first and last cycles (the handshake cycles at the NIC); the counters are as the HDL's.
The cluster's model backend (tb/cluster/) uses it as the network between its golden-model
NICs.
"""
from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass, field

IFG_BYTES = 24
"""Ethernet's per-frame overhead the MAC streams leave out: preamble 7, SFD 1, FCS 4, inter-frame
gap 12 bytes."""
MAX_FRAME = 16384
TABLE = 16


@dataclass(frozen=True)
class SwitchFrame:
    """A frame out of an egress: its bytes, ingress port, and the cycles its first and last
    beats moved at the egress."""

    port: int
    frame: bytes
    src: int
    first: int
    last: int


@dataclass
class PortCounters:
    rx_frames: int = 0
    tx_frames: int = 0
    drops: int = 0
    drop_bytes: int = 0
    no_route: int = 0
    hairpin: int = 0
    oversize: int = 0
    injected: int = 0


@dataclass
class _Wire:
    """One side of a port: the last cycle a beat moved and the wire bytes owed after it."""

    busy_until: int = -1     # last cycle of the frame in progress (or the last one)
    owed: int = 0            # wire bytes owed right after `busy_until`

    def start(self, at: int, db: int) -> tuple[int, int]:
        """(first cycle >= `at` a frame may start, bytes owed when it does)."""
        t = self.busy_until
        earliest = t + 1 + self.owed // db       # the idle cycles pay the debt down below DB
        s = max(at, earliest)
        return s, max(0, self.owed - (s - 1 - t) * db)

    def finish(self, start_owed: int, last: int, length: int, beats: int, db: int, ifg: int) -> None:
        self.busy_until = last
        self.owed = max(0, start_owed + length + ifg - beats * db)


@dataclass(order=True)
class _Admit:
    edge: int
    port: int
    seq: int
    frame: bytes = field(compare=False)
    dests: tuple[int, ...] = field(compare=False)
    beats: int = field(compare=False)


@dataclass
class _Queued:
    """A frame admitted to an egress, with its load edges [u, u + beats)."""

    frame: bytes
    src: int
    beats: int
    u: int


class EthSwitchModel:
    """N ports, `data_bytes` per beat, `cap_cells` cells of buffer per egress."""

    def __init__(self, ports: int, data_bytes: int, cap_cells: int, ifg_bytes: int = IFG_BYTES,
                 max_frame: int = MAX_FRAME, table: list[tuple[bytes, int]] | None = None,
                 table_size: int = TABLE, drop_thr: int = 0, drop_seed: int = 0) -> None:
        """`drop_thr`, `drop_seed` (S6): a frame is lost at its ingress when that port's
        xorshift32 draw is below `drop_thr` (a probability times 2^32)."""
        if ports < 2:
            raise ValueError("a switch needs at least 2 ports")
        self.n = ports
        self.db = data_bytes
        self.cap = cap_cells
        self.ifg = ifg_bytes
        self.max_cells = -(-max_frame // data_bytes)
        self.table: list[tuple[bytes, int] | None] = [None] * table_size
        for i, (mac, port) in enumerate(table or []):
            self.set_entry(i, mac, port)
        self.counters = [PortCounters() for _ in range(ports)]
        self.drop_thr = drop_thr
        self._rng = [((drop_seed ^ (0x9E3779B9 * (p + 1))) & 0xFFFF_FFFF) | 1 for p in range(ports)]
        self._in = [_Wire() for _ in range(ports)]
        self._out = [_Wire() for _ in range(ports)]
        self._queue: list[deque[_Queued]] = [deque() for _ in range(ports)]   # not wholly loaded
        self._admitted = [0] * ports            # cells admitted so far
        self._sent_done = [0] * ports           # cells of frames wholly loaded and dropped from _queue
        self._pending: list[_Admit] = []
        self._seq = 0
        self.now = 0
        self._peak = [0] * ports
        self.delivered: list[SwitchFrame] = []
        self.taken: list[tuple[int, int, int]] = []
        """(port, first cycle, last cycle) of every frame the ingress took, in offer order per port."""

    def set_entry(self, index: int, mac: bytes, port: int) -> None:
        """Forwarding table entry `index`: frames to `mac` go out of `port`."""
        if len(mac) != 6:
            raise ValueError("a MAC address is 6 bytes")
        self.table[index] = (bytes(mac), port)

    # ------------------------------------------------------------------ S3 routing
    def route(self, frame: bytes, port: int) -> tuple[tuple[int, ...], str | None]:
        da = frame[:6]
        if da[0] & 1:
            return tuple(p for p in range(self.n) if p != port), None
        for e in self.table:
            if e is not None and e[0] == da and e[1] < self.n:
                if e[1] == port:
                    return (), "hairpin"
                return (e[1],), None
        return (), "no_route"

    # ------------------------------------------------------------------ S2 ingress
    def send(self, port: int, frame: bytes, cycle: int | None = None) -> int:
        """Offer `frame` on ingress `port` from `cycle` (default: now); returns the cycle its
        first beat moves. Frames of one port are taken in the order offered."""
        at = self.now if cycle is None else cycle
        if at < self.now:
            raise ValueError(f"cycle {at} is in the past (now {self.now})")
        if not frame:
            raise ValueError("an empty frame")
        beats = -(-len(frame) // self.db)
        w = self._in[port]
        first, owed = w.start(at, self.db)
        last = first + beats - 1
        w.finish(owed, last, len(frame), beats, self.db, self.ifg)
        self.taken.append((port, first, last))
        c = self.counters[port]
        c.rx_frames += 1
        x = self._rng[port]                      # one draw per frame (S6)
        x ^= (x << 13) & 0xFFFF_FFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFF_FFFF
        self._rng[port] = x
        if beats > self.max_cells:
            c.oversize += 1
            return first
        if self.drop_thr and x < self.drop_thr:
            c.injected += 1
            return first
        dests, why = self.route(frame, port)
        if why == "hairpin":
            c.hairpin += 1
        elif why == "no_route":
            c.no_route += 1
        if dests:
            self._seq += 1
            heapq.heappush(self._pending, _Admit(last, port, self._seq, bytes(frame), dests, beats))
        return first

    def ingress_free(self, port: int) -> int:
        """The first cycle a frame offered now on `port` would start."""
        return self._in[port].start(self.now, self.db)[0]

    # ------------------------------------------------------------------ S4, S5
    def _used(self, o: int, edge: int) -> int:
        """Cells admitted to `o` and not loaded onto its egress before `edge`."""
        q = self._queue[o]
        while q and q[0].u + q[0].beats <= edge:           # wholly loaded before `edge`
            self._sent_done[o] += q.popleft().beats
        loaded = self._sent_done[o] + sum(min(f.beats, max(0, edge - f.u)) for f in q)
        return self._admitted[o] - loaded

    def _admit(self, a: _Admit) -> None:
        for o in a.dests:
            if self._used(o, a.edge) + a.beats > self.cap:
                self.counters[o].drops += 1
                self.counters[o].drop_bytes += len(a.frame)
                continue
            self._admitted[o] += a.beats
            w = self._out[o]
            u, owed = w.start(a.edge + 1, self.db)
            w.finish(owed, u + a.beats - 1, len(a.frame), a.beats, self.db, self.ifg)
            self._queue[o].append(_Queued(a.frame, a.port, a.beats, u))
            self.counters[o].tx_frames += 1
            self.delivered.append(SwitchFrame(o, a.frame, a.port, u + 1, u + a.beats))

    def advance(self, cycle: int) -> list[SwitchFrame]:
        """Process every admission at an edge before `cycle`; time becomes `cycle` (later
        offers start there or later). Returns the frames newly scheduled for delivery, with
        the cycles they will reach the NIC (possibly after `cycle`)."""
        if cycle < self.now:
            raise ValueError("time does not go back")
        n0 = len(self.delivered)
        while self._pending and self._pending[0].edge < cycle:
            a = heapq.heappop(self._pending)
            self._admit(a)
            if not self._pending or self._pending[0].edge != a.edge:     # the edge is done
                for o in range(self.n):
                    self._peak[o] = max(self._peak[o], self._used(o, a.edge + 1))
        self.now = cycle
        return self.delivered[n0:]

    def take_peaks(self) -> list[int]:
        """The largest queue (cells after an edge) of each egress since the last call; the
        next window starts from the depth now."""
        out = [max(p, self.depth(o)) for o, p in enumerate(self._peak)]
        self._peak = [self.depth(o) for o in range(self.n)]
        return out

    def next_admission(self) -> int | None:
        """The edge of the next admission decision, or None."""
        return self._pending[0].edge if self._pending else None

    def depth(self, o: int, cycle: int | None = None) -> int:
        """Cells queued at egress `o` at `cycle` (default now; admissions processed so far)."""
        return self._used(o, self.now if cycle is None else cycle)
