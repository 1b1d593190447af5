"""The driver scenarios on the RTL (cocotb side): tests/driver/test_scenarios_rtl.py builds
the fast harness (tb/fast/nic_fast_top.sv around nic_top) or nic_top itself (cocotbext-axi,
per beat) and runs this module; `nic_tb_for` picks the matching testbench. Same scenario code
as on the model (the RX scenarios and the TX ones, whose TX wire is the testbench's m_axis_tx
sink: RtlEnv.tx_frames); smaller streams, since a simulated cycle costs far more than a model
frame."""
from __future__ import annotations

import os
from functools import partial
from typing import Any

import cocotb

from tb.axi_wr_slave import check_awready_exercised
from tb.fast.fast_tb import nic_tb_for
from tb.nic_tb import TrafficProfile
from tb.scenario import RtlEnv
from tests.driver.scenarios import SCENARIOS, TX_SCENARIOS, Scenario, devmem_stream

RTL_OVERRIDES = {
    'stream-mtu1500-pattern': partial(devmem_stream, mtu=1500, data='pattern', size=48 << 10),
    'stream-mtu1500-random': partial(devmem_stream, mtu=1500, data='random', size=48 << 10),
    'stream-mtu9000-pattern': partial(devmem_stream, mtu=9000, data='pattern', size=96 << 10),
    'stream-mtu9000-random': partial(devmem_stream, mtu=9000, data='random', size=96 << 10),
    'stream-ipv6-mtu1500-pattern': partial(devmem_stream, mtu=1500, ipv6=True, size=48 << 10),
    'stream-sequence-wraparound': partial(devmem_stream, size=32 << 10, isn=0xFFFF_FFFF - 20_000),
}
ALL = SCENARIOS + TX_SCENARIOS
BY_NAME: dict[str, Scenario] = {s.name: s for s in ALL}


async def rtl_env(dut, **kw: Any) -> RtlEnv:
    """The testbench (`nic_tb_for`: fast harness or per beat) after reset, under random DMA
    stalls and MAC backpressure, as an `RtlEnv` (steering on: nic_top classifies frames)."""
    # On the fast harness the DMA read data of different IDs also interleaves (descriptor
    # reads of several rings and queues, TX data), as an AXI slave may return it.
    fast = dut._name == 'nic_fast_top'
    tb = nic_tb_for(dut, cocotb.RANDOM_SEED, TrafficProfile(rx_idle=0.05, dma_stall=0.1, tx_stall=0.1,
                                                            read_interleave=fast))
    await tb.reset()
    return RtlEnv(tb, seed=cocotb.RANDOM_SEED, steering=True, **kw)


@cocotb.test()
@cocotb.parametrize(name=[cocotb.Param(s.name, s.name.replace('-', '_')) for s in ALL])
async def run_scenario(dut, name: str) -> None:
    scenario = BY_NAME[name]
    func = RTL_OVERRIDES.get(name, scenario.func)
    rx_mpb = os.environ.get('DRIVER_RX_MPB') == '1'   # multi-packet buffers and batches on
    env = await rtl_env(dut, rx_mpb=rx_mpb)
    await func(env)
    check_awready_exercised(env.tb, required=False)     # (some scenarios make no DMA write)
