"""The public scenario API: write a driver scenario once and run it on the golden model and
on the RTL.

A scenario is an `async def scenario(env: DriverEnv)`. It brings the reference driver up
with `Rig.create(env)` (probe, ethtool settings, open), binds dma-bufs (`Rig.bind`), talks
TCP with a `TcpPeer` (the far end, frames built with scapy) through `Rig.connect` and
`Rig.transfer`, and reads like an application with a `Reader` (recvmsg with devmem cmsgs,
payload through the GPU accessor, tokens back). The environment is the backend: `ModelEnv`
(golden model, in-process, no simulator) or `RtlEnv` (nic_top under Verilator through
cocotb, over a testbench of tb/nic_tb.py or tb/fast/).

Modules: `env` (DriverEnv, ModelEnv, RtlEnv), `rig` (Rig, Reader, Bound, checks), `peer`
(TcpPeer), `tx` (TX helpers: the NIC's TX wire, frame checks, ACK loop).
"""
from __future__ import annotations

from tb.scenario.env import DriverEnv, ModelEnv, RtlEnv
from tb.scenario.peer import Segment, TcpPeer
from tb.scenario.rig import (CMSG_BYTES, FRAME_COUNTERS, RSS_KEY, SETTLE_NS, SETTLE_POLLS, Bound,
                             Reader, Rig, Unsupported, aexpect_errno, expect_errno, make_data,
                             require_steering)

__all__ = [
    "CMSG_BYTES", "FRAME_COUNTERS", "RSS_KEY", "SETTLE_NS", "SETTLE_POLLS", "Bound", "DriverEnv",
    "ModelEnv", "Reader", "Rig", "RtlEnv", "Segment", "TcpPeer", "Unsupported", "aexpect_errno",
    "expect_errno", "make_data", "require_steering",
]
