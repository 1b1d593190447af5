"""Make a capture of real TCP traffic: two network namespaces joined by a veth pair, a sender
in one and a receiver in the other (Linux TCP over loopback-free veth), tcpdump on the
receiver's end. Needs root, iproute2, tcpdump and ethtool; only addresses inside the
namespaces made here are used.

    python -m tests.nicsim.capture OUT.pcap [BYTES]

Segmentation and checksum offloads are turned off on both ends so every frame on the
capture is one wire-size Ethernet frame, as a NIC's MAC would see it.
"""
from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

SENDER_IP = "10.77.0.1"
RECEIVER_IP = "10.77.0.2"
PORT = 5201
SEED = 8


def sent_data(n: int) -> bytes:
    """What the sender sends: `n` bytes from a fixed seed (the test recomputes them)."""
    return random.Random(SEED).randbytes(n)


def can_capture() -> bool:
    return (os.geteuid() == 0 and all(shutil.which(t) for t in ("ip", "tcpdump", "ethtool")))


def _run(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True)


RECEIVER = """
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("{ip}", {port})); s.listen(1); print("ready", flush=True)
c, _ = s.accept(); n = 0
while True:
    b = c.recv(65536)
    if not b: break
    n += len(b)
c.close(); print(n, flush=True)
"""
SENDER = """
import random, socket, sys, time
data = random.Random({seed}).randbytes({n})
c = socket.create_connection(("{ip}", {port}))
for i in range(0, len(data), 4096):
    c.sendall(data[i:i + 4096])
    time.sleep(0.002)
c.shutdown(socket.SHUT_WR); c.recv(1); c.close()
"""


def make_capture(out: str | Path, nbytes: int = 24_000, mtu: int = 1500) -> int:
    """Capture one TCP connection carrying `sent_data(nbytes)`; the number of frames."""
    tag = uuid.uuid4().hex[:6]
    ns_s, ns_r = f"nicsim-s-{tag}", f"nicsim-r-{tag}"
    veth_s, veth_r = f"vs{tag}", f"vr{tag}"
    out = Path(out).resolve()
    try:
        _run("ip", "netns", "add", ns_s)
        _run("ip", "netns", "add", ns_r)
        _run("ip", "link", "add", veth_s, "netns", ns_s, "type", "veth", "peer", "name", veth_r,
             "netns", ns_r)
        for ns, dev, ip in ((ns_s, veth_s, SENDER_IP), (ns_r, veth_r, RECEIVER_IP)):
            _run("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", dev)
            _run("ip", "-n", ns, "link", "set", dev, "mtu", str(mtu), "up")
            _run("ip", "-n", ns, "link", "set", "lo", "up")
            _run("ip", "netns", "exec", ns, "ethtool", "-K", dev, "tso", "off", "gso", "off",
                 "gro", "off", "tx", "off", "rx", "off")
        dump = subprocess.Popen(["ip", "netns", "exec", ns_r, "tcpdump", "-Z", "root", "--immediate-mode", "-i", veth_r, "-U", "-s", "0",
                                 "-w", str(out), "tcp"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        assert dump.stderr is not None
        banner = dump.stderr.readline().decode()     # "listening on ..." once it captures
        if "listening" not in banner:
            raise RuntimeError(f"tcpdump did not start: {banner}")
        rx = subprocess.Popen(["ip", "netns", "exec", ns_r, sys.executable, "-c",
                               RECEIVER.format(ip=RECEIVER_IP, port=PORT)],
                              stdout=subprocess.PIPE, text=True)
        assert rx.stdout is not None and rx.stdout.readline().strip() == "ready"
        subprocess.run(["ip", "netns", "exec", ns_s, sys.executable, "-c",
                        SENDER.format(seed=SEED, n=nbytes, ip=RECEIVER_IP, port=PORT)],
                       check=True, timeout=60)
        got = int(rx.stdout.readline())
        rx.wait(timeout=10)
        assert got == nbytes, f"receiver got {got} of {nbytes} bytes"
        time.sleep(1.0)
        dump.terminate()
        err = dump.communicate(timeout=10)[1].decode()
        if "0 packets captured" in err:
            raise RuntimeError(f"tcpdump captured nothing: {err}")
        from nicsim.pcap import read_pcap
        return len(read_pcap(out).records)
    finally:
        for ns in (ns_s, ns_r):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


if __name__ == "__main__":
    n = make_capture(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 24_000)
    print(f"{sys.argv[1]}: {n} frames")
