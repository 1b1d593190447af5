"""The RTL half of the cluster run (cocotb, inside the simulator of tb/cluster/cluster_top.sv):
the workload of tb/cluster/workload.py on N nic_top instances behind the HDL switch.

Job: the JSON file $CLUSTER_JOB ({"config": ClusterConfig fields}); result: $CLUSTER_OUT
(ClusterResult fields, or {"fatal": message}). Progress lines go to stdout.
"""
from __future__ import annotations

import json
import os

import cocotb

from tb.cluster.cluster_tb import ClusterTb
from tb.cluster.model_env import drop_threshold
from tb.cluster.workload import ClusterConfig, run_cluster


def _progress(msg: str) -> None:
    print(msg, flush=True)


@cocotb.test()
async def cluster(dut) -> None:
    with open(os.environ["CLUSTER_JOB"]) as fh:
        job = json.load(fh)
    out = os.environ["CLUSTER_OUT"]
    cfg = ClusterConfig(**job["config"])
    n = int(dut.N.value)
    assert n == cfg.nics and int(dut.DATA_W.value) == cfg.data_width, "built for another cluster"
    tb = ClusterTb(dut, n, cfg.cap_cells, drop_threshold(cfg.drop_rate), cfg.seed)
    await tb.reset()
    prof = None
    if os.environ.get("CLUSTER_PROFILE"):            # development: where the Python time goes
        import cProfile
        prof = cProfile.Profile()
        prof.enable()
    try:
        res = await run_cluster(cfg, tb, _progress)
    except TimeoutError as e:                       # the run's verdict, not a testbench bug:
        with open(out, "w") as fh:                  # nicsim prints it as one line
            json.dump({"fatal": f"{type(e).__name__}: {e}"}, fh)
        return
    except Exception as e:
        with open(out, "w") as fh:
            json.dump({"fatal": f"{type(e).__name__}: {e}"}, fh)
        raise
    if prof is not None:
        prof.disable()
        prof.dump_stats(os.environ["CLUSTER_PROFILE"])
    with open(out, "w") as fh:
        json.dump(res.to_json(), fh)
    assert res.ok, "; ".join(res.errors)
