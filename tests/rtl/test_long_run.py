"""Long runs on the fast harness: more than 65,536 frames through one RX queue and one TX
queue, so every free-running 16-bit ring index (RX header, payload and completion rings;
TX descriptor and completion rings) wraps past 0xFFFF and every generation bit flips many
times, with every frame checked against the golden model (RX: completions byte for byte,
header and payload bytes, canaries; TX: every completion field and every byte on the wire).

Small frames keep it short (64 bytes on RX: 8 beats at 64 bits; 60 to 128 bytes on TX) and
the bulk loops keep Python per poll, not per beat: `bench.sim_speed_sim.bulk_rx` and
`tb.tx_env.bulk_tx`. An index that wraps wrong shows as a drop, a mismatched completion, a
GEN the driver does not expect (a stall) or a HW_IDX register that disagrees with the count
of entries consumed; tests/bugs/rx_cq_wrap.patch (the completion ring's fill level computed
without the 16-bit wrap: spurious RX_DROP_CQ_FULL after 65,536 completions) fails here and
nowhere else in `make test`.
"""
from __future__ import annotations

import cocotb
import pytest

from driver import regs
from tb.fast.fast_tb import FastNicTb
from tb.sim import pytest_test_name

WRAP = 1 << 16
RX_FRAMES = WRAP + 4_000        # past the wrap by more than a ring's worth (rings of 1024/2048)
TX_FRAMES = WRAP + 4_000


async def _hw_idx(tb, reg: int) -> int:
    return await tb.read32(reg + regs.RING_HW_IDX)


@cocotb.test()
async def run_rx_wrap(dut) -> None:
    """64-byte TCP frames (split: 54 header bytes, 10 payload bytes) back to back through RX
    queue 0: one header buffer, one payload buffer and one completion per frame, so all three
    rings' indices pass 65,535; no frame may be dropped and every HW_IDX must equal the number
    of entries used, modulo 2^16."""
    from bench.sim_speed_sim import bulk_rx

    tb = FastNicTb(dut, cocotb.RANDOM_SEED, record_writes=False)
    await tb.reset()
    res = await bulk_rx(tb, n_frames=RX_FRAMES, frame_bytes=64, fast=True, progress_s=10.0)
    assert res["checked"] == RX_FRAMES and res["drops"] == 0, res
    for name, ring in (("header", regs.RXQ_HDR_RING), ("payload", regs.RXQ_PAY_RING), ("completion", regs.RXQ_CQ)):
        hw = await _hw_idx(tb, regs.rxq_reg(0, ring))
        assert hw == RX_FRAMES % WRAP, f"RX {name} ring HW_IDX {hw}, want {RX_FRAMES} mod 2^16 = {RX_FRAMES % WRAP}"
    assert await tb.read32(regs.RX_FRAMES) == RX_FRAMES
    dut._log.info("RX wrap: %d frames in %d cycles (%.0f frames/s wall)", RX_FRAMES, res["cycles"],
                  res["frames_per_s"])


@cocotb.test()
async def run_tx_wrap(dut) -> None:
    """TCP/UDP over IPv4/IPv6 frames of 60..128 bytes (1 to 15 segments each, checksum
    offload, one in 16 a BAD_LEN frame) through TX queue 0 with 1024-entry rings: the
    descriptor index wraps several times, the completion index once, GEN flips 69 times."""
    from tb.tx_env import bulk_tx

    tb = FastNicTb(dut, cocotb.RANDOM_SEED)
    await tb.reset()
    res = await bulk_tx(tb, TX_FRAMES, seed=cocotb.RANDOM_SEED, progress_s=10.0)
    ring = res["ring"]
    assert res["completions"] == TX_FRAMES and res["descriptors"] > 2 * WRAP, res
    desc_hw, cq_hw = await ring.hw_idx()
    assert desc_hw == res["descriptors"] % WRAP, f"TX descriptor ring HW_IDX {desc_hw}, want {res['descriptors'] % WRAP}"
    assert cq_hw == TX_FRAMES % WRAP, f"TX completion ring HW_IDX {cq_hw}, want {TX_FRAMES % WRAP}"
    assert await tb.read32(regs.TX_FRAMES) == res["ok"]
    assert res["on_wire"] == res["ok"]
    dut._log.info("TX wrap: %d frames (%d descriptors, %d sent) in %d cycles, %.1f s", TX_FRAMES,
                  res["descriptors"], res["ok"], res["cycles"], res["wall_s"])


@pytest.mark.rtl
def test_long_run() -> None:
    from tb.fast.build import run_fast_test
    run_fast_test("tests.rtl.test_long_run", {"DATA_W": 64}, pytest_test_name())
