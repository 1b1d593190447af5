"""tb.tx_env.CplRingCheck (the TX completion-in-ring rule) on recorded writes, no simulator:
what it accepts (batches in order, the wrap to slot 0) and each way a write can be wrong.
tb.vcov.block_of: the block of nic_top a coverage point belongs to."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from models.bus import DmaAddressSpace
from tb import vcov
from tb.tx_env import CplRingCheck

BASE = 0x1000_0000


@dataclass
class Ring:
    t: int = 0
    cq_base: int = BASE + 0x40
    cq_log2: int = 2          # 4 slots: [BASE + 0x40, BASE + 0x80)
    cq_sw_idx: int = 0


def check_of(writes: list[tuple[int, int]], posted: int = 16, guard: int = 0) -> CplRingCheck:
    space = DmaAddressSpace(record_writes=True)
    chk = CplRingCheck(space, [Ring()], guard=guard)
    chk.expect(0, posted)
    space.writes.extend(writes)
    chk.scan()
    return chk


def slot(i: int) -> int:
    return BASE + 0x40 + 16 * i


def test_batches_in_order_and_the_wrap_pass() -> None:
    chk = check_of([(slot(0), 48), (slot(3), 16), (slot(0), 32), (slot(2), 32), (BASE + 0x2000, 64),
                    (slot(0), 8), (slot(0) + 8, 8), (slot(1), 8)])   # pieces of completions (64-bit beats)
    assert chk.checked == 9 and chk.written[0] == 9 and chk.part[0] == 8   # the write elsewhere is no completion


@pytest.mark.parametrize("writes,guard,msg", [
    ([(slot(2), 48)], 0, "not inside its completion ring"),                   # linearly past the end
    ([(slot(0), 48), (slot(3), 16), (slot(4), 16)], 128, "not inside"),        # just after the end: the guard
    ([(slot(1), 16)], 0, "writes slot 1 byte 0, the model expects completion 0 next, at slot 0 byte 0"),
    ([(slot(0), 64), (slot(1), 16)], 0, "expects completion 4 next, at slot 0"),   # slot 0 of lap 2 skipped
    ([(slot(0) + 8, 16)], 0, "writes slot 0 byte 8"),
    ([(slot(0), 24), (slot(2), 16)], 0, "expects completion 1 next, at slot 1 byte 8"),
    ([(slot(0), 64), (slot(0), 16)], 0, "only 0 frames are waiting"),
])
def test_wrong_writes_fail(writes, guard, msg) -> None:
    posted = 4 if "only 0" in msg else 16
    with pytest.raises(AssertionError, match=msg):
        check_of(writes, posted=posted, guard=guard)


def test_block_of() -> None:
    assert vcov.block_of("nic_top.u_tx.u_cpl", "/r/rtl/tx/tx_cpl_wr.sv") == "tx"
    assert vcov.block_of("nic_fast_top.u_node.u_nic.u_desc.u_eng", "/r/rtl/common/desc_engine.sv") == "rx"
    assert vcov.block_of("nic_top.u_*_fifo", "/r/rtl/rx/rx_frame_fifo.sv") == "rx"
    assert vcov.block_of("nic_top.u_*.u_wr", "/r/rtl/common/axi_dma_wr.sv") == "rx+tx"
    assert vcov.block_of("nic_top.u_csr", "/r/rtl/csr/generated/nic_csr.sv") == "shared"
    assert vcov.block_of("nic_top", "/r/rtl/top/nic_top.sv") == "shared"
    assert vcov.block_of("rx_classify.u_toe", "/r/rtl/rss/rss_toeplitz.sv") == "rx"     # a unit test's top
