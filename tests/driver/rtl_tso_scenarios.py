"""The TSO scenarios on the RTL (cocotb side of tests/driver/test_tso_rtl.py): the same code
as on the model (tests/driver/tso_scenarios.py), on nic_top with `TX_OFFLOADS.tso` 1, under
the random DMA stalls and MAC backpressure of the other driver scenarios."""
from __future__ import annotations

import cocotb

from tests.driver.rtl_scenarios import rtl_env
from tests.driver.scenarios import Scenario
from tests.driver.tso_scenarios import TSO_SCENARIOS

BY_NAME: dict[str, Scenario] = {s.name: s for s in TSO_SCENARIOS}


@cocotb.test()
@cocotb.parametrize(name=[cocotb.Param(s.name, s.name.replace('-', '_')) for s in TSO_SCENARIOS])
async def run_tso_scenario(dut, name: str) -> None:
    await BY_NAME[name].func(await rtl_env(dut))
