"""In-memory formats of the RX and TX rings: descriptors and completions.

Implements docs/dma-formats.md, sections "RX buffer descriptor (16 bytes)" and
"RX completion (16 bytes)", and docs/tx.md, sections "TX descriptor (16 bytes)" and
"TX completion (16 bytes)" (`TxDesc`, `TxCompletion`, `TxStatus`). All multi-byte fields are little-endian. `pack()` validates every
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


# The enums by value, for decoding (a tuple index is cheaper than the enum's lookup).
_L3_TYPES = tuple(L3Type)
_L4_TYPES = tuple(L4Type)
assert [int(t) for t in _L3_TYPES] == list(range(len(_L3_TYPES)))
assert [int(t) for t in _L4_TYPES] == list(range(len(_L4_TYPES)))


def _check_uint(name: str, value: int, bits: int) -> None:
    if type(value) is int and 0 <= value < (1 << bits):    # the common case, checked first
        return
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
            l3_type=_L3_TYPES[l3],
            l4_type=_L4_TYPES[(parse & L4_TYPE_MASK) >> L4_TYPE_SHIFT],
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



# ================================================================================================
# TX path (docs/tx.md, "TX descriptor (16 bytes)" and "TX completion (16 bytes)")
# ================================================================================================

TX_DESC_BYTES = 16
"""Size of a TX descriptor (docs/tx.md, "TX descriptor")."""
TX_CPL_BYTES = 16
"""Size of a TX completion (docs/tx.md, "TX completion")."""

# --- TX descriptor byte 10: flags ---------------------------------------------------------------
TX_FLAG_EOP = 0x01
"""Last segment of the frame."""
TX_FLAG_CSUM = 0x02
"""Compute the L4 checksum (first descriptor of the frame only)."""
TX_FLAG_CSUM_UDP = 0x04
"""UDP rule: a computed 0x0000 is sent as 0xFFFF (first descriptor only)."""
TX_FLAGS_RESERVED_MASK = 0xF8
"""Byte 10 bits [7:3]: written as zero, ignored by the NIC."""

# --- TX completion byte 15 (same layout as the RX completion) ---------------------------------
TX_QUEUE_MASK = QUEUE_MASK
TX_GEN_BIT = GEN_BIT

# --- limits of docs/tx.md ---------------------------------------------------------------------
TX_SEG_MAX_LEN = 4096
"""A segment is 1..4096 bytes ("TX descriptor", `len`)."""
TX_SEG_PAGE = 4096
"""`[addr, addr + len)` must not cross a 4 KiB boundary."""
TX_MIN_FRAME_LEN = 60
"""Frames shorter than this are refused with BAD_LEN, never padded ("Bad input")."""
TX_FRAME_LIMIT_RESET = 1522
"""Reset value of `TX_FRAME_LIMIT.max_frame_len`."""
TX_MAX_SEGS = 16
"""`TX_CAPS.max_segs` of this NIC: descriptors per frame."""
TX_FIFO_KIB = 16
"""`TX_CAPS.fifo_kib` of this NIC: store-and-forward FIFO size in KiB."""
TX_MAX_QUEUES = 8
"""`TXQ[t]` entries in the register map (`TX_CAPS.num_txq` of them are implemented)."""

_TX_DESC_STRUCT = struct.Struct('<QHBBBBH')
_TX_CPL_STRUCT = struct.Struct('<HHHHH4sBB')
assert _TX_DESC_STRUCT.size == TX_DESC_BYTES and _TX_CPL_STRUCT.size == TX_CPL_BYTES


class TxStatus(IntEnum):
    """TX completion `status` (byte 14); docs/tx.md, "Bad input: status codes and counters".

    Anything but OK means the frame was not sent. The values are in the table's order, which
    is also the order the rules are applied in.
    """

    OK = 0
    BAD_SEG = 1
    BAD_LEN = 2
    BAD_CSUM = 3
    DMA_RD_ERR = 4
    DESC_RD_ERR = 5


def _check_bool(name: str, value: object) -> None:
    if not isinstance(value, (bool, int)) or isinstance(value, int) and value not in (0, 1):
        raise ValueError(f'{name} must be a bool, got {value!r}')


@dataclass
class TxDesc:
    """TX descriptor (docs/tx.md, "TX descriptor (16 bytes)").

    `pack()` checks only that every field fits its bits: a descriptor with `len == 0`, or
    one crossing a 4 KiB boundary, packs fine, because the NIC must answer it with the
    `BAD_SEG` status (docs/tx.md, "Bad input"), not refuse to see it. `csum`, `csum_udp`,
    `csum_start`, `csum_offset` and `tag` are read from a frame's first descriptor only.
    """

    addr: int
    len: int
    eop: bool = False
    csum: bool = False
    csum_udp: bool = False
    csum_start: int = 0
    csum_offset: int = 0
    tag: int = 0

    @property
    def flags(self) -> int:
        """Byte 10: EOP, CSUM, CSUM_UDP."""
        return ((TX_FLAG_EOP if self.eop else 0)
                | (TX_FLAG_CSUM if self.csum else 0)
                | (TX_FLAG_CSUM_UDP if self.csum_udp else 0))

    def validate(self) -> None:
        """Raise `ValueError` naming the first field that does not fit its bits."""
        _check_uint('TxDesc.addr', self.addr, 64)
        _check_uint('TxDesc.len', self.len, 16)
        _check_bool('TxDesc.eop', self.eop)
        _check_bool('TxDesc.csum', self.csum)
        _check_bool('TxDesc.csum_udp', self.csum_udp)
        _check_uint('TxDesc.csum_start', self.csum_start, 8)
        _check_uint('TxDesc.csum_offset', self.csum_offset, 8)
        _check_uint('TxDesc.tag', self.tag, 16)

    def pack(self) -> bytes:
        """The 16 bytes the driver writes into the descriptor ring."""
        self.validate()
        return _TX_DESC_STRUCT.pack(self.addr, self.len, self.flags, self.csum_start,
                                    self.csum_offset, 0, self.tag)

    @classmethod
    def unpack(cls, data: bytes, strict: bool = False) -> TxDesc:
        """Decode 16 bytes. Reserved bits (byte 10 [7:3], byte 13) are ignored, as the NIC
        ignores them, unless `strict` (the driver must write them as zero)."""
        _check_len('TxDesc', data, TX_DESC_BYTES)
        addr, length, flags, csum_start, csum_offset, reserved, tag = \
            _TX_DESC_STRUCT.unpack(bytes(data))
        if strict:
            if flags & TX_FLAGS_RESERVED_MASK:
                raise ValueError(f'TxDesc byte 10 reserved bits [7:3] set: 0x{flags:02x}')
            if reserved:
                raise ValueError(f'TxDesc reserved byte 13 not zero: 0x{reserved:02x}')
        return cls(addr=addr, len=length, eop=bool(flags & TX_FLAG_EOP),
                   csum=bool(flags & TX_FLAG_CSUM), csum_udp=bool(flags & TX_FLAG_CSUM_UDP),
                   csum_start=csum_start, csum_offset=csum_offset, tag=tag)


@dataclass
class TxCompletion:
    """TX completion (docs/tx.md, "TX completion (16 bytes)").

    One per frame, in descriptor order. `desc_idx` is the free-running index of the frame's
    first descriptor and `ndesc` the descriptors it consumed; `len` the sum of the segment
    lengths (0 for DESC_RD_ERR), `tag` the first descriptor's (0 for DESC_RD_ERR), `csum` the
    checksum written (0 when CSUM was clear or the frame failed).
    """

    desc_idx: int = 0
    ndesc: int = 0
    len: int = 0
    tag: int = 0
    csum: int = 0
    status: TxStatus = TxStatus.OK
    queue: int = 0
    gen: int = 0

    def validate(self) -> None:
        """Raise `ValueError` naming the first field that does not fit its bits."""
        _check_uint('TxCompletion.desc_idx', self.desc_idx, 16)
        _check_uint('TxCompletion.ndesc', self.ndesc, 16)
        _check_uint('TxCompletion.len', self.len, 16)
        _check_uint('TxCompletion.tag', self.tag, 16)
        _check_uint('TxCompletion.csum', self.csum, 16)
        try:
            TxStatus(self.status)
        except ValueError:
            raise ValueError(f'TxCompletion.status={self.status!r} is not a TxStatus '
                             f'(0..{max(TxStatus)})') from None
        _check_uint('TxCompletion.queue', self.queue, 7)
        _check_uint('TxCompletion.gen', self.gen, 1)

    def pack(self) -> bytes:
        """The 16 bytes the NIC writes into the completion ring."""
        self.validate()
        return _TX_CPL_STRUCT.pack(self.desc_idx, self.ndesc, self.len, self.tag, self.csum,
                                   bytes(4), int(self.status),
                                   (self.queue & TX_QUEUE_MASK) | (TX_GEN_BIT if self.gen else 0))

    @classmethod
    def unpack(cls, data: bytes, strict: bool = False) -> TxCompletion:
        """Decode 16 bytes of a TX completion ring entry.

        Reserved bytes 10-13 are dropped; with `strict=True` a non-zero one raises
        `ValueError` (the NIC writes them as zero). A `status` that is not a `TxStatus` is
        undefined and always raises.
        """
        _check_len('TxCompletion', data, TX_CPL_BYTES)
        desc_idx, ndesc, length, tag, csum, reserved, status, qgen = \
            _TX_CPL_STRUCT.unpack(bytes(data))
        if status > max(TxStatus):
            raise ValueError(f'TxCompletion status={status} is undefined (byte 14)')
        if strict and any(reserved):
            raise ValueError(f'TxCompletion reserved bytes 10-13 not zero: {reserved.hex()}')
        return cls(desc_idx=desc_idx, ndesc=ndesc, len=length, tag=tag, csum=csum,
                   status=TxStatus(status), queue=qgen & TX_QUEUE_MASK,
                   gen=1 if qgen & TX_GEN_BIT else 0)
