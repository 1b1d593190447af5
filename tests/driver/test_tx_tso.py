"""The driver's TSO send (`TxQueue.xmit_tso`, docs/tx.md "TCP segmentation offload") on the
model with TSO: the TSO scenarios of tests/driver/tso_scenarios.py (the ring call with and
without VLAN against scapy-built segments; devmem TCP streams over TSO and TSO6, switched
off and on, against the golden model frame by frame), and the ring call's refusals."""
from __future__ import annotations

import asyncio

import pytest

from driver.backends.model import ModelHw
from driver.tx_queue import TxFrameError, TxQueue, TxQueueConfig, TxTso
from models.formats import TX_TSO_MAX_SEGS, TxStatus
from tb.scenario import ModelEnv
from tests.driver.scenarios import Scenario
from tests.driver.tso_scenarios import TSO_SCENARIOS
from tests.model.test_tso_model import header, pattern


def run(coro) -> None:
    asyncio.run(coro)


async def _queue(log2: int = 6) -> tuple[ModelHw, TxQueue]:
    hw = ModelHw()
    hw.nic.tx.tso = True              # the NIC of docs/tx.md with TSO (as the RTL)
    q = TxQueue(hw, 0, TxQueueConfig(ring_log2=log2))
    await q.alloc_tx_rings()
    await q.enable()
    return hw, q


@pytest.mark.parametrize('scenario', TSO_SCENARIOS, ids=lambda s: s.name)
def test_tso_scenario(scenario: Scenario) -> None:
    """The TSO scenarios (tests/driver/tso_scenarios.py; the same code runs on nic_top in
    tests/driver/test_tso_rtl.py) on the model with TSO."""
    run(scenario.func(ModelEnv(seed=7, tso=True)))


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
