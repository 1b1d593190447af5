"""The RTL half of `nicsim scenario` (cocotb): one test per scenario of the file named by
$NIC_SCENARIO_FILE (tb/scenario/runner.py), each on a fresh testbench after a reset (the fast
harness or nic_top per beat, whichever was built: `nic_tb_for`), with RtlEnv."""
from __future__ import annotations

import os

import cocotb

from tb.fast.fast_tb import nic_tb_for
from tb.nic_tb import TrafficProfile
from tb.scenario.env import RtlEnv
from tb.scenario.runner import SCENARIO_FILE_ENV, load

_PATH = os.environ.get(SCENARIO_FILE_ENV, "")
_SCENARIOS = dict(load(_PATH)) if _PATH else {}


@cocotb.test()
@cocotb.parametrize(name=[cocotb.Param(n, n) for n in _SCENARIOS] or [cocotb.Param("none", "none")])
async def run_scenario(dut, name: str) -> None:
    if name not in _SCENARIOS:
        raise AssertionError(f"${SCENARIO_FILE_ENV} names no scenario file")
    tb = nic_tb_for(dut, cocotb.RANDOM_SEED, TrafficProfile(rx_idle=0.05, dma_stall=0.1, tx_stall=0.1))
    await tb.reset()
    env = RtlEnv(tb, seed=cocotb.RANDOM_SEED, steering=True)   # nic_top classifies frames
    try:
        await _SCENARIOS[name](env)
    finally:
        env.close()
