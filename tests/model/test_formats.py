"""models.formats against docs/dma-formats.md and docs/tx.md, byte for byte.

Expected bytes are built by hand from the tables in dma-formats.md, never by the code under
test.
"""
from __future__ import annotations

import pytest

from models import formats
from models.formats import (CPL_BYTES, DESC_BYTES, TX_CPL_BYTES, TX_DESC_BYTES, L3Type, L4Type,
                            RxCompletion, RxDesc, TxCompletion, TxDesc, TxStatus)


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


def test_cpl_hdr_len_and_pay_off_bytes() -> None:
    """hdr_len is byte 6 alone, pay_off (multi-packet buffers, in strides) byte 7."""
    raw = RxCompletion(hdr_len=255, pay_off=0xA7).pack()
    assert raw == bytes(6) + bytes([0xFF, 0xA7]) + bytes(8)
    got = RxCompletion.unpack(bytes(6) + bytes([54, 3]) + bytes(8))
    assert (got.hdr_len, got.pay_off) == (54, 3)


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
    (dict(hdr_len=256), 'hdr_len'),
    (dict(pay_off=256), 'pay_off'),
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


# --- TX (docs/tx.md, "TX descriptor" and "TX completion"), bytes built from the tables -------


def test_tx_sizes_and_constants() -> None:
    assert TX_DESC_BYTES == 16 and TX_CPL_BYTES == 16
    # byte 10: [0] EOP, [1] CSUM, [2] CSUM_UDP, [3] INLINE, [6:4] reserved, [7] TSO
    assert formats.TX_FLAG_EOP == 1 << 0
    assert formats.TX_FLAG_CSUM == 1 << 1
    assert formats.TX_FLAG_CSUM_UDP == 1 << 2
    assert formats.TX_FLAG_INLINE == 1 << 3
    assert formats.TX_FLAG_TSO == 1 << 7
    assert formats.TX_FLAGS_RESERVED_MASK == 0x70
    # docs/tx.md, "TCP segmentation offload"
    assert formats.TX_TSO_MAX_SEGS == 18 and formats.TX_TSO_MAX_HDR == 128
    assert formats.TX_TSO_MAX_PAYLOAD == 65535 and formats.TX_TSO_MIN_MSS == 88
    assert formats.TX_INLINE_MAX == 128 and formats.TX_COAL_MAX == 8
    assert formats.TX_GEN_BIT == 0x80 and formats.TX_QUEUE_MASK == 0x7F
    assert formats.TX_SEG_MAX_LEN == 4096 and formats.TX_MIN_FRAME_LEN == 60
    assert formats.TX_FRAME_LIMIT_RESET == 1522 and formats.TX_MAX_SEGS == 16
    assert formats.TX_FIFO_KIB == 16


def test_tx_status_values() -> None:
    # 0 OK, 1 BAD_SEG, 2 BAD_LEN, 3 BAD_CSUM, 4 DMA_RD_ERR, 5 DESC_RD_ERR, 6 TSO_BAD_HDR,
    # 7 TSO_BAD_LEN, 8 TSO_BAD_MSS
    assert [(s.name, int(s)) for s in TxStatus] == [
        ('OK', 0), ('BAD_SEG', 1), ('BAD_LEN', 2), ('BAD_CSUM', 3), ('DMA_RD_ERR', 4),
        ('DESC_RD_ERR', 5), ('TSO_BAD_HDR', 6), ('TSO_BAD_LEN', 7), ('TSO_BAD_MSS', 8)]


def test_tx_tso_ctx_layout() -> None:
    # docs/tx.md, "TSO context entry": mss 0-1, hdr_len 2, l3_offset 3, [4][0] IPV6
    c = formats.TxTsoCtx(mss=0x22F4, hdr_len=74, l3_offset=18, ipv6=True)
    assert c.pack() == bytes([0xF4, 0x22, 74, 18, 1]) + bytes(11)
    assert formats.TxTsoCtx.unpack(c.pack(), strict=True) == c
    d = TxDesc(addr=0, len=0, tso=True, inline=True, eop=True)
    assert d.pack()[10] == 0b1000_1001


def test_tx_desc_layout() -> None:
    d = TxDesc(addr=0x0123_4567_89AB_CDEF, len=0x0FED, eop=True, csum=True, csum_udp=True,
               csum_start=34, csum_offset=6, tag=0xBEEF)
    expected = bytes([0xEF, 0xCD, 0xAB, 0x89, 0x67, 0x45, 0x23, 0x01,   # addr
                      0xED, 0x0F,                                       # len
                      0b111, 34, 6, 0,                                  # flags, start, off, inline_len
                      0xEF, 0xBE])                                      # tag
    assert d.pack() == expected
    assert TxDesc.unpack(expected, strict=True) == d
    # INLINE (byte 10 bit 3) and its length (byte 13)
    d = TxDesc(addr=0x1000, len=10, eop=True, inline=True, inline_len=54, tag=7)
    expected = bytes([0x00, 0x10, 0, 0, 0, 0, 0, 0, 10, 0, 0b1001, 0, 0, 54, 7, 0])
    assert d.pack() == expected
    assert TxDesc.unpack(expected, strict=True) == d


@pytest.mark.parametrize('flag, bit', [('eop', 0), ('csum', 1), ('csum_udp', 2), ('inline', 3)])
def test_tx_desc_each_flag(flag: str, bit: int) -> None:
    raw = TxDesc(addr=0, len=0, **{flag: True}).pack()
    assert raw[10] == 1 << bit
    assert raw[:10] == bytes(10) and raw[11:] == bytes(5)
    assert getattr(TxDesc.unpack(raw), flag) is True


def test_tx_desc_defaults_and_bad_values_pack() -> None:
    assert TxDesc(addr=0, len=0).pack() == bytes(16)
    # bad segments are statuses, not exceptions: they must be representable
    assert TxDesc.unpack(TxDesc(addr=0xFFF, len=0xFFFF).pack()).len == 0xFFFF


def test_tx_desc_reserved_ignored_unless_strict() -> None:
    raw = bytearray(TxDesc(addr=0x1000, len=64, eop=True).pack())
    raw[10] |= 0x70
    assert TxDesc.unpack(bytes(raw)) == TxDesc(addr=0x1000, len=64, eop=True)
    with pytest.raises(ValueError, match='reserved'):
        TxDesc.unpack(bytes(raw), strict=True)
    with pytest.raises(ValueError, match='reserved'):
        TxDesc.unpack(bytes(raw), strict=True)


@pytest.mark.parametrize('kwargs, field', [
    (dict(addr=-1), 'addr'),
    (dict(addr=1 << 64), 'addr'),
    (dict(len=0x10000), 'len'),
    (dict(len=-1), 'len'),
    (dict(csum_start=256), 'csum_start'),
    (dict(csum_offset=256), 'csum_offset'),
    (dict(tag=0x10000), 'tag'),
    (dict(eop=2), 'eop'),
    (dict(csum='yes'), 'csum'),
])
def test_tx_desc_range_errors(kwargs: dict, field: str) -> None:
    args = dict(addr=0, len=64) | kwargs
    with pytest.raises(ValueError, match=field):
        TxDesc(**args).pack()


def test_tx_desc_wrong_length() -> None:
    with pytest.raises(ValueError, match='16 bytes'):
        TxDesc.unpack(bytes(17))


def test_tx_cpl_layout_all_fields() -> None:
    c = TxCompletion(desc_idx=0xFFFE, ndesc=3, len=1514, tag=0xA55A, csum=0x1234,
                     tso_segs=0x0102, status=TxStatus.DMA_RD_ERR, queue=0x55, gen=1)
    expected = bytes([0xFE, 0xFF, 3, 0, 0xEA, 0x05, 0x5A, 0xA5, 0x34, 0x12,
                      0x02, 0x01, 0, 0, 4, 0x55 | 0x80])
    assert c.pack() == expected
    assert TxCompletion.unpack(expected, strict=True) == c
    assert isinstance(TxCompletion.unpack(expected).status, TxStatus)


def test_tx_cpl_defaults_are_zero() -> None:
    assert TxCompletion().pack() == bytes(16)


def test_tx_cpl_gen_and_queue() -> None:
    assert TxCompletion(queue=127).pack()[15] == 0x7F
    raw = TxCompletion(queue=0, gen=1).pack()
    assert raw[15] == 0x80 and TxCompletion.unpack(raw).gen == 1


@pytest.mark.parametrize('kwargs, field', [
    (dict(desc_idx=0x10000), 'desc_idx'),
    (dict(ndesc=-1), 'ndesc'),
    (dict(len=0x10000), 'len'),
    (dict(tag=0x10000), 'tag'),
    (dict(csum=0x10000), 'csum'),
    (dict(status=9), 'status'),
    (dict(tso_segs=0x10000), 'tso_segs'),
    (dict(queue=128), 'queue'),
    (dict(gen=2), 'gen'),
])
def test_tx_cpl_range_errors(kwargs: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        TxCompletion(**kwargs).pack()


def test_tx_cpl_strict_reserved_and_undefined_status() -> None:
    raw = bytearray(16)
    raw[12] = 0x01
    assert TxCompletion.unpack(bytes(raw)) == TxCompletion()
    with pytest.raises(ValueError, match='reserved'):
        TxCompletion.unpack(bytes(raw), strict=True)
    raw[12] = 0
    raw[14] = 9
    with pytest.raises(ValueError, match='status'):
        TxCompletion.unpack(bytes(raw))


def test_tx_roundtrip_many() -> None:
    for i in range(64):
        d = TxDesc(addr=(i * 0x9E3779B97F4A7C15) & (2**64 - 1), len=i * 64, eop=bool(i & 1),
                   csum=bool(i & 2), csum_udp=bool(i & 4), csum_start=i * 3 & 0xFF,
                   csum_offset=i & 0xFF, tag=i * 1021 & 0xFFFF)
        assert TxDesc.unpack(d.pack(), strict=True) == d
        c = TxCompletion(desc_idx=i * 4099 & 0xFFFF, ndesc=i % 17, len=i * 23, tag=i,
                         csum=i * 0x0101 & 0xFFFF, status=TxStatus(i % 6), queue=i & 0x7F,
                         gen=i & 1)
        assert TxCompletion.unpack(c.pack(), strict=True) == c
