"""The randomized regression: every RTL test (pytest marker `rtl`, each already parametrized
over the supported parameter sets) times N seeds, run through Dask distributed, with merged
JUnit XML, merged functional coverage, Verilator line/branch/toggle coverage as lcov + HTML,
and a one-screen summary. `make regress` runs it; see docs/verification.md.

    .venv/bin/python -m tb.regress [--seeds N] [--shard i/K] [--jobs J] [--bug NAME]
                                   [--no-coverage] [-k EXPR] [--seed-base B]
                                   [--scheduler tcp://HOST:PORT]

Where the jobs run: a LocalCluster of `--jobs` single-threaded worker processes (default), or
the workers of the Dask scheduler at `--scheduler` / REGRESS_SCHEDULER (a farm: every worker
must see this repo at the same path, with its .venv; a shared filesystem). Each build and each
job is a subprocess of the repo's Python on a worker (tb/regress_tasks.py).

Order: one quick pass (SIM_PLAN_FILE, tb/sim.py) learns which build folders each test needs;
each folder is built once (SIM_BUILD_ONLY) before the jobs that need it; jobs go longest
first by the durations recorded in build/regress-history.json by the previous run.

Seeds are derived deterministically from (seed base, pytest node id with its parameters, seed index), so the same
command always runs the same (test, seed) jobs, and `--shard i/K` picks every K-th job of that
sorted list: K machines running shards 1..K together run exactly the full regression.
Every failure prints the one command that reruns that test with that seed and waves on.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from xml.etree import ElementTree as ET

from tb import vcov
from tb.uvm import coverage as fcov

REPO = Path(__file__).resolve().parents[1]
OUT = Path(os.environ.get("REGRESS_OUT") or REPO / "build" / "regress").resolve()
PY = ".venv/bin/python"


@dataclass
class Job:
    nodeid: str
    seed: int
    index: int = 0
    rc: int | None = None
    seconds: float = 0.0
    cocotb_total: int = 0
    cocotb_failed: int = 0
    message: str = ""
    run_dirs: list[Path] = field(default_factory=list)
    bug: str = ""
    worker: str = ""          # host:pid of the Dask worker that ran it

    @property
    def tag(self) -> str:     # names the run folders: concurrent regressions must not share them
        return f"{self.bug}-s{self.seed}" if self.bug else f"s{self.seed}"

    @property
    def safe(self) -> str:
        return re.sub(r"[^A-Za-z0-9_.=+-]+", "_", self.nodeid.split("/")[-1]).strip("_") + "-" + self.tag

    def rerun(self, bug: str) -> str:
        prefix = f"NIC_BUG={bug} " if bug else ""
        awready = os.environ.get("DMA_AWREADY", "").strip()   # the DMA slave behaviour, if chosen
        if awready:
            prefix += f"DMA_AWREADY={awready} "
        return f"{prefix}COCOTB_RANDOM_SEED={self.seed} WAVES=1 {PY} -m pytest -p no:xdist '{self.nodeid}'"


def collect(expr: str) -> list[str]:
    cmd = [PY, "-m", "pytest", "--collect-only", "-q", "-m", "rtl", "-p", "no:cacheprovider", "tests"]
    if expr:
        cmd += ["-k", expr]
    out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    ids = [ln.strip() for ln in out.stdout.splitlines() if "::" in ln and not ln.startswith(" ")]
    if not ids:
        sys.exit(f"regress: no RTL test collected (pytest said:\n{out.stdout[-2000:]}{out.stderr[-2000:]})")
    return sorted(ids)


def seed_for(base: int, nodeid: str, k: int) -> int:
    """The whole node id, parameters included: each parameter set of a test draws its own
    traffic (with the test name alone, the 64- and 512-bit runs of a pyuvm scenario, and every
    scenario, had one seed, so their functional coverage was the same samples again)."""
    digest = hashlib.sha256(f"{base}:{nodeid}:{k}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % (2**31 - 1) + 1


def plan(nodeids: list[str], seeds: int, base: int, shard: tuple[int, int]) -> list[Job]:
    jobs = [Job(n, seed_for(base, n, k)) for n in nodeids for k in range(seeds)]
    i, k = shard
    jobs = [j for idx, j in enumerate(jobs) if idx % k == i - 1]
    for idx, j in enumerate(jobs):
        j.index = idx
    return jobs


TASK_TIMEOUT_S = 3600       # one build or one job; pytest's own timeout (900 s per test) comes first
PLAN_TIMEOUT_S = 600


def job_env(args: argparse.Namespace, extra: dict[str, str]) -> dict[str, str]:
    """The environment of a build or job subprocess (on whichever worker it runs)."""
    env = dict(os.environ)
    env.update({
        "SIM_COVERAGE": ("toggle" if args.toggle else "1") if args.coverage else "0",
        "FCOV_DIR": str(OUT / "fcov"),
        "WAVES": "0",
        "PYTHONWARNINGS": "ignore",
        **extra,
    })
    if args.bug:
        env["NIC_BUG"] = args.bug
    else:
        env.pop("NIC_BUG", None)
    # make's variables must not leak: cocotb reads COVERAGE as "collect Python coverage".
    for var in ("COVERAGE", "BUG", "SHARD", "REGRESS_SEEDS", "REGRESS_K", "REGRESS_SEED_BASE", "JOBS",
                "REGRESS_SCHEDULER", "SIM_PLAN_FILE", "SIM_BUILD_ONLY", "MAKEFLAGS", "MAKELEVEL", "MFLAGS"):
        if var not in extra:
            env.pop(var, None)
    return env


def pytest_cmd(*extra: str) -> list[str]:
    return [str(REPO / PY), "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q", *extra]


def plan_builds(nodeids: list[str], args: argparse.Namespace) -> dict[str, list[str]]:
    """{node id: [build folder, ...]} from one SIM_PLAN_FILE pass over the selected tests (no
    build, no simulation; a test that never reaches tb/sim.py builds inside its job)."""
    plan_file = OUT / "build-plan.jsonl"
    plan_file.unlink(missing_ok=True)
    env = job_env(args, {"SIM_PLAN_FILE": str(plan_file)})
    with open(OUT / "logs" / "build-plan.log", "w") as log:
        subprocess.run(pytest_cmd("--timeout=120", *nodeids), cwd=REPO, env=env, stdout=log,
                       stderr=subprocess.STDOUT, timeout=PLAN_TIMEOUT_S)
    needs: dict[str, list[str]] = {}
    if plan_file.is_file():
        for line in plan_file.read_text().splitlines():
            rec = json.loads(line)
            lst = needs.setdefault(rec["nodeid"], [])
            if rec["build_dir"] not in lst:
                lst.append(rec["build_dir"])
    return needs


def finish_job(job: Job, res: dict) -> Job:
    """Fill in `job` from its task's result and its log."""
    log = OUT / "logs" / f"{job.safe}.log"
    job.seconds = res.get("seconds", 0.0)
    job.worker = res.get("worker", "")
    if res.get("skipped"):
        job.rc = 1
        job.message = f"not run: {res['skipped']}"
        return job
    job.rc = res["rc"]
    text = log.read_text(errors="replace") if log.is_file() else ""
    m = re.findall(r"(\d+) of (\d+) cocotb tests failed", text)
    if m:
        job.cocotb_failed, job.cocotb_total = int(m[-1][0]), int(m[-1][1])
    else:
        job.cocotb_total = sum(int(x) for x in re.findall(r"(\d+) cocotb tests passed", text))
    if job.rc != 0:
        # The cocotb failure detail (indented under tb/sim.py's AssertionError), else any error line.
        detail = [m[1] for m in re.finditer(r"(?m)^E {5,}(\S.*)$", text) if "reproduce" not in m[1] and not m[1].startswith("AssertionError")]
        lines = detail or [ln for ln in text.splitlines() if re.search(r"AssertionError|failed|Error", ln)]
        job.message = (lines[0].strip() if lines else f"pytest exit code {job.rc}")[:200]
        if job.rc == 124:
            job.message = f"timed out after {TASK_TIMEOUT_S} s"
    job.run_dirs = sorted((REPO / "build" / "run").glob(f"*-{job.tag}"))
    return job


# ------------------------------------------------------------------------------------------
# Durations of the previous run (job order: longest first)
# ------------------------------------------------------------------------------------------
def history_path() -> Path:
    return OUT.with_name(OUT.name + "-history.json")


def load_history() -> dict[str, float]:
    try:
        return {k: float(v) for k, v in json.loads(history_path().read_text()).get("seconds", {}).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def save_history(old: dict[str, float], jobs: list[Job], builds: dict[str, float]) -> None:
    """Per test node, the longest seed of this run (tests not run keep their old figure)."""
    new = dict(old)
    per_node: dict[str, float] = {}
    for j in jobs:
        if j.rc is not None and j.seconds:
            per_node[j.nodeid] = max(per_node.get(j.nodeid, 0.0), j.seconds)
    new.update(per_node)
    history_path().write_text(json.dumps({"seconds": dict(sorted(new.items())), "builds": builds}, indent=1))


def order_jobs(jobs: list[Job], history: dict[str, float]) -> list[Job]:
    """Longest recorded first; tests with no record first of all (they may be long)."""
    return sorted(jobs, key=lambda j: (j.nodeid in history, -history.get(j.nodeid, 0.0), j.index))


# ------------------------------------------------------------------------------------------
# The cluster
# ------------------------------------------------------------------------------------------
def connect(scheduler: str, jobs_n: int):
    """A dask.distributed Client: on the scheduler at `scheduler` (tcp://HOST:PORT), or on a
    LocalCluster of `jobs_n` single-threaded worker processes. Returns (client, cluster)."""
    import logging

    from distributed import Client, LocalCluster

    if scheduler:
        try:
            return Client(scheduler, timeout="30s"), None
        except OSError as e:
            sys.exit(f"regress: REGRESS_SCHEDULER={scheduler}: cannot reach the scheduler ({e})")
    cluster = LocalCluster(n_workers=jobs_n, threads_per_worker=1, processes=True, memory_limit=0,
                           dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR)
    return Client(cluster), cluster


def worker_threads(client) -> int:
    return sum(w.get("nthreads", 1) for w in client.scheduler_info(n_workers=-1)["workers"].values())


def tasks_by_value() -> SimpleNamespace:
    """tb/regress_tasks.py's functions, made from its source in a module nobody can import, so
    that Dask pickles them by value (cloudpickle): the scheduler and the workers need not
    import this repo (cloudpickle's register_pickle_by_value is not enough: distributed tries
    plain pickle first, which pickles the functions by name)."""
    path = REPO / "tb" / "regress_tasks.py"
    ns: dict = {"__name__": "devmem_nic_regress_tasks"}
    exec(compile(path.read_text(), str(path), "exec"), ns)
    return SimpleNamespace(build_task=ns["build_task"], job_task=ns["job_task"])


def run_on_cluster(client, jobs: list[Job], needs: dict[str, list[str]], args: argparse.Namespace,
                   on_done) -> dict[str, dict]:
    """Builds first (one per build folder, each with the first job's test node that needs it),
    then the jobs in the given order, each after its builds; `on_done(job, result)` as each
    job ends. Returns the builds' results by folder."""
    from distributed import as_completed

    regress_tasks = tasks_by_value()
    builds: dict[str, object] = {}
    build_node: dict[str, str] = {}
    for j in jobs:
        for d in needs.get(j.nodeid, []):
            build_node.setdefault(d, j.nodeid)
    n_jobs = len(jobs)
    for k, (d, nodeid) in enumerate(build_node.items()):
        name = re.sub(r"[^A-Za-z0-9_.=+-]+", "_", "/".join(Path(d).parts[-2:]))
        spec = {"cmd": pytest_cmd(nodeid), "cwd": str(REPO), "log": str(OUT / "logs" / f"build-{name}.log"),
                "env": job_env(args, {"SIM_BUILD_ONLY": "1", "SIM_RUN_TAG": f"build{k}"}),
                "timeout_s": TASK_TIMEOUT_S}
        builds[d] = client.submit(regress_tasks.build_task, spec, key=f"build-{k}-{name}",
                                  priority=2 * n_jobs + 10, pure=False)
    futs = {}
    for rank, j in enumerate(jobs):
        env = job_env(args, {"COCOTB_RANDOM_SEED": str(j.seed), "SIM_RUN_TAG": j.tag})
        for d in (REPO / "build" / "run").glob(f"*-{j.tag}"):
            (d / "coverage.dat").unlink(missing_ok=True)
        spec = {"cmd": pytest_cmd(f"--junitxml={OUT / 'junit' / f'{j.safe}.xml'}", "-o", "junit_family=xunit1", j.nodeid),
                "cwd": str(REPO), "env": env, "log": str(OUT / "logs" / f"{j.safe}.log"),
                "timeout_s": TASK_TIMEOUT_S}
        deps = [builds[d] for d in needs.get(j.nodeid, [])]
        fut = client.submit(regress_tasks.job_task, spec, *deps, key=f"job-{j.index}-{j.safe}",
                            priority=n_jobs - rank, pure=False)
        futs[fut] = j
    for fut in as_completed(list(futs)):
        on_done(futs[fut], fut.result())
    return {d: f.result() for d, f in builds.items()}


def merge_junit(jobs: list[Job], since: float = 0.0) -> Path:
    suites = ET.Element("testsuites", name="regress")
    tests = failures = errors = 0
    for job in jobs:
        f = OUT / "junit" / f"{job.safe}.xml"
        if not f.is_file():
            suite = ET.SubElement(suites, "testsuite", name=job.safe, tests="1", failures="0", errors="1")
            case = ET.SubElement(suite, "testcase", name=f"{job.nodeid}[seed={job.seed}]")
            ET.SubElement(case, "error", message=job.message or "no JUnit file")
            tests += 1
            errors += 1
            continue
        root = ET.parse(f).getroot()
        for suite in root.iter("testsuite"):
            suite.set("name", f"{job.nodeid} seed={job.seed}")
            props = ET.SubElement(suite, "properties")
            ET.SubElement(props, "property", name="seed", value=str(job.seed))
            ET.SubElement(props, "property", name="rerun", value=job.rerun(os.environ.get("NIC_BUG", "")))
            for case in suite.iter("testcase"):
                case.set("name", f"{case.get('name')}[seed={job.seed}]")
            tests += int(suite.get("tests", 0))
            failures += int(suite.get("failures", 0))
            errors += int(suite.get("errors", 0))
            suites.append(suite)
    suites.set("tests", str(tests))
    suites.set("failures", str(failures))
    suites.set("errors", str(errors))
    out = OUT / "junit.xml"
    ET.ElementTree(suites).write(out, encoding="utf-8", xml_declaration=True)
    # The cocotb-level results (one testcase per cocotb test) of the same runs, merged too.
    csuites = ET.Element("testsuites", name="regress-cocotb")
    # Jobs of one test file share seeds (and so run-folder tags): each results file once.
    # Only this run's files: an older run of another test with the same seed left its own.
    files = sorted({f for job in jobs for f in (REPO / "build" / "results").glob(f"*-{job.tag}.xml")
                    if f.stat().st_mtime >= since})
    for f in files:
        if True:
            for suite in ET.parse(f).getroot().iter("testsuite"):
                suite.set("name", f"{f.stem}")
                csuites.append(suite)
    ET.ElementTree(csuites).write(OUT / "junit-cocotb.xml", encoding="utf-8", xml_declaration=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.regress", description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=int(os.environ.get("REGRESS_SEEDS", "3")))
    ap.add_argument("--seed-base", type=int, default=int(os.environ.get("REGRESS_SEED_BASE", "1")))
    ap.add_argument("--shard", default=os.environ.get("SHARD", "1/1") or "1/1", help="i/K: run shard i of K")
    ap.add_argument("--jobs", default=os.environ.get("JOBS", "auto"))
    ap.add_argument("--bug", default=os.environ.get("BUG", ""), help="tests/bugs/<name>.patch to build from")
    ap.add_argument("--no-coverage", dest="coverage", action="store_false",
                    default=os.environ.get("COVERAGE", "1") not in ("0", "no", "off", ""))
    ap.add_argument("--toggle", action="store_true", default=os.environ.get("COVERAGE", "") == "toggle",
                    help="toggle coverage too (slow: ~30x at 512 bits)")
    ap.add_argument("-k", dest="expr", default=os.environ.get("REGRESS_K", ""), help="pytest -k filter")
    ap.add_argument("--scheduler", default=os.environ.get("REGRESS_SCHEDULER", ""),
                    help="tcp://HOST:PORT of a running Dask scheduler (default: a LocalCluster of --jobs workers)")
    args = ap.parse_args(argv)
    m = re.fullmatch(r"(\d+)/(\d+)", args.shard.strip())
    if not m or not 1 <= int(m[1]) <= int(m[2]):
        sys.exit(f"regress: SHARD={args.shard!r}: expected i/K with 1 <= i <= K")
    shard = (int(m[1]), int(m[2]))
    try:
        jobs_n = (os.cpu_count() or 1) if args.jobs == "auto" else int(args.jobs)
        if jobs_n < 1:
            raise ValueError
    except ValueError:
        sys.exit(f"regress: JOBS={args.jobs!r}: a number of workers (1 or more) or auto")
    if args.scheduler and not re.fullmatch(r"(tcp|tls)://[^:/\s]+:\d+", args.scheduler):
        sys.exit(f"regress: REGRESS_SCHEDULER={args.scheduler!r}: expected tcp://HOST:PORT")
    if args.bug:
        os.environ["NIC_BUG"] = args.bug

    t_start = time.monotonic()
    t_wall0 = time.time()
    if OUT.exists():
        shutil.rmtree(OUT)
    for d in ("logs", "junit", "fcov"):
        (OUT / d).mkdir(parents=True, exist_ok=True)
    nodeids = collect(args.expr)
    jobs = plan(nodeids, args.seeds, args.seed_base, shard)
    for j in jobs:
        j.bug = args.bug
    history = load_history()
    jobs = order_jobs(jobs, history)
    t_plan = time.monotonic()
    needs = plan_builds(sorted({j.nodeid for j in jobs}), args)
    n_builds = len({d for j in jobs for d in needs.get(j.nodeid, [])})
    client, cluster = connect(args.scheduler, jobs_n)
    try:
        workers = worker_threads(client)
        where = f"scheduler {args.scheduler}" if args.scheduler else f"a LocalCluster ({jobs_n} workers)"
        print(f"regress: {len(nodeids)} RTL tests x {args.seeds} seeds, shard {shard[0]}/{shard[1]}: "
              f"{len(jobs)} jobs, {n_builds} builds (planned in {time.monotonic() - t_plan:.0f} s) on {where}, "
              f"{workers} worker threads; coverage "
              f"{('line+branch+toggle' if args.toggle else 'line+branch') if args.coverage else 'off'}"
              f"{'; BUG=' + args.bug if args.bug else ''}", flush=True)
        print(f"regress: Dask dashboard {client.dashboard_link} (task stream and progress need bokeh, "
              "not pinned here; /info/main/workers.html works without it)", flush=True)
        if history:
            print(f"regress: jobs ordered longest first by {history_path().relative_to(REPO) if history_path().is_relative_to(REPO) else history_path()}",
                  flush=True)
        done: list[Job] = []
        t_jobs = time.monotonic()

        def on_done(j: Job, res: dict) -> None:
            finish_job(j, res)
            done.append(j)
            state = "PASS" if j.rc == 0 else "FAIL"
            left = len(jobs) - len(done)
            rate = (time.monotonic() - t_jobs) / len(done)
            print(f"  [{len(done):3d}/{len(jobs)}] {state} {j.nodeid} seed={j.seed} ({j.seconds:.0f} s on "
                  f"{j.worker}; ~{left * rate / 60:.0f} min left)", flush=True)
            if j.rc != 0:
                print(f"        {j.message}\n        reproduce: {j.rerun(args.bug)}", flush=True)

        build_res = run_on_cluster(client, jobs, needs, args, on_done)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    bad_builds = {d: r for d, r in build_res.items() if r.get("rc") != 0}
    for d, r in bad_builds.items():
        print(f"regress: build of {d} failed: see {r.get('log')}", flush=True)
    done.sort(key=lambda j: j.index)
    junit = merge_junit(done, since=t_wall0)

    # Functional coverage: every pyuvm run writes UCIS XML of its covergroups into
    # build/regress/fcov/; merged here (pyucis), reported per group, item and bin.
    xmls = sorted((OUT / "fcov").glob("*.xml"))
    fc_lines: list[str] = []
    fc_summary: dict = {}
    if xmls:
        merged = fcov.merge_ucis(xmls, OUT / "functional_coverage.xml")
        groups = fcov.read_ucis(merged)
        fcov.write_reports(groups, OUT / "functional_coverage", fcov.SPECS)
        fc_lines = fcov.summary_lines(groups, len(xmls), str(OUT / "functional_coverage"))
        fc_summary = {g.name: {"percent": round(g.percent, 2), "hit": g.hit, "total": g.total,
                               "items": {i.name: round(i.percent, 2) for i in g.items.values()}}
                      for g in groups.values()}

    # Verilator code coverage.
    cov_lines: list[str] = []
    if args.coverage:
        dats = sorted({d / "coverage.dat" for j in done for d in j.run_dirs if (d / "coverage.dat").is_file()})
        if dats:
            res = vcov.convert(dats, OUT / "coverage")
            cov_lines = [f"  code coverage ({len(dats)} runs merged): " + res.summary(),
                         *(f"    {ln}" for ln in res.block_summary()),
                         f"    {len(res.excluded or [])} points excluded with their reasons, holes per block: "
                         f"{OUT / 'coverage' / 'summary.json'}",
                         f"    lcov: {res.info}; "
                         + (f"html: {res.html}/index.html" if res.html else "html: genhtml not installed (apt-get install lcov)")]
        else:
            cov_lines = ["  code coverage: no coverage.dat written"]

    failed = [j for j in done if j.rc != 0]
    wall = time.monotonic() - t_start
    cocotb_total = sum(1 for _ in ET.parse(OUT / "junit-cocotb.xml").getroot().iter("testcase"))
    save_history(history, done, {d: round(r.get("seconds", 0.0), 1) for d, r in build_res.items()})
    lines = ["", "=" * 78,
             f"regress summary: {'FAIL' if failed else 'PASS'}   wall {wall / 60:.1f} min on "
             f"{args.scheduler or f'{jobs_n} local workers'}"
             f"{'   BUG=' + args.bug if args.bug else ''}",
             f"  jobs: {len(done)} ({len(nodeids)} tests x {args.seeds} seeds, shard {shard[0]}/{shard[1]}, "
             f"seed base {args.seed_base}); passed {len(done) - len(failed)}, failed {len(failed)}",
             f"  cocotb tests run: {cocotb_total}; time per job: max {max((j.seconds for j in done), default=0):.0f} s, "
             f"total {sum(j.seconds for j in done) / 60:.1f} min; {len(build_res)} builds "
             f"({sum(r.get('seconds', 0) for r in build_res.values()) / 60:.1f} min, {len(bad_builds)} failed); "
             f"{len({j.worker for j in done if j.worker})} worker processes",
             f"  junit: {junit} (+ junit-cocotb.xml); logs: {OUT}/logs/",
             *cov_lines, *fc_lines]
    if failed:
        lines.append("  failures (each line: the command that reruns it with waves):")
        for j in failed:
            lines.append(f"    {j.nodeid} seed={j.seed}: {j.message}")
            lines.append(f"      {j.rerun(args.bug)}")
    lines.append("=" * 78)
    text = "\n".join(lines)
    print(text)
    (OUT / "summary.txt").write_text(text.strip() + "\n")
    (OUT / "summary.json").write_text(json.dumps({
        "wall_s": round(wall, 1), "jobs": len(done), "tests": len(nodeids), "seeds": args.seeds,
        "shard": f"{shard[0]}/{shard[1]}", "bug": args.bug or None, "failed": [
            {"nodeid": j.nodeid, "seed": j.seed, "message": j.message, "rerun": j.rerun(args.bug)} for j in failed],
        "scheduler": args.scheduler or f"LocalCluster({jobs_n})",
        "functional_coverage": fc_summary,
        "builds": {d: {"rc": r.get("rc"), "seconds": round(r.get("seconds", 0.0), 1), "worker": r.get("worker"),
                       "log": r.get("log")} for d, r in build_res.items()},
        "results": [{"nodeid": j.nodeid, "seed": j.seed, "rc": j.rc, "seconds": round(j.seconds, 1),
                     "worker": j.worker} for j in done],
    }, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
