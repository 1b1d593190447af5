"""The TSO golden model (models/tso.py, the `TSO` path of models/tx.py) against docs/tx.md,
"TCP segmentation offload".

Expected segments are built from scratch by scapy for every k: a fresh Ether / [Dot1Q] /
IP or IPv6 / TCP / payload with the ID, sequence number and flags the page's table gives,
lengths and checksums left to scapy. So the IPv4 header checksum, the lengths and the TCP
checksum are an independent computation, not the model's arithmetic. Sends are posted to the
model as a driver posts them: descriptors, TSO context entry and inline header entries in the
ring, the payload in device memory at odd addresses across 4 KiB pages.
"""
from __future__ import annotations

from ipaddress import ip_address

import pytest
from scapy.all import IP, TCP, Dot1Q, Ether, IPv6, Raw

from models.formats import (TX_TSO_MAX_PAYLOAD, TX_TSO_MAX_SEGS, TxCompletion, TxDesc,
                            TxStatus, TxTsoCtx)
from models.tso import (segment_header, tso_read_plan, tso_seed, tso_segments,
                         tso_sent_bounds)
from models.tx import check_frame, frame_extent, l4_checksum
from tests.model.test_tx_model import DEV_BASE, IP4, IP6, MAC, UNMAPPED, Rig, pattern

OPTS = [('NOP', None), ('NOP', None), ('Timestamp', (0x01020304, 0x0A0B0C0D))]
SEQ0 = 0xFFFF_F000            # wraps within a 64 KiB send
ID0 = 0xFFFE                  # wraps after two segments


def l3(ipv: int, **kw: object):
    return (IP(**IP4, flags='DF', ttl=64, **kw) if ipv == 4   # type: ignore[arg-type]
            else IPv6(**IP6, hlim=64))


def eth(vlan: int):
    return Ether(**MAC) / Dot1Q(vlan=vlan) if vlan else Ether(**MAC)


def header(ipv: int, vlan: int, flags: str, opts: list = OPTS) -> bytes:
    """The send's header as a Linux TSO driver posts it: IDs, sequence and flags of the first
    segment, the TCP checksum field holding the seed (pseudo-header without the length)."""
    ip = l3(ipv, id=ID0) if ipv == 4 else l3(ipv)
    pkt = eth(vlan) / ip / TCP(sport=40000, dport=5201, seq=SEQ0, ack=777, flags=flags,
                               window=501, options=opts)
    raw = bytearray(bytes(pkt))
    l4 = l4_offset(ipv, vlan)
    src, dst = (IP4, IP6)[ipv == 6]['src'], (IP4, IP6)[ipv == 6]['dst']
    seed = tso_seed(ip_address(src).packed, ip_address(dst).packed)
    raw[l4 + 16:l4 + 18] = seed.to_bytes(2, 'big')
    return bytes(raw)


def l3_offset(vlan: int) -> int:
    return 18 if vlan else 14


def l4_offset(ipv: int, vlan: int) -> int:
    return l3_offset(vlan) + (20 if ipv == 4 else 40)


def expected_segments(ipv: int, vlan: int, flags: str, payload: bytes, mss: int,
                      opts: list = OPTS) -> list[bytes]:
    """docs/tx.md's table, built by scapy from scratch for each segment."""
    n = -(-len(payload) // mss)
    out = []
    for k in range(n):
        f = set(flags)
        if k != n - 1:
            f -= {'F', 'P'}
        if k != 0:
            f -= {'C'}
        fl = ''.join(c for c in flags if c in f)
        ip = l3(ipv, id=(ID0 + k) & 0xFFFF) if ipv == 4 else l3(ipv)
        pkt = eth(vlan) / ip / TCP(sport=40000, dport=5201, seq=(SEQ0 + k * mss) & 0xFFFFFFFF,
                                   ack=777, flags=fl, window=501, options=opts) \
            / Raw(payload[k * mss:(k + 1) * mss])
        frame = bytes(pkt)
        out.append(frame + bytes(max(0, 60 - len(frame))))
    return out


class TsoRig(Rig):
    """test_tx_model's rig with a TSO-capable model and a writer for TSO sends."""

    def __init__(self, **kw: object) -> None:
        super().__init__(inline_en=True, **kw)  # type: ignore[arg-type]
        self.nic.tx.tso = True
        self.outcomes: list = []
        self.nic.on_tx = self.outcomes.append

    def write_raw(self, t: int, raw: bytes) -> None:
        size = 1 << self.desc_log2
        self.host.write(self.ring_base(t, 'desc') + 16 * (self.sw[t] % size), raw)
        self.sw[t] = (self.sw[t] + 1) & 0xFFFF

    def payload_descs(self, payload: bytes, skew: int = 0x7FD) -> list[TxDesc]:
        """The payload in device memory from an odd address, cut at 4 KiB pages (the
        fragments of a dma-buf)."""
        addr = -(-self.dev_next // 4096) * 4096 + skew
        self.dev.gpu.write(addr, payload)
        self.dev_next = addr + len(payload) + 64
        out = []
        pos = 0
        while pos < len(payload):
            a = addr + pos
            n = min(len(payload) - pos, 4096 - a % 4096)
            out.append(TxDesc(addr=a, len=n))
            pos += n
        return out

    def post_send(self, t: int, hdr: bytes, payload: bytes, ctx: TxTsoCtx, csum_start: int,
                  inline: bool = True, tag: int = 7, **first: object) -> int:
        """Post one TSO send; returns its ring entries. The header is inline in the ring, or
        a host-memory segment of its own."""
        descs = self.payload_descs(payload) if payload else []
        kw = dict(tso=True, csum=True, csum_start=csum_start, csum_offset=16, tag=tag) | first
        if inline:
            d0 = TxDesc(addr=0, len=0, inline=True, inline_len=len(hdr), **kw)  # type: ignore
        else:
            d0 = TxDesc(addr=self.host_buf(hdr), len=len(hdr), **kw)          # type: ignore
        all_descs = [d0, *descs]
        all_descs[-1].eop = True
        start = self.sw[t]
        self.write_raw(t, all_descs[0].pack())
        self.write_raw(t, ctx.pack())
        if inline:
            for i in range(0, len(hdr), 16):
                self.write_raw(t, hdr[i:i + 16].ljust(16, b'\0'))
        for d in all_descs[1:]:
            self.write_raw(t, d.pack())
        self.doorbell(t)
        return (self.sw[t] - start) & 0xFFFF


CASES = [  # (payload bytes, mss): 1 to 46 segments, MSS 536 to 8948
    (1, 536), (536, 536), (537, 536), (3000, 1448), (10000, 8948), (20000, 8948),
    (65160, 1448), (TX_TSO_MAX_PAYLOAD, 1448), (9000, 4096),
]


@pytest.mark.parametrize('ipv', [4, 6])
@pytest.mark.parametrize('vlan', [0, 5])
@pytest.mark.parametrize('size, mss', CASES)
def test_segments_match_scapy(ipv: int, vlan: int, size: int, mss: int) -> None:
    rig = TsoRig()
    rig.nic.tx.max_frame_len = 16384            # jumbo segments (MSS 8948 at MTU 9000)
    payload = pattern(size, size % 7)
    hdr = header(ipv, vlan, 'FPAC')
    ctx = TxTsoCtx(mss=mss, hdr_len=len(hdr), l3_offset=l3_offset(vlan), ipv6=ipv == 6)
    ndesc = rig.post_send(0, hdr, payload, ctx, l4_offset(ipv, vlan), inline=size % 2 == 0)
    want = expected_segments(ipv, vlan, 'FPAC', payload, mss)
    assert len(rig.outcomes) == 1
    got = rig.outcomes[0].segments
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g == w, f'segment {k} of {len(want)} differs'
    (cpl,) = rig.completions(0)
    assert cpl == TxCompletion(desc_idx=0, ndesc=ndesc, len=size, tag=7, csum=0,
                               tso_segs=len(want), status=TxStatus.OK, queue=0, gen=1)
    c = rig.nic.tx.counters
    assert (c['TX_FRAMES'], c['TX_BYTES'], c['TX_TSO_SENDS'], c['TX_TSO_SEGS']) == \
        (len(want), sum(map(len, want)), 1, len(want))


def test_short_last_segment_is_padded_and_flags_of_one_segment() -> None:
    rig = TsoRig()
    hdr = header(4, 0, 'FPAC', opts=[])                  # 54 bytes
    payload = pattern(600 + 3)
    ctx = TxTsoCtx(mss=600, hdr_len=54, l3_offset=14)
    rig.post_send(0, hdr, payload, ctx, 34)
    segs = rig.outcomes[0].segments
    assert [len(s) for s in segs] == [654, 60]           # 54 + 3 padded to 60
    assert segs == expected_segments(4, 0, 'FPAC', payload, 600, opts=[])
    # one segment keeps every flag
    rig2 = TsoRig()
    rig2.post_send(0, hdr, payload[:100], ctx, 34)
    (seg,) = rig2.outcomes[0].segments
    assert seg == expected_segments(4, 0, 'FPAC', payload[:100], 600, opts=[])[0]
    assert Ether(seg)[TCP].flags == 'FPAC'


def test_header_as_a_host_segment_and_payload_in_the_header_segment() -> None:
    """The header may end inside a segment: a host segment holding the header and the
    payload's first bytes."""
    rig = TsoRig()
    hdr = header(6, 0, 'A')
    payload = pattern(5000, 3)
    ctx = TxTsoCtx(mss=1428, hdr_len=len(hdr), l3_offset=14, ipv6=True)  # 86 + 1428 <= 1522
    rig.post_send(0, hdr + payload[:100], payload[100:], ctx, 54, inline=False)
    assert rig.outcomes[0].segments == expected_segments(6, 0, "A", payload, 1428)


def _bad(case: str) -> tuple[TsoRig, TxStatus]:
    rig = TsoRig()
    hdr = header(4, 0, 'PA')
    payload = pattern(4000)
    mss, hl, l3o, l4, first = 1448, len(hdr), 14, 34, {}
    status = {'hdr_long': TxStatus.TSO_BAD_HDR, 'no_csum': TxStatus.TSO_BAD_HDR,
              'udp': TxStatus.TSO_BAD_HDR, 'csum_off': TxStatus.TSO_BAD_HDR,
              'ip_short': TxStatus.TSO_BAD_HDR, 'l3_low': TxStatus.TSO_BAD_HDR,
              'tcp_short': TxStatus.TSO_BAD_HDR, 'ip_odd4': TxStatus.TSO_BAD_HDR,
              'empty': TxStatus.TSO_BAD_LEN, 'big': TxStatus.TSO_BAD_LEN,
              'mss_low': TxStatus.TSO_BAD_MSS, 'mss_frame': TxStatus.TSO_BAD_MSS,
              'bad_seg': TxStatus.BAD_SEG}[case]
    if case == 'hdr_long':
        hl = 129
    elif case == 'no_csum':
        first = dict(csum=False)
    elif case == 'udp':
        first = dict(csum_udp=True)
    elif case == 'csum_off':
        first = dict(csum_offset=6)
    elif case == 'ip_short':
        l4 = 32
    elif case == 'ip_odd4':
        l4 = 36                   # an IPv4 header of 22 bytes: not a multiple of 4
    elif case == 'l3_low':
        l3o = 12
    elif case == 'tcp_short':
        hl = l4 + 18
    elif case == 'empty':
        payload = b''
    elif case == 'big':
        payload = pattern(TX_TSO_MAX_PAYLOAD + 1)
    elif case == 'mss_low':
        mss = 87
    elif case == 'mss_frame':
        mss = 1522 - hl + 1
    ctx = TxTsoCtx(mss=mss, hdr_len=hl, l3_offset=l3o)
    if case == 'bad_seg':
        # a header segment and 17 payload segments of 100 bytes, none with EOP
        rig.write_raw(0, TxDesc(addr=rig.host_buf(hdr), len=len(hdr), tso=True, csum=True,
                                csum_start=34, csum_offset=16).pack())
        rig.write_raw(0, ctx.pack())
        for i in range(TX_TSO_MAX_SEGS - 1):
            rig.write_raw(0, TxDesc(addr=DEV_BASE + 0x10000 + 128 * i, len=100).pack())
        rig.doorbell(0)
        return rig, status
    if case == 'empty':
        rig.write_raw(0, TxDesc(addr=rig.host_buf(hdr), len=len(hdr), eop=True, tso=True,
                                csum=True, csum_start=l4, csum_offset=16).pack())
        rig.write_raw(0, ctx.pack())
        rig.doorbell(0)
        return rig, status
    rig.post_send(0, hdr, payload, ctx, l4, **first)
    return rig, status


BAD = ['hdr_long', 'no_csum', 'udp', 'csum_off', 'ip_short', 'ip_odd4', 'l3_low', 'tcp_short',
       'empty', 'big', 'mss_low', 'mss_frame', 'bad_seg']


@pytest.mark.parametrize('case', BAD)
def test_bad_send_status_counter_nothing_sent(case: str) -> None:
    rig, status = _bad(case)
    (o,) = rig.outcomes
    assert o.segments == [] and o.frame is None
    (cpl,) = rig.completions(0)
    assert cpl.status == status and cpl.tso_segs == 0 and cpl.csum == 0
    counter = {TxStatus.TSO_BAD_HDR: 'TX_ERR_TSO_HDR', TxStatus.TSO_BAD_LEN: 'TX_ERR_TSO_LEN',
               TxStatus.TSO_BAD_MSS: 'TX_ERR_TSO_MSS', TxStatus.BAD_SEG: 'TX_ERR_BAD_SEG'}[status]
    nonzero = {k: v for k, v in rig.nic.tx.counters.items() if v}
    assert nonzero == {counter: 1}
    if case == 'bad_seg':
        assert cpl.ndesc == 1 + TX_TSO_MAX_SEGS   # 18 descriptors and the context entry
    # the queue goes on: a good send after it
    hdr = header(4, 0, 'A')
    payload = pattern(3000, 1)
    rig.outcomes.clear()
    rig.post_send(0, hdr, payload, TxTsoCtx(mss=1000, hdr_len=len(hdr), l3_offset=14), 34)
    assert rig.outcomes[0].segments == expected_segments(4, 0, 'A', payload, 1000)


def test_dma_read_error_sends_the_segments_before_it() -> None:
    rig = TsoRig()
    hdr = header(4, 0, 'PA')
    payload = pattern(20000, 2)
    ctx = TxTsoCtx(mss=1448, hdr_len=len(hdr), l3_offset=14)
    descs = rig.payload_descs(payload, skew=0)            # 5 page segments: 4096 * 4 + 3616
    descs[2] = TxDesc(addr=UNMAPPED, len=descs[2].len)    # bytes [8192, 12288) fail
    descs[-1].eop = True
    rig.write_raw(0, TxDesc(addr=0, len=0, inline=True, inline_len=len(hdr), tso=True,
                            csum=True, csum_start=34, csum_offset=16, tag=9).pack())
    rig.write_raw(0, ctx.pack())
    for i in range(0, len(hdr), 16):
        rig.write_raw(0, hdr[i:i + 16].ljust(16, b'\0'))
    for d in descs:
        rig.write_raw(0, d.pack())
    rig.doorbell(0)
    (o,) = rig.outcomes
    # segment k holds payload [1448 k, 1448 (k+1)): 5 end by 8192 (7240), 8 by 12287 (11584)
    assert len(o.segments) == 5 and o.segments_max == 8
    assert o.segments == expected_segments(4, 0, 'PA', payload, 1448)[:5]
    (cpl,) = rig.completions(0)
    assert (cpl.status, cpl.tso_segs, cpl.len) == (TxStatus.DMA_RD_ERR, 5, 20000)
    c = rig.nic.tx.counters
    assert (c['TX_DMA_RD_ERR'], c['TX_FRAMES'], c['TX_TSO_SEGS'], c['TX_TSO_SENDS']) == \
        (1, 5, 5, 0)


def test_sent_bounds() -> None:
    ctx = TxTsoCtx(mss=100, hdr_len=54, l3_offset=14)
    # header inline (54), segments of 500 and 500: payload 1000, 10 TCP segments
    assert tso_sent_bounds([54, 500, 500], 0, ctx) == (0, 0)      # the header failed
    assert tso_sent_bounds([54, 500, 500], 1, ctx) == (0, 4)      # bytes [54, 554)
    assert tso_sent_bounds([54, 500, 500], 2, ctx) == (5, 9)      # bytes [554, 1054)


def test_context_read_error_is_desc_rd_err_and_extent() -> None:
    d0 = TxDesc(addr=0, len=0, inline=True, inline_len=54, tso=True, csum=True, csum_start=34,
                csum_offset=16)
    ctx = TxTsoCtx(mss=1448, hdr_len=54, l3_offset=14).pack()
    hdr = [bytes(16)] * 4
    last = TxDesc(addr=0x1000, len=100, eop=True)
    assert frame_extent([d0, ctx, *hdr, last], tso=True) == 7
    assert frame_extent([d0, ctx, *hdr], tso=True) is None
    assert check_frame([d0, None, *hdr, last], tso=True) == TxStatus.DESC_RD_ERR
    assert check_frame([d0, ctx, *hdr, last], tso=True) == TxStatus.OK


def test_inline_header_longer_than_hdr_len_is_bad_hdr() -> None:
    rig = TsoRig()
    hdr = header(4, 0, 'A')
    ctx = TxTsoCtx(mss=1000, hdr_len=len(hdr) - 2, l3_offset=14)   # 2 inline bytes past it
    rig.post_send(0, hdr, pattern(3000), ctx, 34)
    assert rig.completions(0)[0].status == TxStatus.TSO_BAD_HDR


@pytest.mark.parametrize('inline_len, hdr_len, mss, lens', [
    (66, 66, 1448, [4096, 4096, 100]),
    (0, 66, 536, [66, 3000, 1, 4096]),
    (0, 86, 1000, [40, 100, 2000]),          # the header spans two segments
    (54, 54, 8948, [4096] * 16 + [15]),
])
def test_read_plan_reads_every_byte_once_cut_at_segments(inline_len: int, hdr_len: int,
                                                          mss: int, lens: list[int]) -> None:
    addrs, a = [], 0x10_0003
    for n in lens:
        addrs.append(a)
        a += n + 4096
    plan = tso_read_plan(list(zip(addrs, lens)), inline_len, hdr_len, mss)
    # every byte once, in order
    flat = [(r.addr + i) for r in plan for i in range(r.len)]
    assert flat == [ad + i for ad, n in zip(addrs, lens) for i in range(n)]
    payload = sum(lens) + inline_len - hdr_len
    n = -(-payload // mss)
    assert sum(r.len for r in plan if r.seg < 0) == hdr_len - inline_len
    for k in range(n):
        mine = [r for r in plan if r.seg == k]
        assert sum(r.len for r in mine) == min(mss, payload - k * mss)
        assert [r.seg_end for r in mine] == [False] * (len(mine) - 1) + [True]
    assert {r.seg for r in plan} <= set(range(-1, n))


@pytest.mark.parametrize('ipv, vlan, size, mss, inline', [(4, 0, 65535, 1448, True),
                                                          (6, 5, 9000, 536, False),
                                                          (4, 5, 100, 8948, False)])
def test_rtl_plan_segments_are_checksum_partial_frames(ipv: int, vlan: int, size: int, mss: int,
                                                       inline: bool) -> None:
    """docs/tx.md "RTL plan": segment k sent as an ordinary CHECKSUM_PARTIAL frame, its header
    the patched one with fold(seed + TCP length) in the checksum field and its payload the
    reads `tso_read_plan` gives for k, completed by the frame checksum rule (`l4_checksum`),
    is exactly the golden segment."""
    hdr = header(ipv, vlan, 'FPAC')
    payload = pattern(size, 9)
    l3o, l4 = l3_offset(vlan), l4_offset(ipv, vlan)
    ctx = TxTsoCtx(mss=mss, hdr_len=len(hdr), l3_offset=l3o, ipv6=ipv == 6)
    first = TxDesc(addr=0, len=0, tso=True, csum=True, csum_start=l4, csum_offset=16)
    send = hdr + payload
    # the send's bytes in memory: the header inline or as a segment, payload in 4 KiB pieces
    mem: dict[int, int] = {}
    segs: list[tuple[int, int]] = []
    pos, addr = (len(hdr) if inline else 0), 0x7FD
    while pos < len(send):
        n = min(len(send) - pos, 4096 - addr % 4096)
        segs.append((addr, n))
        mem.update({addr + i: send[pos + i] for i in range(n)})
        pos, addr = pos + n, addr + n + 4096
    plan = tso_read_plan(segs, len(hdr) if inline else 0, len(hdr), mss)
    want = tso_segments(send, first, ctx)
    for k, w in enumerate(want):
        chunk = bytes(mem[r.addr + i] for r in plan if r.seg == k for i in range(r.len))
        h = segment_header(hdr, first, ctx, k, len(want), len(chunk))
        seed = int.from_bytes(h[l4 + 16:l4 + 18], 'big')
        v = seed + len(hdr) - l4 + len(chunk)                     # the pseudo-header with length
        v = (v & 0xFFFF) + (v >> 16)
        h[l4 + 16:l4 + 18] = ((v & 0xFFFF) + (v >> 16)).to_bytes(2, 'big')
        frame, _ = l4_checksum(bytes(h) + chunk, l4, 16)
        assert frame + bytes(max(0, 60 - len(frame))) == w, f'segment {k}'
