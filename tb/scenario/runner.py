"""Run a user's scenario file on the golden model or on the RTL (`nicsim scenario FILE.py`).

A scenario file is a Python file with one or more `async def scenario...(env)` functions
(every top-level coroutine function whose name starts with `scenario`, in file order): each
gets a fresh NIC, brings the driver up itself (`tb.scenario.Rig.create(env)`) and raises
(an AssertionError, a KernelError) to fail. The NIC is the RTL's default on both backends:
8 RX queues with RSS and n-tuple steering, 4 TX queues, DMA twice the MAC width.

- `--backend model`: in this process, `tb.scenario.ModelEnv` (no simulator, no time).
- `--backend rtl`: nic_top under Verilator, through `tb.sim.run_rtl_test` on the fast harness
  (or `--testbench per-beat`); `tb/scenario/rtl_run.py` makes one cocotb test per scenario,
  each on a fresh `RtlEnv` after a reset.

docs/scenarios.md is the guide; examples/ holds scenarios that `make test` runs.
"""
from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import inspect
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Coroutine

SCENARIO_FILE_ENV = "NIC_SCENARIO_FILE"
NUM_RXQ = 8


class ScenarioFileError(Exception):
    """The file cannot be used: missing, not Python, no scenario in it."""


@dataclass
class Outcome:
    name: str
    ok: bool
    seconds: float
    error: str = ""


def load(path: str | Path) -> list[tuple[str, Callable[..., Coroutine[Any, Any, None]]]]:
    """(name, coroutine function) of every scenario in the file, in file order."""
    p = Path(path)
    if not p.is_file():
        raise ScenarioFileError(f"{path}: no such file")
    if p.suffix != ".py":
        raise ScenarioFileError(f"{path}: a scenario file is a Python file (.py)")
    name = "nic_scenario_" + hashlib.sha1(str(p.resolve()).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, p)
    if spec is None or spec.loader is None:
        raise ScenarioFileError(f"{path}: cannot be imported")
    mod = importlib.util.module_from_spec(spec)
    import sys
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except SyntaxError as e:
        raise ScenarioFileError(f"{path}:{e.lineno}: {e.msg}") from None
    except Exception as e:   # an import error of the user's file: say where, in one line
        tb = traceback.extract_tb(e.__traceback__)
        where = next((f"{f.filename}:{f.lineno}" for f in reversed(tb) if f.filename == str(p)), str(path))
        raise ScenarioFileError(f"{where}: {type(e).__name__}: {e}") from None
    found = [(n, f) for n, f in vars(mod).items()
             if n.startswith("scenario") and inspect.iscoroutinefunction(f)
             and getattr(f, "__module__", None) == name]
    if not found:
        raise ScenarioFileError(f"{path}: no `async def scenario...(env)` function in it")
    found.sort(key=lambda nf: nf[1].__code__.co_firstlineno)
    return found


def _one_line(e: BaseException, path: Path) -> str:
    """The error and where in the scenario file it was raised."""
    tb = traceback.extract_tb(e.__traceback__)
    where = next((f"{Path(f.filename).name}:{f.lineno}" for f in reversed(tb)
                  if Path(f.filename).resolve() == path.resolve()), "")
    return (f"{where}: " if where else "") + (f"{type(e).__name__}: {e}" if str(e) else type(e).__name__)


def run_model(path: str | Path, data_width: int = 64, seed: int = 0,
              only: list[str] | None = None) -> list[Outcome]:
    """Every scenario of the file on the golden model."""
    from tb.scenario.env import ModelEnv
    out = []
    for name, func in load(path):
        if only and name not in only:
            continue
        env = ModelEnv(num_rxq=NUM_RXQ, seed=seed, dma_bytes=2 * data_width // 8)
        t0 = time.monotonic()
        try:
            asyncio.run(func(env))
            out.append(Outcome(name, True, time.monotonic() - t0))
        except Exception as e:  # the scenario failed: report it, go on with the next
            out.append(Outcome(name, False, time.monotonic() - t0, _one_line(e, Path(path))))
    return out


def run_rtl(path: str | Path, data_width: int = 64, seed: int | None = None,
            testbench: str = "fast", waves: bool = False, name: str = "nicsim-scenario") -> list[Outcome]:
    """Every scenario of the file on nic_top under Verilator, one cocotb test each."""
    import os
    from xml.etree import ElementTree

    from tb.fast.build import run_name, run_nic_test
    scenarios = [n for n, _ in load(path)]       # refuse a bad file before building anything
    run = run_name(name, testbench)
    t0 = time.monotonic()
    failed = ""
    try:
        xml = run_nic_test(testbench, "tb.scenario.rtl_run", {"DATA_W": data_width}, run, waves=waves,
                           seed=seed, extra_env={SCENARIO_FILE_ENV: str(Path(path).resolve())})
    except AssertionError as e:    # a scenario failed (or the build): the results say which
        failed = str(e)
        from tb.sim import BUILD_ROOT
        xml = BUILD_ROOT / "results" / f"{run}.xml"
        if not xml.is_file() or xml.stat().st_mtime < t0:
            raise
    by_name = {}
    for case in ElementTree.parse(xml).getroot().iter("testcase"):
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
        msg = (bad.get("message") or bad.text or "failed").strip().splitlines()[0] if bad is not None else ""
        scen = case.get("name", "").split("/")[-1].removeprefix("name=")
        by_name[scen] = Outcome(scen, bad is None, float(case.get("time") or 0), msg)
    out = [by_name.get(n, Outcome(n, False, 0.0, failed.splitlines()[0] if failed else "did not run"))
           for n in scenarios]
    if waves:
        out_waves = os.path.join("build", "waves", f"{run}.fst")
        for o in out:
            o.error += ("" if o.ok else f" (waves: {out_waves})")
    return out
