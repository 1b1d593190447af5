"""The register map seen from both sides: the RTL register block generated from
rtl/csr/nic_csr.rdl and the Python constants in driver/regs.py generated from the same file.

The cocotb tests below run inside the simulator; the pytest functions at the bottom build
and run them.
"""
from __future__ import annotations

import random
import subprocess
import sys

import cocotb
import pytest

from driver import regs
from tb.nic_tb import NicTb
from tb.sim import REPO_ROOT, pytest_test_name, rtl_file_list, run_rtl_test

# Per-queue RW registers the driver programs, with values that are not the reset value and
# that set every writable bit somewhere (enable stays 0 so the queue does not start).
RXQ_RW = [
    (regs.RXQ_CTRL, regs.RXQ_CTRL_SPLIT_EN.put(1)),
    (regs.RXQ_HDS_THRESH, 0x0000_1234),
    (regs.RXQ_BUF_SIZE, 0x000A_0400),
    (regs.RXQ_IRQ, regs.RXQ_IRQ_ARM.put(1)),
    (regs.RXQ_HDR_RING + regs.RING_BASE_LO, 0xDEAD_BEE0),
    (regs.RXQ_HDR_RING + regs.RING_BASE_HI, 0x0000_0042),
    (regs.RXQ_HDR_RING + regs.RING_SIZE, 0x0000_0007),
    (regs.RXQ_HDR_RING + regs.RING_SW_IDX, 0x0000_0101),
    (regs.RXQ_PAY_RING + regs.RING_BASE_LO, 0x0BAD_F000),
    (regs.RXQ_PAY_RING + regs.RING_BASE_HI, 0xFFFF_FFFF),
    (regs.RXQ_PAY_RING + regs.RING_SIZE, 0x0000_000F),
    (regs.RXQ_PAY_RING + regs.RING_SW_IDX, 0x0000_ABCD),
    (regs.RXQ_CQ + regs.RING_BASE_LO, 0x1234_5670),
    (regs.RXQ_CQ + regs.RING_BASE_HI, 0x0000_0001),
    (regs.RXQ_CQ + regs.RING_SIZE, 0x0000_0001),
    (regs.RXQ_CQ + regs.RING_SW_IDX, 0x0000_FFFF),
]

# RSS and steering registers, absolute address and value.
GLOBAL_RW = [
    (regs.RSS_CTRL, 0x0000_003F),
    (regs.RSS_KEY_BASE, 0x6D5A_56DA),
    (regs.RSS_KEY_BASE + 9 * regs.RSS_KEY_STRIDE, 0x6A42_B73B),
    (regs.RSS_INDIR_BASE, 0x0302_0100),
    (regs.RSS_INDIR_BASE + 31 * regs.RSS_INDIR_STRIDE, 0x0706_0504),
    (regs.STEER_BASE + regs.STEER_CTRL, 0xFF06_F601),
    (regs.STEER_BASE + 31 * regs.STEER_STRIDE + regs.STEER_QUEUE, 0x0000_0007),
    (regs.STEER_BASE + 31 * regs.STEER_STRIDE + regs.STEER_PORTS, 0x1451_9C41),
    (regs.STEER_BASE + 31 * regs.STEER_STRIDE + regs.STEER_SRC_ADDR + 12, 0x2001_0DB8),
]


@cocotb.test()
async def run_csr_map(dut) -> None:
    tb = NicTb(dut, cocotb.RANDOM_SEED)
    await tb.reset()

    assert regs.ID_MAGIC.get(await tb.read32(regs.ID)) == 0x444D4E43
    caps = await tb.read32(regs.CAPS)
    assert regs.CAPS_DATA_BYTES.get(caps) == tb.data_bytes
    assert regs.CAPS_DMA_BYTES.get(caps) == tb.dma_bytes
    assert regs.CAPS_NUM_RXQ.get(caps) == int(dut.NUM_RXQ.value)
    assert regs.CAPS_PARSE_BYTES.get(caps) == int(dut.PARSE_BYTES.value)

    # Reset values documented in the RDL.
    assert regs.RX_FRAME_LIMIT_MAX_FRAME_LEN.get(await tb.read32(regs.RX_FRAME_LIMIT)) == 1522
    bufsz = await tb.read32(regs.rxq_reg(0, regs.RXQ_BUF_SIZE))
    assert regs.RXQ_BUF_SIZE_HDR_BUF_BYTES.get(bufsz) == 256
    assert regs.RXQ_BUF_SIZE_PAY_BUF_LOG2.get(bufsz) == 12

    # Every RW register holds what was written, at the address Python computes, and writing one
    # queue register does not touch another (catches overlapping decode).
    for q in (0, regs.RXQ_MAX - 1):
        for off, val in RXQ_RW:
            await tb.write32(regs.rxq_reg(q, off), val)
        for off, val in RXQ_RW:
            got = await tb.read32(regs.rxq_reg(q, off))
            assert got == val, f"RXQ[{q}]+0x{off:02x}: wrote 0x{val:08x}, read 0x{got:08x}"

    for addr, val in GLOBAL_RW:
        await tb.write32(addr, val)
    for addr, val in GLOBAL_RW:
        got = await tb.read32(addr)
        assert got == val, f"0x{addr:04x}: wrote 0x{val:08x}, read 0x{got:08x}"

    # Ring bases are 16-byte aligned: the low four bits read as zero whatever is written.
    await tb.write32(regs.rxq_reg(1, regs.RXQ_CQ + regs.RING_BASE_LO), 0x1234_567F)
    assert await tb.read32(regs.rxq_reg(1, regs.RXQ_CQ + regs.RING_BASE_LO)) == 0x1234_5670

    # Counters start at zero.
    for name in ("RX_FRAMES", "RX_DROP_RUNT", "RX_DROP_FCS", "RX_DESC_ERR"):
        assert await tb.read32(getattr(regs, name)) == 0, name


def _field_mask(prefix: str) -> int:
    """Writable bits of a register: the OR of its fields in driver/regs.py (generated from the
    RDL, independently of the hand-written tables in rtl/rss/)."""
    return sum(v.mask for k, v in vars(regs).items()
               if k.startswith(prefix) and isinstance(v, regs.Field))


def table_layout() -> dict[int, int]:
    """Every word of the external tables (RSS_KEY, RSS_INDIR, STEER): absolute address ->
    mask of the bits that hold what is written (0: reads as zero, ignores writes)."""
    words: dict[int, int] = {}
    for i in range(regs.RSS_KEY_MAX):
        words[regs.RSS_KEY_BASE + i * regs.RSS_KEY_STRIDE] = _field_mask("RSS_KEY_WORD")
    for j in range(regs.RSS_INDIR_MAX):
        words[regs.RSS_INDIR_BASE + j * regs.RSS_INDIR_STRIDE] = _field_mask("RSS_INDIR_ENTRY")
    rule: dict[int, int] = {off: 0 for off in range(0, regs.STEER_STRIDE, 4)}
    rule[regs.STEER_CTRL] = _field_mask("STEER_CTRL_")
    rule[regs.STEER_QUEUE] = _field_mask("STEER_QUEUE_")
    rule[regs.STEER_PORTS] = _field_mask("STEER_PORTS_")
    rule[regs.STEER_PORT_MASK] = _field_mask("STEER_PORT_MASK_")
    for name in ("SRC_ADDR", "SRC_MASK", "DST_ADDR", "DST_MASK"):
        base, stride = getattr(regs, f"STEER_{name}"), getattr(regs, f"STEER_{name}_STRIDE")
        for w in range(getattr(regs, f"STEER_{name}_MAX")):
            rule[base + w * stride] = _field_mask(f"STEER_{name}_WORD")
    for r in range(regs.STEER_MAX):
        for off, mask in rule.items():
            words[regs.STEER_BASE + r * regs.STEER_STRIDE + off] = mask
    return words


@cocotb.test()
async def run_csr_tables(dut) -> None:
    """RSS key, RSS table and steering rules (external registers held in rtl/rss/ tables):
    reset to zero, every word holds its own value (no two words alias), reserved bits read as
    zero, byte enables are honoured, and the neighbouring RSS_CTRL is untouched."""
    tb = NicTb(dut, cocotb.RANDOM_SEED)
    await tb.reset()
    rng = random.Random(cocotb.RANDOM_SEED)
    words = table_layout()
    assert regs.RSS_CTRL not in words
    await tb.write32(regs.RSS_CTRL, 0x15)
    for addr in words:
        got = await tb.read32(addr)
        assert got == 0, f"0x{addr:04x}: reset value 0x{got:08x}, expected 0"
    written = {addr: rng.getrandbits(32) for addr in words}
    for addr, val in written.items():
        await tb.write32(addr, val)
    for addr, val in written.items():
        got = await tb.read32(addr)
        want = val & words[addr]
        assert got == want, f"0x{addr:04x}: wrote 0x{val:08x}, read 0x{got:08x}, expected 0x{want:08x}"
    # Byte enables: a one-byte write changes only that byte.
    for addr in (regs.RSS_KEY_BASE + 4, regs.RSS_INDIR_BASE + 8, regs.STEER_BASE + regs.STEER_PORTS,
                 regs.STEER_BASE + 31 * regs.STEER_STRIDE + regs.STEER_DST_MASK + 12):
        await tb.axil.write(addr + 2, b"\xa5")
        want = ((written[addr] & ~0x00FF_0000) | 0x00A5_0000) & words[addr]
        got = await tb.read32(addr)
        assert got == want, f"0x{addr:04x}: byte write gave 0x{got:08x}, expected 0x{want:08x}"
    assert await tb.read32(regs.RSS_CTRL) == 0x15


@pytest.mark.rtl
@pytest.mark.parametrize("data_w", [64, 512])
def test_csr_map(data_w: int) -> None:
    run_rtl_test("nic_top", rtl_file_list(), "tests.rtl.test_csr", {"DATA_W": data_w}, pytest_test_name())


def test_generated_files_up_to_date() -> None:
    """driver/regs.py, docs/registers.md and the RTL register block match the RDL."""
    res = subprocess.run([sys.executable, str(REPO_ROOT / "scripts/gen_regs.py"), "--check"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr + res.stdout
