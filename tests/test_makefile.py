"""`make test` with a selection that matches nothing fails (pytest's exit 5 is not a pass)."""
from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_make_test_selection_matching_nothing_fails() -> None:
    res = subprocess.run(["make", "-s", "test", "JOBS=0", "PYTEST_ARGS=-k nosuch_selection_xyz -p no:cacheprovider"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert res.returncode != 0, res.stdout[-2000:]
    assert "test: no test matched PYTEST_ARGS='-k nosuch_selection_xyz -p no:cacheprovider'" in res.stdout
