"""`nicsim replay --rss-context ... --steer ...,context=K --devmem-queues 4-7` (issue 22's
acceptance): several TCP flows to one port, steered into an RSS context over four devmem
queues, spread over the four, every stream dumped byte-exact; and the command-line errors."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from scapy.all import IP, TCP, Ether, Raw

from models.rss import RssType, hash_type, rss_hash, tuple_from_frame
from models.toeplitz import MS_VERIFICATION_KEY
from nicsim.cli import main
from nicsim.pcap import write_pcap

CLIENT, SERVER, PORT = "10.77.0.1", "10.77.0.2", 5201
MAC = dict(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
ARGS = ["--rss-context", "start=4,equal=4",
        "--steer", f"flow-type=tcp4,dst-port={PORT},context=1", "--devmem-queues", "4-7"]


def _frame(sport: int, seq: int, ack: int, flags: str, data: bytes = b"") -> bytes:
    return bytes(Ether(**MAC) / IP(src=CLIENT, dst=SERVER)
                 / TCP(sport=sport, dport=PORT, seq=seq, ack=ack, flags=flags, window=65535)
                 / Raw(data))


def _queue_of(sport: int) -> int:
    """Where docs/rss.md 3a sends the flow: 4 + entry (hash mod 128) of `start 4 equal 4`
    (the replay's key is Microsoft's, its hash types all enabled)."""
    t = tuple_from_frame(_frame(sport, 1, 1, "A").ljust(60, b"\0"))
    h = rss_hash(t, MS_VERIFICATION_KEY, hash_type(t, set(RssType) - {RssType.NONE}))
    return 4 + (h % 128) % 4


def _capture(path: Path, per_queue: int = 2, nbytes: int = 6000) -> dict[int, bytes]:
    """The client side of one TCP connection per chosen source port (SYN, the handshake's
    ACK, data in 1448-byte segments, FIN), interleaved; source ports picked so that every
    one of the four queues gets `per_queue` flows. Returns the data of each source port."""
    ports: dict[int, list[int]] = {q: [] for q in range(4, 8)}
    sport = 40000
    while any(len(v) < per_queue for v in ports.values()):
        q = _queue_of(sport)
        if len(ports[q]) < per_queue:
            ports[q].append(sport)
        sport += 1
    rng = random.Random(22)
    data = {p: rng.randbytes(nbytes) for v in ports.values() for p in v}
    flows = []
    for p, d in data.items():
        isn, iss = rng.getrandbits(32), rng.getrandbits(32)
        segs = [_frame(p, isn, 0, "S"), _frame(p, isn + 1, iss + 1, "A")]
        for off in range(0, len(d), 1448):
            segs.append(_frame(p, isn + 1 + off, iss + 1, "PA", d[off:off + 1448]))
        segs.append(_frame(p, isn + 1 + len(d), iss + 1, "FA"))
        flows.append(segs)
    frames = []
    while any(flows):                     # round robin: the flows run at once
        for segs in flows:
            if segs:
                frames.append(segs.pop(0))
    write_pcap(path, frames)
    return data


def test_flows_spread_over_a_contexts_devmem_queues(tmp_path: Path) -> None:
    cap = tmp_path / "flows.pcap"
    data = _capture(cap)
    rep, streams = tmp_path / "r.jsonl", tmp_path / "streams"
    assert main(["replay", str(cap), "--backend", "model", *ARGS, "--report", str(rep),
                 "--dump-streams", str(streams)]) == 0
    recs = [json.loads(line) for line in rep.read_text().splitlines()]
    assert all(r["status"] == "delivered" and r["steered"] for r in recs)
    per_queue = {q: sum(r["queue"] == q for r in recs) for q in range(8)}
    assert all(per_queue[q] == 0 for q in range(4)), per_queue
    assert all(per_queue[q] > 0 for q in range(4, 8)), per_queue
    assert all(r["payload_in"] == "device" for r in recs if r["payload_len"])
    for sport, d in data.items():
        f = streams / f"{CLIENT}_{sport}-{SERVER}_{PORT}.bin"
        assert f.read_bytes() == d, f"stream of port {sport} not byte-exact"
    assert len(list(streams.iterdir())) == len(data)


@pytest.mark.parametrize("argv,msg", [
    (["--rss-context", "start=4"], "says no equal=N"),
    (["--rss-context", "start=4,equal=0"], "needs start >= 0 and equal >= 1"),
    (["--rss-context", "equal=x"], "equal='x' is not a number"),
    (["--rss-context", "begin=1,equal=2"], "unknown key 'begin'"),
    (["--rss-context", "start=6,equal=4"], "queues 6..9, the NIC has queues 0..7"),
    (["--rss-context", "equal=1"] * 9, "given 9 times: the NIC has 8 RSS contexts"),
    (["--steer", "flow-type=tcp4,dst-port=1,context=1"], "context=1: no such RSS context"),
    (["--rss-context", "start=4,equal=4", "--steer", "flow-type=tcp4,dst-port=1,context=2"],
     "context=2: no such RSS context (--rss-context makes them: 1..1)"),
    (["--rss-context", "start=4,equal=4", "--steer", "flow-type=tcp4,context=1,queue=1"],
     "the offset takes the context to queue 8"),
    (["--steer", "flow-type=tcp4,context=x"], "context='x' is not a number"),
    (["--steer", "flow-type=tcp4,context=16"], "context 16: no such RSS context"),
])
def test_rss_context_cli_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                argv: list[str], msg: str) -> None:
    cap = tmp_path / "one.pcap"
    write_pcap(cap, [_frame(40000, 1, 0, "S")])
    try:
        rc = main(["replay", str(cap), "--backend", "model", *argv])
    except SystemExit as e:
        rc = int(e.code or 0)
    err = capsys.readouterr().err
    assert rc == 2 and msg in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
