"""`make demo` must keep working: run it small, without waves, at both widths."""
from __future__ import annotations

import pytest

from tb import demo


@pytest.mark.rtl
@pytest.mark.parametrize("data_w", [64, 512])
def test_demo_runs(data_w: int, capsys: pytest.CaptureFixture[str]) -> None:
    assert demo.main(["--data-width", str(data_w), "--frames-per-flow", "4", "--no-waves"]) == 0
    out = capsys.readouterr().out
    assert "CPU reads of device memory         0" in out
    assert "frames sent / delivered            16 / 16" in out
