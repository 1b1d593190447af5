"""`make formal` in `make test`, as far as it is quick: every SymbiYosys task of tb/formal/*.sby
tagged `quick` (a few seconds each) passes with every assertion proved (k-induction) or
holding to its depth (BMC) and every cover reached; and every protocol-breaking bug patch of
tests/bugs/ makes `make formal BUG=<name>` fail with a real counterexample (from reset, not an
unclosed induction) of the property that names the rule it breaks. The other tasks (the
longer proofs, minutes each) run in `make formal` only (.ci/run runs it after `make test`).

One pytest item per task, so pytest-xdist spreads them over the workers; each runs
tb/formal/run.py on that task alone (its own folder under build/formal/test/).
"""
from __future__ import annotations

import fnmatch
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tb.formal.run import BUGS, FORMAL, _task_lines

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "build" / "formal" / "test"

ALL_TASKS = {f"{sby.stem}.{name}": tags for sby in sorted(FORMAL.glob("*.sby"))
             for name, tags in _task_lines(sby)}
TASKS = [key for key, tags in ALL_TASKS.items() if "quick" in tags and "stale" not in tags]

# Bug patches that break a protocol rule: the BMC-from-reset task that must find the
# counterexample and the property it must name. Only that task runs here (`make formal
# BUG=<name>` runs every non-cover task of the blocks the patch touches: for split_off_by_one
# that adds rx_split_dma's assume-guarantee proofs, about 3 CPU-min, which pass on it).
PROTOCOL_BUGS = {
    "wlast_early": ("axi_dma_wr.bmc_w64", "a_wlast_on_last_beat"),
    "burst_4k_cross": ("axi_dma_wr.bmc_w64", "a_aw_no_4k_cross"),
    # a header one byte longer than the queue's header buffer (pay_off > 80 and hdr_buf_bytes
    # == pay_off): rx_split_dma's BMC, step 3
    "split_off_by_one": ("rx_split_dma.bmc_x_q2", "a_hdr_fits"),
}


def _run(*args: str, out: Path) -> tuple[int, dict, str]:
    res = subprocess.run([sys.executable, "-m", "tb.formal.run", "--jobs", "1", "--out", str(out), *args],
                         cwd=REPO, capture_output=True, text=True, timeout=1800)
    summary_file = out / "summary.json"
    summary = json.loads(summary_file.read_text()) if summary_file.is_file() else {}
    return res.returncode, summary, res.stdout + res.stderr


def test_there_are_formal_tasks() -> None:
    blocks = {t.split(".")[0] for t in ALL_TASKS}
    assert {"sync_fifo", "desc_engine", "rx_split_dma", "axi_wr_mux", "axi_dma_wr"} <= blocks, blocks
    assert TASKS, "no task is tagged quick: make test would run no proof"


def test_stale_tasks_are_not_reported_as_proved() -> None:
    stale = [key for key, tags in ALL_TASKS.items() if "stale" in tags]
    if not stale:
        return
    res = subprocess.run([sys.executable, "-m", "tb.formal.run", "--list"], cwd=REPO, capture_output=True,
                         text=True, check=True)
    for key in stale:
        (line,) = [ln for ln in res.stdout.splitlines() if ln.startswith(key + " ")]
        assert "STALE (not run)" in line, line


@pytest.mark.parametrize("task", TASKS)
def test_formal_task(task: str) -> None:
    rc, summary, text = _run("--only", task, out=OUT / task)
    assert rc == 0, f"make formal FORMAL_ONLY={task} failed:\n{text[-6000:]}"
    block, name = task.split(".")
    (entry,) = [t for t in summary["blocks"][block]["tasks"] if t["task"] == name]
    props = entry["properties"]
    assert props, f"{task}: no property reported"
    bad = [p for p in props if p["result"] not in ("PASS", "REACHED")]
    assert not bad, f"{task}: {bad}"


@pytest.mark.parametrize("bug", sorted(PROTOCOL_BUGS))
def test_formal_catches_protocol_bug(bug: str) -> None:
    patch = BUGS / f"{bug}.patch"
    assert patch.is_file(), f"{patch.relative_to(REPO)} is missing"
    applies = subprocess.run(["patch", "-p1", "--dry-run", "-s", "-d", str(REPO), "-i", str(patch)],
                             capture_output=True, text=True)
    assert applies.returncode == 0, (f"{patch.relative_to(REPO)} no longer applies to rtl/ (refresh it where "
                                     f"it is owned):\n{applies.stdout}{applies.stderr}")
    task, want = PROTOCOL_BUGS[bug]
    rc, summary, text = _run("--bug", bug, "--only", task, out=OUT / f"bug-{bug}")
    assert rc == 1, f"make formal BUG={bug} FORMAL_ONLY={task} should fail (exit 1), got {rc}:\n{text[-6000:]}"
    failed = {p["name"].rsplit(".", 1)[-1]: p for b in summary["blocks"].values() for t in b["tasks"]
              for p in t["properties"] if p["result"] == "FAIL"}
    assert want in failed, f"BUG={bug}: {want} has no counterexample; failed: {sorted(failed) or 'none'}\n{text[-4000:]}"
    trace = failed[want]["trace"]
    assert trace and Path(trace).is_file(), f"BUG={bug}: no counterexample trace for {want}"


def test_assumed_assertions_are_named() -> None:
    """A task that turns assertions into assumptions (assume-guarantee: `chformal -assert
    -assert2assume c:* <kept> %d`, every assertion but the kept ones; another task proves those
    it assumes, as the .sby file says) must name its kept assertions by labels that exist: a
    renamed label would match nothing and be assumed unproved, silently."""
    found = 0
    for sby in sorted(FORMAL.glob("*.sby")):
        text = sby.read_text()
        props = (FORMAL / "props" / f"{sby.stem}_props.sv").read_text()
        labels = set(re.findall(r"\b(\w+)\s*:\s*assert\s*\(", props, re.M))
        for task, sel in re.findall(r"^(\w+):\s*chformal\s+-assert\s+-assert2assume\s+c:\*\s+(.*?)\s+%d\s*$",
                                    text, re.M):
            found += 1
            pats = [p[2:] for p in sel.split() if p.startswith("c:")]
            assert pats and all(p == "%u" or p.startswith("c:") for p in sel.split()), (sby.name, task, sel)
            for pat in pats:
                hits = [lab for lab in labels if fnmatch.fnmatchcase(lab, pat)]
                assert hits, f"{sby.name} {task}: kept assertion {pat!r} matches no assertion label of the props"
        for bad in re.findall(r"^(\w+):\s*chformal\b(?!\s+-assert\s+-assert2assume\s+c:\*\s).*$", text, re.M):
            raise AssertionError(f"{sby.name} {bad}: chformal in another form than `-assert -assert2assume c:* ... %d`")
    assert found, "no assume-guarantee task (rx_split_dma.sby's prove_inv_pay_q2, prove_pay_q2)"


def _kept(sby: Path, task: str) -> set[str]:
    """The assertion labels a task's `chformal -assert -assert2assume c:* ... %d` keeps asserted."""
    (sel,) = re.findall(rf"^{task}:\s*chformal\s+-assert\s+-assert2assume\s+c:\*\s+(.*?)\s+%d\s*$",
                        sby.read_text(), re.M)
    labels = set(re.findall(r"\b(\w+)\s*:\s*assert\s*\(", (FORMAL / "props" / f"{sby.stem}_props.sv").read_text(), re.M))
    return {lab for pat in sel.split() if pat.startswith("c:") for lab in labels if fnmatch.fnmatchcase(lab, pat[2:])}


def test_rx_split_dma_chain_keeps_what_it_must() -> None:
    """rx_split_dma's chain (its .sby header): prove_inv_pay_q2 keeps asserted exactly the
    assertions under `ifdef F_INV_PAY` (which prove_q2 does not define), prove_pay_q2 exactly
    a_pay_in_buffer (which prove_q2 and prove_inv_pay_q2 leave out, F_NO_X_PAY); so every
    assertion is asserted by one of the three tasks, and a new F_INV_PAY invariant cannot end
    up assumed and proved nowhere."""
    sby = FORMAL / "rx_split_dma.sby"
    props = (FORMAL / "props" / "rx_split_dma_props.sv").read_text()
    region = props[props.index("`ifdef F_INV_PAY"):]
    depth, end = 0, None
    for m in re.finditer(r"`(ifdef|ifndef|endif)\b", region):
        depth += 1 if m.group(1) != "endif" else -1
        if depth == 0:
            end = m.start()
            break
    assert end is not None
    inv_pay = set(re.findall(r"\b(\w+)\s*:\s*assert\s*\(", region[:end], re.M))
    assert inv_pay, "no assertion under `ifdef F_INV_PAY"
    assert _kept(sby, "prove_inv_pay_q2") == inv_pay
    assert _kept(sby, "prove_pay_q2") == {"a_pay_in_buffer"}
    script = {task: line for task, line in re.findall(r"^(\w+):\s*(read_slang .*)$", sby.read_text(), re.M)}
    assert "F_INV_PAY" not in script["prove_q2"] and "F_NO_X_PAY" in script["prove_q2"]
    assert "F_INV_PAY" in script["prove_inv_pay_q2"] and "F_NO_X_PAY" in script["prove_inv_pay_q2"]
    assert "F_INV_PAY" in script["prove_pay_q2"] and "F_NO_X_PAY" not in script["prove_pay_q2"]


def test_assume_guarantee_pass_is_flagged_when_its_premises_fail() -> None:
    """An `others-assumed` task that passes while a proof it rests on failed (or was not run)
    is reported CONDITIONAL, never as a plain proof (no solver needed)."""
    from tb.formal.run import Task, _conditional

    def task(name: str, status: str, params: str = "") -> Task:
        return Task(block="rx_split_dma", name=name, mode="prove", depth=3, params=params,
                    long=False, sby=Path("rx_split_dma.sby"), status=status)

    base = task("prove_q2", "FAIL")
    chained = task("prove_pay_q2", "PASS", "F_INV=1 others-assumed")
    assert "prove_q2" in _conditional(chained, [base, chained])
    assert "CONDITIONAL" in _conditional(chained, [chained])
    base.status = "PASS"
    assert _conditional(chained, [base, chained]) == ""
    assert _conditional(base, [base, chained]) == ""          # a plain proof is never conditional
