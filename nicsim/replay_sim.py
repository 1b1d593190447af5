"""The RTL half of `nicsim replay` (cocotb): nic_top under Verilator (on the fast harness or
per beat, whichever was built: `nic_tb_for`), the same engine (nicsim/engine.py) as on the
model. The job (frames and configuration) comes from the JSON
file $NICSIM_JOB; the result goes to $NICSIM_OUT."""
from __future__ import annotations

import json
import os

import cocotb

from nicsim.engine import ReplayConfig, replay
from tb.fast.fast_tb import nic_tb_for
from tb.nic_tb import NicTb, TrafficProfile


class _RtlEnv:
    def __init__(self, tb: NicTb) -> None:   # or FastNicTb: the same interface
        self.hw = tb
        self.dev = tb.dev

    async def send(self, frame: bytes) -> None:
        await self.hw.send(frame)
        # The replay ignores what the NIC sends (RSTs, ACKs): drop it, so a long capture never
        # fills the fast harness's TX sink (whose full queue would hold m_axis_tx_tready low).
        self.hw.tx_frames()


def _progress(msg: str) -> None:
    print(msg, flush=True)


@cocotb.test()
async def run_replay(dut) -> None:
    job = json.loads(open(os.environ["NICSIM_JOB"]).read())
    tb = nic_tb_for(dut, cocotb.RANDOM_SEED, TrafficProfile())
    await tb.reset()
    frames = [bytes.fromhex(f) if f is not None else None for f in job["frames"]]
    res = await replay(_RtlEnv(tb), frames, ReplayConfig.from_json(job["config"]),
                       job.get("problems"), progress=_progress)
    with open(os.environ["NICSIM_OUT"], "w") as fh:
        json.dump({"records": res.records, "streams": res.streams, "stats": res.stats}, fh)
