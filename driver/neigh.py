"""Neighbour resolution for the driver's host: answering ARP (RFC 826) and IPv6 Neighbor
Solicitations (RFC 4861), and building the requests the host itself sends.

In Linux this is `arp_process()` (net/ipv4/arp.c) and `ndisc_recv_ns()` / `ndisc_send_na()`
(net/ipv6/ndisc.c). The live co-simulation (`nicsim live`) needs it because the Linux peer
in the test namespace resolves the simulated host's addresses before it sends any TCP.

Only what a host on one link needs: replies for our own addresses, requests for a peer's,
and a neighbour table filled from what the peer announces. Frames that are not for us return
None; malformed frames raise `NeighError` with the reason (the caller counts and drops them).
"""
from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass, field

from driver.headers import csum_fold_sum, pseudo_hdr_seed

ETH_P_ARP = 0x0806
ETH_P_IPV4 = 0x0800
ETH_P_IPV6 = 0x86DD
ARPOP_REQUEST = 1
ARPOP_REPLY = 2
IPPROTO_ICMPV6 = 58
ND_NEIGHBOR_SOLICIT = 135
ND_NEIGHBOR_ADVERT = 136
ND_OPT_SOURCE_LL = 1
ND_OPT_TARGET_LL = 2
NA_FLAG_SOLICITED = 0x4000_0000
NA_FLAG_OVERRIDE = 0x2000_0000
BROADCAST = b"\xff" * 6
ALL_NODES = bytes.fromhex("ff020000000000000000000000000001")


class NeighError(ValueError):
    """A frame claims to be ARP or ND but is malformed; the message says how."""


def mac_bytes(mac: str | bytes) -> bytes:
    """'02:00:00:00:00:02' or 6 bytes -> 6 bytes."""
    if isinstance(mac, bytes):
        if len(mac) != 6:
            raise ValueError(f"a MAC address is 6 bytes, got {len(mac)}")
        return mac
    parts = mac.split(":")
    if len(parts) != 6:
        raise ValueError(f"{mac!r} is not a MAC address (six hex bytes separated by ':')")
    return bytes(int(p, 16) for p in parts)


def icmpv6_checksum(src: bytes, dst: bytes, icmp: bytes) -> int:
    """ICMPv6 checksum over the IPv6 pseudo-header (RFC 8200 section 8.1) and the message."""
    seed = pseudo_hdr_seed(ipaddress.IPv6Address(src), ipaddress.IPv6Address(dst), IPPROTO_ICMPV6, len(icmp))
    return ~csum_fold_sum(icmp, seed) & 0xFFFF


def solicited_node(addr: bytes) -> bytes:
    """The solicited-node multicast address ff02::1:ffXX:XXXX of a unicast address."""
    return bytes.fromhex("ff02" + "00" * 9 + "01ff") + addr[13:]


def ipv6_multicast_mac(addr: bytes) -> bytes:
    """33:33 followed by the low 32 bits of the group (RFC 2464 section 7)."""
    return b"\x33\x33" + addr[12:]


@dataclass
class NeighStats:
    arp_requests_answered: int = 0
    ns_answered: int = 0
    learned: int = 0
    malformed: int = 0


@dataclass
class NeighResponder:
    """Our link-layer and IP addresses, and what we learned about the peers."""

    mac: bytes
    ipv4: bytes | None = None
    ipv6: bytes | None = None
    table: dict[bytes, bytes] = field(default_factory=dict)   # IP address bytes -> MAC
    stats: NeighStats = field(default_factory=NeighStats)

    @classmethod
    def create(cls, mac: str | bytes, ipv4: str | None = None, ipv6: str | None = None) -> NeighResponder:
        return cls(mac=mac_bytes(mac),
                   ipv4=ipaddress.IPv4Address(ipv4).packed if ipv4 else None,
                   ipv6=ipaddress.IPv6Address(ipv6).packed if ipv6 else None)

    def lookup(self, ip: str | bytes) -> bytes | None:
        """The MAC learned for `ip`, or None."""
        key = ip if isinstance(ip, bytes) else ipaddress.ip_address(ip).packed
        return self.table.get(key)

    def _learn(self, ip: bytes, mac: bytes) -> None:
        if ip not in self.table:
            self.stats.learned += 1
        self.table[ip] = mac

    # ----------------------------------------------------------------------------- receive
    def handle(self, frame: bytes) -> bytes | None:
        """The reply to `frame` if it is an ARP request or a Neighbor Solicitation for one of
        our addresses; None for anything else (after learning the sender where it tells)."""
        if len(frame) < 14:
            return None
        ethertype = struct.unpack_from("!H", frame, 12)[0]
        try:
            if ethertype == ETH_P_ARP:
                return self._arp(frame)
            if ethertype == ETH_P_IPV6:
                return self._ndisc(frame)
        except NeighError:
            self.stats.malformed += 1
            raise
        return None

    def _arp(self, frame: bytes) -> bytes | None:
        if len(frame) < 14 + 28:
            raise NeighError(f"ARP frame of {len(frame)} bytes is shorter than 42")
        htype, ptype, hlen, plen, op = struct.unpack_from("!HHBBH", frame, 14)
        if (htype, ptype, hlen, plen) != (1, ETH_P_IPV4, 6, 4):
            raise NeighError(f"ARP for hardware {htype}/{hlen}, protocol {ptype:#x}/{plen}: only Ethernet/IPv4 is supported")
        sha, spa = frame[22:28], frame[28:32]
        tpa = frame[38:42]
        if spa != b"\x00\x00\x00\x00":
            self._learn(spa, sha)
        if op != ARPOP_REQUEST or self.ipv4 is None or tpa != self.ipv4:
            return None
        self.stats.arp_requests_answered += 1
        arp = struct.pack("!HHBBH", 1, ETH_P_IPV4, 6, 4, ARPOP_REPLY) + self.mac + self.ipv4 + sha + spa
        return (sha + self.mac + struct.pack("!H", ETH_P_ARP) + arp).ljust(60, b"\x00")

    def _ndisc(self, frame: bytes) -> bytes | None:
        if len(frame) < 14 + 40 or frame[14 + 6] != IPPROTO_ICMPV6:
            return None
        payload_len = struct.unpack_from("!H", frame, 18)[0]
        src, dst = frame[22:38], frame[38:54]
        icmp = frame[54:54 + payload_len]
        if len(icmp) != payload_len:
            raise NeighError(f"IPv6 payload length {payload_len} but {len(icmp)} bytes follow")
        if len(icmp) < 24 or icmp[0] not in (ND_NEIGHBOR_SOLICIT, ND_NEIGHBOR_ADVERT):
            return None
        if frame[14 + 7] != 255:
            raise NeighError(f"neighbour discovery with hop limit {frame[21]} (RFC 4861 requires 255)")
        if icmpv6_checksum(src, dst, icmp):
            raise NeighError("ICMPv6 checksum mismatch")
        target = icmp[8:24]
        opts = self._options(icmp[24:])
        if icmp[0] == ND_NEIGHBOR_ADVERT:
            if ND_OPT_TARGET_LL in opts:
                self._learn(target, opts[ND_OPT_TARGET_LL])
            return None
        if ND_OPT_SOURCE_LL in opts and src != bytes(16):
            self._learn(src, opts[ND_OPT_SOURCE_LL])
        if self.ipv6 is None or target != self.ipv6:
            return None
        self.stats.ns_answered += 1
        if src == bytes(16):          # from DAD: answer all nodes, not solicited (RFC 4861 7.2.4)
            dst_ip, flags = ALL_NODES, NA_FLAG_OVERRIDE
            dst_mac = ipv6_multicast_mac(ALL_NODES)
        else:
            dst_ip, dst_mac, flags = src, opts.get(ND_OPT_SOURCE_LL, frame[6:12]), NA_FLAG_SOLICITED | NA_FLAG_OVERRIDE
        return self._ipv6_icmp(dst_mac, self.ipv6, dst_ip, struct.pack("!BBHI", ND_NEIGHBOR_ADVERT, 0, 0, flags)
                               + self.ipv6 + bytes([ND_OPT_TARGET_LL, 1]) + self.mac)

    @staticmethod
    def _options(data: bytes) -> dict[int, bytes]:
        opts: dict[int, bytes] = {}
        off = 0
        while off + 2 <= len(data):
            kind, units = data[off], data[off + 1]
            if units == 0:
                raise NeighError("neighbour discovery option of length 0 (RFC 4861 section 4.6)")
            if off + 8 * units > len(data):
                raise NeighError("neighbour discovery option runs past the message")
            if kind in (ND_OPT_SOURCE_LL, ND_OPT_TARGET_LL):
                opts[kind] = data[off + 2:off + 8]
            off += 8 * units
        return opts

    def _ipv6_icmp(self, dst_mac: bytes, src: bytes, dst: bytes, icmp: bytes) -> bytes:
        csum = icmpv6_checksum(src, dst, icmp)
        icmp = icmp[:2] + struct.pack("!H", csum) + icmp[4:]
        ip6 = struct.pack("!IHBB", 0x6000_0000, len(icmp), IPPROTO_ICMPV6, 255) + src + dst
        return (dst_mac + self.mac + struct.pack("!H", ETH_P_IPV6) + ip6 + icmp).ljust(60, b"\x00")

    # ----------------------------------------------------------------------------- send
    def arp_request(self, target_ip: str | bytes) -> bytes:
        """A broadcast ARP request for `target_ip` from our IPv4 address."""
        if self.ipv4 is None:
            raise ValueError("no IPv4 address configured")
        tpa = target_ip if isinstance(target_ip, bytes) else ipaddress.IPv4Address(target_ip).packed
        arp = struct.pack("!HHBBH", 1, ETH_P_IPV4, 6, 4, ARPOP_REQUEST) + self.mac + self.ipv4 + bytes(6) + tpa
        return (BROADCAST + self.mac + struct.pack("!H", ETH_P_ARP) + arp).ljust(60, b"\x00")

    def neighbor_solicit(self, target_ip: str | bytes) -> bytes:
        """A Neighbor Solicitation for `target_ip` to its solicited-node group."""
        if self.ipv6 is None:
            raise ValueError("no IPv6 address configured")
        target = target_ip if isinstance(target_ip, bytes) else ipaddress.IPv6Address(target_ip).packed
        group = solicited_node(target)
        icmp = struct.pack("!BBHI", ND_NEIGHBOR_SOLICIT, 0, 0, 0) + target + bytes([ND_OPT_SOURCE_LL, 1]) + self.mac
        return self._ipv6_icmp(ipv6_multicast_mac(group), self.ipv6, group, icmp)
