"""Which tests cover which RTL module, derived from the tests themselves.

Every RTL test builds its design through `tb.sim.run_rtl_test`. A module is covered by a
test when the test's design contains it: the modules declared in the test's sources under
rtl/, tb/checker/ and tb/formal/props/ (one module per file, so a source list is the module list). Nothing is kept by hand:
`refresh()` derives the whole map each time by running every `rtl`-marked test in map-only
mode (`NIC_RTL_MAP_ONLY=1`: run_rtl_test records the test's node id, top level and sources
(`record`) and skips, so nothing is built or simulated; about as long as collecting the
tests, 20-40 s), and writes it to build/rtl_map.json.

    make test-rtl MODULE=rx_split_dma     # run the tests that cover rx_split_dma
    make test-rtl MODULE=list             # the map: module -> tests
    .venv/bin/python -m tb.rtl_map rx_split_dma --list

Tests of a small design (a module and its children) run first, the whole-NIC tests after.
tests/test_rtl_map.py checks that every module of rtl/files.f is covered by a test.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
MAP_JSON = REPO_ROOT / "build" / "rtl_map.json"
MAP_ONLY_ENV = "NIC_RTL_MAP_ONLY"
MAP_DIR_ENV = "NIC_RTL_MAP_DIR"
_MODULE = re.compile(r"^\s*module\s+(?:automatic\s+|static\s+)?([A-Za-z_]\w*)", re.M)


def map_dir() -> Path:
    d = os.environ.get(MAP_DIR_ENV)
    if not d:
        raise RuntimeError(f"{MAP_DIR_ENV} is not set: records are written by a map-only run (refresh())")
    return Path(d)


def modules_in(path: Path) -> list[str]:
    """Modules declared in a SystemVerilog file (comments stripped)."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", path.read_text(errors="replace"), flags=re.S)
    return _MODULE.findall(text)


HDL_DIRS = (REPO_ROOT / "rtl", REPO_ROOT / "tb" / "checker", REPO_ROOT / "tb" / "formal" / "props",
            REPO_ROOT / "tb" / "cluster")
"""Where the mapped modules live: the NIC's RTL, the SystemVerilog protocol checker that
every nic_top build binds in (its own tests come first for its modules: the smallest design)
and the formal property modules (tests/rtl/test_formal_props.py simulates them bound to a
mutant copy of their module, a design with no rtl/ file) and the cluster's switch (tb/cluster/:
tests/rtl/test_eth_switch.py builds the switch alone)."""


def design_modules(sources: list[Path]) -> list[str]:
    """The rtl/, tb/checker/ and tb/formal/props/ modules of a design built from `sources`
    (other testbench modules, the fast harness's, are left out)."""
    out: list[str] = []
    for p in sources:
        p = Path(p).resolve()
        if p.suffix in (".sv", ".v") and any(p.is_relative_to(d) for d in HDL_DIRS):
            out += modules_in(p)
    return sorted(set(out))


def record(nodeid: str, toplevel: str, sources: list[Path]) -> None:
    """Note that the running test `nodeid` builds `toplevel` from `sources`."""
    d = map_dir()
    d.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha1(nodeid.encode()).hexdigest()[:16] + ".json"
    entry = {"test": nodeid, "toplevel": toplevel,
             "sources": [str(Path(s).resolve().relative_to(REPO_ROOT)) if Path(s).resolve().is_relative_to(REPO_ROOT)
                         else str(s) for s in sources],
             "modules": design_modules(list(sources))}
    tmp = d / (name + ".tmp")
    tmp.write_text(json.dumps(entry, indent=1))
    tmp.replace(d / name)


def load(directory: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(directory.glob("*.json"))]


def refresh(jobs: str = "auto", extra: list[str] | None = None) -> list[dict]:
    """Derive the map: every rtl-marked test in map-only mode; saved in build/rtl_map.json."""
    import shutil
    import tempfile
    (REPO_ROOT / "build").mkdir(exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="rtl_map.", dir=REPO_ROOT / "build"))
    try:
        env = dict(os.environ, **{MAP_ONLY_ENV: "1", MAP_DIR_ENV: str(tmp)})
        cmd = [sys.executable, "-m", "pytest", "-q", "-m", "rtl", "-p", "no:cacheprovider",
               *(["-p", "no:xdist"] if str(jobs) == "0" else ["-n", str(jobs)]), *(extra or [])]
        res = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True)
        if res.returncode not in (0, 5):
            raise RuntimeError(f"map-only run of the RTL tests failed (exit {res.returncode}):\n"
                               + "\n".join(res.stdout.splitlines()[-15:]))
        entries = load(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out = MAP_JSON.with_suffix(f".{os.getpid()}.tmp")
    out.write_text(json.dumps(entries, indent=1))
    out.replace(MAP_JSON)
    return entries


def rtl_modules() -> dict[str, str]:
    """module -> file of every module in rtl/files.f."""
    from tb.sim import rtl_file_list
    out = {}
    for p in rtl_file_list():
        for m in modules_in(p):
            out[m] = str(p.relative_to(REPO_ROOT))
    return out


def tests_for(entries: list[dict], module: str) -> list[str]:
    """Node ids of the tests whose design contains `module`, small designs first."""
    hits = [e for e in entries if module in e["modules"]]
    hits.sort(key=lambda e: (len(e["modules"]), e["test"]))
    return [e["test"] for e in hits]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.rtl_map", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("module", help="an RTL module (e.g. rx_split_dma), or `list` for the whole map")
    ap.add_argument("--list", action="store_true", help="print the tests, do not run them")
    ap.add_argument("--jobs", default=os.environ.get("JOBS", "auto"), help="pytest -n (default JOBS or auto)")
    args, rest = ap.parse_known_args(argv)
    args.pytest_args = [a for a in rest if a != "--"]     # more pytest arguments (after --)
    known = rtl_modules()
    if args.module != "list" and args.module not in known:
        print(f"test-rtl: no module {args.module!r} in rtl/files.f (modules: {', '.join(sorted(known))})",
              file=sys.stderr)
        return 2
    print("test-rtl: deriving the module -> test map from the RTL tests (map-only run, no build)", flush=True)
    try:
        entries = refresh("0")         # collection-bound: one process is fastest
    except RuntimeError as e:
        print(f"test-rtl: {e}", file=sys.stderr)
        return 1
    if args.module == "list":
        for m in sorted(known):
            tests = tests_for(entries, m)
            print(f"{m} ({known[m]}): {len(tests)} tests")
            for t in tests:
                print(f"  {t}")
        return 0
    tests = tests_for(entries, args.module)
    if not tests:
        print(f"test-rtl: no test covers {args.module} ({known[args.module]})", file=sys.stderr)
        return 1
    print(f"test-rtl: {len(tests)} tests cover {args.module} ({known[args.module]}), smallest designs first:")
    for t in tests:
        print(f"  {t}")
    if args.list:
        return 0
    cmd = [sys.executable, "-m", "pytest", "-n", str(args.jobs), *args.pytest_args, *tests]
    return subprocess.call(cmd, cwd=REPO_ROOT)


if __name__ == "__main__":
    sys.exit(main())
