"""Golden model of TCP segmentation offload (docs/tx.md, "TCP segmentation offload").

Pure functions, written from the page, no state:

- `tso_status`: the rules of "Rules, statuses and counters" (BAD_SEG, TSO_BAD_HDR,
  TSO_BAD_LEN, TSO_BAD_MSS, in that order) for a send's descriptors and context entry.
- `tso_segments`: the frames the NIC sends for a good send: the header copied and patched
  per segment (IPv4 total length, ID + k, header checksum; IPv6 payload length; TCP sequence
  + k * mss, FIN/PSH on the last segment only, CWR on the first only; the TCP checksum),
  short segments padded to 60 bytes.
- `tso_seed`: the TCP checksum seed a driver writes (the pseudo-header sum without the
  length, as Linux TSO drivers prepare it).
- `tso_sent_bounds`: which segments a send ending in DMA_RD_ERR may have sent.

`models.tx.TxEngine` uses them for `TSO` sends. The checksums here are computed by the page's
rule (a ones'-complement sum over the seeded field plus the segment's TCP length);
tests/model/test_tso_model.py checks them against sums recomputed from scratch over the
pseudo-header of RFC 791 / RFC 8200, and against scapy's.
"""
from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

from models.formats import (TX_INLINE_MAX, TX_MIN_FRAME_LEN, TX_TSO_MAX_HDR, TX_TSO_MAX_PAYLOAD,
                            TX_TSO_MIN_MSS, TxDesc, TxStatus, TxTsoCtx)

ETH_HLEN = 14
"""Shortest Ethernet header: the IP header starts at `l3_offset >= 14`."""
IPV4_MIN_HLEN = 20
IPV4_MAX_HLEN = 60
IPV6_HLEN = 40
TCP_MIN_HLEN = 20
TCP_CSUM_OFFSET = 16
"""`csum_offset` of TCP: the only one a `TSO` send may have."""
IPPROTO_TCP = 6

TCP_FLAG_FIN = 0x01
TCP_FLAG_PSH = 0x08
TCP_FLAG_CWR = 0x80
TCP_FLAGS_OFFSET = 13
"""Byte of the TCP header holding CWR ... FIN (RFC 9293 section 3.1)."""


def _fold(total: int) -> int:
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total


def _sum16(data: bytes | bytearray) -> int:
    """Ones'-complement sum (folded, not complemented) of big-endian 16-bit words; an odd last
    byte is padded with a zero byte (RFC 1071)."""
    if len(data) % 2:
        data = bytes(data) + b'\x00'
    return _fold(sum(struct.unpack(f'>{len(data) // 2}H', data)))


def tso_seed(src: bytes, dst: bytes) -> int:
    """The TCP checksum seed of a `TSO` send: the folded ones'-complement sum of source and
    destination address (4 or 16 bytes each) and protocol 6, without the TCP length, not
    complemented (docs/tx.md, "What the NIC patches in every segment")."""
    if len(src) != len(dst) or len(src) not in (4, 16):
        raise ValueError(f'addresses of {len(src)} and {len(dst)} bytes: need 4+4 or 16+16')
    return _sum16(src + dst + struct.pack('>H', IPPROTO_TCP))


@dataclass(frozen=True)
class TsoSend:
    """What the rules need of a `TSO` send: its first descriptor, its context entry, and the
    lengths of its segments (descriptors in order: a 0 only where the first descriptor of an
    `INLINE` send has no segment)."""

    first: TxDesc
    ctx: TxTsoCtx
    inline_len: int
    """Bytes of the inline header (0 without `INLINE`)."""
    send_len: int
    """Inline bytes plus every segment's length."""

    @property
    def payload_len(self) -> int:
        """`P`: the send's bytes after `hdr_len` (0 when the header is longer)."""
        return max(0, self.send_len - self.ctx.hdr_len)

    @property
    def nsegs(self) -> int:
        """`n = ceil(P / mss)` (0 when `mss` is 0)."""
        mss = self.ctx.mss
        return -(-self.payload_len // mss) if mss else 0


def tso_header_status(first: TxDesc, ctx: TxTsoCtx) -> TxStatus:
    """TSO_BAD_HDR or OK: rule 2 of "Rules, statuses and counters"."""
    l3 = ctx.l3_offset
    l4 = first.csum_start
    iphl = l4 - l3
    bad = (ctx.hdr_len > TX_TSO_MAX_HDR
           or not first.csum or first.csum_udp
           or first.csum_offset != TCP_CSUM_OFFSET
           or l4 % 2
           or l3 < ETH_HLEN
           or ctx.hdr_len - l4 < TCP_MIN_HLEN)
    if ctx.ipv6:
        bad = bad or iphl < IPV6_HLEN
    else:
        bad = bad or iphl < IPV4_MIN_HLEN or iphl > IPV4_MAX_HLEN or iphl % 4 != 0
    return TxStatus.TSO_BAD_HDR if bad else TxStatus.OK


def tso_status(send: TsoSend, segs_ok: bool, frame_limit: int) -> TxStatus:
    """The status the descriptor rules give a `TSO` send whose descriptors and context entry
    were read: `segs_ok` is False when BAD_SEG applies (a bad segment or no `EOP` within
    `TX_TSO_MAX_SEGS` descriptors; `models.tx` decides it, as for any frame), `frame_limit`
    the effective `TX_FRAME_LIMIT.max_frame_len`. OK means the send may be read."""
    if not segs_ok:
        return TxStatus.BAD_SEG
    if (send.inline_len > TX_INLINE_MAX or send.inline_len > send.ctx.hdr_len
            or tso_header_status(send.first, send.ctx) != TxStatus.OK):
        return TxStatus.TSO_BAD_HDR
    p = send.send_len - send.ctx.hdr_len
    if p <= 0 or p > TX_TSO_MAX_PAYLOAD:
        return TxStatus.TSO_BAD_LEN
    if send.ctx.mss < TX_TSO_MIN_MSS or send.ctx.hdr_len + send.ctx.mss > frame_limit:
        return TxStatus.TSO_BAD_MSS
    return TxStatus.OK


def _put16(buf: bytearray, off: int, value: int) -> None:
    struct.pack_into('>H', buf, off, value & 0xFFFF)


def segment_header(header: bytes, first: TxDesc, ctx: TxTsoCtx, k: int, nsegs: int,
                   pay_len: int) -> bytearray:
    """Segment `k`'s header (of `nsegs`, carrying `pay_len` payload bytes) with every field of
    the page's table patched except the TCP checksum, which still holds the seed."""
    h = bytearray(header)
    l3, l4, hl = ctx.l3_offset, first.csum_start, ctx.hdr_len
    if ctx.ipv6:
        _put16(h, l3 + 4, hl - l3 - IPV6_HLEN + pay_len)
    else:
        _put16(h, l3 + 2, hl - l3 + pay_len)
        ip_id = struct.unpack_from('>H', h, l3 + 4)[0]
        _put16(h, l3 + 4, ip_id + k)
        _put16(h, l3 + 10, 0)
        _put16(h, l3 + 10, ~_sum16(h[l3:l4]))
    seq = struct.unpack_from('>I', h, l4 + 4)[0]
    struct.pack_into('>I', h, l4 + 4, (seq + k * ctx.mss) & 0xFFFF_FFFF)
    flags = h[l4 + TCP_FLAGS_OFFSET]
    if k != nsegs - 1:
        flags &= ~(TCP_FLAG_FIN | TCP_FLAG_PSH) & 0xFF
    if k != 0:
        flags &= ~TCP_FLAG_CWR & 0xFF
    h[l4 + TCP_FLAGS_OFFSET] = flags
    return h


def tso_segments(send_bytes: bytes, first: TxDesc, ctx: TxTsoCtx) -> list[bytes]:
    """The frames a good `TSO` send (its bytes, header first, as gathered) leaves the NIC as,
    in order: docs/tx.md, "What the NIC patches in every segment". The caller has checked
    `tso_status` is OK."""
    hl, mss = ctx.hdr_len, ctx.mss
    header, payload = send_bytes[:hl], send_bytes[hl:]
    l4 = first.csum_start
    n = -(-len(payload) // mss)
    frames = []
    for k in range(n):
        chunk = payload[k * mss:(k + 1) * mss]
        h = segment_header(header, first, ctx, k, n, len(chunk))
        tcp_len = hl - l4 + len(chunk)
        # The seed is in the field: summing the segment with it and adding the TCP length
        # gives the pseudo-header sum of this segment (docs/tx.md, TCP checksum rule).
        total = _fold(_sum16(h[l4:] + chunk) + tcp_len)
        _put16(h, l4 + TCP_CSUM_OFFSET, ~total)
        frame = bytes(h) + chunk
        if len(frame) < TX_MIN_FRAME_LEN:
            frame += bytes(TX_MIN_FRAME_LEN - len(frame))
        frames.append(frame)
    return frames


def tso_sent_bounds(seg_lens: Sequence[int], failed: int, ctx: TxTsoCtx) -> tuple[int, int]:
    """For a `TSO` send whose segment (descriptor) `failed` (index into `seg_lens`, the
    segment lengths in order, the inline header as a first entry of its own when there is
    one) returned a read error: `(lo, hi)`, the fewest and the most TCP segments the NIC may
    have sent (docs/tx.md, rule 5, DMA_RD_ERR). Segments whose bytes all precede the failed
    one are sent; one holding a byte of it may be; none after it."""
    start = sum(seg_lens[:failed])
    end = start + seg_lens[failed]
    hl, mss = ctx.hdr_len, ctx.mss

    def segs_ending_by(offset: int) -> int:
        # TCP segment k holds the header and send bytes [hl + k*mss, hl + (k+1)*mss): it is
        # complete with the bytes before `offset` when the header is, and its end is.
        if offset < hl:
            return 0
        return (offset - hl) // mss

    total = sum(seg_lens)
    n = -(-(total - hl) // mss)

    def complete(offset: int) -> int:
        if offset >= total:
            return n
        return min(n, segs_ending_by(offset))

    # The failed byte is somewhere in [start, end): at worst the descriptor's last one.
    return complete(start), complete(end - 1)


@dataclass(frozen=True)
class TsoRead:
    """One read of a `TSO` send's bytes: `seg` -1 for header bytes (those not inline), else
    the TCP segment whose payload it carries; `seg_end`: the last read of that header or
    segment."""

    addr: int
    len: int
    seg: int
    seg_end: bool


def tso_read_plan(segs: Sequence[tuple[int, int]], inline_len: int, hdr_len: int,
                  mss: int) -> list[TsoRead]:
    """The reads that fetch a good `TSO` send's bytes exactly once, in send order: its
    segments (`(addr, len)` of its descriptors in order; 0-length ones skipped) cut where
    the header ends (after `hdr_len - inline_len` segment bytes) and at every `mss` payload
    bytes, so that each TCP segment's payload is a run of whole reads (docs/tx.md, "RTL
    plan": every segment is sent as a frame of its own, its patched header followed by its
    payload reads)."""
    out: list[TsoRead] = []
    hdr_left = hdr_len - inline_len
    seg, seg_left = 0, mss
    for addr, n in segs:
        while n:
            if hdr_left:
                k = min(n, hdr_left)
                hdr_left -= k
                out.append(TsoRead(addr, k, -1, hdr_left == 0))
            else:
                k = min(n, seg_left)
                seg_left -= k
                out.append(TsoRead(addr, k, seg, seg_left == 0))
                if seg_left == 0:
                    seg, seg_left = seg + 1, mss
            addr += k
            n -= k
    if out and out[-1].seg >= 0 and not out[-1].seg_end:
        last = out[-1]
        out[-1] = TsoRead(last.addr, last.len, last.seg, True)
    return out
