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


@pytest.mark.parametrize("nbytes", [0, 1, 65536, 200_000])
def test_demo_any_devmem_bytes_model(nbytes: int, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    """The devmem flow is any size: more than one 64 KiB receive window (the peer sends
    window after window), one byte, or none (handshake and FIN only)."""
    assert main(["demo", "--backend", "model", "--frames-per-flow", "1", "--devmem-bytes", str(nbytes),
                 "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"{nbytes} B, identical to what was sent" in out
    assert "handshake, data, FIN: clean" in out
    import re
    rows = [ln for ln in (tmp_path / "report.md").read_text().splitlines() if ln.startswith("| ")]
    assert rows and all(len(re.findall(r"(?<!\\)\|", ln)) == 3 for ln in rows[:12]), \
        "a summary row has a cell separator too many (an unescaped |)"


@pytest.mark.rtl
def test_demo_large_devmem_stream_rtl(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    """200000 bytes, three receive windows, on the RTL (it stopped at the first window)."""
    assert main(["demo", "--frames-per-flow", "1", "--devmem-bytes", "200000", "--no-waves",
                 "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "200000 B, identical to what was sent" in out and "handshake, data, FIN: clean" in out
