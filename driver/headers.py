"""Packet header parsing for the receive path, from bytes in host memory only.

`parse_headers` is what `eth_type_trans`, `ip_rcv`/`ipv6_rcv` and `tcp_v4_rcv`/`tcp_v6_rcv`
check before a segment reaches a socket; `eth_get_headlen` is the flow-dissector helper
drivers use to decide how many bytes to pull into the skb head when the NIC did not split.
Neither ever looks past the headers: payload may be in device memory.
"""
from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass
from enum import IntFlag

ETH_HLEN = 14
VLAN_HLEN = 4
ETH_P_IP = 0x0800
ETH_P_IPV6 = 0x86DD
ETH_P_8021Q = 0x8100
ETH_P_8021AD = 0x88A8
IPPROTO_TCP = 6
IPPROTO_UDP = 17
MAX_VLAN_TAGS = 2
AF_INET = 2
AF_INET6 = 10

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class TcpFlags(IntFlag):
    FIN = 0x01
    SYN = 0x02
    RST = 0x04
    PSH = 0x08
    ACK = 0x10
    URG = 0x20


class HeaderError(ValueError):
    """Headers that the stack drops (and counts)."""


@dataclass(frozen=True)
class PacketHeaders:
    """What the stack learnt from the headers of one frame."""

    family: int
    saddr: IpAddress
    daddr: IpAddress
    protocol: int
    l3_off: int
    l4_off: int
    ip_end: int
    """Offset one past the IP packet (the rest is Ethernet padding)."""
    pay_off: int = 0
    """Offset of the L4 payload (TCP: after the TCP header with options)."""
    sport: int = 0
    dport: int = 0
    seq: int = 0
    ack_seq: int = 0
    flags: TcpFlags = TcpFlags(0)
    window: int = 0

    @property
    def payload_len(self) -> int:
        return self.ip_end - self.pay_off


def _l2(data: bytes) -> tuple[int, int]:
    """(ethertype, l3 offset) after up to two VLAN tags."""
    if len(data) < ETH_HLEN:
        raise HeaderError('frame shorter than an Ethernet header')
    off = 12
    proto = struct.unpack_from('!H', data, off)[0]
    tags = 0
    while proto in (ETH_P_8021Q, ETH_P_8021AD) and tags < MAX_VLAN_TAGS:
        off += VLAN_HLEN
        tags += 1
        if len(data) < off + 2:
            raise HeaderError('truncated VLAN tag')
        proto = struct.unpack_from('!H', data, off)[0]
    return proto, off + 2


def ip_fast_csum(hdr: bytes) -> int:
    """One's-complement sum of an IPv4 header; 0 when the checksum is right."""
    return ~csum_fold_sum(hdr) & 0xFFFF


def parse_headers(data: bytes) -> PacketHeaders:
    """Parse Ethernet (+VLAN), IPv4/IPv6 and TCP or UDP from `data`, which must hold every
    header byte. Raises `HeaderError` for anything the stack would drop."""
    proto, l3 = _l2(data)
    if proto == ETH_P_IP:
        if len(data) < l3 + 20:
            raise HeaderError('truncated IPv4 header')
        vihl = data[l3]
        ihl = (vihl & 0x0F) * 4
        if vihl >> 4 != 4 or ihl < 20:
            raise HeaderError('bad IPv4 version or IHL')
        if len(data) < l3 + ihl:
            raise HeaderError('truncated IPv4 options')
        if ip_fast_csum(data[l3:l3 + ihl]):
            raise HeaderError('bad IPv4 header checksum')
        tot_len, frag = struct.unpack_from('!H2xH', data, l3 + 2)
        if frag & 0x3FFF:
            raise HeaderError('IPv4 fragment (no reassembly here)')
        if tot_len < ihl:
            raise HeaderError('IPv4 total length below the header length')
        family = AF_INET
        l4proto = data[l3 + 9]
        saddr: IpAddress = ipaddress.IPv4Address(data[l3 + 12:l3 + 16])
        daddr: IpAddress = ipaddress.IPv4Address(data[l3 + 16:l3 + 20])
        l4 = l3 + ihl
        ip_end = l3 + tot_len
    elif proto == ETH_P_IPV6:
        if len(data) < l3 + 40:
            raise HeaderError('truncated IPv6 header')
        if data[l3] >> 4 != 6:
            raise HeaderError('bad IPv6 version')
        plen = struct.unpack_from('!H', data, l3 + 4)[0]
        l4proto = data[l3 + 6]
        family = AF_INET6
        saddr = ipaddress.IPv6Address(data[l3 + 8:l3 + 24])
        daddr = ipaddress.IPv6Address(data[l3 + 24:l3 + 40])
        l4 = l3 + 40
        ip_end = l4 + plen
    else:
        raise HeaderError(f'not IP (ethertype 0x{proto:04x})')
    if l4proto == IPPROTO_TCP:
        if len(data) < l4 + 20 or ip_end < l4 + 20:
            raise HeaderError('truncated TCP header')
        sport, dport, seq, ack, off_flags, window = struct.unpack_from('!HHIIHH', data, l4)
        doff = (off_flags >> 12) * 4
        if doff < 20 or ip_end < l4 + doff or len(data) < l4 + doff:
            raise HeaderError('bad TCP data offset')
        return PacketHeaders(family, saddr, daddr, l4proto, l3, l4, ip_end, l4 + doff,
                             sport, dport, seq, ack, TcpFlags(off_flags & 0x3F), window)
    if l4proto == IPPROTO_UDP:
        if len(data) < l4 + 8 or ip_end < l4 + 8:
            raise HeaderError('truncated UDP header')
        sport, dport = struct.unpack_from('!HH', data, l4)
        return PacketHeaders(family, saddr, daddr, l4proto, l3, l4, ip_end, l4 + 8, sport, dport)
    return PacketHeaders(family, saddr, daddr, l4proto, l3, l4, ip_end, l4)


def eth_get_headlen(data: bytes) -> int:
    """Bytes of headers at the start of `data` (a window of the frame): L2, L3 and the TCP or
    UDP header when they parse, else as far as they do."""
    try:
        return min(parse_headers(data).pay_off, len(data))
    except HeaderError:
        try:
            return min(_l2(data)[1], len(data))
        except HeaderError:
            return min(len(data), ETH_HLEN)


# ------------------------------------------------------------------------------------------
# transmit: headers the CPU builds in host memory
# ------------------------------------------------------------------------------------------

ETH_P_IP_BYTES = struct.pack('!H', ETH_P_IP)
IPV4_HLEN = 20
IPV6_HLEN = 40
TCP_HLEN = 20
TCP_CSUM_OFFSET = 16
"""`offsetof(struct tcphdr, check)`."""
IP_DF = 0x4000
DEFAULT_TTL = 64


def csum_fold_sum(data: bytes, initial: int = 0) -> int:
    """Folded 16-bit ones'-complement sum of big-endian words (RFC 1071), not complemented;
    an odd last byte is padded with zero."""
    if len(data) % 2:
        data += b'\0'
    total = initial + sum(struct.unpack(f'!{len(data) // 2}H', data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total


def pseudo_hdr_seed(saddr: IpAddress, daddr: IpAddress, proto: int, l4_len: int) -> int:
    """What Linux writes into the L4 checksum field for CHECKSUM_PARTIAL
    (`~tcp_v4_check(len, saddr, daddr, 0)` / `~tcp_v6_check`): the folded pseudo-header sum,
    not complemented (RFC 793 3.1, RFC 8200 8.1)."""
    if saddr.version == 4:
        tail = struct.pack('!BBH', 0, proto, l4_len)
    else:
        tail = struct.pack('!I3xB', l4_len, proto)
    return csum_fold_sum(saddr.packed + daddr.packed + tail)


def build_tcp_headers(src_mac: bytes, dst_mac: bytes, saddr: IpAddress, daddr: IpAddress,
                      sport: int, dport: int, seq: int, ack: int, flags: int, window: int,
                      payload_len: int, ip_id: int = 0, options: bytes = b'') -> tuple[bytes, int]:
    """Ethernet + IPv4/IPv6 + TCP headers of a segment carrying `payload_len` bytes, with the
    IPv4 header checksum computed (the CPU can read the header) and the TCP checksum field
    seeded with the pseudo-header sum for the NIC to finish (CHECKSUM_PARTIAL). Returns the
    bytes and `csum_start` (the frame offset of the TCP header). `options`: TCP options,
    a multiple of 4 bytes (the SYN's MSS)."""
    assert len(options) % 4 == 0 and len(options) <= 40
    thl = TCP_HLEN + len(options)
    tcp_len = thl + payload_len
    seed = pseudo_hdr_seed(saddr, daddr, IPPROTO_TCP, tcp_len)
    tcp = struct.pack('!HHIIBBHHH', sport, dport, seq & 0xFFFF_FFFF, ack & 0xFFFF_FFFF,
                      (thl // 4) << 4, int(flags), min(window, 0xFFFF), seed, 0) + options
    if saddr.version == 4:
        ip = bytearray(struct.pack('!BBHHHBBH4s4s', 0x45, 0, IPV4_HLEN + tcp_len,
                                   ip_id & 0xFFFF, IP_DF, DEFAULT_TTL, IPPROTO_TCP, 0,
                                   saddr.packed, daddr.packed))
        struct.pack_into('!H', ip, 10, ip_fast_csum(bytes(ip)))
        eth = dst_mac + src_mac + struct.pack('!H', ETH_P_IP)
    else:
        ip = bytearray(struct.pack('!IHBB16s16s', 0x6000_0000, tcp_len, IPPROTO_TCP,
                                   DEFAULT_TTL, saddr.packed, daddr.packed))
        eth = dst_mac + src_mac + struct.pack('!H', ETH_P_IPV6)
    return eth + bytes(ip) + tcp, ETH_HLEN + len(ip)
