"""The far end of a TCP flow, for driver tests: cuts a byte stream into MSS-sized segments and
builds their frames (scapy), retransmits from the last acknowledged byte (go-back-N), and can
send segments out of order or twice.

The peer completes the three-way handshake with the ISS the driver chose (`ack_seq`, from
the SYN-ACK). For speed, and on backends whose TX wire is not captured, the "ACK" the sender
acts on comes straight from the receiving socket (`Socket.tcp_info()`: `rcv_nxt` and the
window its next ACK would carry); the sender never sends beyond that window.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from scapy.layers.inet import IP, TCP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from tb.frames import MAC_DST, MAC_SRC, Flow, pad

SEQ_MASK = 0xFFFF_FFFF


@dataclass
class Segment:
    seq: int
    payload: bytes
    flags: str = 'PA'


@dataclass
class TcpPeer:
    flow: Flow = field(default_factory=Flow)
    isn: int = 1_000_000
    mtu: int = 1500
    stream: bytearray = field(default_factory=bytearray)
    fin: bool = False
    snd_una: int = 0
    """Stream offset acknowledged by the receiver."""
    snd_nxt: int = 0
    """Stream offset of the next byte to send (FIN is at len(stream))."""
    retransmits: int = 0
    frames_sent: int = 0
    ack_seq: int = 1
    """The ACK number on every frame: the driver's ISS + 1 once the SYN-ACK was seen."""
    snd_wnd: int = 65535
    """The receiver's window (from its ACKs); `next_frames` stays inside it."""

    @property
    def mss(self) -> int:
        return self.flow.max_payload(self.mtu)

    @property
    def src(self) -> str:
        return self.flow.src or ('fd00::1' if self.flow.ipv6 else '10.0.0.1')

    @property
    def dst(self) -> str:
        return self.flow.dst or ('fd00::2' if self.flow.ipv6 else '10.0.0.2')

    def seq_of(self, offset: int) -> int:
        """Sequence number of stream byte `offset` (the SYN takes isn)."""
        return (self.isn + 1 + offset) & SEQ_MASK

    def frame(self, seq: int, payload: bytes = b'', flags: str = 'PA', window: int = 65535,
              ack: int | None = None, options: list | None = None) -> bytes:
        """One peer segment; `ack` defaults to `ack_seq`."""
        f = self.flow
        l3 = IPv6(src=self.src, dst=self.dst) if f.ipv6 else IP(src=self.src, dst=self.dst)
        pkt = Ether(src=MAC_SRC, dst=MAC_DST) / l3 / TCP(
            sport=f.sport, dport=f.dport, seq=seq, ack=self.ack_seq if ack is None else ack,
            flags=flags, window=window, options=options or [])
        if payload:
            pkt = pkt / Raw(payload)
        return pad(bytes(pkt))

    def syn(self) -> bytes:
        """The SYN, with the MSS option (a stack without one is held to 536 bytes)."""
        return self.frame(self.isn, flags='S', ack=0, options=[('MSS', self.mss)])

    def handshake_ack(self, driver_iss: int) -> bytes:
        """The third segment of the handshake, acknowledging the driver's SYN-ACK."""
        self.ack_seq = (driver_iss + 1) & SEQ_MASK
        return self.frame(self.seq_of(0), flags='A')

    def ack_frame(self, ack: int, window: int = 65535) -> bytes:
        """A pure ACK of the driver's data up to sequence number `ack`."""
        self.ack_seq = ack & SEQ_MASK
        return self.frame(self.seq_of(self.snd_nxt), flags='A', window=window)

    def write(self, data: bytes) -> None:
        self.stream += data

    def shutdown(self) -> None:
        """FIN after the data written so far."""
        self.fin = True

    def segment_at(self, offset: int, size: int | None = None, fin: bool = True) -> Segment:
        """The segment starting at stream `offset` (at most MSS or `size` bytes; FIN when it
        is the last, `shutdown` was called and `fin` allows it)."""
        n = min(self.mss if size is None else size, len(self.stream) - offset)
        end = offset + n
        flags = 'FPA' if fin and self.fin and end == len(self.stream) else 'PA'
        if n == 0 and flags == 'PA':
            flags = 'A'
        return Segment(self.seq_of(offset), bytes(self.stream[offset:end]), flags)

    def segment_frame(self, seg: Segment) -> bytes:
        return self.frame(seg.seq, seg.payload, seg.flags)

    @property
    def end(self) -> int:
        """Stream offset past everything to send (FIN included)."""
        return len(self.stream) + int(self.fin)

    def next_frames(self, window: int) -> list[bytes]:
        """Frames from snd_nxt: a new segment starts while snd_nxt is within `window` bytes
        of snd_una (the sender's own limit, whole segments, as a congestion window is), and
        no byte, nor the FIN's sequence number, goes past the receiver's window (`snd_wnd`):
        a segment that would cross that edge is cut at it and the FIN waits until it fits
        (RFC 9293 3.8.6: a sender never sends past SND.UNA + SND.WND)."""
        frames = []
        rwnd_end = self.snd_una + self.snd_wnd
        limit = min(self.snd_una + window, rwnd_end)
        while self.snd_nxt < self.end and self.snd_nxt < limit:
            room = rwnd_end - self.snd_nxt
            seg = self.segment_at(self.snd_nxt, min(self.mss, room))
            if 'F' in seg.flags and len(seg.payload) + 1 > room:
                seg = self.segment_at(self.snd_nxt, min(self.mss, room), fin=False)
            if not seg.payload and 'F' not in seg.flags:
                break                      # only the FIN is left and it does not fit yet
            frames.append(self.segment_frame(seg))
            self.snd_nxt += len(seg.payload) + int('F' in seg.flags)
        self.frames_sent += len(frames)
        return frames

    def all_frames(self, window: int | None = None) -> list[bytes]:
        """Every frame of what is left to send, as a capture shows it when the receiver
        keeps up: each window's worth of segments is taken as acknowledged when it arrives
        and the receiver's window stays `snd_wnd` (a one-direction trace, such as the demo's
        and `nicsim replay`'s, has no ACKs to wait for). Sending stays within the window at
        every step; the peer ends with everything acknowledged."""
        frames: list[bytes] = []
        while self.snd_una < self.end:
            new = self.next_frames(window if window is not None else self.snd_wnd)
            if not new:
                raise RuntimeError(f'TcpPeer.all_frames: no progress at stream offset {self.snd_nxt} '
                                   f'(window {self.snd_wnd})')
            frames += new
            self.snd_una = self.snd_nxt
        return frames

    def ack(self, rcv_nxt: int, window: int | None = None) -> None:
        """The receiver acknowledged up to sequence number `rcv_nxt` (and advertised
        `window` from there)."""
        acked = (rcv_nxt - self.seq_of(0)) & SEQ_MASK
        if acked <= self.end and acked > self.snd_una:
            self.snd_una = acked
        if self.snd_nxt < self.snd_una:
            self.snd_nxt = self.snd_una
        if window is not None and acked == self.snd_una:
            self.snd_wnd = window

    def rewind(self) -> None:
        """Retransmission timeout: go back to the first unacknowledged byte."""
        if self.snd_nxt > self.snd_una:
            self.retransmits += 1
        self.snd_nxt = self.snd_una

    @property
    def done(self) -> bool:
        return self.snd_una >= self.end
