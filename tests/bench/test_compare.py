"""bench.compare: leaf-by-leaf comparison of two benchmark documents (no simulator)."""
from __future__ import annotations

import json
from pathlib import Path

from bench.compare import compare, leaves, main

BEFORE = {"configs": [{"data_w": 64, "wall_s": 10.0, "results": [{"size": 64, "frames_per_cycle": 0.1},
                                                                 {"size": 1518, "frames_per_cycle": 0.005}]}],
          "load": [1.0, 2.0]}


def _after(**change: float) -> dict:
    doc = json.loads(json.dumps(BEFORE))
    for key, value in change.items():
        doc["configs"][0]["results"][1][key] = value
    return doc


def test_leaves_paths() -> None:
    assert dict(leaves(BEFORE))["configs[0].results[1].frames_per_cycle"] == 0.005


def test_equal_except_wall_clock() -> None:
    after = _after()
    after["configs"][0]["wall_s"] = 99.0
    after["load"] = [7.0, 8.0]
    res = compare(BEFORE, after)
    assert res.differences == [] and res.ignored == 3 and res.compared == 5


def test_moved_and_missing_values_listed() -> None:
    after = _after(frames_per_cycle=0.004)
    del after["configs"][0]["results"][0]["size"]
    after["configs"][0]["results"][0]["drops"] = 1
    res = compare(BEFORE, after)
    assert ("configs[0].results[1].frames_per_cycle", 0.005, 0.004) in res.differences
    assert ("configs[0].results[0].size", 64, "<absent>") in res.differences
    assert ("configs[0].results[0].drops", "<absent>", 1) in res.differences


def test_ignore_empty_compares_wall_clock() -> None:
    after = _after()
    after["configs"][0]["wall_s"] = 99.0
    assert [d[0] for d in compare(BEFORE, after, ignore="").differences] == ["configs[0].wall_s"]


def test_exit_status(tmp_path: Path, capsys) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(BEFORE))
    b.write_text(json.dumps(_after(frames_per_cycle=0.004)))
    assert main([str(a), str(a)]) == 0
    assert main([str(a), str(b)]) == 1
    assert "1 differ" in capsys.readouterr().out
    assert main([str(a), str(tmp_path / "missing.json")]) == 2
    assert main([str(a), str(b), "--ignore", "("]) == 2
