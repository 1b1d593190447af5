"""`make regress` on a real Dask cluster: a `dask scheduler` and two `dask worker` processes on
127.0.0.1 (started in a folder outside the repo, without the repo on their Python path: the
tasks travel by value), and a small regression (test_desc_engine_props_in_sim at 64 and 512 bits: two small builds, one seed, no code
coverage) run through them with REGRESS_SCHEDULER. It must pass and merge like a local run:
summary and JUnit with one suite per (test, seed), the cocotb-level JUnit, each job's log,
the builds done before the jobs and spread over both workers. Every process started here is
stopped in `finally`, whatever happened.

Not marked `rtl` on purpose: it runs a regression, and the regression runs the `rtl` tests.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

REPO = Path(__file__).resolve().parents[2]
DASK = Path(sys.executable).with_name("dask")


def _start(cmd: list[str], cwd: Path, log: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_CURRENT_TEST")}
    fh = open(log, "w")
    return subprocess.Popen(cmd, cwd=cwd, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + 15
    for p in procs:
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def _wait_for(what: str, cond, timeout_s: float, logs: list[Path]) -> None:
    t0 = time.monotonic()
    while not cond():
        if time.monotonic() - t0 > timeout_s:
            tails = "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-1500:]}" for p in logs if p.is_file())
            raise AssertionError(f"{what} not within {timeout_s} s\n{tails}")
        time.sleep(0.5)


@pytest.mark.timeout(1200)
def test_regress_on_two_dask_workers(tmp_path: Path) -> None:
    assert DASK.is_file(), f"{DASK}: the dask command is not installed (make setup)"
    cwd = tmp_path / "cluster"
    cwd.mkdir()
    sched_file = cwd / "scheduler.json"
    logs = [cwd / "scheduler.log", cwd / "worker0.log", cwd / "worker1.log"]
    procs: list[subprocess.Popen] = []
    try:
        procs.append(_start([str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                             "--scheduler-file", str(sched_file)], cwd, logs[0]))
        _wait_for("the scheduler file", lambda: sched_file.is_file() and sched_file.stat().st_size > 0, 60, logs)
        address = json.loads(sched_file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:"), address
        for i in range(2):
            procs.append(_start([str(DASK), "worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                                 "--name", f"w{i}", "--local-directory", str(cwd / f"w{i}")], cwd, logs[1 + i]))
        from distributed import Client
        with Client(address, timeout="30s") as client:
            _wait_for("two workers", lambda: len(client.scheduler_info(n_workers=-1)["workers"]) == 2, 120, logs)

        out = tmp_path / "regress"
        env = dict(os.environ, REGRESS_OUT=str(out))
        for var in ("REGRESS_SCHEDULER", "NIC_BUG", "PYTEST_CURRENT_TEST", "PYTEST_XDIST_WORKER"):
            env.pop(var, None)
        res = subprocess.run([sys.executable, "-m", "tb.regress", "--seeds", "1", "-k", "test_desc_engine_props_in_sim",
                              "--no-coverage", "--scheduler", address], cwd=REPO, env=env,
                             capture_output=True, text=True, timeout=1100)
        text = res.stdout + res.stderr
        assert res.returncode == 0, text[-4000:]
        assert f"on scheduler {address}" in text and "2 worker threads" in text, text[-2000:]

        summary = json.loads((out / "summary.json").read_text())
        assert summary["jobs"] == 2 and not summary["failed"], summary
        assert summary["scheduler"] == address
        pids = {str(p.pid) for p in procs[1:]}
        builds = summary["builds"]
        assert len(builds) == 2 and all(b["rc"] == 0 for b in builds.values()), builds
        used = {r["worker"].rsplit(":", 1)[1] for r in summary["results"]} | \
               {b["worker"].rsplit(":", 1)[1] for b in builds.values()}
        assert used <= pids and len(used) == 2, (used, pids)
        for r in summary["results"]:
            assert r["rc"] == 0 and (out / "logs").glob("*.log")

        junit = ET.parse(out / "junit.xml").getroot()
        suites = list(junit.iter("testsuite"))
        assert len(suites) == 2 and junit.get("failures") == "0" and junit.get("errors") == "0"
        for s in suites:
            props = {p.get("name"): p.get("value") for p in s.iter("property")}
            assert props["seed"] and "COCOTB_RANDOM_SEED=" + props["seed"] in props["rerun"]
        cocotb_cases = list(ET.parse(out / "junit-cocotb.xml").getroot().iter("testcase"))
        assert len(cocotb_cases) >= 2, len(cocotb_cases)
        history = json.loads((tmp_path / "regress-history.json").read_text())
        assert set(history["seconds"]) == {r["nodeid"] for r in summary["results"]}
    finally:
        _stop(procs)
    assert all(p.poll() is not None for p in procs)


@pytest.mark.parametrize("kind, directive", [("slurm", "#SBATCH"), ("lsf", "#BSUB"), ("pbs", "#PBS")])
def test_farm_job_script(kind: str, directive: str) -> None:
    """scripts/dask_farm.py's batch script (dask-jobqueue; printed, nothing submitted): one
    single-threaded worker per job, started from the repo folder with the repo's .venv Python,
    queue and account passed through."""
    res = subprocess.run([sys.executable, str(REPO / "scripts" / "dask_farm.py"), kind, "--print-script",
                          "--queue", "nightly", "--account", "verif"], cwd=REPO, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    script = res.stdout
    assert directive in script and "nightly" in script and "verif" in script
    assert f"cd {REPO}\n" in script
    worker = [ln for ln in script.splitlines() if "dask_worker" in ln]
    assert len(worker) == 1 and worker[0].startswith(f"{REPO}/.venv/bin/python -m distributed.cli.dask_worker tcp://")
    assert worker[0].count("--nthreads 1") == 1
