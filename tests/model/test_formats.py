"""models.formats against docs/dma-formats.md, byte for byte.

Expected bytes are built by hand from the tables in dma-formats.md, never by the code under
test.
"""
from __future__ import annotations

import pytest

from models import formats
from models.formats import (CPL_BYTES, DESC_BYTES, L3Type, L4Type, RxCompletion, RxDesc)


def test_sizes() -> None:
    assert DESC_BYTES == 16
    assert CPL_BYTES == 16


def test_enum_values() -> None:
    # dma-formats.md: l3_type 0 none, 1 IPv4, 2 IPv6; l4_type 0 none, 1 TCP, 2 UDP, 3 other
    assert [int(v) for v in (L3Type.NONE, L3Type.IPV4, L3Type.IPV6)] == [0, 1, 2]
    assert [int(v) for v in (L4Type.NONE, L4Type.TCP, L4Type.UDP, L4Type.OTHER)] == [0, 1, 2, 3]


def test_flag_bit_positions() -> None:
    # byte 14: [0] SOP, [1] EOP, [2] SPLIT, [3] HDR_VALID, [4] PAY_VALID, [5] HDR_OVERFLOW
    assert formats.FLAG_SOP == 1 << 0
    assert formats.FLAG_EOP == 1 << 1
    assert formats.FLAG_SPLIT == 1 << 2
    assert formats.FLAG_HDR_VALID == 1 << 3
    assert formats.FLAG_PAY_VALID == 1 << 4
    assert formats.FLAG_HDR_OVERFLOW == 1 << 5
    assert formats.IP_FRAG_BIT == 1 << 4
    assert formats.GEN_BIT == 1 << 7
    assert formats.QUEUE_MASK == 0x7F


def test_desc_layout() -> None:
    d = RxDesc(addr=0x0123_4567_89AB_CDE8, buf_id=0xBEEF)
    expected = bytes([0xE8, 0xCD, 0xAB, 0x89, 0x67, 0x45, 0x23, 0x01, 0xEF, 0xBE]) + bytes(6)
    assert d.pack() == expected
    assert RxDesc.unpack(expected) == d


def test_desc_reserved_ignored_unless_strict() -> None:
    raw = bytes(8) + b'\x05\x00' + b'\xff' * 6
    assert RxDesc.unpack(raw) == RxDesc(0, 5)
    with pytest.raises(ValueError, match='reserved'):
        RxDesc.unpack(raw, strict=True)


@pytest.mark.parametrize('kwargs, field', [
    (dict(addr=-1, buf_id=0), 'addr'),
    (dict(addr=1 << 64, buf_id=0), 'addr'),
    (dict(addr=0, buf_id=0x10000), 'buf_id'),
    (dict(addr=0, buf_id=-1), 'buf_id'),
])
def test_desc_range_errors(kwargs: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        RxDesc(**kwargs).pack()


def test_desc_wrong_length() -> None:
    with pytest.raises(ValueError, match='16 bytes'):
        RxDesc.unpack(bytes(15))


def test_cpl_layout_all_fields() -> None:
    c = RxCompletion(pay_buf_id=0x1234, pay_len=0x0FFF, hdr_buf_id=0xA55A, hdr_len=66,
                     rss_hash=0xDEADBEEF, rss_type=0x7E, l3_type=L3Type.IPV6,
                     l4_type=L4Type.UDP, ip_frag=True, vlan_tags=2, sop=True, eop=False,
                     split=True, hdr_valid=True, pay_valid=True, hdr_overflow=False,
                     queue=0x55, gen=1)
    byte13 = 2 | (2 << 2) | (1 << 4) | (2 << 5)          # l3, l4, frag, vlan_tags
    byte14 = 0b000_1_1_1_0_1                             # SOP, SPLIT, HDR_VALID, PAY_VALID
    byte15 = 0x55 | 0x80
    expected = (bytes([0x34, 0x12, 0xFF, 0x0F, 0x5A, 0xA5, 66, 0,
                       0xEF, 0xBE, 0xAD, 0xDE, 0x7E, byte13, byte14, byte15]))
    assert c.pack() == expected
    assert RxCompletion.unpack(expected) == c


@pytest.mark.parametrize('flag, bit', [
    ('sop', 0), ('eop', 1), ('split', 2), ('hdr_valid', 3), ('pay_valid', 4),
    ('hdr_overflow', 5)])
def test_cpl_each_flag(flag: str, bit: int) -> None:
    raw = RxCompletion(**{flag: True}).pack()
    assert raw[14] == 1 << bit
    assert raw[:14] == bytes(14) and raw[15] == 0
    assert getattr(RxCompletion.unpack(raw), flag) is True


def test_cpl_gen_and_queue() -> None:
    raw = RxCompletion(queue=127, gen=0).pack()
    assert raw[15] == 0x7F
    raw = RxCompletion(queue=0, gen=1).pack()
    assert raw[15] == 0x80
    assert RxCompletion.unpack(raw).gen == 1


def test_cpl_defaults_are_zero() -> None:
    assert RxCompletion().pack() == bytes(16)


@pytest.mark.parametrize('kwargs, field', [
    (dict(pay_buf_id=0x10000), 'pay_buf_id'),
    (dict(pay_len=0x10000), 'pay_len'),
    (dict(hdr_buf_id=-1), 'hdr_buf_id'),
    (dict(hdr_len=1 << 16), 'hdr_len'),
    (dict(rss_hash=1 << 32), 'rss_hash'),
    (dict(rss_type=256), 'rss_type'),
    (dict(l3_type=3), 'l3_type'),
    (dict(l4_type=4), 'l4_type'),
    (dict(vlan_tags=3), 'vlan_tags'),
    (dict(queue=128), 'queue'),
    (dict(gen=2), 'gen'),
])
def test_cpl_range_errors(kwargs: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        RxCompletion(**kwargs).pack()


def test_cpl_strict_reserved() -> None:
    base = bytearray(16)
    base[13] = 0x80
    assert RxCompletion.unpack(bytes(base)) == RxCompletion()
    with pytest.raises(ValueError, match='reserved'):
        RxCompletion.unpack(bytes(base), strict=True)
    base[13] = 0
    base[14] = 0xC0
    with pytest.raises(ValueError, match='reserved'):
        RxCompletion.unpack(bytes(base), strict=True)
    base[14] = 0
    base[13] = 3 << 5   # vlan_tags = 3
    with pytest.raises(ValueError, match='vlan_tags'):
        RxCompletion.unpack(bytes(base), strict=True)


def test_cpl_undefined_l3_type() -> None:
    raw = bytearray(16)
    raw[13] = 3
    with pytest.raises(ValueError, match='l3_type'):
        RxCompletion.unpack(bytes(raw))


def test_cpl_roundtrip_many() -> None:
    for i in range(64):
        c = RxCompletion(pay_buf_id=i * 997 & 0xFFFF, pay_len=i * 61, hdr_buf_id=i,
                         hdr_len=i + 14, rss_hash=(i * 0x9E3779B9) & 0xFFFFFFFF,
                         rss_type=i & 0xF, l3_type=L3Type(i % 3), l4_type=L4Type(i % 4),
                         ip_frag=bool(i & 1), vlan_tags=i % 3, sop=bool(i & 2),
                         eop=bool(i & 4), split=bool(i & 8), hdr_valid=bool(i & 8),
                         pay_valid=bool(i & 16), hdr_overflow=bool(i & 32), queue=i,
                         gen=i & 1)
        assert RxCompletion.unpack(c.pack(), strict=True) == c
