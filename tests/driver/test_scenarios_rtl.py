"""The driver scenarios on the RTL through cocotb: the same scenario code as
tests/driver/test_scenarios.py runs on the golden model (SCENARIOS and TX_SCENARIOS), here
on nic_top under Verilator (about 90 s of simulation at DATA_W 64, 60 s at 512). `-m "not rtl"` leaves it out for a fast
model-only run. `DRIVER_RTL_TESTS` picks cocotb tests by name, e.g.
`run_scenario/name=token_pressure`.
"""
from __future__ import annotations

import os

import pytest

from tb.sim import pytest_test_name, rtl_file_list, run_rtl_test


@pytest.mark.rtl
@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize('data_w', [64, 512])
def test_driver_scenarios_rtl(data_w: int) -> None:
    run_rtl_test('nic_top', rtl_file_list(), 'tests.driver.rtl_scenarios', {'DATA_W': data_w},
                 pytest_test_name(), testcase=os.environ.get('DRIVER_RTL_TESTS'))
