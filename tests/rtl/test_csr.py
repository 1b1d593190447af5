"""The register map seen from both sides: the RTL register block generated from
rtl/csr/nic_csr.rdl and the Python constants in driver/regs.py generated from the same file.

The cocotb tests below run inside the simulator; the pytest functions at the bottom build
and run them.
"""
from __future__ import annotations

import importlib.util
import random
import subprocess
import sys
from dataclasses import dataclass

import cocotb
import pytest
from systemrdl.node import RegNode

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
    (regs.steer_type_reg(1, regs.STEER_TYPE_MASK), 0x00FF_2018),
    (regs.steer_type_reg(6, regs.STEER_TYPE_PORT_MASK), 0xFFFF_0F0F),
    (regs.STEER_ENTRY_CTRL, 0x0000_1103),
    (regs.STEER_ENTRY_ACTION, 0x03FF_1507),      # loc 1023, ctx_en, ctx 5, queue 7
    (regs.STEER_ENTRY_PORTS, 0x1451_9C41),
    (regs.steer_entry_src_reg(3), 0x2001_0DB8),
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
    ctx_caps = await tb.read32(regs.RSS_CTX_CAPS)          # docs/rss.md section 3a
    assert (regs.RSS_CTX_CAPS_CONTEXTS.get(ctx_caps), regs.RSS_CTX_CAPS_INDIR_ENTRIES.get(ctx_caps)) == (8, 128)

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


@dataclass(frozen=True)
class RegLayout:
    """What software sees at one register address, read from the RDL (not from the RTL)."""
    path: str
    rw_mask: int      # bits of plain read/write fields: read back what was written
    zero_mask: int    # bits outside every field: read as zero, ignore writes
    reset: int        # reset value of the read/write fields
    keep_zero: int    # read/write bits this test never sets (queue enables: no traffic here)


def rdl_layout() -> dict[int, RegLayout]:
    """Every register of rtl/csr/nic_csr.rdl, arrays unrolled: address -> RegLayout. Fields
    the hardware writes, write-1-to-clear fields and counters are neither rw nor zero (their
    value depends on the hardware), so only their neighbours are checked."""
    spec = importlib.util.spec_from_file_location("gen_regs", REPO_ROOT / "scripts" / "gen_regs.py")
    gen_regs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen_regs)
    top = gen_regs.compile_rdl()
    out: dict[int, RegLayout] = {}
    for node in top.descendants(unroll=True):
        if not isinstance(node, RegNode):
            continue
        rw = covered = reset = keep_zero = 0
        for f in node.fields():
            mask = ((1 << f.width) - 1) << f.lsb
            covered |= mask
            plain_rw = (f.get_property("sw").name == "rw" and f.get_property("onwrite") is None
                        and not f.get_property("counter"))
            if plain_rw:
                rw |= mask
                reset |= (f.get_property("reset") or 0) << f.lsb
                if f.inst_name == "enable" and node.parent.get_path().split(".")[1].startswith(("RXQ", "TXQ")):
                    keep_zero |= mask
        out[node.absolute_address] = RegLayout(node.get_path(), rw, 0xFFFF_FFFF & ~covered, reset, keep_zero)
    return out


@cocotb.test()
async def run_csr_every_register(dut) -> None:
    """Every register of the map, whether the generated block or a hand-written table behind
    it (RXQ_BLOCK, TXQ_BLOCK, RSS_BLOCK and STEER_BLOCK are external) holds it: reset value,
    every read/write field holds its own value (a distinct random value per register, so
    aliasing shows), bits outside fields read as zero, addresses without a register read as
    zero and ignore writes, and byte enables are honoured."""
    tb = NicTb(dut, cocotb.RANDOM_SEED)
    await tb.reset()
    rng = random.Random(cocotb.RANDOM_SEED)
    layout = rdl_layout()
    assert len(layout) > 350, f"only {len(layout)} registers found in the RDL"
    # Queues at or above CAPS.num_rxq / TX_CAPS.num_txq do not exist (the RDL's RXQ and TXQ
    # descriptions, models/nic_model.py): every word of theirs reads 0 and ignores writes.
    num_rxq = regs.CAPS_NUM_RXQ.get(await tb.read32(regs.CAPS))
    num_txq = regs.TX_CAPS_NUM_TXQ.get(await tb.read32(regs.TX_CAPS))
    assert 1 <= num_rxq <= regs.RXQ_MAX and 1 <= num_txq <= regs.TXQ_MAX, (num_rxq, num_txq)
    absent = [(regs.RXQ_BASE + q * regs.RXQ_STRIDE, regs.RXQ_STRIDE) for q in range(num_rxq, regs.RXQ_MAX)]
    absent += [(regs.TXQ_BASE + t * regs.TXQ_STRIDE, regs.TXQ_STRIDE) for t in range(num_txq, regs.TXQ_MAX)]
    for base, size in absent:
        for addr in [a for a in layout if base <= a < base + size]:
            layout[addr] = RegLayout(layout[addr].path + " (queue absent)", 0, 0xFFFF_FFFF, 0, 0)

    def check(addr: int, got: int, want_rw: int, what: str) -> None:
        lay = layout[addr]
        seen = got & (lay.rw_mask | lay.zero_mask)
        want = want_rw & lay.rw_mask
        assert seen == want, (f"{lay.path} @0x{addr:04x} {what}: read 0x{got:08x}, checked bits "
                              f"0x{seen:08x}, expected 0x{want:08x} (rw 0x{lay.rw_mask:08x}, zero 0x{lay.zero_mask:08x})")

    for addr, lay in layout.items():
        check(addr, await tb.read32(addr), lay.reset, "after reset")
    # Two passes, the second writing the complement: every read/write bit is seen at 0 and 1.
    first = {addr: rng.getrandbits(32) for addr in layout}
    for flip in (0, 0xFFFF_FFFF):
        written = {addr: (v ^ flip) & ~layout[addr].keep_zero for addr, v in first.items()}
        for addr, val in written.items():
            await tb.write32(addr, val)
        for addr, val in written.items():
            check(addr, await tb.read32(addr), val, f"after writing 0x{val:08x}")
    # Addresses that hold no register read as zero and ignore writes, inside the external
    # blocks too (their tables answer their own gaps): every word of RSS_BLOCK and of
    # STEER_BLOCK, of the first and last queue of RXQ_BLOCK and TXQ_BLOCK that is not a
    # register, and words just past each block. Then every register still holds what was
    # written (a gap write must not alias onto a register).
    spans = [(regs.RSS_CTRL, 0x180), (regs.STEER_CAPS, 0x100)]
    for base, stride, n in ((regs.RXQ_BASE, regs.RXQ_STRIDE, regs.RXQ_MAX),
                            (regs.TXQ_BASE, regs.TXQ_STRIDE, regs.TXQ_MAX)):
        spans += [(base, stride), (base + (n - 1) * stride, stride)]
    gaps = [a for base, n in spans for a in range(base, base + n, 4) if a not in layout]
    gaps += [regs.RXQ_BASE + 0x800, regs.RSS_CTRL + 0x180, regs.TXQ_BASE + 0x800,
             regs.STEER_CAPS + 0x100, 0x0018, 0x01B0, 0xFFFC]
    assert not set(gaps) & set(layout) and len(gaps) > 250, len(gaps)
    for addr in gaps:
        await tb.write32(addr, 0xFFFF_FFFF)
    for addr in gaps:
        got = await tb.read32(addr)
        assert got == 0, f"unmapped 0x{addr:04x} read 0x{got:08x} after writing all ones"
    for addr, val in written.items():
        check(addr, await tb.read32(addr), val, f"after writes to unmapped addresses (0x{val:08x} written)")
    # Byte enables: a one-byte write changes only that byte (generated and external registers).
    for addr in (regs.RX_FRAME_LIMIT, regs.RSS_KEY_BASE + 4, regs.RSS_INDIR_BASE + 8,
                 regs.STEER_ENTRY_PORTS, regs.steer_entry_dst_reg(3),
                 regs.steer_type_reg(3, regs.STEER_TYPE_MASK),
                 regs.rxq_reg(5, regs.RXQ_BUF_SIZE), regs.rxq_reg(7, regs.RXQ_CQ + regs.RING_BASE_HI),
                 regs.txq_reg(3, regs.TXQ_DESC_RING + regs.RING_BASE_LO)):
        await tb.axil.write(addr + 2, b"\xa5")
        check(addr, await tb.read32(addr), (written[addr] & ~0x00FF_0000) | 0x00A5_0000, "after a byte write")


@pytest.mark.rtl
@pytest.mark.parametrize("data_w", [64, 512])
def test_csr_map(data_w: int) -> None:
    run_rtl_test("nic_top", rtl_file_list(), "tests.rtl.test_csr", {"DATA_W": data_w}, pytest_test_name())


def test_generated_files_up_to_date() -> None:
    """driver/regs.py, docs/registers.md and the RTL register block match the RDL."""
    res = subprocess.run([sys.executable, str(REPO_ROOT / "scripts/gen_regs.py"), "--check"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr + res.stdout
