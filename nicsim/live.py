"""`nicsim live`: the reference driver's TCP against the real Linux TCP stack, through the NIC.

A private network namespace with a TAP device (nicsim/live_net.py) holds the Linux peer.
Frames Linux sends on the TAP go into the NIC's MAC RX port; frames the NIC transmits go out
of the TAP to Linux. The driver runs on the NIC: ARP and IPv6 neighbour discovery are
answered in its RX path (driver.neigh through `Netdev.netif_receive_skb`), frames that are
not the devmem flow arrive on the ordinary queue 0, and an n-tuple rule steers the test flow
to queue 1, bound to a dma-buf.

Two runs, each with `nbytes` bytes:

- devmem RX: a Linux socket in the namespace connects to the driver's listener and sends
  the bytes; the driver reads them with recvmsg(MSG_SOCK_DEVMEM) and the GPU accessor, and
  returns the tokens; they must equal what Linux sent, and the CPU must read no payload.
- devmem TX: the driver connects to a Linux listener and sends from a dma-buf the GPU
  filled (MSG_ZEROCOPY + SCM_DEVMEM_DMABUF); Linux (which checks every checksum the NIC
  computed) must receive exactly those bytes, and every send call's notification arrives.

With `drop_rate`, the bridge drops frames on purpose in both directions (seeded), so both
TCP stacks must retransmit. The flow (`run_live`) is written once for both backends; a
backend is a `LiveEnv`: the NIC as the driver sees it, the MAC ports, and how time passes.
The model backend (`ModelLiveEnv`, `run_model`) drives the TCP timers from the wall clock
(the peer is in real time); it has no simulated time. The RTL backend (nicsim/live_sim.py,
nic_top under Verilator through cocotb) runs the driver's timers on simulated time.
Nothing is left behind: the namespace is anonymous and dies with its descriptors, also when
the process is killed.
"""
from __future__ import annotations

import asyncio
import dataclasses
import errno
import random
import socket
import struct
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias

from driver import ethtool
from driver.ethtool_features import ALL_TSO, parse_features_args
from driver.clock import WallClock
from driver.errors import KernelError
from driver.headers import AF_INET
from driver.kernel import Kernel
from driver.devmem import NetlinkSocket
from driver.neigh import mac_bytes
from driver.netdev import Netdev
from driver.socket import (MSG_ZEROCOPY, SCM_DEVMEM_DMABUF,
                           SO_ZEROCOPY, SOCK_STREAM, SOL_SOCKET)
from driver.tcp import TcpState
from models.device_memory import DmaBuf
from models.host_memory import PAGE_SIZE
from nicsim.live_net import LiveNet, LiveNetConfig
from tb.scenario import Reader
from tb.scenario.zcrx import Zcrx, ZcrxReader, zcrx_register, zcrx_ring

NIC_MAC = "02:00:00:00:00:02"
RX_PORT = 5201
TX_PORT = 5202
DEVMEM_QUEUE = 1
RX_PAGES = 1024
SEND_CHUNK = 64 << 10
"""Bytes per devmem send call (one MSG_ZEROCOPY id each)."""


@dataclass
class LiveConfig:
    nbytes: int = 1 << 20
    drop_rate: float = 0.0
    seed: int = 1
    mtu: int = 1500
    tap_name: str = "nicsim0"
    timeout_s: float = 300.0
    rx: bool = True
    tx: bool = True
    zcrx_queues: list[int] = field(default_factory=list)
    """RX through io_uring zero-copy receive instead of a dma-buf: one ifq on each of these
    queues (1 and up; queue 0 takes the ordinary traffic, ARP and ND), the test flow steered
    to the first (docs/driver.md, "io_uring zero-copy receive")."""
    rto_min_us: float | None = None
    """The driver's `rto_min` in microseconds of the backend's time, with the initial RTO 5
    times and the clock granularity G 1/200 of it; None: Linux's 200 ms, 1 s and 1 ms. The
    RTL backend lowers it (its time runs slow)."""
    tso: bool | None = None
    """TCP segmentation offload (docs/tx.md): None: on when the NIC has it (`TX_OFFLOADS.tso`,
    the driver's default); True: `ethtool -K eth0 tso on`, a NIC without it is an error
    (`NoTsoError`); False: `ethtool -K eth0 tso off`."""


@dataclass
class LiveResult:
    rx_bytes: int = 0
    rx_ok: bool = False
    rx_devmem_bytes: int = 0
    tx_bytes: int = 0
    tx_ok: bool = False
    tx_notified: bool = False
    cpu_reads: int = 0
    dropped_to_nic: int = 0
    dropped_to_linux: int = 0
    frames_to_nic: int = 0
    frames_to_linux: int = 0
    rx_wall_s: float = 0.0
    tx_wall_s: float = 0.0
    sim_ns: int | None = None
    """Simulated time of the whole run, for a backend that has it (None on the model)."""
    rx_sim_ns: int | None = None
    tx_sim_ns: int | None = None
    """Simulated time of each transfer (None on the model)."""
    cycles: int | None = None
    """Clock cycles simulated (None on the model)."""
    tx_srtt_ns: int = 0
    tx_rto_max_ns: int = 0
    """The driver's sending socket: smoothed RTT at the end, largest RTO during the run
    (the backend's time)."""
    linux: dict[str, int] = field(default_factory=dict)
    protocol_checker: dict | None = None
    """RTL: the end-of-run summary of the protocol checker bound into nic_top."""
    """The Linux peer's counters in its namespace (/proc/net/snmp, netstat): checksum errors,
    retransmissions, segments."""
    tcp: dict[str, int] = field(default_factory=dict)
    neigh: dict[str, int] = field(default_factory=dict)
    tso: str = "absent"
    """"on", "off" (`--no-tso`), or "absent" (the NIC has no TSO)."""
    tso_sends: int = 0
    tso_segs: int = 0
    """TSO sends the NIC completed and the segments it cut from them, from its completions
    (`tso_segs`; the driver's `tx-hw-gso-packets` / `tx-hw-gso-wire-packets`)."""
    nic_tso_sends: int | None = None
    nic_tso_segs: int | None = None
    """The NIC's own counters `TX_TSO_SENDS` / `TX_TSO_SEGS` (docs/tx.md): the registers
    when the register map has them, else the golden model's counters; None when neither."""
    nic_tso_counters: str = ""
    """Where `nic_tso_*` came from: "registers", "model", or ""."""
    sw_gso: int = 0
    """GSO skbs the driver cut in software (TSO switched off under them, or a send the NIC
    could not take)."""
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


class NoTsoError(RuntimeError):
    """`--tso` on a NIC without TSO: what `ethtool -K eth0 tso on` meets there."""


async def nic_tso_counters(hw: Any) -> tuple[int | None, int | None, str]:
    """The NIC's `TX_TSO_SENDS` / `TX_TSO_SEGS`: the golden model's `TxEngine.counters` on
    the model; elsewhere the registers (0x19C, 0x1A0: driver/regs.py, generated from
    rtl/csr/nic_csr.rdl); (None, None) with a register map without them."""
    ctr = getattr(getattr(getattr(hw, "nic", None), "tx", None), "counters", None)
    if isinstance(ctr, dict) and "TX_TSO_SENDS" in ctr:
        return ctr["TX_TSO_SENDS"], ctr["TX_TSO_SEGS"], "model"
    from driver import regs
    a, b = getattr(regs, "TX_TSO_SENDS", None), getattr(regs, "TX_TSO_SEGS", None)
    if isinstance(a, int) and isinstance(b, int):
        return await hw.read32(a), await hw.read32(b), "registers"
    return None, None, ""


def _errno_name(e: int | None) -> str:
    """The kernel's name of an errno (EOPNOTSUPP, which Python's table calls ENOTSUP)."""
    if e is None:
        return "?"
    return "EOPNOTSUPP" if e == errno.EOPNOTSUPP else errno.errorcode.get(e, str(e))


def pattern(n: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(n)


RxProvider: TypeAlias = "tuple[int, DmaBuf] | dict[int, Zcrx]"
"""The RX provider of a run: (binding id, dma-buf), or the zcrx ifq of each queue."""
Pump = Callable[[Callable[[], str]], Awaitable[None]]
"""One round of the bridge and the driver; its argument says where the run is (progress)."""


def _covers(notes: list[tuple[int, int]], calls: int) -> bool:
    """True when the MSG_ZEROCOPY notifications [lo, hi] name each of `calls` sends exactly once."""
    return sorted(i for lo, hi in notes for i in range(lo, hi + 1)) == list(range(calls))


def _sim_since(env: LiveEnv, t0: int | None) -> int | None:
    """Simulated ns since `t0` (an earlier `env.sim_ns()`); None on a backend without time."""
    now = env.sim_ns()
    return None if now is None or t0 is None else now - t0


class LiveEnv(Protocol):
    """A backend for `run_live`: the NIC as the driver sees it and its MAC ports."""

    hw: Any
    """`NicHw` for the `Netdev`, with `.dev` (device memory: dma-bufs, `cpu_reads`) and
    `.clock` (the driver's TCP timers)."""

    async def to_nic(self, frame: bytes) -> None:
        """One frame into the NIC's MAC RX port."""
        ...

    def rx_room(self) -> int:
        """How many frames the MAC RX port takes now (the rest wait in Linux's TAP queue)."""
        ...

    def from_nic(self) -> list[bytes]:
        """Frames the NIC transmitted since the last call."""
        ...

    async def idle(self) -> None:
        """Nothing moved in the last round: let some time pass."""
        ...

    def sim_ns(self) -> int | None:
        """Simulated time, or None for a backend without it."""
        ...

    def cycles(self) -> int | None:
        ...


class ModelLiveEnv:
    """The golden model (two RX queues, more when zcrx queues need them; DMA 16 bytes wide;
    TSO as docs/tx.md specifies it, `TX_OFFLOADS.tso` 1), TCP timers on the wall clock."""

    def __init__(self, num_rxq: int = 2, tso: bool = True) -> None:
        from driver.backends.model import ModelHw
        self.hw = ModelHw(num_rxq=num_rxq, dma_bytes=16, data_bytes=8, clock=WallClock())
        self.hw.nic.tx.tso = tso
        self.hw.wire.keep_tx_frames = False
        self._tx: list[bytes] = []
        self.hw.wire.on_tx = self._tx.append

    async def to_nic(self, frame: bytes) -> None:
        await self.hw.wire.send(frame)

    def rx_room(self) -> int:
        return 64

    def from_nic(self) -> list[bytes]:
        out, self._tx[:] = list(self._tx), []
        return out

    async def idle(self) -> None:
        await asyncio.sleep(0.0002)

    def sim_ns(self) -> int | None:
        return None

    def cycles(self) -> int | None:
        return None


class Bridge:
    """TAP <-> NIC MAC ports, dropping frames on purpose (seeded) in both directions."""

    def __init__(self, net: LiveNet, env: LiveEnv, drop_rate: float, seed: int, res: LiveResult) -> None:
        self.net, self.env, self.res = net, env, res
        self.drop_rate = drop_rate
        self.rng_in = random.Random(seed)
        self.rng_out = random.Random(seed + 1)

    def to_linux(self) -> int:
        """Frames the NIC sent, out of the TAP; how many."""
        frames = self.env.from_nic()
        for frame in frames:
            if self.drop_rate and self.rng_out.random() < self.drop_rate:
                self.res.dropped_to_linux += 1
                continue
            self.res.frames_to_linux += 1
            self.net.write_frame(frame)
        return len(frames)

    async def from_linux(self) -> int:
        """Frames Linux sent, into the NIC's RX port, as many as it takes now; how many."""
        n = 0
        budget = self.env.rx_room()
        while n < budget:
            f = self.net.read_frame()
            if f is None:
                break
            n += 1
            if self.drop_rate and self.rng_in.random() < self.drop_rate:
                self.res.dropped_to_nic += 1
                continue
            self.res.frames_to_nic += 1
            if len(f) < 60:                    # the sender's MAC pads on a real wire
                f = f + bytes(60 - len(f))
            await self.env.to_nic(f)
        return n


def linux_counters(net: LiveNet) -> dict[str, int]:
    """The namespace's own TCP/IP counters (/proc/thread-self/net/*, read from a thread in
    the namespace: /proc/self/net would be the process's)."""
    def read() -> dict[str, int]:
        out: dict[str, int] = {}
        for name in ("snmp", "netstat"):
            try:
                with open(f"/proc/thread-self/net/{name}") as fh:
                    lines = fh.read().splitlines()
            except OSError:
                continue
            for head, vals in zip(lines[::2], lines[1::2]):
                proto, keys = head.split(":", 1)
                for k, v in zip(keys.split(), vals.split(":", 1)[1].split()):
                    try:
                        out[f"{proto}{k}"] = int(v)
                    except ValueError:
                        pass
        return out
    c = net.run_in_ns(read)
    keep = ("TcpInCsumErrors", "TcpInErrs", "TcpRetransSegs", "TcpInSegs", "TcpOutSegs",
            "TcpOutRsts", "TcpExtTCPLostRetransmit", "TcpExtTCPTimeouts", "TcpExtTCPFastRetrans",
            "TcpExtTCPOFOQueue", "IpInHdrErrors", "IpInReceives")
    return {k: c[k] for k in keep if k in c}


class LinuxPeer(threading.Thread):
    """A Python thread using a Linux socket made inside the namespace."""

    def __init__(self, name: str, fn: Callable[[], Any]) -> None:
        super().__init__(name=name, daemon=True)
        self.fn = fn
        self.result: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self.fn()
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            self.error = e


async def run_live(cfg: LiveConfig, env: LiveEnv | None = None,
                   progress: Callable[[str], None] = print) -> LiveResult:
    """Both runs on `env` (default: the golden model); see the module docstring."""
    res = LiveResult()
    ncfg = LiveNetConfig(tap_name=cfg.tap_name, mtu=cfg.mtu)
    net = LiveNet(ncfg)
    socks: list[socket.socket] = []
    try:
        net.set_nonblocking()
        if env is None:
            env = ModelLiveEnv(max([2, *(q + 1 for q in cfg.zcrx_queues)]))
        hw = env.hw
        bridge = Bridge(net, env, cfg.drop_rate, cfg.seed, res)
        kernel = Kernel(clock=hw.clock)
        if cfg.rto_min_us is not None:
            kernel.tcp.rto_min_ns = int(cfg.rto_min_us * 1000)
            kernel.tcp.rto_init_ns = 5 * kernel.tcp.rto_min_ns
            kernel.tcp.clock_g_ns = kernel.tcp.rto_min_ns // 200     # 1 ms : 200 ms, as Linux
        nd = Netdev(kernel, hw, name="eth0")
        nd.dev_addr = mac_bytes(NIC_MAC)
        await nd.probe()
        if cfg.tso is not None:                 # `ethtool -K eth0 tso on|off`
            try:
                nd.set_features(parse_features_args(f"tso {'on' if cfg.tso else 'off'}"))
            except KernelError as e:
                raise NoTsoError(f"--tso: ethtool -K eth0 tso on: Could not change any device "
                                 f"features ({_errno_name(e.errno)}: the NIC has no TSO, "
                                 f"TX_OFFLOADS.tso reads 0)") from None
        res.tso = "absent" if not nd.hw_features else ("on" if nd.features & ALL_TSO else "off")
        await nd.set_ringparam(rx_pending=256, tcp_data_split=True, hds_thresh=0)
        nq = max([2, *(q + 1 for q in cfg.zcrx_queues)])
        if nq > nd.num_rx_queues:
            raise RuntimeError(f"--zcrx-queues {cfg.zcrx_queues}: the NIC has queues 0..{nd.num_rx_queues - 1}")
        await nd.set_channels(nq)
        await nd.set_mtu(cfg.mtu)
        await nd.open()
        nd.add_ip(f"{ncfg.nic_ipv4}/{ncfg.prefix_v4}")
        nd.add_ip(f"{ncfg.nic_ipv6}/{ncfg.prefix_v6}")
        await ethtool.set_rx_flow_hash(hw, {"ip4", "tcp4", "udp4", "ip6", "tcp6", "udp6"})
        await ethtool.set_rxfh(hw, key=bytes(range(40)), num_queues=nq)
        await ethtool.set_rxfh_equal(hw, 1, nq)           # RSS: queue 0 only
        rules = ethtool.NtupleRules(hw, nq)
        await rules.clear()
        rx_queue = cfg.zcrx_queues[0] if cfg.zcrx_queues else DEVMEM_QUEUE
        await rules.add(ethtool.NtupleSpec("tcp4", rx_queue, src_ip=ncfg.linux_ipv4,
                                           dst_ip=ncfg.nic_ipv4, dst_port=RX_PORT))
        nl = kernel.netlink_open()
        rx: RxProvider
        if cfg.zcrx_queues:
            ring = zcrx_ring(kernel)
            rx = {q: await zcrx_register(ring, nd, q, pages=RX_PAGES) for q in cfg.zcrx_queues}
            what = f"io_uring zcrx RX queue(s) {cfg.zcrx_queues} ({RX_PAGES}-page area each)"
        else:
            rx_buf = hw.dev.export_dmabuf(RX_PAGES * PAGE_SIZE, chunk_size=64 * PAGE_SIZE)
            rx_id = await nl.bind_rx(nd.ifindex, kernel.dma_buf_fd(rx_buf), [DEVMEM_QUEUE])
            rx = (rx_id, rx_buf)
            what = f"devmem RX queue {DEVMEM_QUEUE} (binding {rx_id}, {RX_PAGES} pages)"
        progress(f"live: namespace up, TAP {ncfg.tap_name} ({ncfg.linux_ipv4}, {ncfg.linux_mac}) "
                 f"<-> NIC {NIC_MAC} ({ncfg.nic_ipv4}); {what}, drop rate {cfg.drop_rate:g}")
        deadline = time.monotonic() + cfg.timeout_s
        last = [time.monotonic()]

        sim0 = env.sim_ns()

        async def pump(status: Callable[[], str]) -> None:
            n = await bridge.from_linux()
            n += await nd.poll()
            n += bridge.to_linux()
            if time.monotonic() > deadline:
                raise TimeoutError(f"live: no end after {cfg.timeout_s:g} s wall: {status()}")
            if time.monotonic() - last[0] > 1.0:
                last[0] = time.monotonic()
                d = _sim_since(env, sim0)
                progress(status() + ("" if d is None else f", simulated {d / 1e6:.3f} ms"))
            if not n:
                await env.idle()

        if cfg.rx:
            t = env.sim_ns()
            await _devmem_rx(cfg, ncfg, net, kernel, nd, rx, socks, res, pump, progress, env)
            res.rx_sim_ns = _sim_since(env, t)
        if cfg.tx:
            t = env.sim_ns()
            await _devmem_tx(cfg, ncfg, net, kernel, nd, hw, nl, socks, res, pump, progress, env)
            res.tx_sim_ns = _sim_since(env, t)
        qs = [nd.tx_qstats(q.index) for q in nd.tx_queues]
        res.tso_sends = sum(q.hw_gso_packets for q in qs)
        res.tso_segs = sum(q.hw_gso_wire_packets for q in qs)
        res.sw_gso = sum(q.sw_gso_packets for q in qs)
        res.nic_tso_sends, res.nic_tso_segs, res.nic_tso_counters = await nic_tso_counters(hw)
        if res.nic_tso_sends is not None and (res.nic_tso_sends, res.nic_tso_segs) != (
                res.tso_sends, res.tso_segs):
            res.errors.append(f"TSO: the NIC counted {res.nic_tso_sends} sends / "
                              f"{res.nic_tso_segs} segments, its completions said "
                              f"{res.tso_sends} / {res.tso_segs}")
        res.linux = linux_counters(net)
        if res.linux.get("TcpInCsumErrors", 0):
            res.errors.append(f"Linux counted {res.linux['TcpInCsumErrors']} TCP checksum errors")
        res.cpu_reads = hw.dev.cpu_reads
        res.tcp = kernel.tcp.mib.as_dict()
        if nd.neigh is not None:
            res.neigh = dict(nd.neigh.stats.__dict__)
        if res.cpu_reads:
            res.errors.append(f"the CPU read device memory {res.cpu_reads} times")
        await nd.stop()
        if sim0 is not None:
            res.sim_ns = _sim_since(env, sim0)
            res.cycles = env.cycles()
    finally:
        for s in socks:
            try:
                s.close()
            except OSError:
                pass
        net.close()
    return res


def _rate(nbytes: int, wall_s: float, sim_ns: int | None) -> str:
    """Throughput in wall time, and in simulated time when there is one."""
    out = f"{nbytes * 8 / max(wall_s, 1e-9) / 1e6:.2f} Mbit/s wall"
    if sim_ns is not None:
        out += f", {nbytes * 8 / max(sim_ns, 1):.3f} Gbit/s simulated ({sim_ns / 1e6:.3f} ms)"
    return out


async def _devmem_rx(cfg: LiveConfig, ncfg: LiveNetConfig, net: LiveNet, kernel: Kernel, nd: Netdev,
                     rx: RxProvider, socks: list[socket.socket], res: LiveResult, pump: Pump,
                     progress: Callable[[str], None], env: LiveEnv) -> None:
    """Linux sends `nbytes`; the driver reads them through the GPU accessor (devmem), or in
    place from the area of the ifq of the queue the connection arrived on (zcrx)."""
    data = pattern(cfg.nbytes, cfg.seed)
    lst = kernel.socket(AF_INET, SOCK_STREAM)
    lst.bind(("0.0.0.0", RX_PORT))
    lst.listen()
    s = net.run_in_ns(lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
    socks.append(s)
    s.settimeout(cfg.timeout_s)

    def linux_send() -> int:
        s.connect((ncfg.nic_ipv4, RX_PORT))
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        while s.recv(65536):
            pass
        return len(data)

    peer = LinuxPeer("linux-sender", linux_send)
    t0 = time.monotonic()
    s0 = env.sim_ns()
    peer.start()
    reader: Reader | ZcrxReader | None = None     # the ncdevmem-like loop, once Linux has connected
    via = "io_uring zcrx" if isinstance(rx, dict) else "device memory"

    def status() -> str:
        return (f"live rx: {len(reader.got) if reader else 0}/{cfg.nbytes} B, drops to nic/linux "
                f"{res.dropped_to_nic}/{res.dropped_to_linux}, retrans {kernel.tcp.mib.RetransSegs}")

    while not (reader and reader.eof and not peer.is_alive()):
        await pump(status)
        if peer.error is not None:
            raise RuntimeError(f"Linux sender: {peer.error!r}")
        if reader is None:
            try:
                conn, _ = lst.accept()
            except KernelError as e:
                if e.errno != errno.EAGAIN:
                    raise
                continue
            if isinstance(rx, dict):
                assert conn.sk is not None
                zc = rx.get(conn.sk.rx_queue)
                if zc is None:
                    raise RuntimeError(f"the test flow arrived on queue {conn.sk.rx_queue}, not a zcrx "
                                       f"queue {sorted(rx)}: a steering error")
                reader = ZcrxReader(conn, zc)
            else:
                reader = Reader(conn, {rx[0]: rx[1]}, ctrl_msgs=128)
        if not reader.eof:
            reader.drain()
            if reader.eof:
                reader.sock.close()                # our FIN: Linux's recv() returns 0
    got = reader.got
    res.rx_devmem_bytes = reader.devmem_bytes
    res.rx_wall_s = time.monotonic() - t0
    res.rx_bytes = len(got)
    res.rx_ok = bytes(got) == data and res.rx_devmem_bytes == len(data)
    if not res.rx_ok:
        res.errors.append(f"RX: got {len(got)} B ({res.rx_devmem_bytes} via {via}), "
                          f"sent {len(data)} B, equal: {bytes(got) == data}")
    sim = _sim_since(env, s0)
    progress(f"live rx: {len(got)} B in {res.rx_wall_s:.2f} s wall ({_rate(len(got), res.rx_wall_s, sim)}), "
             f"{'byte-exact' if res.rx_ok else 'MISMATCH'}, {res.rx_devmem_bytes} B via {via}")
    if isinstance(rx, dict):
        copies = sum(z.area.copy_fallback_bytes for z in rx.values())
        if copies:
            res.errors.append(f"zcrx RX: the kernel copied {copies} B into the area (not zero-copy)")
    lst.close()


async def _devmem_tx(cfg: LiveConfig, ncfg: LiveNetConfig, net: LiveNet, kernel: Kernel, nd: Netdev,
                     hw: Any, nl: NetlinkSocket, socks: list[socket.socket], res: LiveResult, pump: Pump,
                     progress: Callable[[str], None], env: LiveEnv) -> None:
    """The driver sends `nbytes` from a dma-buf; Linux receives them."""
    size = -(-cfg.nbytes // PAGE_SIZE) * PAGE_SIZE
    tx_buf = hw.dev.export_dmabuf(size, chunk_size=16 * PAGE_SIZE)
    data = pattern(cfg.nbytes, cfg.seed + 100)
    tx_buf.gpu_write(0, data)                        # the GPU fills it
    tx_id = await nl.bind_tx(nd.ifindex, kernel.dma_buf_fd(tx_buf))

    def make_listener() -> socket.socket:
        ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        ls.bind((ncfg.linux_ipv4, TX_PORT))
        ls.listen(1)
        return ls

    ls = net.run_in_ns(make_listener)
    socks.append(ls)
    ls.settimeout(cfg.timeout_s)
    received = bytearray()

    def linux_recv() -> int:
        c, _ = ls.accept()
        socks.append(c)
        c.settimeout(cfg.timeout_s)
        while True:
            b = c.recv(1 << 16)
            if not b:
                break
            received.extend(b)
        c.close()
        return len(received)

    peer = LinuxPeer("linux-receiver", linux_recv)
    peer.start()
    t0 = time.monotonic()
    s0 = env.sim_ns()

    def status() -> str:
        return (f"live tx: {len(received)}/{cfg.nbytes} B, drops to nic/linux "
                f"{res.dropped_to_nic}/{res.dropped_to_linux}, retrans {kernel.tcp.mib.RetransSegs}")

    # ARP for Linux's address, as `neigh_resolve_output` would before the SYN
    import ipaddress
    nd.neigh_solicit(ncfg.linux_ipv4)
    ask = time.monotonic()
    while kernel.neigh_lookup(ipaddress.ip_address(ncfg.linux_ipv4)) is None:
        await pump(status)
        if time.monotonic() - ask > 1.0:
            nd.neigh_solicit(ncfg.linux_ipv4)
            ask = time.monotonic()
    sock = kernel.socket(AF_INET, SOCK_STREAM)
    await sock.connect((ncfg.linux_ipv4, TX_PORT))
    while sock.tcp_info().state != TcpState.ESTABLISHED:
        await pump(status)
    sock.setsockopt(SOL_SOCKET, SO_ZEROCOPY, 1)
    cm = [(SOL_SOCKET, SCM_DEVMEM_DMABUF, struct.pack("<I", tx_id))]
    calls = 0
    for off in range(0, cfg.nbytes, SEND_CHUNK):
        n = min(SEND_CHUNK, cfg.nbytes - off)
        assert await sock.sendmsg([(off, n)], cm, MSG_ZEROCOPY) == n
        calls += 1
    sock.shutdown()
    notes: list[tuple[int, int]] = []
    while peer.is_alive() or sock.tcp_info().state not in (TcpState.FIN_WAIT2, TcpState.TIME_WAIT,
                                                            TcpState.CLOSED):
        await pump(status)
        info = sock.tcp_info()
        res.tx_rto_max_ns = max(res.tx_rto_max_ns, info.rto_ns)
        res.tx_srtt_ns = info.srtt_ns
        notes += sock.zerocopy_notifications()
        if peer.error is not None:
            raise RuntimeError(f"Linux receiver: {peer.error!r}")
    notes += sock.zerocopy_notifications()
    # The peer has every byte and our FIN is acked, but a send's notification also needs its TX
    # completion reaped (the skb clones' references, as in Linux): with TSO the NIC writes a
    # send's one completion after its last segment, and the peer's ACK of that segment can
    # arrive first. Wait for the completions, bounded: a notification that never comes is a
    # reported error, not a hang.
    wait_ns, wait_wall = 200_000, time.monotonic() + 5.0
    w0 = env.sim_ns()
    while not _covers(notes, calls):
        waited = _sim_since(env, w0)
        if (waited is not None and waited > wait_ns) or (waited is None and time.monotonic() > wait_wall):
            break
        await pump(status)
        notes += sock.zerocopy_notifications()
    res.tx_wall_s = time.monotonic() - t0
    res.tx_bytes = len(received)
    res.tx_ok = bytes(received) == data
    res.tx_notified = _covers(notes, calls)
    if not res.tx_ok:
        res.errors.append(f"devmem TX: Linux got {len(received)} B of {len(data)}, "
                          f"equal: {bytes(received) == data}")
    if not res.tx_notified:
        res.errors.append(f"devmem TX: notifications {notes} for {calls} calls")
    sim = _sim_since(env, s0)
    progress(f"live tx: {len(received)} B in {res.tx_wall_s:.2f} s wall ({_rate(len(received), res.tx_wall_s, sim)}), "
             f"{'byte-exact' if res.tx_ok else 'MISMATCH'}, notifications {notes}")
    sock.close()


def run_model(cfg: LiveConfig, progress: Callable[[str], None] = print) -> LiveResult:
    return asyncio.run(run_live(cfg, None, progress))


RTL_RTO_MIN_US = 200.0
"""The driver's `rto_min` on the RTL backend, in simulated microseconds (Linux's is 200 ms;
the initial RTO is 5 times this, Linux's 1 s). The simulation runs about 10^4 times slower
than real time, and the RTTs it sees are tens of simulated microseconds: with 200 ms a lost
tail segment would stall for 50 million cycles."""


def run_rtl(cfg: LiveConfig, data_width: int = 64, name: str | None = None,
            seed: int | None = None, idle_cycles: int | None = None,
            testbench: str = "fast") -> LiveResult:
    """Both runs through nic_top under Verilator (nicsim/live_sim.py, launched through
    tb/sim.run_rtl_test like `nicsim replay`; `testbench`: "fast" or "per-beat",
    tb.fast.build.TESTBENCHES); progress is the simulator's own output.
    Raises RuntimeError with the simulation's message when the run did not end (a timeout,
    an exception in the flow, a crash)."""
    import json
    import os

    from tb.fast.build import claim_run, run_name, run_nic_test
    from tb.sim import BUILD_ROOT
    # another live run at once gets its own folders; `lock` holds the name until we return
    name, lock = claim_run(name or run_name(f"nicsim-live-w{data_width}", testbench))
    if cfg.rto_min_us is None:
        cfg = dataclasses.replace(cfg, rto_min_us=RTL_RTO_MIN_US)
    work = BUILD_ROOT / "nicsim" / name
    work.mkdir(parents=True, exist_ok=True)
    job, out = work / "job.json", work / "result.json"
    j: dict[str, Any] = {"config": dataclasses.asdict(cfg)}
    if idle_cycles is not None:
        j["idle_cycles"] = idle_cycles
    job.write_text(json.dumps(j))
    out.unlink(missing_ok=True)
    err = None
    try:
        run_nic_test(testbench, "nicsim.live_sim", {"DATA_W": data_width}, name,
                     waves=False, seed=seed,
                     extra_env={"NICSIM_JOB": str(job), "NICSIM_OUT": str(out),
                                "NICSIM_PARENT": str(os.getpid()),
                                # cocotbext-axi's deprecation warnings, one per port at start
                                "PYTHONWARNINGS": "ignore::DeprecationWarning"})
    except AssertionError as e:
        err = str(e)
    r: dict[str, Any] = json.loads(out.read_text()) if out.is_file() else {}
    if r.get("fatal_kind") == "NoTsoError":
        raise NoTsoError(r["fatal"].split(": ", 1)[-1])
    if "fatal" in r or err is not None or not r:
        raise RuntimeError(r.get("fatal") or err or "the simulation wrote no result")
    r.pop("wall_s", None)
    from tb.sim import checker_summary
    r["protocol_checker"] = checker_summary(name)
    lock.close()
    return LiveResult(**r)
