"""The cluster testbench seen from Python (cocotb, on tb/cluster/cluster_top.sv): one
`ClusterNode` per NIC (the `NicHw` the driver runs on: its host and device memory and CSR
queue, from tb/fast/fast_tb.FastHw, over the node's own shared block), the switch's table,
buffer size, random loss and counters, and the RTL scheduler of the workload
(`ClusterTb.run`): one NAPI loop per host, woken by its NIC's interrupts or its next timer.

Build: `run_cluster_test` (tb/sim.run_rtl_test of cluster_top with the fast harness's node,
its C memory and the switch; `threads` > 1 builds a multi-threaded Verilator model).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import cocotb
from cocotb.simtime import get_sim_time
from cocotb.triggers import First, Timer

try:
    from cocotb.triggers import ValueChange as _Change
except ImportError:  # cocotb < 2.0
    from cocotb.triggers import Edge as _Change

from driver.clock import SimClock
from tb.cluster.workload import CLK_NS, Cluster
from tb.fast.build import C_SOURCE, NODE, fast_build_kwargs
from tb.fast.fast_tb import FastHw
from tb.sim import REPO_ROOT, rtl_file_list, run_rtl_test
from tb.watchdog import Watchdog

HERE = Path(__file__).resolve().parent
TOP = HERE / "cluster_top.sv"
SWITCH = HERE / "eth_switch.sv"
PUBLIC_VLT = HERE / "cluster_public.vlt"
TOPLEVEL = "cluster_top"
IDLE_NS = 20_000
"""A host with nothing to do and no timer sooner sleeps at most this long (the interrupt
wakes it earlier)."""
COUNTERS = ("rx_frames", "tx_frames", "drops", "drop_bytes", "injected", "no_route", "hairpin",
            "oversize", "depth")


def _slice(v: int, width: int, i: int) -> int:
    return (v >> (width * i)) & ((1 << width) - 1)


class ClusterNode(FastHw):
    """One NIC of the cluster: the driver's `NicHw` (read32/write32/delay/host), its GPU
    memory (`dev`) and its clock (the simulator's)."""

    def __init__(self, dut, index: int, watchdog: Watchdog) -> None:
        shm = self.node_block(rx_frames=16, rx_data_bytes=1 << 16, tx_frames=16,
                              tx_data_bytes=1 << 16, log_cap=1 << 12)
        super().__init__(dut, shm, dut.csr_ack, record_writes=False, watchdog=watchdog)
        self.index = index
        self.clock = SimClock(lambda: get_sim_time("ns"))

    @property
    def irq_count(self) -> int:
        return _slice(int(self.dut.irq_count.value), 8, self.index)


class ClusterTb:
    backend = "rtl"

    def __init__(self, dut, n: int, cap_cells: int, drop_thr: int = 0, drop_seed: int = 1) -> None:
        self.dut = dut
        self.n = n
        self.watchdog = Watchdog(dut)
        """One for every node's CSR accesses (tb/watchdog.py); runs from reset()."""
        self.nodes = [ClusterNode(dut, i, self.watchdog) for i in range(n)]
        for nd in self.nodes:
            nd.posted_writes = True          # MMIO writes are posted, reads flush (PCIe)
        self.hws = self.nodes
        dut.rst.value = 1
        dut.fm_attach.value = sum(nd.shm.token << (32 * i) for i, nd in enumerate(self.nodes))
        dut.dma_stall_thr.value = 0
        dut.stall_seed.value = 1
        dut.r_interleave.value = 0
        dut.sw_cap_cells.value = cap_cells
        dut.sw_drop_thr.value = drop_thr
        dut.sw_drop_seed.value = drop_seed
        dut.fwd_seq.value = 0
        self._fwd_seq = 0
        self.t0_ns = 0

    async def reset(self) -> None:
        self.dut.rst.value = 1
        await Timer(8 * CLK_NS, unit="ns")
        self.dut.rst.value = 0
        await Timer(4 * CLK_NS, unit="ns")
        attached = int(self.dut.fm_attached.value)
        assert attached == (1 << self.n) - 1, f"nodes attached: {attached:b}"
        for nd in self.nodes:
            nd.sync()
            nd._reset_done = True
        self.watchdog.start()

    def now_ns(self) -> int:
        return int(get_sim_time("ns"))

    def cycles(self) -> int:
        return int(self.dut.cycles.value)

    async def set_forwarding(self, table: list[tuple[bytes, int]]) -> None:
        d = self.dut
        for i, (mac, port) in enumerate(table):
            d.fwd_idx.value = i
            d.fwd_mac.value = int.from_bytes(mac, "big")
            d.fwd_port.value = port
            d.fwd_valid.value = 1
            self._fwd_seq ^= 1
            d.fwd_seq.value = self._fwd_seq
            await Timer(4 * CLK_NS, unit="ns")

    def switch_counters(self) -> list[dict[str, int]]:
        vals = {name: int(getattr(self.dut, f"sw_{name}").value) for name in COUNTERS}
        return [{name: _slice(v, 32, p) for name, v in vals.items()} for p in range(self.n)]

    def depth_peaks(self) -> list[int]:
        v = int(self.dut.sw_depth_peak.value)
        return [_slice(v, 32, p) for p in range(self.n)]

    async def run(self, cluster: Cluster, until: Callable[[], bool]) -> None:
        """Every host's NAPI loop (poll until nothing moves, re-arm the interrupts, look once
        more, sleep until an interrupt of its NIC or its next TCP timer), and, during the
        transfer, a sampler at every switch window (queue depth peaks, bytes received)."""
        dut = self.dut
        tasks = []
        failure: list[TimeoutError] = []   # the sampler's verdict ends every loop

        def over() -> bool:
            return bool(failure) or until()

        interval = cluster.cfg.napi_interval_ns

        async def host_loop(h) -> None:
            node = self.nodes[h.index]
            ready_at = 0
            while not over():
                if self.now_ns() < ready_at:                 # at most one poll per interval
                    await Timer(ready_at - self.now_ns(), unit="ns")
                ready_at = self.now_ns() + interval
                if await h.step(self.now_ns()):
                    continue
                await h.arm_interrupts()
                if await h.step(self.now_ns()):
                    continue
                seen = node.irq_count
                now = self.now_ns()
                t = h.next_timer_ns()
                deadline = now + IDLE_NS if t is None else max(now + CLK_NS, min(t, now + IDLE_NS))
                while node.irq_count == seen and self.now_ns() < deadline and not over():
                    await First(_Change(dut.irq_count), Timer(deadline - self.now_ns(), unit="ns"))

        async def sampler() -> None:
            period = cluster.cfg.sample_cycles * CLK_NS
            w = int(dut.sw_window.value)
            while not over():
                await Timer(period, unit="ns")
                if cluster.phase == "transfer":
                    nw = int(dut.sw_window.value)
                    if nw != w:
                        cluster.sample(self.now_ns(), self.depth_peaks())
                        w = nw
                    cluster.maybe_progress()
                try:
                    cluster.check_timeout()
                except TimeoutError as e:
                    failure.append(e)

        for h in cluster.hosts:
            tasks.append(cocotb.start_soon(host_loop(h)))
        smp = cocotb.start_soon(sampler())
        for t in tasks:
            await t
        smp.cancel()
        if failure:
            raise failure[0]


def cluster_sources() -> list[Path]:
    return [*rtl_file_list(), NODE, SWITCH, TOP]


def run_cluster_test(test_module: str, parameters: Mapping[str, object], name: str,
                     threads: int = 1, **kwargs) -> Path:
    """run_rtl_test of a cocotb module on cluster_top (fast-harness nodes, the switch)."""
    kw = fast_build_kwargs()
    kw["control_files"] = [*kw["control_files"], PUBLIC_VLT]
    build_args = list(kwargs.pop("build_args", ()))
    if threads > 1:
        build_args += ["--threads", str(threads)]
    assert kw["c_sources"] == [C_SOURCE]
    return run_rtl_test(TOPLEVEL, cluster_sources(), test_module, parameters, name,
                        build_args=build_args, **kw, **kwargs)


__all__ = ["ClusterNode", "ClusterTb", "run_cluster_test", "cluster_sources", "REPO_ROOT"]
