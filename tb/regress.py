"""The randomized regression: every RTL test (pytest marker `rtl`, each already parametrized
over the supported parameter sets) times N seeds, in parallel, with merged JUnit XML,
merged functional coverage, Verilator line/branch/toggle coverage as lcov + HTML, and a
one-screen summary. `make regress` runs it; see docs/verification.md.

    .venv/bin/python -m tb.regress [--seeds N] [--shard i/K] [--jobs J] [--bug NAME]
                                   [--no-coverage] [-k EXPR] [--seed-base B]

Seeds are derived deterministically from (seed base, pytest node id, seed index), so the same
command always runs the same (test, seed) jobs, and `--shard i/K` picks every K-th job of that
sorted list: K machines running shards 1..K together run exactly the full regression.
Every failure prints the one command that reruns that test with that seed and waves on.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
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
    digest = hashlib.sha256(f"{base}:{nodeid.split('[')[0]}:{k}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % (2**31 - 1) + 1


def plan(nodeids: list[str], seeds: int, base: int, shard: tuple[int, int]) -> list[Job]:
    jobs = [Job(n, seed_for(base, n, k)) for n in nodeids for k in range(seeds)]
    i, k = shard
    jobs = [j for idx, j in enumerate(jobs) if idx % k == i - 1]
    for idx, j in enumerate(jobs):
        j.index = idx
    return jobs


def run_job(job: Job, args: argparse.Namespace) -> Job:
    logs = OUT / "logs"
    junit = OUT / "junit" / f"{job.safe}.xml"
    env = dict(os.environ)
    env.update({
        "COCOTB_RANDOM_SEED": str(job.seed),
        "SIM_RUN_TAG": job.tag,
        "SIM_COVERAGE": ("toggle" if args.toggle else "1") if args.coverage else "0",
        "FCOV_DIR": str(OUT / "fcov"),
        "WAVES": "0",
        "PYTHONWARNINGS": "ignore",
    })
    if args.bug:
        env["NIC_BUG"] = args.bug
    else:
        env.pop("NIC_BUG", None)
    # make's variables must not leak: cocotb reads COVERAGE as "collect Python coverage".
    for var in ("COVERAGE", "BUG", "SHARD", "REGRESS_SEEDS", "REGRESS_K", "REGRESS_SEED_BASE", "JOBS"):
        env.pop(var, None)
    for d in (REPO / "build" / "run").glob(f"*-{job.tag}"):
        (d / "coverage.dat").unlink(missing_ok=True)
    t0 = time.monotonic()
    with open(logs / f"{job.safe}.log", "w") as log:
        proc = subprocess.run([PY, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q",
                               f"--junitxml={junit}", "-o", "junit_family=xunit1", job.nodeid],
                              cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    job.seconds = time.monotonic() - t0
    job.rc = proc.returncode
    text = (logs / f"{job.safe}.log").read_text(errors="replace")
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
    job.run_dirs = sorted((REPO / "build" / "run").glob(f"*-{job.tag}"))
    return job


def merge_junit(jobs: list[Job]) -> Path:
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
    files = sorted({f for job in jobs for f in (REPO / "build" / "results").glob(f"*-{job.tag}.xml")})
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
    args = ap.parse_args(argv)
    m = re.fullmatch(r"(\d+)/(\d+)", args.shard.strip())
    if not m or not 1 <= int(m[1]) <= int(m[2]):
        sys.exit(f"regress: SHARD={args.shard!r}: expected i/K with 1 <= i <= K")
    shard = (int(m[1]), int(m[2]))
    jobs_n = (os.cpu_count() or 1) if args.jobs == "auto" else int(args.jobs)
    if args.bug:
        os.environ["NIC_BUG"] = args.bug

    t_start = time.monotonic()
    if OUT.exists():
        shutil.rmtree(OUT)
    for d in ("logs", "junit", "fcov"):
        (OUT / d).mkdir(parents=True, exist_ok=True)
    nodeids = collect(args.expr)
    jobs = plan(nodeids, args.seeds, args.seed_base, shard)
    for j in jobs:
        j.bug = args.bug
    print(f"regress: {len(nodeids)} RTL tests x {args.seeds} seeds, shard {shard[0]}/{shard[1]}: "
          f"{len(jobs)} jobs on {jobs_n} workers; coverage {('line+branch+toggle' if args.toggle else 'line+branch') if args.coverage else 'off'}"
          f"{'; BUG=' + args.bug if args.bug else ''}", flush=True)
    done: list[Job] = []
    with cf.ThreadPoolExecutor(max_workers=jobs_n) as pool:
        futs = [pool.submit(run_job, j, args) for j in jobs]
        for fut in cf.as_completed(futs):
            j = fut.result()
            done.append(j)
            state = "PASS" if j.rc == 0 else "FAIL"
            print(f"  [{len(done):3d}/{len(jobs)}] {state} {j.nodeid} seed={j.seed} ({j.seconds:.0f} s)", flush=True)
            if j.rc != 0:
                print(f"        reproduce: {j.rerun(args.bug)}", flush=True)
    done.sort(key=lambda j: j.index)
    junit = merge_junit(done)

    # Functional coverage (tb/uvm runs write one JSON each into build/regress/fcov/).
    fc = fcov.merge_files(sorted((OUT / "fcov").glob("*.json")))
    fc_lines: list[str] = []
    if fc is not None:
        fcov.write_reports(fc, OUT / "functional_coverage")
        fc_lines = fcov.summary_lines(fc, str(OUT / "functional_coverage"))

    # Verilator code coverage.
    cov_lines: list[str] = []
    if args.coverage:
        dats = sorted({d / "coverage.dat" for j in done for d in j.run_dirs if (d / "coverage.dat").is_file()})
        if dats:
            res = vcov.convert(dats, OUT / "coverage")
            cov_lines = [f"  code coverage ({len(dats)} runs merged): " + res.summary(),
                         f"    lcov: {res.info}; "
                         + (f"html: {res.html}/index.html" if res.html else "html: genhtml not installed (apt-get install lcov)")]
        else:
            cov_lines = ["  code coverage: no coverage.dat written"]

    failed = [j for j in done if j.rc != 0]
    wall = time.monotonic() - t_start
    cocotb_total = sum(1 for _ in ET.parse(OUT / "junit-cocotb.xml").getroot().iter("testcase"))
    lines = ["", "=" * 78,
             f"regress summary: {'FAIL' if failed else 'PASS'}   wall {wall / 60:.1f} min on {jobs_n} workers"
             f"{'   BUG=' + args.bug if args.bug else ''}",
             f"  jobs: {len(done)} ({len(nodeids)} tests x {args.seeds} seeds, shard {shard[0]}/{shard[1]}, "
             f"seed base {args.seed_base}); passed {len(done) - len(failed)}, failed {len(failed)}",
             f"  cocotb tests run: {cocotb_total}; sim time per job: "
             f"max {max((j.seconds for j in done), default=0):.0f} s",
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
        "results": [{"nodeid": j.nodeid, "seed": j.seed, "rc": j.rc, "seconds": round(j.seconds, 1)} for j in done],
    }, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
