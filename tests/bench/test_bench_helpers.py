"""The benchmarks' Python helpers, checked without a simulator, so that `make test` catches
what would otherwise only break `make bench` (a helper's signature drifting from the class it
extends broke the goodput bench once)."""
from __future__ import annotations

import importlib
import pkgutil

import pytest
from scapy.layers.inet import TCP
from scapy.layers.l2 import Ether

import bench
from bench.rx_metrics_sim import TCP_TS_OPTION, TsPeer
from tb.frames import Flow


@pytest.mark.parametrize("name", sorted(m.name for m in pkgutil.iter_modules(bench.__path__)))
def test_bench_module_imports(name: str) -> None:
    importlib.import_module(f"bench.{name}")


@pytest.mark.parametrize("mtu, mss", [(1500, 1448), (9000, 8948)])
def test_ts_peer_segments(mtu: int, mss: int) -> None:
    """Data segments carry NOP, NOP, timestamps as Linux sends them (MSS 1448 at MTU 1500); the
    SYN carries only its MSS option; pure ACKs are built through the same path."""
    peer = TsPeer(Flow(), mtu=mtu)
    assert peer.mss == mss
    syn = TCP(bytes(Ether(peer.syn())[TCP]))
    assert syn.flags == "S" and syn.options == [("MSS", mss)]

    data = peer.frame(peer.seq_of(0), bytes(mss))
    seg = Ether(data)[TCP]
    assert [o[0] for o in seg.options] == ["NOP", "NOP", "Timestamp"]
    assert seg.dataofs * 4 == 20 + TCP_TS_OPTION
    assert len(data) == 14 + 20 + 20 + TCP_TS_OPTION + mss == mtu + 14

    ack = Ether(peer.ack_frame(12345, window=1000))[TCP]
    assert ack.flags == "A" and ack.ack == 12345 and ack.window == 1000


def test_pgo_profile_named_by_its_content(tmp_path, monkeypatch) -> None:
    """bench/pgo.py's plumbing on a tiny instrumented program: the merged profile is named by
    its content (the same run gives the same file, so the PGO model is not rebuilt), the raw
    profile is removed, and a training run that wrote nothing is a clear error."""
    import subprocess

    from bench import pgo
    why = pgo.unavailable()
    if why:
        pytest.skip(why)
    src = tmp_path / "t.c"
    src.write_text("int main(int argc, char **argv) { (void)argv; return argc > 5; }\n")
    exe = tmp_path / "t"
    subprocess.run(["clang", "-fprofile-instr-generate", str(src), "-o", str(exe)], check=True)
    monkeypatch.setattr(pgo, "PGO_DIR", tmp_path / "pgo")

    def train(n: int):
        raw = tmp_path / f"run{n}.profraw"
        subprocess.run([str(exe)], env={"LLVM_PROFILE_FILE": str(raw)}, check=True)
        return pgo.merge(raw, "t"), raw

    (a, raw_a), (b, _) = train(1), train(2)
    assert a == b and a.is_file() and a.parent == tmp_path / "pgo"
    assert a.stem.startswith("t-") and len(a.stem) == len("t-") + 12
    assert not raw_a.exists()
    with pytest.raises(RuntimeError, match="wrote no profile"):
        pgo.merge(tmp_path / "missing.profraw", "t")
    assert f"-fprofile-instr-use={a}" in pgo.use_args(a)


class _FakeScoreboard:
    """What the checker process uses of RxScoreboard, with a verify the test controls."""

    def __init__(self, verify) -> None:
        self.checked = 0
        self.cfg = None
        self.queue = 0
        self._verify = verify

    def verify(self, t) -> bytes:
        return self._verify(t)

    def refill(self, ids, hdr) -> None:
        pass

    def placement(self, frame, bad_fcs=False):
        from types import SimpleNamespace
        return SimpleNamespace(split=False), {}


def _checker(monkeypatch, verify):
    """A _ProcessChecker (a real fork) over a fake scoreboard: the model's placement and the
    completion decoding are stubbed, everything between the processes is real."""
    from types import SimpleNamespace

    import bench.sim_speed_sim as sim
    monkeypatch.setattr(sim, "RxCompletion", SimpleNamespace(unpack=lambda raw: raw))
    sb = _FakeScoreboard(verify)
    return sim, sb, sim._ProcessChecker(sb, [b"frame"] * sim.PERIOD)


def _taken(index: int, pay_id: int):
    from types import SimpleNamespace
    return SimpleNamespace(exp=SimpleNamespace(index=index, rss_hash=0, rss_type=0), hdr_id=0,
                           pay_ids=[pay_id], cq_idx=index, raw=[bytes(16)])


def test_checker_process_verdicts(monkeypatch) -> None:
    """The forked checker: verified frames come back with their buffers and count as checked
    only then; a failed comparison is the AssertionError; a bug of the checker itself is a
    RuntimeError with its traceback, not a finding."""
    def verify(t):
        if t.exp.index == 7:
            raise AssertionError("frame #7: payload buffer 3 bytes differ")
        if t.exp.index == 8:
            raise KeyError("no such buffer")
        return b""

    _, sb, ck = _checker(monkeypatch, verify)
    ck.submit([_taken(0, 10), _taken(1, 11)])
    assert sb.checked == 0                       # not before the verdict
    assert ck.result() == ([], [10, 11]) and sb.checked == 2
    ck.submit([_taken(7, 3)])
    with pytest.raises(AssertionError, match="frame #7: payload buffer 3 bytes differ"):
        ck.result()
    ck.submit([_taken(8, 4)])
    with pytest.raises(RuntimeError, match="KeyError"):
        ck.result()
    assert sb.checked == 2
    assert ck.close() >= 0.0


def test_checker_process_keeps_the_real_error(monkeypatch) -> None:
    """When the simulator side fails while the checker still holds a batch, closing the
    checker neither hides that error nor fails itself (the review's race: the checker's
    answer used to hit a closed pipe and replace the error with 'checker failed')."""
    import time

    def slow(t):
        time.sleep(0.2)
        return b""

    _, sb, ck = _checker(monkeypatch, slow)
    ck.submit([_taken(0, 10)])
    with pytest.raises(AssertionError, match="the real failure"):
        try:
            raise AssertionError("the real failure, seen by the simulator process")
        except BaseException:
            ck.close(raise_errors=False)
            raise
    assert ck.pending == 0
    # Closed with a batch still in the checker: its answer is read first, so the checker ends
    # cleanly (it used to die on the closed pipe and close() reported a failed checker).
    _, _, ck = _checker(monkeypatch, slow)
    ck.submit([_taken(0, 10)])
    assert ck.close() >= 0.0 and ck.pending == 0


def test_checker_cost() -> None:
    """bench.sim_speed.checker_cost: on/off speeds per path and the fraction lost; a path
    measured only one way is left out."""
    from bench.sim_speed import checker_cost
    entry = {"fast": {"cycles_per_total_cpu_s": 900.0}, "fast_nochk": {"cycles_per_total_cpu_s": 1000.0},
             "ceiling": {"cycles_per_cpu_s": 4000.0}, "ceiling_nochk": {}}
    got = checker_cost(entry)
    assert list(got) == ["fast"]
    assert got["fast"]["on"] == 900.0 and got["fast"]["off"] == 1000.0
    assert abs(got["fast"]["cost"] - 0.1) < 1e-12


def test_sim_memory_summary() -> None:
    """bench/sim_memory.py's growth figure: from the first sample at or after warm-up to the
    peak after it, per frame from the same base to the last sample."""
    from bench.sim_memory import summarize

    mib = 1 << 20
    samples = [{"frames": 0, "VmRSS": 60 * mib, "RssAnon": 40 * mib, "py_objects": 50_000},
               {"frames": 10_000, "VmRSS": 100 * mib, "RssAnon": 70 * mib, "py_objects": 70_000},
               {"frames": 20_000, "VmRSS": 112 * mib, "RssAnon": 70 * mib, "py_objects": 70_000},
               {"frames": 30_000, "VmRSS": 105 * mib, "RssAnon": 71 * mib, "py_objects": 70_100}]
    sm = summarize(samples, warmup=10_000)
    assert sm["rss_at_warmup"] == 100 * mib and sm["rss_peak"] == 112 * mib
    assert abs(sm["growth"] - 0.12) < 1e-9 and not sm["within_target"]
    assert sm["rss_bytes_per_frame"] == 5 * mib / 20_000
    assert sm["anon_bytes_per_frame"] == mib / 20_000
    assert sm["py_objects_per_frame"] == 100 / 20_000
    assert summarize(samples[:3], warmup=10_000)["within_target"] is False
    assert summarize([dict(s, VmRSS=100 * mib) for s in samples])["within_target"]
    with pytest.raises(ValueError, match="two samples"):
        summarize(samples[:2], warmup=10_000)


def test_standalone_checker_lines(tmp_path) -> None:
    """tb/fast/standalone.checker_lines: the protocol checker's violation and waves lines are
    picked out of the standalone simulator's output; no summary from a build with the checker
    is an error for `run` (None), from a NO_AXI_CHECKER build it is expected."""
    from tb.fast.standalone import CHECKER_MARK, checker_lines
    binary = tmp_path / "Vstandalone"
    out = ("- V e r i l a t i o n -\n"
           "nic_checker: VIOLATION AXI4_W_LAST broken by the NIC (DMA master m_axi) at cycle 810 (3240 ns): ...\n"
           "nic_checker: waves: nicsim waves x.fst --group dma --start 3040 --end 3340\n"
           "nic_checker: nic_fast_top.u_nic.u_protocol_checker: 900 cycles checked: m_axi 1 AR; 1 violations\n")
    (tmp_path / CHECKER_MARK).write_text("on\n")
    broken, summary = checker_lines(binary, out)
    assert [b.split()[2] for b in broken] == ["AXI4_W_LAST", "nicsim"] and "900 cycles checked" in summary
    assert checker_lines(binary, "frames done\n") == ([], None)
    (tmp_path / CHECKER_MARK).write_text("off\n")
    assert checker_lines(binary, "frames done\n")[1] == "protocol checker left out (NO_AXI_CHECKER)"


def test_last_frame_latency_cycles() -> None:
    """bench.rx_linerate's latency_cycles_last_frame: from the last frame's tlast beat to the
    write response of the last completion write covering its completion's ring slot (4 ns
    cycles); None when a frame was dropped, the beat is missing or no covering write answered."""
    from bench.rx_linerate_sim import CLK_NS, CplWrite, last_frame_latency_cycles
    assert CLK_NS == 4
    slot = 0x1000 + 16 * 5
    writes = [CplWrite(0x1000, 64, 100.0),            # slots 0-3: does not cover slot 5
              CplWrite(0x1000 + 64, 32, 900.0),       # slots 4-5: an earlier lap's write
              CplWrite(0x1000 + 80, 16, 1400.0),      # slot 5 again: the last covering write
              CplWrite(0x1000 + 96, 16, 2000.0)]      # slot 6: after, not covering
    assert last_frame_latency_cycles(1000.0, writes, slot, True) == (1400.0 - 1000.0) / 4
    # the response may come before the beat only if the bench paired the wrong write: the
    # result is then negative and visible, not clipped
    assert last_frame_latency_cycles(1500.0, writes, slot, True) == -25.0
    assert last_frame_latency_cycles(1000.0, writes, slot, False) is None
    assert last_frame_latency_cycles(None, writes, slot, True) is None
    assert last_frame_latency_cycles(1000.0, writes[:1], slot, True) is None
    assert last_frame_latency_cycles(1000.0, writes[:2] + [CplWrite(0x1000 + 80, 16)], slot, True) is None
