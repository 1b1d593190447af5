"""The pyuvm environment (tb/uvm/) on nic_top: one constrained-random run per traffic
scenario (tb/uvm/scenarios/<name>.py) and parameter set, checked frame by frame against the
golden model, with functional coverage written after each run (text + JSON in
$FCOV_DIR, default build/fcov/). UVM_FRAMES_SCALE scales every scenario's frame count.
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
from tb.nic_tb import NicTb, TrafficProfile
from tb.rx_env import MirrorHw, MultiQueueEnv, bring_up
from tb.sim import BUILD_ROOT, pytest_test_name, rtl_file_list, run_rtl_test
from tb.uvm import coverage as fcov
from tb.uvm import scenarios
from tb.uvm.dma_agent import traffic_profile
from tb.uvm.env import NicEnv
from tb.uvm.sequences import NicConfigSeq, RandomTrafficSeq, make_flows

QCFG = dict(hdr_ring_log2=5, pay_ring_log2=5, cq_log2=6)


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
        qcfg = RxQueueConfig(**QCFG, tcp_data_split=prof.tcp_data_split, hds_thresh=prof.hds_thresh)
        queues = [await bring_up(tb, qcfg, q, self.hw, pay_in_host=q in prof.host_payload_queues)
                  for q in range(nq)]
        for _, sb in queues:
            sb.cfg.max_frame_len = prof.max_frame_len
        sbd = self.env.scoreboard
        sbd.start(MultiQueueEnv(tb, self.hw, queues), self.env.dma.injector)
        await NicConfigSeq("config").start(self.env.csr.seqr)
        await RandomTrafficSeq("traffic").start(self.env.mac_rx.seqr)
        await sbd.drain(lambda: self.env.mac_rx.driver.sent)
        self.env.dma.monitor.drain()
        await sbd.read_counters()
        self.drop_objection()

    def report_phase(self) -> None:
        cov = self.env.scoreboard.cov
        out_dir = Path(os.environ.get("FCOV_DIR") or BUILD_ROOT / "fcov")
        name = os.environ.get("FCOV_NAME", f"uvm-{self.profile.name}")
        txt, js = fcov.write_reports(cov, out_dir / f"{name}-s{self.seed}")
        self.logger.info("\n" + cov.report(max_holes=12))
        self.logger.info(f"functional coverage: {txt} and {js}")
        dma = self.env.dma.monitor
        self.logger.info(f"DMA bytes written: host {dma.bytes.get('host', 0)}, device {dma.bytes.get('device', 0)}")


pyuvm.test()(RxRandomTest)


@pytest.mark.rtl
@pytest.mark.parametrize("scenario", sorted(scenarios.discover()))
@pytest.mark.parametrize("data_w", [64, 512])
def test_uvm(data_w: int, scenario: str) -> None:
    name = pytest_test_name()
    run_rtl_test("nic_top", rtl_file_list(), "tests.rtl.test_uvm", {"DATA_W": data_w}, name,
                 extra_env={"UVM_SCENARIO": scenario, "FCOV_NAME": name,
                            "FCOV_DIR": os.environ.get("FCOV_DIR", str(BUILD_ROOT / "fcov"))})
