"""The driver scenarios on the RTL through cocotb: the same scenario code as
tests/driver/test_scenarios.py runs on the golden model (SCENARIOS and TX_SCENARIOS), here
on nic_top under Verilator. `-m "not rtl"` leaves it out for a fast model-only run.
`DRIVER_RTL_TESTS` picks cocotb tests by name, e.g. `run_scenario/name=token_pressure`.

`fast` (both widths, a few seconds of simulation each): the fast harness (tb/fast/: HDL
clock, compiled RX source, TX sink and DMA target; Python wakes per transaction).
`per-beat` (64 bits, about 70 s; make regress, not make test: regress_only): nic_top with
cocotbext-axi driving every port from Python, a second, independent implementation of the
same bus partners, so a fault in the fast harness cannot hide a fault in the NIC (make test
keeps the per-beat testbench in the RX, TX, loopback and uvm tests).
`fast` again at both widths with DMA slaves whose AWREADY waits for the burst's first W beat
(`after-wvalid`) or its last (`after-wlast`): tb/axi_wr_slave.py, docs/verification.md.
"""
from __future__ import annotations

import os

import pytest

from tb.fast.build import run_nic_test
from tb.sim import pytest_test_name
from tests.axi_slaves import awready_env, awready_params


@pytest.mark.rtl
@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize('data_w,testbench,rx_mpb,awready', awready_params(
    [(64, 'fast', False), (512, 'fast', False), (64, 'per-beat', False), (64, 'fast', True),
     (512, 'fast', True)], [(64, 'fast', False), (512, 'fast', False)],
    id_of=lambda p: f"{p[0]}-{p[1]}" + ("-mpb" if p[2] else ""),
    marks_of=lambda p: [pytest.mark.regress_only] if p[1] == 'per-beat' else []))
def test_driver_scenarios_rtl(data_w: int, testbench: str, rx_mpb: bool, awready: str | None) -> None:
    """Every scenario; `-mpb`: with multi-packet payload buffers and completion batches on
    (the rig's `rx_mpb`), as on the model; `-after-wvalid`/`-after-wlast`: under a DMA write
    slave whose AWREADY waits for W."""
    env = {'DRIVER_RX_MPB': '1'} if rx_mpb else {}
    run_nic_test(testbench, 'tests.driver.rtl_scenarios', {'DATA_W': data_w}, pytest_test_name(),
                 testcase=os.environ.get('DRIVER_RTL_TESTS'), extra_env={**env, **awready_env(awready)} or None)
