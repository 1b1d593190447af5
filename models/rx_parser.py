"""The RX parser of docs/rx-rules.md section 2 ("Parse"), as a pure function.

`parse_frame(frame, parse_bytes)` finds the VLAN tags, L3 and L4 headers and the offsets the
split decision needs, and reports a header error (`RX_DROP_HDR_ERR`) exactly when the rules
say so. It reads header fields only from the first `parse_bytes` bytes (the parser's window);
lengths are checked against the whole frame's length, which the NIC knows at the last beat.

Offsets are byte offsets from the destination MAC. Fields that do not apply are `None`
(`l4_off`, `pay_off`, `ip_end` of a non-IP frame, or whatever follows a header error).
"""
from __future__ import annotations

from dataclasses import dataclass

from models.formats import L3Type, L4Type

ETH_HDR_BYTES = 14
VLAN_TAG_BYTES = 4
MAX_VLAN_TAGS = 2
TPID_8021Q = 0x8100
TPID_8021AD = 0x88A8
ETHERTYPE_IPV4 = 0x0800
ETHERTYPE_IPV6 = 0x86DD
IPV6_HDR_BYTES = 40
TCP_MIN_HDR_BYTES = 20
UDP_HDR_BYTES = 8
IPPROTO_TCP = 6
IPPROTO_UDP = 17
IPV6_NH_HOPOPT = 0
IPV6_NH_ROUTING = 43
IPV6_NH_FRAGMENT = 44
IPV6_NH_DSTOPTS = 60
IPV6_EXT_HEADERS = (IPV6_NH_HOPOPT, IPV6_NH_ROUTING, IPV6_NH_FRAGMENT, IPV6_NH_DSTOPTS)
MAX_IPV6_EXT_HEADERS = 2
"""The parser walks at most this many IPv6 extension headers (rx-rules.md section 2)."""
IPV6_EXT_MIN_BYTES = 8

DEFAULT_PARSE_BYTES = 128
"""`CAPS.parse_bytes` of the default build (rx-rules.md section 2): enough for every field
the parser reads, QinQ + IPv4 with 40 bytes of options included."""

MIN_PARSE_BYTES = 64
"""Smallest window the model accepts: it holds two VLAN tags and the fixed IPv4 and IPv6
header fields, so only an L4 header pushed deep by IPv4 options can fall outside it."""


@dataclass
class ParseResult:
    """What the parser reports about a frame (rx-rules.md section 2).

    `l3_type`, `l4_type`, `ip_frag`, `vlan_tags` go into every completion. `pay_off` is the
    header length of a split. `proto` is the IPv4 protocol or the IPv6 next header after the
    extension headers walked; `ipv4_options`, `ipv6_ext` and `vlan_tags` feed the RX_*
    information counters. A TCP or UDP header that does not fit the window is parsed as
    "other L4".
    """

    l3_type: L3Type = L3Type.NONE
    l4_type: L4Type = L4Type.NONE
    ip_frag: bool = False
    vlan_tags: int = 0
    l3_off: int = ETH_HDR_BYTES
    l4_off: int | None = None
    pay_off: int | None = None
    ip_end: int | None = None
    hdr_err: bool = False
    hdr_err_reason: str = ''
    proto: int | None = None
    ipv4_options: bool = False
    ipv6_ext: bool = False

    @property
    def is_ip(self) -> bool:
        return self.l3_type is not L3Type.NONE


def _u16(frame: bytes, off: int) -> int:
    return (frame[off] << 8) | frame[off + 1]


def parse_frame(frame: bytes, parse_bytes: int = DEFAULT_PARSE_BYTES) -> ParseResult:
    """Parse `frame` (no FCS) as the NIC's parser does with a `parse_bytes` window.

    The ingress checks (runt, oversize, FCS) come first in the NIC and are not repeated
    here; `frame` is expected to be at least 60 bytes long. A shorter frame still parses
    (fields beyond its end read as missing and give a non-IP result or a header error) so
    the function never raises on hostile input.
    """
    if not MIN_PARSE_BYTES <= parse_bytes <= 255:
        raise ValueError(f'parse_bytes={parse_bytes} out of range {MIN_PARSE_BYTES}..255')
    length = len(frame)
    # Header fields are read from the parse window, where bytes past the frame's end read as
    # zero (rx-rules.md section 2); lengths are checked against the real frame length.
    frame = bytes(frame).ljust(parse_bytes, b'\0')
    res = ParseResult()

    # --- L2: up to two VLAN tags ---------------------------------------------------------
    et_off = 12
    if et_off + 2 > length:
        return res
    ethertype = _u16(frame, et_off)
    while ethertype in (TPID_8021Q, TPID_8021AD):
        if res.vlan_tags == MAX_VLAN_TAGS:
            # A third tag makes the frame non-IP; two tags were parsed.
            res.l3_off = ETH_HDR_BYTES + VLAN_TAG_BYTES * res.vlan_tags
            return res
        res.vlan_tags += 1
        et_off += VLAN_TAG_BYTES
        if et_off + 2 > length:
            res.l3_off = ETH_HDR_BYTES + VLAN_TAG_BYTES * res.vlan_tags
            return res
        ethertype = _u16(frame, et_off)
    l3 = res.l3_off = ETH_HDR_BYTES + VLAN_TAG_BYTES * res.vlan_tags

    def hdr_err(reason: str) -> ParseResult:
        res.hdr_err = True
        res.hdr_err_reason = reason
        return res

    # --- L3 ------------------------------------------------------------------------------
    if ethertype == ETHERTYPE_IPV4:
        res.l3_type = L3Type.IPV4
        if l3 + 20 > length:
            return hdr_err(f'IPv4 header at {l3} runs past the {length}-byte frame')
        version, ihl = frame[l3] >> 4, frame[l3] & 0x0F
        # Properties are read from the header as it is, before any check can fail.
        res.ipv4_options = ihl > 5
        frag_word = _u16(frame, l3 + 6)
        res.ip_frag = bool(frag_word & 0x2000) or (frag_word & 0x1FFF) != 0
        if version != 4:
            return hdr_err(f'IPv4 EtherType but version nibble {version}')
        if ihl < 5:
            return hdr_err(f'IPv4 IHL {ihl} < 5')
        total_len = _u16(frame, l3 + 2)
        if total_len < 4 * ihl:
            return hdr_err(f'IPv4 total length {total_len} < header length {4 * ihl}')
        if l3 + total_len > length:
            return hdr_err(f'IPv4 total length {total_len} at offset {l3} runs past the '
                           f'{length}-byte frame')
        proto = frame[l3 + 9]
        res.l4_off = l3 + 4 * ihl
        res.ip_end = l3 + total_len
    elif ethertype == ETHERTYPE_IPV6:
        res.l3_type = L3Type.IPV6
        if l3 + IPV6_HDR_BYTES > length:
            return hdr_err(f'IPv6 header at {l3} runs past the {length}-byte frame')
        version = frame[l3] >> 4
        if version != 6:
            return hdr_err(f'IPv6 EtherType but version nibble {version}')
        payload_len = _u16(frame, l3 + 4)
        if l3 + IPV6_HDR_BYTES + payload_len > length:
            return hdr_err(f'IPv6 payload length {payload_len} at offset {l3} runs past the '
                           f'{length}-byte frame')
        proto = frame[l3 + 6]
        off = l3 + IPV6_HDR_BYTES
        res.ip_end = l3 + IPV6_HDR_BYTES + payload_len
        # Extension headers: at most two, each starting with 8 bytes inside the window.
        for _ in range(MAX_IPV6_EXT_HEADERS):
            if proto not in IPV6_EXT_HEADERS or off + IPV6_EXT_MIN_BYTES > parse_bytes:
                break
            size = 8 if proto == IPV6_NH_FRAGMENT else 8 * (frame[off + 1] + 1)
            res.ipv6_ext = True
            if off + size > res.ip_end:
                return hdr_err(f'IPv6 extension header {proto} of {size} bytes at {off} runs '
                               f'past IP end {res.ip_end}')
            res.ip_frag = res.ip_frag or proto == IPV6_NH_FRAGMENT
            proto = frame[off]
            off += size
        res.l4_off = off
    else:
        return res  # non-IP: whole frame, unsplit

    # --- L4 (non-fragments only) -----------------------------------------------------------
    # A TCP or UDP header is parsed only when its fixed part lies inside the window, and an
    # IPv6 extension header the walk did not reach leaves the frame as "other L4".
    res.proto = proto
    l4, ip_end = res.l4_off, res.ip_end
    if res.ip_frag:
        res.l4_type = L4Type.NONE
        res.pay_off = l4
    elif proto == IPPROTO_TCP and l4 + TCP_MIN_HDR_BYTES <= parse_bytes:
        res.l4_type = L4Type.TCP
        if l4 + TCP_MIN_HDR_BYTES > ip_end:
            return hdr_err(f'TCP header at {l4} runs past IP end {ip_end}')
        doff = frame[l4 + 12] >> 4
        if doff < 5:
            return hdr_err(f'TCP data offset {doff} < 5')
        if l4 + 4 * doff > ip_end:
            return hdr_err(f'TCP header of {4 * doff} bytes at {l4} runs past IP end {ip_end}')
        res.pay_off = l4 + 4 * doff
    elif proto == IPPROTO_UDP and l4 + UDP_HDR_BYTES <= parse_bytes:
        res.l4_type = L4Type.UDP
        if l4 + UDP_HDR_BYTES > ip_end:
            return hdr_err(f'UDP header at {l4} runs past IP end {ip_end}')
        res.pay_off = l4 + UDP_HDR_BYTES
    else:
        res.l4_type = L4Type.OTHER
        res.pay_off = l4
    return res
