"""`nicsim live`: the reference driver's TCP on the golden model against the real Linux TCP
stack in a private namespace. Linux is the judge: it checks every checksum the NIC computed,
and its TCP must agree with ours on every handshake, window, retransmission and FIN.

Skipped, with `nicsim.live_net.probe()`'s reason, where a namespace or TAP device cannot be
created (never a silent pass). The RTL backend is not tested here: the RTL TX path and the
testbench's TX sink had not landed (`nicsim live --backend rtl` says so).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nicsim.live import LiveConfig, run_model
from nicsim.live_net import probe

REASON = probe()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"live networking unavailable: {REASON}")
ROOT = Path(__file__).resolve().parents[2]


def _links() -> set[str]:
    out = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True).stdout
    return {line.split(":")[1].strip().split("@")[0] for line in out.splitlines()}


def _netns() -> str:
    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout


def _net_ns_of(pid: int | str) -> set[str]:
    """The network namespaces any thread of `pid` is in (`net:[inode]`)."""
    out = set()
    for t in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out.add(os.readlink(t / "ns" / "net"))
        except OSError:
            pass
    return out


def _all_net_ns() -> set[str]:
    return {ns for p in Path("/proc").iterdir() if p.name.isdigit() for ns in _net_ns_of(p.name)}


@pytest.mark.timeout(300)
def test_one_megabyte_each_way_with_loss() -> None:
    """1 MiB each way (devmem RX: Linux -> driver; devmem TX: driver -> Linux) with 2 % of
    the frames dropped in both directions: byte-exact, every zero-copy notification, no CPU
    read of device memory, both stacks retransmitted; throughput reported."""
    lines: list[str] = []
    cfg = LiveConfig(nbytes=1 << 20, drop_rate=0.02, seed=5, tap_name="nsltest0", timeout_s=240)
    t0 = time.monotonic()
    res = run_model(cfg, lines.append)
    wall = time.monotonic() - t0
    assert res.ok, res.errors
    assert res.rx_ok and res.rx_bytes == cfg.nbytes and res.rx_devmem_bytes == cfg.nbytes
    assert res.tx_ok and res.tx_bytes == cfg.nbytes and res.tx_notified
    assert res.cpu_reads == 0
    assert res.dropped_to_nic > 0 and res.dropped_to_linux > 0, 'loss was injected both ways'
    assert res.tcp['RetransSegs'] > 0, 'the driver retransmitted what the bridge dropped'
    assert res.neigh['arp_requests_answered'] >= 1, "Linux resolved us through the driver's ARP"
    assert res.tcp['OutRsts'] == 0
    print(f"\nlive (model): {cfg.nbytes} B each way, drop rate {cfg.drop_rate}: "
          f"RX {res.rx_bytes * 8 / res.rx_wall_s / 1e6:.1f} Mbit/s wall in {res.rx_wall_s:.2f} s, "
          f"TX {res.tx_bytes * 8 / res.tx_wall_s / 1e6:.1f} Mbit/s wall in {res.tx_wall_s:.2f} s "
          f"(no simulated time on the model); dropped {res.dropped_to_nic}+{res.dropped_to_linux} "
          f"frames, driver retransmissions {res.tcp['RetransSegs']}; total {wall:.1f} s")
    assert any(line.startswith("live rx:") for line in lines), "progress output"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_interrupted_run_leaves_nothing_behind(sig: signal.Signals) -> None:
    """`nicsim live` killed in the middle of a run (Ctrl-C, or SIGKILL): its private
    namespace (and with it the TAP device) is gone, no named namespace was made, no process
    of the run remains. (Other tests may create namespaces named nicsim-* meanwhile.)"""
    tap = f"nslkill{int(sig)}"
    netns = _netns()
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")
    p = subprocess.Popen([sys.executable, "-m", "nicsim", "live", "--bytes", str(64 << 20),
                          "--tap", tap, "--drop-rate", "0.01"], cwd=ROOT, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert p.stdout is not None
        seen = []
        for line in p.stdout:                      # wait until data is flowing
            seen.append(line)
            if line.startswith("live rx:"):
                break
        else:
            pytest.fail(f"the run ended before data flowed: {seen}")
        private = _net_ns_of(p.pid) - _net_ns_of(os.getpid())
        assert len(private) == 1, f"the run's private namespace: {private}"
        p.send_signal(sig)
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode != 0
    time.sleep(0.2)
    assert not (private & _all_net_ns()), "the run's namespace outlived it"
    assert tap not in _links(), "the TAP device leaked into the host namespace"
    assert not set(_netns().split()) - set(netns.split()) - {n for n in _netns().split()
                                                             if n.startswith("nicsim-")}, \
        "the run left a named namespace"
    ps = subprocess.run(["ps", "-eo", "pid,ppid,args"], capture_output=True, text=True).stdout
    left = [ln for ln in ps.splitlines()[1:]
            if ln.split()[1] == str(p.pid) or (f"--tap {tap}" in ln and "ps -eo" not in ln)]
    assert not left, f"processes of the run remain: {left}"
