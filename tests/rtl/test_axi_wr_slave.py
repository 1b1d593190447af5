"""The DMA write slave's behaviour choice and helpers (tb/axi_wr_slave.py, tb/nic_tb.py), no
simulator: how a profile picks its AWREADY behaviour, the $DMA_AWREADY default, its errors,
and the strobe decoding the waiting slave writes memory with. The behaviours themselves run
on the RTL in test_rx_split, test_tx, test_loopback and the driver scenarios."""
from __future__ import annotations

import random

import pytest

from tb.axi_wr_slave import AwReady, strobe_runs
from tb.nic_tb import AWREADY_ENV, TrafficProfile, awready_default, check_same_awready
from tests.axi_slaves import awready_env, awready_params


def _runs_by_lane(strb: int, lanes: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for i in range(lanes):
        if strb >> i & 1:
            if out and out[-1][1] == i:
                out[-1] = (out[-1][0], i + 1)
            else:
                out.append((i, i + 1))
    return out


def test_strobe_runs_match_lane_by_lane() -> None:
    rng = random.Random(1)
    cases = [0, 1, 1 << 127, (1 << 128) - 1, 0b1011_0110] + [rng.getrandbits(128) for _ in range(500)]
    for strb in cases:
        assert list(strobe_runs(strb)) == _runs_by_lane(strb, 128), hex(strb)


def test_profile_default_is_independent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(AWREADY_ENV, raising=False)
    assert TrafficProfile().awready is AwReady.INDEPENDENT
    assert TrafficProfile.rough().awready is AwReady.INDEPENDENT


def test_env_sets_the_default_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(AWREADY_ENV, "after-wlast")
    assert awready_default() is AwReady.AFTER_WLAST
    assert TrafficProfile.rough().awready is AwReady.AFTER_WLAST
    assert TrafficProfile(awready="after-wvalid").awready is AwReady.AFTER_WVALID


def test_bad_values_name_the_choices(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="one of independent, after-wvalid, after-wlast"):
        TrafficProfile(awready="sometimes")
    monkeypatch.setenv(AWREADY_ENV, "wlast")
    with pytest.raises(ValueError, match=r"DMA_AWREADY='wlast': .*one of independent"):
        TrafficProfile()


def test_behaviour_is_fixed_once_made() -> None:
    check_same_awready(AwReady.AFTER_WVALID, TrafficProfile(awready="after-wvalid", dma_stall=0.5))
    with pytest.raises(ValueError, match="chosen when the testbench is made"):
        check_same_awready(AwReady.INDEPENDENT, TrafficProfile(awready="after-wvalid"))


def test_params_keep_the_plain_ids_and_add_both_waiting_behaviours() -> None:
    params = awready_params([(64,), (512,)], [(64, "fast")])
    assert [p.id for p in params] == ["64", "512", "64-fast-after-wvalid", "64-fast-after-wlast"]
    assert [p.values for p in params][2:] == [(64, "fast", "after-wvalid"), (64, "fast", "after-wlast")]
    assert awready_env(None) == {} and awready_env("after-wlast") == {AWREADY_ENV: "after-wlast"}
