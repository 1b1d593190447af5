"""The cluster (docs/cluster.md): N = 2 and N = 4 NIC/GPU pairs on one switch, the all-to-all
devmem TCP workload of tb/cluster/workload.py, on the RTL (N nic_top and the HDL switch under
one Verilator model) and on the golden model (models/ NICs and switch), small byte counts.

Every run, on either backend, is checked against what does not come from the NIC:
- every destination buffer, read by the GPU accessor after the unpack, equals the bytes the
  peer's GPU put in its transmit dma-buf (seeded, `pair_data`), and no CPU read of device
  memory happened on any host;
- every sender saw a zero-copy completion for every MSG_ZEROCOPY call;
- conservation between two independent counters: every frame a host's TCP sent is a frame the
  switch took in on that host's port, every frame the switch sent out of a port is a segment
  that host's TCP took in (the NICs dropped nothing), and the switch's frames in = out + drops
  + random losses; up to the closing ACKs still on their way when the run ends (at most two
  per connection);
- without loss: no drop anywhere, no retransmission.
And RTL against model: the same loadMeta entries and unpack requests per pair (the fragments
the NIC's header split left in the receive dma-buf, one entry each), the same data in every
buffer (both checked above), both without loss.

A lossy run (seeded random loss at the switch's ingress) checks recovery on both backends.
Goodput and completion times are measured by `make bench` (bench/cluster.py), not here.
"""
from __future__ import annotations

import pytest

from nicsim.cluster import run_model, run_rtl
from tb.cluster.workload import ClusterConfig, ClusterResult
from tb.sim import QUICK_CXX_OPT, pytest_test_name


def check_run(res: ClusterResult, cfg: ClusterConfig, lossless: bool = True) -> None:
    assert res.ok, res.errors
    assert [(p.src, p.dst) for p in res.pairs] == cfg.pair_list()
    for p in res.pairs:
        assert p.exact and p.bytes == cfg.bytes_per_pair, f"pair {p.src}->{p.dst}: {p.bytes} B, exact {p.exact}"
        assert p.notified, f"pair {p.src}->{p.dst}: zero-copy completions missing"
    assert res.cpu_reads == 0
    for i, (sw, tcp, hw) in enumerate(zip(res.switch, res.tcp, res.hw_drops)):
        assert not any(hw.values()), f"host {i}: NIC drops {hw}"
        conns = sum(1 for s, r in cfg.pair_list() if i in (s, r))
        sent_unseen = tcp["OutSegs"] - sw["rx_frames"]
        fwd_untaken = sw["tx_frames"] - tcp["InSegs"]
        assert 0 <= sent_unseen <= 2 * conns, f"port {i}: switch took {sw['rx_frames']}, TCP sent {tcp['OutSegs']}"
        assert 0 <= fwd_untaken <= 2 * conns, f"port {i}: switch sent {sw['tx_frames']}, TCP took {tcp['InSegs']}"
        assert sw["no_route"] == sw["hairpin"] == sw["oversize"] == 0, sw
    total = {k: sum(s[k] for s in res.switch) for k in ("rx_frames", "tx_frames", "drops", "injected")}
    in_flight = total["rx_frames"] - total["tx_frames"] - total["drops"] - total["injected"]
    assert 0 <= in_flight <= 2 * len(cfg.pair_list()), total   # the last ACKs may still be in the switch
    if lossless:
        assert total["drops"] == total["injected"] == 0, total
        assert sum(t["RetransSegs"] for t in res.tcp) == 0


def unpack_shape(res: ClusterResult) -> list[tuple[int, int, int, int]]:
    return [(p.src, p.dst, p.requests, p.entries) for p in res.pairs]


# The cluster models are N copies of nic_top: at -O0 they build in a third of the CPU time
# (N=4 at 512 bits: 79 instead of 232 CPU-s) and these small runs still take seconds; the
# benches and `nicsim cluster` keep the default optimisation.
QUICK_BUILD = QUICK_CXX_OPT

CASES = [pytest.param(2, 64, 24 << 10, id="n2-w64"), pytest.param(4, 512, 16 << 10, id="n4-w512")]


@pytest.mark.parametrize("nics,width,nbytes", CASES)
def test_cluster_model(nics: int, width: int, nbytes: int) -> None:
    cfg = ClusterConfig(nics=nics, bytes_per_pair=nbytes, data_width=width)
    check_run(run_model(cfg, lambda m: None), cfg)


@pytest.mark.rtl
@pytest.mark.parametrize("nics,width,nbytes", CASES)
def test_cluster_rtl_vs_model(nics: int, width: int, nbytes: int) -> None:
    cfg = ClusterConfig(nics=nics, bytes_per_pair=nbytes, data_width=width)
    model = run_model(cfg, lambda m: None)
    rtl = run_rtl(cfg, name=pytest_test_name(), seed=1, cxx_opt=QUICK_BUILD)
    check_run(model, cfg)
    check_run(rtl, cfg)
    assert unpack_shape(rtl) == unpack_shape(model)


def test_cluster_lossy_model() -> None:
    cfg = ClusterConfig(nics=2, bytes_per_pair=48 << 10, drop_rate=0.03, seed=3, rto_min_us=20)
    res = run_model(cfg, lambda m: None)
    check_run(res, cfg, lossless=False)
    lost = sum(s["injected"] for s in res.switch)
    assert lost > 0, "the seed lost no frame: pick another"
    assert sum(t["RetransSegs"] for t in res.tcp) > 0


@pytest.mark.rtl
def test_cluster_lossy_rtl() -> None:
    cfg = ClusterConfig(nics=2, bytes_per_pair=48 << 10, drop_rate=0.03, seed=3, rto_min_us=20)
    res = run_rtl(cfg, name=pytest_test_name(), seed=1, cxx_opt=QUICK_BUILD)
    check_run(res, cfg, lossless=False)
    assert sum(s["injected"] for s in res.switch) > 0, "the seed lost no frame: pick another"
    assert sum(t["RetransSegs"] for t in res.tcp) > 0


def _drop_fins_from(env, port: int) -> list[int]:
    """A test hook on the model's switch: every frame with FIN set that host `port` sends is
    lost at the ingress (so that host's closes never complete). Returns the count of frames
    lost, growing."""
    lost = [0]
    send = env.switch.send

    def send_or_lose(p: int, frame: bytes, cycle: int) -> None:
        ihl = (frame[14] & 0x0F) * 4
        if p == port and frame[12:14] == b"\x08\x00" and frame[23] == 6 and frame[14 + ihl + 13] & 0x01:
            lost[0] += 1
            return
        send(p, frame, cycle)
    env.switch.send = send_or_lose
    return lost


def test_cluster_model_stall() -> None:
    """A connection whose FIN never arrives (every FIN of host 0 lost: its retransmissions
    too) makes no progress: the run stops after `stall_ms` of simulated time without progress
    with one line naming the stuck connection and both TCP states, long before --timeout-ms."""
    import asyncio

    from tb.cluster.model_env import ModelClusterEnv
    from tb.cluster.workload import run_cluster
    cfg = ClusterConfig(nics=2, bytes_per_pair=8 << 10, stall_ms=3.0)
    env = ModelClusterEnv(cfg)
    lost = _drop_fins_from(env, 0)
    with pytest.raises(TimeoutError) as ei:
        asyncio.run(run_cluster(cfg, env, lambda m: None))
    msg = str(ei.value)
    assert "\n" not in msg
    assert msg.startswith("cluster: no progress for 3.0 ms simulated"), msg
    assert "1 connections stuck: 0->1 sender FIN_WAIT1" in msg and "receiver ESTABLISHED" in msg, msg
    assert "1->0" not in msg.split(";")[0], msg           # that one closed
    assert "8192/8192 B unpacked" in msg, msg             # the data all arrived, the close did not
    assert "unacked 1 B" in msg and "zero-copy notifications 1/1)" in msg, msg   # only the FIN is owed
    assert lost[0] >= 2, lost                             # the FIN and at least one retransmission
    assert env.now_ns() < 10 * 1_000_000                  # far before the 200 ms timeout
