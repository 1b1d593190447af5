"""The speed ceiling: the fast harness with no Python and no cocotb at all.

`nic_fast_top` built with STANDALONE=1 by `verilator --binary` (Verilator's own main loop),
the same -O3/--x-assign/--x-initial flags and the same DPI-C memory, RX source and CSR
master as the cocotb fast path. Python prepares an image file beforehand (tb/fast/shared.py
layout): the driver's bring-up (driver/rx_queue.py run against a recorder, so the CSR writes
become a pre-queued command list and the descriptors are in host memory), the same frames
as bench/sim_speed_sim.py, and a table of buffers. In the run, a small C driver
(fm_standalone_poll in fastmem.cpp, every 256 cycles) recycles completed buffers and keeps the
RX source fed, until all frames have completed; it times the traffic phase with the
monotonic clock and writes cycles and nanoseconds back into the image.

Only the completion count (and that every completion names a posted buffer) is checked
here: this run measures the simulator, the cocotb runs check the data.
"""
from __future__ import annotations

import asyncio
import os
import resource
import subprocess
import time
from pathlib import Path

from driver import regs
from driver.rx_queue import RxBuffer, RxQueue, RxQueueConfig
from models.device_memory import DeviceMemory
from models.host_memory import HostMemory
from tb.fast import shared
from tb.fast.build import C_SOURCE, HARNESS, NODE, PUBLIC_VLT, generate
from tb.fast.shared import RegionSpec, SharedBlock
from tb.nic_tb import DEV_BASE, DEV_SIZE, HOST_BASE, HOST_SIZE
from tb.sim import (BUILD_ROOT, SIM_BUILD_ARGS, TIMING_BUILD_ARGS, WAIVERS, checker_off, rtl_file_list,
                    setup_verilator_env, sim_cxx, with_checker)

N_HDR = 1024
N_PAY = 1024
CHECKER_MARK = "protocol_checker"   # next to the binary: "on" or "off" (NO_AXI_CHECKER), written by build


class _Recorder:
    """NicHw for the driver's bring-up: CSR writes are queued in the image, reads answer 0."""

    def __init__(self, shm: SharedBlock, host: HostMemory) -> None:
        self.shm = shm
        self.host = host

    async def read32(self, addr: int) -> int:
        return 0

    async def write32(self, addr: int, value: int) -> None:
        self.shm.csr_push(addr, value, True)

    async def delay(self, ns: int) -> None:
        return None


def build(data_w: int, extra_args: list[str] | None = None, opt_fast: str | None = None,
          tag: str = "") -> Path:
    """Build (incrementally) the standalone simulator for MAC width `data_w`; its path.
    `opt_fast`: C++ optimisation of the model (Verilator's OPT_FAST, default -Os). The protocol
    checker (tb/checker/) is bound into nic_top as in every build; `extra_args` with
    `+define+NO_AXI_CHECKER` leaves it out (give such a build its own `tag`)."""
    env = dict(os.environ)
    root = setup_verilator_env(env)
    if opt_fast:
        env["MAKEFLAGS"] += f" OPT_FAST={opt_fast}"
    cxx = sim_cxx(env)
    out = BUILD_ROOT / "fast" / "standalone" / f"DATA_W={data_w}{tag}{'' if cxx == 'g++' else '-' + cxx}"
    out.mkdir(parents=True, exist_ok=True)
    gen = generate()
    cmd = [str(root / "bin" / "verilator"), "--binary", "-j", "2", "-Mdir", str(out),
           "--top-module", "nic_fast_top", "-o", "Vstandalone", "--timescale", "1ns/1ps",
           *SIM_BUILD_ARGS, *TIMING_BUILD_ARGS, *(extra_args or []),
           f"-GDATA_W={data_w}", "-GSTANDALONE=1", f"-I{gen}",
           str(WAIVERS), str(PUBLIC_VLT), *map(str, with_checker(rtl_file_list())), str(NODE), str(HARNESS),
           str(C_SOURCE)]
    log = out / "build.log"
    with open(log, "w") as fh:
        rc = subprocess.run(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT).returncode
    if rc:
        raise RuntimeError(f"standalone build failed, see {log}:\n" + "\n".join(log.read_text().splitlines()[-30:]))
    (out / CHECKER_MARK).write_text("off\n" if checker_off(extra_args or [], {}) else "on\n")
    return out / "Vstandalone"


def checker_lines(binary: Path, stdout: str) -> tuple[list[str], str | None]:
    """The protocol checker's violation lines in a standalone run's output and its summary line
    (None when the build has the checker and it printed none: not bound). The standalone
    simulator has no cocotb to fail a test: `run` raises on either."""
    lines = [ln for ln in stdout.splitlines() if ln.startswith("nic_checker: ")]
    broken = [ln for ln in lines if ln.startswith(("nic_checker: VIOLATION", "nic_checker: waves:"))]
    summary = next((ln for ln in lines if " cycles checked: " in ln), None)
    mark = binary.parent / CHECKER_MARK
    if summary is None and mark.is_file() and mark.read_text().strip() == "off":
        summary = "protocol checker left out (NO_AXI_CHECKER)"
    return broken, summary


def make_image(path: Path, data_w: int, frames: list[bytes], n_frames: int, *,
               max_in_flight: int = 512) -> None:
    """Write the standalone run's image: bring-up CSR program, rings, buffers, frames."""
    dma_bytes = 2 * data_w // 8
    shm = SharedBlock([RegionSpec("host", HOST_BASE, HOST_SIZE), RegionSpec("device", DEV_BASE, DEV_SIZE)],
                      sa_bufs=N_HDR + N_PAY, path=path, csr_cap=4096, log_cap=16,
                      tx_frames=16, tx_data_bytes=1 << 16)
    shm.h[shared.H_LOG_OK] = 0
    host = HostMemory(HOST_BASE, HOST_SIZE, buffer=shm.region_buffer("host"))
    dev = DeviceMemory(DEV_BASE, DEV_SIZE, buffer=shm.region_buffer("device"))
    hw = _Recorder(shm, host)
    qcfg = RxQueueConfig(hdr_ring_log2=10, pay_ring_log2=10, cq_log2=11, pay_buf_log2=12,
                         tcp_data_split=True, hds_thresh=0)
    rxq = RxQueue(hw, 0, qcfg, dma_bytes=dma_bytes)
    hdr_base = host.alloc(N_HDR * qcfg.hdr_buf_bytes)
    dmabuf = dev.export_dmabuf(N_PAY * 4096, chunk_size=64 * 4096)
    hdr_bufs = [hdr_base + i * qcfg.hdr_buf_bytes for i in range(N_HDR)]
    pay_bufs = [dmabuf.offset_to_bus(i * 4096) for i in range(N_PAY)]

    async def bring_up() -> None:
        await rxq.alloc_rx_rings()
        await rxq.enable()
        await rxq.post_hdr_buffers([RxBuffer(a, i) for i, a in enumerate(hdr_bufs)])
        await rxq.post_pay_buffers([RxBuffer(a, i) for i, a in enumerate(pay_bufs)])

    asyncio.run(bring_up())
    hdr_ring, pay_ring, sa_tab = rxq._hdr, rxq._pay, shm.sa_tab
    assert hdr_ring is not None and pay_ring is not None, "alloc_rx_rings made both rings"
    assert sa_tab is not None, "SharedBlock(sa_bufs=...) made the buffer table"
    h = shm.h
    h[shared.H_SA_FRAMES] = n_frames
    h[shared.H_SA_CQ_BASE], h[shared.H_SA_CQ_LOG2] = rxq.cq_base, qcfg.cq_log2
    h[shared.H_SA_HDR_BASE], h[shared.H_SA_HDR_LOG2] = hdr_ring.base, qcfg.hdr_ring_log2
    h[shared.H_SA_PAY_BASE], h[shared.H_SA_PAY_LOG2] = pay_ring.base, qcfg.pay_ring_log2
    h[shared.H_SA_HDR_SW_REG] = regs.rxq_reg(0, regs.RXQ_HDR_RING + regs.RING_SW_IDX)
    h[shared.H_SA_PAY_SW_REG] = regs.rxq_reg(0, regs.RXQ_PAY_RING + regs.RING_SW_IDX)
    h[shared.H_SA_CQ_SW_REG] = regs.rxq_reg(0, regs.RXQ_CQ + regs.RING_SW_IDX)
    h[shared.H_SA_HDR_BUFS] = shm.sa_tab_off
    h[shared.H_SA_PAY_BUFS] = shm.sa_tab_off + 8 * N_HDR
    sa_tab[:N_HDR] = hdr_bufs
    sa_tab[N_HDR:N_HDR + N_PAY] = pay_bufs
    h[shared.H_SA_NHDR], h[shared.H_SA_NPAY] = N_HDR, N_PAY
    h[shared.H_SA_HDR_SW], h[shared.H_SA_PAY_SW] = hdr_ring.sw_idx, pay_ring.sw_idx
    period = min(len(frames), n_frames)
    for f in frames[:period]:
        shm.rx_push(f)
    h[shared.H_RX_PROD] = 0          # the C driver releases them once the bring-up has run
    h[shared.H_SA_RX_TOTAL], h[shared.H_SA_RX_PERIOD] = n_frames, period
    h[shared.H_SA_INFLIGHT] = max_in_flight
    shm.mm.flush()
    shm.close()       # the mapping goes with the last numpy view


def n_want(h) -> int:
    return int(h[shared.H_SA_FRAMES])


def run(binary: Path, image: Path, timeout_s: float = 3600, env: dict[str, str] | None = None) -> dict:
    """Run the standalone simulator on `image`; the traffic phase's cycles and seconds.
    `env`: extra environment variables (e.g. LLVM_PROFILE_FILE for a PGO training run)."""
    env = dict(os.environ, **(env or {}), FASTMEM_IMAGE=str(image))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.run([str(binary)], env=env, capture_output=True, text=True, timeout=timeout_s,
                          cwd=binary.parent)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    broken, checker_summary = checker_lines(binary, proc.stdout)
    if broken:   # the checker's own lines first: rule, who, cycle, time, IDs, the waves command
        raise RuntimeError("standalone run stopped by the protocol checker:\n" + "\n".join(broken[:6])
                           + f"\n(exit code {proc.returncode}; output tail:)\n{proc.stdout[-1000:]}")
    if proc.returncode:
        raise RuntimeError(f"standalone run failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    if checker_summary is None:
        raise RuntimeError(f"standalone run: the protocol checker bound into nic_top printed no summary "
                           f"(was it compiled in? {binary.parent / CHECKER_MARK} missing or 'on'):\n{proc.stdout[-1000:]}")
    import mmap

    import numpy as np
    with open(image, "r+b") as fh:
        mm = mmap.mmap(fh.fileno(), 4096)
        h = np.frombuffer(mm, dtype=np.uint64, count=512).copy()
        mm.close()
    if h[shared.H_SA_DONE] != 1:
        raise RuntimeError(f"standalone run ended with {int(h[shared.H_SA_CPLS])} of {n_want(h)} frames "
                           f"completed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    cycles = int(h[shared.H_SA_CYC1] - h[shared.H_SA_CYC0])
    secs = int(h[shared.H_SA_T1_NS] - h[shared.H_SA_T0_NS]) / 1e9
    cpu = int(h[shared.H_SA_CPU1_NS] - h[shared.H_SA_CPU0_NS]) / 1e9
    frames = int(h[shared.H_SA_CPLS])
    return {"path": "verilator_only", "frames": frames, "cycles": cycles, "wall_s": secs,
            "cpu_s": cpu, "cycles_per_s": cycles / secs, "frames_per_s": frames / secs,
            "cycles_per_cpu_s": cycles / cpu if cpu > 0 else None,
            "bad_completions": int(h[shared.H_SA_BAD]), "protocol_checker": checker_summary,
            "process_wall_s": wall, "process_cpu_s": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)}


def run_frames(binary: Path, data_w: int, frames: list[bytes], n_frames: int, image: Path,
               env: dict[str, str] | None = None) -> dict:
    """`make_image` for `n_frames` of `frames` at `image`, `run`, and remove the image."""
    make_image(image, data_w, frames, n_frames)
    try:
        return run(binary, image, env=env)
    finally:
        image.unlink(missing_ok=True)
