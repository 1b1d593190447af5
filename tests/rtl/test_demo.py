"""`make demo` (`nicsim demo`) must keep working: run it small, without waves, at both widths."""
from __future__ import annotations

import pytest

from nicsim.cli import main


@pytest.mark.rtl
@pytest.mark.parametrize("data_w", [64, 512])
def test_demo_runs(data_w: int, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--data-width", str(data_w), "--frames-per-flow", "2",
                 "--devmem-bytes", "8192", "--no-waves", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "CPU reads of device memory         0" in out
    # 8 devmem-flow frames (SYN, the handshake's ACK, 6 segments of at most 1460 bytes, the
    # last with FIN), 16 ordinary ones, 2 of the 3 odd frames dropped
    assert "frames sent / delivered            27 / 25" in out
    assert "8192 B, identical to what was sent" in out
    assert "devmem TCP connection              handshake, data, FIN: clean" in out
    for f in ("report.md", "queues.png", "memory.png", "drops.png", "records.jsonl"):
        assert (tmp_path / f).is_file()
