"""The driver's TSO send (`TxQueue.xmit_tso`, docs/tx.md "TCP segmentation offload") on the
model with TSO: the descriptors, context entry and seed it posts make the NIC send exactly
the golden model's segments (`models.tso.tso_segments`), which tests/model/test_tso_model.py
holds to scapy-built frames; one completion per send with `tso_segs`. The payload is in
device memory at an odd address across 4 KiB pages; the header in host memory."""
from __future__ import annotations

import asyncio

import pytest

from driver.backends.model import ModelHw
from driver.tx_queue import (NetdevTx, TxFrameError, TxQueue, TxQueueConfig, TxTso,
                             split_at_pages)
from models.formats import TX_TSO_MAX_SEGS, TxDesc, TxStatus, TxTsoCtx
from models.tso import tso_segments
from tests.model.test_tso_model import header, l3_offset, l4_offset, pattern


def run(coro) -> None:
    asyncio.run(coro)


async def _queue(log2: int = 6) -> tuple[ModelHw, TxQueue]:
    hw = ModelHw()
    hw.nic.tx.tso = True              # the NIC of docs/tx.md with TSO (the RTL has none yet)
    q = TxQueue(hw, 0, TxQueueConfig(ring_log2=log2))
    await q.alloc_tx_rings()
    await q.enable()
    return hw, q


@pytest.mark.parametrize('ipv, vlan, size, mss', [(4, 0, 65160, 1448), (6, 5, 20000, 8928),
                                                   (4, 5, 1, 536)])
def test_xmit_tso_sends_the_golden_segments(ipv: int, vlan: int, size: int, mss: int) -> None:
    async def body() -> None:
        hw, q = await _queue()
        hw.nic.tx.max_frame_len = 9100
        hdr = header(ipv, vlan, 'PA')
        payload = pattern(size, 5)
        hbuf = hw.host.alloc(4096)
        hw.host.write(hbuf, hdr)
        pay = hw.dev.base + 0x10_0000 + 0x7FD
        hw.dev.gpu.write(pay, payload)
        tso = TxTso(mss=mss, hdr_len=len(hdr), l3_offset=l3_offset(vlan),
                    csum_start=l4_offset(ipv, vlan), ipv6=ipv == 6)
        assert await q.xmit_tso([(hbuf, len(hdr)), (pay, size)], tag=11, tso=tso) == NetdevTx.OK
        (d,) = await q.clean_tx_irq()
        first = TxDesc(addr=0, len=0, tso=True, csum=True, csum_start=tso.csum_start,
                       csum_offset=16)
        ctx = TxTsoCtx(mss=mss, hdr_len=len(hdr), l3_offset=tso.l3_offset, ipv6=tso.ipv6)
        want = tso_segments(hdr + payload, first, ctx)
        assert hw.wire.tx_frames == want
        assert (d.status, d.tag, d.len, d.tso_segs) == (TxStatus.OK, 11, size, len(want))
        # its descriptors and the context entry, all freed
        assert d.ndesc == len(split_at_pages([(hbuf, len(hdr)), (pay, size)])) + 1
        assert q.in_flight == 0
    run(body())


def test_xmit_tso_refuses_too_many_descriptors_and_bad_send_is_counted() -> None:
    async def body() -> None:
        hw, q = await _queue()
        segs = [(hw.dev.base + 0x1000 * i, 100) for i in range(TX_TSO_MAX_SEGS + 1)]
        with pytest.raises(TxFrameError, match='at most 18'):
            await q.xmit_tso(segs, tag=1, tso=TxTso(1448, 54, 14, 34))
        # mss below 88: the NIC answers TSO_BAD_MSS, sends nothing
        hdr = header(4, 0, 'A', opts=[])
        hbuf = hw.host.alloc(4096)
        hw.host.write(hbuf, hdr + pattern(500))
        await q.xmit_tso([(hbuf, len(hdr) + 500)], tag=2, tso=TxTso(80, 54, 14, 34))
        (d,) = await q.clean_tx_irq()
        assert (d.status, d.tso_segs) == (TxStatus.TSO_BAD_MSS, 0)
        assert hw.wire.tx_frames == [] and hw.nic.tx.counters['TX_ERR_TSO_MSS'] == 1
    run(body())
