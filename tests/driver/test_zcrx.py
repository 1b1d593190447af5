"""The io_uring zcrx scenarios (tests/driver/zcrx_scenarios.py) on the golden model."""
from __future__ import annotations

import asyncio

import pytest

from tb.scenario import ModelEnv
from tests.driver.scenarios import Scenario
from tests.driver.zcrx_scenarios import ZCRX_SCENARIOS


@pytest.mark.parametrize('scenario', ZCRX_SCENARIOS, ids=lambda s: s.name)
def test_zcrx_scenario(scenario: Scenario) -> None:
    env = ModelEnv(num_rxq=scenario.num_rxq, seed=7)
    asyncio.run(scenario.func(env))


@pytest.mark.parametrize('scenario', [s for s in ZCRX_SCENARIOS if 'errors' not in s.name],
                         ids=lambda s: s.name)
def test_zcrx_scenario_mpb(scenario: Scenario) -> None:
    """Again with multi-packet payload buffers: several frames' payloads share a niov, each
    piece its own CQE and user reference."""
    env = ModelEnv(num_rxq=scenario.num_rxq, seed=7, rx_mpb=True)
    asyncio.run(scenario.func(env))
