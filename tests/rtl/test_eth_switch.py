"""The cluster's switch (tb/cluster/eth_switch.sv) against its golden model
(models/eth_switch.py), both written from the rules of docs/cluster.md, on the same traffic:
every frame's ingress cycles, every egress frame (bytes, source, first and last cycle) in
order, the queue depth of every egress in every cycle, and the counters.

Traffic (seeded): random unicast between all ports with random gaps and sizes (1-beat frames,
odd lengths, up to 1600 bytes), incast bursts (three ports back to back into one, with a
buffer small enough that drop tail must act), broadcast frames (flooded), frames for a MAC in
no table entry, frames for the ingress port's own MAC (hairpin) and frames over MAX_FRAME.
With 3% random loss at the ingress (seeded, the same draws in both). Reasoned checks besides the model: drops happened where the incast went, each broadcast reached
every other port or, lost at its ingress, none; the special frames were counted where the rules say.

The cocotb test drives the ingress streams and samples the egress at the falling edge, so a
beat offered there moves at the next rising edge if tready is high.
"""
from __future__ import annotations

import random
from collections import defaultdict

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge

from models.eth_switch import EthSwitchModel
from tb.sim import pytest_test_name, run_rtl_test

PORTS = 4
MAX_FRAME = 2048
MAX_CELLS = 1024
IFG = 24


def mac(p: int) -> bytes:
    return bytes([2, 0, 0, 0, 0, p + 1])


def make_frame(rng: random.Random, dst: bytes, src: int, n: int, seq: int) -> bytes:
    body = seq.to_bytes(4, "big") + rng.randbytes(max(0, n - 16))
    return (dst + mac(src) + b"\x08\x00" + body)[:n]


def traffic(rng: random.Random, db: int) -> list[tuple[int, int, bytes]]:
    """(port, offered cycle, frame), in offer order per port."""
    out: list[tuple[int, int, bytes]] = []
    seq = 0
    t = [50] * PORTS
    sizes = [1, db, db + 1, 60, 61, 64, 65, 127, 500, 1024, 1514, 1600]

    def add(p: int, dst: bytes, n: int, gap: int) -> None:
        nonlocal seq
        seq += 1
        t[p] += gap
        out.append((p, t[p], make_frame(rng, dst, p, max(n, 14), seq)))

    for _ in range(40):                                     # unicast, random
        for p in range(PORTS):
            q = rng.choice([x for x in range(PORTS) if x != p])
            add(p, mac(q), rng.choice(sizes) if rng.random() < 0.5 else rng.randrange(14, 1600),
                rng.choice([0, 0, 1, 3, 20, 200]))
    t = [max(t)] * PORTS
    for _ in range(30):                                     # incast into port 0, back to back
        for p in (1, 2, 3):
            add(p, mac(0), 1514, 0)
    for p in range(PORTS):                                  # the special frames
        add(p, b"\xff" * 6, 64, 5)                          # broadcast
        add(p, bytes([2, 0, 0, 0, 0, 0x77]), 100, 5)        # no entry
        add(p, mac(p), 100, 5)                              # hairpin
        add(p, mac((p + 1) % PORTS), MAX_FRAME + 1 + 100 * p, 5)   # oversize
        add(p, bytes([0x33, 0x33, 0, 0, 0, 1]), 90, 5)      # multicast: flooded too
        add(p, mac((p + 2) % PORTS), 1514, 0)
    return out


def unpack(v: int, width: int, i: int) -> int:
    return (v >> (width * i)) & ((1 << width) - 1)


@cocotb.test()
async def switch_vs_model(dut) -> None:
    rng = random.Random(cocotb.RANDOM_SEED)
    w = int(dut.DATA_W.value)
    db = w // 8
    cap = 400 if db == 8 else 60
    cocotb.start_soon(Clock(dut.clk, 4, unit="ns").start())
    dut.rst.value = 1
    dut.s_tvalid.value = 0
    dut.s_tdata.value = 0
    dut.s_tkeep.value = 0
    dut.s_tlast.value = 0
    dut.m_tready.value = (1 << PORTS) - 1
    dut.cap_cells.value = cap
    drop_thr, drop_seed = int(0.03 * (1 << 32)), rng.getrandbits(32)
    dut.drop_thr.value = drop_thr
    dut.drop_seed.value = drop_seed
    dut.fwd_we.value = 0
    for _ in range(4):
        await FallingEdge(dut.clk)
    table = [(mac(p), p) for p in range(PORTS)]
    for i, (m, p) in enumerate(table):
        dut.fwd_we.value, dut.fwd_idx.value, dut.fwd_mac.value = 1, i, int.from_bytes(m, "big")
        dut.fwd_port.value, dut.fwd_valid.value = p, 1
        await FallingEdge(dut.clk)
    dut.fwd_we.value = 0
    dut.rst.value = 0
    await FallingEdge(dut.clk)
    # cycle k: the k-th rising edge after this falling edge (k = 1 is the next one)
    plan = traffic(rng, db)
    model = EthSwitchModel(PORTS, db, cap, ifg_bytes=IFG, max_frame=MAX_FRAME, table=table,
                           drop_thr=drop_thr, drop_seed=drop_seed)
    for p, at, f in plan:
        model.send(p, f, at)
    queues: dict[int, list[tuple[int, bytes]]] = defaultdict(list)
    for p, at, f in plan:
        queues[p].append((at, f))
    pos = {p: 0 for p in range(PORTS)}        # frame index per port
    beat = {p: 0 for p in range(PORTS)}       # beat within it
    taken_first: dict[int, int] = {}
    hdl_taken: list[tuple[int, int, int]] = []
    got: dict[int, list[tuple[bytes, int, int]]] = defaultdict(list)
    cur: dict[int, bytearray] = {}
    cur_first: dict[int, int] = {}
    depth_mismatch = []
    last_offer = max(at for _, at, _ in plan)
    horizon = last_offer + 20000
    k = 0
    while k < horizon:
        # what the next rising edge (cycle k + 1) sees
        ready = int(dut.s_tready.value)
        mv = int(dut.m_tvalid.value)
        if mv:
            md, mk, ml = int(dut.m_tdata.value), int(dut.m_tkeep.value), int(dut.m_tlast.value)
            for o in range(PORTS):
                if mv >> o & 1:
                    d = unpack(md, w, o).to_bytes(db, "little")
                    keep = unpack(mk, db, o)
                    n = keep.bit_length()
                    assert keep == (1 << n) - 1, f"tkeep {keep:x} not contiguous"
                    if o not in cur:
                        cur[o] = bytearray()
                        cur_first[o] = k + 1
                    cur[o] += d[:n]
                    if ml >> o & 1:
                        got[o].append((bytes(cur.pop(o)), cur_first.pop(o), k + 1))
        valid = data = keep = last = 0
        for p in range(PORTS):
            if pos[p] < len(queues[p]) and queues[p][pos[p]][0] <= k + 1:
                f = queues[p][pos[p]][1]
                b = beat[p]
                chunk = f[b * db:(b + 1) * db]
                valid |= 1 << p
                data |= int.from_bytes(chunk, "little") << (w * p)
                keep |= ((1 << len(chunk)) - 1) << (db * p)
                is_last = (b + 1) * db >= len(f)
                last |= int(is_last) << p
                if ready >> p & 1:
                    if b == 0:
                        taken_first[p] = k + 1
                    if is_last:
                        hdl_taken.append((p, taken_first[p], k + 1))
                        pos[p] += 1
                        beat[p] = 0
                    else:
                        beat[p] += 1
        dut.s_tvalid.value = valid
        dut.s_tdata.value = data
        dut.s_tkeep.value = keep
        dut.s_tlast.value = last
        # depth after edge k (HDL) against the model's before cycle k + 1
        if k > 0:
            model.advance(k + 1)
            dv = int(dut.depth.value)
            for o in range(PORTS):
                if unpack(dv, 32, o) != model.depth(o, k + 1) and len(depth_mismatch) < 5:
                    depth_mismatch.append((k, o, unpack(dv, 32, o), model.depth(o, k + 1)))
        await FallingEdge(dut.clk)
        k += 1
        if k > last_offer and all(pos[p] == len(queues[p]) for p in range(PORTS)) \
                and not int(dut.m_tvalid.value) and not model._pending \
                and all(model.depth(o, k + 1) == 0 for o in range(PORTS)) and not cur:
            break
    model.advance(k + 1)
    assert not depth_mismatch, f"queue depth (cycle, port, HDL, model): {depth_mismatch}"
    # ingress cycles
    want_taken = sorted(model.taken)
    assert sorted(hdl_taken) == want_taken, "ingress cycles differ from the model's"
    # egress: frames, order, cycles
    want: dict[int, list[tuple[bytes, int, int]]] = defaultdict(list)
    for f in model.delivered:
        want[f.port].append((f.frame, f.first, f.last))
    for o in range(PORTS):
        g, m = got[o], want[o]
        for i, (a, b) in enumerate(zip(g, m)):
            assert a == b, (f"egress {o} frame {i}: HDL {len(a[0])} B cycles {a[1]}..{a[2]}, "
                            f"model {len(b[0])} B cycles {b[1]}..{b[2]}, same bytes {a[0] == b[0]}")
        assert len(g) == len(m), f"egress {o}: HDL {len(g)} frames, model {len(m)}"
    # counters
    names = ("rx_frames", "tx_frames", "drops", "drop_bytes", "no_route", "hairpin", "oversize", "injected")
    for name in names:
        v = int(getattr(dut, name).value)
        hdl = [unpack(v, 32, p) for p in range(PORTS)]
        mod = [getattr(model.counters[p], name) for p in range(PORTS)]
        assert hdl == mod, f"{name}: HDL {hdl}, model {mod}"
    # reasoned checks, not the model's
    c = model.counters
    assert c[0].drops > 0, "the incast into port 0 must overflow its buffer"
    assert sum(x.injected for x in c) > 0, "3% random loss over ~270 frames lost none"
    assert all(x.oversize == 1 for x in c)
    # Each port sends one broadcast. The random ingress loss draws once per frame, so a broadcast
    # is lost whole (at its ingress: no port gets it) or flooded to every other port; only an
    # output that dropped (drop tail) may miss one. Never back to its sender.
    flooded = 0
    for s in range(PORTS):
        rcv = {p for p in range(PORTS) for f in got[p] if f[0][:6] == b"\xff" * 6 and f[0][6:12] == mac(s)}
        assert s not in rcv, f"port {s}'s broadcast came back to it"
        if rcv:
            missing = {p for p in range(PORTS) if p != s and p not in rcv and not c[p].drops}
            assert not missing, f"port {s}'s broadcast missed ports {sorted(missing)}"
            flooded += 1
    assert flooded, "no broadcast was flooded"
    dut._log.info("switch vs model: %d frames in, %d out, drops %s, %d cycles",
                  len(plan), sum(len(v) for v in got.values()), [x.drops for x in c], k)


@pytest.mark.rtl
@pytest.mark.parametrize("data_w", [64, 512])
def test_eth_switch(data_w: int) -> None:
    run_rtl_test("eth_switch", ["tb/cluster/eth_switch.sv"], "tests.rtl.test_eth_switch",
                 {"N": PORTS, "DATA_W": data_w, "MAX_CELLS": MAX_CELLS, "MAX_FRAME": MAX_FRAME,
                  "IFG_BYTES": IFG}, pytest_test_name())
