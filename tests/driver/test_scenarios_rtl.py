"""The driver scenarios on the RTL through cocotb (slow: builds nic_top and simulates).

Run with `DRIVER_RTL=1 .venv/bin/python -m pytest tests/driver/test_scenarios_rtl.py`; without
DRIVER_RTL=1 it is skipped, so the fast `tests/driver` suite stays fast. About 50 s of
simulation per width after the build. `DRIVER_RTL_TESTS` picks cocotb tests by name, e.g.
`run_scenario/name=token_pressure`. `DRIVER_RTL_STEERING=0` skips the steering scenarios
(for an RTL that does not classify frames).
"""
from __future__ import annotations

import os

import pytest

from tb.sim import pytest_test_name, rtl_file_list, run_rtl_test


@pytest.mark.rtl
@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.skipif(os.environ.get('DRIVER_RTL') != '1', reason='set DRIVER_RTL=1 to run on the RTL')
@pytest.mark.parametrize('data_w', [64, 512])
def test_driver_scenarios_rtl(data_w: int) -> None:
    run_rtl_test('nic_top', rtl_file_list(), 'tests.driver.rtl_scenarios', {'DATA_W': data_w},
                 pytest_test_name(), testcase=os.environ.get('DRIVER_RTL_TESTS'))
