"""The cluster's loss accounting (`nicsim.cluster.loss_accounting`), XPS by receive queue and
NCCL's send order (docs/cluster.md), small and fast (the golden model, a few KiB per pair).

The expectations are written from the rules, not from the code: the payload share from the
frame layout (54 header bytes, DATA_W/8-byte beats, 24 bytes of preamble, SFD, FCS and gap),
the loss parts of a hand-made time series window by window, NCCL's p2p schedule from its
triangular-number recurrence, and XPS from Documentation/networking/scaling.rst (a socket
sends on the TX queue mapped to the RX queue it receives on).
"""
from __future__ import annotations

import asyncio

import pytest

from nicsim.cli import main
from nicsim.cluster import LOSS_KEYS, loss_accounting, run_model
from tb.cluster.workload import (DEVMEM_QUEUE, Cluster, ClusterConfig, ClusterResult, PairResult,
                                 p2p_deltas, payload_share, send_order)

SHARE_1448_512 = 1448 / (24 * 64)
"""MSS 1448 at 512 bits: a 1502-byte frame is 24 beats of 64 bytes (1536 bytes, more than its
1526 bytes of wire time)."""
SHARE_8948_512 = 8948 / 9026
"""MSS 8948 at 512 bits: 9002 bytes in 141 beats (9024 bytes), wire time 9026 bytes."""


def test_payload_share_from_the_frame_layout() -> None:
    assert payload_share(ClusterConfig(data_width=512, mss=1448)) == pytest.approx(SHARE_1448_512, abs=1e-12)
    assert payload_share(ClusterConfig(data_width=512, mss=8948)) == pytest.approx(SHARE_8948_512, abs=1e-12)
    assert payload_share(ClusterConfig(data_width=64, mss=1448)) == pytest.approx(1448 / 1526, abs=1e-12)


WIN_NS = 4096
"""A 1024-cycle window (4 ns cycles)."""
WIN_BYTES = 1024 * 64
"""A window's line rate at 512 bits."""


def _result(rates: list[float], acks: int, mss: int, share: float, retrans: int = 0,
            drops: int = 0) -> ClusterResult:
    """Two senders into NIC 0, 512 bits, ten windows: window k carries rates[k] of the payload
    share; pair 1->0 is done at the end of window 8, pair 2->0 at the end of window 10."""
    cum, got = [], 0.0
    for r in rates:
        got += r * share * WIN_BYTES
        cum.append(got)
    total = cum[-1]
    t_end = WIN_NS * len(rates)
    pairs = [PairResult(1, 0, int(total / 2), True, 8 * WIN_NS, 0.0, 0, 0, True),
             PairResult(2, 0, int(total) - int(total / 2), True, t_end, 0.0, 0, 0, True)]
    total = sum(p.bytes for p in pairs)
    cum[-1] = total
    tcp = [{"TCPPureAck": acks, "RetransSegs": 0}, {"TCPPureAck": 7, "RetransSegs": retrans},
           {"TCPPureAck": 9, "RetransSegs": 0}]
    switch = [{"drops": drops, "injected": 0}, {"drops": 0, "injected": 0}, {"drops": 0, "injected": 0}]
    samples = {"t_ns": [WIN_NS * (k + 1) for k in range(len(rates))],
               "rx_bytes": [cum, [0.0] * len(rates), [0.0] * len(rates)]}
    cfg = {"data_width": 512, "mss": mss, "ifg_bytes": 24, "nics": 3}
    return ClusterResult(cfg, "model", pairs, 0, t_end, total / (t_end / 4 * 64), share, switch, tcp,
                         [], 0, samples, t_end, t_end // 4, 0.0)


RATES = [0.5, 1.0] + [0.95] * 6 + [0.5, 0.5]


def test_loss_accounting_by_hand() -> None:
    """Ten windows at MSS 1448: half the payload share in the first (the ramp: it ends with
    window 2, the first at 90% or more), 95% in windows 3 to 8, half in 9 and 10 (the tail,
    after pair 1->0 is done). Each window is a tenth of the capacity, and what its bytes
    leave unused of it is the loss: 0.1 - rate x 0.1."""
    res = _result(RATES, acks=0, mss=1448, share=SHARE_1448_512)
    la = loss_accounting(res)
    agg = 8.2 * SHARE_1448_512 / 10
    assert res.aggregate_fraction == pytest.approx(agg, abs=1e-5)    # the pairs' bytes are whole
    assert la["framing"] == pytest.approx(agg * (1 / SHARE_1448_512 - 1), abs=1e-5)
    assert la["pure_acks"] == la["duplicates"] == 0
    assert la["t_ramp_ns"] == 2 * WIN_NS and la["t_tail_ns"] == 8 * WIN_NS
    assert la["ramp"] == pytest.approx(0.1 - 0.05, abs=1e-5)
    assert la["steady"] == pytest.approx(6 * (0.1 - 0.095), abs=1e-5)
    assert la["tail"] == pytest.approx(2 * (0.1 - 0.05), abs=1e-5)
    assert sum(la[k] for k in LOSS_KEYS) == pytest.approx(1 - res.aggregate_fraction, abs=1e-9)


def test_loss_accounting_pure_acks_and_duplicates() -> None:
    """The receiving host's pure ACKs (not the senders') on its port. MSS 1448 at 512 bits: a
    data frame's last beat has 10 bytes of padding, more than half an ACK's 20 bytes of wire
    overhead beyond its one beat, so with fewer ACKs than half the data frames each costs one
    beat (1024 cycles per window, 10 windows). MSS 8948: no padding to spare, an ACK costs
    its 84 bytes of wire time. Retransmissions beyond the frames lost cost a data frame each."""
    cap = 10 * 1024
    res = _result(RATES, acks=40, mss=1448, share=SHARE_1448_512, retrans=5, drops=3)
    la = loss_accounting(res)
    assert la["pure_acks"] == pytest.approx(40 * 1 / cap, abs=1e-12)
    assert la["duplicates"] == pytest.approx((5 - 3) * 24 / cap, abs=1e-12)
    assert sum(la[k] for k in LOSS_KEYS) == pytest.approx(1 - res.aggregate_fraction, abs=1e-9)
    res = _result(RATES, acks=40, mss=8948, share=SHARE_8948_512)
    la = loss_accounting(res)
    assert la["pure_acks"] == pytest.approx(40 * 84 / 64 / cap, abs=1e-12)
    assert la["framing"] == pytest.approx(res.aggregate_fraction * (9026 / 8948 - 1), abs=1e-9)
    assert sum(la[k] for k in LOSS_KEYS) == pytest.approx(1 - res.aggregate_fraction, abs=1e-9)


def test_loss_accounting_on_a_model_run(tmp_path) -> None:
    """A real run (N = 2 at 512 bits on the model): the parts add up to the measured gap, the
    framing is the formula's, and the summary prints the accounting."""
    cfg = ClusterConfig(nics=2, bytes_per_pair=64 << 10, data_width=512, mss=1448)
    res = run_model(cfg, lambda m: None)
    assert res.ok, res.errors
    la = loss_accounting(res)
    assert sum(la[k] for k in LOSS_KEYS) == pytest.approx(1 - res.aggregate_fraction, abs=1e-9)
    assert la["framing"] == pytest.approx(res.aggregate_fraction * (1 / SHARE_1448_512 - 1), abs=1e-9)
    assert la["duplicates"] == 0                         # no loss, no retransmission
    assert 0 < la["pure_acks"] < 0.1
    assert 0 < la["t_tail_ns"] <= res.t_end_ns - res.t0_ns


# ------------------------------------------------------------------------ NCCL's send order
def _triangular_order(n: int) -> list[int]:
    """NCCL's p2p round offsets written from its recurrence: delta_k = k (k + 1) / 2 modulo
    the next power of two of n (delta += round), those of n or more skipped, 0 left out."""
    pow2 = 1 << (n - 1).bit_length()
    return [d for d in (k * (k + 1) // 2 % pow2 for k in range(pow2)) if 0 < d < n]


def test_p2p_deltas() -> None:
    assert p2p_deltas(4) == [1, 3, 2]
    assert p2p_deltas(8) == [1, 3, 6, 2, 7, 5, 4]
    assert p2p_deltas(2) == [1]
    # NCCL src/init.cc, its comment on the schedule: "Example sequence for 16 ranks: 0, 1, 3,
    # 6, 10, 15, 5, 12, 4, 13, 7, 2, 14, 11, 9, 8" (0, the rank itself, left out here)
    assert p2p_deltas(16) == [1, 3, 6, 10, 15, 5, 12, 4, 13, 7, 2, 14, 11, 9, 8]
    for n in range(2, 17):
        assert p2p_deltas(n) == _triangular_order(n), n
        assert sorted(p2p_deltas(n)) == list(range(1, n)), n     # every peer once


def test_send_order() -> None:
    """nccl: host i's k-th send goes to i + delta_k, so in every round the hosts' sends go to
    different receivers (each round a permutation); index: the peers in index order."""
    for n in (2, 3, 4, 5, 8):
        cfg = ClusterConfig(nics=n)
        orders = [send_order(cfg, i, [j for j in range(n) if j != i]) for i in range(n)]
        for i, o in enumerate(orders):
            assert o == [(i + d) % n for d in _triangular_order(n)], (n, i)
        for k in range(n - 1):
            assert sorted(o[k] for o in orders) == list(range(n)), (n, k)
    cfg = ClusterConfig(nics=4)
    assert [send_order(cfg, i, [j for j in range(4) if j != i]) for i in range(4)] == \
        [[1, 3, 2], [2, 0, 3], [3, 1, 0], [0, 2, 1]]
    assert send_order(cfg, 2, [0]) == [0]                         # incast: one receiver
    cfg = ClusterConfig(nics=4, send_order="index")
    assert [send_order(cfg, i, [j for j in range(4) if j != i]) for i in range(4)] == \
        [[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]]


# --------------------------------------------------------------------- XPS by receive queue
def _run_cluster(cfg: ClusterConfig) -> tuple[Cluster, ClusterResult]:
    """`run_cluster` on the model, keeping the hosts."""
    from tb.cluster.model_env import ModelClusterEnv

    async def go() -> tuple[Cluster, ClusterResult]:
        env = ModelClusterEnv(cfg)
        c = Cluster(cfg, env, lambda m: None)
        await c.setup()
        await c.connect()
        await env.run(c, c.connected)
        await c.start()
        await env.run(c, c.done)
        return c, await c.result(env.backend, env.cycles())
    return asyncio.run(go())


def test_xps_rxqs() -> None:
    """XPS by receive queue (the default): a socket sends on the TX queue mapped to the RX
    queue its segments arrive on. Each host's sends get their ACKs on RX queue 0 (RSS), so
    their data goes out on TX queue 0; its receives arrive on the devmem queue 1 (the n-tuple
    rule), so their ACKs go out on TX queue 1, which carries no data: only frames of at most
    the headers (54 bytes and TCP options)."""
    cfg = ClusterConfig(nics=3, bytes_per_pair=16 << 10, data_width=512)
    c, res = _run_cluster(cfg)
    assert res.ok, res.errors
    for h in c.hosts:
        assert h.nd.xps_rxqs == {0: 1 << 0, DEVMEM_QUEUE: 1 << DEVMEM_QUEUE}
        for sd in h.senders.values():
            sk = sd.sock.sk
            assert sk is not None and sk.rx_queue == 0
            assert h.nd.xps_queue(sk.rx_queue, sk.flow_hash) == 0
        for r in h.receivers.values():
            sk = r.sock.sk
            assert sk is not None and sk.rx_queue == DEVMEM_QUEUE
            assert h.nd.xps_queue(sk.rx_queue, sk.flow_hash) == DEVMEM_QUEUE
        q0, q1 = (h.nd.tx_queues[q].stats for q in (0, 1))
        assert q0.bytes >= len(h.senders) * cfg.bytes_per_pair
        assert q1.packets > 0 and q1.bytes <= q1.packets * (54 + 40)


def test_xps_queue_rule() -> None:
    """`xps_queue` against scaling.rst: the queues whose rxqs mask has the socket's RX queue,
    the flow hash choosing among several; none mapped, or no RX queue yet (-1): the hash."""
    c, _ = _run_cluster(ClusterConfig(nics=2, bytes_per_pair=4 << 10, xps_rxqs=False))
    nd = c.hosts[0].nd
    assert nd.xps_rxqs == {}
    assert [nd.xps_queue(q, 5) for q in (-1, 0, 1)] == [5, 5, 5]
    nd.set_xps_rxqs(0, 0b11)
    nd.set_xps_rxqs(1, 0b10)
    assert nd.xps_queue(0, 7) == 0                 # only tx-0 has rx-0
    assert [nd.xps_queue(1, h) for h in (6, 7)] == [0, 1]    # both: the hash chooses
    assert nd.xps_queue(-1, 9) == 9


@pytest.mark.parametrize("opts", [["--xps", "hash"], ["--send-order", "index"],
                                  ["--xps", "hash", "--send-order", "index"]])
def test_cluster_cli_xps_hash_send_order_index(tmp_path, capsys, opts: list[str]) -> None:
    """The non-default XPS and send order still run: byte-exact, exit 0."""
    assert main(["cluster", "--backend", "model", "--nics", "3", "--bytes-per-pair", "8K",
                 "--out", str(tmp_path), *opts]) == 0
    out = capsys.readouterr().out
    assert "byte-exact" in out and "MISMATCH" not in out and "CPU reads of device memory 0" in out
    assert "where the rest of line rate goes" in out


def test_cluster_cli_send_order_bad(capsys) -> None:
    assert main(["cluster", "--backend", "model", "--send-order", "ring"]) == 2
    err = capsys.readouterr().err
    assert err == "nicsim cluster: [EINVAL] --send-order ring: one of nccl, index\n"


# ------------------------------------------------------------------------- TSO send sizes
def test_tso_tuning_defaults_and_linux_defaults() -> None:
    """The cluster's defaults reach every host: sysctl tcp_tso_win_divisor 64 and
    gso_max_size 18432, so at MSS 8948 a GSO skb holds at most 18432 - 321 bytes of payload
    (`tcp_xmit_size_goal`): two segments, and every TSO send (a GSO skb of more than one
    MSS) is exactly two. With Linux's defaults (3, 65536) and one connection per receiver
    (N = 2: a 256 KiB window, half of it 14 segments, 64 KiB 7), sends of more than two
    segments appear."""
    c, res = _run_cluster(ClusterConfig(nics=2, bytes_per_pair=512 << 10, data_width=512,
                                        mss=8948))
    assert res.ok, res.errors
    for h in c.hosts:
        assert h.kernel.tcp.tso_win_divisor == 64 and h.nd.gso_max_size == 18 << 10
    for tx in res.tx:
        assert tx["tso"] == "on" and tx["tx-hw-gso-packets"] > 0
        assert tx["tx-hw-gso-wire-packets"] == 2 * tx["tx-hw-gso-packets"], tx
    c, res = _run_cluster(ClusterConfig(nics=2, bytes_per_pair=512 << 10, data_width=512,
                                        mss=8948, tso_win_divisor=3, gso_max_size=65536))
    assert res.ok, res.errors
    for h in c.hosts:
        assert h.kernel.tcp.tso_win_divisor == 3 and h.nd.gso_max_size == 65536
    assert any(tx["tx-hw-gso-wire-packets"] > 2 * tx["tx-hw-gso-packets"] for tx in res.tx), res.tx


@pytest.mark.parametrize("opts, why", [
    (["--tso-win-divisor", "256"], "--tso-win-divisor 256: 0 to 255 (a u8 sysctl)"),
    (["--gso-max-size", "65537"], "--gso-max-size 65537: 1 to 65536 (the NIC's tso_max_size)"),
    (["--gso-max-size", "0"], "--gso-max-size 0: 1 to 65536 (the NIC's tso_max_size)"),
])
def test_cluster_cli_tso_tuning_bad(capsys, opts: list[str], why: str) -> None:
    assert main(["cluster", "--backend", "model", *opts]) == 2
    assert capsys.readouterr().err == f"nicsim cluster: [EINVAL] {why}\n"
