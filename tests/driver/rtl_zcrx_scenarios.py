"""The io_uring zcrx scenarios on the RTL (cocotb side of tests/driver/test_zcrx_rtl.py):
the same scenario code as on the model (tests/driver/zcrx_scenarios.py), smaller streams."""
from __future__ import annotations

import cocotb

from tb.fast.fast_tb import nic_tb_for
from tb.nic_tb import TrafficProfile
from tb.scenario import RtlEnv
from tests.driver.scenarios import Scenario
from tests.driver.zcrx_scenarios import RTL_SIZES, ZCRX_SCENARIOS

BY_NAME: dict[str, Scenario] = {s.name: s for s in ZCRX_SCENARIOS}


@cocotb.test()
@cocotb.parametrize(name=[cocotb.Param(s.name, s.name.replace('-', '_')) for s in ZCRX_SCENARIOS])
async def run_zcrx_scenario(dut, name: str) -> None:
    func = RTL_SIZES.get(name, BY_NAME[name].func)
    fast = dut._name == 'nic_fast_top'
    tb = nic_tb_for(dut, cocotb.RANDOM_SEED, TrafficProfile(rx_idle=0.05, dma_stall=0.1, tx_stall=0.1,
                                                            read_interleave=fast))
    await tb.reset()
    await func(RtlEnv(tb, seed=cocotb.RANDOM_SEED, steering=True))
