"""How the driver's TCP sizes and schedules TSO sends, against Linux's rules (issue 23;
net/ipv4/tcp_output.c behaviour as documented there and in ip-sysctl.rst):

- `tcp_tso_should_defer`: a GSO skb the window cannot take whole waits for an ACK when the
  room is below `max_segs` segments and below 1/`tcp_tso_win_divisor` of the window, the
  oldest segment in flight went out at least half an SRTT ago and the last send was less
  than 1 ms ago; it goes now in recovery, after 1 ms idle, when its ACK is due too late, or
  when the room takes `max_segs` segments;
- `tcp_tso_autosize`: ~1 ms of the pacing rate, at least `tcp_min_tso_segs`, at most the
  device's `gso_max_size`; a min RTT under 2^`tcp_tso_rtt_log` us adds `gso_max_size`;
  at most the device's `gso_max_segs`;
- `dev->gso_max_segs` (`ip link set dev ethN gso_max_segs N`) bounds every GSO skb and so
  every TSO send;
- `tcp_cwnd_validate` / `tcp_is_cwnd_limited`: a flow held back by the peer's receive
  window does not grow cwnd (slow start stops at twice the most segments in flight);
- the per-flow turns at the end of a poll are a deficit round robin in frames (RFC 8290
  4.2, fq_codel): a flow that sent a GSO skb of k segments waits until the others have
  sent about as many.
"""
from __future__ import annotations

import asyncio
import errno

from driver.errors import KernelError
from driver.socket import SO_RCVBUF, SOL_SOCKET
from driver.tcp import NSEC_PER_MSEC, TcpSock
from tests.driver.test_tcp_endpoint import Link, connected, link, run

MSS = 1460


def _recv(sock) -> bytes:  # type: ignore[no-untyped-def]
    try:
        return sock.recv(1 << 20)
    except KernelError as e:
        if e.errno != errno.EAGAIN:
            raise
        return b''


async def _tso_pair(ln: Link, port: int = 7000) -> tuple[TcpSock, TcpSock]:
    c, s = await connected(ln, ln.a, ln.b, port)
    assert c.sk is not None and s.sk is not None
    return c.sk, s.sk


async def _queued(ln: Link, nbytes: int, call: int, port: int = 7000):  # type: ignore[no-untyped-def]
    """A connection A -> B with `nbytes` queued in `call`-byte sends while the peer's window
    is shut (nothing goes yet): (socket, its write queue's skb sizes in segments)."""
    c, s = await connected(ln, ln.a, ln.b, port)
    sk = c.sk
    assert sk is not None
    wnd = sk.snd_wnd
    sk.snd_wnd = 0
    for off in range(0, nbytes, call):
        await c.send(bytes(min(call, nbytes - off)))
    sk.snd_wnd = wnd
    return c, s, sk


def test_defer_waits_for_a_bigger_send_and_each_exception_sends_now() -> None:
    async def body() -> None:
        ln = await link(tso=True)
        c, s, sk = await _queued(ln, 256 << 10, 64 << 10)
        mss = sk.mss
        assert mss == MSS and len(sk.write_queue) >= 2 and sk.write_queue[0].pcount > 1
        t = sk.write_queue[0]
        # one segment of room in the peer's window, an old flight, a recent send
        sk.snd_cwnd = 1000
        sk.srtt_ns = 20_000
        sk.rtx_queue.append(sk.write_queue.popleft())     # pretend the first skb is in flight
        sk.packets_out = sk.rtx_queue[0].pcount
        head = sk.rtx_queue[0]
        t = sk.write_queue[0]
        now = sk.now
        head.sent_ns = now - 15_000                        # 3/4 SRTT ago: its ACK is near
        sk.wstamp_ns = now - 1_000
        sk.snd_una = head.seq
        sk.snd_wnd = (t.seq - head.seq) + mss              # room: one segment
        wnd_end = sk._send_window_end()
        assert sk.tso_should_defer(t, wnd_end, 7) == 'rwnd'
        # the congestion window the tighter one: cwnd-limited
        sk.snd_wnd = (t.seq - head.seq) + 3 * mss
        sk.snd_cwnd = sk.packets_out + 1
        assert sk.tso_should_defer(t, sk._send_window_end(), 7) == 'cwnd'
        sk.snd_cwnd = 1000
        sk.snd_wnd = (t.seq - head.seq) + mss
        # room for max_segs segments: send
        assert sk.tso_should_defer(t, sk._send_window_end(), 1) is None
        # room at least a third of the window (tcp_tso_win_divisor 3): send
        sk.snd_wnd = 3 * mss
        sk.snd_una = (t.seq - 2 * mss) & 0xFFFF_FFFF
        assert sk.tso_should_defer(t, sk._send_window_end(), 7) is None
        sk.snd_una = head.seq
        sk.snd_wnd = (t.seq - head.seq) + mss
        # the oldest segment went out less than half an SRTT ago: its ACK comes too late
        head.sent_ns = now - 9_000
        assert sk.tso_should_defer(t, sk._send_window_end(), 7) is None
        head.sent_ns = now - 15_000
        # nothing sent for over 1 ms
        sk.wstamp_ns = now - NSEC_PER_MSEC - 1
        assert sk.tso_should_defer(t, sk._send_window_end(), 7) is None
        sk.wstamp_ns = now - 1_000
        # in recovery
        sk.ca_state = 'recovery'
        assert sk.tso_should_defer(t, sk._send_window_end(), 7) is None
        sk.ca_state = 'open'
        assert sk.tso_should_defer(t, sk._send_window_end(), 7) == 'rwnd'
    run(body())


def test_autosize_is_a_millisecond_of_pacing_within_the_device_limits() -> None:
    async def body() -> None:
        ln = await link(tso=True)
        sk, _ = await _tso_pair(ln)
        mss = sk.mss
        gso_max = sk.dst_dev.gso_max_size
        st = sk.stack
        # a slow flow: 10 segments per 100 ms, 2x in slow start -> ~290 KB/s, 285 B per ms
        sk.snd_cwnd, sk.packets_out, sk.srtt_ns = 10, 0, 100 * NSEC_PER_MSEC
        sk.min_rtt_ns = 100 * NSEC_PER_MSEC
        assert sk.tso_segs() == st.min_tso_segs == 2
        # a fast one: 1 ms of 2 x 100 x MSS / 1 ms is 200 segments; gso_max_size caps it
        sk.snd_cwnd, sk.srtt_ns = 100, NSEC_PER_MSEC
        assert sk.tso_segs() == gso_max // mss
        # between: 1 ms of 2 x 10 x 1460 B / 10 ms = 2920 B -> 2 segments; a min RTT of
        # 10 us under 2^9 us adds a whole gso_max_size; tcp_tso_rtt_log 0 does not
        sk.snd_cwnd, sk.srtt_ns, sk.min_rtt_ns = 10, 10 * NSEC_PER_MSEC, 10_000
        st.tso_rtt_log = 0
        assert sk.tso_segs() == 2
        st.tso_rtt_log = 9
        assert sk.tso_segs() == gso_max // mss
        # the device's gso_max_segs bounds it
        sk.dst_dev.gso_max_segs = 3
        assert sk.tso_segs() == 3
    run(body())


def test_gso_max_segs_bounds_every_tso_send() -> None:
    async def body() -> None:
        ln = await link(tso=True)
        ln.a.nd.gso_max_segs = 3
        seen: list[int] = []
        orig = TcpSock.transmit

        async def transmit(self: TcpSock, skb) -> bool:  # type: ignore[no-untyped-def]
            if self is sk:
                seen.append(max(1, skb.gso_segs))
            return await orig(self, skb)
        c, s = await connected(ln, ln.a, ln.b)
        sk = c.sk
        assert sk is not None and sk.size_goal() == 3 * sk.mss
        TcpSock.transmit = transmit  # type: ignore[method-assign]
        try:
            data = bytes(range(256)) * 2048
            await c.send(data)
            got = bytearray()

            def done() -> bool:
                got.extend(_recv(s))
                return len(got) == len(data)
            await ln.run(done)
        finally:
            TcpSock.transmit = orig  # type: ignore[method-assign]
        assert bytes(got) == data
        assert max(seen) == 3 and seen.count(3) > 10, seen
    run(body())


def test_cwnd_does_not_grow_while_the_receive_window_limits() -> None:
    """B's receive buffer holds ~14 segments: A's flight never exceeds that, so cwnd must
    stop near twice it (slow start while cwnd < 2 x max_packets_out), not grow by one per
    segment acknowledged for the whole transfer (~700 segments)."""
    async def body() -> None:
        ln = await link(tso=True)
        lst_port = 7100
        from tests.driver.test_tcp_endpoint import listen
        lst = listen(ln.b, lst_port)
        lst.setsockopt(SOL_SOCKET, SO_RCVBUF, 20000)
        c = ln.a.kernel.socket(2, 1)
        await c.connect((ln.b.ip, lst_port))
        acc: list = []

        def up() -> bool:
            try:
                acc.append(lst.accept()[0])
            except Exception:
                pass
            return bool(acc) and c.sk is not None and c.sk.state.name == 'ESTABLISHED'
        await ln.run(up)
        s = acc[0]
        sk = c.sk
        assert sk is not None
        data = bytes(1 << 20)
        await c.send(data)
        got = [0]
        flight = [0]

        def done() -> bool:
            got[0] += len(_recv(s))
            flight[0] = max(flight[0], sk.packets_out)
            return got[0] == len(data)
        await ln.run(done)
        window_segs = -(-20000 // sk.mss)
        assert flight[0] <= window_segs + 1, flight[0]
        assert sk.snd_cwnd <= 2 * window_segs + 2 * sk.size_goal() // sk.mss, \
            (sk.snd_cwnd, window_segs)
    run(body())


def test_flows_take_turns_in_frames_not_skbs() -> None:
    """Two flows of A, both backlogged: one queued as 4-segment GSO skbs, one as 1-segment
    skbs. In one end-of-poll flush the frames they send stay within one GSO skb of each
    other at every point (deficit round robin, a quantum of one frame); a round robin of
    one skb per turn would give the GSO flow four frames for each of the other's one."""
    async def body() -> None:
        ln = await link(tso=True)
        ln.a.nd.gso_max_segs = 4
        _, _, big = await _queued(ln, 120 * MSS, 4 * MSS, port=7001)
        _, _, small = await _queued(ln, 120 * MSS, MSS, port=7002)
        order: list[tuple[TcpSock, int]] = []
        orig = TcpSock.transmit

        async def transmit(self: TcpSock, skb) -> bool:  # type: ignore[no-untyped-def]
            if self in (big, small) and skb.len > 0:
                order.append((self, max(1, skb.gso_segs)))
            return await orig(self, skb)
        for sk in (big, small):
            sk.snd_cwnd = 1000
            sk.snd_wnd = 60 * MSS
        st = ln.a.kernel.tcp
        TcpSock.transmit = transmit  # type: ignore[method-assign]
        try:
            st.xmit_sched(big)
            st.xmit_sched(small)
            await st.flush_acks()
        finally:
            TcpSock.transmit = orig  # type: ignore[method-assign]
        segs = {big: 0, small: 0}
        assert {n for sk, n in order if sk is big} == {4}
        assert {n for sk, n in order if sk is small} == {1}
        # while both still send (after one flow's window is used up the other goes alone)
        last = min(max(i for i, (sk, _) in enumerate(order) if sk is f) for f in (big, small))
        for sk, n in order[:last]:
            segs[sk] += n
            assert abs(segs[big] - segs[small]) <= 4, [(sk is big, n) for sk, n in order]
        assert segs[big] >= 40 and segs[small] >= 40
    asyncio.run(body())
