"""The live network plumbing against the real Linux stack: a private namespace with a TAP
device, Linux resolving our addresses (ARP, IPv6 ND answered by driver.neigh), and frames
both ways. No NIC here: the test plays the wire itself. Skipped, with the reason, where the
machine cannot create a namespace or a TAP device (not root, no /dev/net/tun, no `ip`).
"""
from __future__ import annotations

import ipaddress
import socket
import struct
import subprocess
import time

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import ICMPv6ND_NS, IPv6
from scapy.layers.l2 import ARP, Ether

from driver.neigh import NeighError, NeighResponder, mac_bytes
from nicsim.live_net import LiveNet, LiveNetConfig, probe

REASON = probe()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"live networking unavailable: {REASON}")

NIC_MAC = "02:00:00:00:00:02"


def _frames_until(net: LiveNet, want, timeout: float = 5.0) -> bytes:
    """Read frames from the TAP until `want(frame)` is true; fail with what was seen."""
    seen = []
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        f = net.read_frame()
        if f is None:
            time.sleep(0.002)
            continue
        if want(f):
            return f
        seen.append(Ether(f).summary())
    pytest.fail(f"no matching frame from Linux within {timeout} s; saw {seen}")


def _tap_names() -> set[str]:
    out = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True).stdout
    return {line.split(":")[1].strip().split("@")[0] for line in out.splitlines()}


@pytest.mark.parametrize("family", ["ipv4", "ipv6"])
def test_linux_resolves_us_and_udp_flows_both_ways(family: str) -> None:
    cfg = LiveNetConfig(tap_name=f"nsl{family[-1]}")
    before = _tap_names()
    with LiveNet(cfg) as net:
        net.set_nonblocking()
        neigh = NeighResponder.create(NIC_MAC, cfg.nic_ipv4, cfg.nic_ipv6)
        v6 = family == "ipv6"
        af = socket.AF_INET6 if v6 else socket.AF_INET
        linux_ip = cfg.linux_ipv6 if v6 else cfg.linux_ipv4
        nic_ip = cfg.nic_ipv6 if v6 else cfg.nic_ipv4

        def make_sock() -> socket.socket:
            s = socket.socket(af, socket.SOCK_DGRAM)
            s.bind((linux_ip, 4000))
            s.settimeout(5)
            return s

        sock = net.run_in_ns(make_sock)
        try:
            # Linux -> us: Linux must resolve our address first; we answer from driver.neigh.
            sock.sendto(b"hello from linux", (nic_ip, 5000))
            if v6:
                # Linux may also send MLD reports or a router solicitation: wait for the
                # Neighbor Solicitation for our address itself.
                ns = _frames_until(net, lambda f: ICMPv6ND_NS in Ether(f)
                                   and Ether(f)[ICMPv6ND_NS].tgt == nic_ip)
            else:
                ns = _frames_until(net, lambda f: ARP in Ether(f))
            reply = neigh.handle(ns)
            assert reply is not None, f"no answer to {Ether(ns).summary()}"
            net.write_frame(reply)
            udp = _frames_until(net, lambda f: UDP in Ether(f))
            pkt = Ether(udp)
            assert pkt.dst == NIC_MAC and pkt[UDP].dport == 5000
            assert bytes(pkt[UDP].payload) == b"hello from linux"
            # Linux told us its MAC while asking: the table has it.
            assert neigh.lookup(linux_ip) == mac_bytes(cfg.linux_mac)

            # us -> Linux: a UDP datagram with a correct checksum reaches the socket.
            l3 = (IPv6(src=nic_ip, dst=linux_ip) if v6 else IP(src=nic_ip, dst=linux_ip))
            out = Ether(src=NIC_MAC, dst=cfg.linux_mac) / l3 / UDP(sport=5000, dport=4000) / b"hello from the nic"
            net.write_frame(bytes(out))
            data, addr = sock.recvfrom(100)
            assert data == b"hello from the nic"
            assert ipaddress.ip_address(addr[0]) == ipaddress.ip_address(nic_ip)
        finally:
            sock.close()
    assert _tap_names() == before, "the TAP device outlived the namespace"


def test_bad_neighbour_frames_are_refused_with_a_reason() -> None:
    neigh = NeighResponder.create(NIC_MAC, "10.77.0.2", "fd77::2")
    short_arp = bytes(Ether(dst="ff:ff:ff:ff:ff:ff", type=0x0806)) + b"\x00" * 10
    with pytest.raises(NeighError, match="shorter than 42"):
        neigh.handle(short_arp)
    req = neigh.neighbor_solicit("fd77::2")        # a solicitation for ourselves, then corrupt it
    bad = bytearray(req)
    bad[14 + 40 + 8] ^= 0xFF
    with pytest.raises(NeighError, match="checksum"):
        neigh.handle(bytes(bad))
    assert neigh.stats.malformed == 2
    # Well-formed but not for us: no answer, no error.
    assert neigh.handle(bytes(Ether() / ARP(op=1, pdst="10.77.0.9", psrc="10.77.0.1"))) is None
    assert neigh.handle(bytes(Ether() / IP() / UDP())) is None


def test_requests_we_build_are_what_scapy_reads() -> None:
    neigh = NeighResponder.create(NIC_MAC, "10.77.0.2", "fd77::2")
    arp = Ether(neigh.arp_request("10.77.0.1"))
    assert arp.dst == "ff:ff:ff:ff:ff:ff" and arp[ARP].op == 1 and arp[ARP].pdst == "10.77.0.1"
    ns = Ether(neigh.neighbor_solicit("fd77::1"))
    assert ns.dst == "33:33:ff:00:00:01" and ns[IPv6].dst == "ff02::1:ff00:1" and ns[IPv6].hlim == 255
    icmp = bytes(ns[IPv6].payload)
    cks = struct.unpack_from("!H", icmp, 2)[0]
    ns[IPv6].payload.cksum = None
    assert Ether(bytes(ns))[IPv6].payload.cksum == cks
