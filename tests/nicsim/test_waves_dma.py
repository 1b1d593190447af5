"""`nicsim waves`' DMA decoder (nicsim/dma.py) and its transaction list.

Two independent references: a hand-written VCD whose every AXI handshake is placed by this
test (times, IDs, strobes, out-of-order responses, a DECERR read), and the committed
waveform of a replay, whose decoded RX writes must be exactly what the golden model's report
of the same capture says the NIC wrote (a header, payload buffers, completions per frame).
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from models.address_map import DEV_BASE, HOST_BASE
from models.formats import RxDesc
from nicsim import dma
from nicsim.cli import main
from nicsim.waves import Wave

DATA = Path(__file__).resolve().parents[1] / "data"
FST = DATA / "nic_top_replay.fst"
PCAP = DATA / "tcp_veth.pcap"
STEER = ["--steer", "proto=tcp,dst-port=5201,queue=7", "--devmem-queues", "7"]
CLK_PS = 4000

SIGNALS = {  # name: width
    "clk": 1, "m_axi_awvalid": 1, "m_axi_awready": 1, "m_axi_awid": 5, "m_axi_awaddr": 64,
    "m_axi_awlen": 8, "m_axi_awsize": 3, "m_axi_wvalid": 1, "m_axi_wready": 1, "m_axi_wlast": 1,
    "m_axi_wstrb": 8, "m_axi_wdata": 64, "m_axi_bvalid": 1, "m_axi_bready": 1, "m_axi_bid": 5,
    "m_axi_bresp": 2, "m_axi_arvalid": 1, "m_axi_arready": 1, "m_axi_arid": 5, "m_axi_araddr": 64,
    "m_axi_arlen": 8, "m_axi_arsize": 3, "m_axi_rvalid": 1, "m_axi_rready": 1, "m_axi_rid": 5,
    "m_axi_rdata": 64, "m_axi_rlast": 1, "m_axi_rresp": 2,
}


class Vcd:
    """Signal values per clock cycle; `write` makes a VCD in which a value set for cycle c
    changes at c's rising edge minus a quarter period, so the edge of cycle c samples it."""

    def __init__(self, cycles: int) -> None:
        self.cycles = cycles
        self.v: dict[str, dict[int, int]] = {n: {} for n in SIGNALS}
        for n in ("m_axi_awready", "m_axi_wready", "m_axi_bready", "m_axi_arready", "m_axi_rready"):
            self.v[n][0] = 1

    def at(self, cycle: int, **values: int) -> None:
        """Hold `values` for cycle `cycle` only (then the signals go back to 0)."""
        for n, val in values.items():
            self.v["m_axi_" + n][cycle] = val
            self.v["m_axi_" + n].setdefault(cycle + 1, 0)

    def write(self, path: Path) -> None:
        ids = {n: chr(33 + i) for i, n in enumerate(SIGNALS)}
        out = ["$timescale 1ps $end", "$scope module nic_top $end"]
        out += [f"$var wire {w} {ids[n]} {n} $end" for n, w in SIGNALS.items()]
        out += ["$upscope $end", "$enddefinitions $end"]
        changes: dict[int, list[str]] = {}
        for c in range(self.cycles):
            t = c * CLK_PS
            changes.setdefault(t, []).append(f"1{ids['clk']}")
            changes.setdefault(t + CLK_PS // 2, []).append(f"0{ids['clk']}")
        for n, vals in self.v.items():
            if n == "clk":
                continue
            last = None
            for c in sorted(vals):
                if vals[c] == last:
                    continue
                last = vals[c]
                t = max(0, c * CLK_PS - CLK_PS // 4)
                w = SIGNALS[n]
                changes.setdefault(t, []).append(f"{vals[c]}{ids[n]}" if w == 1 else f"b{vals[c]:b} {ids[n]}")
        for n in SIGNALS:
            if n != "clk" and 0 not in self.v[n]:
                changes.setdefault(0, []).append(f"0{ids[n]}" if SIGNALS[n] == 1 else f"b0 {ids[n]}")
        for t in sorted(changes):
            out.append(f"#{t}")
            out += changes[t]
        path.write_text("\n".join(out) + "\n")


def _beats(data: bytes) -> list[int]:
    return [int.from_bytes(data[i:i + 8], "little") for i in range(0, len(data), 8)]


@pytest.fixture()
def vcd(tmp_path: Path) -> Path:
    v = Vcd(40)
    hbuf, dbuf = HOST_BASE + 0x1000, DEV_BASE + 0x2000
    # descriptor reads: a header-ring read of queue 0 (ARID 0) and a payload-ring read (ARID 8)
    v.at(2, arvalid=1, arid=0, araddr=HOST_BASE, arlen=1, arsize=3)
    v.at(3, arvalid=1, arid=8, araddr=HOST_BASE + 0x100, arlen=1, arsize=3)
    for c, d in zip((4, 5), _beats(RxDesc(hbuf, 5).pack())):
        v.at(c, rvalid=1, rid=0, rdata=d, rlast=int(c == 5))
    for c, d in zip((6, 7), _beats(RxDesc(dbuf, 9).pack())):
        v.at(c, rvalid=1, rid=8, rdata=d, rlast=int(c == 7))
    # writes of queue 0: 22 bytes into the header buffer, 4 into the payload buffer, then 16
    # bytes elsewhere (no ring information in this file: an unplaced rx-write); a TX queue 1
    # completion (AWID 9) whose response comes first
    v.at(10, awvalid=1, awid=0, awaddr=hbuf, awlen=2, awsize=3)
    v.at(11, awvalid=1, awid=0, awaddr=dbuf, awlen=0, awsize=3)
    v.at(12, awvalid=1, awid=0, awaddr=HOST_BASE + 0x8000, awlen=1, awsize=3)
    v.at(13, awvalid=1, awid=9, awaddr=HOST_BASE + 0x9000, awlen=1, awsize=3)
    for c, strb in zip(range(11, 19), (0xFF, 0xFF, 0x3F, 0x0F, 0xFF, 0xFF, 0xFF, 0xFF)):
        v.at(c, wvalid=1, wstrb=strb, wlast=int(c in (13, 14, 16, 18)))
    v.at(19, bvalid=1, bid=9, bresp=0)
    v.at(20, bvalid=1, bid=0, bresp=0)
    v.at(21, bvalid=1, bid=0, bresp=2)
    v.at(22, bvalid=1, bid=0, bresp=0)
    # a TX descriptor read and a TX segment read that hits nothing (DECERR)
    v.at(24, arvalid=1, arid=16, araddr=HOST_BASE + 0x4000, arlen=0, arsize=3)
    v.at(25, arvalid=1, arid=24, araddr=0x12345, arlen=0, arsize=3)
    v.at(27, rvalid=1, rid=24, rdata=0, rlast=1, rresp=3)     # answered out of order
    v.at(28, rvalid=1, rid=16, rdata=0, rlast=1)
    # a burst the file ends before answering
    v.at(36, awvalid=1, awid=1, awaddr=HOST_BASE + 0xA000, awlen=0, awsize=3)
    p = tmp_path / "axi.vcd"
    v.write(p)
    return p


def test_decode_hand_placed_transactions(vcd: Path) -> None:
    got = [(x.dir, x.time_ps // CLK_PS, None if x.end_ps is None else x.end_ps // CLK_PS, x.kind, x.queue,
            x.id, x.memory, x.addr, x.nbytes, x.beats, x.resp) for x in dma.decode(Wave(vcd))]
    H, D = HOST_BASE, DEV_BASE
    assert got == [
        ("read", 2, 5, "hdr-desc", 0, 0, "host", H, 16, 2, "OKAY"),
        ("read", 3, 7, "pay-desc", 0, 8, "host", H + 0x100, 16, 2, "OKAY"),
        ("write", 10, 20, "header", 0, 0, "host", H + 0x1000, 22, 3, "OKAY"),
        ("write", 11, 21, "payload", 0, 0, "device", D + 0x2000, 4, 1, "SLVERR"),
        ("write", 12, 22, "rx-write", 0, 0, "host", H + 0x8000, 16, 2, "OKAY"),
        ("write", 13, 19, "tx-completion", 1, 9, "host", H + 0x9000, 16, 2, "OKAY"),
        ("read", 24, 28, "tx-desc", 0, 16, "host", H + 0x4000, 8, 1, "OKAY"),
        ("read", 25, 27, "tx-segment", None, 24, "unmapped", 0x12345, 3, 1, "DECERR"),
        ("write", 36, None, "rx-write", 1, 1, "host", H + 0xA000, 0, 1, ""),
    ]


def test_decode_matches_the_models_report() -> None:
    """The committed waveform is `nicsim replay --waves` of tcp_veth.pcap: the RX writes
    decoded from it, queue by queue and in order, are what the model's report says each
    frame needs (header, one payload burst per 4 KiB payload buffer, a completion each)."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        rep = Path(tmp) / "r.jsonl"
        assert main(["replay", str(PCAP), "--backend", "model", *STEER, "--report", str(rep)]) == 0
        recs = [json.loads(line) for line in rep.read_text().splitlines()]
    want = []
    for r in recs:
        if r["status"] != "delivered":
            continue
        q = r["queue"]
        if r["split"]:
            want.append((q, "header", "host", r["hdr_len"]))
        n, pieces = r["payload_len"], []
        while n > 0:
            pieces.append(min(n, 4096))
            n -= 4096
        want += [(q, "payload", "device" if r["payload_in"] == "device" else "host", p) for p in pieces]
        want += [(q, "completion", "host", 16)] * max(1, len(pieces))
    txns = dma.decode(Wave(FST))
    got = [(x.queue, x.kind, x.memory, x.nbytes) for x in txns if x.dir == "write" and x.kind in dma.RX_WRITE_KINDS]
    assert len(want) > 60 and got == want
    assert any(k == "payload" and m == "device" for _, k, m, _ in got)
    kinds = {x.kind for x in txns}
    assert {"hdr-desc", "pay-desc", "tx-desc", "tx-segment", "tx-completion"} <= kinds
    assert not {"rx-write", "unknown"} & kinds, "every burst of this file is placed"


def test_transactions_text_and_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["waves", str(FST), "--transactions", "--start", "7800", "--end", "7900"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["time", "ns", "end", "ns", "dir", "kind", "queue", "id", "memory", "addr",
                              "bytes", "beats", "resp"]
    assert any("payload" in ln and "device" in ln and "1448" in ln for ln in out)
    assert all(7800 <= float(ln.split()[0]) <= 7900 for ln in out[1:])
    out_csv = tmp_path / "t.csv"
    assert main(["waves", str(FST), "--transactions", "-o", str(out_csv)]) == 0
    rows = list(csv.DictReader(out_csv.open()))
    assert rows[0].keys() == set(dma.CSV_FIELDS) and len(rows) == len(dma.decode(Wave(FST)))
    assert {r["kind"] for r in rows} >= {"header", "payload", "completion"}


def test_window_past_the_end_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    end_ns = Wave(FST).last_time_ps() / 1000
    png = tmp_path / "w.png"
    for args, msg in (
        (["--start", str(end_ns + 10), "--end", str(end_ns + 500)], "past the end of nic_top_replay.fst"),
        (["--start", "5000", "--end", "4000"], "empty window"),
        (["--frame", "-1"], "frames count from 0"),
        (["--frame", "1", "--window", "0"], "--window: 0: must be above 0"),
        (["--frame", "999"], "the waveform has"),
    ):
        try:
            rc = main(["waves", str(FST), "-o", str(png), *args])
        except SystemExit as e:               # refused by the argument parser
            rc = int(e.code or 0)
        assert rc == 2, args
        err = capsys.readouterr().err
        assert msg in err and err.count("\n") == 1, err
    assert main(["waves", str(FST), "--transactions", "--start", str(end_ns + 1)]) == 2
    assert "past the end" in capsys.readouterr().err
    # a window that only ends past the file is cut at its end
    assert main(["waves", str(FST), "-o", str(png), "--start", str(end_ns - 300),
                 "--end", str(end_ns + 5000)]) == 0
