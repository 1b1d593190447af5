"""`nicsim replay --zcrx-queues` (io_uring zero-copy receive instead of a dma-buf) on the
model: a capture of several TCP flows to one port spread by RSS over four zcrx queues, every
stream dumped byte-exact; the same capture with `--devmem-queues` dumps the same bytes
(`--dump-streams` for both providers); the bad command lines (exit 2, one line)."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from nicsim.cli import main
from nicsim.pcap import write_pcap
from tb.frames import Flow
from tb.scenario import TcpPeer

DATA = Path(__file__).resolve().parents[1] / "data"
PCAP = str(DATA / "tcp_veth.pcap")
FLOWS = 8
PORT = 5201


def flows_capture(path: Path, nbytes: int = 6000, seed: int = 5) -> dict[str, bytes]:
    """FLOWS TCP conversations to PORT as the server's NIC receives them (SYN, handshake
    ACK, data, FIN), interleaved frame by frame; returns stream name -> bytes sent."""
    rng = random.Random(seed)
    convs, want = [], {}
    for i in range(FLOWS):
        flow = Flow(sport=41000 + 7 * i, dport=PORT)
        peer = TcpPeer(flow, isn=rng.getrandbits(32))
        data = rng.randbytes(nbytes + 97 * i)
        peer.write(data)
        peer.shutdown()
        convs.append([peer.syn(), peer.handshake_ack(rng.getrandbits(32))] + peer.all_frames())
        want[f"{peer.src}_{flow.sport}-{peer.dst}_{PORT}"] = data
    frames = [f for k in range(max(map(len, convs))) for c in convs if k < len(c) for f in [c[k]]]
    write_pcap(path, frames)
    return want


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, bytes]]:
    p = tmp_path_factory.mktemp("zc") / "flows.pcap"
    return p, flows_capture(p)


def _run(capture: tuple[Path, dict[str, bytes]], tmp_path: Path, provider: list[str]) -> list[dict]:
    pcap, want = capture
    rep, streams = tmp_path / "r.jsonl", tmp_path / "s"
    backend = provider[provider.index("--backend") + 1] if "--backend" in provider else "model"
    provider = [a for a in provider if a not in ("--backend", backend)]
    assert main(["replay", str(pcap), "--backend", backend, "--rss-equal", "4", *provider,
                 "--report", str(rep), "--dump-streams", str(streams)]) == 0
    got = {p.stem: p.read_bytes() for p in streams.glob("*.bin")}
    assert set(got) == set(want), sorted(got)
    for name, data in want.items():
        assert got[name] == data, f"{name}: {len(got[name])} bytes, not the {len(data)} sent"
    return [json.loads(line) for line in rep.read_text().splitlines()]


def test_zcrx_queues_spread_and_dump(capture: tuple[Path, dict[str, bytes]], tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    recs = _run(capture, tmp_path, ["--zcrx-queues", "0-3"])
    data = [r for r in recs if r["payload_len"]]
    assert data and all(r["payload_in"] == "zcrx" and r["split"] for r in data)
    per_q = {q: sum(1 for r in data if r["queue"] == q) for q in range(4)}
    assert sum(1 for n in per_q.values() if n) >= 2, f"RSS spread the flows: {per_q}"
    out = capsys.readouterr().out
    assert "via io_uring zcrx" in out and "io_uring zcrx queues [0, 1, 2, 3]" in out
    assert "zcrx kernel copies (bytes)" in out
    row = [line for line in out.splitlines() if "zcrx kernel copies" in line][0]
    assert row.split()[-1] == "0", row


@pytest.mark.rtl
def test_zcrx_queues_rtl_matches_model(capture: tuple[Path, dict[str, bytes]], tmp_path: Path) -> None:
    """The same replay on nic_top (fast harness, 64 bits): the report is identical to the
    model's, frame by frame, and the streams are byte-exact."""
    (tmp_path / "m").mkdir()
    (tmp_path / "r").mkdir()
    model = _run(capture, tmp_path / "m", ["--zcrx-queues", "0-3"])
    rtl = _run(capture, tmp_path / "r", ["--zcrx-queues", "0-3", "--backend", "rtl"])
    assert rtl == model


def test_devmem_queues_same_capture(capture: tuple[Path, dict[str, bytes]], tmp_path: Path) -> None:
    recs = _run(capture, tmp_path, ["--devmem-queues", "0-3"])
    assert all(r["payload_in"] == "device" for r in recs if r["payload_len"])


@pytest.mark.parametrize("argv, msg", [
    (["--zcrx-queues", "8"], "--zcrx-queues [8]: the NIC has queues 0..7"),
    (["--zcrx-queues", "7-4"], "'7-4' is an empty range"),
    (["--zcrx-queues", "abc"], "--zcrx-queues: 'abc' is not a queue number or a range like 4-7"),
    (["--zcrx-queues", ","], "names no queue"),
    (["--zcrx-queues", "4-7", "--devmem-queues", "7"],
     "--zcrx-queues and --devmem-queues both name queue(s) [7]"),
])
def test_zcrx_queues_bad_input(argv: list[str], msg: str, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        rc = main(["replay", PCAP, "--backend", "model", *argv])
    except SystemExit as e:
        rc = int(e.code or 0)
    out = capsys.readouterr()
    assert rc == 2 and msg in out.err and out.err.count("\n") == 1, out.err
    assert "Traceback" not in out.err + out.out


@pytest.mark.parametrize("provider", ["--zcrx-queues", "--devmem-queues"])
def test_rss_context_over_provider_queues(capture: tuple[Path, dict[str, bytes]], tmp_path: Path,
                                          provider: str) -> None:
    """Issue 22's acceptance: the flows to one port steered into a context over four
    provider queues (`--rss-context start=4,equal=4 --steer flow-type=tcp4,dst-port=P,
    context=1`) spread over queues 4..7 and every stream is dumped byte-exact, with io_uring
    zcrx as with devmem."""
    pcap, want = capture
    rep, streams = tmp_path / "r.jsonl", tmp_path / "s"
    assert main(["replay", str(pcap), "--backend", "model", "--rss-context", "start=4,equal=4",
                 "--steer", f"flow-type=tcp4,dst-port={PORT},context=1", provider, "4-7",
                 "--report", str(rep), "--dump-streams", str(streams)]) == 0
    got = {p.stem: p.read_bytes() for p in streams.glob("*.bin")}
    assert got == want
    recs = [json.loads(line) for line in rep.read_text().splitlines()]
    data = [r for r in recs if r["payload_len"]]
    per_q = {q: sum(1 for r in data if r["queue"] == q) for q in range(8)}
    assert all(r["queue"] in (4, 5, 6, 7) for r in data), per_q
    assert all(per_q[q] for q in (4, 5, 6, 7)), f"the context spread the flows over all four: {per_q}"
    kind = "zcrx" if provider == "--zcrx-queues" else "device"
    assert all(r["payload_in"] == kind for r in data)
