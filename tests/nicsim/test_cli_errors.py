"""Every bad command line and unwritable path `nicsim` refuses: exit status 2, one line on
stderr naming the option and the value, no traceback, nothing run (docs/nicsim.md). The
same table, with what each prints, is in docs/nicsim.md ("Bad input")."""
from __future__ import annotations

import struct
from pathlib import Path

import pytest

from nicsim.cli import main
from nicsim.pcap import read_pcap, write_pcap

DATA = Path(__file__).resolve().parents[1] / "data"
PCAP = str(DATA / "tcp_veth.pcap")
FST = str(DATA / "nic_top_replay.fst")
EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "two_devmem_flows.py")

CASES = [
    # replay: values
    (["replay", PCAP, "--devmem-queues", "7-4"], "'7-4' is an empty range"),
    (["replay", PCAP, "--devmem-queues", "abc"], "--devmem-queues: 'abc' is not a queue number or a range like 4-7"),
    (["replay", PCAP, "--devmem-queues", ","], "names no queue"),
    (["replay", PCAP, "--devmem-queues", "8"], "--devmem-queues [8]: the NIC has queues 0..7"),
    (["replay", PCAP, "--steer", "proto=tcp,dst-port=99999,queue=7"], "dst-port 99999: 0..65535"),
    (["replay", PCAP, "--steer", "proto=tcp,src-ip=1.2.3.4.5,queue=7"], "src-ip '1.2.3.4.5'"),
    (["replay", PCAP, "--steer", "src-ip=10.0.0.1,dst-ip=fd00::1,queue=7"], "is not an IPv6 address"),
    (["replay", PCAP, "--steer", "proto=tcp,src-port=-1,queue=1"], "src-port -1: 0..65535"),
    (["replay", PCAP, "--steer", "proto=ip,dst-port=80,queue=1"], "dst-port needs flow-type"),
    (["replay", PCAP, "--steer", "proto=tcp,loc=99999,queue=1"], "loc=99999: the NIC has rule locations 0..31"),
    (["replay", PCAP, "--steer", "proto=tcp,queue=9"], "steer rule to queue 9: the NIC has queues 0..7"),
    (["replay", PCAP, "--steer", "proto=tcp,bogus=1,queue=1"], "unknown key 'bogus'"),
    (["replay", PCAP, "--steer", "proto=tcp"], "says no queue=N"),
    (["replay", PCAP, "--rss-key", "zz"], "--rss-key: 'zz' is not hex"),
    (["replay", PCAP, "--rss-key", "00" * 39], "the RSS key is 40 bytes, got 39"),
    (["replay", PCAP, "--rss-equal", "0"], "--rss-equal: 0: must be at least 1"),
    (["replay", PCAP, "--rss-equal", "9"], "--rss-equal 9: between 1 and 8"),
    (["replay", PCAP, "--mtu", "10"], "--mtu: 10: must be at least 68"),
    (["replay", PCAP, "--mtu", "10000"], "--mtu 10000: between 68 and 9216"),
    (["replay", PCAP, "--data-width", "100"], "--data-width: invalid choice: 100"),
    (["replay", PCAP, "--waves", "/tmp/x.fst", "--backend", "model"], "--waves needs --backend rtl"),
    # replay: paths
    (["replay", PCAP, "--backend", "model", "--report", "/proc/nicsim-x/r.jsonl"], "--report /proc/nicsim-x/r.jsonl: cannot write it"),
    (["replay", PCAP, "--backend", "model", "--report", "/tmp"], "--report /tmp: is a directory"),
    (["replay", PCAP, "--backend", "model", "--dump-streams", "/proc/nicsim-x"], "--dump-streams /proc/nicsim-x: cannot create it"),
    (["replay", PCAP, "--dump-streams", "/etc/passwd"], "--dump-streams /etc/passwd: exists and is not a directory"),
    (["replay", "/nonexistent.pcap"], "/nonexistent.pcap: No such file or directory"),
    (["replay", "/tmp"], "/tmp: Is a directory"),
    # demo
    (["demo", "--devmem-bytes", "-1"], "--devmem-bytes: -1: must be at least 0"),
    (["demo", "--frames-per-flow", "-2"], "--frames-per-flow: -2: must be at least 0"),
    (["demo", "--out", "/proc/nicsim-demo"], "--out /proc/nicsim-demo: cannot create it"),
    (["demo", "--out", "/etc/passwd"], "--out /etc/passwd: exists and is not a directory"),
    # live (refused before the namespace is made)
    (["live", "--bytes", "0"], "--bytes: 0: send at least 1"),
    (["live", "--bytes", "abc"], "--bytes: 'abc' is not a number"),
    (["live", "--timeout", "0"], "--timeout: 0: must be above 0"),
    (["live", "--rto-min-us", "-1"], "--rto-min-us: -1: must be above 0"),
    (["live", "--tap", "averyveryverylongname"], "an interface name is 1..15"),
    (["live", "--mtu", "50000"], "--mtu 50000: between 68 and 9000"),
    (["live", "--drop-rate", "1.5"], "--drop-rate is a probability in [0, 1)"),
    (["live", "--data-width", "128", "--backend", "rtl"], "--data-width: invalid choice: 128"),
    (["live", "--data-width", "64"], "--data-width needs --backend rtl"),
    # waves
    (["waves", FST, "-o", "/tmp/x.jpg"], "-o /tmp/x.jpg: write .png or .svg"),
    (["waves", FST, "--transactions", "-o", "/tmp/x.png"], "write .csv or .txt with --transactions"),
    (["waves", FST, "-o", "/proc/nicsim-x/y.png"], "-o /proc/nicsim-x/y.png: cannot write it"),
    (["waves", FST, "--gtkw", "/proc/nicsim-x.gtkw"], "--gtkw /proc/nicsim-x.gtkw: cannot write it"),
    (["waves", FST, "--start", "-5"], "--start: -5: a time in ns, from 0"),
    (["waves", FST, "--frame", "-1"], "--frame: -1: frames count from 0"),
    (["waves", FST, "--frame", "1", "--window", "0"], "--window: 0: must be above 0"),
    (["waves", FST, "--group", "nope"], "unknown group(s) ['nope']"),
    (["waves", FST, "--signal", "nosuchsignal"], "no signal named like 'nosuchsignal'"),
    (["waves", "/etc/passwd"], "cannot read it as FST/VCD"),
    (["waves", "/nonexistent.fst"], "/nonexistent.fst: no such file"),
    # scenario
    (["scenario", "/nonexistent.py"], "/nonexistent.py: no such file"),
    (["scenario", EXAMPLE, "--waves"], "--waves and --testbench need --backend rtl"),
    (["scenario", EXAMPLE, "--only", "nope"], "has no scenario nope"),
    (["scenario", EXAMPLE, "--backend", "rtl", "--only", "scenario_two_flows_late_tokens"], "--only needs --backend model"),
    # the command itself
    (["nosuch"], "invalid choice: 'nosuch'"),
]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        rc = main(argv)
    except SystemExit as e:
        rc = int(e.code or 0)
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize("argv, msg", CASES, ids=[" ".join(a[:1] + [x for x in a[1:] if not x.startswith("/work")])
                                                   for a, _ in CASES])
def test_refused_with_one_line(argv: list[str], msg: str, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _run(argv, capsys)
    assert rc == 2, (rc, out, err)
    assert msg in err, err
    assert err.count("\n") == 1 and "Traceback" not in err + out, err
    assert "_queues" not in err and "_int_at_least" not in err, "an internal name in the message"


def test_scenario_file_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, text, msg in (("syn.py", "x = (\n", "syn.py:1:"), ("imp.py", "import nosuchmodule_x\n", "ModuleNotFoundError"),
                            ("none.py", "def f():\n    pass\n", "no `async def scenario...(env)`"),
                            ("notpy.txt", "", "a scenario file is a Python file")):
        p = tmp_path / name
        p.write_text(text)
        rc, out, err = _run(["scenario", str(p)], capsys)
        assert rc == 2 and msg in err and err.count("\n") == 1, err


def _corrupt(tmp_path: Path) -> Path:
    frames = [r.data for r in read_pcap(PCAP).records][:5]
    p = tmp_path / "c.pcap"
    write_pcap(p, frames)
    b = bytearray(p.read_bytes())
    pos = 24
    for _ in range(3):
        pos += 16 + struct.unpack_from("<I", b, pos + 8)[0]
    struct.pack_into("<I", b, pos + 8, 0xFFFFFFF0)          # record 3 claims 4 GiB
    p.write_bytes(bytes(b))
    return p


def test_corrupt_capture_strict_and_not(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cap = _corrupt(tmp_path)
    rep = tmp_path / "r.jsonl"
    rc, out, err = _run(["replay", str(cap), "--backend", "model", "--strict", "--report", str(rep)], capsys)
    assert rc == 2 and "record 3 claims 4294967280 bytes" in err and "(--strict)" in err and err.count("\n") == 1
    assert not rep.exists(), "nothing ran"
    rc, out, err = _run(["replay", str(cap), "--backend", "model", "--report", str(rep)], capsys)
    assert rc == 0 and "corrupt file" in err
    import json
    recs = [json.loads(line) for line in rep.read_text().splitlines()]
    assert [r["status"] for r in recs] == ["delivered"] * 3 + ["dropped"]
    assert recs[3]["drop_reason"] == "capture_corrupt"
    # a file cut in a record: the same with capture_cut
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(Path(PCAP).read_bytes()[:-30])
    rc, out, err = _run(["replay", str(cut), "--backend", "model", "--strict"], capsys)
    assert rc == 2 and "file truncated in record" in err


def test_checks_leave_nothing_behind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A refused run writes no file: the writability check of --report removes its probe."""
    rep = tmp_path / "sub" / "r.jsonl"
    rc, _, _ = _run(["replay", PCAP, "--backend", "model", "--report", str(rep), "--mtu", "10000"], capsys)
    assert rc == 2 and not rep.exists()
