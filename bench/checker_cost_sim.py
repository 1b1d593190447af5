"""cocotb half of the protocol checker's cost measurement (bench/checker_cost.py): one bulk
run on the fast harness, timed in the simulator process.

BENCH_COST_PATH=rx runs `bench.sim_speed_sim.bulk_rx` (BENCH_FRAMES back-to-back 1500-byte
TCP frames, split on, every frame checked); tx runs `tb.tx_env.bulk_tx` (BENCH_FRAMES
TCP/UDP frames of 60..128 bytes, every completion and wire frame checked). Writes BENCH_OUT
(JSON): the simulated cycles of the bulk loop (its own count), wall and CPU seconds of the bulk loop.
"""
from __future__ import annotations

import json
import os
import time

import cocotb


@cocotb.test()
async def run_checker_cost(dut) -> None:
    from tb.fast.fast_tb import FastNicTb

    path = os.environ.get("BENCH_COST_PATH", "rx")
    n = int(os.environ["BENCH_FRAMES"])
    tb = FastNicTb(dut, cocotb.RANDOM_SEED, record_writes=False)
    await tb.reset()
    t0, cpu0 = time.perf_counter(), time.process_time()
    if path == "rx":
        from bench.sim_speed_sim import bulk_rx
        res = await bulk_rx(tb, n, 1500, fast=True, progress_s=30.0)
    elif path == "tx":
        from tb.tx_env import bulk_tx
        res = await bulk_tx(tb, n, seed=cocotb.RANDOM_SEED, progress_s=30.0)
    else:
        raise ValueError(f"BENCH_COST_PATH={path!r}: rx or tx")
    doc = {"path": path, "frames": n, "cycles": int(res["cycles"]), "wall_s": time.perf_counter() - t0,
           "cpu_s": time.process_time() - cpu0}
    with open(os.environ["BENCH_OUT"], "w") as fh:
        json.dump(doc, fh, indent=1)
