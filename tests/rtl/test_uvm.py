"""The pyuvm environment (tb/uvm/) on nic_top: one constrained-random run per traffic
scenario (tb/uvm/scenarios/<name>.py: RX, TX or both at once) and parameter set, checked
frame by frame against the golden models, with functional coverage written after each run
(UCIS XML of the RX and TX covergroups, text and JSON reports in $FCOV_DIR, default
build/fcov/). UVM_FRAMES_SCALE scales every scenario's frame counts.
"""
from __future__ import annotations

import os
import random
from collections import deque
from pathlib import Path

import cocotb
import pytest
import pyuvm
from pyuvm import ConfigDB, uvm_test

from driver import regs
from driver.rx_queue import RxQueueConfig
from models.rss import Classifier
from tb import tx_env
from tb.nic_tb import NicTb, TrafficProfile
from tb.rx_env import MirrorHw, MultiQueueEnv, bring_up
from tb.sim import BUILD_ROOT, pytest_test_name, rtl_file_list, run_rtl_test
from tb.uvm import coverage as fcov
from tb.uvm import scenarios, starve
from tb.uvm.dma_agent import traffic_profile
from tb.uvm.env import NicEnv
from tb.uvm.sequences import NicConfigSeq, RandomTrafficSeq, make_flows
from tb.uvm import tx_agent
from tb.uvm.tx_agent import TxRandomSeq

QCFG = dict(hdr_ring_log2=5, pay_ring_log2=5, cq_log2=6)
TX_RING_LOG2 = 6          # 64 descriptors per TX queue in flight at most
TX_POOL_PAGES = 512       # one segment per page, reused round robin: more pages than 4 queues' rings hold


class RxRandomTest(uvm_test):
    """Constrained-random RX traffic of the scenario named by $UVM_SCENARIO."""

    def build_phase(self) -> None:
        dut = cocotb.top
        self.seed = int(os.environ.get("COCOTB_RANDOM_SEED", "0") or 0) or cocotb.RANDOM_SEED
        self.profile = scenarios.get(os.environ.get("UVM_SCENARIO", "mixed"))
        # The write slave is chosen here; the DMA agent sets the stalls in its connect phase.
        self.tb = NicTb(dut, self.seed, TrafficProfile(awready=traffic_profile(self.profile).awready))
        rng = random.Random(self.seed)
        nq = int(dut.NUM_RXQ.value)
        self.hw = MirrorHw(self.tb, Classifier(nq))
        db = ConfigDB()
        for key, value in {
            "tb": self.tb, "profile": self.profile, "rng": rng, "num_queues": nq,
            "flows": make_flows(self.profile, rng), "mac_rx_intent": deque(), "csr_hw": self.hw,
            "max_in_flight": 6 if self.profile.jumbo_rate else 12,
            "frames_scale": float(os.environ.get("UVM_FRAMES_SCALE", "1")),
            "tx_rng": random.Random(self.seed ^ 0x7E57),
        }.items():
            db.set(None, "*", key, value)
        self.env = NicEnv("env", self)

    async def run_phase(self) -> None:
        self.raise_objection()
        tb, prof, nq = self.tb, self.profile, int(cocotb.top.NUM_RXQ.value)
        self.logger.info(f"scenario {prof.name}: {prof.description} (seed {self.seed})")
        await tb.reset()
        # Always written: the register resets to 1522, not to the profiles' default of 1518, so
        # a 1519..1522-byte frame would otherwise pass the NIC and be dropped by the model.
        await self.hw.write32(regs.RX_FRAME_LIMIT, prof.max_frame_len)
        bufs = {k: v for k, v in (("pay_buf_log2", prof.pay_buf_log2), ("pay_stride_log2", prof.pay_stride_log2),
                                  ("hdr_buf_bytes", prof.hdr_buf_bytes)) if v is not None}
        qsizes = {**QCFG, **({"cq_log2": prof.rx_cq_log2} if prof.rx_cq_log2 is not None else {})}
        qcfg = RxQueueConfig(**qsizes, tcp_data_split=prof.tcp_data_split, hds_thresh=prof.hds_thresh, **bufs)
        queues = [await bring_up(tb, qcfg, q, self.hw, pay_in_host=q in prof.host_payload_queues)
                  for q in range(nq)]
        for _, sb in queues:
            sb.cfg.max_frame_len = prof.max_frame_len
        sbd = self.env.scoreboard
        sbd.start(MultiQueueEnv(tb, self.hw, queues), self.env.dma.injector)
        tx_sb = self.env.tx_scoreboard
        if prof.tx_frames:
            if prof.tx_frame_limit != tx_agent.FRAME_LIMIT:
                await self.hw.write32(regs.TX_FRAME_LIMIT, prof.tx_frame_limit)
            rings = await tx_env.bring_up(tb, list(prof.tx_queues), log2=TX_RING_LOG2)
            by_q = {r.t: r for r in rings}
            self.env.tx.driver.rings = by_q
            self.env.tx.driver.in_ring = {t: 0 for t in by_q}
            ConfigDB().set(None, "*", "tx_pools", {"host": tx_env.PagePool(tb, TX_POOL_PAGES, device=False),
                                                    "device": tx_env.PagePool(tb, TX_POOL_PAGES, device=True)})
            tx_sb.start(by_q, self.env.tx.driver)
            sbd.dma_check.ranges += [(r.cq_base, 16 << r.cq_log2) for r in rings]   # TX completions
        await NicConfigSeq("config").start(self.env.csr.seqr)
        # RX and TX traffic at the same time (a mixed scenario runs both)
        rx = cocotb.start_soon(RandomTrafficSeq("traffic").start(self.env.mac_rx.seqr))
        tx = cocotb.start_soon(TxRandomSeq("tx_traffic").start(self.env.tx.seqr)) if prof.tx_frames else None
        await rx
        if tx is not None:
            await tx
        await sbd.drain(lambda: self.env.mac_rx.driver.sent)
        if prof.rx_starve:          # post-parse drops, predicted (tb/uvm/starve.py)
            await starve.run(self.env, self.hw, prof, ConfigDB().get(None, "", "flows"), self.seed,
                             float(ConfigDB().get(None, "", "frames_scale")))
            await sbd.drain(lambda: self.env.mac_rx.driver.sent)
        if prof.tx_frames:
            await tx_sb.drain(lambda: self.env.tx.driver.sent)
            await tx_sb.read_counters()
        self.env.dma.monitor.drain()
        await sbd.read_counters()
        self.drop_objection()

    def report_phase(self) -> None:
        out_dir = Path(os.environ.get("FCOV_DIR") or BUILD_ROOT / "fcov")
        name = os.environ.get("FCOV_NAME", f"uvm-{self.profile.name}")
        stem = out_dir / f"{name}-s{self.seed}"
        xml = fcov.write_ucis(stem.with_suffix(".xml"))      # every covergroup of this run (RX and TX)
        groups = fcov.read_ucis(xml)
        txt, js = fcov.write_reports(groups, stem, fcov.SPECS)
        self.logger.info("\n" + fcov.report(groups, max_holes=12))
        self.logger.info(f"functional coverage: {xml} (UCIS), {txt} and {js}")
        dma = self.env.dma.monitor
        self.logger.info(f"DMA bytes written: host {dma.bytes.get('host', 0)}, device {dma.bytes.get('device', 0)}")


pyuvm.test()(RxRandomTest)


# Scenarios marked regress_only (coverage closure) run in make regress and a plain pytest, not make test.
SCENARIO_PARAMS = [pytest.param(n, id=n, marks=[pytest.mark.regress_only] if p.regress_only else [])
                   for n, p in sorted(scenarios.discover().items())]


@pytest.mark.rtl
@pytest.mark.parametrize("scenario", SCENARIO_PARAMS)
@pytest.mark.parametrize("data_w", [64, 512])
def test_uvm(data_w: int, scenario: str) -> None:
    name = pytest_test_name()
    run_rtl_test("nic_top", rtl_file_list(), "tests.rtl.test_uvm", {"DATA_W": data_w}, name,
                 extra_env={"UVM_SCENARIO": scenario, "FCOV_NAME": name,
                            "FCOV_DIR": os.environ.get("FCOV_DIR", str(BUILD_ROOT / "fcov"))})
