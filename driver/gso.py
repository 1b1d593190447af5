"""GSO skbs: one TCP send of several MSS in one skb (`skb_shinfo(skb)->gso_size`), which the
NIC cuts into frames (TSO, docs/tx.md "TCP segmentation offload") or, when the device cannot
take it now, software cuts before the driver sees it (`skb_gso_segment` ->
`tcp_gso_segment`, net/ipv4/tcp_offload.c; Linux runs it in `validate_xmit_skb` when
`netif_needs_gso` says the device's features do not cover the skb).

Both only touch headers: the payload (linear bytes in the head, or fragments in device
memory) is sliced and referenced, never read by the CPU.

- `gso_headers`: where the headers of a GSO skb are (IP offset and version, TCP offset,
  length of all headers), from its head.
- `tso_seed_header`: the header a TSO send carries: the TCP checksum field holds the
  pseudo-header sum *without* the length (Linux drivers take the length out with
  `csum_replace_by_diff()` before handing the send to the hardware; docs/tx.md).
- `skb_gso_segment`: the MSS-sized skbs software GSO makes, each with its own header
  (IPv4 total length, ID + k and header checksum, IPv6 payload length, TCP sequence + k * mss,
  FIN/PSH on the last segment only, CWR on the first only), CHECKSUM_PARTIAL with its own
  pseudo-header seed, its own references on the fragments and on the zero-copy completion.
"""
from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass

from driver.headers import (ETH_P_8021AD, ETH_P_8021Q, ETH_P_IP, ETH_P_IPV6, IPPROTO_TCP,
                            HeaderError, IpAddress, ip_fast_csum,
                            pseudo_hdr_seed)
from driver.skbuff import IpSummed, SkBuff, SkbFrag

TCP_CSUM_OFF = 16
TCP_FLAGS_OFF = 13
TCP_FLAG_FIN, TCP_FLAG_PSH, TCP_FLAG_CWR = 0x01, 0x08, 0x80
GSO_LEGACY_MAX_SIZE = 65536
"""`GSO_LEGACY_MAX_SIZE`: a device's default `gso_max_size` (headers included)."""
GSO_MAX_SEGS = 65535
"""`GSO_MAX_SEGS`: a device's default (and largest) `gso_max_segs`."""
MAX_TCP_HEADER = 320
"""`MAX_TCP_HEADER` (`L1_CACHE_ALIGN(128 + MAX_HEADER)`, 320 bytes on a usual x86-64
build): the header room `tcp_xmit_size_goal` keeps below `gso_max_size`."""


@dataclass(frozen=True)
class GsoHeaders:
    """The headers of a GSO skb (offsets from the frame's first byte)."""

    l3_offset: int
    csum_start: int
    """The TCP header's offset (`skb_transport_offset`)."""
    hdr_len: int
    """Ethernet, VLAN tags, IP and TCP with options (`skb_tcp_all_headers`)."""
    ipv6: bool
    saddr: IpAddress
    daddr: IpAddress


def gso_headers(frame_head: bytes) -> GsoHeaders:
    """Parse the headers at the start of `frame_head` (TCP over IPv4 or IPv6, up to two VLAN
    tags). HeaderError when they are not a TCP segment's."""
    if len(frame_head) < 14:
        raise HeaderError('GSO skb shorter than an Ethernet header')
    off = 12
    proto = struct.unpack_from('!H', frame_head, off)[0]
    while proto in (ETH_P_8021Q, ETH_P_8021AD) and off < 20:
        off += 4
        proto = struct.unpack_from('!H', frame_head, off)[0]
    l3 = off + 2
    if proto == ETH_P_IP:
        ihl = (frame_head[l3] & 0x0F) * 4
        l4, ipv6, l4proto = l3 + ihl, False, frame_head[l3 + 9]
        saddr: IpAddress = ipaddress.IPv4Address(frame_head[l3 + 12:l3 + 16])
        daddr: IpAddress = ipaddress.IPv4Address(frame_head[l3 + 16:l3 + 20])
    elif proto == ETH_P_IPV6:
        l4, ipv6, l4proto = l3 + 40, True, frame_head[l3 + 6]
        saddr = ipaddress.IPv6Address(frame_head[l3 + 8:l3 + 24])
        daddr = ipaddress.IPv6Address(frame_head[l3 + 24:l3 + 40])
    else:
        raise HeaderError(f'GSO skb of ethertype 0x{proto:04x}, not IP')
    if l4proto != IPPROTO_TCP or len(frame_head) < l4 + 20:
        raise HeaderError('GSO skb without a whole TCP header')
    hdr_len = l4 + (frame_head[l4 + 12] >> 4) * 4
    if len(frame_head) < hdr_len:
        raise HeaderError('GSO skb head shorter than its headers')
    return GsoHeaders(l3, l4, hdr_len, ipv6, saddr, daddr)


def tso_seed_header(frame_head: bytes, g: GsoHeaders) -> bytes:
    """`frame_head` with the TCP checksum field set to the TSO seed: the pseudo-header sum of
    the addresses and protocol without the length (`csum_replace_by_diff(&th->check,
    htonl(paylen))` in gve/ixgbe/ice)."""
    out = bytearray(frame_head)
    struct.pack_into('!H', out, g.csum_start + TCP_CSUM_OFF,
                     pseudo_hdr_seed(g.saddr, g.daddr, IPPROTO_TCP, 0))
    return bytes(out)


def _segment_header(hdr: bytes, g: GsoHeaders, k: int, n: int, mss: int, pay: int) -> bytes:
    """Segment `k` of `n`'s header, carrying `pay` payload bytes (`tcp_gso_segment`,
    `inet_gso_segment` / `ipv6_gso_segment`)."""
    h = bytearray(hdr)
    l3, l4 = g.l3_offset, g.csum_start
    tcp_len = g.hdr_len - l4 + pay
    if g.ipv6:
        struct.pack_into('!H', h, l3 + 4, g.hdr_len - l3 - 40 + pay)
    else:
        struct.pack_into('!H', h, l3 + 2, g.hdr_len - l3 + pay)
        ip_id = struct.unpack_from('!H', h, l3 + 4)[0]
        struct.pack_into('!H', h, l3 + 4, (ip_id + k) & 0xFFFF)
        struct.pack_into('!H', h, l3 + 10, 0)
        struct.pack_into('!H', h, l3 + 10, ip_fast_csum(bytes(h[l3:l4])))
    seq = struct.unpack_from('!I', h, l4 + 4)[0]
    struct.pack_into('!I', h, l4 + 4, (seq + k * mss) & 0xFFFF_FFFF)
    flags = h[l4 + TCP_FLAGS_OFF]
    if k != n - 1:
        flags &= ~(TCP_FLAG_FIN | TCP_FLAG_PSH)
    if k != 0:
        flags &= ~TCP_FLAG_CWR
    h[l4 + TCP_FLAGS_OFF] = flags & 0xFF
    struct.pack_into('!H', h, l4 + TCP_CSUM_OFF,
                     pseudo_hdr_seed(g.saddr, g.daddr, IPPROTO_TCP, tcp_len))
    return bytes(h)


def skb_gso_segment(skb: SkBuff) -> list[SkBuff]:
    """Software GSO of a TCP GSO skb (`skb_gso_segment`): the MSS-sized skbs, in order, each
    with its own header, its own references on the fragments it points into (`frag_ref`)
    and on the zero-copy completion, and the skb's destructor. The caller frees `skb`
    afterwards (its own references go then)."""
    head = skb.head[skb.data:]
    g = gso_headers(head)
    mss = skb.gso_size
    hdr, linear = head[:g.hdr_len], head[g.hdr_len:]
    total = len(linear) + skb.data_len
    n = -(-total // mss)
    if skb.frags and skb.frag_ref is None:
        raise ValueError('GSO skb with fragments but no frag_ref: cannot reference them twice')
    out: list[SkBuff] = []
    frag_i, frag_off = 0, 0            # position in skb.frags
    lin_off = 0
    for k in range(n):
        want = min(mss, total - k * mss)
        body = linear[lin_off:lin_off + want]
        lin_off += len(body)
        left = want - len(body)
        frags: list[SkbFrag] = []
        while left:
            f = skb.frags[frag_i]
            take = min(left, f.size - frag_off)
            assert skb.frag_ref is not None
            skb.frag_ref(f.netmem)
            frags.append(SkbFrag(f.netmem, f.offset + frag_off, take))
            frag_off += take
            left -= take
            if frag_off == f.size:
                frag_i, frag_off = frag_i + 1, 0
        seg = SkBuff(head=_segment_header(hdr, g, k, n, mss, want) + body, frags=frags,
                     queue_mapping=skb.queue_mapping, seq=(skb.seq + k * mss) & 0xFFFF_FFFF,
                     ip_summed=IpSummed.CHECKSUM_PARTIAL, csum_start=g.csum_start,
                     csum_offset=TCP_CSUM_OFF, frag_unref=skb.frag_unref,
                     frag_ref=skb.frag_ref, destructor=skb.destructor)
        if skb.ubuf is not None:
            seg.ubuf = skb.ubuf.get()
        out.append(seg)
    skb.destructor = None              # the segments carry it (`tcp_wfree` moves with them)
    return out


def tso_wire_bytes(payload: int, hdr_len: int, mss: int) -> int:
    """Bytes on the wire (without FCS) of a TSO send: every segment's header plus the
    payload, a segment shorter than 60 bytes padded (docs/tx.md)."""
    n = -(-payload // mss)
    last = payload - (n - 1) * mss
    return (n - 1) * (hdr_len + mss) + max(60, hdr_len + last)


__all__ = ['GSO_LEGACY_MAX_SIZE', 'MAX_TCP_HEADER', 'GsoHeaders', 'gso_headers',
           'skb_gso_segment', 'tso_seed_header', 'tso_wire_bytes']
