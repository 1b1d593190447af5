"""Sequences: constrained-random RX traffic drawn from a Profile, and the register
configuration (RSS key/table/hash types and n-tuple steering rules) run through the CSR agent
with the reference driver's ethtool code."""
from __future__ import annotations

import random
from dataclasses import dataclass

from pyuvm import ConfigDB, uvm_sequence
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import ICMPv6EchoRequest, IPv6, IPv6ExtHdrDestOpt, IPv6ExtHdrHopByHop, PadN
from scapy.layers.l2 import ARP, Dot1AD, Dot1Q, Ether

from driver import ethtool
from tb.frames import pad, pattern
from tb.uvm.csr_agent import SeqHw
from tb.uvm.profiles import Profile
from tb.uvm.seq_items import RxFrameItem
from tb.corpus import mutate

MUTATION_KINDS = ["byte_flip", "truncate", "extend", "len_field", "l4_field", "bad_fcs"]
ALL_HASH_TYPES = {"ip4", "tcp4", "udp4", "ip6", "tcp6", "udp6"}


@dataclass(frozen=True)
class FlowSpec:
    protocol: str           # one of Profile.protocol_mix's keys
    vlan: int
    src: str
    dst: str
    sport: int
    dport: int

    @property
    def ipv6(self) -> bool:
        return self.protocol.startswith("ipv6")

    @property
    def l4(self) -> str:
        return self.protocol.split("/")[-1]

    def ntuple(self, queue: int) -> ethtool.NtupleSpec | None:
        """The rule that pins this flow to `queue`: tcp4/udp4/tcp6/udp6 on the destination
        address and port, ip4/ip6 on the destination address for other IP protocols (ICMP);
        none for a frame without IP (n-tuple rules match IP flows only)."""
        if self.protocol == "non_ip":
            return None
        if self.l4 not in ("tcp", "udp"):
            return ethtool.NtupleSpec(f"ip{6 if self.ipv6 else 4}", action=queue, dst_ip=self.dst)
        return ethtool.NtupleSpec(f"{self.l4}{6 if self.ipv6 else 4}", action=queue,
                                  dst_ip=self.dst, dst_port=self.dport)


def make_flows(profile: Profile, rng: random.Random) -> list[FlowSpec]:
    protos = list(profile.protocol_mix)
    weights = [profile.protocol_mix[p] for p in protos]
    flows = []
    for i in range(profile.flows):
        proto = rng.choices(protos, weights)[0]
        if i < profile.steered_flows:            # steered flows must be over IP
            proto = rng.choice([p for p in protos if p != "non_ip"] or ["ipv4/tcp"])
        v6 = proto.startswith("ipv6")
        src = ":".join(f"{rng.randrange(1, 65536):x}" for _ in range(8)) if v6 else \
            ".".join(str(rng.randrange(1, 255)) for _ in range(4))
        dst = ":".join(f"{rng.randrange(1, 65536):x}" for _ in range(8)) if v6 else \
            ".".join(str(rng.randrange(1, 255)) for _ in range(4))
        vlan = rng.choices([0, 1, 2], profile.vlan_mix)[0]
        flows.append(FlowSpec(proto, vlan, src, dst, rng.randrange(1024, 65536), rng.randrange(1, 65536)))
    return flows


def build_frame(flow: FlowSpec, payload: bytes, rng: random.Random, options: bool) -> bytes:
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    if flow.vlan == 1:
        eth = eth / Dot1Q(vlan=rng.randrange(1, 4095))
    elif flow.vlan == 2:
        eth = eth / Dot1AD(vlan=rng.randrange(1, 4095)) / Dot1Q(vlan=rng.randrange(1, 4095))
    if flow.protocol == "non_ip":
        return pad(bytes(eth / ARP(psrc="10.0.0.1", pdst="10.0.0.2") / payload))
    if flow.ipv6:
        l3 = IPv6(src=flow.src, dst=flow.dst)
        if options:   # sometimes long enough to overflow the parser window (HDR_OVERFLOW)
            l3 = l3 / IPv6ExtHdrHopByHop(options=[PadN(optdata=b"\x00" * rng.choice([4, 12, 60, 100]))])
            if rng.random() < 0.3:
                l3 = l3 / IPv6ExtHdrDestOpt(options=[PadN(optdata=b"\x00" * 4)])
    else:
        opts = b"\x01" * (4 * rng.choice([1, 2, 5, 10])) if options else b""
        l3 = IP(src=flow.src, dst=flow.dst, options=opts or [])
    # TCP options (NOPs) with the IP options: an IPv4/TCP header past the 128-byte parse window
    tcp_opts = [("NOP", None)] * (4 * rng.choice([2, 5, 10])) if options and rng.random() < 0.5 else []
    l4 = TCP(sport=flow.sport, dport=flow.dport, flags="PA", options=tcp_opts) if flow.l4 == "tcp" else \
        UDP(sport=flow.sport, dport=flow.dport) if flow.l4 == "udp" else \
        (ICMPv6EchoRequest() if flow.ipv6 else ICMP())
    return pad(bytes(eth / l3 / l4 / payload))


class RandomTrafficSeq(uvm_sequence):
    """`profile.frames` frames of random flows, sizes, VLANs, options, mutations, bad FCS;
    or, when `frames` is given, that many (unscaled), numbered from `first`, the flows drawn
    with `flow_weights` (default: all alike)."""

    def __init__(self, name: str = "traffic", frames: int | None = None, first: int = 0,
                 flow_weights: list[float] | None = None) -> None:
        super().__init__(name)
        self.frames = frames
        self.first = first
        self.flow_weights = flow_weights

    async def body(self) -> None:
        profile: Profile = ConfigDB().get(None, "", "profile")
        rng: random.Random = ConfigDB().get(None, "", "rng")
        flows: list[FlowSpec] = ConfigDB().get(None, "", "flows")
        scale = float(ConfigDB().get(None, "", "frames_scale"))
        n = self.frames if self.frames is not None else max(1, int(profile.frames * scale)) if profile.frames else 0
        for i in range(self.first, self.first + n):
            flow_idx = rng.choices(range(len(flows)), self.flow_weights)[0] if self.flow_weights \
                else rng.randrange(len(flows))
            flow = flows[flow_idx]
            if profile.jumbo_rate and rng.random() < profile.jumbo_rate:
                size = rng.randint(1500, 8900)
            else:
                lo, hi, _ = rng.choices(profile.payload_sizes, [w for _, _, w in profile.payload_sizes])[0]
                size = rng.randint(lo, hi)
            frame = build_frame(flow, pattern(size, period=251, start=i), rng,
                                rng.random() < profile.ip_options)
            error, bad = "none", False
            if rng.random() < profile.malformed_rate:
                state = rng.getstate()
                kind = rng.randrange(6)          # mutate()'s first draw picks its corruption
                rng.setstate(state)
                good = frame
                frame, bad = mutate(frame, rng)
                error = "bad_fcs" if bad else MUTATION_KINDS[kind] if frame != good else "none"   # (a cut of 0 bytes)
            elif rng.random() < profile.bad_fcs_rate:
                error, bad = "bad_fcs", True
            item = RxFrameItem(f"rx{i}", frame, bad, error, flow.protocol, flow.vlan, flow_idx)
            await self.start_item(item)
            await self.finish_item(item)


class NicConfigSeq(uvm_sequence):
    """RSS (random key, equal spread, all hash types) and n-tuple rules that pin the first
    `steered_flows` flows to the last queue, through the CSR agent."""

    async def body(self) -> None:
        profile: Profile = ConfigDB().get(None, "", "profile")
        rng: random.Random = ConfigDB().get(None, "", "rng")
        flows: list[FlowSpec] = ConfigDB().get(None, "", "flows")
        nq: int = ConfigDB().get(None, "", "num_queues")
        hw = SeqHw(self)
        if profile.rss:
            await ethtool.set_rxfh(hw, key=rng.randbytes(40))
            await ethtool.set_rxfh_equal(hw, nq - 1 if profile.steered_flows else nq, nq)
            await ethtool.set_rx_flow_hash(hw, ALL_HASH_TYPES)
        if profile.steered_flows:
            rules = ethtool.NtupleRules(hw, nq)
            for f in flows[:profile.steered_flows]:
                spec = f.ntuple(nq - 1)
                if spec is not None:
                    await rules.add(spec)
