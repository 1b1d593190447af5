"""Runs every scenario of tests/driver/scenarios.py on the golden model (no simulator)."""
from __future__ import annotations

import asyncio

import pytest

from tb.scenario import ModelEnv
from tests.driver.scenarios import SCENARIOS, TX_SCENARIOS, Scenario


@pytest.mark.parametrize('scenario', SCENARIOS + TX_SCENARIOS, ids=lambda s: s.name)
def test_scenario(scenario: Scenario) -> None:
    env = ModelEnv(num_rxq=scenario.num_rxq, seed=7)  # the model has RSS and steering
    asyncio.run(scenario.func(env))
