"""The io_uring zcrx scenarios (tests/driver/zcrx_scenarios.py) on the RTL: nic_top on the
fast harness at 64 bits (the payload lands in host memory at the addresses the provider
posted; the NIC is the same as for devmem). `DRIVER_RTL_TESTS` picks cocotb tests by name,
e.g. `run_zcrx_scenario/name=zcrx_refill_starvation`."""
from __future__ import annotations

import os

import pytest

from tb.fast.build import run_nic_test
from tb.sim import pytest_test_name


@pytest.mark.rtl
@pytest.mark.timeout(1800)
def test_zcrx_scenarios_rtl() -> None:
    run_nic_test('fast', 'tests.driver.rtl_zcrx_scenarios', {'DATA_W': 64}, pytest_test_name(),
                 testcase=os.environ.get('DRIVER_RTL_TESTS'))
