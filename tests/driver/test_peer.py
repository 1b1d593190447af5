"""tb.scenario.TcpPeer's sending rules: never past the receiver's window (cut at its edge,
the FIN held until it fits), the sender's own window in whole segments, and a whole
one-direction stream for a receiver that keeps up (what the demo and replays need)."""
from __future__ import annotations

from scapy.layers.inet import TCP
from scapy.layers.l2 import Ether

from tb.frames import Flow
from tb.scenario import TcpPeer
from tb.scenario.tx import tcp_payload


def _segs(frames: list[bytes], peer: TcpPeer) -> list[tuple[int, int, str]]:
    """(stream offset, payload bytes, flags) of each frame."""
    out = []
    for f in frames:
        pkt = Ether(f)
        t = pkt[TCP]
        out.append(((t.seq - peer.seq_of(0)) & 0xFFFF_FFFF, len(tcp_payload(pkt)), str(t.flags)))
    return out


def _peer(n: int, fin: bool = False) -> TcpPeer:
    p = TcpPeer(Flow(), mtu=1500)
    p.write(bytes(range(256)) * (n // 256) + bytes(n % 256))
    if fin:
        p.shutdown()
    return p


def test_cut_at_the_receivers_window_edge() -> None:
    p = _peer(10_000)
    p.snd_wnd = 3000
    segs = _segs(p.next_frames(1 << 20), p)
    assert [(o, n) for o, n, _ in segs] == [(0, 1460), (1460, 1460), (2920, 80)]
    assert p.snd_nxt == 3000 and p.next_frames(1 << 20) == []       # the window is full


def test_fin_waits_until_it_fits() -> None:
    p = _peer(2920, fin=True)
    p.snd_wnd = 2920
    segs = _segs(p.next_frames(1 << 20), p)
    assert [f for _, _, f in segs] == ["PA", "PA"], "the FIN's sequence number is past the window"
    p.ack(p.seq_of(2920), 65535)
    (seg,) = _segs(p.next_frames(1 << 20), p)
    assert seg[1] == 0 and "F" in seg[2] and p.done is False
    p.ack(p.seq_of(2921))
    assert p.done


def test_own_window_in_whole_segments() -> None:
    p = _peer(10_000)
    segs = _segs(p.next_frames(2000), p)                    # a 2000-byte burst limit: whole MSS
    assert [n for _, n, _ in segs] == [1460, 1460]


def test_all_frames_window_by_window() -> None:
    p = _peer(200_000, fin=True)
    p.snd_wnd = 65535
    segs = _segs(p.all_frames(), p)
    assert sum(n for _, n, _ in segs) == 200_000 and "F" in segs[-1][2]
    assert [o for o, _, _ in segs] == sorted(o for o, _, _ in segs)
    # window by window: no segment ends past its window's edge (window k: [k*65535, (k+1)*65535))
    start = 0
    for o, n, f in segs:
        end = o + n + ("F" in f)
        if end > start + 65535:
            start = o
        assert end <= start + 65535
    assert p.done and p.snd_una == p.end
