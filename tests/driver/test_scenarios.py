"""Runs every scenario of tests/driver/scenarios.py on the golden model (no simulator)."""
from __future__ import annotations

import asyncio

import pytest

from tb.scenario import ModelEnv
from tests.driver.scenarios import SCENARIOS, TX_SCENARIOS, Scenario


@pytest.mark.parametrize('rx_mpb', [False, True], ids=['', 'mpb'])
@pytest.mark.parametrize('scenario', SCENARIOS + TX_SCENARIOS, ids=lambda s: s.name)
def test_scenario(scenario: Scenario, rx_mpb: bool) -> None:
    """Every scenario, and again with multi-packet payload buffers and completion batches
    on (`rx_mpb`)."""
    env = ModelEnv(num_rxq=scenario.num_rxq, seed=7, rx_mpb=rx_mpb)  # the model has RSS and steering
    asyncio.run(scenario.func(env))
