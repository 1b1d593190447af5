"""Dask workers for `make regress` on a batch farm (SLURM, LSF or PBS), with dask-jobqueue.

    .venv/bin/python scripts/dask_farm.py slurm --jobs 20 [--queue Q] [--account A]
        [--memory 8GB] [--walltime 04:00:00] [--scheduler-file F] [--print-script]

Starts a Dask scheduler here (on the login node), submits `--jobs` batch jobs of one
single-threaded worker each (a regression job is one simulator process: one core), prints
the scheduler's address and writes it to `--scheduler-file`, and keeps the workers until
Ctrl-C. In another terminal, from the same repo:

    make regress REGRESS_SCHEDULER=tcp://HOST:PORT

Every worker must see this repo at the same path (a shared filesystem) and runs the repo's
own .venv Python from the repo folder; the batch script does exactly that. `--print-script`
prints the batch script and exits without submitting anything.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PYTHON = REPO / ".venv" / "bin" / "python"
KINDS = ("slurm", "lsf", "pbs")


def make_cluster(kind: str, args: argparse.Namespace):
    """The dask-jobqueue cluster object (its scheduler runs in this process; nothing submitted)."""
    import dask_jobqueue

    cls = {"slurm": dask_jobqueue.SLURMCluster, "lsf": dask_jobqueue.LSFCluster,
           "pbs": dask_jobqueue.PBSCluster}[kind]
    kw = dict(cores=1, processes=1, memory=args.memory, walltime=args.walltime, python=str(PYTHON),
              job_script_prologue=[f"cd {REPO}"],
              log_directory=str(REPO / "build" / "farm-logs"), scheduler_options={"host": args.host or None})
    if args.queue:
        kw["queue"] = args.queue
    if args.account:
        kw["account" if kind != "lsf" else "project"] = args.account
    return cls(**kw)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="scripts/dask_farm.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kind", choices=KINDS)
    ap.add_argument("--jobs", type=int, default=8, help="batch jobs, one worker (one core) each")
    ap.add_argument("--memory", default="8GB", help="per worker (a 512-bit coverage build needs several GB)")
    ap.add_argument("--walltime", default="04:00:00")
    ap.add_argument("--queue", default="")
    ap.add_argument("--account", default="", help="account (SLURM, PBS) or project (LSF)")
    ap.add_argument("--host", default="", help="address the scheduler listens on (default: this host)")
    ap.add_argument("--scheduler-file", type=Path, default=REPO / "build" / "farm-scheduler.txt")
    ap.add_argument("--print-script", action="store_true", help="print the batch script and exit")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error("--jobs must be 1 or more")
    if not PYTHON.is_file():
        ap.error(f"{PYTHON} missing: run `make setup` first")
    cluster = make_cluster(args.kind, args)
    try:
        if args.print_script:
            print(cluster.job_script())
            return 0
        cluster.scale(jobs=args.jobs)
        args.scheduler_file.parent.mkdir(parents=True, exist_ok=True)
        args.scheduler_file.write_text(cluster.scheduler_address + "\n")
        print(f"dask_farm: {args.jobs} {args.kind} jobs submitted; scheduler {cluster.scheduler_address} "
              f"(also in {args.scheduler_file})\n"
              f"  run: make regress REGRESS_SCHEDULER={cluster.scheduler_address}\n"
              f"  Ctrl-C here stops the workers", flush=True)
        while True:
            time.sleep(60)
    except KeyboardInterrupt:
        print("dask_farm: stopping the workers", flush=True)
        return 0
    finally:
        cluster.close()


if __name__ == "__main__":
    sys.exit(main())
