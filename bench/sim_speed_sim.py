"""cocotb half of the simulation-speed benchmark (bench/sim_speed.py).

One run = one path, chosen by BENCH_PATH: "fast" (tb/fast/ harness, FastNicTb) or "base"
(nic_top with tb/nic_tb.py's per-beat cocotbext-axi models). Both run `bulk_rx` with the
same traffic: back-to-back TCP frames of BENCH_FRAME_BYTES bytes, split on, one queue, the
driver's refill done in bulk every poll interval (consume completions, check every frame
against the golden model with tb/rx_scoreboard.py, re-post the buffers), and time it.
BENCH_CHECKER=process (fast path only) does the comparing in a second process while the
simulation runs (_ProcessChecker); the default, inline, does it in the simulator process.
"""
from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import cocotb
from cocotb.utils import get_sim_time

from driver import regs
from driver.rx_queue import RxFrame, RxQueue, RxQueueConfig
from models.formats import RxCompletion
from models.nic_model import PlacementConfig
from tb.frames import Flow, build, pattern
from tb.nic_tb import CLK_NS
from tb.rx_scoreboard import RxScoreboard, Taken, Expected

if TYPE_CHECKING:
    from tb.fast.fast_tb import FastNicTb
    from tb.nic_tb import NicTb

N_HDR = 1024           # header buffers (host memory), = header ring entries
N_PAY = 1024           # payload buffers of 4 KiB (a dma-buf in device memory), = payload ring entries
MAX_IN_FLIGHT = 512    # frames given to the MAC and not yet checked: never more than the rings hold
RESULT_TIMEOUT_S = 600  # the checker answers a poll's frames in milliseconds; this is a hang
POLL_FRAMES = 128      # the driver polls every POLL_FRAMES frame times of simulated time
PERIOD = 251           # payload pattern period: frames repeat every PERIOD frames
DROP_COUNTERS = ("RX_DROP_FIFO", "RX_DROP_NO_HDR_BUF", "RX_DROP_NO_PAY_BUF", "RX_DROP_CQ_FULL",
                 "RX_DROP_QUEUE_OFF", "RX_DROP_HDR_ERR")


def bulk_frames(frame_bytes: int) -> list[bytes]:
    """PERIOD distinct frames of `frame_bytes` (frame i of the train is frames[i % PERIOD])."""
    payload = frame_bytes - 14 - Flow().l3_l4_header_bytes
    out = [build(Flow(), pattern(payload, period=PERIOD, start=i)) for i in range(PERIOD)]
    assert all(len(f) == frame_bytes for f in out)
    return out


async def bulk_rx(tb, n_frames: int, frame_bytes: int = 1500, fast: bool = False,
                  progress_s: float = 5.0, checker_process: bool = False,
                  corrupt_frame: int | None = None,
                  on_poll: Callable[[int], None] | None = None) -> dict:
    """Send `n_frames` back-to-back frames through queue 0 and check every one; returns the
    timing. `tb` is a NicTb or a FastNicTb (reset already). `checker_process`: the comparing
    half of the scoreboard runs in a second process (_ProcessChecker) while the simulation
    goes on; every frame is still verified before it counts as checked, but the buffers are
    re-posted one poll later, so the cycle count can differ a little from an inline run
    (it is the same from one process-mode run to the next), and the byte and delivery
    counters `verify`/`record` keep stay in the checker (`sb.delivered*`,
    `sb.*_bytes_to_*` are not filled). `corrupt_frame` (for the tests of the check itself):
    flip the first payload byte of that frame after it landed and before it is checked, so
    the run must fail. `on_poll(frames_checked)` is called after every poll (the memory
    benchmark samples the process's resident size there)."""
    dut = tb.dut
    qcfg = RxQueueConfig(hdr_ring_log2=10, pay_ring_log2=10, cq_log2=11, pay_buf_log2=12,
                         tcp_data_split=True, hds_thresh=0)
    rxq = RxQueue(tb, 0, qcfg, dma_bytes=tb.dma_bytes)
    await rxq.alloc_rx_rings()
    cfg = PlacementConfig(enable=True, split_en=True, hds_thresh=0, hdr_buf_bytes=qcfg.hdr_buf_bytes,
                          pay_buf_log2=qcfg.pay_buf_log2, parse_bytes=int(dut.PARSE_BYTES.value))
    sb = RxScoreboard(tb.host, tb.dev, cfg, queue=0, cq_size=rxq.cq_size, cq_base=rxq.cq_base,
                      keep=0)                     # nothing reads the history: memory stays flat
    hdr_base = tb.host.alloc(N_HDR * qcfg.hdr_buf_bytes)
    sb.hdr_bufs = {i: hdr_base + i * qcfg.hdr_buf_bytes for i in range(N_HDR)}
    dmabuf = tb.dev.export_dmabuf(N_PAY * cfg.pay_buf_bytes, chunk_size=64 * 4096)
    sb.pay_bufs = {0x1000 + i: dmabuf.offset_to_bus(i * cfg.pay_buf_bytes) for i in range(N_PAY)}
    await rxq.enable()
    await sb.post_hdr(rxq, list(sb.hdr_bufs))
    await sb.post_pay(rxq, list(sb.pay_bufs))

    frames = bulk_frames(frame_bytes)
    beats = -(-frame_bytes // tb.data_bytes)
    poll_ns = POLL_FRAMES * beats * CLK_NS
    await tb.delay(2000)                          # descriptor prefetch

    sent = 0
    check_s = 0.0
    idle_polls = 0
    checker = _ProcessChecker(sb, frames) if checker_process else None
    last_report = t0 = time.perf_counter()
    cpu0 = time.process_time()
    c0 = get_sim_time("ns") / CLK_NS

    def top_up() -> int:
        nonlocal sent
        n = 0
        while sent < n_frames and sent - sb.checked < MAX_IN_FLIGHT:
            f = frames[sent % PERIOD]
            if fast and not tb.send_nowait(f):
                break
            sb.sent_frame(f)
            if not fast:
                tb.rx.send_nowait(_axis_frame(f))
            sent += 1
            n += 1
        return n

    async def repost(hdr_ids: list[int], pay_ids: list[int], refill: bool) -> None:
        if hdr_ids:
            await sb.post_hdr(rxq, hdr_ids, refill=refill)
        if pay_ids:
            await sb.post_pay(rxq, pay_ids, refill=refill)

    try:
        top_up()
        while sb.checked < n_frames:
            await tb.delay(poll_ns)
            t = time.perf_counter()
            got = await rxq.napi_poll(budget=1 << 16)
            taken = [sb.take(fr) for fr in got]
            if corrupt_frame is not None:
                _corrupt(sb, taken, corrupt_frame)
            if checker is None:
                hdr_ids: list[int] = []
                pay_ids: list[int] = []
                for tk in taken:
                    h, p = sb.check_taken(tk)
                    hdr_ids += h
                    pay_ids += p
                await repost(hdr_ids, pay_ids, refill=True)
            else:
                # The previous poll's frames were checked (and their buffers' canaries put back)
                # by the checker process while the NIC ran: post them now; hand it this poll's.
                # Always one poll later, whatever the checker's speed, so the simulation is
                # the same in every run.
                if checker.pending:
                    await repost(*checker.result(), refill=False)
                checker.submit(taken)
                if sent == n_frames and not sb.outstanding:
                    while checker.pending:          # the last frames: wait, no more cycles
                        checker.result()
            top_up()
            check_s += time.perf_counter() - t
            if on_poll is not None:
                on_poll(sb.checked)
            idle_polls = 0 if got else idle_polls + 1
            assert idle_polls < 50, f"no completion for 50 polls: {sb.checked} of {n_frames} checked, {sent} sent"
            now = time.perf_counter()
            if now - last_report > progress_s:
                cyc = get_sim_time("ns") / CLK_NS - c0
                dut._log.info("bench: %d/%d frames checked, %.0f cycles/s so far", sb.checked, n_frames,
                              cyc / (now - t0))
                last_report = now
    except BaseException as exc:
        if checker is not None:
            checker.close(raise_errors=False)    # the error that stopped the run is the news
        if isinstance(exc, AssertionError):
            # A frame the NIC dropped shows up as the next frame in its buffers: say so.
            drops = {c: n for c, n in (await _drop_counts(tb)).items() if n}
            if drops:
                raise AssertionError(f"{exc}\n  the NIC counted drops the model does not expect "
                                     f"({sb.checked} frames checked): {drops}") from None
        raise
    checker_cpu = checker.close() if checker is not None else 0.0
    wall = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    cycles = get_sim_time("ns") / CLK_NS - c0
    if hasattr(tb, "sync"):
        tb.sync()
    drops = await _drop_counts(tb)
    rx_frames = await tb.read32(regs.RX_FRAMES)
    assert rx_frames >= n_frames, f"RX_FRAMES {rx_frames} < {n_frames}"
    assert not any(drops.values()), f"drops: {drops}"
    assert sb.checked == n_frames and not sb.dropped
    return {
        "frames": n_frames, "frame_bytes": frame_bytes, "checked": sb.checked,
        "drops": sum(drops.values()), "cycles": int(cycles), "wall_s": wall,
        "check_s": check_s, "cpu_s": cpu, "cycles_per_s": cycles / wall, "frames_per_s": n_frames / wall,
        "cycles_per_s_excl_check": cycles / max(wall - check_s, 1e-9),
        "cycles_per_frame": cycles / n_frames,
        "checker": "process" if checker_process else "inline", "checker_cpu_s": checker_cpu,
    }


async def _drop_counts(tb) -> dict[str, int]:
    if hasattr(tb, "sync"):
        tb.sync()
    return {c: await tb.read32(getattr(regs, c)) for c in DROP_COUNTERS}


def _corrupt(sb: RxScoreboard, taken: list[Taken], index: int) -> None:
    for t in taken:
        if t.exp.index == index and t.pay_ids:
            addr = sb.pay_bufs[t.pay_ids[0]]
            sb.dev.gpu.write(addr, bytes([sb.dev.gpu.read(addr, 1)[0] ^ 0xFF]))


class _ProcessChecker:
    """The comparing half of the scoreboard (`RxScoreboard.verify`) in a second process.

    Only for the fast harness, whose host and device memory are views of one MAP_SHARED
    memfd (tb/fast/shared.py): the checker is a fork of the simulator process made before the
    traffic starts, so it sees every byte the NIC writes as it lands. The simulator process
    keeps the bookkeeping (`RxScoreboard.take`: which expected frame and which buffers each
    received frame must have used, the completion ring's bytes) and sends each poll's frames
    as small tuples; the checker recomputes the model's placement (frames repeat every
    PERIOD), compares the completions, header and payload bytes and canaries exactly as
    `RxScoreboard.check` does, puts the canary back into the used buffers and answers with the
    buffer ids to re-post. A failed comparison comes back as the AssertionError's message and
    is raised in the simulator process. Frames count as checked only when the answer is in.
    """

    def __init__(self, sb: RxScoreboard, frames: list[bytes]) -> None:
        from multiprocessing.connection import Pipe

        self.sb = sb
        self.pending = 0
        self._conn, child = Pipe()
        self.pid = os.fork()
        if self.pid == 0:                                # the checker
            code = 1
            try:
                self._conn.close()
                _checker_loop(child, sb, frames)
                code = 0
            finally:
                os._exit(code)                           # never back into the simulator
        child.close()

    def submit(self, taken: list[Taken]) -> None:
        if taken:
            self._conn.send([(t.exp.index, t.exp.rss_hash, t.exp.rss_type, t.hdr_id, t.pay_ids,
                              t.cq_idx, t.raw) for t in taken])
            self.pending += 1

    def result(self) -> tuple[list[int], list[int]]:
        """Wait for the oldest batch's verdict; its (header, payload) buffer ids."""
        try:
            if not self._conn.poll(RESULT_TIMEOUT_S):
                raise RuntimeError(f"the checker process gave no verdict for {RESULT_TIMEOUT_S} s")
            verdict = self._conn.recv()
        except EOFError:
            raise RuntimeError("the checker process ended unexpectedly") from None
        self.pending -= 1
        if verdict[0] == "fail":
            raise AssertionError(verdict[1])
        if verdict[0] == "error":
            raise RuntimeError(f"the checker process failed:\n{verdict[1]}")
        _, hdr_ids, pay_ids, n = verdict
        self.sb.checked += n
        return hdr_ids, pay_ids

    def close(self, raise_errors: bool = True) -> float:
        """Stop the checker (after it answered what it holds); its CPU seconds.
        `raise_errors=False` when another error is already on its way."""
        try:
            while self.pending and self._conn.poll(RESULT_TIMEOUT_S):
                self._conn.recv()                # verdicts nobody waits for any more
                self.pending -= 1
            self._conn.send(None)
        except (OSError, EOFError):
            pass
        self._conn.close()
        if self.pending:                         # it hung: do not wait for it either
            os.kill(self.pid, signal.SIGKILL)
        _, status, usage = os.wait4(self.pid, 0)
        if raise_errors and os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"the checker process failed (wait status {status})")
        return usage.ru_utime + usage.ru_stime


def _checker_loop(conn, sb: RxScoreboard, frames: list[bytes]) -> None:
    try:
        _checker_batches(conn, sb, frames)
    except (EOFError, BrokenPipeError):
        return                                   # the simulator process went away: done


def _checker_batches(conn, sb: RxScoreboard, frames: list[bytes]) -> None:
    while (batch := conn.recv()) is not None:
        hdr_ids: list[int] = []
        pay_ids: list[int] = []
        try:
            for index, rss_hash, rss_type, hdr_id, ids, cq_idx, raw in batch:
                frame = frames[index % PERIOD]
                exp = Expected(index, frame, sb.placement(frame)[0], rss_hash, rss_type)
                got = RxFrame([RxCompletion.unpack(r) for r in raw])
                t = Taken(exp, hdr_id, ids, cq_idx, got, raw)
                sb.verify(t)
                h, pids = t.buffers()
                sb.refill(h, hdr=True)
                sb.refill(pids, hdr=False)
                hdr_ids += h
                pay_ids += pids
        except AssertionError as e:
            conn.send(("fail", str(e)))
            continue
        except Exception:                        # a bug of the checker itself, not a finding
            import traceback
            conn.send(("error", traceback.format_exc()))
            continue
        conn.send(("ok", hdr_ids, pay_ids, len(batch)))


def _axis_frame(frame: bytes):
    from cocotbext.axi import AxiStreamFrame
    return AxiStreamFrame(frame, tuser=0)


@cocotb.test()
async def run_sim_speed(dut) -> None:
    path = os.environ["BENCH_PATH"]
    n = int(os.environ["BENCH_FRAMES"])
    size = int(os.environ.get("BENCH_FRAME_BYTES", "1500"))
    out = os.environ["BENCH_OUT"]
    tb: FastNicTb | NicTb
    fast_tb: FastNicTb | None = None
    if path == "fast":
        from tb.fast.fast_tb import FastNicTb
        tb = fast_tb = FastNicTb(dut, cocotb.RANDOM_SEED, record_writes=False)
    else:
        from tb.nic_tb import NicTb
        tb = NicTb(dut, cocotb.RANDOM_SEED)
        tb.space.record_writes = False
    t = time.perf_counter()
    await tb.reset()
    checker = os.environ.get("BENCH_CHECKER", "inline")
    if checker not in ("inline", "process"):
        raise ValueError(f"BENCH_CHECKER={checker!r}: use inline or process")
    if checker == "process" and path != "fast":
        raise ValueError("BENCH_CHECKER=process needs the fast harness (its memory is shared with a fork)")
    res = await bulk_rx(tb, n, size, fast=(path == "fast"), checker_process=(checker == "process"))
    res["path"] = path
    res["data_bits"] = tb.data_bytes * 8
    res["dma_bits"] = tb.dma_bytes * 8
    res["run_wall_s"] = time.perf_counter() - t
    if fast_tb is not None:
        res["harness_stats"] = fast_tb.shm.stats()
    dut._log.info("bench %s: %s", path, res)
    with open(out, "w") as fh:
        json.dump(res, fh, indent=2)
