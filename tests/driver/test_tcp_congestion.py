"""Congestion control of the driver's TCP (driver/tcp.py, "reno"), on two drivers back to back
on the golden model (tests/driver/test_tcp_endpoint.py's link). Expectations from RFC 6928
(initial window of 10 segments), RFC 5681 (slow start, fast retransmit with ssthresh =
flight / 2) and RFC 6582 / Linux `tcp_enter_loss` (after a timeout the whole lost flight is
sent again in slow start, one round trip per doubling).

The last test is the bug these were written for: before congestion control, a timeout that
followed the loss of a window's tail sent the head again and then one more lost segment per
round trip (each partial ACK), so a lost 64 KiB window took about 45 round trips to repair;
`congestion_control = "none"` still shows it.
"""
from __future__ import annotations

import asyncio
import random

from scapy.layers.inet import TCP
from scapy.layers.l2 import Ether

from driver.tcp import TCP_INIT_CWND, TcpState
from tests.driver.test_tcp_endpoint import Link, connected, link

MSS = 1460


def data_seq(frame: bytes) -> tuple[int, int] | None:
    """(seq, payload length) of a data segment, else None."""
    p = Ether(frame)
    if TCP not in p:
        return None
    n = len(bytes(p[TCP].payload)) if p[TCP].payload else 0
    ip_len = p["IP"].len - p["IP"].ihl * 4 - p[TCP].dataofs * 4
    n = min(n, ip_len)
    return (p[TCP].seq, n) if n > 0 else None


def dropping(ln: Link, way: str, drop: set[int]) -> list[tuple[int, int]]:
    """Replace A's wire: the first transmission of each data segment whose index (in
    sequence order, from 0) is in `drop` is lost. Returns the log of (segment index, round)
    of every data segment sent."""
    src, dst = (ln.a, ln.b) if way == "ab" else (ln.b, ln.a)
    seen: dict[int, int] = {}
    base: list[int] = []
    log: list[tuple[int, int]] = []

    def on_tx(frame: bytes) -> None:
        ln.sent[way].append(frame)
        d = data_seq(frame)
        if d is not None:
            if not base:
                base.append(d[0])
            idx = ((d[0] - base[0]) & 0xFFFF_FFFF) // MSS
            seen[idx] = seen.get(idx, 0) + 1
            log.append((idx, ln.rounds))
            if idx in drop and seen[idx] == 1:
                ln.dropped += 1
                return
        dst.inbox.append(frame)
    src.hw.wire.on_tx = on_tx
    return log


class RoundLink(Link):
    """A Link that counts its steps (one step: both hosts take what arrived and poll)."""

    rounds = 0

    async def step(self) -> int:
        self.rounds += 1
        return await super().step()


async def rlink() -> RoundLink:
    ln = await link()
    rl = RoundLink(ln.a, ln.b)
    ln.a.hw.wire.on_tx = rl.wire("ab", ln.b)
    ln.b.hw.wire.on_tx = rl.wire("ba", ln.a)
    return rl


async def transfer(ln: Link, n: int, cc: str = "reno") -> tuple[object, object, bytes]:
    for h in (ln.a, ln.b):
        h.kernel.tcp.congestion_control = cc
    c, s = await connected(ln, ln.a, ln.b)
    data = random.Random(n).randbytes(n)
    await c.send(data)
    return c, s, data


async def finish(ln: Link, c, s, data: bytes) -> None:  # type: ignore[no-untyped-def]
    got = bytearray()

    def done() -> bool:
        while True:
            try:
                b = s.recv(1 << 20)
            except OSError:
                break
            if not b:
                break
            got.extend(b)
        return len(got) == len(data) and c.tcp_info().snd_una == c.sk.snd_nxt
    await ln.run(done)
    assert bytes(got) == data


def test_first_flight_is_the_initial_window_and_slow_start_doubles_it() -> None:
    async def body() -> None:
        ln = await rlink()
        log = dropping(ln, "ab", set())
        c, s, data = await transfer(ln, 120 * MSS)
        first = [i for i, r in log]
        assert len(first) == TCP_INIT_CWND, f"first flight {len(first)} segments"
        sk = c.sk
        assert sk.snd_cwnd == TCP_INIT_CWND and sk.ca_state == "open"
        # every step: what is in flight never exceeds the congestion window
        seen_cwnd = []
        for _ in range(40):
            await ln.step()
            inflight = ((sk.snd_nxt - sk.snd_una) & 0xFFFF_FFFF) // MSS
            assert inflight <= sk.snd_cwnd, (inflight, sk.snd_cwnd)
            seen_cwnd.append(sk.snd_cwnd)
        assert max(seen_cwnd) >= 4 * TCP_INIT_CWND, f"slow start did not grow: {seen_cwnd}"
        await finish(ln, c, s, data)
        assert ln.a.kernel.tcp.mib.RetransSegs == 0
    asyncio.run(body())


def test_without_congestion_control_the_window_alone_limits() -> None:
    async def body() -> None:
        ln = await rlink()
        log = dropping(ln, "ab", set())
        c, s, data = await transfer(ln, 120 * MSS, cc="none")
        assert len(log) == 65535 // MSS, f"first flight {len(log)} segments (the peer's window)"
        await finish(ln, c, s, data)
    asyncio.run(body())


def test_fast_retransmit_halves_the_flight() -> None:
    async def body() -> None:
        ln = await rlink()
        dropping(ln, "ab", {25})
        c, s, data = await transfer(ln, 150 * MSS)
        sk = c.sk
        flight_at_loss = []
        orig = type(sk)._retransmit_head

        def spy(self) -> None:  # type: ignore[no-untyped-def]
            if self is sk and self.dupacks == 3:
                flight_at_loss.append(len(self.rtx_queue))
            orig(self)
        type(sk)._retransmit_head = spy
        try:
            await finish(ln, c, s, data)
        finally:
            type(sk)._retransmit_head = orig
        mib = ln.a.kernel.tcp.mib
        assert mib.TCPFastRetrans == 1 and mib.TCPTimeouts == 0 and mib.RetransSegs == 1
        assert flight_at_loss and sk.snd_ssthresh == max(flight_at_loss[0] // 2, 2)
        assert sk.ca_state == "open" and sk.recover is None
    asyncio.run(body())


async def lost_tail(cc: str) -> tuple[RoundLink, list[tuple[int, int]], object]:
    """40 segments; the first transmission of segments 20..39 is lost (the tail of the
    flight: no duplicate ACK can come), so only the timeout finds it."""
    ln = await rlink()
    log = dropping(ln, "ab", set(range(20, 40)))
    c, s, data = await transfer(ln, 40 * MSS, cc)
    await finish(ln, c, s, data)
    return ln, log, c


def test_timeout_sends_the_lost_window_again_in_slow_start() -> None:
    async def body() -> None:
        ln, log, c = await lost_tail("reno")
        mib = ln.a.kernel.tcp.mib
        assert mib.TCPTimeouts == 1 and mib.RetransSegs == 20, (mib.TCPTimeouts, mib.RetransSegs)
        again = [(i, r) for k, (i, r) in enumerate(log) if i in {j for j, _ in log[:k]}]
        assert sorted(i for i, _ in again) == list(range(20, 40)), "each lost segment once"
        rounds = sorted({r for _, r in again})
        per_round = [sum(1 for _, r in again if r == x) for x in rounds]
        assert per_round[:4] == [1, 2, 4, 8], f"slow start after the timeout: {per_round}"
        assert len(rounds) <= 6, f"{len(rounds)} round trips to repair 20 segments"
        assert c.sk.snd_cwnd >= 8 and c.tcp_info().state == TcpState.ESTABLISHED
    asyncio.run(body())


def test_without_congestion_control_a_lost_tail_takes_a_round_trip_per_segment() -> None:
    """The behaviour before: one lost segment per round trip after the timeout."""
    async def body() -> None:
        ln, log, c = await lost_tail("none")
        again = [(i, r) for k, (i, r) in enumerate(log) if i in {j for j, _ in log[:k]}]
        assert len({r for _, r in again}) >= 20
    asyncio.run(body())
