"""CPU time per test: what `make test`'s 15-minute budget is spent on.

Wall time under pytest-xdist says little on a shared machine (a test waits for a core, or for
another worker's build of the model it needs); CPU time (the worker's own plus that of the
processes it waited for: Verilator, the C++ compiler, the simulator, SymbiYosys) is what two
CI cores have to give. Every run writes one line per test to build/test-cpu/<worker>.jsonl
(nodeid, wall_s, cpu_s; <run>-<worker>.jsonl, one name per pytest run) and the terminal summary prints the total and the largest items.
`docs/verification.md` ("Keeping make test fast") says how to read it.
"""
from __future__ import annotations

import json
import os
import resource
import time
from pathlib import Path

import pytest

OUT = Path(__file__).resolve().parents[1] / "build" / "test-cpu"
SHOWN = 15


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _worker() -> str:
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


RUN_ENV = "NIC_TEST_CPU_RUN"


def pytest_configure(config: pytest.Config) -> None:
    """A controller (or a run without xdist) names its run; its xdist workers inherit the name
    through the environment. A pytest run that a test starts (tb.regress, the Makefile tests)
    is a controller too and names its own, so it never mixes into or removes its parent's."""
    if not hasattr(config, "workerinput"):
        os.environ[RUN_ENV] = f"{os.getpid()}-{int(time.time())}"
        OUT.mkdir(parents=True, exist_ok=True)
        for old in OUT.glob("*.jsonl"):
            if time.time() - old.stat().st_mtime > 86400:   # runs of earlier days
                old.unlink(missing_ok=True)


def _file() -> Path:
    return OUT / f"{os.environ.get(RUN_ENV, 'unnamed')}-{_worker()}.jsonl"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    t0, c0 = time.monotonic(), _cpu()
    yield
    row = {"nodeid": item.nodeid, "wall_s": round(time.monotonic() - t0, 2), "cpu_s": round(_cpu() - c0, 2)}
    OUT.mkdir(parents=True, exist_ok=True)
    with open(_file(), "a") as fh:
        fh.write(json.dumps(row) + "\n")


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return
    rows = []
    for f in sorted(OUT.glob(f"{os.environ.get(RUN_ENV, 'unnamed')}-*.jsonl")):
        rows += [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
    if len(rows) < 2:
        return
    total = sum(r["cpu_s"] for r in rows)
    rows.sort(key=lambda r: -r["cpu_s"])
    tr = terminalreporter
    tr.write_sep("=", f"CPU time: {total / 60:.1f} CPU-min over {len(rows)} tests (build/test-cpu/)")
    for r in rows[:SHOWN]:
        tr.write_line(f"{r['cpu_s']:8.1f} s CPU {r['wall_s']:8.1f} s wall  {r['nodeid']}")
