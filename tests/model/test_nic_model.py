"""The RX golden model (models/nic_model.py, models/rx_parser.py) against docs/rx-rules.md and
docs/dma-formats.md.

Every expectation is reasoned from the documents: header lengths from the layer sizes scapy
built (14 + 4 * tags + IP header + TCP/UDP header), payloads from the bytes the test put in,
GEN from the formula in dma-formats.md. The model is driven the way a driver drives the
hardware: descriptors written to host memory, registers through `mmio_write`, completions
read back from the completion ring in memory.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import pytest
from scapy.all import (ARP, ICMP, IP, TCP, UDP, Dot1AD, Dot1Q, Ether, IPOption_NOP, IPv6,
                       IPv6ExtHdrDestOpt, IPv6ExtHdrFragment, IPv6ExtHdrHopByHop, IPv6ExtHdrRouting, PadN,
                       Raw)

from driver import regs
from models.bus import DmaAddressSpace
from models.device_memory import DeviceMemory
from models.formats import L3Type, L4Type, RxCompletion, RxDesc
from models.host_memory import HostMemory
from models.nic_model import (COUNTER_NAMES, INFO_COUNTERS, NicModel, PlacementConfig,
                              expected_placement)
from models.rx_parser import parse_frame

HOST_BASE = 0x1_0000_0000
HOST_SIZE = 1 << 22
DEV_BASE = 0x80_0000_0000
DEV_SIZE = 1 << 22
UNMAPPED = 0x7_0000_0000
MAC = dict(dst='02:00:00:00:00:01', src='02:00:00:00:00:02')
IP4 = dict(src='10.0.0.1', dst='10.0.0.2')
IP6 = dict(src='fd00::1', dst='fd00::2')


# --- frame building ----------------------------------------------------------------------------

def pattern(n: int, seed: int = 0) -> bytes:
    return bytes((i * 7 + seed * 13 + 3) & 0xFF for i in range(n))


def pad60(raw: bytes) -> bytes:
    """What the MAC delivers: short frames padded to 60 bytes (without FCS)."""
    return raw + bytes(max(0, 60 - len(raw)))


def l2(tags: int):
    if tags == 0:
        return Ether(**MAC)
    if tags == 1:
        return Ether(**MAC) / Dot1Q(vlan=100)
    return Ether(**MAC) / Dot1AD(vlan=200) / Dot1Q(vlan=100)


@dataclass
class Built:
    frame: bytes
    hdr_len: int          # spec: pay_off
    payload: bytes        # spec: [pay_off, ip_end)
    l3: L3Type
    l4: L4Type
    tags: int


def build(ipv: int, l4: str, tags: int, payload: bytes) -> Built:
    ip = IP(**IP4) if ipv == 4 else IPv6(**IP6)
    l4l = TCP(sport=1000, dport=2000) if l4 == 'tcp' else UDP(sport=1000, dport=2000)
    raw = bytes(l2(tags) / ip / l4l / Raw(payload)) if payload else bytes(l2(tags) / ip / l4l)
    ip_hdr = 20 if ipv == 4 else 40
    l4_hdr = 20 if l4 == 'tcp' else 8
    hdr_len = 14 + 4 * tags + ip_hdr + l4_hdr
    assert len(raw) == hdr_len + len(payload)
    return Built(pad60(raw), hdr_len, payload, L3Type.IPV4 if ipv == 4 else L3Type.IPV6,
                 L4Type.TCP if l4 == 'tcp' else L4Type.UDP, tags)


# --- a minimal driver over the model -----------------------------------------------------------

class Rig:
    """Host memory + device memory + the model, programmed through MMIO like hardware."""

    def __init__(self, *, split: bool = True, hds_thresh: int = 0, hdr_buf_bytes: int = 256,
                 pay_buf_log2: int = 12, hdr_log2: int = 4, pay_log2: int = 4,
                 cq_log2: int = 4, parse_bytes: int = 128, max_frame_len: int | None = None,
                 enable: bool = True) -> None:
        self.host = HostMemory(HOST_BASE, HOST_SIZE)
        self.dev = DeviceMemory(DEV_BASE, DEV_SIZE)
        self.bus = DmaAddressSpace([self.host, self.dev], record_writes=True)
        self.nic = NicModel(self.bus, parse_bytes=parse_bytes)
        self.hdr_buf_bytes = hdr_buf_bytes
        self.pay_buf_bytes = 1 << pay_buf_log2
        self.sizes = {regs.RXQ_HDR_RING: 1 << hdr_log2, regs.RXQ_PAY_RING: 1 << pay_log2,
                      regs.RXQ_CQ: 1 << cq_log2}
        self.bases = {}
        for ring, log2 in ((regs.RXQ_HDR_RING, hdr_log2), (regs.RXQ_PAY_RING, pay_log2),
                           (regs.RXQ_CQ, cq_log2)):
            base = self.host.alloc(16 << log2, align=64)
            self.host.fill(base, 16 << log2)
            self.bases[ring] = base
            self.wr(regs.rxq_reg(0, ring + regs.RING_BASE_LO), base & 0xFFFFFFFF)
            self.wr(regs.rxq_reg(0, ring + regs.RING_BASE_HI), base >> 32)
            self.wr(regs.rxq_reg(0, ring + regs.RING_SIZE), log2)
        self.wr(regs.rxq_reg(0, regs.RXQ_HDS_THRESH), hds_thresh)
        self.wr(regs.rxq_reg(0, regs.RXQ_BUF_SIZE),
                regs.RXQ_BUF_SIZE_HDR_BUF_BYTES.put(hdr_buf_bytes)
                | regs.RXQ_BUF_SIZE_PAY_BUF_LOG2.put(pay_buf_log2))
        if max_frame_len is not None:
            self.wr(regs.RX_FRAME_LIMIT, max_frame_len)
        self.set_ctrl(enable, split)
        self.sw = {regs.RXQ_HDR_RING: 0, regs.RXQ_PAY_RING: 0, regs.RXQ_CQ: 0}
        self.bufs: dict[tuple[int, int], tuple[int, int]] = {}   # (ring, id) -> (addr, size)
        self.next_id = 1
        self.dmabuf = self.dev.export_dmabuf(DEV_SIZE // 2, chunk_size=4 * 4096,
                                             rng=random.Random(5))
        self.dmabuf_next = 0

    def wr(self, addr: int, value: int) -> None:
        self.nic.mmio_write(addr, value)

    def rd(self, addr: int) -> int:
        return self.nic.mmio_read(addr)

    def set_ctrl(self, enable: bool, split: bool) -> None:
        self.wr(regs.rxq_reg(0, regs.RXQ_CTRL), regs.RXQ_CTRL_ENABLE.put(int(enable))
                | regs.RXQ_CTRL_SPLIT_EN.put(int(split)))

    def hw_idx(self, ring: int) -> int:
        return self.rd(regs.rxq_reg(0, ring + regs.RING_HW_IDX))

    def post(self, ring: int, addr: int | None = None, size: int | None = None,
             doorbell: bool = True) -> int:
        """Post one buffer; header buffers in host memory, payload buffers in the dma-buf."""
        if ring == regs.RXQ_HDR_RING:
            size = size or self.hdr_buf_bytes
            addr = addr if addr is not None else self.host.alloc(size, align=64)
        else:
            size = size or self.pay_buf_bytes
            if addr is None:
                addr = self.dmabuf.offset_to_bus(self.dmabuf_next)
                self.dmabuf_next += size
        buf_id = self.next_id
        self.next_id += 1
        idx = self.sw[ring]
        entry = self.bases[ring] + 16 * (idx % self.sizes[ring])
        self.host.write(entry, RxDesc(addr, buf_id).pack())
        self.bufs[(ring, buf_id)] = (addr, size)
        self.sw[ring] = (idx + 1) & 0xFFFF
        if doorbell:
            self.doorbell(ring)
        return buf_id

    def doorbell(self, ring: int) -> None:
        self.wr(regs.rxq_reg(0, ring + regs.RING_SW_IDX), self.sw[ring])

    def post_hdr(self, n: int = 1) -> list[int]:
        return [self.post(regs.RXQ_HDR_RING) for _ in range(n)]

    def post_pay(self, n: int = 1) -> list[int]:
        return [self.post(regs.RXQ_PAY_RING) for _ in range(n)]

    def poll(self, consume: bool = True) -> list[RxCompletion]:
        """Consume completions whose GEN says they are new (dma-formats.md, Rings)."""
        out = []
        size = self.sizes[regs.RXQ_CQ]
        while True:
            idx = self.sw[regs.RXQ_CQ]
            raw = self.host.read(self.bases[regs.RXQ_CQ] + 16 * (idx % size), 16)
            cpl = RxCompletion.unpack(raw, strict=True)
            if cpl.gen != 1 - ((idx // size) % 2):
                break
            out.append(cpl)
            self.sw[regs.RXQ_CQ] = (idx + 1) & 0xFFFF
        if consume:
            self.doorbell(regs.RXQ_CQ)
        return out

    def read_frame(self, cpls: list[RxCompletion]) -> tuple[bytes, bytes]:
        """Header bytes and payload bytes of one frame, as dma-formats.md says to read them."""
        hdr = b''
        if cpls[0].split:
            addr, _ = self.bufs[(regs.RXQ_HDR_RING, cpls[0].hdr_buf_id)]
            hdr = self.host.read(addr, cpls[0].hdr_len)
        pay = b''
        for c in cpls:
            if c.pay_valid:
                addr, _ = self.bufs[(regs.RXQ_PAY_RING, c.pay_buf_id)]
                if self.dev.contains(addr, c.pay_len):
                    pay += self.dev.gpu.read(addr, c.pay_len)
                else:
                    pay += self.host.read(addr, c.pay_len)
        return hdr, pay

    def assert_writes_inside_posted(self) -> None:
        """Every DMA write landed in a posted buffer or in the completion ring."""
        cq = self.bases[regs.RXQ_CQ]
        cq_end = cq + 16 * self.sizes[regs.RXQ_CQ]
        for addr, n in self.bus.writes:
            if cq <= addr and addr + n <= cq_end:
                assert addr % 16 == 0 and n == 16
                continue
            assert any(a <= addr and addr + n <= a + s for a, s in self.bufs.values()), \
                f'write of {n} bytes at 0x{addr:x} outside every posted buffer'

    def counters(self) -> dict[str, int]:
        return {name: self.rd(getattr(regs, name)) for name in COUNTER_NAMES}

    def only(self, **expected: int) -> None:
        """All frame and error counters zero except those given (information counters such
        as RX_VLAN are checked by their own test)."""
        got = {k: v for k, v in self.counters().items() if k not in INFO_COUNTERS}
        want = {name: expected.get(name, 0) for name in COUNTER_NAMES if name not in INFO_COUNTERS}
        assert got == want


# --- the matrix: IPv4/IPv6 x TCP/UDP x 0/1/2 tags x payload sizes --------------------------------

SIZES = [0, 1, 2, 7, 8, 63, 64, 65, 1460]


@pytest.mark.parametrize('size', SIZES)
@pytest.mark.parametrize('tags', [0, 1, 2])
@pytest.mark.parametrize('l4', ['tcp', 'udp'])
@pytest.mark.parametrize('ipv', [4, 6])
def test_split_matrix(ipv: int, l4: str, tags: int, size: int) -> None:
    b = build(ipv, l4, tags, pattern(size, seed=size))
    rig = Rig(max_frame_len=1600)
    hdr_id, = rig.post_hdr()
    pay_ids = rig.post_pay(2)
    out = rig.nic.receive(b.frame)
    assert not out.dropped and out.split and not out.hdr_overflow
    assert out.hdr_len == b.hdr_len
    cpls = rig.poll()
    assert len(cpls) == 1
    c = cpls[0]
    assert c == RxCompletion(
        pay_buf_id=pay_ids[0] if size else 0, pay_len=size, hdr_buf_id=hdr_id,
        hdr_len=b.hdr_len, l3_type=b.l3, l4_type=b.l4, ip_frag=False, vlan_tags=tags,
        sop=True, eop=True, split=True, hdr_valid=True, pay_valid=size > 0,
        hdr_overflow=False, queue=0, gen=1)
    hdr, pay = rig.read_frame(cpls)
    assert hdr == b.frame[:b.hdr_len]
    assert pay == b.payload
    if size:
        addr, _ = rig.bufs[(regs.RXQ_PAY_RING, pay_ids[0])]
        assert rig.dev.contains(addr, size)
        # Ethernet padding never reaches device memory: the rest of the buffer is untouched.
        assert rig.dev.gpu.read(addr + size, 64) == bytes(64)
    assert out.completions == cpls
    assert out.hdr_bytes == hdr and out.payload_bytes == pay
    rig.assert_writes_inside_posted()
    assert rig.dev.cpu_reads == 0
    rig.only(RX_FRAMES=1)
    assert rig.hw_idx(regs.RXQ_HDR_RING) == 1
    assert rig.hw_idx(regs.RXQ_PAY_RING) == (1 if size else 0)
    assert rig.hw_idx(regs.RXQ_CQ) == 1


@pytest.mark.parametrize('size', [0, 1, 64, 1460])
@pytest.mark.parametrize('tags', [0, 2])
@pytest.mark.parametrize('ipv', [4, 6])
def test_unsplit_matrix(ipv: int, tags: int, size: int) -> None:
    """split_en = 0: the whole frame, padding included, goes to payload buffers."""
    b = build(ipv, 'tcp', tags, pattern(size))
    rig = Rig(split=False, max_frame_len=1600)
    rig.post_hdr()
    pay_id, = rig.post_pay()
    out = rig.nic.receive(b.frame)
    assert not out.dropped and not out.split
    cpls = rig.poll()
    assert cpls == [RxCompletion(pay_buf_id=pay_id, pay_len=len(b.frame), hdr_len=0,
                                 l3_type=b.l3, l4_type=L4Type.TCP, vlan_tags=tags, sop=True,
                                 eop=True, pay_valid=True, gen=1)]
    assert rig.read_frame(cpls) == (b'', b.frame)
    assert rig.hw_idx(regs.RXQ_HDR_RING) == 0, 'no header buffer used when not split'
    rig.assert_writes_inside_posted()


# --- parse cases --------------------------------------------------------------------------------

def deliver(rig: Rig, frame: bytes, n_pay: int = 4) -> list[RxCompletion]:
    rig.post_hdr()
    rig.post_pay(n_pay)
    out = rig.nic.receive(frame)
    assert not out.dropped, out.drop_counter
    return rig.poll()


@pytest.mark.parametrize('opt_words', [1, 2, 5, 10])
def test_ipv4_options(opt_words: int) -> None:
    payload = pattern(100)
    pkt = Ether(**MAC) / IP(**IP4, options=[IPOption_NOP()] * (4 * opt_words)) / \
        TCP(sport=1, dport=2) / Raw(payload)
    frame = pad60(bytes(pkt))
    hdr_len = 14 + 4 * (5 + opt_words) + 20
    rig = Rig()
    cpls = deliver(rig, frame)
    assert cpls[0].split and cpls[0].hdr_len == hdr_len
    assert cpls[0].l4_type == L4Type.TCP
    assert rig.read_frame(cpls) == (frame[:hdr_len], payload)


def test_tcp_options() -> None:
    payload = pattern(10)
    pkt = Ether(**MAC) / IP(**IP4) / TCP(options=[('NOP', None)] * 12) / Raw(payload)
    frame = pad60(bytes(pkt))
    rig = Rig()
    cpls = deliver(rig, frame)
    assert cpls[0].hdr_len == 14 + 20 + 32
    assert rig.read_frame(cpls)[1] == payload


@pytest.mark.parametrize('frag', [dict(flags='MF', frag=0), dict(flags=0, frag=100),
                                  dict(flags='MF', frag=7)])
def test_ipv4_fragment(frag: dict) -> None:
    """Fragments split after the IP header, l4_type none, ip_frag set."""
    body = bytes(TCP(sport=1, dport=2) / Raw(pattern(50)))
    pkt = Ether(**MAC) / IP(**IP4, proto=6, **frag) / Raw(body)
    frame = pad60(bytes(pkt))
    rig = Rig()
    cpls = deliver(rig, frame)
    c = cpls[0]
    assert (c.l3_type, c.l4_type, c.ip_frag, c.split, c.hdr_len) == \
        (L3Type.IPV4, L4Type.NONE, True, True, 34)
    assert rig.read_frame(cpls) == (frame[:34], body)


def test_ipv4_dont_fragment_is_not_a_fragment() -> None:
    pkt = Ether(**MAC) / IP(**IP4, flags='DF') / UDP() / Raw(pattern(30))
    rig = Rig()
    c = deliver(rig, pad60(bytes(pkt)))[0]
    assert not c.ip_frag and c.l4_type == L4Type.UDP and c.hdr_len == 42


def test_ipv6_fragment_header() -> None:
    """A fragment header is walked: split after it (14 + 40 + 8), no L4 parse."""
    tcp = bytes(TCP() / Raw(pattern(40)))
    body = bytes(IPv6ExtHdrFragment(nh=6, m=1)) + tcp
    pkt = Ether(**MAC) / IPv6(**IP6, nh=44) / Raw(body)
    frame = pad60(bytes(pkt))
    rig = Rig()
    cpls = deliver(rig, frame)
    c = cpls[0]
    assert (c.l3_type, c.l4_type, c.ip_frag, c.split, c.hdr_len) == \
        (L3Type.IPV6, L4Type.NONE, True, True, 62)
    assert rig.read_frame(cpls) == (frame[:62], tcp)


@pytest.mark.parametrize('ext', ['hop', 'dst', 'hop+dst'])
def test_ipv6_extension_headers_are_walked(ext: str) -> None:
    """Up to two extension headers are skipped; TCP after them is split normally."""
    payload = pattern(40)
    exts = {'hop': [IPv6ExtHdrHopByHop()], 'dst': [IPv6ExtHdrDestOpt(options=[PadN(optdata=b'\0' * 10)])],
            'hop+dst': [IPv6ExtHdrHopByHop(), IPv6ExtHdrDestOpt()]}[ext]
    pkt = Ether(**MAC) / Dot1Q(vlan=3) / IPv6(**IP6)
    for e in exts:
        pkt = pkt / e
    pkt = pkt / TCP() / Raw(payload)
    frame = pad60(bytes(pkt))
    hdr_len = len(bytes(pkt)) - len(payload)      # everything but the payload
    rig = Rig()
    cpls = deliver(rig, frame)
    c = cpls[0]
    assert (c.l4_type, c.ip_frag, c.vlan_tags, c.hdr_len) == (L4Type.TCP, False, 1, hdr_len)
    assert hdr_len >= 18 + 40 + 8 * len(exts) + 20
    assert rig.read_frame(cpls)[1] == payload


def test_three_ipv6_extension_headers_leave_other_l4() -> None:
    """The walk stops after two headers: the third makes the frame "other L4", split there."""
    pkt = (Ether(**MAC) / IPv6(**IP6) / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt()
           / IPv6ExtHdrRouting() / TCP() / Raw(pattern(30)))
    frame = pad60(bytes(pkt))
    rig = Rig()
    c = deliver(rig, frame)[0]
    assert (c.l4_type, c.split, c.hdr_len) == (L4Type.OTHER, True, 14 + 40 + 8 + 8)


def test_icmp_is_other_l4() -> None:
    body = bytes(ICMP() / Raw(pattern(56)))
    frame = bytes(Ether(**MAC) / IP(**IP4) / ICMP() / Raw(pattern(56)))
    assert frame[34:] == body
    rig = Rig()
    cpls = deliver(rig, frame)
    assert (cpls[0].l4_type, cpls[0].hdr_len, cpls[0].split) == (L4Type.OTHER, 34, True)
    assert rig.read_frame(cpls)[1] == body


def test_arp_is_non_ip_unsplit() -> None:
    frame = pad60(bytes(Ether(dst='ff:ff:ff:ff:ff:ff', src=MAC['src']) /
                        ARP(psrc='10.0.0.1', pdst='10.0.0.2')))
    assert len(frame) == 60
    rig = Rig()
    rig.post_hdr()
    pay_id, = rig.post_pay()
    rig.nic.receive(frame)
    cpls = rig.poll()
    assert cpls == [RxCompletion(pay_buf_id=pay_id, pay_len=60, l3_type=L3Type.NONE,
                                 sop=True, eop=True, pay_valid=True, gen=1)]
    assert rig.read_frame(cpls) == (b'', frame)
    assert rig.hw_idx(regs.RXQ_HDR_RING) == 0


def test_three_vlan_tags_is_non_ip() -> None:
    pkt = Ether(**MAC) / Dot1AD(vlan=1) / Dot1Q(vlan=2) / Dot1Q(vlan=3) / IP(**IP4) / \
        TCP() / Raw(pattern(20))
    frame = pad60(bytes(pkt))
    rig = Rig()
    cpls = deliver(rig, frame)
    c = cpls[0]
    assert (c.l3_type, c.l4_type, c.vlan_tags, c.split, c.pay_len) == \
        (L3Type.NONE, L4Type.NONE, 2, False, len(frame))


def test_padding_trimmed_only_when_split() -> None:
    b = build(4, 'tcp', 0, b'Z')              # 55 bytes + 5 bytes of padding
    assert len(b.frame) == 60
    rig = Rig()
    cpls = deliver(rig, b.frame)
    assert rig.read_frame(cpls) == (b.frame[:54], b'Z')
    rig2 = Rig(split=False)
    cpls2 = deliver(rig2, b.frame)
    assert rig2.read_frame(cpls2) == (b'', b.frame)


def test_empty_payload_split_needs_no_payload_buffer() -> None:
    b = build(4, 'tcp', 0, b'')
    rig = Rig()
    hdr_id, = rig.post_hdr()
    out = rig.nic.receive(b.frame)               # payload ring empty
    assert not out.dropped
    cpls = rig.poll()
    assert cpls == [RxCompletion(hdr_buf_id=hdr_id, hdr_len=54, l3_type=L3Type.IPV4,
                                 l4_type=L4Type.TCP, sop=True, eop=True, split=True,
                                 hdr_valid=True, pay_valid=False, gen=1)]


# --- ingress ------------------------------------------------------------------------------------

def test_runt() -> None:
    rig = Rig()
    rig.post_hdr()
    rig.post_pay()
    out = rig.nic.receive(bytes(59))
    assert out.dropped and out.drop_counter == 'RX_DROP_RUNT'
    out = rig.nic.receive(bytes(60))           # 60 bytes is not a runt (non-IP, delivered)
    assert not out.dropped
    rig.only(RX_DROP_RUNT=1, RX_FRAMES=1)


def test_bad_fcs_first() -> None:
    rig = Rig()
    b = build(4, 'tcp', 0, pattern(100))
    assert rig.nic.receive(b.frame, bad_fcs=True).drop_counter == 'RX_DROP_FCS'
    assert rig.nic.receive(bytes(20), bad_fcs=True).drop_counter == 'RX_DROP_FCS'
    assert rig.nic.receive(bytes(3000), bad_fcs=True).drop_counter == 'RX_DROP_FCS'
    rig.only(RX_DROP_FCS=3)
    assert rig.bus.writes == []


def test_oversize() -> None:
    rig = Rig()
    assert rig.rd(regs.RX_FRAME_LIMIT) == 1522
    rig.post_hdr(2)
    rig.post_pay(2)
    over = build(4, 'udp', 0, pattern(1523 - 42))
    ok = build(4, 'udp', 0, pattern(1522 - 42))
    assert len(over.frame) == 1523 and len(ok.frame) == 1522
    assert rig.nic.receive(over.frame).drop_counter == 'RX_DROP_OVERSIZE'
    assert rig.nic.receive(bytes(59) * 30).drop_counter == 'RX_DROP_OVERSIZE'
    assert not rig.nic.receive(ok.frame).dropped
    rig.only(RX_DROP_OVERSIZE=2, RX_FRAMES=1)


# --- header errors -----------------------------------------------------------------------------

def hdr_err_frames() -> dict[str, bytes]:
    def patch(raw: bytes, off: int, val: bytes) -> bytes:
        return raw[:off] + val + raw[off + len(val):]

    v4 = bytes(Ether(**MAC) / IP(**IP4) / TCP() / Raw(pattern(40)))       # 94 bytes
    return {
        # total length 200 with 80 bytes of IP in the frame
        'ipv4_total_len_past_frame': patch(v4, 14 + 2, (200).to_bytes(2, 'big')),
        'ipv4_total_len_lt_ihl': patch(v4, 14 + 2, (19).to_bytes(2, 'big')),
        'ipv4_ihl_4': patch(v4, 14, b'\x44'),
        'ipv4_ihl_0': patch(v4, 14, b'\x40'),
        'ipv4_version_6': patch(v4, 14, b'\x65'),
        'tcp_doff_4': patch(v4, 34 + 12, b'\x40'),
        'tcp_doff_0': patch(v4, 34 + 12, b'\x00'),
        # data offset 15 with no options: 34 + 60 = 94 > ip_end 34 + 20 + 30 = 84
        'tcp_doff_past_ip_end': bytes(Ether(**MAC) / IP(**IP4) / TCP(dataofs=15) /
                                      Raw(pattern(30))),
        # IP total length 30: only 10 bytes of L4 inside the IP datagram
        'tcp_hdr_past_ip_end': patch(v4, 14 + 2, (30).to_bytes(2, 'big')),
        'udp_hdr_past_ip_end': pad60(bytes(Ether(**MAC) / IP(**IP4, len=24) / UDP() /
                                           Raw(pattern(30)))),
        'ipv6_plen_past_frame': bytes(Ether(**MAC) / IPv6(**IP6, plen=2000) / UDP() /
                                      Raw(pattern(30))),
        'ipv6_version_4': patch(bytes(Ether(**MAC) / IPv6(**IP6) / UDP() / Raw(pattern(30))),
                                14, b'\x40'),
        'qinq_ipv6_short': pad60(bytes(Ether(**MAC) / Dot1AD() / Dot1Q() / IPv6(**IP6, plen=0,
                                                                               nh=59))[:60]),
        'ipv6_tcp_past_ip_end': bytes(Ether(**MAC) / IPv6(**IP6, plen=10) / TCP() /
                                      Raw(pattern(30))),
    }


@pytest.mark.parametrize('name', sorted(hdr_err_frames()))
@pytest.mark.parametrize('split', [True, False])
def test_header_errors(name: str, split: bool) -> None:
    frame = hdr_err_frames()[name]
    assert len(frame) >= 60
    rig = Rig(split=split)
    rig.post_hdr()
    rig.post_pay()
    out = rig.nic.receive(frame)
    assert out.dropped and out.drop_counter == 'RX_DROP_HDR_ERR'
    assert parse_frame(frame).hdr_err_reason
    rig.only(RX_DROP_HDR_ERR=1)
    assert rig.bus.writes == []
    # the next frame goes through
    b = build(4, 'tcp', 0, pattern(10))
    assert not rig.nic.receive(b.frame).dropped


def test_header_error_beats_queue_off() -> None:
    """Section 2 (parse) comes before section 3 (queue)."""
    rig = Rig(enable=False)
    assert rig.nic.receive(hdr_err_frames()['ipv4_ihl_4']).drop_counter == 'RX_DROP_HDR_ERR'
    b = build(4, 'tcp', 0, pattern(10))
    assert rig.nic.receive(b.frame).drop_counter == 'RX_DROP_QUEUE_OFF'
    rig.only(RX_DROP_HDR_ERR=1, RX_DROP_QUEUE_OFF=1)


def test_fragment_skips_l4_checks() -> None:
    """A fragment with garbage where a TCP header would be is not a header error."""
    pkt = Ether(**MAC) / IP(**IP4, proto=6, flags='MF') / Raw(b'\x00' * 30)
    rig = Rig()
    c = deliver(rig, bytes(pkt))[0]
    assert c.ip_frag and c.hdr_len == 34


# --- split decision: threshold and header overflow -------------------------------------------

def test_hds_threshold() -> None:
    b = build(4, 'tcp', 0, pattern(100))         # 154 bytes
    rig = Rig(hds_thresh=154)
    c = deliver(rig, b.frame)[0]
    assert not c.split and c.hdr_len == 0 and c.pay_len == 154
    rig.wr(regs.rxq_reg(0, regs.RXQ_HDS_THRESH), 153)
    c = deliver(rig, b.frame)[0]
    assert c.split and c.hdr_len == 54 and c.pay_len == 100


def test_header_overflow_header_buffer() -> None:
    b = build(4, 'tcp', 1, pattern(30))          # header 58
    rig = Rig(hdr_buf_bytes=57)
    cpls = deliver(rig, b.frame)
    c = cpls[0]
    assert (c.split, c.hdr_valid, c.hdr_overflow, c.hdr_len, c.pay_len) == \
        (False, False, True, 0, len(b.frame))
    assert rig.read_frame(cpls) == (b'', b.frame)
    assert rig.hw_idx(regs.RXQ_HDR_RING) == 0
    rig2 = Rig(hdr_buf_bytes=58)
    c2 = deliver(rig2, b.frame)[0]
    assert c2.split and not c2.hdr_overflow and c2.hdr_len == 58


def test_header_overflow_parse_window() -> None:
    """QinQ + IPv4 with 40 bytes of options + TCP with 40 bytes of options: 142 bytes."""
    pkt = Ether(**MAC) / Dot1AD() / Dot1Q() / IP(**IP4, options=[IPOption_NOP()] * 40) / \
        TCP(options=[('NOP', None)] * 40) / Raw(pattern(20))
    frame = bytes(pkt)
    assert len(frame) == 22 + 60 + 60 + 20
    rig = Rig(parse_bytes=192)
    c = deliver(rig, frame)[0]
    assert c.split and c.hdr_len == 142
    rig = Rig(parse_bytes=142)
    assert deliver(rig, frame)[0].hdr_len == 142
    rig = Rig(parse_bytes=141)
    c = deliver(rig, frame)[0]
    assert c.hdr_overflow and not c.split and c.pay_len == len(frame)
    assert c.l4_type == L4Type.TCP


def test_tcp_header_beyond_parse_window() -> None:
    """The TCP header does not fit a 64-byte window: not parsed (other L4), and since the L3
    headers alone end past the window, delivered unsplit with HDR_OVERFLOW."""
    pkt = Ether(**MAC) / IP(**IP4, options=[IPOption_NOP()] * 40) / TCP() / Raw(pattern(20))
    raw = bytearray(bytes(pkt))
    raw[74 + 12] = 0x10                          # data offset 1: would be a header error
    rig = Rig(parse_bytes=64)
    c = deliver(rig, bytes(raw))[0]
    assert c.hdr_overflow and not c.split and c.l4_type == L4Type.OTHER
    rig = Rig(parse_bytes=192)
    assert rig.nic.receive(bytes(raw)).drop_counter == 'RX_DROP_HDR_ERR'


def test_overflow_flag_only_when_split_wanted() -> None:
    b = build(4, 'tcp', 1, pattern(30))
    rig = Rig(split=False, hdr_buf_bytes=16)
    c = deliver(rig, b.frame)[0]
    assert not c.hdr_overflow and not c.split


# --- buffers and completion ring -------------------------------------------------------------

def test_no_header_buffer() -> None:
    b = build(4, 'tcp', 0, pattern(100))
    rig = Rig()
    rig.post_pay(2)
    out = rig.nic.receive(b.frame)
    assert out.drop_counter == 'RX_DROP_NO_HDR_BUF'
    assert rig.bus.writes == []
    assert rig.hw_idx(regs.RXQ_PAY_RING) == 0 and rig.hw_idx(regs.RXQ_CQ) == 0
    rig.only(RX_DROP_NO_HDR_BUF=1)
    rig.post_hdr()
    assert not rig.nic.receive(b.frame).dropped


def test_no_header_buffer_checked_before_payload() -> None:
    b = build(6, 'udp', 0, pattern(100))
    rig = Rig()
    assert rig.nic.receive(b.frame).drop_counter == 'RX_DROP_NO_HDR_BUF'
    rig.post_hdr()
    assert rig.nic.receive(b.frame).drop_counter == 'RX_DROP_NO_PAY_BUF'
    rig.only(RX_DROP_NO_HDR_BUF=1, RX_DROP_NO_PAY_BUF=1)
    assert rig.hw_idx(regs.RXQ_HDR_RING) == 0, 'a dropped frame consumes no buffer'


def test_unsplit_frame_needs_no_header_buffer() -> None:
    rig = Rig()
    rig.post_pay()
    arp = pad60(bytes(Ether(**MAC) / ARP()))
    assert not rig.nic.receive(arp).dropped


def test_no_payload_buffers_for_multi_buffer_frame() -> None:
    b = build(4, 'tcp', 0, pattern(3000))
    rig = Rig(pay_buf_log2=10, max_frame_len=9000)
    rig.post_hdr()
    rig.post_pay(2)                               # needs ceil(3000 / 1024) = 3
    assert rig.nic.receive(b.frame).drop_counter == 'RX_DROP_NO_PAY_BUF'
    assert rig.bus.writes == []
    rig.post_pay(1)
    assert not rig.nic.receive(b.frame).dropped


def test_multi_buffer_payload() -> None:
    payload = pattern(3000, seed=9)
    b = build(4, 'tcp', 0, payload)
    rig = Rig(pay_buf_log2=10, max_frame_len=9000)
    hdr_id, = rig.post_hdr()
    ids = rig.post_pay(4)
    out = rig.nic.receive(b.frame)
    assert not out.dropped
    cpls = rig.poll()
    assert [c.pay_len for c in cpls] == [1024, 1024, 3000 - 2048]
    assert [c.pay_buf_id for c in cpls] == ids[:3]
    assert [(c.sop, c.eop) for c in cpls] == [(True, False), (False, False), (False, True)]
    for c in cpls:
        assert (c.hdr_buf_id, c.hdr_len, c.split, c.hdr_valid, c.pay_valid) == \
            (hdr_id, 54, True, True, True)
        assert (c.l3_type, c.l4_type, c.gen) == (L3Type.IPV4, L4Type.TCP, 1)
    assert rig.read_frame(cpls) == (b.frame[:54], payload)
    assert rig.hw_idx(regs.RXQ_PAY_RING) == 3 and rig.hw_idx(regs.RXQ_CQ) == 3
    rig.assert_writes_inside_posted()
    assert rig.dev.cpu_reads == 0


def test_multi_buffer_unsplit() -> None:
    b = build(4, 'tcp', 0, pattern(3000))
    rig = Rig(split=False, pay_buf_log2=10, max_frame_len=9000)
    cpls = deliver(rig, b.frame)
    assert [c.pay_len for c in cpls] == [1024, 1024, 3054 - 2048]
    assert rig.read_frame(cpls) == (b'', b.frame)


def test_cq_full() -> None:
    b = build(4, 'tcp', 0, pattern(100))
    rig = Rig(cq_log2=1)                          # two entries
    rig.post_hdr(4)
    rig.post_pay(4)
    assert not rig.nic.receive(b.frame).dropped
    assert not rig.nic.receive(b.frame).dropped
    n_writes = len(rig.bus.writes)
    out = rig.nic.receive(b.frame)
    assert out.drop_counter == 'RX_DROP_CQ_FULL'
    assert len(rig.bus.writes) == n_writes, 'a dropped frame writes nothing'
    assert rig.hw_idx(regs.RXQ_HDR_RING) == 2 and rig.hw_idx(regs.RXQ_PAY_RING) == 2
    assert len(rig.poll()) == 2                   # the driver consumes: room again
    assert not rig.nic.receive(b.frame).dropped
    rig.only(RX_FRAMES=3, RX_DROP_CQ_FULL=1)


def test_cq_room_for_all_completions() -> None:
    """A frame needs max(1, ceil(P / B)) free completion entries, all at once."""
    big = build(4, 'tcp', 0, pattern(3000))            # 3 completions with 1 KiB buffers
    small = build(4, 'tcp', 0, pattern(10))            # 1 completion
    rig = Rig(cq_log2=2, pay_buf_log2=10, max_frame_len=9000)    # CQ of 4 entries
    rig.post_hdr(4)
    rig.post_pay(8)
    assert not rig.nic.receive(small.frame).dropped    # 3 entries left
    assert not rig.nic.receive(big.frame).dropped      # needs exactly 3
    assert rig.nic.receive(small.frame).drop_counter == 'RX_DROP_CQ_FULL'
    assert len(rig.poll()) == 4
    assert not rig.nic.receive(small.frame).dropped
    rig2 = Rig(cq_log2=2, pay_buf_log2=10, max_frame_len=9000)
    rig2.post_hdr(4)
    rig2.post_pay(8)
    for _ in range(2):
        assert not rig2.nic.receive(small.frame).dropped   # 2 entries left
    assert rig2.nic.receive(big.frame).drop_counter == 'RX_DROP_CQ_FULL'
    assert rig2.hw_idx(regs.RXQ_PAY_RING) == 2


def test_generation_bit_flips_on_wrap() -> None:
    rig = Rig(hdr_log2=1, pay_log2=1, cq_log2=2)    # CQ of 4 entries, buffer rings of 2
    seen = []
    for i in range(11):
        b = build(4, 'udp', 0, pattern(20 + i))
        rig.post_hdr()
        rig.post_pay()
        out = rig.nic.receive(b.frame)
        assert not out.dropped
        cq_idx = out.cq_indices[0]
        assert cq_idx == i
        raw = rig.host.read(rig.bases[regs.RXQ_CQ] + 16 * (i % 4), 16)
        gen = RxCompletion.unpack(raw).gen
        assert gen == 1 - ((i // 4) % 2)           # dma-formats.md: 1 on the first pass
        cpls = rig.poll()
        assert len(cpls) == 1 and cpls[0].pay_len == 20 + i
        seen.append(gen)
    assert seen == [1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1]
    assert rig.poll() == []                        # stale entries are not taken as new
    assert rig.hw_idx(regs.RXQ_CQ) == 11 and rig.hw_idx(regs.RXQ_PAY_RING) == 11


def test_indices_wrap_at_16_bits() -> None:
    rig = Rig(hdr_log2=1, pay_log2=1, cq_log2=1)
    for ring in (regs.RXQ_HDR_RING, regs.RXQ_PAY_RING, regs.RXQ_CQ):
        q = rig.nic.rxq[0]
        r = {regs.RXQ_HDR_RING: q.hdr_ring, regs.RXQ_PAY_RING: q.pay_ring,
             regs.RXQ_CQ: q.cq}[ring]
        r.sw_idx = r.hw_idx = r.fetch_idx = 0xFFFF
        rig.sw[ring] = 0xFFFF
    for _ in range(2):
        rig.post_hdr()
        rig.post_pay()
        b = build(4, 'tcp', 0, pattern(5))
        assert not rig.nic.receive(b.frame).dropped
        assert len(rig.poll()) == 1
    assert rig.hw_idx(regs.RXQ_CQ) == 1 and rig.hw_idx(regs.RXQ_PAY_RING) == 1


# --- bad descriptors and DMA errors -------------------------------------------------------------

def test_misaligned_descriptor_skipped() -> None:
    b = build(4, 'tcp', 0, pattern(100))
    rig = Rig()
    rig.post_hdr()
    good_addr = rig.dmabuf.offset_to_bus(0)
    rig.post(regs.RXQ_PAY_RING, addr=good_addr + 4096 + 4)     # not 8-byte aligned
    assert rig.counters()['RX_DESC_ERR'] == 1, 'counted when fetched'
    assert rig.hw_idx(regs.RXQ_PAY_RING) == 1, 'consumed without being used'
    good_id = rig.post(regs.RXQ_PAY_RING, addr=good_addr)
    rig.nic.receive(b.frame)
    cpls = rig.poll()
    assert cpls[0].pay_buf_id == good_id
    assert rig.hw_idx(regs.RXQ_PAY_RING) == 2
    rig.only(RX_FRAMES=1, RX_DESC_ERR=1)
    assert rig.dev.gpu.read(good_addr + 4096, 200) == bytes(200)


def test_bad_descriptor_turns_into_no_buffer_drop() -> None:
    b = build(4, 'tcp', 0, pattern(3000))
    rig = Rig(pay_buf_log2=10, max_frame_len=9000)
    rig.post_hdr()
    rig.post_pay(1)
    rig.post(regs.RXQ_PAY_RING, addr=rig.dmabuf.offset_to_bus(8192) + 1)
    rig.post_pay(1)
    out = rig.nic.receive(b.frame)                  # 3 posted, 2 good
    assert out.drop_counter == 'RX_DROP_NO_PAY_BUF'
    rig.only(RX_DROP_NO_PAY_BUF=1, RX_DESC_ERR=1)
    assert rig.hw_idx(regs.RXQ_PAY_RING) == 1     # a count: the skipped one is consumed
    rig.post_pay(1)
    assert not rig.nic.receive(b.frame).dropped
    assert rig.hw_idx(regs.RXQ_PAY_RING) == 4
    assert [c.pay_buf_id for c in rig.poll()] == [2, 4, 5]


def test_misaligned_header_descriptor() -> None:
    b = build(4, 'tcp', 0, pattern(100))
    rig = Rig()
    rig.post_pay()
    rig.post(regs.RXQ_HDR_RING, addr=rig.host.alloc(256, 64) + 2)
    assert rig.nic.receive(b.frame).drop_counter == 'RX_DROP_NO_HDR_BUF'
    rig.only(RX_DESC_ERR=1, RX_DROP_NO_HDR_BUF=1)


def test_descriptor_read_error() -> None:
    b = build(4, 'tcp', 0, pattern(100))
    rig = Rig()
    rig.post_hdr()
    rig.bus.add_error_range(rig.bases[regs.RXQ_PAY_RING], 16)   # entry 0 answers SLVERR
    rig.post_pay(2)
    rig.nic.receive(b.frame)
    cpls = rig.poll()
    assert cpls[0].pay_buf_id == 3                 # ids: hdr 1, pay 2 (lost), pay 3
    rig.only(RX_FRAMES=1, RX_DMA_RD_ERR=1)


def test_dma_write_error_reported_not_fatal() -> None:
    b = build(4, 'tcp', 0, pattern(100))
    rig = Rig()
    rig.post_hdr(2)
    bad_id = rig.post(regs.RXQ_PAY_RING, addr=UNMAPPED)
    out = rig.nic.receive(b.frame)
    assert not out.dropped and out.dma_write_errors == 1
    cpls = rig.poll()
    assert cpls[0].pay_buf_id == bad_id and cpls[0].pay_len == 100
    rig.only(RX_FRAMES=1, RX_DMA_WR_ERR=1)
    rig.post_pay()
    assert not rig.nic.receive(b.frame).dropped
    assert rig.read_frame(rig.poll())[1] == pattern(100)
    rig.only(RX_FRAMES=2, RX_DMA_WR_ERR=1)


def test_dma_write_error_counts_bursts() -> None:
    """A 4 KiB payload to an unmapped buffer: 8-byte beats, 256 beats a burst: 2 bursts."""
    b = build(4, 'udp', 0, pattern(4096))
    rig = Rig(max_frame_len=9000)
    rig.post_hdr()
    rig.post(regs.RXQ_PAY_RING, addr=UNMAPPED)
    out = rig.nic.receive(b.frame)
    assert out.dma_write_errors == 2 and rig.counters()['RX_DMA_WR_ERR'] == 2


def test_payload_in_host_memory() -> None:
    """Only the posted address decides where payload lands."""
    b = build(6, 'tcp', 0, pattern(500))
    rig = Rig()
    rig.post_hdr()
    addr = rig.host.alloc(4096)
    rig.post(regs.RXQ_PAY_RING, addr=addr)
    rig.nic.receive(b.frame)
    rig.poll()
    assert rig.host.read(addr, 500) == pattern(500)


# --- queue control and registers -------------------------------------------------------------

def test_queue_off_and_disable_resets_indices() -> None:
    b = build(4, 'tcp', 0, pattern(10))
    rig = Rig()
    rig.post_hdr()
    rig.post_pay()
    rig.nic.receive(b.frame)
    assert rig.hw_idx(regs.RXQ_CQ) == 1
    rig.set_ctrl(False, True)
    for ring in (regs.RXQ_HDR_RING, regs.RXQ_PAY_RING, regs.RXQ_CQ):
        assert rig.hw_idx(ring) == 0
    assert rig.nic.receive(b.frame).drop_counter == 'RX_DROP_QUEUE_OFF'
    rig.only(RX_FRAMES=1, RX_DROP_QUEUE_OFF=1)


def test_mmio_identity_and_reset_values() -> None:
    rig = Rig(split=False, enable=False)
    nic = NicModel(rig.bus, num_rxq=2, parse_bytes=128, dma_bytes=16, data_bytes=32)
    assert nic.mmio_read(regs.ID) == 0x444D4E43
    assert nic.mmio_read(regs.VERSION) == 0x0000_0003
    assert nic.mmio_read(regs.CAPS) == 32 | (16 << 8) | (2 << 16) | (128 << 24)
    assert nic.mmio_read(regs.RX_FRAME_LIMIT) == 0x5F2
    assert nic.mmio_read(regs.rxq_reg(1, regs.RXQ_BUF_SIZE)) == 0x100 | (12 << 16) | (6 << 20)
    assert nic.mmio_read(regs.rxq_reg(1, regs.RXQ_COALESCE)) == (1 << 16) | (16 << 24)
    assert nic.mmio_read(regs.rxq_reg(1, regs.RXQ_CTRL)) == 0
    assert nic.mmio_read(regs.rxq_reg(2, regs.RXQ_BUF_SIZE)) == 0, 'queue 2 not implemented'
    assert nic.mmio_read(0x0FFC) == 0
    # rx-rules.md section 2: 128 bytes by default
    assert NicModel(rig.bus).mmio_read(regs.CAPS) >> 24 == 128


def test_mmio_ring_registers() -> None:
    rig = Rig()
    nic = rig.nic
    base_lo = regs.rxq_reg(0, regs.RXQ_CQ + regs.RING_BASE_LO)
    base_hi = regs.rxq_reg(0, regs.RXQ_CQ + regs.RING_BASE_HI)
    assert nic.mmio_read(base_lo) | (nic.mmio_read(base_hi) << 32) == rig.bases[regs.RXQ_CQ]
    assert nic.mmio_read(regs.rxq_reg(0, regs.RXQ_PAY_RING + regs.RING_SIZE)) == 4
    hw = regs.rxq_reg(0, regs.RXQ_CQ + regs.RING_HW_IDX)
    nic.mmio_write(hw, 5)                            # read-only
    assert nic.mmio_read(hw) == 0
    nic.mmio_write(regs.RX_FRAMES, 99)               # read-only counter
    assert nic.mmio_read(regs.RX_FRAMES) == 0
    nic.mmio_write(regs.rxq_reg(0, regs.RXQ_CTRL), 0b11)
    assert nic.mmio_read(regs.rxq_reg(0, regs.RXQ_CTRL)) == 0b11
    with pytest.raises(ValueError):
        nic.mmio_write(0x1002, 1)
    with pytest.raises(ValueError):
        nic.mmio_write(regs.RX_FRAME_LIMIT, 1 << 32)


def test_every_frame_counted_once() -> None:
    """Random mix of good, bad and unlucky frames: RX_FRAMES + drops == frames sent."""
    rng = random.Random(11)
    rig = Rig(hdr_log2=3, pay_log2=3, cq_log2=3, pay_buf_log2=11, max_frame_len=3000)
    bad = list(hdr_err_frames().values())
    sent = 0
    for i in range(300):
        # post only what the driver may: at most a ring's worth outstanding
        if rng.random() < 0.5 and rig.nic.rxq[0].hdr_ring.posted < 8:
            rig.post_hdr()
        if rng.random() < 0.6 and rig.nic.rxq[0].pay_ring.posted < 8:
            rig.post_pay()
        kind = rng.randrange(6)
        if kind == 0:
            frame = bytes(rng.randrange(1, 60))
        elif kind == 1:
            frame = rng.choice(bad)
        elif kind == 2:
            frame = bytes(rng.randrange(3001, 3200))
        else:
            b = build(rng.choice([4, 6]), rng.choice(['tcp', 'udp']), rng.randrange(3),
                      pattern(rng.choice(SIZES + [2500]), seed=i))
            frame = b.frame
        rig.nic.receive(frame, bad_fcs=rng.random() < 0.05)
        sent += 1
        if rng.random() < 0.7:
            for c in rig.poll():
                assert c.queue == 0
    assert rig.nic.frames_seen == sent
    c = rig.counters()
    assert sum(v for k, v in c.items() if k == 'RX_FRAMES' or k.startswith('RX_DROP_')) == sent
    assert c['RX_FRAMES'] > 0 and c['RX_DROP_CQ_FULL'] + c['RX_DROP_NO_PAY_BUF'] > 0
    rig.assert_writes_inside_posted()
    assert rig.dev.cpu_reads == 0


# --- the pure placement function -------------------------------------------------------------

def test_expected_placement_is_pure() -> None:
    b = build(6, 'tcp', 2, pattern(300))
    cfg = PlacementConfig(split_en=True, hds_thresh=0, hdr_buf_bytes=128, pay_buf_log2=7)
    pl = expected_placement(b.frame, cfg)
    assert pl.drop_counter is None and pl.split and not pl.hdr_overflow
    assert pl.flags == (1 << 2) | (1 << 3)                 # SPLIT | HDR_VALID
    assert pl.hdr_bytes == b.frame[:14 + 8 + 40 + 20]
    assert pl.payload_bytes == b.payload
    assert pl.n_pay_bufs == 3 and pl.n_completions == 3    # ceil(300 / 128)
    assert [len(p) for p in pl.payload_pieces()] == [128, 128, 44]
    cpls = pl.completions(hdr_buf_id=7, pay_buf_ids=[1, 2, 3], cq_idx=6, cq_size=8)
    assert [c.gen for c in cpls] == [1, 1, 0]
    assert [c.pay_buf_id for c in cpls] == [1, 2, 3]
    assert pl.parse is not None and pl.parse.vlan_tags == 2 and pl.parse.ip_end == len(b.frame)
    off = expected_placement(b.frame, PlacementConfig(enable=False))
    assert off.drop_counter == 'RX_DROP_QUEUE_OFF'
    assert expected_placement(bytes(10), cfg).drop_counter == 'RX_DROP_RUNT'
    assert expected_placement(b.frame, cfg, bad_fcs=True).drop_counter == 'RX_DROP_FCS'


@pytest.mark.parametrize('ipv, l4, tags, size', [(4, 'tcp', 0, 0), (6, 'udp', 1, 1),
                                                 (4, 'udp', 2, 65)])
def test_parse_offsets(ipv: int, l4: str, tags: int, size: int) -> None:
    b = build(ipv, l4, tags, pattern(size))
    p = parse_frame(b.frame)
    l3_off = 14 + 4 * tags
    l4_off = l3_off + (20 if ipv == 4 else 40)
    assert (p.l3_off, p.l4_off, p.pay_off) == (l3_off, l4_off, b.hdr_len)
    assert p.ip_end == b.hdr_len + size
    assert not p.hdr_err and p.vlan_tags == tags


def test_parser_never_raises_on_random_bytes() -> None:
    """Hostile input: random bytes behind every EtherType the parser knows, any length."""
    rng = random.Random(2)
    heads = [b'\x08\x00\x45', b'\x08\x00\x4f', b'\x86\xdd\x60', b'\x81\x00\x00\x01\x08\x00\x45',
             b'\x88\xa8\x00\x01\x81\x00\x00\x02\x86\xdd\x60', b'\x08\x06']
    for _ in range(3000):
        head = bytes(12) + rng.choice(heads)
        frame = head + bytes(rng.randrange(256) for _ in range(rng.randrange(0, 120)))
        frame = frame[:rng.randrange(len(frame) + 1)]
        for pb in (64, 128, 255):
            p = parse_frame(frame, pb)
            if p.pay_off is not None:
                assert p.ip_end is not None and p.pay_off <= p.ip_end <= len(frame)


@pytest.mark.parametrize('case', ['qinq-ipv6-empty-hop-by-hop', 'ipv6-hop-dst-at-end'])
def test_parser_reads_zeros_past_the_frame(case: str) -> None:
    """Headers that end exactly at the frame's end, so the parser's next read falls past it:
    those bytes read as zero (rx-rules.md section 2) and the frame is a header error, never a
    crash. Found by review: both frames are 62 bytes long."""
    from scapy.all import IPv6ExtHdrDestOpt
    if case == 'qinq-ipv6-empty-hop-by-hop':
        frame = bytes(Ether(**MAC) / Dot1AD(vlan=1) / Dot1Q(vlan=2) / IPv6(**IP6, nh=0, plen=0))
    else:
        frame = bytes(Ether(**MAC) / IPv6(**IP6, plen=8) / IPv6ExtHdrHopByHop(nh=60))
    assert len(frame) == 62
    res = parse_frame(frame)
    assert res.hdr_err
