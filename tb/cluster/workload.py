"""The cluster workload, written once for both backends: N hosts, each one reference driver
(the same driver/ code) on its own NIC with its own host memory and GPU memory, all on one
Ethernet switch; every GPU sends a buffer to every other GPU over devmem TCP, all at once.

Per host (docs/cluster.md, "The workload"):
- The driver brought up as an administrator would: probe, `ethtool -G` (ring, tcp-data-split
  on, hds-thresh 0), `-L combined 2`, the MTU (MSS + 40), open, the host's address
  (10.0.0.<i+1>/24, MAC 02:00:00:00:00:<i+1>) and static neighbour entries for the others.
  RSS sends everything to queue 0 (host memory: the ACKs of the host's own sends); one
  n-tuple rule steers TCP to the listening port to queue 1, bound to a receive dma-buf
  (netlink bind-rx). A transmit dma-buf (bind-tx) holds what this GPU sends, one region per
  peer, filled by the GPU with seeded random bytes.
- One connection per ordered pair, as NCCL's network transport makes them (a send comm and
  a receive comm per peer): host i connects to every other host's listener and sends its
  region for that peer in MSG_ZEROCOPY calls from the dma-buf (`SCM_DEVMEM_DMABUF`), then
  shuts down; the CPU never touches the payload.
- Receiving, as NCCL's devmem unpack does (models/gpu_unpack.py): recvmsg(MSG_SOCK_DEVMEM)
  gives each fragment's dma-buf offset and length; they become `loadMeta` entries
  (src_off, len, dst_off) of the current receive request (`slice_bytes` of the stream);
  when a request is complete the GPU kernel gathers its fragments into the contiguous
  destination buffer in device memory, and only then are the request's tokens returned
  (SO_DEVMEM_DONTNEED). At the end each destination buffer, read with the GPU accessor,
  must equal what the peer sent, and no CPU read of device memory may have happened.

A backend (`ClusterEnv`) gives the hosts' `NicHw`s, the switch's table and counters, and
the scheduling: it runs every host's NAPI step (`Host.step`) when the host's NIC interrupts
or its next timer is due (tb/cluster/cluster_sim.py on the RTL, tb/cluster/model_env.py on
the golden model).
"""
from __future__ import annotations

import errno
import random
import struct
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from driver import ethtool
from driver.errors import KernelError
from driver.ethtool_features import ALL_TSO, parse_features_args
from driver.gso import GSO_LEGACY_MAX_SIZE
from driver.headers import AF_INET
from driver.kernel import Kernel
from driver.netdev import Netdev
from driver.socket import (CMSG_SPACE, MSG_SOCK_DEVMEM, MSG_ZEROCOPY, SCM_DEVMEM_DMABUF,
                           SO_RCVBUF, SO_ZEROCOPY, SOCK_STREAM, SOL_SOCKET, DmabufCmsg, Socket)
from driver.tcp import TcpState
from models.device_memory import DmaBuf
from models.gpu_unpack import LOAD_META_BYTES, NET_UNPACK_MAX_SLICE_PAGES, UnpackSlot, gpu_unpack
from models.host_memory import PAGE_SIZE

CLK_NS = 4
PORT = 5201
DEVMEM_QUEUE = 1
SEND_CHUNK = 64 << 10
"""Bytes per MSG_ZEROCOPY send call."""
HDR_BYTES = 54
"""Ethernet + IPv4 + TCP headers of a data segment (the driver sends no TCP options on data)."""
MAX_DEV_BYTES = 64 << 20
"""Device memory per host (the testbench's GPU window, tb/nic_tb.py DEV_SIZE)."""
RSS_KEY = bytes(range(40))


def mac_of(i: int) -> bytes:
    return bytes([0x02, 0, 0, 0, 0, i + 1])


def ip_of(i: int) -> str:
    return f"10.0.0.{i + 1}"


@dataclass
class ClusterConfig:
    nics: int = 4
    bytes_per_pair: int = 256 << 10
    data_width: int = 64
    mss: int = 1448
    switch_buffer_kib: int = 1024
    drop_rate: float = 0.0
    ifg_bytes: int = 24
    pairs: list[tuple[int, int]] | None = None
    """(sender, receiver) pairs; None: every ordered pair (all-to-all)."""
    seed: int = 1
    rto_min_us: float = 200.0
    """The driver's rto_min in simulated microseconds (Linux: 200 ms; the initial RTO is 5
    times it and the clock granularity 1/200 of it, as in `nicsim live --backend rtl`)."""
    ring: int = 256
    rx_pages: int = 1024
    slice_bytes: int = 128 << 10
    """Bytes of one receive request (its fragments are unpacked, then its tokens returned)."""
    rcvbuf_kib: int = 256
    """The receive buffer a host gives its incoming connections together (KiB): each
    receive socket gets an equal share by SO_RCVBUF on the listener (the application knows
    its peers, as NCCL does), which bounds its window. 256 KiB is about the fabric's
    bandwidth-delay product (docs/cluster.md: measured against 128 to 384 KiB and the
    kernel's default of 128 KiB per socket)."""
    napi_interval_ns: int = 1000
    """A host runs its NAPI poll at most once per this interval (the CPU's time for a poll,
    and interrupt moderation: a poll takes the frames of the last interval in one batch, and
    the socket sends one ACK per poll)."""
    sample_cycles: int = 1024
    """Interval of the time series (goodput per NIC, switch queue depth)."""
    timeout_ms: float = 200.0
    """Simulated time after which the run gives up."""
    send_order: str = "nccl"
    """The order in which a host starts its sends (each sendmsg pushes its initial window at
    once): "nccl", NCCL's p2p schedule (`p2p_rounds`: in round k host i sends to i + d_k and
    receives from i - d_k, so each first burst goes to a different receiver), or "index"
    (peers in index order: every host's first window goes to the lowest other host, an
    incast at the start)."""
    xps_rxqs: bool = True
    """XPS by receive queue (`Netdev.set_xps_rxqs`, an administrator's sysfs setting): TX
    queue 0 for the sockets receiving on RX queue 0 (this host's sends: data out, their ACKs
    in), TX queue 1 for those on the devmem queue 1 (this host's receives: only ACKs out).
    The NIC serves its TX queues round robin a frame at a time (docs/tx.md), so an ACK waits
    for at most the data frame in progress instead of behind every data frame already in
    the one ring. False: the flow hash picks the queue (`skb_tx_hash`, Linux without XPS)."""
    tso: bool | None = None
    """TCP segmentation offload (docs/tx.md): None: on when the NIC has it (`TX_OFFLOADS.tso`;
    Linux's default, the driver advertises it then), True: `ethtool -K ethN tso on` (an error
    on a NIC without it), False: `ethtool -K ethN tso off` (each send an MSS-sized skb)."""
    tso_win_divisor: int = 64
    """`net.ipv4.tcp_tso_win_divisor` on every host (Linux's default is 3): a GSO skb the
    window cannot take whole waits for an ACK (`tcp_tso_should_defer`) while the room is
    under this fraction of min(peer window, cwnd) (and under `tcp_tso_segs` segments);
    ip-sysctl.rst: "a choice between burstiness and building larger TSO frames". 0: wait
    while the room is at most 3 MSS. 64: with the default windows (85 KiB per connection)
    a room of one segment goes at once at MSS 1448 and 8948, as without deferral
    (docs/cluster.md: Linux's 3 costs 3.6 to 5.5 points at MSS 8948)."""
    gso_max_size: int | None = 18 << 10
    """`ip link set dev ethN gso_max_size BYTES` on every host: the longest GSO skb, headers
    included, so the longest TSO send (`dev->gso_max_size`; TCP keeps `MAX_TCP_HEADER` + 1
    below it and cuts at an MSS multiple, `tcp_xmit_size_goal`); None: the device's
    default, 65536. 18 KiB: two MSS 8948 segments (twelve of 1448), so that an ACK the NIC
    sends between two TSO sends of another queue waits at most ~1.1 us at 128 Gbit/s
    (docs/cluster.md: 65536 costs 0.6 points)."""
    stall_ms: float | None = None
    """Simulated time without progress (a connection established or closing, a byte
    acknowledged, received or unpacked, a zero-copy notification) after which the run gives
    up naming the connections that are stuck; None: 50 times rto_min (10 ms by default),
    which spans five retransmissions of one segment with their backoff (rto_min times
    1 + 2 + 4 + 8 + 16 = 31)."""

    @property
    def mtu(self) -> int:
        return self.mss + 40

    @property
    def stall_ns(self) -> int:
        return int((self.stall_ms * 1e6) if self.stall_ms is not None else 50 * self.rto_min_us * 1e3)

    @property
    def data_bytes(self) -> int:
        return self.data_width // 8

    @property
    def cap_cells(self) -> int:
        return self.switch_buffer_kib * 1024 // self.data_bytes

    def pair_list(self) -> list[tuple[int, int]]:
        if self.pairs is not None:
            return [tuple(p) for p in self.pairs]       # type: ignore[misc]
        return [(i, j) for i in range(self.nics) for j in range(self.nics) if i != j]

    def check(self) -> None:
        """ValueError with a one-line message for a configuration that cannot run."""
        if self.nics < 2 or self.nics > 16:
            raise ValueError(f"--nics {self.nics}: 2 to 16 NICs")
        if self.data_width not in (64, 512):
            raise ValueError(f"--data-width {self.data_width}: 64 or 512")
        if self.bytes_per_pair < 1:
            raise ValueError("--bytes-per-pair must be at least 1")
        if not 88 <= self.mss <= 8960:
            raise ValueError(f"--mss {self.mss}: 88 to 8960 (MTU 128 to 9000)")
        if not 4 <= self.rcvbuf_kib <= 6 << 10:
            raise ValueError(f"--rcvbuf {self.rcvbuf_kib}: 4 to 6144 KiB (tcp_rmem[2])")
        if self.napi_interval_ns < 0:
            raise ValueError(f"--napi-interval-ns {self.napi_interval_ns}: cannot be negative")
        if not self.rto_min_us > 0:
            raise ValueError(f"--rto-min-us {self.rto_min_us:g}: must be positive")
        if not self.timeout_ms > 0:
            raise ValueError(f"--timeout-ms {self.timeout_ms:g}: must be positive")
        if self.stall_ms is not None and not self.stall_ms > 0:
            raise ValueError(f"--stall-ms {self.stall_ms:g}: must be positive")
        if self.send_order not in SEND_ORDERS:
            raise ValueError(f"--send-order {self.send_order}: one of {', '.join(SEND_ORDERS)}")
        if not 0 <= self.tso_win_divisor <= 255:
            raise ValueError(f"--tso-win-divisor {self.tso_win_divisor}: 0 to 255 (a u8 sysctl)")
        if self.gso_max_size is not None and not 0 < self.gso_max_size <= GSO_LEGACY_MAX_SIZE:
            raise ValueError(f"--gso-max-size {self.gso_max_size}: 1 to {GSO_LEGACY_MAX_SIZE} "
                             "(the NIC's tso_max_size)")
        if not 0 <= self.drop_rate < 1:
            raise ValueError(f"--drop-rate {self.drop_rate}: a probability in [0, 1)")
        frame_cells = -(-(self.mss + HDR_BYTES) // self.data_bytes)
        if self.cap_cells < frame_cells:
            raise ValueError(f"--switch-buffer {self.switch_buffer_kib} KiB holds no "
                             f"{self.mss + HDR_BYTES}-byte frame")
        if self.switch_buffer_kib > 1024:
            raise ValueError(f"--switch-buffer {self.switch_buffer_kib}: at most 1024 KiB per port")
        for s, r in self.pair_list():
            if not (0 <= s < self.nics and 0 <= r < self.nics) or s == r:
                raise ValueError(f"pair {s}->{r}: two different NICs of 0..{self.nics - 1}")
        sends = max(sum(1 for s, _ in self.pair_list() if s == i) for i in range(self.nics))
        recvs = max(sum(1 for _, r in self.pair_list() if r == i) for i in range(self.nics))
        need = (sends + recvs) * _round_page(self.bytes_per_pair) + self.rx_pages * PAGE_SIZE
        if need > MAX_DEV_BYTES:
            raise ValueError(f"--bytes-per-pair {self.bytes_per_pair}: a GPU would need "
                             f"{need >> 20} MiB of its {MAX_DEV_BYTES >> 20} MiB")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


SEND_ORDERS = ("nccl", "index")


def p2p_deltas(n: int) -> list[int]:
    """NCCL's p2p schedule for n ranks (one node): the rank offsets of the rounds, in round
    order. The offset follows the quadratic recurrence d += round (mod the next power of two
    of n), offsets of n or more skipped, so each round is a permutation: in round k rank i
    sends to (i + d_k) % n and receives from (i - d_k) % n (NCCL src/init.cc, the
    `p2pSchedule` of `ncclTransportP2pSetup`'s callers: `sendRank = (rank + delta) % n`,
    `recvRank = (rank - delta + n) % n`). Offset 0 (the rank itself) is left out. For n = 4:
    1, 3, 2."""
    pow2 = 1
    while pow2 < n:
        pow2 <<= 1
    out: list[int] = []
    delta, rnd = 0, 0
    while len(out) < n:
        if delta < n:
            out.append(delta)
        rnd += 1
        delta = (delta + rnd) & (pow2 - 1)
    return [d for d in out if d]


def send_order(cfg: ClusterConfig, src: int, dsts: list[int]) -> list[int]:
    """The order in which host `src` starts its sends to `dsts` (`ClusterConfig.send_order`)."""
    if cfg.send_order == "index":
        return list(dsts)
    rank = {(src + d) % cfg.nics: k for k, d in enumerate(p2p_deltas(cfg.nics))}
    return sorted(dsts, key=lambda j: rank[j])


def _round_page(n: int) -> int:
    return -(-n // PAGE_SIZE) * PAGE_SIZE


def pair_data(cfg: ClusterConfig, src: int, dst: int) -> bytes:
    """What GPU `src` sends to GPU `dst` (seeded)."""
    return random.Random(cfg.seed * 1_000_003 + src * 131 + dst).randbytes(cfg.bytes_per_pair)


class ClusterEnv(Protocol):
    """A backend: the NICs and the switch."""

    n: int
    hws: list[Any]
    """One `NicHw` per host, with `host`, `dev` (DeviceMemory) and `clock`."""

    def now_ns(self) -> int: ...

    async def set_forwarding(self, table: list[tuple[bytes, int]]) -> None: ...

    def switch_counters(self) -> list[dict[str, int]]: ...


# ------------------------------------------------------------------------------------ hosts
@dataclass
class Sender:
    """The send side of one pair: a connected socket sending the region of the TX dma-buf."""

    sock: Socket
    dst: int
    offset: int
    nbytes: int
    calls: int = 0
    notes: list[tuple[int, int]] = field(default_factory=list)
    started: bool = False

    def notified(self) -> bool:
        got = sorted(i for lo, hi in self.notes for i in range(lo, hi + 1))
        return got == list(range(self.calls))

    @property
    def done(self) -> bool:
        info = self.sock.tcp_info()
        return (self.started and self.notified()
                and info.state in (TcpState.FIN_WAIT2, TcpState.TIME_WAIT, TcpState.CLOSED))


@dataclass
class Receiver:
    """The receive side of one pair: recvmsg with devmem cmsgs, the NCCL-style unpack into
    the destination buffer, tokens back per request."""

    sock: Socket
    src: int
    bounce: DmaBuf
    binding_id: int
    dst: DmaBuf
    nbytes: int
    slice_bytes: int
    table_addr: int
    host_mem: Any
    got: int = 0
    unpacked: int = 0
    requests: int = 0
    entries: int = 0
    eof: bool = False
    t_done_ns: int | None = None
    slot: UnpackSlot = field(default_factory=UnpackSlot)
    tokens: list[int] = field(default_factory=list)
    linear_bytes: int = 0

    def _flush(self) -> int:
        """The request is complete: publish its entries, run the GPU kernel, return its
        tokens."""
        n = self.slot.publish(self.host_mem, self.table_addr)
        gpu_unpack(self.host_mem, self.table_addr, n, self.bounce, self.dst, self.unpacked)
        self.unpacked += self.slot.bytes
        self.entries += n
        self.requests += 1
        self.slot = UnpackSlot()
        toks, self.tokens = self.tokens, []
        for i in range(0, len(toks), 128):
            self.sock.dontneed(toks[i:i + 128])
        return len(toks) + 1

    def _fragment(self, off: int, length: int, token: int) -> int:
        """One devmem fragment: entries of the current request (split where a request ends);
        its token is returned with the request its last byte is in."""
        work = 0
        while length:
            if len(self.slot.entries) >= NET_UNPACK_MAX_SLICE_PAGES:
                work += self._flush()
            k = min(length, self.slice_bytes - self.slot.bytes)
            self.slot.add(off, k)
            off += k
            length -= k
            if not length:
                self.tokens.append(token)
            if self.slot.bytes >= self.slice_bytes:
                work += self._flush()
        return work

    def drain(self, now_ns: int) -> int:
        """Read what the socket has; unpack every request that completed. Work done."""
        work = 0
        while not self.eof:
            try:
                m = self.sock.recvmsg(1 << 20, 256 * CMSG_SPACE(24), MSG_SOCK_DEVMEM)
            except KernelError as e:
                if e.errno == errno.EAGAIN:
                    break
                raise
            if m.nbytes == 0:
                self.eof = True
                break
            pos = 0
            for c in m.cmsgs:
                d = c.data
                assert isinstance(d, DmabufCmsg), "a devmem receive gives dmabuf_cmsg messages only"
                if c.is_linear:
                    # bytes the stack kept in host memory (this NIC always splits, so none are
                    # expected): copied into place as they are
                    self.dst.gpu_write(self.unpacked + self.slot.bytes, m.data[pos:pos + d.frag_size])
                    pos += d.frag_size
                    self.linear_bytes += d.frag_size
                    self.slot.bytes += d.frag_size
                    continue
                assert d.dmabuf_id == self.binding_id, "a fragment of another dma-buf"
                work += self._fragment(d.frag_offset, d.frag_size, d.frag_token)
            self.got += m.nbytes
            work += 1
        if (self.eof or self.got >= self.nbytes) and (self.slot.bytes or self.tokens):
            work += self._flush()
        if self.unpacked >= self.nbytes and self.t_done_ns is None:
            self.t_done_ns = now_ns
        if self.eof and not self.sock.closed:
            self.sock.close()
        return work


@dataclass
class Host:
    index: int
    hw: Any
    kernel: Kernel
    nd: Netdev
    rx_buf: DmaBuf
    rx_id: int
    tx_buf: DmaBuf | None
    tx_id: int | None
    listener: Socket
    dst_bufs: dict[int, DmaBuf]
    """The GPU's destination buffer for each peer sending to it (by the peer's index)."""
    senders: dict[int, Sender] = field(default_factory=dict)
    receivers: dict[int, Receiver] = field(default_factory=dict)
    accepted: list[Socket] = field(default_factory=list)
    steps: int = 0

    async def step(self, now_ns: int) -> int:
        """One NAPI round: RX, TX completions, timers, ACKs (`Netdev.poll`), then the
        application: new connections, receive and unpack, zero-copy notifications. Returns
        the work done (0: nothing moved)."""
        self.steps += 1
        n = await self.nd.poll()
        while True:
            try:
                s, _ = self.listener.accept()
            except KernelError as e:
                if e.errno != errno.EAGAIN:
                    raise
                break
            self.accepted.append(s)
            n += 1
        for r in self.receivers.values():
            n += r.drain(now_ns)
        for sd in self.senders.values():
            if sd.started:
                got = sd.sock.zerocopy_notifications()
                sd.notes += got
                n += len(got)
        return n

    def next_timer_ns(self) -> int | None:
        return self.kernel.tcp.next_timer_ns()

    async def arm_interrupts(self) -> None:
        """NAPI complete: re-enable every running queue's interrupt."""
        for q in self.nd.rx_queues:
            if q.running and q.ring is not None:
                await q.ring.arm_irq()
        for tq in self.nd.tx_queues:
            if tq.running and tq.ring is not None:
                await tq.ring.arm_irq()


# ------------------------------------------------------------------------------------ results
@dataclass
class PairResult:
    src: int
    dst: int
    bytes: int
    exact: bool
    t_done_ns: int | None
    goodput_fraction: float
    requests: int
    entries: int
    notified: bool


@dataclass
class ClusterResult:
    config: dict[str, Any]
    backend: str
    pairs: list[PairResult]
    t0_ns: int
    t_end_ns: int
    aggregate_fraction: float
    """Sum of the pairs' bytes over (last done - t0), as a fraction of the line rate of the
    receiving NICs' ports together (all N for all-to-all, 1 for an incast)."""
    payload_share: float
    """The most a data frame of MSS bytes can carry: MSS / (its beats, or its wire time if
    longer, times the bytes per beat)."""
    switch: list[dict[str, int]]
    tcp: list[dict[str, int]]
    hw_drops: list[dict[str, int]]
    cpu_reads: int
    samples: dict[str, Any]
    sim_ns: int
    cycles: int
    wall_s: float
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    tx: list[dict[str, Any]] = field(default_factory=list)
    """Per host: `tso` ("on", "off" or "absent") and the driver's TX counters (`tx-packets`,
    `tx-hw-gso-packets`: TSO sends, `tx-hw-gso-wire-packets`: their segments)."""

    @property
    def ok(self) -> bool:
        return not self.errors

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ClusterResult:
        d = dict(d)
        d["pairs"] = [PairResult(**p) for p in d["pairs"]]
        return cls(**d)


def payload_share(cfg: ClusterConfig) -> float:
    db = cfg.data_bytes
    frame = cfg.mss + HDR_BYTES
    cycles = max(-(-frame // db), (frame + cfg.ifg_bytes) / db)
    return cfg.mss / (cycles * db)


# ------------------------------------------------------------------------------------ the run
class Cluster:
    """The hosts and the workload on a backend; `run` drives it with the backend's scheduler."""

    def __init__(self, cfg: ClusterConfig, env: ClusterEnv,
                 progress: Callable[[str], None] = print) -> None:
        cfg.check()
        self.cfg = cfg
        self.env = env
        self.progress = progress
        self.hosts: list[Host] = []
        self.t0_ns = 0
        self.samples: dict[str, Any] = {"t_ns": [], "rx_bytes": [[] for _ in range(cfg.nics)],
                                        "depth_peak": [[] for _ in range(cfg.nics)],
                                        "srtt_ns": [[] for _ in range(cfg.nics)]}
        self._wall0 = time.monotonic()
        self._last_progress = 0.0
        self.phase = "setup"
        self._mark: tuple[Any, ...] | None = None
        self._mark_ns = 0

    # ---- setup
    async def setup(self) -> None:
        cfg = self.cfg
        pairs = cfg.pair_list()
        await self.env.set_forwarding([(mac_of(i), i) for i in range(cfg.nics)])
        for i, hw in enumerate(self.env.hws):
            k = Kernel(clock=hw.clock)
            k.tcp.rto_min_ns = int(cfg.rto_min_us * 1000)
            k.tcp.rto_init_ns = 5 * k.tcp.rto_min_ns
            k.tcp.clock_g_ns = max(1, k.tcp.rto_min_ns // 200)
            k.tcp.tso_win_divisor = cfg.tso_win_divisor   # sysctl net.ipv4.tcp_tso_win_divisor
            nd = Netdev(k, hw, name=f"eth{i}")
            nd.dev_addr = mac_of(i)
            await nd.probe()
            if cfg.tso is not None:                     # `ethtool -K ethN tso on|off`
                try:
                    nd.set_features(parse_features_args(f"tso {'on' if cfg.tso else 'off'}"))
                except KernelError as e:
                    raise ValueError(f"--tso: ethtool -K eth{i} tso on: the NIC has no TSO "
                                     f"(TX_OFFLOADS.tso reads 0; errno {e.errno})") from None
            if cfg.gso_max_size is not None:            # `ip link set dev ethN gso_max_size`
                nd.gso_max_size = cfg.gso_max_size
            await nd.set_ringparam(rx_pending=cfg.ring, tcp_data_split=True, hds_thresh=0)
            await nd.set_channels(2)
            await nd.set_mtu(cfg.mtu)
            await nd.open()
            if cfg.xps_rxqs:
                nd.set_xps_rxqs(0, 1 << 0)
                nd.set_xps_rxqs(DEVMEM_QUEUE, 1 << DEVMEM_QUEUE)
            nd.add_ip(f"{ip_of(i)}/24")
            for j in range(cfg.nics):
                if j != i:
                    k.neigh_add(ip_of(j), mac_of(j))
            await ethtool.set_rx_flow_hash(hw, {"ip4", "tcp4", "udp4", "ip6", "tcp6", "udp6"})
            await ethtool.set_rxfh(hw, key=RSS_KEY, num_queues=2)
            await ethtool.set_rxfh_equal(hw, 1, 2)                  # RSS: queue 0 only
            rules = ethtool.NtupleRules(hw, 2)
            await rules.clear()
            await rules.add(ethtool.NtupleSpec("tcp4", DEVMEM_QUEUE, dst_ip=ip_of(i), dst_port=PORT))
            # the GPU's destination buffers first (contiguous, as the application allocates
            # them before binding): the scattered dma-bufs below would leave no contiguous
            # run of several MiB in the 64 MiB
            dst_bufs = {s: hw.dev.export_dmabuf(_round_page(cfg.bytes_per_pair),
                                                chunk_size=_round_page(cfg.bytes_per_pair), scatter=False)
                        for s, r in pairs if r == i}
            nl = k.netlink_open()
            rx_buf = hw.dev.export_dmabuf(cfg.rx_pages * PAGE_SIZE, chunk_size=64 * PAGE_SIZE)
            rx_id = await nl.bind_rx(nd.ifindex, k.dma_buf_fd(rx_buf), [DEVMEM_QUEUE])
            dsts = [r for s, r in pairs if s == i]
            tx_buf = tx_id = None
            if dsts:
                tx_buf = hw.dev.export_dmabuf(len(dsts) * _round_page(cfg.bytes_per_pair),
                                              chunk_size=16 * PAGE_SIZE)
                for n, j in enumerate(dsts):                        # the GPU fills it
                    tx_buf.gpu_write(n * _round_page(cfg.bytes_per_pair), pair_data(cfg, i, j))
                tx_id = await nl.bind_tx(nd.ifindex, k.dma_buf_fd(tx_buf))
            lst = k.socket(AF_INET, SOCK_STREAM)
            peers = sum(1 for _, r in pairs if r == i)
            if peers:                                               # inherited by accept()
                lst.setsockopt(SOL_SOCKET, SO_RCVBUF, (cfg.rcvbuf_kib << 10) // peers)
            lst.bind(("0.0.0.0", PORT))
            lst.listen()
            self.hosts.append(Host(i, hw, k, nd, rx_buf, rx_id, tx_buf, tx_id, lst, dst_bufs))
        self.progress(f"cluster: {cfg.nics} hosts up (MTU {cfg.mtu}, ring {cfg.ring}, "
                      f"{cfg.rx_pages}-page RX dma-buf on queue {DEVMEM_QUEUE}), "
                      f"{len(pairs)} connections to open")

    async def connect(self) -> None:
        """Every sender connects to its receiver's listener; the backend runs the
        handshakes."""
        cfg = self.cfg
        for s, r in cfg.pair_list():
            h = self.hosts[s]
            sock = h.kernel.socket(AF_INET, SOCK_STREAM)
            await sock.connect((ip_of(r), PORT))
            dsts = [d for a, d in cfg.pair_list() if a == s]
            h.senders[r] = Sender(sock, r, dsts.index(r) * _round_page(cfg.bytes_per_pair),
                                  cfg.bytes_per_pair)

    def connected(self) -> bool:
        want = {r: sum(1 for _, d in self.cfg.pair_list() if d == r) for r in range(self.cfg.nics)}
        return (all(s.sock.tcp_info().state == TcpState.ESTABLISHED
                    for h in self.hosts for s in h.senders.values())
                and all(len(h.accepted) == want[h.index] for h in self.hosts))

    async def start(self) -> None:
        """All connections up: the receive side of each, then every send at once."""
        cfg = self.cfg
        for h in self.hosts:
            for sock in h.accepted:
                peer_ip = str(sock.sk.raddr)              # type: ignore[union-attr]
                src = int(peer_ip.rsplit(".", 1)[1]) - 1
                dst = h.dst_bufs[src]
                table = h.hw.host.alloc(NET_UNPACK_MAX_SLICE_PAGES * LOAD_META_BYTES, 64)
                h.receivers[src] = Receiver(sock, src, h.rx_buf, h.rx_id, dst, cfg.bytes_per_pair,
                                            cfg.slice_bytes, table, h.hw.host)
        self.t0_ns = self.env.now_ns()
        self.phase = "transfer"
        for h in self.hosts:
            cm = [(SOL_SOCKET, SCM_DEVMEM_DMABUF, struct.pack("<I", h.tx_id or 0))]
            for j in send_order(cfg, h.index, list(h.senders)):
                s = h.senders[j]
                s.sock.setsockopt(SOL_SOCKET, SO_ZEROCOPY, struct.pack("<i", 1))
                for off in range(0, s.nbytes, SEND_CHUNK):
                    n = min(SEND_CHUNK, s.nbytes - off)
                    assert await s.sock.sendmsg([(s.offset + off, n)], cm, MSG_ZEROCOPY) == n
                    s.calls += 1
                s.sock.shutdown()
                s.started = True
        self.progress(f"cluster: {len(cfg.pair_list())} connections established; sending "
                      f"{cfg.bytes_per_pair} B per pair from t = {self.t0_ns / 1e3:.1f} us")

    def done(self) -> bool:
        return (self.phase == "transfer"
                and all(r.eof and r.unpacked >= r.nbytes for h in self.hosts for r in h.receivers.values())
                and all(s.done for h in self.hosts for s in h.senders.values()))

    # ---- observation
    def sample(self, t_ns: int, depth_peak: list[int]) -> None:
        s = self.samples
        s["t_ns"].append(t_ns - self.t0_ns)
        for h in self.hosts:
            s["rx_bytes"][h.index].append(sum(r.got for r in h.receivers.values()))
        for p, d in enumerate(depth_peak):
            s["depth_peak"][p].append(d)
        for h in self.hosts:                # the smoothed RTT of the host's sends (0: none yet)
            rtts = [sd.sock.tcp_info().srtt_ns for sd in h.senders.values()]
            rtts = [r for r in rtts if r]
            s["srtt_ns"][h.index].append(sum(rtts) // len(rtts) if rtts else 0)

    def status(self) -> str:
        got = sum(r.unpacked for h in self.hosts for r in h.receivers.values())
        total = len(self.cfg.pair_list()) * self.cfg.bytes_per_pair
        sw = self.env.switch_counters()
        drops = sum(c["drops"] + c["injected"] for c in sw)
        rtx = sum(h.kernel.tcp.mib.RetransSegs for h in self.hosts)
        t = (self.env.now_ns() - self.t0_ns) / 1e3 if self.phase == "transfer" else 0.0
        return (f"cluster: {self.phase}: {got}/{total} B unpacked, simulated {t:.1f} us, "
                f"switch drops {drops}, retransmissions {rtx}, wall {time.monotonic() - self._wall0:.0f} s")

    def maybe_progress(self, every_s: float = 5.0) -> None:
        now = time.monotonic()
        if now - self._last_progress >= every_s:
            self._last_progress = now
            self.progress(self.status())

    def check_timeout(self) -> None:
        """TimeoutError (one line) after `timeout_ms` of transfer, or when nothing has moved
        for `stall_ns` (`stalled`)."""
        now = self.env.now_ns()
        if self.phase == "transfer" and (now - self.t0_ns) > self.cfg.timeout_ms * 1e6:
            raise TimeoutError(f"cluster: no end after {self.cfg.timeout_ms:g} ms simulated: {self.status()}")
        mark = self._progress_mark()
        if mark != self._mark:
            self._mark, self._mark_ns = mark, now
        elif now - self._mark_ns > self.cfg.stall_ns:
            raise TimeoutError(f"cluster: no progress for {(now - self._mark_ns) / 1e6:.1f} ms simulated "
                               f"(at {now / 1e6:.3f} ms): {self.stuck()}; {self.status()}")

    def _progress_mark(self) -> tuple[Any, ...]:
        """Everything whose change is progress: the TCP states, the bytes acknowledged and
        received, the bytes unpacked and the zero-copy notifications."""
        m: list[Any] = [self.phase]
        for h in self.hosts:
            m.append(len(h.accepted))
            for sd in h.senders.values():
                sk = sd.sock.sk
                m.append((sk.state, sk.bytes_acked, len(sd.notes)) if sk is not None else None)
            for r in h.receivers.values():
                sk = r.sock.sk
                m.append((r.got, r.unpacked, r.eof, sk.state if sk is not None else None))
        return tuple(m)

    def stuck(self) -> str:
        """The connections not done, one phrase each: `s->r` with the sender's and the
        receiver's TCP state and the sender's send queue."""
        out = []
        for s, r in self.cfg.pair_list():
            sd = self.hosts[s].senders.get(r) if s < len(self.hosts) else None
            rc = self.hosts[r].receivers.get(s) if r < len(self.hosts) else None
            if sd is not None and sd.done and rc is not None and rc.eof and rc.unpacked >= rc.nbytes:
                continue
            sk = sd.sock.sk if sd is not None else None
            if sd is None or sk is None:
                out.append(f"{s}->{r} not connected")
                continue
            rsk = rc.sock.sk if rc is not None else None
            rstate = rsk.state.value if rsk is not None else "not accepted"
            got = {i for lo, hi in sd.notes for i in range(lo, hi + 1)}
            missing = sorted(set(range(sd.calls)) - got)
            out.append(f"{s}->{r} sender {sk.state.value} (unacked {(sk.snd_nxt - sk.snd_una) & 0xFFFF_FFFF} B, "
                       f"{len(sk.write_queue)} skbs unsent, peer window {sk.snd_wnd} B, zero-copy "
                       f"notifications {len(got & set(range(sd.calls)))}/{sd.calls}"
                       + (f" missing {missing[:4]}" if missing else "") + f"), receiver {rstate}"
                       + (f" ({rc.unpacked}/{rc.nbytes} B unpacked{', EOF' if rc.eof else ''})" if rc else ""))
        return f"{len(out)} connections stuck: " + ", ".join(out) if out else "every connection is done"

    # ---- the result
    async def result(self, backend: str, cycles: int) -> ClusterResult:
        cfg = self.cfg
        errors: list[str] = []
        pairs = []
        db_ns = cfg.data_bytes / CLK_NS                    # line rate, bytes per ns
        for s, r in cfg.pair_list():
            rc = self.hosts[r].receivers.get(s)
            sd = self.hosts[s].senders[r]
            exact = rc is not None and rc.dst.gpu_read(0, cfg.bytes_per_pair) == pair_data(cfg, s, r)
            t = rc.t_done_ns if rc is not None else None
            gp = cfg.bytes_per_pair / ((t - self.t0_ns) * db_ns) if t and t > self.t0_ns else 0.0
            pairs.append(PairResult(s, r, rc.unpacked if rc else 0, exact, t, gp,
                                    rc.requests if rc else 0, rc.entries if rc else 0, sd.notified()))
            if not exact:
                errors.append(f"pair {s}->{r}: the destination buffer differs from what {s} sent")
            if not sd.notified():
                errors.append(f"pair {s}->{r}: zero-copy notifications {sd.notes} for {sd.calls} calls")
        done = [p.t_done_ns for p in pairs if p.t_done_ns]
        t_end = max(done) if done else self.env.now_ns()
        total = sum(p.bytes for p in pairs)
        receivers = len({r for _, r in cfg.pair_list()})
        agg = total / ((t_end - self.t0_ns) * db_ns * receivers) if t_end > self.t0_ns else 0.0
        cpu = sum(h.hw.dev.cpu_reads for h in self.hosts)
        if cpu:
            errors.append(f"the CPU read device memory {cpu} times")
        tcp = [h.kernel.tcp.mib.as_dict() for h in self.hosts]
        hw_drops = []
        tx: list[dict[str, Any]] = []
        for h in self.hosts:
            st = await h.nd.qstats_get()
            hw_drops.append({k: v for k, v in st.items() if k.endswith(("drops", "overruns", "alloc-fail", "dropped"))})
            tso = "absent" if not h.nd.hw_features else ("on" if h.nd.features & ALL_TSO else "off")
            tx.append({"tso": tso, **{k: st[k] for k in ("tx-packets", "tx-hw-gso-packets",
                                                         "tx-hw-gso-wire-packets")}})
        return ClusterResult(cfg.to_json(), backend, pairs, self.t0_ns, t_end, agg,
                             payload_share(cfg), self.env.switch_counters(), tcp, hw_drops, cpu,
                             self.samples, self.env.now_ns(), cycles,
                             time.monotonic() - self._wall0, errors, tx=tx)


async def run_cluster(cfg: ClusterConfig, env: Any, progress: Callable[[str], None] = print) -> ClusterResult:
    """The whole run on `env` (a backend with `run(cluster, until)`, `backend`, `cycles()`):
    bring-up, handshakes, the all-to-all transfer, the checks."""
    c = Cluster(cfg, env, progress)
    await c.setup()
    await c.connect()
    await env.run(c, c.connected)
    await c.start()
    await env.run(c, c.done)
    res = await c.result(env.backend, env.cycles())
    progress(c.status())
    return res
