"""The driver scenarios on the RTL (cocotb side): tests/driver/test_scenarios_rtl.py builds
nic_top and runs this module. Same scenario code as on the model; smaller streams, since a
simulated cycle costs far more than a model frame."""
from __future__ import annotations

import os
from functools import partial

import cocotb
import pytest

from tb.nic_tb import NicTb, TrafficProfile
from tests.driver.env import RtlEnv
from tests.driver.scenarios import SCENARIOS, Scenario, Unsupported, devmem_stream

RTL_OVERRIDES = {
    'stream-mtu1500-pattern': partial(devmem_stream, mtu=1500, data='pattern', size=48 << 10),
    'stream-mtu1500-random': partial(devmem_stream, mtu=1500, data='random', size=48 << 10),
    'stream-mtu9000-pattern': partial(devmem_stream, mtu=9000, data='pattern', size=96 << 10),
    'stream-mtu9000-random': partial(devmem_stream, mtu=9000, data='random', size=96 << 10),
    'stream-ipv6-mtu1500-pattern': partial(devmem_stream, mtu=1500, ipv6=True, size=48 << 10),
    'stream-sequence-wraparound': partial(devmem_stream, size=32 << 10, isn=0xFFFF_FFFF - 20_000),
}
BY_NAME: dict[str, Scenario] = {s.name: s for s in SCENARIOS}
STEERING = os.environ.get('DRIVER_RTL_STEERING', '1') == '1'
"""nic_top classifies frames (RSS, n-tuple steering); DRIVER_RTL_STEERING=0 for a build that
does not."""


@cocotb.test()
@cocotb.parametrize(name=[cocotb.Param(s.name, s.name.replace('-', '_')) for s in SCENARIOS])
async def run_scenario(dut, name: str) -> None:
    scenario = BY_NAME[name]
    func = RTL_OVERRIDES.get(name, scenario.func)
    tb = NicTb(dut, cocotb.RANDOM_SEED, TrafficProfile(rx_idle=0.05, dma_stall=0.1))
    await tb.reset()
    try:
        await func(RtlEnv(tb, seed=cocotb.RANDOM_SEED, steering=STEERING))
    except Unsupported as e:
        pytest.skip(f'{name}: {e}')      # cocotb reports it as skipped
