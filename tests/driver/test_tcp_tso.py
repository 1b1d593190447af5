"""TCP over TSO on the golden model (issue 21, the driver half): with `TX_OFFLOADS.tso` the
driver advertises and turns on TSO/TSO6, the TCP layer builds GSO skbs of up to 64 KiB
(`tcp_xmit_size_goal`: 45 x 1448 = 65160 bytes at MSS 1448, 7 x 8948 at MSS 8948), devmem
payload fragments in the dma-buf, and the driver posts each as one TSO send the NIC cuts.

What must hold, from docs/tx.md and the devmem spec, never from the implementation:
- every frame on the wire is a valid TCP segment (scapy recomputes both checksums) of at
  most one MSS, the IPv4 IDs of all data segments are distinct, and the receiver gets the
  stream byte-exact through its GPU accessor (no CPU read of device memory);
- the MSG_ZEROCOPY notifications cover every send call exactly once, after everything is
  acknowledged;
- the NIC's TSO counters (the model's `TX_TSO_SENDS` / `TX_TSO_SEGS`) agree with the
  driver's `tx-hw-gso-packets` / `tx-hw-gso-wire-packets`;
- a segment lost out of the middle of a TSO send is retransmitted alone (one MSS, the same
  bytes), not the whole send;
- `ethtool -K tso off` mid-stream: no further TSO send, queued GSO skbs cut in software,
  new sends MSS-sized; `tso on` again: TSO sends again; the stream stays exact;
- a NIC without TSO (the model by default): nothing changes (no GSO skb).
"""
from __future__ import annotations

import random
import struct
from collections.abc import Callable

import pytest
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

from driver.ethtool_features import ALL_TSO, parse_features_args
from driver.socket import MSG_ZEROCOPY, SCM_DEVMEM_DMABUF, SO_ZEROCOPY, SOL_SOCKET, Socket
from driver.tcp import TcpState
from models.host_memory import PAGE_SIZE
from tb.scenario import Reader
from tb.scenario.tx import check_tcp_frame
from tests.driver.test_tcp_endpoint import Host, Link, connected, link, run


def _data_frames(frames: list[bytes]) -> list[Ether]:
    out = []
    for f in frames:
        pkt = Ether(f)
        if TCP in pkt and IP in pkt and pkt[IP].len - pkt[IP].ihl * 4 - pkt[TCP].dataofs * 4 > 0:
            out.append(pkt)
    return out


def _payload_len(pkt: Ether) -> int:
    return int(pkt[IP].len - pkt[IP].ihl * 4 - pkt[TCP].dataofs * 4)


async def _devmem_stream(ln: Link, nbytes: int, call: int = 64 << 10,
                         between: Callable[[int], None] | None = None,
                         after_send: Callable[[int], None] | None = None,
                         on_connected: Callable[[], None] | None = None
                         ) -> tuple[bytes, Reader, Socket, list[tuple[int, int]], int]:
    """A sends `nbytes` from its dma-buf to B's devmem queue in `call`-byte MSG_ZEROCOPY
    calls; `after_send(i)` runs right after call i (nothing pumped yet), `between(i)` after
    the link was pumped until call i is all acknowledged. Returns the data, B's reader, A's
    socket, the notifications, the calls."""
    rx_buf = ln.b.hw.dev.export_dmabuf(256 * PAGE_SIZE)
    rx_id = await ln.b.kernel.netlink_open().bind_rx(ln.b.nd.ifindex,
                                                     ln.b.kernel.dma_buf_fd(rx_buf), [0])
    size = -(-nbytes // PAGE_SIZE) * PAGE_SIZE
    tx_buf = ln.a.hw.dev.export_dmabuf(size, chunk_size=16 * PAGE_SIZE)
    tx_id = await ln.a.kernel.netlink_open().bind_tx(ln.a.nd.ifindex,
                                                     ln.a.kernel.dma_buf_fd(tx_buf))
    data = random.Random(nbytes).randbytes(nbytes)
    tx_buf.gpu_write(0, data)
    c, s = await connected(ln, ln.a, ln.b)
    if on_connected is not None:
        on_connected()
    c.setsockopt(SOL_SOCKET, SO_ZEROCOPY, 1)
    cm = [(SOL_SOCKET, SCM_DEVMEM_DMABUF, struct.pack('<I', tx_id))]
    reader = Reader(s, {rx_id: rx_buf})
    notes: list[tuple[int, int]] = []
    calls = 0
    for i, off in enumerate(range(0, nbytes, call)):
        n = min(call, nbytes - off)
        assert await c.sendmsg([(off, n)], cm, MSG_ZEROCOPY) == n
        calls += 1
        if after_send is not None:
            after_send(i)
        if between is not None:
            sk = c.sk
            assert sk is not None

            def acked() -> bool:
                reader.drain()
                notes.extend(c.zerocopy_notifications())
                return sk.snd_una == sk.write_seq and not sk.rtx_queue
            await ln.run(acked)
            between(i)
    c.shutdown()

    def done() -> bool:
        reader.drain()
        notes.extend(c.zerocopy_notifications())
        return reader.eof and c.tcp_info().state == TcpState.FIN_WAIT2
    await ln.run(done)
    notes.extend(c.zerocopy_notifications())
    return data, reader, c, notes, calls


def _check_common(ln: Link, data: bytes, reader: Reader, notes: list[tuple[int, int]],
                  calls: int, mss: int) -> list[Ether]:
    assert bytes(reader.got) == data and reader.devmem_bytes == len(data)
    assert sorted(i for lo, hi in notes for i in range(lo, hi + 1)) == list(range(calls)), notes
    assert ln.a.hw.dev.cpu_reads == 0 and ln.b.hw.dev.cpu_reads == 0
    frames = _data_frames(ln.sent['ab'])
    for pkt in frames:
        check_tcp_frame(bytes(pkt))
        assert _payload_len(pkt) <= mss
    return frames


def _gso_stats(h: Host) -> tuple[int, int, int]:
    qs = [h.nd.tx_qstats(q.index) for q in h.nd.tx_queues]
    return (sum(s.hw_gso_packets for s in qs), sum(s.hw_gso_wire_packets for s in qs),
            sum(s.sw_gso_packets for s in qs))


@pytest.mark.parametrize('mtu, mss, per_send', [(1500, 1460, 44), (9000, 8960, 7)])
def test_devmem_stream_over_tso(mtu: int, mss: int, per_send: int) -> None:
    """1 MiB from A's dma-buf over TSO: GSO skbs of `per_send` MSS (our data segments carry
    no TCP options, so MSS = MTU - 40; (65536 - 1 - MAX_TCP_HEADER 320) // MSS of them) once
    the congestion window allows, the NIC's counters agree with the driver's, and every
    check above."""
    async def body() -> None:
        ln = await link(mtu=mtu, tso=True)
        assert ln.a.nd.hw_features == ALL_TSO and ln.a.nd.features == ALL_TSO
        ln.a.hw.wire.keep_tx_outcomes = True
        data, reader, c, notes, calls = await _devmem_stream(ln, 1 << 20)
        cut = [len(o.wire_frames) for o in ln.a.hw.wire.tx_outcomes if len(o.wire_frames) > 1]
        # every call was queued right after the handshake, when the largest window B had
        # offered was its SYN-ACK's 65535: skbs of half that (`tcp_bound_to_half_wnd`), the
        # first cut to the initial congestion window of 10 (RFC 6928)
        assert max(cut) == (65535 >> 1) // mss <= per_send
        assert cut[0] == min(10, (65535 >> 1) // mss)
        frames = _check_common(ln, data, reader, notes, calls, mss)
        ids = [p[IP].id for p in frames]
        assert len(set(ids)) == len(ids), 'every segment its own IPv4 ID'
        sends, segs, sw = _gso_stats(ln.a)
        assert sends > 0 and sw == 0
        ctr = ln.a.hw.nic.tx.counters
        assert (ctr['TX_TSO_SENDS'], ctr['TX_TSO_SEGS']) == (sends, segs)
        # the data frames: the TSO sends' segments plus the frames sent alone (at most
        # one MSS of payload: the tail of a call, a retransmission)
        assert segs <= len(frames)
        assert ln.a.kernel.tcp.mib.RetransSegs == 0
        assert segs / sends > 2
        sk = c.sk
        assert sk is not None and sk.size_goal() == per_send * mss
    run(body())


def test_lost_segment_of_a_tso_send_is_retransmitted_alone() -> None:
    """The 5th data segment of the first full-size TSO send dropped on the wire: B's
    duplicate ACKs make A retransmit that one MSS (the same sequence number and payload),
    cut from the GSO skb (`tcp_fragment`), not the send; the stream ends exact."""
    async def body() -> None:
        ln = await link(tso=True)
        seen: list[int] = [0]
        dropped: list[Ether] = []
        orig = ln.a.hw.wire.on_tx
        assert orig is not None

        def on_tx(frame: bytes) -> None:
            pkt = Ether(frame)
            if TCP in pkt and _payload_len(pkt) > 0:
                seen[0] += 1
                if seen[0] == 25:                # inside a TSO send (the 2nd, cwnd 10 -> 20)
                    dropped.append(pkt)
                    ln.sent['ab'].append(frame)
                    ln.dropped += 1
                    return
            orig(frame)
        ln.a.hw.wire.on_tx = on_tx
        data, reader, c, notes, calls = await _devmem_stream(ln, 512 << 10)
        frames = _check_common(ln, data, reader, notes, calls, 1460)
        (lost,) = dropped
        again = [p for p in frames if p[TCP].seq == lost[TCP].seq]
        assert len(again) == 2, 'sent once in the TSO send, once again alone'
        assert bytes(again[1][TCP].payload)[:_payload_len(lost)] == \
            bytes(lost[TCP].payload)[:_payload_len(lost)]
        mib = ln.a.kernel.tcp.mib
        assert mib.RetransSegs == 1 and mib.TCPFastRetrans == 1 and mib.TCPTimeouts == 0
        assert _gso_stats(ln.a)[0] > 0
    run(body())


def test_lossy_wire_over_tso() -> None:
    """5 % loss both ways over TSO: timeouts (go-back-N re-segmented to the congestion
    window) and fast retransmits fill every hole; exact stream, every notification."""
    async def body() -> None:
        ln = await link(drop_rate=0.05, tso=True)
        data, reader, c, notes, calls = await _devmem_stream(ln, 512 << 10)
        _check_common(ln, data, reader, notes, calls, 1460)
        mib = ln.a.kernel.tcp.mib
        assert ln.dropped > 0 and mib.RetransSegs > 0
        assert _gso_stats(ln.a)[0] > 0
    run(body())


def test_tso_off_and_on_mid_stream() -> None:
    """`ethtool -K eth0 tso off` after the 2nd of 8 calls (a GSO skb already queued behind
    the window is cut in software), `tso on` after the 5th: TSO sends only while on, the
    stream exact throughout, every notification."""
    async def body() -> None:
        ln = await link(tso=True)
        marks: list[tuple[int, int, int]] = []

        def between(i: int) -> None:
            marks.append(_gso_stats(ln.a))
            if i == 1:
                ln.a.nd.set_features(parse_features_args('tso off'))
                assert ln.a.nd.features == 0
            if i == 4:
                ln.a.nd.set_features(parse_features_args('tso on'))
        ln.a.hw.wire.keep_tx_outcomes = True
        data, reader, c, notes, calls = await _devmem_stream(ln, 8 * (64 << 10), between=between)
        _check_common(ln, data, reader, notes, calls, 1460)
        cut = [len(o.wire_frames) for o in ln.a.hw.wire.tx_outcomes]
        assert max(cut) == 44, 'after the first call B offers 128 KiB: full 64 KiB GSO skbs'
        end = _gso_stats(ln.a)
        assert marks[1][0] > 0, 'TSO sends before the switch'
        assert marks[4][0] == marks[1][0], 'none while TSO was off'
        assert end[0] > marks[4][0], 'TSO sends again after tso on'
        ctr = ln.a.hw.nic.tx.counters
        assert (ctr['TX_TSO_SENDS'], ctr['TX_TSO_SEGS']) == end[:2]
    run(body())


def test_gso_skbs_queued_when_tso_goes_off_are_cut_in_software() -> None:
    """The first call's GSO skbs still on the write queue (beyond the initial congestion
    window) when TSO goes off reach the driver cut in software (`validate_xmit_skb` ->
    `skb_gso_segment`): valid MSS frames, the same bytes, the zero-copy references carried
    by the segments; later calls build MSS skbs; no TSO send after the switch."""
    async def body() -> None:
        ln = await link(tso=True)
        at_switch: list[tuple[int, int, int]] = []

        def off(i: int) -> None:
            if i == 0:
                sk = ln.a.kernel.tcp.established
                assert any(t.pcount > 1 for s in sk.values() for t in s.write_queue)
                at_switch.append(ln.a.hw.nic.tx.counters['TX_TSO_SENDS'])   # posted, sent
                ln.a.nd.set_features(parse_features_args('tso off'))
        data, reader, c, notes, calls = await _devmem_stream(ln, 256 << 10, after_send=off)
        _check_common(ln, data, reader, notes, calls, 1460)
        sends, segs, sw = _gso_stats(ln.a)
        assert sends == at_switch[0] == ln.a.hw.nic.tx.counters['TX_TSO_SENDS'] and sw > 0
    run(body())


def test_tso_send_larger_than_the_ring_is_cut_in_software() -> None:
    """A ring of 4 entries cannot hold a 64 KiB TSO send (17 descriptors and its context
    entry): the driver's `ndo_features_check` hands it to software GSO instead of waiting
    for room that never comes."""
    async def body() -> None:
        ln = await link(tso=True)
        await ln.a.nd.stop()
        ln.a.nd.tx_pending = 4                 # `ethtool -G eth0 tx 4`
        await ln.a.nd.open()
        data, reader, c, notes, calls = await _devmem_stream(ln, 128 << 10)
        _check_common(ln, data, reader, notes, calls, 1460)
        assert _gso_stats(ln.a)[2] > 0
    run(body())


def test_no_tso_nic_sends_mss_skbs() -> None:
    """A NIC without TSO: TSO fixed off, no GSO skb, the NIC sees no TSO send."""
    async def body() -> None:
        ln = await link()
        assert ln.a.nd.hw_features == 0 and ln.a.nd.features == 0
        data, reader, c, notes, calls = await _devmem_stream(ln, 256 << 10)
        _check_common(ln, data, reader, notes, calls, 1460)
        assert _gso_stats(ln.a) == (0, 0, 0)
        assert ln.a.hw.nic.tx.counters['TX_TSO_SENDS'] == 0
        sk = c.sk
        assert sk is not None and sk.size_goal() == sk.mss == 1460
    run(body())


def test_tso6_copy_send() -> None:
    """TCP over IPv6 (TSO6), an ordinary copying send of 300 kB (the payload linear in the
    skb head, so the TSO send's first segments are host pages): every frame a valid IPv6 TCP
    segment (scapy's checksum) of at most one MSS (1440), byte-exact at B, TSO sends cut
    by the NIC; `ethtool -K tso6`-only off (`tx-tcp6-segmentation off`) stops them."""
    from scapy.layers.inet6 import IPv6

    from driver.backends.model import ModelHw
    from driver.headers import AF_INET6
    from driver.kernel import Kernel
    from driver.netdev import Netdev
    from driver.socket import SOCK_STREAM

    async def body() -> None:
        hosts = []
        for i, (ip, mac) in enumerate((('fd00::1/64', '020000000a01'),
                                       ('fd00::2/64', '020000000a02'))):
            hw = ModelHw(seed=i)
            hw.nic.tx.tso = True
            k = Kernel()
            nd = Netdev(k, hw, name=f'eth{i}')
            nd.dev_addr = bytes.fromhex(mac)
            await nd.probe()
            await nd.set_ringparam(rx_pending=64, tcp_data_split=True, hds_thresh=0)
            await nd.open()
            nd.add_ip(ip)
            hosts.append(Host(hw, k, nd, ip.split('/')[0]))
        a, b = hosts
        ln = Link(a, b)
        a.hw.wire.on_tx = ln.wire('ab', b)
        b.hw.wire.on_tx = ln.wire('ba', a)
        a.kernel.neigh_add(b.ip, b.nd.dev_addr)
        b.kernel.neigh_add(a.ip, a.nd.dev_addr)
        lst = b.kernel.socket(AF_INET6, SOCK_STREAM)
        lst.bind(('::', 7000))
        lst.listen()
        c = a.kernel.socket(AF_INET6, SOCK_STREAM)
        await c.connect((b.ip, 7000))
        acc: list[Socket] = []

        def up() -> bool:
            if not acc:
                try:
                    acc.append(lst.accept()[0])
                except OSError:
                    return False
            return c.tcp_info().state == TcpState.ESTABLISHED
        await ln.run(up)
        s = acc[0]
        got = bytearray()

        def reader(want: int) -> Callable[[], bool]:
            def rd() -> bool:
                try:
                    while (x := s.recv(1 << 20)):
                        got.extend(x)
                except OSError:
                    pass
                return len(got) >= want
            return rd
        data = random.Random(6).randbytes(300_000)
        await c.send(data[:200_000])
        await ln.run(reader(200_000))
        sends = _gso_stats(a)[0]
        assert sends > 0
        at_off = a.hw.nic.tx.counters['TX_TSO_SENDS']
        assert at_off >= sends
        a.nd.set_features(parse_features_args('tx-tcp6-segmentation off'))
        await c.send(data[200_000:])
        await ln.run(reader(len(data)))
        assert bytes(got) == data
        mid = a.hw.nic.tx.counters['TX_TSO_SENDS']
        data_frames = 0
        for f in ln.sent['ab']:
            pkt = Ether(f)
            if IPv6 in pkt and TCP in pkt:
                check_tcp_frame(f)
                n = pkt[IPv6].plen - pkt[TCP].dataofs * 4
                assert n <= 1440
                data_frames += n > 0
        assert data_frames >= -(-len(data) // 1440)
        assert mid == at_off, 'no TSO send once TSO6 is off'
        assert c.sk is not None and c.sk.size_goal() == c.sk.mss == 1440, 'TSO6 off'
    run(body())


def test_rto_over_a_lost_tso_send_goes_back_n_in_segments() -> None:
    """The whole first TSO send (the initial window, 10 segments) lost: no duplicate ACK
    comes, the RTO fires once, and the lost window is sent again in slow start, cut from the
    GSO skb by the congestion window (1, 2, 4, ... segments): exactly the 10 lost segments
    are retransmitted, no second timeout, the stream exact."""
    async def body() -> None:
        ln = await link(tso=True)
        state = {'armed': False, 'left': 10}
        orig = ln.a.hw.wire.on_tx
        assert orig is not None

        def on_tx(frame: bytes) -> None:
            pkt = Ether(frame)
            if state['armed'] and state['left'] and TCP in pkt and _payload_len(pkt) > 0:
                state['left'] -= 1
                ln.sent['ab'].append(frame)
                ln.dropped += 1
                return
            orig(frame)
        ln.a.hw.wire.on_tx = on_tx
        # armed once the connection is up: the first data frames are the first send's
        data, reader, c, notes, calls = await _devmem_stream(
            ln, 128 << 10, on_connected=lambda: state.update(armed=True))
        _check_common(ln, data, reader, notes, calls, 1460)
        mib = ln.a.kernel.tcp.mib
        assert state['left'] == 0
        assert mib.TCPTimeouts == 1 and mib.RetransSegs == 10, (mib.TCPTimeouts, mib.RetransSegs)
    run(body())
