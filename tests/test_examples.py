"""Every scenario file in examples/ runs and passes, on the golden model and on the RTL (fast
harness, 64 bits), through `nicsim scenario`, as a user would run it."""
from __future__ import annotations

from pathlib import Path

import pytest

from nicsim.cli import main

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))


def test_there_are_examples() -> None:
    assert EXAMPLES, "examples/ has no scenario file"


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_on_the_model(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenario", str(path), "--backend", "model"]) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert "PASS" in out and "FAIL" not in out


@pytest.mark.rtl
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_on_the_rtl(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenario", str(path), "--backend", "rtl"]) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert "PASS" in out and "FAIL" not in out
