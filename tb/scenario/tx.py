"""TX helpers for scenarios (docs/tx.md; spec "Transmitting"): the NIC's TX wire
(`env.tx_frames`: the frames it sent, in order), the devmem-send control message, frame and
checksum checks, a connection with a TX binding, and the peer's ACK loop.
"""
from __future__ import annotations

import random
import struct
from typing import Any

from driver.socket import SCM_DEVMEM_DMABUF, SO_ZEROCOPY, SOL_SOCKET, Socket
from tb.frames import Flow
from tb.scenario.env import DriverEnv
from tb.scenario.peer import TcpPeer
from tb.scenario.rig import SETTLE_NS, SETTLE_POLLS, Bound, Rig, Unsupported


def tx_wire(env: DriverEnv) -> list[bytes]:
    frames = getattr(env, 'tx_frames', None)
    if frames is None:
        raise Unsupported('the environment does not capture TX frames')
    return frames


def zc_cmsg(binding_id: int) -> list[tuple[int, int, bytes]]:
    """The SCM_DEVMEM_DMABUF control message of a devmem send."""
    return [(SOL_SOCKET, SCM_DEVMEM_DMABUF, struct.pack('<I', binding_id))]


def check_tcp_frame(frame: bytes) -> Any:
    """Parse with scapy; the IPv4 header and TCP checksums must be what scapy computes from
    the bytes (RFC 791/793/8200 pseudo-header). Returns the scapy packet."""
    from scapy.layers.inet import IP, TCP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Ether
    pkt = Ether(frame)
    assert len(frame) >= 60, f'a {len(frame)}-byte frame went out (minimum 60)'
    tcp = pkt[TCP]
    if IP in pkt:
        ip = pkt[IP]
        want_ip = ip.chksum
        ip2 = ip.copy()
        del ip2.chksum
        assert IP(bytes(ip2))[IP].chksum == want_ip, 'bad IPv4 header checksum'
        l3: type[IP] | type[IPv6] = IP
        plen = ip.len - ip.ihl * 4
    else:
        l3, plen = IPv6, pkt[IPv6].plen
    got = tcp.chksum
    # rebuild from the L3 header down, padding dropped, so scapy recomputes over the segment
    raw = bytes(pkt[l3])[:(pkt[l3].ihl * 4 + plen) if l3 is IP else 40 + plen]
    re = l3(raw)
    del re[TCP].chksum
    assert l3(bytes(re))[TCP].chksum == got, f'bad TCP checksum 0x{got:04x}'
    return pkt


def tcp_payload(pkt: Any) -> bytes:
    from scapy.layers.inet import IP, TCP
    from scapy.layers.inet6 import IPv6
    tcp = pkt[TCP]
    if IP in pkt:
        n = pkt[IP].len - pkt[IP].ihl * 4 - tcp.dataofs * 4
    else:
        n = pkt[IPv6].plen - tcp.dataofs * 4
    return bytes(tcp.payload)[:n]


async def tx_connection(env: DriverEnv, *, ipv6: bool = False, mtu: int = 1500,
                        pages: int = 64) -> tuple[Rig, Socket, TcpPeer, Bound]:
    """A Rig with an accepted connection and a TX binding of `pages` pages whose bytes the
    GPU filled with random data; SO_ZEROCOPY on."""
    rig = await Rig.create(env, rx_pending=32, mtu=mtu)
    if not rig.netdev.netmem_tx:
        raise Unsupported('the NIC has no TX path (TX_CAPS.num_txq == 0)')
    peer = TcpPeer(Flow(ipv6=ipv6), mtu=mtu)
    sock = await rig.connect(peer, rig.listen(ipv6=ipv6))
    dmabuf, fd = rig.export(pages, chunk_pages=4)
    bid = await rig.nl.bind_tx(rig.netdev.ifindex, fd)
    dmabuf.gpu_write(0, random.Random(11).randbytes(dmabuf.size))
    sock.setsockopt(SOL_SOCKET, SO_ZEROCOPY, 1)
    return rig, sock, peer, Bound(bid, dmabuf, fd)


async def tx_settle(rig: Rig, env: DriverEnv, frames: int) -> None:
    """Wait until the NIC has finished `frames` more TX frames (sent or failed)."""
    names = ('TX_FRAMES', 'TX_ERR_BAD_SEG', 'TX_ERR_BAD_LEN', 'TX_ERR_BAD_CSUM',
             'TX_DMA_RD_ERR', 'TX_DESC_RD_ERR')
    for _ in range(SETTLE_POLLS):
        hw = await rig.netdev.tx_hw_stats()
        if sum(hw[n] for n in names) >= frames:
            return
        await env.hw.delay(SETTLE_NS)
    raise AssertionError(f'the NIC finished {sum(hw[n] for n in names)} of {frames} TX frames')


def driver_seq_end(frames: list[bytes], port: int) -> int | None:
    """The highest sequence number the driver's segments to `port` reached (seq + length,
    SYN and FIN counting one), or None."""
    from scapy.layers.inet import TCP
    top = None
    for f in frames:
        pkt = check_tcp_frame(f)
        t = pkt[TCP]
        if t.dport != port or 'R' in t.flags:
            continue
        end = (t.seq + len(tcp_payload(pkt)) + int('S' in t.flags) + int('F' in t.flags)) & 0xFFFF_FFFF
        if top is None or ((end - top) & 0xFFFF_FFFF) < 0x8000_0000:
            top = end
    return top


async def peer_acks_all(rig: Rig, peer: TcpPeer, sock: Socket, wire: list[bytes],
                        rounds: int = 200) -> int:
    """The peer acknowledges what it received from the driver (the highest end sequence
    on the wire), the driver polls and sends what the window now allows, until everything
    the socket queued is acknowledged. Returns the ACKs sent."""
    sk = sock.sk
    assert sk is not None
    acks = 0
    for _ in range(rounds):
        await rig.netdev.poll()
        if sk.snd_una == sk.write_seq and not sk.write_queue:
            return acks
        top = driver_seq_end(wire, peer.flow.sport)
        if top is not None and top != peer.ack_seq:
            await rig.send([peer.ack_frame(top)])
            acks += 1
        await rig.pump()
    raise AssertionError(f'not acknowledged: snd_una {sk.snd_una} write_seq {sk.write_seq}')
