"""`make demo` (`nicsim demo`) must keep working: run it small, without waves, at both widths
on the fast harness (its default) and at 64 bits per beat (`--testbench per-beat`)."""
from __future__ import annotations

import re

import pytest

from nicsim.cli import main


@pytest.mark.rtl
@pytest.mark.parametrize("data_w,testbench", [(64, "fast"), (512, "fast"), (64, "per-beat")])
def test_demo_runs(data_w: int, testbench: str, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--data-width", str(data_w), "--frames-per-flow", "2",
                 "--devmem-bytes", "8192", "--no-waves", "--out", str(tmp_path),
                 "--testbench", testbench]) == 0
    out = capsys.readouterr().out
    assert f"{testbench} testbench" in out
    assert "CPU reads of device memory         0" in out
    # 8 devmem-flow frames (SYN, the handshake's ACK, 6 segments of at most 1460 bytes, the
    # last with FIN), 16 ordinary ones, 2 of the 3 odd frames dropped
    assert "frames sent / delivered            27 / 25" in out
    assert "8192 B, identical to what was sent" in out
    assert "devmem TCP connection              handshake, data, FIN: clean" in out
    # the protocol checker bound into nic_top saw the run's traffic and nothing wrong
    assert re.search(r"AXI protocol checker +\d+ cycles, m_axi [1-9]\d* AR / [1-9]\d* R / [1-9]\d* AW / [1-9]\d* W "
                     r"/ [1-9]\d* B, .* s_axis_rx 27 frames, .*: 0 violations", out), out
    for f in ("report.md", "queues.png", "memory.png", "drops.png", "records.jsonl"):
        assert (tmp_path / f).is_file()
