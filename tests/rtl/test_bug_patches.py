"""The injected-bug patches of `make regress BUG=<name>` (tests/bugs/*.patch, applied by
tb/sim.py to a copy of rtl/) must apply to today's RTL exactly (no fuzz): a patch whose
context has drifted may still apply somewhere, or stop applying at the next edit.
(split_off_by_one's context had drifted when rx_split_dma's per-queue settings became one
struct array; `patch` still applied it with fuzz.) No simulator: `patch --dry-run`."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PATCHES = sorted((REPO / "tests" / "bugs").glob("*.patch"))


def test_there_are_bug_patches() -> None:
    assert len(PATCHES) >= 4, PATCHES


@pytest.mark.parametrize("patch", PATCHES, ids=[p.stem for p in PATCHES])
def test_bug_patch_applies(patch: Path) -> None:
    tool = shutil.which("patch")
    assert tool, "`patch` is not installed (make setup installs it)"
    res = subprocess.run([tool, "-p1", "--dry-run", "--fuzz=0", "-s", "-d", str(REPO), "-i", str(patch)],
                         capture_output=True, text=True)
    assert res.returncode == 0, f"{patch.name} does not apply to rtl/:\n{res.stdout}{res.stderr}"
