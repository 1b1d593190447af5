"""Frame builders for tests and the demo (scapy), padded like a MAC delivers them.

Frames are returned without FCS and padded to the 60-byte Ethernet minimum, as a real MAC
hands them to the NIC; the padding is what the split path must keep out of device memory.
"""
from __future__ import annotations

from dataclasses import dataclass

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1AD, Dot1Q, Ether

ETH_MIN = 60
MAC_SRC = "02:00:00:00:00:01"
MAC_DST = "02:00:00:00:00:02"


@dataclass(frozen=True)
class Flow:
    """An L3/L4 flow: what a frame builder needs besides the payload."""

    ipv6: bool = False
    proto: str = "tcp"          # "tcp" or "udp"
    src: str | None = None
    dst: str | None = None
    sport: int = 40000
    dport: int = 5201
    vlan_tags: int = 0          # 0, 1 (802.1Q) or 2 (QinQ: 802.1ad outer + 802.1Q inner)

    @property
    def l3_l4_header_bytes(self) -> int:
        return (40 if self.ipv6 else 20) + (20 if self.proto == "tcp" else 8)

    def max_payload(self, mtu: int = 1500) -> int:
        return mtu - self.l3_l4_header_bytes


def pad(frame: bytes) -> bytes:
    """Pad to the Ethernet minimum (without FCS) as the sending MAC would."""
    return frame.ljust(ETH_MIN, b"\x00")


def build(flow: Flow, payload: bytes, seq: int = 1000, ip_options: bytes = b"") -> bytes:
    """One Ethernet frame of `flow` carrying `payload`."""
    l2 = Ether(src=MAC_SRC, dst=MAC_DST)
    if flow.vlan_tags == 1:
        l2 = l2 / Dot1Q(vlan=100)
    elif flow.vlan_tags == 2:
        l2 = l2 / Dot1AD(vlan=200) / Dot1Q(vlan=100)
    l3: IP | IPv6
    if flow.ipv6:
        l3 = IPv6(src=flow.src or "fd00::1", dst=flow.dst or "fd00::2")
    else:
        l3 = IP(src=flow.src or "10.0.0.1", dst=flow.dst or "10.0.0.2", options=ip_options or [])
    l4 = TCP(sport=flow.sport, dport=flow.dport, seq=seq, flags="PA") if flow.proto == "tcp" \
        else UDP(sport=flow.sport, dport=flow.dport)
    return pad(bytes(l2 / l3 / l4 / payload))


def pattern(n: int, period: int = 7, start: int = 0) -> bytes:
    """Linux devmem selftest data: 1, 2, ..., period-1, then '\\n' in place of 0, repeated."""
    out = bytearray(n)
    for i in range(n):
        v = (start + i) % period
        out[i] = v if v else 0x0A
    return bytes(out)
