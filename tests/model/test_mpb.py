"""Multi-packet payload buffers and completion batching in the golden model, against
docs/rx-rules.md ("Multi-packet payload buffers", section 4; section 5) and the completion's
`pay_off` (docs/dma-formats.md).

Expectations are reasoned from the rules: a payload of P bytes takes ceil(P / S) strides of
S bytes; it goes into the rest of the current buffer when it fits, else it starts fresh
buffers at offset 0; only new buffers count for RX_DROP_NO_PAY_BUF.
"""
from __future__ import annotations

import pytest

from driver import regs
from models.formats import RxCompletion
from models.nic_model import MpbCursor, mpb_stride_log2
from tests.model.test_nic_model import Rig, build, pattern


def mpb_rig(stride_log2: int = 4, pay_buf_log2: int = 12, **kw) -> Rig:
    rig = Rig(pay_buf_log2=pay_buf_log2, **kw)
    rig.wr(regs.rxq_reg(0, regs.RXQ_BUF_SIZE),
           regs.RXQ_BUF_SIZE_HDR_BUF_BYTES.put(rig.hdr_buf_bytes)
           | regs.RXQ_BUF_SIZE_PAY_BUF_LOG2.put(pay_buf_log2)
           | regs.RXQ_BUF_SIZE_PAY_STRIDE_LOG2.put(stride_log2))
    rig.wr(regs.rxq_reg(0, regs.RXQ_CTRL), regs.RXQ_CTRL_ENABLE.put(1)
           | regs.RXQ_CTRL_SPLIT_EN.put(1) | regs.RXQ_CTRL_PAY_MPB.put(1))
    return rig


def read_payload(rig: Rig, c: RxCompletion, stride: int) -> bytes:
    addr, size = rig.bufs[(regs.RXQ_PAY_RING, c.pay_buf_id)]
    assert c.pay_off * stride + c.pay_len <= size
    return rig.dev.gpu.read(addr + c.pay_off * stride, c.pay_len)


@pytest.mark.parametrize('buf_log2, setting, want', [
    (12, 6, 6), (12, 4, 4), (12, 0, 4), (12, 3, 4), (12, 15, 12), (15, 4, 7), (15, 9, 9),
    (13, 4, 5), (3, 4, 3)])
def test_stride_clamp(buf_log2: int, setting: int, want: int) -> None:
    """s = min(pay_buf_log2, max(4, pay_buf_log2 - 8, pay_stride_log2))."""
    assert mpb_stride_log2(buf_log2, setting) == want


def test_small_payloads_share_a_page() -> None:
    """64-byte frames (10 payload bytes) take one 16-byte stride each: 256 per 4 KiB page,
    the 257th starts the next page at offset 0."""
    rig = mpb_rig(stride_log2=4, cq_log2=10, hdr_log2=10, pay_log2=2)
    rig.post_hdr(300)
    pages = rig.post_pay(2)
    frames = [build(4, 'tcp', 0, pattern(10, seed=i)) for i in range(257)]
    for i, b in enumerate(frames):
        out = rig.nic.receive(b.frame)
        assert not out.dropped and out.pay_offs == [i % 256]
    cpls = rig.poll()
    assert [(c.pay_buf_id, c.pay_off, c.pay_len) for c in cpls] == \
        [(pages[0], i, 10) for i in range(256)] + [(pages[1], 0, 10)]
    for c, b in zip(cpls, frames):
        assert c.sop and c.eop and read_payload(rig, c, 16) == b.payload
    assert rig.hw_idx(regs.RXQ_PAY_RING) == 2, 'two payload descriptors consumed'
    rig.assert_writes_inside_posted()
    assert rig.dev.cpu_reads == 0


def test_payload_rounds_up_to_strides_and_gaps_untouched() -> None:
    rig = mpb_rig(stride_log2=6)                            # 64-byte strides
    rig.post_hdr(3)
    page, = rig.post_pay(1)
    addr, _ = rig.bufs[(regs.RXQ_PAY_RING, page)]
    rig.dev.gpu.fill(addr, 4096, 0xA5)
    sizes = [1, 64, 65]                                     # 1, 1 and 2 strides
    for i, n in enumerate(sizes):
        rig.nic.receive(build(4, 'tcp', 0, pattern(n, seed=i)).frame)
    cpls = rig.poll()
    assert [c.pay_off for c in cpls] == [0, 1, 2]
    page_bytes = rig.dev.gpu.read(addr, 4096)
    assert page_bytes[1:64] == b'\xa5' * 63, 'the rest of a stride is not written'
    assert page_bytes[128 + 65:] == b'\xa5' * (4096 - 128 - 65)
    assert rig.bus.writes[1] == (addr, 1)                   # header, then exactly the payload


def test_frame_that_does_not_fit_starts_a_new_buffer() -> None:
    rig = mpb_rig(stride_log2=4, pay_buf_log2=10)           # 1 KiB buffers, 64 strides
    rig.post_hdr(5)
    a, b_, c_ = rig.post_pay(3)
    rig.nic.receive(build(4, 'tcp', 0, pattern(1000)).frame)   # 63 strides of a
    rig.nic.receive(build(4, 'tcp', 0, pattern(16)).frame)     # the last stride of a
    rig.nic.receive(build(4, 'tcp', 0, pattern(17)).frame)     # does not fit: b at 0
    rig.nic.receive(build(4, 'tcp', 0, pattern(992)).frame)    # 2 strides used: 992 fits
    cpls = rig.poll()
    assert [(c.pay_buf_id, c.pay_off) for c in cpls] == [(a, 0), (a, 63), (b_, 0), (b_, 2)]
    assert rig.hw_idx(regs.RXQ_PAY_RING) == 2
    out = rig.nic.receive(build(4, 'tcp', 0, pattern(1)).frame)
    assert [d.buf_id for d in out.pay_bufs] == [c_] and out.pay_offs == [0]


def test_multi_buffer_frame_then_packing_after_its_last_piece() -> None:
    payload = pattern(2500, seed=3)
    rig = mpb_rig(stride_log2=5, pay_buf_log2=10, max_frame_len=9000)
    rig.post_hdr(3)
    ids = rig.post_pay(4)
    rig.nic.receive(build(4, 'tcp', 0, pattern(10)).frame)      # ids[0] at 0
    big = build(4, 'tcp', 0, payload)
    out = rig.nic.receive(big.frame)                            # 3 fresh buffers
    assert [d.buf_id for d in out.pay_bufs] == ids[1:4] and out.pay_offs == [0, 0, 0]
    small = build(4, 'tcp', 0, pattern(40, seed=4))
    out = rig.nic.receive(small.frame)                          # after 452 bytes = 15 strides
    assert [d.buf_id for d in out.pay_bufs] == [ids[3]] and out.pay_offs == [15]
    cpls = rig.poll()
    assert [c.pay_len for c in cpls] == [10, 1024, 1024, 452, 40]
    got = b''.join(read_payload(rig, c, 32) for c in cpls[1:4])
    assert got == payload and read_payload(rig, cpls[4], 32) == small.payload


def test_fitting_frame_needs_no_payload_descriptor() -> None:
    rig = mpb_rig()
    rig.post_hdr(3)
    rig.post_pay(1)
    assert not rig.nic.receive(build(4, 'tcp', 0, pattern(10)).frame).dropped
    assert not rig.nic.receive(build(4, 'tcp', 0, pattern(10)).frame).dropped, \
        'no payload descriptor posted, but the payload fits the current buffer'
    rig.only(RX_FRAMES=2)


def test_drop_leaves_the_cursor() -> None:
    rig = mpb_rig(cq_log2=1)                               # two completion entries
    rig.post_hdr(4)
    page, = rig.post_pay(1)
    rig.nic.receive(build(4, 'tcp', 0, pattern(20)).frame)    # 2 strides
    rig.nic.receive(build(4, 'tcp', 0, pattern(20)).frame)    # 2 more
    assert rig.nic.receive(build(4, 'tcp', 0, pattern(20)).frame).drop_counter == 'RX_DROP_CQ_FULL'
    assert [c.pay_off for c in rig.poll()] == [0, 2]
    out = rig.nic.receive(build(4, 'tcp', 0, pattern(5)).frame)
    assert out.pay_offs == [4] and out.pay_bufs[0].buf_id == page


def test_unsplit_frames_pack_whole() -> None:
    rig = mpb_rig(stride_log2=6)
    rig.set_ctrl(False, False)
    rig.wr(regs.rxq_reg(0, regs.RXQ_CTRL), regs.RXQ_CTRL_ENABLE.put(1) | regs.RXQ_CTRL_PAY_MPB.put(1))
    rig.post_pay(1)
    frames = [build(4, 'tcp', 0, pattern(n)) for n in (6, 100, 20)]     # 60, 154, 74 bytes
    for b in frames:
        rig.nic.receive(b.frame)
    cpls = rig.poll()
    assert [c.pay_off for c in cpls] == [0, 1, 4]
    assert [read_payload(rig, c, 64) for c in cpls] == [b.frame for b in frames]


def test_disable_forgets_the_current_buffer() -> None:
    rig = mpb_rig()
    rig.post_hdr(2)
    first, = rig.post_pay(1)
    rig.nic.receive(build(4, 'tcp', 0, pattern(10)).frame)
    rig.set_ctrl(False, True)
    rig.sw = {k: 0 for k in rig.sw}
    for ring in rig.sw:
        rig.doorbell(ring)
    rig.wr(regs.rxq_reg(0, regs.RXQ_CTRL), regs.RXQ_CTRL_ENABLE.put(1)
           | regs.RXQ_CTRL_SPLIT_EN.put(1) | regs.RXQ_CTRL_PAY_MPB.put(1))
    rig.post_hdr(1)
    second, = rig.post_pay(1)
    out = rig.nic.receive(build(4, 'tcp', 0, pattern(10)).frame)
    assert [d.buf_id for d in out.pay_bufs] == [second] and out.pay_offs == [0]


def test_off_by_default_and_registers_read_back() -> None:
    rig = Rig()
    rig.post_hdr(2)
    ids = rig.post_pay(2)
    for _ in range(2):
        rig.nic.receive(build(4, 'tcp', 0, pattern(10)).frame)
    assert [(c.pay_buf_id, c.pay_off) for c in rig.poll()] == [(ids[0], 0), (ids[1], 0)]
    co = regs.rxq_reg(0, regs.RXQ_COALESCE)
    rig.wr(co, regs.RXQ_COALESCE_USECS.put(8) | regs.RXQ_COALESCE_FRAMES.put(16)
           | regs.RXQ_COALESCE_FRAMES_MAX.put(99))
    assert rig.rd(co) == 8 | (16 << 16) | (16 << 24), 'frames_max is read-only'


def test_cursor_helper() -> None:
    cur = MpbCursor(buf_log2=12, stride_log2=6)
    assert not cur.fits(10), 'no current buffer yet'
    cur.start('page0', 100)
    assert cur.used == 2 and cur.fits(4096 - 128) and not cur.fits(4096 - 127)
    assert cur.place(65) == 2 and cur.used == 4
    assert not cur.fits(0), 'an empty payload takes no buffer'
