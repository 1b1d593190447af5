"""The driver's TSO path on the RTL (issue 21): the scenarios of tests/driver/tso_scenarios.py
(the ring call with and without VLAN; devmem TCP streams over TSO and TSO6, switched off and
on mid-stream, against the golden model frame by frame, the NIC's segment counts and the
MSG_ZEROCOPY notification order) on nic_top through cocotb. `DRIVER_RTL_TESTS` picks cocotb
tests by name, e.g. `run_tso_scenario/name=devmem_tx_tso_ipv6`.

`fast` at 64 bits (make test): the fast harness (tb/fast/). At 512 bits and on the per-beat
testbench (cocotbext-axi on every port, nic_top itself): make regress only."""
from __future__ import annotations

import os

import pytest

from tb.fast.build import run_nic_test
from tb.sim import pytest_test_name


@pytest.mark.rtl
@pytest.mark.timeout(1800)
@pytest.mark.parametrize('data_w,testbench', [
    pytest.param(64, 'fast', id='64-fast'),
    pytest.param(512, 'fast', id='512-fast', marks=pytest.mark.regress_only),
    pytest.param(64, 'per-beat', id='64-per-beat', marks=pytest.mark.regress_only)])
def test_tso_scenarios_rtl(data_w: int, testbench: str) -> None:
    run_nic_test(testbench, 'tests.driver.rtl_tso_scenarios', {'DATA_W': data_w}, pytest_test_name(),
                 testcase=os.environ.get('DRIVER_RTL_TESTS'))
