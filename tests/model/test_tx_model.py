"""The TX golden model (models/tx.py, NicModel's TX registers, ModelHw's wire) against
docs/tx.md.

Expectations come from the document: checksums are scapy's own (a fully built packet, or
`Ether(bytes)` with `chksum` deleted and rebuilt), statuses from the "Bad input" table,
GEN from `1 - ((HW_IDX / size) mod 2)`. The model is driven as a driver drives the hardware:
descriptors written to host memory, registers through `mmio_write`, completions read back
from the completion ring in memory.
"""
from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from scapy.all import IP, TCP, UDP, Ether, IPv6, Raw

from driver import regs
from driver.backends.model import ModelHw
from models.bus import DmaAddressSpace
from models.device_memory import DeviceMemory
from models.formats import TxCompletion, TxDesc, TxStatus
from models.host_memory import HostMemory
from models.nic_model import NicModel
from models.tx import (STATUS_COUNTER, TX_COUNTER_NAMES, check_frame, frame_extent,
                       l4_checksum, ones_complement_sum, pseudo_header_sum)

HOST_BASE = 0x1_0000_0000
HOST_SIZE = 1 << 22
DEV_BASE = 0x80_0000_0000
DEV_SIZE = 1 << 22
UNMAPPED = 0x7_0000_0000
MAC = dict(dst='02:00:00:00:00:01', src='02:00:00:00:00:02')
IP4 = dict(src='10.0.0.1', dst='192.168.7.9')
IP6 = dict(src='fd00::1', dst='2001:db8::77:1')
PAYLOAD_SIZES = [0, 1, 2, 7, 64, 333, 1001, 1400]


def pattern(n: int, seed: int = 0) -> bytes:
    return bytes((i * 7 + seed * 13 + 3) & 0xFF for i in range(n))


# --- frames and their CHECKSUM_PARTIAL form ----------------------------------------------------

def packet(ipv: int, l4: str, payload: bytes):
    ip = IP(**IP4) if ipv == 4 else IPv6(**IP6)
    l4l = TCP(sport=40000, dport=5201, seq=12345, flags='PA') if l4 == 'tcp' else \
        UDP(sport=40000, dport=4791)
    return Ether(**MAC) / ip / l4l / Raw(payload)


def l4_off(ipv: int) -> int:
    return 14 + (20 if ipv == 4 else 40)


def partial(full: bytes, ipv: int, l4: str) -> tuple[bytes, int, int]:
    """What a driver posts for CHECKSUM_PARTIAL: the frame with the pseudo-header sum (not
    complemented) in the checksum field. Returns (frame, csum_start, csum_offset)."""
    start = l4_off(ipv)
    off = 16 if l4 == 'tcp' else 6
    src, dst = (IP4['src'], IP4['dst']) if ipv == 4 else (IP6['src'], IP6['dst'])
    seed = pseudo_header_sum(src, dst, 6 if l4 == 'tcp' else 17, len(full) - start)
    raw = bytearray(full)
    raw[start + off:start + off + 2] = seed.to_bytes(2, 'big')
    return bytes(raw), start, off


def scapy_rebuilt(frame: bytes) -> bytes:
    """scapy's checksum over `frame`: parse, delete the L4 chksum, rebuild."""
    p = Ether(frame)
    l4 = p[TCP] if TCP in p else p[UDP]
    del l4.chksum
    return bytes(p.__class__(bytes(p)))


# --- pure functions ----------------------------------------------------------------------------

def test_ones_complement_sum_rfc1071_example() -> None:
    # RFC 1071 section 3: 00 01 f2 03 f4 f5 f6 f7 sums to 2ddf0, folded ddf2.
    assert ones_complement_sum(bytes.fromhex('0001f203f4f5f6f7')) == 0xDDF2
    assert ones_complement_sum(b'\x01') == 0x0100          # odd byte padded with zero
    assert ones_complement_sum(b'\xff\xff\x00\x01') == 0x0001  # end-around carry
    assert ones_complement_sum(b'') == 0


@pytest.mark.parametrize('ipv', [4, 6])
@pytest.mark.parametrize('l4', ['tcp', 'udp'])
@pytest.mark.parametrize('size', PAYLOAD_SIZES)
def test_l4_checksum_matches_scapy(ipv: int, l4: str, size: int) -> None:
    full = bytes(packet(ipv, l4, pattern(size, size)))
    raw, start, off = partial(full, ipv, l4)
    patched, csum = l4_checksum(raw, start, off, udp=l4 == 'udp')
    assert patched == full                       # scapy's fully built packet
    assert patched == scapy_rebuilt(patched)     # and scapy's recomputation
    assert csum == int.from_bytes(full[start + off:start + off + 2], 'big')


def test_pseudo_header_sum_families() -> None:
    with pytest.raises(ValueError, match='famil'):
        pseudo_header_sum('10.0.0.1', 'fd00::1', 6, 20)
    assert pseudo_header_sum(bytes(4), bytes(4), 0, 0) == 0


def zero_sum_udp(ipv: int) -> bytes:
    """A UDP packet whose computed checksum is 0x0000 (ones'-complement sum 0xFFFF): the last
    two payload bytes (at an even offset from the UDP header) are chosen to make it so."""
    p = packet(ipv, 'udp', pattern(40, 3) + b'\x00\x00')
    full = bytearray(bytes(p))
    start = l4_off(ipv)
    seed = ones_complement_sum(bytes(full[start:start + 6]) + bytes(2) + bytes(full[start + 8:]),
                               pseudo_header_sum(*((IP4['src'], IP4['dst']) if ipv == 4 else
                                                   (IP6['src'], IP6['dst'])), 17,
                                                 len(full) - start))
    full[-2:] = (~seed & 0xFFFF).to_bytes(2, 'big')
    full[start + 6:start + 8] = b'\xff\xff'     # what goes on the wire (RFC 768)
    return bytes(full)


@pytest.mark.parametrize('ipv', [4, 6])
def test_udp_zero_checksum_sent_as_ffff(ipv: int) -> None:
    full = zero_sum_udp(ipv)
    raw, start, off = partial(full, ipv, 'udp')
    patched, csum = l4_checksum(raw, start, off, udp=True)
    assert csum == 0xFFFF
    assert patched == scapy_rebuilt(patched)           # scapy also sends 0xFFFF (RFC 768)
    # without the UDP rule (CSUM_UDP clear) the computed 0x0000 is written as is
    patched, csum = l4_checksum(raw, start, off, udp=False)
    assert csum == 0 and patched[start + off:start + off + 2] == b'\x00\x00'


def test_l4_checksum_field_must_fit() -> None:
    with pytest.raises(ValueError, match='does not fit'):
        l4_checksum(bytes(60), 50, 16)


def d(addr: int = 0x1000, n: int = 100, **kw: object) -> TxDesc:
    return TxDesc(addr=addr, len=n, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize('descs, status', [
    ([d(n=60, eop=True)], TxStatus.OK),
    ([d(n=0, eop=True)], TxStatus.BAD_SEG),
    ([d(n=4097, eop=True)], TxStatus.BAD_SEG),
    ([d(addr=0, n=4096, eop=True)], TxStatus.OK),                       # frame limit aside
    ([d(addr=0xFFF, n=2, eop=True)], TxStatus.BAD_SEG),                 # crosses 4 KiB
    ([d(addr=0xF00, n=0x100, eop=True)], TxStatus.OK),                  # ends at the boundary
    ([d(n=59, eop=True)], TxStatus.BAD_LEN),
    ([d(n=1000), d(n=523, eop=True)], TxStatus.BAD_LEN),                # 1523 > 1522
    ([d(n=1000), d(n=522, eop=True)], TxStatus.OK),
    ([d(n=10), d(n=0, eop=True)], TxStatus.BAD_SEG),                    # BAD_SEG before BAD_LEN
    ([d(n=59, eop=True, csum=True, csum_start=1)], TxStatus.BAD_LEN),   # BAD_LEN before BAD_CSUM
    ([d(n=100, eop=True, csum=True, csum_start=35, csum_offset=16)], TxStatus.BAD_CSUM),
    ([d(n=100, eop=True, csum=True, csum_start=34, csum_offset=7)], TxStatus.BAD_CSUM),
    ([d(n=100, eop=True, csum=True, csum_start=84, csum_offset=16)], TxStatus.BAD_CSUM),
    ([d(n=100, eop=True, csum=True, csum_start=82, csum_offset=16)], TxStatus.OK),  # ends at len
    ([d(n=100, eop=True, csum=False, csum_start=35, csum_offset=7)], TxStatus.OK),
    ([d(n=100, eop=True, csum_udp=True, csum_start=99)], TxStatus.OK),  # CSUM_UDP alone
    ([d(n=50), d(n=50, eop=True, csum=True, csum_start=1)], TxStatus.OK),  # first desc only
    ([d(n=50), None], TxStatus.DESC_RD_ERR),
    ([d(n=0), None], TxStatus.DESC_RD_ERR),                              # beats BAD_SEG
    ([d(n=100)] * 16, TxStatus.BAD_SEG),                                # max_segs, no EOP
    ([d(n=100)] * 15 + [d(n=100, eop=True)], TxStatus.BAD_LEN),         # 1600 bytes
    ([d(n=50)] * 15 + [d(n=50, eop=True)], TxStatus.OK),
])
def test_check_frame(descs: list[TxDesc | None], status: TxStatus) -> None:
    frame_limit = 4096 if descs[0] is not None and descs[0].len == 4096 else 1522
    assert check_frame(descs, frame_limit) == status


def test_check_frame_fifo_caps_the_limit() -> None:
    big = [d(addr=i * 4096, n=4096) for i in range(3)]
    assert check_frame(big + [d(addr=0x10000, n=4096, eop=True)], 0xFFFF, 16384) == TxStatus.OK
    assert check_frame(big + [d(addr=0x10000, n=4096), d(addr=0x20000, n=1, eop=True)],
                       0xFFFF, 16384) == TxStatus.BAD_LEN
    assert check_frame([d(n=1000, eop=True)], 0xFFFF, 512) == TxStatus.BAD_LEN


def test_frame_extent() -> None:
    assert frame_extent([]) is None
    assert frame_extent([d(), d()]) is None                        # waits for EOP
    assert frame_extent([d(), d(eop=True), d()]) == 2
    assert frame_extent([d(), None, d(eop=True)]) == 2             # a failed read ends it
    assert frame_extent([d()] * 15) is None
    assert frame_extent([d()] * 16) == 16
    assert frame_extent([d()] * 20) == 16
    assert frame_extent([d()] * 3, max_segs=3) == 3


# --- the model behind its registers -------------------------------------------------------------

class Rig:
    """Host and device memory, the model, and a minimal TX driver."""

    RING_AREA = HOST_BASE
    BUF_AREA = HOST_BASE + (1 << 20)

    def __init__(self, num_txq: int = 4, desc_log2: int = 6, cq_log2: int = 6,
                 queues: Sequence[int] = (0,), inline_en: bool = False) -> None:
        self.inline_en = inline_en
        self.host = HostMemory(HOST_BASE, HOST_SIZE)
        self.dev = DeviceMemory(DEV_BASE, DEV_SIZE)
        self.space = DmaAddressSpace([self.host, self.dev])
        self.nic = NicModel(self.space, num_txq=num_txq)
        self.sent: list[bytes] = []
        self.nic.on_tx = lambda o: self.sent.append(o.frame) if o.frame is not None else None
        self.desc_log2 = desc_log2
        self.cq_log2 = cq_log2
        self.sw = {t: 0 for t in range(num_txq)}
        self.cq_head = {t: 0 for t in range(num_txq)}
        self.buf_next = self.BUF_AREA
        self.dev_next = DEV_BASE
        for t in queues:
            self.setup(t)

    def wr(self, t: int, off: int, value: int) -> None:
        self.nic.mmio_write(regs.txq_reg(t, off), value)

    def rd(self, t: int, off: int) -> int:
        return self.nic.mmio_read(regs.txq_reg(t, off))

    def ring_base(self, t: int, which: str) -> int:
        return self.RING_AREA + t * 0x20000 + (0 if which == 'desc' else 0x10000)

    def setup(self, t: int, enable: bool = True) -> None:
        for ring_off, which, log2 in ((regs.TXQ_DESC_RING, 'desc', self.desc_log2),
                                      (regs.TXQ_CQ, 'cq', self.cq_log2)):
            base = self.ring_base(t, which)
            self.host.write(base, bytes(16 << log2))
            self.wr(t, ring_off + regs.RING_BASE_LO, base & 0xFFFFFFFF)
            self.wr(t, ring_off + regs.RING_BASE_HI, base >> 32)
            self.wr(t, ring_off + regs.RING_SIZE, log2)
        if enable:
            self.wr(t, regs.TXQ_CTRL, regs.TXQ_CTRL_ENABLE.put(1)
                    | regs.TXQ_CTRL_INLINE_EN.put(int(self.inline_en)))

    # buffers
    def host_buf(self, data: bytes, align: int = 1, skew: int = 0) -> int:
        addr = -(-self.buf_next // align) * align + skew
        if addr // 4096 != (addr + max(len(data), 1) - 1) // 4096:
            addr = -(-addr // 4096) * 4096 + skew % 8
        self.host.write(addr, data)
        self.buf_next = addr + len(data) + 5
        return addr

    def dev_buf(self, data: bytes) -> int:
        addr = self.dev_next + 3
        if addr // 4096 != (addr + len(data) - 1) // 4096:
            addr = -(-addr // 4096) * 4096 + 1
        self.dev.gpu.write(addr, data)
        self.dev_next = addr + len(data) + 11
        return addr

    def segments(self, frame: bytes, cuts: Sequence[int], dev_from: int | None = None,
                 **first: object) -> list[TxDesc]:
        """Descriptors of `frame` cut at `cuts`; pieces from index `dev_from` on live in
        device memory. `first` holds the first descriptor's csum fields and tag."""
        bounds = [0, *cuts, len(frame)]
        out = []
        for i, (a, b) in enumerate(zip(bounds, bounds[1:])):
            piece = frame[a:b]
            addr = (self.dev_buf(piece) if dev_from is not None and i >= dev_from
                    else self.host_buf(piece))
            kw = dict(first) if i == 0 else {}
            out.append(TxDesc(addr=addr, len=len(piece), eop=i == len(bounds) - 2,
                              **kw))  # type: ignore[arg-type]
        return out

    def write_descs(self, t: int, descs: Sequence[TxDesc]) -> None:
        size = 1 << self.desc_log2
        for desc in descs:
            self.host.write(self.ring_base(t, 'desc') + 16 * (self.sw[t] % size), desc.pack())
            self.sw[t] = (self.sw[t] + 1) & 0xFFFF

    def doorbell(self, t: int) -> None:
        self.wr(t, regs.TXQ_DESC_RING + regs.RING_SW_IDX, self.sw[t])

    def post(self, t: int, descs: Sequence[TxDesc]) -> None:
        self.write_descs(t, descs)
        self.doorbell(t)

    def completions(self, t: int, release: bool = True) -> list[TxCompletion]:
        """New completions, by generation bit, as the driver finds them."""
        size = 1 << self.cq_log2
        out = []
        while True:
            idx = self.cq_head[t]
            c = TxCompletion.unpack(self.host.read(self.ring_base(t, 'cq') + 16 * (idx % size),
                                                   16), strict=True)
            if c.gen != 1 - ((idx // size) % 2):
                break
            out.append(c)
            self.cq_head[t] = (idx + 1) & 0xFFFF
        if release and out:
            self.wr(t, regs.TXQ_CQ + regs.RING_SW_IDX, self.cq_head[t])
        return out

    def counters(self) -> dict[str, int]:
        return {n: self.nic.mmio_read(getattr(regs, n)) for n in TX_COUNTER_NAMES}

    def assert_counters(self, **expected: int) -> None:
        want = {n: expected.get(n, 0) for n in TX_COUNTER_NAMES}
        assert self.counters() == want


def tcp_frame(size: int = 200, seed: int = 0, ipv: int = 4, l4: str = 'tcp') -> bytes:
    return bytes(packet(ipv, l4, pattern(size, seed)))


def test_registers_at_reset() -> None:
    nic = NicModel(DmaAddressSpace(), num_txq=3)
    caps = nic.mmio_read(regs.TX_CAPS)
    assert regs.TX_CAPS_NUM_TXQ.get(caps) == 3
    assert regs.TX_CAPS_MAX_SEGS.get(caps) == 16
    assert regs.TX_CAPS_FIFO_KIB.get(caps) == 16
    assert nic.mmio_read(regs.TX_FRAME_LIMIT) == 1522
    assert regs.VERSION_MINOR.get(nic.mmio_read(regs.VERSION)) == 3
    for name in TX_COUNTER_NAMES:
        assert nic.mmio_read(getattr(regs, name)) == 0
    for t in range(3):
        for off in (regs.TXQ_CTRL, regs.TXQ_IRQ, regs.TXQ_STATUS,
                    regs.TXQ_DESC_RING + regs.RING_HW_IDX, regs.TXQ_CQ + regs.RING_HW_IDX):
            assert nic.mmio_read(regs.txq_reg(t, off)) == 0
    # TXQ[t] for t >= num_txq reads as zero and ignores writes
    for off in (regs.TXQ_CTRL, regs.TXQ_DESC_RING + regs.RING_SIZE):
        nic.mmio_write(regs.txq_reg(3, off), 1)
        assert nic.mmio_read(regs.txq_reg(3, off)) == 0
    # ring registers read back; BASE_LO's low four bits read as zero
    nic.mmio_write(regs.txq_reg(1, regs.TXQ_CQ + regs.RING_BASE_LO), 0x1234_567F)
    nic.mmio_write(regs.txq_reg(1, regs.TXQ_CQ + regs.RING_BASE_HI), 0x9)
    nic.mmio_write(regs.txq_reg(1, regs.TXQ_DESC_RING + regs.RING_SIZE), 5)
    assert nic.mmio_read(regs.txq_reg(1, regs.TXQ_CQ + regs.RING_BASE_LO)) == 0x1234_5670
    assert nic.mmio_read(regs.txq_reg(1, regs.TXQ_CQ + regs.RING_BASE_HI)) == 0x9
    assert nic.mmio_read(regs.txq_reg(1, regs.TXQ_DESC_RING + regs.RING_SIZE)) == 5
    nic.mmio_write(regs.TX_FRAME_LIMIT, 9000)
    assert nic.mmio_read(regs.TX_FRAME_LIMIT) == 9000
    assert nic.mmio_read(regs.RX_FRAME_LIMIT) == 1522          # RX limit is separate


@pytest.mark.parametrize('ipv', [4, 6])
@pytest.mark.parametrize('l4', ['tcp', 'udp'])
@pytest.mark.parametrize('size', [1, 6, 333, 1001, 1400])
def test_checksum_over_device_memory_payload(ipv: int, l4: str, size: int) -> None:
    """Header in host memory, payload in device memory in odd-sized pieces: the NIC's checksum
    equals scapy's, and the CPU never reads device memory."""
    rig = Rig()
    full = tcp_frame(size, size, ipv, l4)
    raw, start, off = partial(full, ipv, l4)
    if len(raw) < 60:                        # the driver pads; zeros do not change the sum
        raw += bytes(60 - len(raw))
        full += bytes(60 - len(full))
    hdr_len = start + (20 if l4 == 'tcp' else 8)
    cuts = [hdr_len] + [c for c in range(hdr_len + 101, len(raw), 257)]
    descs = rig.segments(raw, cuts, dev_from=1, csum=True, csum_udp=l4 == 'udp',
                         csum_start=start, csum_offset=off, tag=0xC0DE)
    rig.post(0, descs)
    assert rig.sent == [full]
    assert rig.sent[0] == scapy_rebuilt(rig.sent[0])
    assert rig.dev.cpu_reads == 0
    [c] = rig.completions(0)
    assert c == TxCompletion(desc_idx=0, ndesc=len(descs), len=len(full), tag=0xC0DE,
                             csum=int.from_bytes(full[start + off:start + off + 2], 'big'),
                             status=TxStatus.OK, queue=0, gen=1)
    rig.assert_counters(TX_FRAMES=1, TX_BYTES=len(full))
    assert rig.rd(0, regs.TXQ_DESC_RING + regs.RING_HW_IDX) == len(descs)
    assert rig.rd(0, regs.TXQ_CQ + regs.RING_HW_IDX) == 1


def test_padded_frame_checksum_unchanged() -> None:
    """A short UDP frame the driver padded to 60 bytes: zero padding does not change the
    checksum (docs/tx.md, "Bad input")."""
    rig = Rig()
    full = tcp_frame(4, 1, 4, 'udp')
    raw, start, off = partial(full, 4, 'udp')
    padded = raw + bytes(60 - len(raw))
    rig.post(0, rig.segments(padded, [], csum=True, csum_udp=True, csum_start=start,
                             csum_offset=off))
    assert rig.sent == [full + bytes(60 - len(full))]


def test_udp_zero_rule_through_the_engine() -> None:
    rig = Rig()
    full = zero_sum_udp(6)
    raw, start, off = partial(full, 6, 'udp')
    rig.post(0, rig.segments(raw, [60], csum=True, csum_udp=True, csum_start=start,
                             csum_offset=off))
    rig.post(0, rig.segments(raw, [60], csum=True, csum_udp=False, csum_start=start,
                             csum_offset=off))
    c1, c2 = rig.completions(0)
    assert (c1.csum, c2.csum) == (0xFFFF, 0)
    assert rig.sent[0] == full and rig.sent[1][start + off:start + off + 2] == b'\x00\x00'


def test_no_csum_sent_as_is() -> None:
    rig = Rig()
    frame = pattern(100, 9)
    rig.post(0, rig.segments(frame, [14, 50], tag=5))
    assert rig.sent == [frame]
    assert rig.completions(0) == [TxCompletion(desc_idx=0, ndesc=3, len=100, tag=5, csum=0,
                                               status=TxStatus.OK, queue=0, gen=1)]


# --- bad input -----------------------------------------------------------------------------

def _bad(rig: Rig, case: str) -> tuple[list[TxDesc], TxStatus, int, int]:
    """Post-able descriptors for `case`; returns (descs, status, ndesc, completion len)."""
    good = rig.segments(pattern(100, 1), [40], tag=0x77)
    if case == 'seg_len0':
        descs = [good[0], TxDesc(addr=good[1].addr, len=0, eop=True)]
        return descs, TxStatus.BAD_SEG, 2, 40
    if case == 'seg_len4097':
        descs = [TxDesc(addr=0x1_0030_0000, len=4097, eop=True, tag=0x77)]
        return descs, TxStatus.BAD_SEG, 1, 4097
    if case == 'seg_cross_4k':
        descs = [good[0], TxDesc(addr=0x1_0030_0FF0, len=0x20, eop=True)]
        return descs, TxStatus.BAD_SEG, 2, 40 + 0x20
    if case == 'max_segs':
        descs = rig.segments(pattern(16 * 10), [10 * i for i in range(1, 16)], tag=0x77)
        descs[-1].eop = False
        return descs, TxStatus.BAD_SEG, 16, 160
    if case == 'len_59':
        return rig.segments(pattern(59), [30], tag=0x77), TxStatus.BAD_LEN, 2, 59
    if case == 'len_1523':
        return rig.segments(pattern(1523), [1000], tag=0x77), TxStatus.BAD_LEN, 2, 1523
    if case == 'csum_odd_start':
        return (rig.segments(pattern(100), [40], tag=0x77, csum=True, csum_start=35,
                             csum_offset=16), TxStatus.BAD_CSUM, 2, 100)
    if case == 'csum_beyond':
        return (rig.segments(pattern(100), [40], tag=0x77, csum=True, csum_start=84,
                             csum_offset=16), TxStatus.BAD_CSUM, 2, 100)
    if case == 'dma_decerr':
        descs = [good[0], TxDesc(addr=UNMAPPED, len=60, eop=True)]
        return descs, TxStatus.DMA_RD_ERR, 2, 100
    if case == 'dma_slverr_dev':
        descs = rig.segments(pattern(100), [40], dev_from=1, tag=0x77)
        rig.space.add_error_range(descs[1].addr + 59, 1)
        return descs, TxStatus.DMA_RD_ERR, 2, 100
    if case == 'desc_rd_err':
        # three descriptors, the second unreadable: ends a 2-descriptor frame; the third
        # (a whole frame by itself) is sent.
        ring = rig.ring_base(0, 'desc')
        rig.space.add_error_range(ring + 16 * (rig.sw[0] + 1) + 15, 1)
        descs = [TxDesc(addr=good[0].addr, len=40, tag=0x77), good[0],
                 rig.segments(pattern(80, 4), [], tag=0x78)[0]]
        return descs, TxStatus.DESC_RD_ERR, 2, 0
    raise AssertionError(case)


BAD_CASES = ['seg_len0', 'seg_len4097', 'seg_cross_4k', 'max_segs', 'len_59', 'len_1523',
             'csum_odd_start', 'csum_beyond', 'dma_decerr', 'dma_slverr_dev', 'desc_rd_err']


@pytest.mark.parametrize('case', BAD_CASES)
def test_bad_input_status_counter_and_recovery(case: str) -> None:
    rig = Rig()
    # one good frame first, so indices are not zero
    first = pattern(64, 2)
    rig.post(0, rig.segments(first, [], tag=1))
    descs, status, ndesc, length = _bad(rig, case)
    rig.post(0, descs)
    cpls = rig.completions(0)
    assert cpls[0].status == TxStatus.OK
    bad = cpls[1]
    assert bad == TxCompletion(desc_idx=1, ndesc=ndesc, len=length,
                               tag=0 if status == TxStatus.DESC_RD_ERR else 0x77, csum=0,
                               status=status, queue=0, gen=1)
    extra_sent = [pattern(80, 4)] if case == 'desc_rd_err' else []
    assert rig.sent == [first] + extra_sent
    # the next frame works, right after the failed one
    nxt = pattern(70, 5)
    rig.post(0, rig.segments(nxt, [33], tag=2))
    assert rig.sent == [first] + extra_sent + [nxt]
    after = rig.completions(0)
    assert after[-1].status == TxStatus.OK and after[-1].tag == 2
    assert after[-1].desc_idx == 1 + len(descs)
    sent_bytes = sum(map(len, rig.sent))
    rig.assert_counters(TX_FRAMES=len(rig.sent), TX_BYTES=sent_bytes,
                        **{STATUS_COUNTER[status]: 1})
    assert rig.rd(0, regs.TXQ_DESC_RING + regs.RING_HW_IDX) == 1 + len(descs) + 2
    assert rig.dev.cpu_reads == 0


def test_failed_by_descriptor_reads_no_segment() -> None:
    """BAD_SEG/BAD_LEN/BAD_CSUM are decided from the descriptors: segments pointing at an
    error range are not read (docs/tx.md, "Bad input")."""
    rig = Rig()
    addr = 0x1_0030_0000
    rig.space.add_error_range(addr, 8192)
    rig.post(0, [TxDesc(addr=addr, len=30, tag=1), TxDesc(addr=addr + 100, len=20, eop=True)])
    rig.post(0, [TxDesc(addr=addr, len=100, eop=True, csum=True, csum_start=1)])
    rig.post(0, [TxDesc(addr=addr, len=0, eop=True)])
    assert [c.status for c in rig.completions(0)] == [TxStatus.BAD_LEN, TxStatus.BAD_CSUM,
                                                      TxStatus.BAD_SEG]
    assert rig.space.errors == []


def test_desc_rd_err_on_eop_descriptor_and_frame_order() -> None:
    """A failed descriptor read ends the frame even without EOP; the frames around it keep
    their order."""
    rig = Rig()
    a, b = pattern(64, 1), pattern(64, 2)
    ring = rig.ring_base(0, 'desc')
    rig.space.add_error_range(ring + 16 * 1, 16)
    d_a = rig.segments(a, [], tag=1)
    d_b = rig.segments(b, [20], tag=2)
    rig.post(0, d_a + [TxDesc(addr=0, len=0)] + d_b)
    cpls = rig.completions(0)
    assert [(c.desc_idx, c.ndesc, c.status) for c in cpls] == [
        (0, 1, TxStatus.OK), (1, 1, TxStatus.DESC_RD_ERR), (2, 2, TxStatus.OK)]
    assert rig.sent == [a, b]


def test_max_segs_frames() -> None:
    rig = Rig()
    frame = pattern(16 * 8, 3)
    cuts = [8 * i for i in range(1, 16)]
    rig.post(0, rig.segments(frame, cuts, tag=1))           # 16 with EOP on the 16th: sent
    assert rig.sent == [frame]
    # 15 without EOP: the queue waits, consumes nothing
    descs = rig.segments(frame + pattern(8, 9), cuts + [128], tag=2)   # 17 descriptors
    rig.post(0, descs[:15])
    assert rig.completions(0)[-1].tag == 1
    assert rig.rd(0, regs.TXQ_DESC_RING + regs.RING_HW_IDX) == 16
    # the 16th without EOP: those 16 fail as one frame; the 17th (EOP, 8 bytes) is its own
    rig.post(0, descs[15:])
    c_fail, c_last = rig.completions(0)
    assert (c_fail.desc_idx, c_fail.ndesc, c_fail.status, c_fail.len) == (16, 16,
                                                                         TxStatus.BAD_SEG, 128)
    assert (c_last.desc_idx, c_last.ndesc, c_last.status, c_last.len) == (32, 1,
                                                                         TxStatus.BAD_LEN, 8)
    rig.assert_counters(TX_FRAMES=1, TX_BYTES=128, TX_ERR_BAD_SEG=1, TX_ERR_BAD_LEN=1)


def test_reserved_descriptor_bits_ignored() -> None:
    """Reserved flag bits, and `inline_len` without `INLINE`, change nothing."""
    rig = Rig()
    frame = pattern(64, 8)
    raw = bytearray(rig.segments(frame, [], tag=4)[0].pack())
    raw[10] |= 0xF0
    raw[13] = 0xAA
    rig.host.write(rig.ring_base(0, 'desc'), bytes(raw))
    rig.sw[0] = 1
    rig.doorbell(0)
    assert rig.sent == [frame]
    assert rig.completions(0)[0].tag == 4


def test_many_frames_on_a_large_ring() -> None:
    """A full 1024-entry ring posted at once goes out in order (and in reasonable time)."""
    rig = Rig(desc_log2=10, cq_log2=10)
    frames = [pattern(60 + i % 50, i) for i in range(1024)]
    rig.nic.tx_autorun = False
    for i, f in enumerate(frames):
        rig.write_descs(0, rig.segments(f, [], tag=i))
    rig.doorbell(0)
    assert rig.nic.transmit() == frames
    assert [c.tag for c in rig.completions(0)] == list(range(1024))


def test_completion_len_is_low_16_bits() -> None:
    rig = Rig()
    descs = [TxDesc(addr=0x1_0030_0000 + 4096 * i, len=4096, eop=i == 15) for i in range(16)]
    rig.post(0, descs)
    [c] = rig.completions(0)
    assert (c.status, c.ndesc, c.len) == (TxStatus.BAD_LEN, 16, 0)     # 65536 mod 2^16


def test_frame_limit_register_and_fifo_cap() -> None:
    rig = Rig()
    nic = rig.nic
    nic.mmio_write(regs.TX_FRAME_LIMIT, 100)
    rig.post(0, rig.segments(pattern(101), [], tag=1))
    rig.post(0, rig.segments(pattern(100), [], tag=2))
    nic.mmio_write(regs.TX_FRAME_LIMIT, 0xFFFF)            # above the FIFO: acts as 16384
    rig.post(0, rig.segments(pattern(16384), [4096, 8192, 12288], tag=3))
    rig.post(0, rig.segments(pattern(16385), [4096, 8192, 12288, 16384], tag=4))
    assert [(c.tag, c.status) for c in rig.completions(0)] == [
        (1, TxStatus.BAD_LEN), (2, TxStatus.OK), (3, TxStatus.OK), (4, TxStatus.BAD_LEN)]


def test_completion_write_error_sets_status_and_frame_still_sent() -> None:
    rig = Rig()
    rig.space.add_error_range(rig.ring_base(0, 'cq'), 16)
    frame = pattern(64)
    rig.post(0, rig.segments(frame, [], tag=1))
    assert rig.sent == [frame]
    status = rig.rd(0, regs.TXQ_STATUS)
    assert regs.TXQ_STATUS_DMA_WR_ERR.get(status) == 1
    assert rig.rd(0, regs.TXQ_CQ + regs.RING_HW_IDX) == 1
    rig.assert_counters(TX_FRAMES=1, TX_BYTES=64)
    rig.wr(0, regs.TXQ_STATUS, 0)                          # writing 0 keeps it
    assert regs.TXQ_STATUS_DMA_WR_ERR.get(rig.rd(0, regs.TXQ_STATUS)) == 1
    rig.wr(0, regs.TXQ_STATUS, 1)                          # write 1 to clear
    assert rig.rd(0, regs.TXQ_STATUS) == 0


def test_counters_wrap_at_2_32() -> None:
    rig = Rig()
    rig.nic.tx.counters['TX_BYTES'] = 2**32 - 10
    rig.post(0, rig.segments(pattern(64), []))
    assert rig.nic.mmio_read(regs.TX_BYTES) == 54


# --- rings, generation, scheduling ----------------------------------------------------------

def test_generation_bit_over_several_passes() -> None:
    """CQ of 4 entries, descriptor ring of 8, 40 frames of 1-3 descriptors: GEN flips every
    pass, desc_idx/ndesc run free, frames come out in order."""
    rig = Rig(desc_log2=3, cq_log2=2)
    size = 4
    expect_idx = 0
    for i in range(40):
        nseg = 1 + i % 3
        frame = pattern(60 + i, i)
        cuts = [10 * k for k in range(1, nseg)]
        rig.post(0, rig.segments(frame, cuts, tag=i))
        [c] = rig.completions(0)
        assert c == TxCompletion(desc_idx=expect_idx, ndesc=nseg, len=len(frame), tag=i,
                                 status=TxStatus.OK, queue=0, gen=1 - (i // size) % 2)
        assert rig.sent[-1] == frame
        expect_idx += nseg
    assert rig.rd(0, regs.TXQ_CQ + regs.RING_HW_IDX) == 40
    assert rig.rd(0, regs.TXQ_DESC_RING + regs.RING_HW_IDX) == expect_idx


def test_round_robin_one_frame_at_a_time() -> None:
    rig = Rig(queues=(0, 1, 2, 3))
    rig.nic.tx_autorun = False
    plan = {0: 3, 1: 2, 3: 3}                                # queue 2 has nothing
    for t, n in plan.items():
        for k in range(n):
            frame = bytes([t, k]) + pattern(62, t * 10 + k)
            rig.post(t, rig.segments(frame, [20] if k % 2 else [], tag=t * 100 + k))
    assert rig.sent == []                                    # held: nothing sent yet
    first = rig.nic.transmit(max_frames=2)
    rest = rig.nic.transmit()
    order = [(f[0], f[1]) for f in first + rest]
    assert order == [(0, 0), (1, 0), (3, 0), (0, 1), (1, 1), (3, 1), (0, 2), (3, 2)]
    assert [(f[0], f[1]) for f in rig.sent] == order
    for t, n in plan.items():
        cpls = rig.completions(t)
        assert [c.tag for c in cpls] == [t * 100 + k for k in range(n)]
        assert all(c.queue == t for c in cpls)


def test_half_frame_stalls_only_its_queue() -> None:
    rig = Rig(queues=(0, 1))
    half = rig.segments(pattern(100), [50], tag=1)
    rig.post(0, half[:1])                                   # no EOP yet
    other = pattern(90, 7)
    rig.post(1, rig.segments(other, [], tag=2))
    assert rig.sent == [other]
    assert rig.completions(0) == []
    rig.post(0, half[1:])
    assert rig.sent == [other, pattern(100)]


def test_cq_full_makes_the_queue_wait() -> None:
    """A full completion ring: the queue consumes nothing and waits; other queues go on; room
    made by CQ.SW_IDX lets it go on at once; no completion is lost or overwritten."""
    rig = Rig(cq_log2=1, queues=(0, 1))
    frames = [pattern(64 + i, i) for i in range(5)]
    descs = [rig.segments(f, [], tag=i)[0] for i, f in enumerate(frames)]
    rig.post(0, descs)
    assert rig.sent == frames[:2]
    assert rig.rd(0, regs.TXQ_DESC_RING + regs.RING_HW_IDX) == 2
    assert rig.rd(0, regs.TXQ_CQ + regs.RING_HW_IDX) == 2
    # another queue is not held up
    other = pattern(77, 9)
    rig.post(1, rig.segments(other, [], tag=99))
    assert rig.sent == frames[:2] + [other]
    # the driver takes one completion: exactly one more frame goes
    c0 = TxCompletion.unpack(rig.host.read(rig.ring_base(0, 'cq'), 16))
    assert c0.tag == 0
    rig.cq_head[0] = 1
    rig.wr(0, regs.TXQ_CQ + regs.RING_SW_IDX, 1)
    assert rig.sent == frames[:2] + [other] + frames[2:3]
    # now drain everything: each completion read before it could be overwritten
    tags = [c0.tag]
    while len(tags) < 5:
        got = rig.completions(0)
        assert got, 'the queue must go on when the driver frees completions'
        tags += [c.tag for c in got]
    assert tags == [0, 1, 2, 3, 4]
    assert rig.sent == frames[:2] + [other] + frames[2:]


def test_enable_and_busy() -> None:
    rig = Rig(queues=())
    rig.setup(0, enable=False)
    frame = pattern(64, 1)
    rig.post(0, rig.segments(frame, [], tag=1))
    assert rig.sent == []                                    # disabled: starts no frame
    assert rig.rd(0, regs.TXQ_DESC_RING + regs.RING_HW_IDX) == 0
    assert rig.rd(0, regs.TXQ_DESC_RING + regs.RING_SW_IDX) == 1
    rig.wr(0, regs.TXQ_CTRL, 1)                               # enabling starts it
    assert rig.sent == [frame]
    assert rig.rd(0, regs.TXQ_CTRL) == 1
    assert regs.TXQ_STATUS_BUSY.get(rig.rd(0, regs.TXQ_STATUS)) == 0
    assert rig.completions(0)[0].tag == 1
    # disable: busy 0, hardware indices held at zero
    rig.wr(0, regs.TXQ_CTRL, 0)
    assert rig.rd(0, regs.TXQ_STATUS) == 0
    assert rig.rd(0, regs.TXQ_DESC_RING + regs.RING_HW_IDX) == 0
    assert rig.rd(0, regs.TXQ_CQ + regs.RING_HW_IDX) == 0
    # the driver zeroes its SW_IDX registers and rings, re-enables, starts over at index 0
    rig.wr(0, regs.TXQ_DESC_RING + regs.RING_SW_IDX, 0)
    rig.wr(0, regs.TXQ_CQ + regs.RING_SW_IDX, 0)
    rig.sw[0] = rig.cq_head[0] = 0
    rig.setup(0)
    again = pattern(66, 2)
    rig.post(0, rig.segments(again, [], tag=2))
    assert rig.sent == [frame, again]
    [c] = rig.completions(0)
    assert (c.desc_idx, c.tag, c.gen) == (0, 2, 1)


def test_irq_arming() -> None:
    rig = Rig(queues=(0, 1))
    nic = rig.nic
    assert not nic.irq_fire_tx(0)
    rig.wr(0, regs.TXQ_IRQ, 1)
    assert rig.rd(0, regs.TXQ_IRQ) == 1
    assert not nic.irq_fire_tx(0)                            # armed, nothing pending
    rig.post(0, rig.segments(pattern(64), [], tag=1))
    assert not nic.irq_fire_tx(1)                            # per queue
    assert nic.irq_fire_tx(0)                                # fires once
    assert rig.rd(0, regs.TXQ_IRQ) == 0                      # and disarms
    assert not nic.irq_fire_tx(0)
    rig.wr(0, regs.TXQ_IRQ, 1)                               # arm with a completion pending
    assert nic.irq_fire_tx(0)                                # fires at once
    rig.completions(0)                                       # consumed (CQ.SW_IDX written)
    rig.wr(0, regs.TXQ_IRQ, 1)
    assert not nic.irq_fire_tx(0)
    # failed frames complete too, and raise the interrupt
    rig.post(0, [TxDesc(addr=0x1_0030_0000, len=0, eop=True)])
    assert nic.irq_fire_tx(0)


def test_rx_unchanged_by_tx() -> None:
    """The RX counters, registers and frames_seen do not see TX traffic."""
    rig = Rig()
    rig.post(0, rig.segments(pattern(64), []))
    assert rig.nic.frames_seen == 0
    assert all(v == 0 for v in rig.nic.counters.values())


# --- ModelHw ----------------------------------------------------------------------------------

async def _program(hw: ModelHw, t: int, desc_base: int, cq_base: int, log2: int) -> None:
    for ring_off, base in ((regs.TXQ_DESC_RING, desc_base), (regs.TXQ_CQ, cq_base)):
        await hw.write32(regs.txq_reg(t, ring_off + regs.RING_BASE_LO), base & 0xFFFFFFFF)
        await hw.write32(regs.txq_reg(t, ring_off + regs.RING_BASE_HI), base >> 32)
        await hw.write32(regs.txq_reg(t, ring_off + regs.RING_SIZE), log2)
    await hw.write32(regs.txq_reg(t, regs.TXQ_CTRL), 1)


def test_model_hw_wire_tx_and_loopback() -> None:
    async def scenario() -> None:
        hw = ModelHw(num_txq=2)
        assert regs.TX_CAPS_NUM_TXQ.get(await hw.read32(regs.TX_CAPS)) == 2
        base = hw.host.base
        await _program(hw, 1, base, base + 0x1000, 4)
        got: list[bytes] = []

        async def loop(frame: bytes) -> None:
            got.append(frame)
            await hw.wire.send(frame)                       # back into the RX side

        hw.wire.on_tx = loop
        hw.wire.keep_tx_outcomes = True
        frame = tcp_frame(500, 1)
        raw, start, off = partial(frame, 4, 'tcp')
        hw.host.write(base + 0x2000, raw[:100])
        hw.dev.gpu.write(hw.dev.base + 0x10, raw[100:])
        hw.host.write(base, TxDesc(addr=base + 0x2000, len=100, csum=True, csum_start=start,
                                   csum_offset=off, tag=3).pack()
                      + TxDesc(addr=hw.dev.base + 0x10, len=len(raw) - 100, eop=True).pack())
        await hw.write32(regs.txq_reg(1, regs.TXQ_DESC_RING + regs.RING_SW_IDX), 2)
        assert hw.wire.tx_frames == [frame]
        assert got == [frame]
        assert hw.nic.frames_seen == 1                      # the RX side saw it
        assert [o.completion.tag for o in hw.wire.tx_outcomes] == [3]
        assert hw.dev.cpu_reads == 0

    asyncio.run(scenario())


# --- inline headers (docs/tx.md, "Inline headers") ----------------------------------------------

def inline_entries_of(header: bytes) -> list[bytes]:
    """The ring entries holding an inline header, as docs/tx.md lays them out: 16 bytes each,
    the last one padded (with 0xEE here: padding must be ignored)."""
    padded = header + b'\xee' * (-len(header) % 16)
    return [padded[i:i + 16] for i in range(0, len(padded), 16)]


def test_frame_extent_inline() -> None:
    hdr = bytes([0xFF] * 54)              # header bytes with every flag bit set: never a descriptor
    ents = inline_entries_of(hdr)
    assert len(ents) == 4
    first = d(n=10, eop=True, inline=True, inline_len=54)
    assert frame_extent([first, *ents, d()]) == 5
    assert frame_extent([first, *ents[:3]]) is None          # header not all posted
    # the INLINE descriptor without EOP: descriptors resume after the inline entries
    first = d(n=10, inline=True, inline_len=54)
    assert frame_extent([first, *ents]) is None
    assert frame_extent([first, *ents, d(), d(eop=True), d()]) == 7
    # a failed inline entry does not end the frame; a failed INLINE descriptor does
    assert frame_extent([first, ents[0], None, *ents[2:], d(eop=True)]) == 6
    assert frame_extent([None, *ents, d(eop=True)]) == 1
    # max_segs counts descriptors, not inline entries
    assert frame_extent([first, *ents, *[d()] * 15]) == 5 + 15
    assert frame_extent([first, *ents, *[d()] * 14]) is None
    # INLINE with inline_len 0: no inline entries; inline_len without INLINE: ignored
    assert frame_extent([d(eop=True, inline=True), d()]) == 1
    assert frame_extent([d(eop=True, inline_len=54), d()]) == 1


@pytest.mark.parametrize('entries, status', [
    ([d(n=10, eop=True, inline=True, inline_len=54), *inline_entries_of(bytes(54))], TxStatus.OK),
    ([d(n=0, eop=True, inline=True, inline_len=64), *inline_entries_of(bytes(64))], TxStatus.OK),
    ([d(n=0, eop=True, inline=True, inline_len=59), *inline_entries_of(bytes(59))],
     TxStatus.BAD_LEN),                                                   # 59 < 60
    ([d(n=0, inline=True, inline_len=16), bytes(16), d(n=0, eop=True)],
     TxStatus.BAD_SEG),                                                   # len 0 only on the first
    ([d(n=0, eop=True, inline=True, inline_len=129), *inline_entries_of(bytes(129))],
     TxStatus.BAD_LEN),                                                   # over TX_INLINE_MAX
    ([d(n=100, eop=True, inline=True, inline_len=128), *inline_entries_of(bytes(128))],
     TxStatus.OK),
    ([d(n=10, eop=True, inline=True, inline_len=54), bytes(16), None, bytes(16), bytes(16)],
     TxStatus.DESC_RD_ERR),
    ([d(n=1000, inline=True, inline_len=16), bytes(16), d(n=506, eop=True)],
     TxStatus.OK),                                                        # 16 + 1506 = 1522
    ([d(n=1000, inline=True, inline_len=17), bytes(16), bytes(16), d(n=506, eop=True)],
     TxStatus.BAD_LEN),                                                   # 17 + 1506 = 1523
    ([d(n=10, eop=True, inline=True, inline_len=54, csum=True, csum_start=34, csum_offset=30),
      *inline_entries_of(bytes(54))], TxStatus.BAD_CSUM),                 # 34 + 30 + 2 > 64
    ([d(n=10, eop=True, inline=True, inline_len=54, csum=True, csum_start=34, csum_offset=28),
      *inline_entries_of(bytes(54))], TxStatus.OK),                       # ends at the frame's end
])
def test_check_frame_inline(entries: list, status: TxStatus) -> None:
    assert check_frame(entries) == status


@pytest.mark.parametrize('ipv, l4, payload', [(4, 'tcp', 10), (6, 'tcp', 1448), (4, 'udp', 18),
                                              (6, 'udp', 3000)])
def test_inline_frame_sent(ipv: int, l4: str, payload: int) -> None:
    """An inline header in the ring, the payload in device memory: the frame on the wire is the
    header followed by the payload, checksummed over both (scapy's checksum), the completion
    counts the inline entries and the frame's full length."""
    rig = Rig(inline_en=True)
    rig.nic.mmio_write(regs.TX_FRAME_LIMIT, 9000)
    full = bytes(packet(ipv, l4, pattern(payload, 5)))
    raw, start, off = partial(full, ipv, l4)
    h = start + (20 if l4 == 'tcp' else 8)
    header, pay = raw[:h], raw[h:]
    descs: list = []
    first = TxDesc(addr=rig.dev_buf(pay[:1000]) if pay else 0, len=min(len(pay), 1000),
                   inline=True, inline_len=len(header), csum=True, csum_start=start,
                   csum_offset=off, csum_udp=l4 == 'udp', tag=0x77, eop=len(pay) <= 1000)
    ents = inline_entries_of(header)
    rest = [TxDesc(addr=rig.dev_buf(pay[i:i + 1000]), len=len(pay[i:i + 1000]))
            for i in range(1000, len(pay), 1000)]
    if rest:
        rest[-1].eop = True
    size = 1 << rig.desc_log2
    base = rig.ring_base(0, 'desc')
    for e in [first.pack(), *ents, *[r.pack() for r in rest]]:
        rig.host.write(base + 16 * (rig.sw[0] % size), e)
        rig.sw[0] += 1
    rig.doorbell(0)
    assert rig.sent == [full]
    assert rig.sent[0] == scapy_rebuilt(rig.sent[0])
    (c,) = rig.completions(0)
    n = 1 + len(ents) + len(rest)
    assert (c.desc_idx, c.ndesc, c.len, c.tag, c.status) == (0, n, len(full), 0x77, TxStatus.OK)
    assert c.csum == int.from_bytes(full[start + off:start + off + 2], 'big')
    assert rig.rd(0, regs.TXQ_DESC_RING + regs.RING_HW_IDX) == n
    assert rig.dev.cpu_reads == 0
    rig.assert_counters(TX_FRAMES=1, TX_BYTES=len(full))


def test_inline_header_bytes_never_read_as_descriptors() -> None:
    """Header bytes that look like EOP descriptors, a bad inline length, a failed inline entry:
    each frame ends where docs/tx.md says, the next one starts after it."""
    rig = Rig(inline_en=True)
    tricky = bytes([0x01] * 16) * 2                  # every byte 10 has EOP set
    good = tcp_frame(20, 1)
    post = [TxDesc(addr=rig.host_buf(good[32:]), len=len(good) - 32, inline=True,
                   inline_len=32, eop=True, tag=1).pack(), good[:16], good[16:32]]
    post[1:3] = [bytes(a ^ b for a, b in zip(e, t)) for e, t in zip(post[1:3], [bytes(16)] * 2)]
    bad_len = [TxDesc(addr=0, len=0, inline=True, inline_len=200, eop=True, tag=2).pack(),
               *[tricky[:16]] * 13]
    second = [TxDesc(addr=rig.host_buf(good[16:]), len=len(good) - 16, inline=True,
                     inline_len=16, eop=True, tag=3).pack(), good[:16]]
    rig.write_descs(0, [])
    size = 1 << rig.desc_log2
    for e in [*post, *bad_len, *second]:
        rig.host.write(rig.ring_base(0, 'desc') + 16 * (rig.sw[0] % size), e)
        rig.sw[0] += 1
    rig.doorbell(0)
    cpls = rig.completions(0)
    assert [(c.tag, c.ndesc, c.status) for c in cpls] == [
        (1, 3, TxStatus.OK), (2, 14, TxStatus.BAD_LEN), (3, 2, TxStatus.OK)]
    assert rig.sent == [good, good]


def test_coal_and_offloads_registers() -> None:
    rig = Rig()
    off = rig.nic.mmio_read(regs.TX_OFFLOADS)
    assert regs.TX_OFFLOADS_INLINE_MAX.get(off) == 128
    assert regs.TX_OFFLOADS_TSO.get(off) == 0                         # the model's default (the RTL reads 1)
    rig.nic.tx.tso = True
    assert regs.TX_OFFLOADS_TSO.get(rig.nic.mmio_read(regs.TX_OFFLOADS)) == 1
    assert rig.rd(0, regs.TXQ_COALESCE) == 1 << 16 | 8 << 24        # frames 1, frames_max 8
    rig.wr(0, regs.TXQ_COALESCE, regs.TXQ_COALESCE_USECS.put(20) | regs.TXQ_COALESCE_FRAMES.put(0)
           | regs.TXQ_COALESCE_FRAMES_MAX.put(3))                      # frames_max is read-only
    assert rig.rd(0, regs.TXQ_COALESCE) == (20 | 0 << 16 | 8 << 24)
    # the model finishes every frame it starts: completions appear as without moderation
    frames = [tcp_frame(100, i) for i in range(3)]
    for f in frames:
        rig.post(0, rig.segments(f, [54], dev_from=1, tag=9))
    assert rig.sent == frames
    assert len(rig.completions(0)) == 3


def test_inline_ignored_without_inline_en() -> None:
    """Without CTRL.inline_en, INLINE and inline_len are ignored as the reserved bits they were:
    the entries after such a descriptor are descriptors again."""
    rig = Rig()
    frame = tcp_frame(40, 2)
    d0 = TxDesc(addr=rig.host_buf(frame), len=len(frame), inline=True, inline_len=48, eop=True,
                tag=5)
    rig.post(0, [d0, *rig.segments(frame, [], tag=6)])
    assert rig.sent == [frame, frame]
    assert [(c.tag, c.ndesc) for c in rig.completions(0)] == [(5, 1), (6, 1)]
    assert frame_extent([d0, d()], inline_en=False) == 1
    assert check_frame([TxDesc(addr=0, len=0, inline=True, inline_len=64, eop=True)],
                       inline_en=False) == TxStatus.BAD_SEG


def test_failed_first_descriptor_halts_an_inline_queue() -> None:
    """With CTRL.inline_en a frame whose first descriptor could not be read halts the queue
    (STATUS.halted) until the queue is reset; without it the queue goes on (docs/tx.md)."""
    for inline_en in (False, True):
        rig = Rig(inline_en=inline_en)
        frames = [tcp_frame(100, k) for k in range(3)]
        descs = [rig.segments(f, [], tag=k)[0] for k, f in enumerate(frames)]
        rig.write_descs(0, descs)
        rig.space.add_error_range(rig.ring_base(0, 'desc'), 16)        # entry 0 fails
        rig.doorbell(0)
        cpls = rig.completions(0)
        status = rig.rd(0, regs.TXQ_STATUS)
        if inline_en:
            assert [(c.desc_idx, c.status) for c in cpls] == [(0, TxStatus.DESC_RD_ERR)]
            assert regs.TXQ_STATUS_HALTED.get(status) == 1 and rig.sent == []
            rig.wr(0, regs.TXQ_CTRL, 0)                                  # the queue's reset
            assert regs.TXQ_STATUS_HALTED.get(rig.rd(0, regs.TXQ_STATUS)) == 0
        else:
            assert [c.status for c in cpls] == [TxStatus.DESC_RD_ERR, TxStatus.OK, TxStatus.OK]
            assert regs.TXQ_STATUS_HALTED.get(status) == 0 and rig.sent == frames[1:]
