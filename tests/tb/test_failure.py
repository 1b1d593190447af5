"""What a failing check prints (tb/failure.py, tb/rx_scoreboard.py): only the fields that
differ, the failing frame's simulation times and a ready `nicsim waves` command. No
simulator: the scoreboard runs on plain memories with a stand-in clock."""
from __future__ import annotations

import dataclasses

import pytest

from driver.rx_queue import RxFrame
from models.address_map import DEV_BASE, HOST_BASE
from models.device_memory import DeviceMemory
from models.formats import L3Type, RxCompletion
from models.host_memory import HostMemory
from models.nic_model import PlacementConfig
from tb.failure import field_diff, waves_command
from tb.frames import Flow, build, pattern
from tb.rx_scoreboard import RxScoreboard


def test_field_diff_names_only_what_differs() -> None:
    a = RxCompletion(pay_len=100, eop=False, l3_type=L3Type.IPV4, queue=3)
    b = dataclasses.replace(a, pay_len=118, eop=True)
    assert field_diff(a, b) == "pay_len: rtl 100 (0x64), model 118 (0x76); eop: rtl False, model True"
    assert field_diff(3, 4, ("got", "want")) == "got 3, want 4"


def test_waves_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NIC_WAVES_FILE", "build/waves/t.fst")
    monkeypatch.setenv("NIC_WAVES_ON", "1")
    assert waves_command(1000, 2000) == "nicsim waves build/waves/t.fst --start 800 --end 2201"
    assert waves_command(100, None) == "nicsim waves build/waves/t.fst --start 0 --end 301"
    monkeypatch.setenv("NIC_WAVES_ON", "0")
    assert "rerun it with WAVES=1" in waves_command(1000, 2000)
    assert waves_command(None, None) == ""


def test_scoreboard_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NIC_WAVES_FILE", "build/waves/t.fst")
    monkeypatch.setenv("NIC_WAVES_ON", "1")
    now = [1234.0]
    sb = RxScoreboard(HostMemory(HOST_BASE, 1 << 20), DeviceMemory(DEV_BASE, 1 << 20),
                      PlacementConfig(split_en=True), clock=lambda: now[0])
    sb.hdr_bufs = {0: HOST_BASE + 0x1000}
    sb.pay_bufs = {0: DEV_BASE}
    sb.hdr_order.append(0)
    sb.pay_order.append(0)
    sb.cq_size = 16
    frame = build(Flow(), pattern(200))
    sb.sent_frame(frame)
    # what the model says the NIC writes, with one field wrong
    p = sb.expected[0].placement
    want = p.completions(0, [0], 0, 16, 0, 0)
    bad = RxFrame([dataclasses.replace(want[0], pay_len=want[0].pay_len - 1)])
    now[0] = 5678.0
    with pytest.raises(AssertionError) as e:
        sb.check(bad)
    msg = str(e.value)
    assert msg.startswith(f"queue 0 frame #0 ({len(frame)} bytes, sent at 1234 ns, taken at 5678 ns): "
                          f"completion 0 differs: pay_len: rtl {want[0].pay_len - 1}"), msg
    assert "model" in msg and "sop" not in msg and "RxCompletion(" not in msg
    assert msg.endswith("waves: nicsim waves build/waves/t.fst --start 1034 --end 5879"), msg
