"""Profile-guided optimisation (PGO) of the Verilator models, for the speed benchmark.

clang compiles the model once with instrumentation (`-fprofile-instr-generate`), the
instrumented simulator runs a short training workload, `llvm-profdata` merges the counts, and
clang compiles the model again with `-fprofile-instr-use`. Verilator's generated `eval` code is
mostly long chains of branches on enables and valids; with measured branch frequencies clang
lays the hot paths out straight and moves the cold ones away, which on this design is worth
about a third more simulated cycles per second (docs/performance.md). The NIC's behaviour is
the same in every cycle: the same C++ is compiled, only faster (the benchmarks check the same
cycle counts and every frame).

Training workload: bulk RX (bench/sim_speed_sim.py) with fewer frames than the measured runs.
A profile only says which code is hot; code a workload never reaches stays correct but is laid
out as cold, so a PGO build helps most on traffic like its training.

Each profile is stored under build/bench/pgo/ with its content hash in its name, and the hash
is in the build arguments, so a model is rebuilt exactly when its profile changes (Verilator's
makefile does not track compiler flags).

    from bench import pgo
    why = pgo.unavailable()                    # None, or why PGO cannot run here
    args, rec = pgo.train_fast(64, [], run)    # run(build_args, env): the training workload
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from tb.sim import BUILD_ROOT, sim_cxx

PGO_DIR = BUILD_ROOT / "bench" / "pgo"
# Verilator arguments of the instrumented build (compile and link).
GEN_ARGS = ["-CFLAGS", "-fprofile-instr-generate", "-LDFLAGS", "-fprofile-instr-generate"]
# Training frames per MAC width: a few seconds of simulation each.
TRAIN_FRAMES = {64: 400, 512: 2000}


def use_args(profdata: Path) -> list[str]:
    """Verilator arguments of a build optimised with `profdata`. Functions the profile has no
    counts for (the training never ran them) are compiled as usual; clang's notes about them
    are silenced."""
    return ["-CFLAGS", f"-fprofile-instr-use={profdata}",
            "-CFLAGS", "-Wno-profile-instr-unprofiled", "-CFLAGS", "-Wno-profile-instr-out-of-date",
            "-CFLAGS", "-Wno-profile-instr-missing"]


def unavailable(env: dict[str, str] | None = None) -> str | None:
    """None when PGO builds work here, else the reason (for the benchmark's report)."""
    env = dict(os.environ) if env is None else env
    if sim_cxx(env) != "clang++":
        return "the Verilator models are built with g++ here; PGO is set up for clang++"
    if not shutil.which("llvm-profdata", path=env.get("PATH")):
        return "llvm-profdata is not installed (make setup installs the Debian package llvm)"
    rt = subprocess.run(["clang++", "--print-runtime-dir"], capture_output=True, text=True).stdout.strip()
    if not rt or not any(Path(rt).glob("libclang_rt.profile*.a")):
        return (f"clang's profile runtime is not installed (no libclang_rt.profile in {rt or '?'}; "
                "make setup installs libclang-rt-dev)")
    return None


def merge(raw: Path, name: str) -> Path:
    """Merge one raw profile into build/bench/pgo/<name>-<hash>.profdata; its path."""
    if not raw.is_file() or raw.stat().st_size == 0:
        raise RuntimeError(f"PGO training wrote no profile ({raw}): the instrumented run did not exit normally")
    PGO_DIR.mkdir(parents=True, exist_ok=True)
    tmp = PGO_DIR / f"{name}.profdata.tmp"
    subprocess.run(["llvm-profdata", "merge", "-o", str(tmp), str(raw)], check=True,
                   capture_output=True, text=True)
    digest = hashlib.sha256(tmp.read_bytes()).hexdigest()[:12]
    out = PGO_DIR / f"{name}-{digest}.profdata"
    tmp.replace(out)
    raw.unlink()
    return out


def train_fast(width: int, build_args: Sequence[str],
               run: Callable[[list[str], dict[str, str]], dict]) -> tuple[list[str], dict]:
    """Train the cocotb fast path (tb/fast) at MAC width `width`. `run(build_args, env)` runs
    the training workload on a build with those arguments and that extra environment and
    returns its result (bench/sim_speed.py runs its own traffic). Returns the Verilator
    arguments of the PGO build (`build_args` + use_args) and a record of the training."""
    PGO_DIR.mkdir(parents=True, exist_ok=True)
    raw = PGO_DIR / f"fast-{width}.profraw"
    raw.unlink(missing_ok=True)
    t0 = time.monotonic()
    res = run([*build_args, *GEN_ARGS], {"LLVM_PROFILE_FILE": str(raw)})
    prof = merge(raw, f"fast-{width}")
    rec = {"path": "fast", "frames": res["frames"], "frame_bytes": res["frame_bytes"],
           "profile": str(prof), "train_s": time.monotonic() - t0, "train_cycles": res["cycles"]}
    return [*build_args, *use_args(prof)], rec


def train_standalone(width: int, build_args: Sequence[str], frames: list[bytes],
                     n_frames: int | None = None) -> tuple[Path, dict]:
    """Train the Verilator-only ceiling (tb/fast/standalone.py) on `frames`; returns the PGO
    build's binary and a record of the training."""
    from tb.fast import standalone

    n_frames = n_frames or TRAIN_FRAMES.get(width, 1000)
    PGO_DIR.mkdir(parents=True, exist_ok=True)
    raw = PGO_DIR / f"standalone-{width}.profraw"
    raw.unlink(missing_ok=True)
    t0 = time.monotonic()
    binary = standalone.build(width, [*build_args, *GEN_ARGS], tag="-pgo-gen")
    standalone.run_frames(binary, width, frames, n_frames, PGO_DIR / f"train-standalone-{width}.img",
                          env={"LLVM_PROFILE_FILE": str(raw)})
    prof = merge(raw, f"standalone-{width}")
    binary = standalone.build(width, [*build_args, *use_args(prof)], tag=f"-pgo-{prof.stem.rsplit('-', 1)[1]}")
    rec = {"path": "verilator_only", "frames": n_frames, "profile": str(prof), "train_s": time.monotonic() - t0}
    return binary, rec
