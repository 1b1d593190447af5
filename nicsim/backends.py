"""Run the replay engine on a backend: the golden model in this process, or nic_top under
Verilator through tb/sim.run_rtl_test (the cocotb half is nicsim/replay_sim.py)."""
from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from nicsim.engine import ReplayConfig, ReplayResult, replay

DATA_WIDTHS = (64, 128, 256, 512)


class ModelEnv:
    """The golden model with the RTL's defaults: 8 RX queues, DMA twice the MAC width."""

    def __init__(self, data_width: int = 64, num_rxq: int = 8) -> None:
        from driver.backends.model import ModelHw
        self.hw = ModelHw(num_rxq=num_rxq, data_bytes=data_width // 8,
                          dma_bytes=2 * data_width // 8)
        self.dev = self.hw.dev

    async def send(self, frame: bytes) -> None:
        await self.hw.wire.send(frame)


def run_model(frames: Sequence[bytes | None], cfg: ReplayConfig, problems: list[str | None],
              data_width: int = 64, progress: Callable[[str], None] = print) -> ReplayResult:
    return asyncio.run(replay(ModelEnv(data_width), frames, cfg, problems, progress))


def run_rtl(frames: Sequence[bytes | None], cfg: ReplayConfig, problems: list[str | None],
            data_width: int = 64, waves: str | None = None, name: str | None = None,
            seed: int | None = None, testbench: str = "fast") -> ReplayResult:
    """The replay on nic_top under Verilator; `testbench`: "fast" (tb/fast/, Python wakes per
    frame) or "per-beat" (cocotbext-axi on every port), tb.fast.build.TESTBENCHES. `name`
    names the run's folders (default nicsim-replay, plus -per-beat for that testbench; while
    another process runs under that name, the name with this process's pid: tb.fast.build.claim_run)."""
    from tb.fast.build import claim_run, run_name, run_nic_test
    name, lock = claim_run(name or run_name("nicsim-replay", testbench))   # held until we return
    from tb.sim import BUILD_ROOT
    work = BUILD_ROOT / "nicsim" / name
    work.mkdir(parents=True, exist_ok=True)
    job, out = work / "job.json", work / "result.json"
    job.write_text(json.dumps({"frames": [f.hex() if f is not None else None for f in frames],
                               "problems": problems, "config": cfg.to_json()}))
    out.unlink(missing_ok=True)
    run_nic_test(testbench, "nicsim.replay_sim", {"DATA_W": data_width}, name,
                 waves=bool(waves), seed=seed,
                 extra_env={"NICSIM_JOB": str(job), "NICSIM_OUT": str(out)})
    if waves:
        fst = BUILD_ROOT / "waves" / f"{name}.fst"
        if Path(waves).resolve() != fst.resolve():
            Path(waves).parent.mkdir(parents=True, exist_ok=True)
            fst.replace(waves)
    r: dict[str, Any] = json.loads(out.read_text())
    r["stats"]["queues"] = {int(k): v for k, v in r["stats"]["queues"].items()}
    from tb.sim import checker_summary
    r["stats"]["protocol_checker"] = checker_summary(name)   # what the SV checker in nic_top saw
    lock.close()
    return ReplayResult(r["records"], r["streams"], r["stats"])
