"""In-memory formats of the RX rings: buffer descriptors and completions.

Implements docs/dma-formats.md, sections "RX buffer descriptor (16 bytes)" and
"RX completion (16 bytes)". All multi-byte fields are little-endian. `pack()` validates every
field's range and raises `ValueError` naming the field; `unpack()` decodes 16 bytes and, with
`strict=True`, also rejects non-zero reserved bits (the NIC must write them as zero).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum

DESC_BYTES = 16
"""Size of an RX buffer descriptor (header and payload rings alike)."""
CPL_BYTES = 16
"""Size of an RX completion."""
RING_ENTRY_BYTES = 16
"""Every ring entry, descriptor or completion, is 16 bytes (dma-formats.md, Rings)."""

# --- byte 13: parse results -------------------------------------------------------------------
L3_TYPE_SHIFT = 0
L3_TYPE_MASK = 0x03
L4_TYPE_SHIFT = 2
L4_TYPE_MASK = 0x0C
IP_FRAG_BIT = 0x10
VLAN_TAGS_SHIFT = 5
VLAN_TAGS_MASK = 0x60
PARSE_RESERVED_MASK = 0x80

# --- byte 14: flags -----------------------------------------------------------------------------
FLAG_SOP = 0x01
FLAG_EOP = 0x02
FLAG_SPLIT = 0x04
FLAG_HDR_VALID = 0x08
FLAG_PAY_VALID = 0x10
FLAG_HDR_OVERFLOW = 0x20
FLAGS_RESERVED_MASK = 0xC0

# --- byte 15: queue and generation --------------------------------------------------------------
QUEUE_MASK = 0x7F
GEN_BIT = 0x80

MAX_QUEUE = QUEUE_MASK
MAX_VLAN_TAGS = 2

_DESC_STRUCT = struct.Struct('<QH6s')
_CPL_STRUCT = struct.Struct('<HHHHIBBBB')
assert _DESC_STRUCT.size == DESC_BYTES and _CPL_STRUCT.size == CPL_BYTES


class L3Type(IntEnum):
    """Completion `l3_type` (byte 13, bits [1:0])."""

    NONE = 0
    IPV4 = 1
    IPV6 = 2


class L4Type(IntEnum):
    """Completion `l4_type` (byte 13, bits [3:2]).

    OTHER is an IP protocol the parser does not split inside (ICMP, IPv6 extension headers,
    ...); fragments report NONE (rx-rules.md section 2, L4).
    """

    NONE = 0
    TCP = 1
    UDP = 2
    OTHER = 3


def _check_uint(name: str, value: int, bits: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f'{name} must be an int, got {type(value).__name__} {value!r}')
    if not 0 <= value < (1 << bits):
        raise ValueError(f'{name}={value} out of range 0..{(1 << bits) - 1} ({bits} bits)')


def _check_len(what: str, data: bytes, n: int) -> None:
    if len(data) != n:
        raise ValueError(f'{what} is {n} bytes, got {len(data)}')


@dataclass
class RxDesc:
    """RX buffer descriptor (dma-formats.md, "RX buffer descriptor").

    `addr` is the bus address of the buffer (bytes 0-7), `buf_id` the driver's name for it
    (bytes 8-9); bytes 10-15 are reserved, written as zero and ignored by the NIC.
    """

    addr: int
    buf_id: int

    def pack(self) -> bytes:
        """The 16 bytes the driver writes into a buffer ring."""
        _check_uint('RxDesc.addr', self.addr, 64)
        _check_uint('RxDesc.buf_id', self.buf_id, 16)
        return _DESC_STRUCT.pack(self.addr, self.buf_id, bytes(6))

    @classmethod
    def unpack(cls, data: bytes, strict: bool = False) -> RxDesc:
        """Decode 16 bytes. Reserved bytes are ignored (as the NIC does) unless `strict`."""
        _check_len('RxDesc', data, DESC_BYTES)
        addr, buf_id, reserved = _DESC_STRUCT.unpack(bytes(data))
        if strict and any(reserved):
            raise ValueError(f'RxDesc reserved bytes 10-15 not zero: {reserved.hex()}')
        return cls(addr=addr, buf_id=buf_id)


@dataclass
class RxCompletion:
    """RX completion (dma-formats.md, "RX completion (16 bytes)").

    One per payload buffer a frame used (one with `pay_valid=False` for an empty payload);
    every completion of a frame repeats the frame's header fields, `sop`/`eop` mark the first
    and the last.
    """

    pay_buf_id: int = 0
    pay_len: int = 0
    hdr_buf_id: int = 0
    hdr_len: int = 0
    rss_hash: int = 0
    rss_type: int = 0
    l3_type: L3Type = L3Type.NONE
    l4_type: L4Type = L4Type.NONE
    ip_frag: bool = False
    vlan_tags: int = 0
    sop: bool = False
    eop: bool = False
    split: bool = False
    hdr_valid: bool = False
    pay_valid: bool = False
    hdr_overflow: bool = False
    queue: int = 0
    gen: int = 0

    @property
    def parse_byte(self) -> int:
        """Byte 13: l3_type, l4_type, ip_frag, vlan_tags."""
        return ((int(self.l3_type) << L3_TYPE_SHIFT)
                | (int(self.l4_type) << L4_TYPE_SHIFT)
                | (IP_FRAG_BIT if self.ip_frag else 0)
                | (self.vlan_tags << VLAN_TAGS_SHIFT))

    @property
    def flags(self) -> int:
        """Byte 14: SOP, EOP, SPLIT, HDR_VALID, PAY_VALID, HDR_OVERFLOW."""
        return ((FLAG_SOP if self.sop else 0)
                | (FLAG_EOP if self.eop else 0)
                | (FLAG_SPLIT if self.split else 0)
                | (FLAG_HDR_VALID if self.hdr_valid else 0)
                | (FLAG_PAY_VALID if self.pay_valid else 0)
                | (FLAG_HDR_OVERFLOW if self.hdr_overflow else 0))

    def validate(self) -> None:
        """Raise `ValueError` naming the first field that does not fit its bits."""
        _check_uint('RxCompletion.pay_buf_id', self.pay_buf_id, 16)
        _check_uint('RxCompletion.pay_len', self.pay_len, 16)
        _check_uint('RxCompletion.hdr_buf_id', self.hdr_buf_id, 16)
        _check_uint('RxCompletion.hdr_len', self.hdr_len, 16)
        _check_uint('RxCompletion.rss_hash', self.rss_hash, 32)
        _check_uint('RxCompletion.rss_type', self.rss_type, 8)
        try:
            L3Type(self.l3_type)
        except ValueError:
            raise ValueError(f'RxCompletion.l3_type={self.l3_type!r} is not an L3Type '
                             f'(0 none, 1 IPv4, 2 IPv6)') from None
        try:
            L4Type(self.l4_type)
        except ValueError:
            raise ValueError(f'RxCompletion.l4_type={self.l4_type!r} is not an L4Type '
                             f'(0..3)') from None
        _check_uint('RxCompletion.vlan_tags', self.vlan_tags, 2)
        if self.vlan_tags > MAX_VLAN_TAGS:
            raise ValueError(f'RxCompletion.vlan_tags={self.vlan_tags} out of range '
                             f'0..{MAX_VLAN_TAGS}')
        _check_uint('RxCompletion.queue', self.queue, 7)
        _check_uint('RxCompletion.gen', self.gen, 1)

    def pack(self) -> bytes:
        """The 16 bytes the NIC writes into the completion ring."""
        self.validate()
        return _CPL_STRUCT.pack(self.pay_buf_id, self.pay_len, self.hdr_buf_id, self.hdr_len,
                                self.rss_hash, self.rss_type, self.parse_byte, self.flags,
                                (self.queue & QUEUE_MASK) | (GEN_BIT if self.gen else 0))

    @classmethod
    def unpack(cls, data: bytes, strict: bool = False) -> RxCompletion:
        """Decode 16 bytes of a completion ring entry.

        Reserved bits are dropped; with `strict=True` a non-zero reserved bit, or a
        `vlan_tags` of 3, raises `ValueError` (the NIC never writes either). An `l3_type` of 3
        is undefined and always raises.
        """
        _check_len('RxCompletion', data, CPL_BYTES)
        (pay_buf_id, pay_len, hdr_buf_id, hdr_len, rss_hash, rss_type,
         parse, flags, qgen) = _CPL_STRUCT.unpack(bytes(data))
        vlan_tags = (parse & VLAN_TAGS_MASK) >> VLAN_TAGS_SHIFT
        l3 = (parse & L3_TYPE_MASK) >> L3_TYPE_SHIFT
        if l3 > L3Type.IPV6:
            # l3_type 3 has no meaning; refuse rather than invent one.
            raise ValueError(f'RxCompletion l3_type={l3} is undefined (byte 13 = 0x{parse:02x})')
        if strict:
            if parse & PARSE_RESERVED_MASK:
                raise ValueError(f'RxCompletion byte 13 reserved bit 7 set: 0x{parse:02x}')
            if flags & FLAGS_RESERVED_MASK:
                raise ValueError(f'RxCompletion byte 14 reserved bits [7:6] set: 0x{flags:02x}')
            if vlan_tags > MAX_VLAN_TAGS:
                raise ValueError(f'RxCompletion vlan_tags={vlan_tags} (max {MAX_VLAN_TAGS})')
        return cls(
            pay_buf_id=pay_buf_id,
            pay_len=pay_len,
            hdr_buf_id=hdr_buf_id,
            hdr_len=hdr_len,
            rss_hash=rss_hash,
            rss_type=rss_type,
            l3_type=L3Type(l3),
            l4_type=L4Type((parse & L4_TYPE_MASK) >> L4_TYPE_SHIFT),
            ip_frag=bool(parse & IP_FRAG_BIT),
            vlan_tags=vlan_tags,
            sop=bool(flags & FLAG_SOP),
            eop=bool(flags & FLAG_EOP),
            split=bool(flags & FLAG_SPLIT),
            hdr_valid=bool(flags & FLAG_HDR_VALID),
            pay_valid=bool(flags & FLAG_PAY_VALID),
            hdr_overflow=bool(flags & FLAG_HDR_OVERFLOW),
            queue=qgen & QUEUE_MASK,
            gen=1 if qgen & GEN_BIT else 0,
        )

