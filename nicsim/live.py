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
TCP stacks must retransmit. The model backend drives the TCP timers from the wall clock (the
peer is in real time); it has no simulated time. Nothing is left behind: the namespace is
anonymous and dies with its descriptors, also when the process is killed.
"""
from __future__ import annotations

import asyncio
import errno
import random
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from driver import ethtool
from driver.clock import WallClock
from driver.errors import KernelError
from driver.headers import AF_INET
from driver.kernel import Kernel
from driver.neigh import mac_bytes
from driver.netdev import Netdev
from driver.socket import (CMSG_SPACE, MSG_SOCK_DEVMEM, MSG_ZEROCOPY, SCM_DEVMEM_DMABUF,
                           SO_ZEROCOPY, SOCK_STREAM, SOL_SOCKET)
from driver.tcp import TcpState
from models.host_memory import PAGE_SIZE
from nicsim.live_net import LiveNet, LiveNetConfig

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
    """Simulated time, for a backend that has it (None on the model)."""
    tcp: dict[str, int] = field(default_factory=dict)
    neigh: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


def pattern(n: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(n)


class Bridge:
    """TAP <-> NIC MAC ports, dropping frames on purpose (seeded) in both directions."""

    def __init__(self, net: LiveNet, hw: Any, drop_rate: float, seed: int, res: LiveResult) -> None:
        self.net, self.hw, self.res = net, hw, res
        self.drop_rate = drop_rate
        self.rng_in = random.Random(seed)
        self.rng_out = random.Random(seed + 1)

    def to_linux(self, frame: bytes) -> None:
        """`hw.wire.on_tx`: a frame the NIC sent."""
        if self.drop_rate and self.rng_out.random() < self.drop_rate:
            self.res.dropped_to_linux += 1
            return
        self.res.frames_to_linux += 1
        self.net.write_frame(frame)

    async def from_linux(self, budget: int = 64) -> int:
        """Frames Linux sent, into the NIC's RX port; how many were read."""
        n = 0
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
            await self.hw.wire.send(f)
        return n


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


async def run_live(cfg: LiveConfig, progress: Callable[[str], None] = print) -> LiveResult:
    """Both runs on the golden model; see the module docstring."""
    from driver.backends.model import ModelHw
    res = LiveResult()
    ncfg = LiveNetConfig(tap_name=cfg.tap_name, mtu=cfg.mtu)
    net = LiveNet(ncfg)
    socks: list[socket.socket] = []
    try:
        net.set_nonblocking()
        hw = ModelHw(num_rxq=2, dma_bytes=16, data_bytes=8, clock=WallClock())
        hw.wire.keep_tx_frames = False
        bridge = Bridge(net, hw, cfg.drop_rate, cfg.seed, res)
        hw.wire.on_tx = bridge.to_linux
        kernel = Kernel()
        nd = Netdev(kernel, hw, name="eth0")
        nd.dev_addr = mac_bytes(NIC_MAC)
        await nd.probe()
        await nd.set_ringparam(rx_pending=256, tcp_data_split=True, hds_thresh=0)
        await nd.set_channels(2)
        await nd.set_mtu(cfg.mtu)
        await nd.open()
        nd.add_ip(f"{ncfg.nic_ipv4}/{ncfg.prefix_v4}")
        nd.add_ip(f"{ncfg.nic_ipv6}/{ncfg.prefix_v6}")
        await ethtool.set_rx_flow_hash(hw, {"ip4", "tcp4", "udp4", "ip6", "tcp6", "udp6"})
        await ethtool.set_rxfh(hw, key=bytes(range(40)), num_queues=2)
        await ethtool.set_rxfh_equal(hw, 1, 2)            # RSS: queue 0 only
        rules = ethtool.NtupleRules(hw, 2)
        await rules.clear()
        await rules.add(ethtool.NtupleSpec("tcp4", DEVMEM_QUEUE, src_ip=ncfg.linux_ipv4,
                                           dst_ip=ncfg.nic_ipv4, dst_port=RX_PORT))
        nl = kernel.netlink_open()
        rx_buf = hw.dev.export_dmabuf(RX_PAGES * PAGE_SIZE, chunk_size=64 * PAGE_SIZE)
        rx_id = await nl.bind_rx(nd.ifindex, kernel.dma_buf_fd(rx_buf), [DEVMEM_QUEUE])
        progress(f"live: namespace up, TAP {ncfg.tap_name} ({ncfg.linux_ipv4}, {ncfg.linux_mac}) "
                 f"<-> NIC {NIC_MAC} ({ncfg.nic_ipv4}); devmem RX queue {DEVMEM_QUEUE} "
                 f"(binding {rx_id}, {RX_PAGES} pages), drop rate {cfg.drop_rate:g}")
        deadline = time.monotonic() + cfg.timeout_s
        last = [time.monotonic()]

        async def pump(status: Callable[[], str]) -> None:
            n = await bridge.from_linux()
            await nd.poll()
            if time.monotonic() > deadline:
                raise TimeoutError(f"live: no end after {cfg.timeout_s:g} s: {status()}")
            if time.monotonic() - last[0] > 1.0:
                last[0] = time.monotonic()
                progress(status())
            if not n:
                await asyncio.sleep(0.0002)

        if cfg.rx:
            await _devmem_rx(cfg, ncfg, net, kernel, nd, rx_buf, rx_id, socks, res, pump, progress)
        if cfg.tx:
            await _devmem_tx(cfg, ncfg, net, kernel, nd, hw, nl, socks, res, pump, progress)
        res.cpu_reads = hw.dev.cpu_reads
        res.tcp = kernel.tcp.mib.as_dict()
        if nd.neigh is not None:
            res.neigh = dict(nd.neigh.stats.__dict__)
        if res.cpu_reads:
            res.errors.append(f"the CPU read device memory {res.cpu_reads} times")
        await nd.stop()
    finally:
        for s in socks:
            try:
                s.close()
            except OSError:
                pass
        net.close()
    return res


async def _devmem_rx(cfg, ncfg, net, kernel, nd, rx_buf, rx_id, socks, res, pump, progress):  # type: ignore[no-untyped-def]
    """Linux sends `nbytes`; the driver reads them through the GPU accessor."""
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
    peer.start()
    got = bytearray()
    conn = None
    eof = False

    def status() -> str:
        return (f"live rx: {len(got)}/{cfg.nbytes} B, drops to nic/linux "
                f"{res.dropped_to_nic}/{res.dropped_to_linux}, retrans {kernel.tcp.mib.RetransSegs}")

    while not (eof and not peer.is_alive()):
        await pump(status)
        if peer.error is not None:
            raise RuntimeError(f"Linux sender: {peer.error!r}")
        if conn is None:
            try:
                conn, _ = lst.accept()
            except KernelError as e:
                if e.errno != errno.EAGAIN:
                    raise
                continue
        while not eof:
            try:
                m = conn.recvmsg(1 << 20, 128 * CMSG_SPACE(24), MSG_SOCK_DEVMEM)
            except KernelError as e:
                if e.errno == errno.EAGAIN:
                    break
                raise
            if m.nbytes == 0:
                eof = True
                conn.close()                       # our FIN: Linux's recv() returns 0
                break
            tokens = []
            for cm in m.cmsgs:
                d = cm.data
                if cm.is_dmabuf:
                    got += rx_buf.gpu_read(d.frag_offset, d.frag_size)
                    res.rx_devmem_bytes += d.frag_size
                    tokens.append(d.frag_token)
                else:
                    got += m.data                  # SCM_DEVMEM_LINEAR or ordinary bytes
            if not m.cmsgs:
                got += m.data
            for i in range(0, len(tokens), 128):
                conn.dontneed(tokens[i:i + 128])
    res.rx_wall_s = time.monotonic() - t0
    res.rx_bytes = len(got)
    res.rx_ok = bytes(got) == data and res.rx_devmem_bytes == len(data)
    if not res.rx_ok:
        res.errors.append(f"devmem RX: got {len(got)} B ({res.rx_devmem_bytes} via device memory), "
                          f"sent {len(data)} B, equal: {bytes(got) == data}")
    progress(f"live rx: {len(got)} B in {res.rx_wall_s:.2f} s wall "
             f"({len(got) * 8 / max(res.rx_wall_s, 1e-9) / 1e6:.1f} Mbit/s), "
             f"{'byte-exact' if res.rx_ok else 'MISMATCH'}, {res.rx_devmem_bytes} B via device memory")
    lst.close()


async def _devmem_tx(cfg, ncfg, net, kernel, nd, hw, nl, socks, res, pump, progress):  # type: ignore[no-untyped-def]
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
        notes += sock.zerocopy_notifications()
        if peer.error is not None:
            raise RuntimeError(f"Linux receiver: {peer.error!r}")
    notes += sock.zerocopy_notifications()
    res.tx_wall_s = time.monotonic() - t0
    res.tx_bytes = len(received)
    res.tx_ok = bytes(received) == data
    covered = sorted(i for lo, hi in notes for i in range(lo, hi + 1))
    res.tx_notified = covered == list(range(calls))
    if not res.tx_ok:
        res.errors.append(f"devmem TX: Linux got {len(received)} B of {len(data)}, "
                          f"equal: {bytes(received) == data}")
    if not res.tx_notified:
        res.errors.append(f"devmem TX: notifications {notes} for {calls} calls")
    progress(f"live tx: {len(received)} B in {res.tx_wall_s:.2f} s wall "
             f"({len(received) * 8 / max(res.tx_wall_s, 1e-9) / 1e6:.1f} Mbit/s), "
             f"{'byte-exact' if res.tx_ok else 'MISMATCH'}, notifications {notes}")
    sock.close()


def run_model(cfg: LiveConfig, progress: Callable[[str], None] = print) -> LiveResult:
    return asyncio.run(run_live(cfg, progress))
