"""The replay engine, written once for both backends (the golden model and the RTL).

`replay(env, frames, cfg)` brings the reference driver up on `env` (anything with `hw`,
`dev` and `send`, like tb/scenario's ModelEnv and RtlEnv), programs RSS and n-tuple
steering through driver/ethtool.py, binds dma-bufs to the devmem queues through the netlink
`bind_rx` (or registers one io_uring zcrx ifq per zcrx queue: `--zcrx-queues`), listens on every TCP port a SYN in the capture goes to, and then sends the frames
one at a time: after each it waits until the NIC has counted it (RX_FRAMES or one of the
drop counters), runs NAPI, lets the socket layer take the data and drains every socket like
ncdevmem does (recvmsg with MSG_SOCK_DEVMEM, payload read through the GPU accessor, tokens
returned with SO_DEVMEM_DONTNEED; on a zcrx queue RECV_ZC, payload read in place from the
ifq's area, buffers back through the refill ring: tb/scenario/zcrx.py). One frame in flight at a time makes every counter and
completion attributable to its frame, so the per-frame record is exact on both backends.

The register writes of the driver also go to a shadow `models.rss.Classifier`
(tb/rx_env.MirrorHw), which tells whether a frame matched an n-tuple rule (`steered`; the
completion does not carry it) and where a frame dropped after classification would have
gone.
"""
from __future__ import annotations

import dataclasses
import errno
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from driver import ethtool
from driver.errors import KernelError
from driver.headers import AF_INET, AF_INET6, IPPROTO_TCP, HeaderError, IpAddress, PacketHeaders, TcpFlags, parse_headers
from driver.kernel import Kernel
from driver.netdev import COUNTERS, Netdev, NetdevRxQueue
from driver.rx_queue import RxFrame
from driver.skbuff import SkBuff
from driver.socket import SOCK_STREAM, Socket
from models.host_memory import PAGE_SIZE
from models.rss import NUM_CONTEXTS, NUM_RULES, Classifier, RssType
from models.rx_parser import parse_frame
from tb.rx_env import MirrorHw
from tb.scenario import Reader
from tb.scenario.zcrx import Zcrx, ZcrxReader, zcrx_register, zcrx_ring

ETH_MIN = 60
DEFAULT_RSS_KEY = bytes.fromhex(
    "6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c6a42b73bbeac01fa")
"""The Toeplitz key of Microsoft's RSS specification (what many Linux drivers default to)."""
ALL_FLOW_TYPES = {"ip4", "tcp4", "udp4", "ip6", "tcp6", "udp6"}
SETTLE_NS = 100
SETTLE_POLLS = 20000
DEVMEM_PAGES = 512


@dataclass
class ReplayConfig:
    rss_key: bytes | None = None
    rss_equal: int | None = None
    steer: list[dict[str, Any]] = field(default_factory=list)
    rss_contexts: list[dict[str, int]] = field(default_factory=list)
    """RSS contexts 1, 2, ... in order (`ethtool -X context new start S equal N`)."""
    devmem_queues: list[int] = field(default_factory=list)
    zcrx_queues: list[int] = field(default_factory=list)
    """Queues given to io_uring zero-copy receive (one ifq each, docs/driver.md)."""
    mtu: int = 1500
    pad: bool = True
    dump_streams: str | None = None
    rx_pending: int = 64
    rx_mpb: bool = False
    """Multi-packet payload buffers and completion batches (`ethtool --set-priv-flags
    rx-mpb on`, `ethtool -C rx-frames` = the NIC's maximum)."""

    def to_json(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["rss_key"] = self.rss_key.hex() if self.rss_key else None
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ReplayConfig:
        d = dict(d)
        d["rss_key"] = bytes.fromhex(d["rss_key"]) if d.get("rss_key") else None
        return cls(**d)


# ------------------------------------------------------------------------------- steer rules
STEER_KEYS = {"proto", "flow-type", "src-ip", "dst-ip", "src-port", "dst-port", "queue",
              "action", "ipv6", "loc", "context"}
RSS_CONTEXT_KEYS = ("start", "equal")


def _key_values(text: str, what: str, keys: Sequence[str] | set[str]) -> list[tuple[str, str]]:
    """`a=1,b=2` -> [("a", "1"), ("b", "2")], refusing a part without `=` or an unknown key
    (ValueError naming `what`)."""
    out = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        if "=" not in part:
            raise ValueError(f"{what} {text!r}: {part!r} is not key=value")
        k, v = (s.strip() for s in part.split("=", 1))
        if k not in keys:
            raise ValueError(f"{what} {text!r}: unknown key {k!r} "
                             f"(known: {', '.join(sorted(keys))})")
        out.append((k, v))
    return out


def parse_rss_context(text: str) -> dict[str, int]:
    """`start=4,equal=4` -> {"start": 4, "equal": 4}: an RSS context spreading over queues
    start .. start+equal-1 (ethtool's `context new start S equal N`; start defaults to 0)."""
    ctx: dict[str, int] = {}
    for k, v in _key_values(text, "RSS context", RSS_CONTEXT_KEYS):
        try:
            ctx[k] = int(v, 0)
        except ValueError:
            raise ValueError(f"RSS context {text!r}: {k}={v!r} is not a number") from None
    if "equal" not in ctx:
        raise ValueError(f"RSS context {text!r}: says no equal=N")
    ctx.setdefault("start", 0)
    if ctx["equal"] < 1 or ctx["start"] < 0:
        raise ValueError(f"RSS context {text!r}: needs start >= 0 and equal >= 1")
    return ctx


def parse_steer(text: str) -> dict[str, Any]:
    """`proto=tcp,dst-port=5201,queue=7` -> a dict `steer_spec` turns into an NtupleSpec.

    Keys: proto (tcp|udp|ip), flow-type (tcp4|udp4|ip4|tcp6|udp6|ip6, instead of proto),
    src-ip, dst-ip, src-port, dst-port, queue (or action), loc, context (an RSS context:
    queue is then the ring offset, default 0). Without flow-type the IP version follows the
    addresses given (IPv4 when none is)."""
    rule: dict[str, Any] = {}
    for k, v in _key_values(text, "steer rule", STEER_KEYS):
        rule["queue" if k == "action" else k] = v
    if "context" in rule:
        rule.setdefault("queue", "0")        # with a context, the queue is an offset (ethtool)
    if "queue" not in rule:
        raise ValueError(f"steer rule {text!r}: says no queue=N")
    for k in ("queue", "src-port", "dst-port", "loc", "context"):
        if k in rule:
            try:
                rule[k] = int(rule[k], 0)
            except ValueError:
                raise ValueError(f"steer rule {text!r}: {k}={rule[k]!r} is not a number") from None
    if "loc" in rule and not 0 <= rule["loc"] < NUM_RULES:
        raise ValueError(f"steer rule {text!r}: loc={rule['loc']}: the NIC has rule locations "
                         f"0..{NUM_RULES - 1}")
    spec = steer_spec(rule)
    try:   # everything but the queue, which validate() checks against the NIC's queues
        ethtool.check_spec(dataclasses.replace(spec, action=0), ethtool.MAX_QUEUES)
    except KernelError as e:
        raise ValueError(f"steer rule {text!r}: {e.extack or e}") from None
    return rule


def steer_spec(rule: dict[str, Any]) -> ethtool.NtupleSpec:
    ft = rule.get("flow-type")
    if ft is None:
        proto = rule.get("proto", "tcp")
        if proto not in ("tcp", "udp", "ip"):
            raise ValueError(f"proto={proto!r}: expected tcp, udp or ip")
        v6 = any(":" in str(rule.get(k, "")) for k in ("src-ip", "dst-ip"))
        ft = f"{proto}{6 if v6 else 4}"
    if ft not in ALL_FLOW_TYPES:
        raise ValueError(f"flow-type={ft!r}: expected one of {sorted(ALL_FLOW_TYPES)}")
    return ethtool.NtupleSpec(ft, rule["queue"], src_ip=rule.get("src-ip"),
                              dst_ip=rule.get("dst-ip"), src_port=rule.get("src-port"),
                              dst_port=rule.get("dst-port"), loc=rule.get("loc"),
                              context=rule.get("context"))


FlowKey = tuple[int, IpAddress, int, IpAddress, int]
"""(family, local address, local port, remote address, remote port) of a TCP connection."""


# ---------------------------------------------------------------------------- the driver side
class RecordingNetdev(Netdev):
    """The reference driver, noting every frame NAPI takes off a completion ring."""

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.polled: list[tuple[int, RxFrame]] = []

    def _build_skb(self, q: NetdevRxQueue, frame: RxFrame) -> SkBuff | None:
        self.polled.append((q.index, frame))
        return super()._build_skb(q, frame)


@dataclass
class Conn:
    """One accepted TCP connection direction and what the application read from it
    (`reader`: tb.scenario.Reader, the ncdevmem-like loop)."""

    name: str
    reader: Reader | ZcrxReader
    tokens_returned: int = 0

    def drain(self) -> None:
        """Read until EAGAIN, end of stream or a reset; give back every token it took."""
        if self.reader.eof:
            return
        try:
            self.reader.drain()
        except KernelError as e:
            if e.errno != errno.ECONNRESET:
                raise
        self.tokens_returned += self.reader.give_back()


def conn_name(family: int, saddr: Any, sport: int, daddr: Any, dport: int) -> str:
    return f"{saddr}_{sport}-{daddr}_{dport}"


@dataclass
class ReplayResult:
    records: list[dict[str, Any]]
    streams: dict[str, dict[str, Any]]
    stats: dict[str, Any]


def validate(cfg: ReplayConfig, nq: int = 8) -> None:
    """Raise ValueError for settings the NIC (`nq` RX queues) cannot take."""
    for opt, queues in (("--devmem-queues", cfg.devmem_queues), ("--zcrx-queues", cfg.zcrx_queues)):
        bad = [q for q in queues if not 0 <= q < nq]
        if bad:
            raise ValueError(f"{opt} {bad}: the NIC has queues 0..{nq - 1}")
    both = sorted(set(cfg.devmem_queues) & set(cfg.zcrx_queues))
    if both:
        raise ValueError(f"--zcrx-queues and --devmem-queues both name queue(s) {both}: a queue has "
                         f"one memory provider (a dma-buf or an io_uring ifq)")
    if len(cfg.rss_contexts) > NUM_CONTEXTS:
        raise ValueError(f"--rss-context given {len(cfg.rss_contexts)} times: the NIC has "
                         f"{NUM_CONTEXTS} RSS contexts")
    for c in cfg.rss_contexts:
        if c["start"] + c["equal"] > nq:
            raise ValueError(f"--rss-context start={c['start']},equal={c['equal']}: queues "
                             f"{c['start']}..{c['start'] + c['equal'] - 1}, the NIC has queues 0..{nq - 1}")
    for rule in cfg.steer:
        ctx = rule.get("context")
        if ctx is not None:
            if not 1 <= ctx <= len(cfg.rss_contexts):
                have = (f"1..{len(cfg.rss_contexts)}" if cfg.rss_contexts else "none")
                raise ValueError(f"steer rule context={ctx}: no such RSS context (--rss-context "
                                 f"makes them: {have})")
            c = cfg.rss_contexts[ctx - 1]
            top = c["start"] + c["equal"] - 1 + rule["queue"]
            if top >= nq:
                raise ValueError(f"steer rule context={ctx},queue={rule['queue']}: the offset takes "
                                 f"the context to queue {top}, the NIC has queues 0..{nq - 1}")
        elif not 0 <= rule["queue"] < nq:
            raise ValueError(f"steer rule to queue {rule['queue']}: the NIC has queues 0..{nq - 1}")
    if cfg.rss_equal is not None and not 1 <= cfg.rss_equal <= nq:
        raise ValueError(f"--rss-equal {cfg.rss_equal}: between 1 and {nq}")
    if not 68 <= cfg.mtu <= 9216:
        raise ValueError(f"--mtu {cfg.mtu}: between 68 and 9216")


async def replay(env: Any, frames: Sequence[bytes | None], cfg: ReplayConfig,
                 problems: list[str | None] | None = None,
                 progress: Callable[[str], None] = print) -> ReplayResult:
    """Replay `frames` (None = a capture record that cannot be replayed, reason in
    `problems[i]`) through the driver on `env`; one record per frame."""
    shadow = Classifier(8)
    hw = MirrorHw(env.hw, shadow)
    kernel = Kernel()
    nd = RecordingNetdev(kernel, hw)
    await nd.probe()
    nq = nd.num_rx_queues
    shadow = hw.classifier = Classifier(nq)   # probe only reads: nothing written yet
    validate(cfg, nq)
    await nd.set_ringparam(rx_pending=cfg.rx_pending, tcp_data_split=True, hds_thresh=0)
    await nd.set_mtu(cfg.mtu)
    if cfg.rx_mpb:
        await nd.set_priv_flags({'rx-mpb': True})
        await nd.set_coalesce({'rx-frames': nd.rx_frames_max})
    await nd.open()
    await ethtool.set_rx_flow_hash(hw, ALL_FLOW_TYPES)
    await ethtool.set_rxfh(hw, key=cfg.rss_key or DEFAULT_RSS_KEY, num_queues=nq)
    provider_queues = set(cfg.devmem_queues) | set(cfg.zcrx_queues)
    rss_n = cfg.rss_equal or (min(provider_queues) if provider_queues and min(provider_queues) > 0 else nq)
    await ethtool.set_rxfh_equal(hw, rss_n, nq)
    contexts = ethtool.RssContexts(hw, nq)
    rules = ethtool.NtupleRules(hw, nq, contexts=contexts)
    await rules.clear()
    for ctx_cfg in cfg.rss_contexts:    # ethtool -X context new start S equal N: 1, 2, ...
        await ethtool.set_rxfh(hw, indir=ethtool.equal_indir(ctx_cfg["equal"], ctx_cfg["start"]),
                               rss_context=ethtool.ETH_RXFH_CONTEXT_ALLOC, contexts=contexts)
    for rule in cfg.steer:
        await rules.add(steer_spec(rule))
    nl = kernel.netlink_open()
    dmabufs = {}
    if cfg.devmem_queues:
        dmabuf = env.dev.export_dmabuf(DEVMEM_PAGES * PAGE_SIZE, chunk_size=16 * PAGE_SIZE)
        fd = kernel.dma_buf_fd(dmabuf)
        bid = await nl.bind_rx(nd.ifindex, fd, sorted(set(cfg.devmem_queues)))
        dmabufs[bid] = dmabuf
    ring = zcrx_ring(kernel)
    zcrx: dict[int, Zcrx] = {}
    for q in sorted(set(cfg.zcrx_queues)):
        zcrx[q] = await zcrx_register(ring, nd, q, pages=DEVMEM_PAGES)
    progress(f"replay: {nq} RX queues, RSS equal over queues 0..{rss_n - 1}, "
             f"{len(cfg.steer)} steering rule(s), "
             + "".join(f"RSS context {k} over queues {c['start']}..{c['start'] + c['equal'] - 1}, "
                       for k, c in enumerate(cfg.rss_contexts, 1))
             + f"devmem queues {sorted(set(cfg.devmem_queues)) or 'none'}"
             + (f", io_uring zcrx queues {sorted(zcrx)}" if zcrx else ""))

    # Listen on every port a SYN goes to, so the socket layer accepts those connections.
    listeners: dict[tuple[int, int], Socket] = {}
    handshake_acks: dict[FlowKey, int] = {}
    syns: set[FlowKey] = set()
    for f in frames:
        h = _headers(f)
        if not h or h.protocol != IPPROTO_TCP:
            continue
        if TcpFlags.SYN in h.flags and TcpFlags.ACK in h.flags:
            # The captured server's SYN-ACK: our passive side takes its ISS (as a TCP_REPAIR
            # socket would), so the captured client's ACKs acknowledge our SYN-ACK.
            kernel.tcp.repair_iss[(h.family, h.saddr, h.sport, h.daddr, h.dport)] = h.seq
        elif TcpFlags.SYN in h.flags:
            syns.add((h.family, h.daddr, h.dport, h.saddr, h.sport))
            lkey = (h.family, h.dport)
            if lkey not in listeners:
                s = kernel.socket(h.family, SOCK_STREAM)
                s.bind(("::" if h.family == AF_INET6 else "0.0.0.0", h.dport))
                s.listen()
                listeners[lkey] = s
        elif TcpFlags.ACK in h.flags and not h.flags & TcpFlags.RST:
            # The client's first ACK after its SYN (the handshake's third segment)
            # acknowledges the server's ISS + 1: what a capture of one direction only
            # (the server's RX side, like the demo's traffic) says about the server's ISS.
            key = (h.family, h.daddr, h.dport, h.saddr, h.sport)
            if key in syns:
                handshake_acks.setdefault(key, (h.ack_seq - 1) & 0xFFFF_FFFF)
    for key, iss in handshake_acks.items():
        kernel.tcp.repair_iss.setdefault(key, iss)   # a captured SYN-ACK wins
    conns: dict[str, Conn] = {}
    conn_queues: dict[str, set[int]] = {}

    def drain() -> None:
        for ls in listeners.values():
            while True:
                try:
                    s, _ = ls.accept()
                except KernelError as e:
                    if e.errno == errno.EAGAIN:
                        break
                    raise
                sk = s.sk
                assert sk is not None, "accept() returns a connected socket"
                name = conn_name(sk.family, sk.raddr, sk.rport, sk.laddr, sk.lport)
                zc = zcrx.get(sk.rx_queue)     # RECV_ZC with the ifq of the queue it came in on
                conns[name] = Conn(name, ZcrxReader(s, zc, withhold=True) if zc else
                                   Reader(s, dmabufs, withhold=True))
        for c in conns.values():
            c.drain()

    async def counters() -> dict[str, int]:
        return await nd.hw_stats()

    bound = set(cfg.devmem_queues)
    zbound = set(zcrx)
    records: list[dict[str, Any]] = []
    before = await counters()
    t0 = time.monotonic()
    last_report = t0
    max_frame = nd._frame_limit(cfg.mtu)
    for i, frame in enumerate(frames):
        rec: dict[str, Any] = {"frame": i, "status": "dropped", "drop_reason": None, "queue": None,
                               "rss_hash": None, "rss_type": None, "steered": False,
                               "hdr_len": None, "payload_len": None, "split": False,
                               "payload_in": None, "len": len(frame) if frame else None}
        records.append(rec)
        if frame is None:
            rec["drop_reason"] = (problems[i] if problems else None) or "not_replayed"
            continue
        wire = frame + bytes(ETH_MIN - len(frame)) if cfg.pad and len(frame) < ETH_MIN else frame
        if len(wire) > max_frame:
            progress(f"replay: frame {i}: {len(wire)} bytes is over the NIC's maximum frame of "
                     f"{max_frame} bytes (MTU {cfg.mtu}): the NIC drops it (oversize)")
        n_polled = len(nd.polled)
        await env.send(wire)
        after = before
        for _ in range(SETTLE_POLLS):
            after = await counters()
            if sum(after[n] for n in COUNTERS) > sum(before[n] for n in COUNTERS):
                break
            await env.hw.delay(SETTLE_NS)
        changed = [n for n in COUNTERS if after[n] != before[n]]
        before = after
        cls = None
        if 60 <= len(wire) <= max_frame:
            p = parse_frame(wire, nd.parse_bytes)
            if not p.hdr_err:
                cls = shadow.classify_frame(wire, p)
        if "RX_FRAMES" in changed:
            for _ in range(SETTLE_POLLS):
                await nd.poll()
                if len(nd.polled) > n_polled:
                    break
                await env.hw.delay(SETTLE_NS)
            else:
                raise RuntimeError(f"frame {i}: RX_FRAMES counted it but no completion came")
            q, fr = nd.polled[n_polled]
            c = fr.first
            rec.update(status="delivered", queue=q, rss_hash=c.rss_hash,
                       rss_type=RssType(c.rss_type).name.lower(),
                       steered=bool(cls and cls.steered), hdr_len=fr.hdr_len,
                       payload_len=fr.payload_len, split=fr.split,
                       payload_in=("device" if q in bound else "zcrx" if q in zbound else "host")
                       if fr.payload_len else None)
            h = _headers(wire)
            if h and h.protocol == IPPROTO_TCP:   # a connection's frames, even without payload
                conn_queues.setdefault(conn_name(h.family, h.saddr, h.sport, h.daddr, h.dport),
                                       set()).add(q)
            drain()
            await nd.poll()      # refill what the reader gave back
        else:
            drops = [n for n in changed if n.startswith("RX_DROP_") or n.endswith("_ERR")]
            rec["drop_reason"] = drops[0].removeprefix("RX_DROP_").lower() if drops else "lost"
            if cls is not None and rec["drop_reason"] in ("queue_off", "no_hdr_buf", "no_pay_buf", "cq_full"):
                rec.update(queue=cls.queue, rss_hash=cls.rss_hash,
                           rss_type=cls.rss_type.name.lower(), steered=cls.steered)
        now = time.monotonic()
        if now - last_report > 5 or i + 1 == len(frames):
            last_report = now
            progress(f"replay: {i + 1}/{len(frames)} frames ({(i + 1) / max(now - t0, 1e-9):.0f} frames/s)")
    drain()

    streams: dict[str, dict[str, Any]] = {}
    for name, conn in conns.items():
        on_devmem = bool(conn_queues.get(name, set()) & bound)
        on_zcrx = bool(conn_queues.get(name, set()) & zbound)
        r = conn.reader
        zr = r if isinstance(r, ZcrxReader) else None
        streams[name] = {"bytes": len(r.got), "devmem_bytes": r.devmem_bytes if isinstance(r, Reader) else 0,
                         "zcrx_bytes": zr.zc_bytes if zr else 0,
                         "linear_bytes": r.linear_bytes if isinstance(r, Reader) else 0,
                         "tokens_returned": conn.tokens_returned,
                         "eof": r.eof, "devmem_queue": on_devmem, "zcrx_queue": on_zcrx,
                         "queues": sorted(conn_queues.get(name, set()))}
        if cfg.dump_streams and (on_devmem or on_zcrx):
            out = Path(cfg.dump_streams)
            out.mkdir(parents=True, exist_ok=True)
            (out / f"{name}.bin").write_bytes(bytes(r.got))
            streams[name]["file"] = str(out / f"{name}.bin")
    zstats = {q: {"copy_fallback_bytes": z.area.copy_fallback_bytes, "kernel_reads": z.area.kernel_reads,
                  "niovs": z.area.num_niovs, "refill_entries": z.ifq.rq.tail}
              for q, z in zcrx.items()}
    await ring.close()
    stats = {"hw": await counters(), "cpu_reads_of_device_memory": env.dev.cpu_reads, "zcrx": zstats,
             "tcp": kernel.tcp.mib.as_dict(),
             "queues": {q.index: q.stats.as_dict() for q in nd.rx_queues},
             "num_rxq": nq, "rss_equal": rss_n}
    return ReplayResult(records, streams, stats)


def _headers(frame: bytes | None) -> PacketHeaders | None:
    if not frame:
        return None
    try:
        return parse_headers(frame)
    except (HeaderError, IndexError, ValueError):
        return None
