"""The RTL half of `nicsim live` (cocotb): the flow of nicsim/live.py (`run_live`) with the
Linux TCP stack as the peer, through nic_top under Verilator (on the fast harness or per
beat, whichever was built: `nic_tb_for`).

cocotb runs Python inside the Verilator process, so the private network namespace
(nicsim/live_net.py: one thread of this process unshares it) and the TAP device belong to
the simulator process and die with it. The simulator's parent is `nicsim live` (through
tb/sim.run_rtl_test); `PR_SET_PDEATHSIG` makes a SIGKILL of that parent kill the simulator
too, so nothing is left behind either way.

The bridge runs in simulated time: every round of the flow (`pump` in live.py) reads the
TAP device without blocking and queues at most `RX_QUEUE_FRAMES` frames on the MAC RX stream
(`tb.send`; the rest wait in Linux's TAP queue, so the link runs at the MAC's line rate in
simulated time), runs the driver's NAPI poll, and writes what the NIC sent on m_axis_tx
(`tb.tx_frames()`) to the TAP; a round in which nothing moved lets `IDLE_CYCLES` cycles pass.
The driver's TCP timers read the simulator's time (`SimClock`).

Job: the JSON file $NICSIM_JOB (`LiveConfig` fields); result: $NICSIM_OUT (`LiveResult`
fields, or {"fatal": message}).
"""
from __future__ import annotations

import ctypes
import dataclasses
import json
import os
import signal
import time

import cocotb
from cocotb.simtime import get_sim_time
from cocotb.triggers import Timer

from driver.clock import SimClock
from nicsim.live import LiveConfig, run_live
from tb.fast.fast_tb import nic_tb_for
from tb.nic_tb import CLK_NS, NicTb, TrafficProfile

RX_QUEUE_FRAMES = 4
"""Frames queued on the MAC RX stream at most (the rest stay in Linux's TAP queue)."""
IDLE_CYCLES = 128
"""Cycles that pass in a round in which no frame moved and the driver had nothing to do."""
PR_SET_PDEATHSIG = 1


class RtlLiveEnv:
    """`nicsim.live.LiveEnv` on nic_top: the testbench (`NicTb` or `FastNicTb`) is the NIC
    the driver sees."""

    def __init__(self, tb: NicTb, idle_cycles: int = IDLE_CYCLES) -> None:
        self.tb = tb
        self.hw = tb
        tb.clock = SimClock(lambda: get_sim_time("ns"))
        self.idle_cycles = idle_cycles
        self.t0_ns = int(get_sim_time("ns"))

    async def to_nic(self, frame: bytes) -> None:
        await self.tb.send(frame)

    def rx_room(self) -> int:
        return max(0, RX_QUEUE_FRAMES - self.tb.rx_queued)

    def from_nic(self) -> list[bytes]:
        return self.tb.tx_frames()

    async def idle(self) -> None:
        await Timer(self.idle_cycles * CLK_NS, unit="ns")

    def sim_ns(self) -> int:
        return int(get_sim_time("ns"))

    def cycles(self) -> int:
        return (self.sim_ns() - self.t0_ns) // CLK_NS


def _die_with_parent() -> None:
    """SIGKILL this simulator when `nicsim live` (its parent) dies, however it dies."""
    parent = int(os.environ.get("NICSIM_PARENT", "0"))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if parent and os.getppid() != parent:          # the parent died before prctl
        os.kill(os.getpid(), signal.SIGKILL)


def _progress(msg: str) -> None:
    print(msg, flush=True)


@cocotb.test()
async def live(dut) -> None:
    _die_with_parent()
    job = json.loads(open(os.environ["NICSIM_JOB"]).read())
    out = os.environ["NICSIM_OUT"]
    cfg = LiveConfig(**job["config"])
    tb = nic_tb_for(dut, cocotb.RANDOM_SEED, TrafficProfile())
    await tb.reset()
    env = RtlLiveEnv(tb, job.get("idle_cycles", IDLE_CYCLES))
    t0 = time.monotonic()
    try:
        res = await run_live(cfg, env, _progress)
    except Exception as e:
        with open(out, "w") as fh:
            json.dump({"fatal": f"{type(e).__name__}: {e}", "fatal_kind": type(e).__name__}, fh)
        raise
    d = dataclasses.asdict(res)
    d["wall_s"] = time.monotonic() - t0
    with open(out, "w") as fh:
        json.dump(d, fh)
