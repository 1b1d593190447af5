"""tb/watchdog.py on the RTL: a CSR access before reset fails at once, naming it; an access
the NIC never answers ends the test after about 100 us of simulated time (cocotb's
expect_error checks the watchdog's error ended it), on both testbenches."""
from __future__ import annotations

import pytest

from tb.fast.build import run_nic_test
from tb.sim import pytest_test_name


@pytest.mark.rtl
@pytest.mark.parametrize("testbench", ["fast", "per-beat"])
def test_watchdog(testbench: str) -> None:
    run_nic_test(testbench, "tests.rtl.cocotb_watchdog", {"DATA_W": 64}, pytest_test_name())
