"""The standard register tests of the pyuvm register model (tb/uvm/reg_model.py, from
rtl/csr/nic_csr.rdl by peakrdl-pyuvm) against the RTL's CSR block on the fast harness (its
AXI4-Lite master is HDL, so ~100k register accesses take seconds): reset values, bit bash of
every read-write field, access policies (read-only, write-1-to-clear, words without a
register), each as a pyuvm sequence on the CSR agent, the NIC reset before each.
"""
from __future__ import annotations

import cocotb
import pytest
import pyuvm
from pyuvm import ConfigDB, uvm_env, uvm_test

from driver import regs as hw_regs
from tb.fast.fast_tb import FastNicTb
from tb.sim import pytest_test_name
from tb.uvm import reg_model
from tb.uvm.csr_agent import CsrAgent


class RegEnv(uvm_env):
    def build_phase(self) -> None:
        self.csr = CsrAgent("csr", self)


class RegTest(uvm_test):
    def build_phase(self) -> None:
        self.tb = FastNicTb(cocotb.top, cocotb.RANDOM_SEED)
        ConfigDB().set(None, "*", "csr_hw", self.tb)
        self.env = RegEnv("env", self)

    async def run_phase(self) -> None:
        self.raise_objection()
        await self.tb.reset()
        num_rxq = hw_regs.CAPS_NUM_RXQ.get(await self.tb.read32(hw_regs.CAPS))
        num_txq = hw_regs.TX_CAPS_NUM_TXQ.get(await self.tb.read32(hw_regs.TX_CAPS))
        regs, absent = reg_model.split_absent_queues(reg_model.registers(), num_rxq, num_txq)
        self.logger.info(f"{num_rxq} RX and {num_txq} TX queues: {len(absent)} registers of absent queues read as holes")
        n_rw = sum(1 for r in regs for f in r.fields if f.access == "RW" and not f.volatile)
        self.logger.info(f"register model: {len(regs)} registers, {n_rw} read-write fields")
        seqs = [reg_model.RegHwResetSeq("hw_reset", regs), reg_model.RegBitBashSeq("bit_bash", regs),
                reg_model.RegAccessSeq("access", regs, reg_model.holes(regs) + absent)]
        for seq in seqs:
            await self.tb.reset()
            await seq.start(self.env.csr.seqr)
            self.logger.info(f"{seq.get_name()}: {seq.checked} checks, {seq.accesses} accesses, passed")
        # Every register with a known reset value and every bit of every RW field was checked
        # (counted from the model, so a sequence that skipped registers fails here).
        want_reset = sum(1 for r in regs if r.reset_mask())
        want_bits = 2 * sum(f.bits for r in regs for f in r.fields if f.access == "RW" and not f.volatile)
        assert (seqs[0].checked, seqs[1].checked) == (want_reset, want_bits), \
            ([s.checked for s in seqs], want_reset, want_bits)
        assert want_reset > 200 and want_bits > 5_000 and seqs[2].checked > len(absent), [s.checked for s in seqs]
        self.drop_objection()


pyuvm.test()(RegTest)


@pytest.mark.rtl
def test_uvm_regs() -> None:
    from tb.fast.build import run_fast_test
    run_fast_test("tests.rtl.test_uvm_regs", {"DATA_W": 64}, pytest_test_name())
