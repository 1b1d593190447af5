"""What a Dask worker runs for `make regress` (tb/regress.py): one build, or one (test, seed)
job, each as a subprocess of the repo's own Python in the repo folder.

Standard library only, and sent to the workers by value (tb/regress.tasks_by_value), so a worker needs no
import of this repo: only the same Python and dask/distributed versions, and the repo at the
same path (a farm's shared filesystem) with its .venv. Results are small dicts; logs, JUnit,
coverage data and functional coverage are written under the repo's build/ folder, where the
client reads them.
"""
from __future__ import annotations

import os
import socket
import subprocess
import time


def _where() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def run_command(cmd: list[str], cwd: str, env: dict[str, str], log: str, timeout_s: float) -> dict:
    """Run `cmd` with its output in `log`; {rc, seconds, worker}. rc 124: timed out."""
    os.makedirs(os.path.dirname(log), exist_ok=True)
    t0 = time.monotonic()
    with open(log, "w") as fh:
        fh.write(f"# worker {_where()}: {' '.join(cmd)}\n")
        fh.flush()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=fh, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)               # the job and everything it started
            proc.wait()
            fh.write(f"\n# regress: killed after {timeout_s:.0f} s\n")
            rc = 124
        except BaseException:                    # the worker is being stopped: leave nothing behind
            os.killpg(proc.pid, 9)
            proc.wait()
            raise
    return {"rc": rc, "seconds": time.monotonic() - t0, "worker": _where(), "log": log}


def build_task(spec: dict) -> dict:
    """Build one simulator configuration: its first test node with SIM_BUILD_ONLY=1."""
    return run_command(spec["cmd"], spec["cwd"], spec["env"], spec["log"], spec["timeout_s"])


def job_task(spec: dict, *builds: dict) -> dict:
    """Run one (test, seed) job once the builds it needs are done; not at all when one failed."""
    bad = [b for b in builds if b.get("rc") != 0]
    if bad:
        return {"rc": None, "seconds": 0.0, "worker": _where(),
                "skipped": "build failed: " + ", ".join(b.get("log", "?") for b in bad)}
    return run_command(spec["cmd"], spec["cwd"], spec["env"], spec["log"], spec["timeout_s"])
