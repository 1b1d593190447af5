"""`nicsim`: pcap replay (real TCP capture, model vs RTL identity, bad captures) and waveform
pictures. The RTL test builds nic_top (DATA_W=64, shared with the other nic_top tests)."""
from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from nicsim.cli import main
from nicsim.pcap import read_pcap, write_pcap
from tb.frames import Flow, build
from tests.nicsim.capture import can_capture, make_capture, sent_data

DATA = Path(__file__).resolve().parents[1] / "data"
COMMITTED = DATA / "tcp_veth.pcap"          # made by tests/nicsim/capture.py on a veth pair
FST = DATA / "nic_top_replay.fst"           # `nicsim replay --waves` of tcp_veth.pcap (--testbench per-beat, STEER)
NBYTES = 24_000
STEER = ["--steer", "proto=tcp,dst-port=5201,queue=7", "--devmem-queues", "7"]


@pytest.fixture(scope="module")
def tcp_capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh capture of Linux TCP over a veth pair when this machine can make one (root,
    iproute2, tcpdump, ethtool), else the committed one made the same way."""
    if can_capture():
        out = tmp_path_factory.mktemp("cap") / "tcp.pcap"
        try:
            make_capture(out, NBYTES)
            return out
        except Exception as e:   # namespaces not allowed here (containers): use the committed one
            print(f"live capture failed ({e}); using {COMMITTED}")
    return COMMITTED


def _report(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _check_streams(d: Path) -> None:
    files = list(d.glob("10.77.0.1_*-10.77.0.2_5201.bin"))
    assert len(files) == 1, list(d.iterdir())
    assert files[0].read_bytes() == sent_data(NBYTES)
    assert len(list(d.iterdir())) == 1, "only the flow on the devmem queue is dumped"


@pytest.mark.parametrize("mpb", [False, True], ids=["", "rx-mpb"])
def test_replay_tcp_capture_model(tcp_capture: Path, tmp_path: Path, mpb: bool) -> None:
    rep, streams = tmp_path / "r.jsonl", tmp_path / "s"
    assert main(["replay", str(tcp_capture), "--backend", "model", *STEER, "--report", str(rep),
                 "--dump-streams", str(streams), *(["--rx-mpb"] if mpb else [])]) == 0
    recs = _report(rep)
    assert len(recs) == len(read_pcap(tcp_capture).records)
    assert [r["frame"] for r in recs] == list(range(len(recs)))
    _check_streams(streams)
    to_server = [r for r in recs if r["steered"]]
    assert to_server and all(r["queue"] == 7 and r["split"] for r in to_server)
    assert all(r["payload_in"] == "device" for r in to_server if r["payload_len"])
    keys = {"frame", "status", "drop_reason", "queue", "rss_hash", "rss_type", "steered",
            "hdr_len", "payload_len", "split", "payload_in"}
    assert all(keys <= set(r) and isinstance(r["rss_hash"], int) for r in recs)


def _odd_capture(tcp_capture: Path, out: Path) -> int:
    """The TCP capture with odd frames in between: oversize, a broken IPv4 header, a UDP frame
    and an IPv6 one; returns the frame count."""
    frames = [r.data for r in read_pcap(tcp_capture).records]
    bad_ip = bytearray(build(Flow(), b"y" * 64))
    bad_ip[14] = 0x35
    odd = [build(Flow(), b"z" * 1460)[:14] + bytes(2000), bytes(bad_ip),
           build(Flow(proto="udp", dport=4791), b"u" * 300), build(Flow(ipv6=True, dport=80), b"v" * 50)]
    mixed = frames[:5] + odd[:2] + frames[5:12] + odd[2:] + frames[12:]
    write_pcap(out, mixed)
    return len(mixed)


@pytest.mark.rtl
@pytest.mark.timeout(900)
@pytest.mark.parametrize("mpb", [False, True], ids=["", "rx-mpb"])
def test_replay_rtl_matches_model(tcp_capture: Path, tmp_path: Path, mpb: bool,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The capture (with odd frames) on the model and on the RTL: the same report, frame for
    frame, and the devmem stream byte-exact; again with multi-packet payload buffers and
    completion batches on."""
    cap = tmp_path / "mixed.pcap"
    n = _odd_capture(tcp_capture, cap)
    reports = {}
    for backend in ("model", "rtl"):
        rep, streams = tmp_path / f"{backend}.jsonl", tmp_path / f"s-{backend}"
        assert main(["replay", str(cap), "--backend", backend, *STEER, "--report", str(rep),
                     "--dump-streams", str(streams), *(["--rx-mpb"] if mpb else [])]) == 0
        reports[backend] = _report(rep)
        assert len(reports[backend]) == n
        _check_streams(streams)
        out = capsys.readouterr().out
        # RTL only: the protocol checker bound into nic_top saw every frame, nothing wrong
        assert (f"s_axis_rx {n} frames" in out and ": 0 violations" in out) == (backend == "rtl"), out
    for m, r in zip(reports["model"], reports["rtl"]):
        assert m == r, f"frame {m['frame']}: model {m} rtl {r}"
    reasons = {r["drop_reason"] for r in reports["rtl"] if r["status"] == "dropped"}
    assert reasons == {"oversize", "hdr_err"}


def test_bad_captures(tcp_capture: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = tcp_capture.read_bytes()
    n = len(read_pcap(tcp_capture).records)
    # a file cut in the middle of the last record: the records before it are replayed, and
    # the report has a line for the cut one (not replayed, capture_cut)
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(raw[:-30])
    rep = tmp_path / "cut.jsonl"
    assert main(["replay", str(cut), "--backend", "model", *STEER, "--report", str(rep)]) == 0
    assert "file truncated in record" in capsys.readouterr().err
    recs = _report(rep)
    assert len(recs) == n and recs[-1]["status"] == "dropped" and recs[-1]["drop_reason"] == "capture_cut"
    assert all(r["status"] == "delivered" for r in recs[:-1])
    # a record cut short by the snaplen, and an oversize frame, between good ones
    frames = [r.data for r in read_pcap(tcp_capture).records][:6]
    mixed = tmp_path / "mixed.pcap"
    write_pcap(mixed, frames[:3] + [frames[3]] + [bytes(14) + bytes(3000)] + frames[4:])
    b = bytearray(mixed.read_bytes())
    # record 3 (0-based): claim a longer wire length than captured
    pos = 24
    for _ in range(3):
        pos += 16 + struct.unpack_from("<I", b, pos + 8)[0]
    struct.pack_into("<I", b, pos + 12, struct.unpack_from("<I", b, pos + 8)[0] + 100)
    mixed.write_bytes(bytes(b))
    rep = tmp_path / "mixed.jsonl"
    assert main(["replay", str(mixed), "--backend", "model", *STEER, "--report", str(rep)]) == 0
    out = capsys.readouterr()
    assert "frame 3: only" in out.err and "over the NIC's maximum frame" in out.out
    recs = _report(rep)
    assert len(recs) == 7
    assert [r["status"] for r in recs] == ["delivered"] * 3 + ["dropped", "dropped"] + ["delivered"] * 2
    assert recs[3]["drop_reason"] == "capture_truncated" and recs[4]["drop_reason"] == "oversize"
    # not Ethernet, not pcap, pcapng, too short: a clear message and exit status 2
    for name, body, msg in [
        ("sll.pcap", raw[:20] + struct.pack("<I", 113) + raw[24:], "link type 113 (Linux cooked (SLL))"),
        ("junk.pcap", b"hello world, not a capture at all", "not a pcap file"),
        ("ng.pcapng", b"\x0a\x0d\x0d\x0a" + bytes(40), "pcapng is not supported"),
        ("short.pcap", raw[:10], "too short for a pcap file header"),
    ]:
        p = tmp_path / name
        p.write_bytes(body)
        assert main(["replay", str(p), "--backend", "model"]) == 2
        assert msg in capsys.readouterr().err
    # settings the NIC cannot take are refused before anything runs
    for bad, msg in ((["--rss-equal", "9"], "--rss-equal 9"), (["--devmem-queues", "8"], "queues 0..7"),
                     (["--steer", "proto=tcp,queue=9"], "steer rule to queue 9")):
        assert main(["replay", str(tcp_capture), *bad]) == 2
        assert msg in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["replay", str(tcp_capture), "--steer", "proto=tcp,bogus=1,queue=1"])
    with pytest.raises(SystemExit):
        main(["replay", str(tcp_capture), "--rss-key", "00" * 39])


def test_waves_png_and_svg(tmp_path: Path) -> None:
    from PIL import Image
    png = tmp_path / "w.png"
    assert main(["waves", str(FST), "-o", str(png), "--frame", "2"]) == 0
    with Image.open(png) as im:
        assert im.width >= 1200 and im.height >= 600
        # not blank: a readable picture has plenty of distinct colours
        assert len(im.convert("RGB").getcolors(1 << 20) or []) > 50
    svg = tmp_path / "q.svg"
    assert main(["waves", str(FST), "-o", str(svg), "--group", "queues,csr", "--start", "4000",
                 "--end", "9000"]) == 0
    text = svg.read_text()
    assert "s_axil_araddr" in text and "time (ns)" in text
    # the queues that moved: queue 7 (the steered flow) and a TX queue (the RSTs and ACKs)
    assert "cq_hw_idx.[7]" in text and "cq_sw_idx.[7]" in text and "tx_cq_hw_idx." in text
    assert "txq_cq_sw_idx." in text
    tx = tmp_path / "tx.svg"
    assert main(["waves", str(FST), "-o", str(tx), "--group", "tx", "--frame", "5"]) == 0
    assert "m_axis_tx_tvalid" in tx.read_text()
    assert main(["waves", str(FST), "--group", "nope"]) == 2
    assert main(["waves", str(tmp_path / "missing.fst")]) == 2


def test_waves_gtkw_layout(tmp_path: Path) -> None:
    """The GTKWave layout names signals as GTKWave does. The expected names are from GTKWave
    3.3.118's own facility list of this file (`gtkwave -S` with a Tcl script printing
    `gtkwave::getFacName`, 2026-11-30), not from nicsim."""
    from nicsim.waves import gtkw_name
    out = tmp_path / "layout.gtkw"
    assert main(["waves", str(FST), "--gtkw", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert f'[dumpfile] "{FST.resolve()}"' in lines
    signals = [ln for ln in lines if ln and ln[0] not in "[@-"]
    for name in ("$rootio.s_axis_rx_tvalid", "$rootio.s_axis_rx_tdata[63:0]",
                 "$rootio.m_axi_awaddr[63:0]", "$rootio.s_axil_araddr[15:0]",
                 "$rootio.m_axis_tx_tvalid", "nic_top.cq_hw_idx.cq_hw_idx[7][15:0]",
                 "nic_top.cq_sw_idx.cq_sw_idx[7][15:0]",
                 "nic_top.u_csr.field_storage.RX_FRAMES.count.value[31:0]"):
        assert name in signals, name
    assert [ln[1:] for ln in lines if ln.startswith("-")] == ["rx", "dma", "csr", "tx", "queues"]
    # queue indices that never moved are left out (queue 0 carries nothing in this capture)
    assert "nic_top.cq_hw_idx.cq_hw_idx[0][15:0]" not in signals
    # one group only; the fast harness's names (GTKWave's list of a nic_fast_top waveform)
    assert main(["waves", str(FST), "--gtkw", str(out), "--group", "csr"]) == 0
    assert [ln[1:] for ln in out.read_text().splitlines() if ln.startswith("-")] == ["csr"]
    assert gtkw_name("nic_fast_top.s_axis_rx_tvalid", 1) == "nic_fast_top.s_axis_rx_tvalid"
    assert gtkw_name("nic_fast_top.u_nic.cq_hw_idx.[0]", 16) == "nic_fast_top.u_nic.cq_hw_idx.cq_hw_idx[0][15:0]"
    assert main(["waves", str(tmp_path / "missing.fst"), "--gtkw", str(out)]) == 2


def test_cluster_cli_bad_input(tmp_path: Path, capsys) -> None:
    """A bad `nicsim cluster` command line: one line on stderr with the errno, exit 2, nothing run."""
    notdir = tmp_path / "file"
    notdir.write_text("x")
    for bad, msg in ((["--nics", "1"], "[EINVAL] --nics 1"), (["--nics", "x"], "argument --nics: invalid int"),
                     (["--bytes-per-pair", "12Q"], "'12Q' is not a byte count"),
                     (["--bytes-per-pair", "0"], "--bytes-per-pair"), (["--drop-rate", "1"], "--drop-rate 1"),
                     (["--switch-buffer", "1"], "holds no 1502-byte frame"), (["--mss", "9000"], "--mss 9000"),
                     (["--threads", "2"], "--threads needs --backend rtl"),
                     (["--bytes-per-pair", "40M"], "of its 64 MiB"), (["--bogus"], "unrecognized arguments"),
                     (["--out", str(notdir)], "[ENOTDIR] --out")):
        try:
            rc = main(["cluster", "--backend", "model", *bad])
        except SystemExit as e:                        # argparse's errors
            rc = e.code
        err = capsys.readouterr().err
        assert rc == 2, bad
        assert err.count("\n") == 1 and err.startswith("nicsim cluster: ") and msg in err, (bad, err)


def test_cluster_cli_model_run(tmp_path: Path, capsys) -> None:
    """Two NICs on the model: progress lines, the one aggregate line, the report with its plots."""
    assert main(["cluster", "--backend", "model", "--nics", "2", "--bytes-per-pair", "8K",
                 "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("cluster: 2 NICs, all-to-all")
    assert "connections established" in out
    agg = [ln for ln in out.splitlines() if ln.startswith("aggregate goodput ")]
    assert len(agg) == 1 and agg[0].endswith("% of line rate")
    assert "byte-exact" in out and "MISMATCH" not in out and "CPU reads of device memory 0" in out
    for f in ("report.md", "result.json", "goodput.png", "queue_depth.png"):
        assert (tmp_path / f).stat().st_size > 0


def test_cluster_steady_state() -> None:
    """The steady-state goodput: bytes received by each receiving port between the samples at
    10% and 90% of the transfer, over that time at line rate (8 bytes per 4 ns at 64 bits)."""
    from nicsim.cluster import steady_fractions
    from tb.cluster.workload import ClusterResult, PairResult
    t = [400 * k for k in range(1, 11)]                         # 0.4 .. 4 us
    rx0 = [50 * k for k in range(1, 11)]                        # 50 B per 400 ns: 50 / 800 = 6.25%
    rx1 = [0, 0, 0, 100, 100, 100, 100, 100, 100, 900]          # 100 B between 0.4 and 3.6 us
    pair = PairResult(1, 0, 0, True, None, 0.0, 0, 0, True)
    res = ClusterResult({"data_width": 64}, "model", [pair, PairResult(0, 1, 0, 0, None, 0.0, 0, 0, True)],
                        0, 4000, 0.0, 1.0, [], [], [], 0, {"t_ns": t, "rx_bytes": [rx0, rx1]}, 0, 0, 0.0)
    got = steady_fractions(res)
    assert got == {0: 400 / 6400, 1: 100 / 6400}
    res.pairs = [pair]                                          # only NIC 0 receives
    assert list(steady_fractions(res)) == [0]
    res.samples = {"t_ns": [4000], "rx_bytes": [[1], [1]]}
    assert steady_fractions(res) == {}


def test_cluster_cli_stall(tmp_path: Path, capsys, monkeypatch) -> None:
    """A run that cannot finish (a test hook loses every FIN host 0 sends) ends with one
    line on stderr naming the stuck connection, exit 1, no traceback and no report."""
    from tb.cluster import model_env

    class LosingEnv(model_env.ModelClusterEnv):
        def _tx(self, port):
            send = super()._tx(port)

            def on_tx(frame: bytes) -> None:
                if not (port == 0 and frame[47] & 0x01):     # TCP flags of a 20-byte IP header: FIN
                    send(frame)
            return on_tx
    monkeypatch.setattr(model_env, "ModelClusterEnv", LosingEnv)
    rc = main(["cluster", "--backend", "model", "--nics", "2", "--bytes-per-pair", "8K",
               "--stall-ms", "2", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert rc == 1
    assert err.count("\n") == 1 and err.startswith("nicsim cluster: [ETIMEDOUT] cluster: no progress for 2.0 ms"), err
    assert "0->1 sender FIN_WAIT1" in err and "Traceback" not in err, err
    assert not (tmp_path / "r" / "report.md").exists()
