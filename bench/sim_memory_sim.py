"""cocotb half of the memory benchmark (bench/sim_memory.py): the simulator process's
resident memory over a long bulk run on the fast harness.

BENCH_MEM_PATH=rx runs `bench.sim_speed_sim.bulk_rx` (back-to-back TCP frames of
BENCH_FRAME_BYTES, split on, every frame checked, DMA write recording off); tx runs
`tb.tx_env.bulk_tx`. Every BENCH_SAMPLE_FRAMES checked frames it records VmRSS and VmHWM
from /proc/self/status (the whole process: Python, the Verilated model, the shared memory it
touched), the Python heap as tracemalloc sees it when BENCH_TRACEMALLOC=1 (slower; then the
JSON also lists the allocation sites that grew most between the first sample after warm-up
and the end), and the number of live Python objects (gc). Writes BENCH_OUT (JSON).
"""
from __future__ import annotations

import gc
import json
import os
import time
import tracemalloc

import cocotb

KIB = 1024


def proc_status(pid: str = "self") -> dict[str, int]:
    """VmRSS, VmHWM, RssAnon, RssFile, RssShmem of a process, in bytes (/proc/PID/status)."""
    out = {}
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem"):
                out[key] = int(rest.split()[0]) * KIB
    return out


class Sampler:
    """Samples the process's memory every `every` checked frames (called from bulk loops)."""

    def __init__(self, every: int, trace: bool, warmup: int, end: int) -> None:
        self.every = every
        self.end = end
        self._snap1: tracemalloc.Snapshot | None = None
        self.trace = trace
        self.warmup = warmup
        self.samples: list[dict] = []
        self._next = 0
        self._snap0: tracemalloc.Snapshot | None = None
        self.t0 = time.perf_counter()

    def __call__(self, checked: int, force: bool = False) -> None:
        if checked < self._next and not force:
            return
        self._next = (checked // self.every + 1) * self.every
        s = {"frames": checked, "t_s": round(time.perf_counter() - self.t0, 3), **proc_status(),
             "py_objects": len(gc.get_objects())}
        if self.trace:
            s["py_traced"] = tracemalloc.get_traced_memory()[0]
            if self._snap0 is None and checked >= self.warmup:
                self._snap0 = tracemalloc.take_snapshot()
            elif self._snap1 is None and checked >= self.end:
                self._snap1 = tracemalloc.take_snapshot()     # before the run's state is freed
        self.samples.append(s)

    def growth_sites(self, top: int = 15) -> list[dict]:
        if self._snap0 is None or self._snap1 is None:
            return []
        diff = self._snap1.compare_to(self._snap0, "lineno")
        return [{"site": str(d.traceback), "size_diff": d.size_diff, "count_diff": d.count_diff}
                for d in diff[:top]]


@cocotb.test()
async def run_sim_memory(dut) -> None:
    from tb.fast.fast_tb import FastNicTb

    path = os.environ.get("BENCH_MEM_PATH", "rx")
    n = int(os.environ["BENCH_FRAMES"])
    size = int(os.environ.get("BENCH_FRAME_BYTES", "1500"))
    every = int(os.environ.get("BENCH_SAMPLE_FRAMES", "5000"))
    trace = os.environ.get("BENCH_TRACEMALLOC", "0") == "1"
    warmup = int(os.environ.get("BENCH_WARMUP_FRAMES", str(every)))
    if trace:
        tracemalloc.start(8)
    sampler = Sampler(every, trace, warmup, n)
    sampler(0, force=True)
    tb = FastNicTb(dut, cocotb.RANDOM_SEED, record_writes=False)
    await tb.reset()
    if path == "rx":
        from bench.sim_speed_sim import bulk_rx
        res = await bulk_rx(tb, n, size, fast=True, on_poll=sampler, progress_s=30.0)
    elif path == "tx":
        from tb.tx_env import bulk_tx
        res = await bulk_tx(tb, n, seed=cocotb.RANDOM_SEED, on_poll=sampler, progress_s=30.0)
        res.pop("ring")
    else:
        raise ValueError(f"BENCH_MEM_PATH={path!r}: rx or tx")
    sampler(n, force=True)
    doc = {"path": path, "frames": n, "frame_bytes": size if path == "rx" else None,
           "tracemalloc": trace, "samples": sampler.samples, "growth_sites": sampler.growth_sites(),
           "run": {k: v for k, v in res.items() if isinstance(v, (int, float, str))}}
    with open(os.environ["BENCH_OUT"], "w") as fh:
        json.dump(doc, fh, indent=1)
