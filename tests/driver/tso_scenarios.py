"""TCP segmentation offload scenarios (issue 21; docs/tx.md "TCP segmentation offload"),
written once for every backend like tests/driver/scenarios.py: the golden model with TSO
(`ModelEnv(tso=True)`, tests/driver/test_tx_tso.py) and nic_top under Verilator
(tests/driver/test_tso_rtl.py, whose RTL reads `TX_OFFLOADS.tso` 1).

What is expected comes from the spec, never from the NIC under test:

- every frame the NIC puts on its TX wire is the golden model's frame for what the driver
  posted (`TxSniffer`: the ring entries read back from host memory as the NIC reads them,
  the header and payload bytes behind them, `models.tso.tso_segments` for a `TSO` send,
  `models.tx.l4_checksum` for a frame), in order, byte for byte;
- independently of what the driver posted: every data segment at most the MSS the peer
  announced, each TSO send cut into ceil(payload / MSS) segments with that MSS, counted so
  by the NIC (the send's completion `tso_segs`, and `TX_TSO_SENDS` / `TX_TSO_SEGS` /
  `TX_FRAMES` over the run), no TSO error counted, and the stream on the wire equal to the
  dma-buf bytes the send calls named;
- MSG_ZEROCOPY devmem notifications [lo, hi]: none while a send is completed but not all
  acknowledged (also when every segment but its last is), none while it is acknowledged but
  its completion not yet reaped, then exactly the call; every call exactly once;
- `ethtool -K tso off` (IPv4) / `tx-tcp6-segmentation off` (IPv6) during the stream: no
  TSO send after the switch, GSO skbs already queued cut in software, new skbs MSS-sized;
  `on` again: TSO sends again;
- `tso_ring_sends`: the driver's TSO ring call (`TxQueue.xmit_tso`) with and without an
  802.1Q tag, IPv4 and IPv6, 1 to 45 segments: the segments scapy builds from scratch
  (tests/model/test_tso_model.py), one completion each (the reference driver's TCP stack has
  no VLAN devices, so tagged TSO sends are posted at the ring).
"""
from __future__ import annotations

import errno
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from scapy.layers.inet import TCP

from driver import regs
from driver.ethtool_features import ALL_TSO, NetdevFeature, parse_features_args
from driver.netdev import Netdev
from driver.socket import MSG_ERRQUEUE, MSG_ZEROCOPY, Socket
from driver.tx_queue import TxDone, TxQueue, TxQueueConfig, TxTso, split_at_pages
from models.formats import TX_DESC_BYTES, TxDesc, TxStatus
from models.host_memory import PAGE_SIZE
from models.tso import tso_segments
from models.tx import l4_checksum, parse_frame
from tb.scenario import SETTLE_NS, SETTLE_POLLS, DriverEnv, Rig, TcpPeer, Unsupported, expect_errno
from tb.scenario.tx import (check_tcp_frame, driver_seq_end, peer_acks_all, tcp_payload,
                            tx_connection, tx_wire, zc_cmsg)
from tests.driver.scenarios import Scenario

TSO_COUNTERS = ('TX_FRAMES', 'TX_TSO_SENDS', 'TX_TSO_SEGS', 'TX_ERR_TSO_HDR', 'TX_ERR_TSO_LEN',
                'TX_ERR_TSO_MSS')


@dataclass
class SniffedSend:
    """One frame or TSO send the driver posted and the NIC completed, as the NIC read it."""

    done: TxDone
    tso: bool
    mss: int
    payload: int
    """TSO: the payload bytes after the header (P); a frame: 0."""
    want: list[bytes]
    """The golden model's frames for it."""


@dataclass
class TxSniffer:
    """Reads back every send a driver TX queue completes: its ring entries from host memory
    (at the ring the queue's registers point to, before the slots are reused), the bytes its
    descriptors name (host memory, or device memory through the GPU accessor: no CPU read),
    and what the golden model sends for them. Hooks the queue's `on_complete`."""

    env: DriverEnv
    sends: list[SniffedSend] = field(default_factory=list)

    async def attach(self, q: TxQueue) -> None:
        reg = regs.txq_reg(q.index, regs.TXQ_DESC_RING)
        base = await self.env.hw.read32(reg + regs.RING_BASE_LO) | \
            await self.env.hw.read32(reg + regs.RING_BASE_HI) << 32
        size = 1 << await self.env.hw.read32(reg + regs.RING_SIZE)
        q.on_complete = lambda d: self._done(d, base, size)

    def _read(self, addr: int, n: int) -> bytes:
        dev = self.env.dev
        return dev.gpu.read(addr, n) if dev.contains(addr, n) else self.env.hw.host.read(addr, n)

    def _done(self, d: TxDone, base: int, size: int) -> None:
        entries = [self.env.hw.host.read(base + ((d.desc_idx + i) % size) * TX_DESC_BYTES,
                                         TX_DESC_BYTES) for i in range(d.ndesc)]
        f = parse_frame(entries, max_segs=d.ndesc, inline_en=False, tso=True)
        assert f is not None and f.entries == d.ndesc, f'completion {d}: not one frame'
        descs = [x for x in f.descs if x is not None]
        data = b''.join(self._read(x.addr, x.len) for x in descs if x.len)
        first = descs[0]
        if f.tso_on:
            ctx = f.tso_ctx
            assert ctx is not None
            self.sends.append(SniffedSend(d, True, ctx.mss, len(data) - ctx.hdr_len,
                                          tso_segments(data, first, ctx)))
        else:
            if first.csum:
                data, _ = l4_checksum(data, first.csum_start, first.csum_offset, first.csum_udp)
            self.sends.append(SniffedSend(d, False, 0, 0, [data]))

    @property
    def tso_sends(self) -> list[SniffedSend]:
        return [s for s in self.sends if s.tso]

    def want(self) -> list[bytes]:
        return [fr for s in self.sends for fr in s.want]


async def _counters(rig: Rig) -> dict[str, int]:
    hw = await rig.netdev.tx_hw_stats()
    return {n: hw[n] for n in TSO_COUNTERS}


def _sw_gso(nd: Netdev) -> int:
    return sum(q.stats.sw_gso_packets for q in nd.tx_queues)


async def _wait(env: DriverEnv, cond: Callable[[], bool], what: str) -> None:
    for _ in range(SETTLE_POLLS):
        if cond():
            return
        await env.hw.delay(SETTLE_NS)
    raise AssertionError(f'waited {SETTLE_POLLS} polls for {what}')


def _covered(notes: list[tuple[int, int]]) -> list[int]:
    return sorted(i for lo, hi in notes for i in range(lo, hi + 1))


async def devmem_tx_tso(env: DriverEnv, *, ipv6: bool = False) -> None:
    """A devmem MSG_ZEROCOPY stream over TSO (IPv4 with `tso`, IPv6 with TSO6) with the
    features switched off and on during it; every check of the module docstring."""
    rig, sock, peer, b = await tx_connection(env, ipv6=ipv6, pages=96)
    nd = rig.netdev
    feature = NetdevFeature.TSO6 if ipv6 else NetdevFeature.TSO
    name = 'tx-tcp6-segmentation' if ipv6 else 'tso'
    if not nd.hw_features & feature:
        raise Unsupported('the NIC has no TSO (TX_OFFLOADS.tso reads 0)')
    assert nd.features == ALL_TSO, 'TSO and TSO6 on by default when the NIC has them'
    wire = tx_wire(env)
    mss = peer.mss                     # what the peer's SYN announced (MTU - 40 / - 60)
    sk = sock.sk
    assert sk is not None
    assert sk.size_goal() > mss, 'the TCP layer builds GSO skbs with TSO on'
    sniff = TxSniffer(env)
    assert len(nd.tx_queues) >= 1
    for tq in nd.tx_queues:
        assert tq.ring is not None
        await sniff.attach(tq.ring)
    await rig.tx_sync()
    base, seq0 = len(wire), sk.snd_nxt
    c0 = await _counters(rig)
    calls: list[tuple[int, int]] = []
    notes: list[tuple[int, int]] = []

    async def send(off: int, n: int) -> None:
        assert await sock.sendmsg([(off, n)], zc_cmsg(b.id), MSG_ZEROCOPY) == n
        calls.append((off, n))

    def no_note(why: str) -> None:
        got = sock.zerocopy_notifications()
        assert not got, f'notification {got} {why}'

    # 1. one TSO send (6 segments, inside the initial window of 10), payload from an odd
    # offset across pages: sent and completed, nothing acknowledged: no notification
    await send(PAGE_SIZE - 1, 5 * mss + 77)
    await rig.tx_sync()
    assert [s.payload for s in sniff.tso_sends] == [5 * mss + 77], 'one TSO send of the call'
    expect_errno(errno.EAGAIN, sock.recvmsg, 0, 64, MSG_ERRQUEUE)
    # ... every segment but the last acknowledged: still none
    await rig.send([peer.ack_frame((seq0 + 5 * mss) & 0xFFFF_FFFF)])
    await rig.pump()
    assert sk.snd_una == (seq0 + 5 * mss) & 0xFFFF_FFFF and sk.rtx_queue
    no_note('before the last segment of the send was acknowledged')
    await peer_acks_all(rig, peer, sock, wire)
    notes += sock.zerocopy_notifications()
    assert notes == [(0, 0)], notes

    # 2. two 64 KiB calls: beyond the congestion window, GSO skbs wait on the write queue;
    # TSO goes off with them queued: they reach the driver cut in software
    await send(3 * PAGE_SIZE + 5, 64 << 10)
    await send(20 * PAGE_SIZE + 1, 64 << 10)
    assert any(s.pcount > 1 for s in sk.write_queue), 'GSO skbs queued behind the window'
    await rig.tx_sync()
    c_off, tso_off, sw0 = await _counters(rig), len(sniff.tso_sends), _sw_gso(nd)
    assert tso_off > 1
    nd.set_features(parse_features_args(f'{name} off'))
    assert not nd.features & feature and sk.size_goal() == sk.mss == mss
    await peer_acks_all(rig, peer, sock, wire)
    assert _sw_gso(nd) > sw0, 'queued GSO skbs cut in software'
    # 3. TSO off: MSS skbs only
    sw1 = _sw_gso(nd)
    await send(40 * PAGE_SIZE + 3, 30_000)
    await peer_acks_all(rig, peer, sock, wire)
    assert _sw_gso(nd) == sw1, 'no GSO skb built while TSO is off'
    c_on = await _counters(rig)
    assert len(sniff.tso_sends) == tso_off and c_on['TX_TSO_SENDS'] == c_off['TX_TSO_SENDS'], \
        'no TSO send while TSO was off'
    # 4. on again: TSO sends again
    nd.set_features(parse_features_args(f'{name} on'))
    assert nd.features & feature and sk.size_goal() > mss
    await send(50 * PAGE_SIZE + 7, 64 << 10)
    await peer_acks_all(rig, peer, sock, wire)
    assert len(sniff.tso_sends) > tso_off, 'TSO sends after tso on'
    notes += sock.zerocopy_notifications()
    assert _covered(notes) == list(range(len(calls))), notes

    # 5. a send acknowledged before its completion was reaped: the notification waits for
    # the completion (the driver's clone of the skb still holds the dma-buf reference)
    k = len(calls)
    await send(70 * PAGE_SIZE + 9, 3 * mss + 5)
    assert not sk.write_queue, 'the whole call within the window'
    end = sk.snd_nxt
    await _wait(env, lambda: driver_seq_end(wire[-4:], peer.flow.sport) == end, 'the call on the wire')
    await rig.send([peer.ack_frame(end)])
    await rig.settle()
    for _ in range(SETTLE_POLLS):
        await nd.napi_poll(0)                       # RX only: no TX completion reaped
        if sk.snd_una == end:
            break
        await env.hw.delay(SETTLE_NS)
    assert sk.snd_una == end and not sk.rtx_queue, 'everything acknowledged'
    assert any(tq.tx_buffers for tq in nd.tx_queues), 'its completion not reaped yet'
    no_note('before the send\'s completion was reaped')
    await rig.tx_sync()
    notes += sock.zerocopy_notifications()
    assert notes[-1] == (k, k) and _covered(notes) == list(range(len(calls))), notes
    await rig.tx_sync()

    # the wire: exactly the golden model's frames of what the driver posted, in order
    got = wire[base:]
    want = sniff.want()
    assert len(got) == len(want), f'{len(got)} frames on the wire, the model sends {len(want)}'
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f'frame {i} differs from the golden model'
    # ... and what holds whatever the driver posted: valid segments of at most one MSS, each
    # TSO send cut into ceil(P / MSS) (its completion, the NIC's count), with the peer's MSS
    stream = bytearray()
    for f in got:
        pkt = check_tcp_frame(f)
        pay = tcp_payload(pkt)
        assert len(pay) <= mss, f'a {len(pay)}-byte segment, MSS {mss}'
        if pay:
            assert pkt[TCP].seq == (seq0 + len(stream)) & 0xFFFF_FFFF, 'in order, no repeat'
            stream += pay
    want_bytes = b''.join(b.dmabuf.gpu_read(off, n) for off, n in calls)
    assert bytes(stream) == want_bytes, 'the stream on the wire = the dma-buf bytes named'
    tso = sniff.tso_sends
    for s in tso:
        assert s.mss == mss, f'TSO send with MSS {s.mss}, the peer announced {mss}'
        assert s.done.status == TxStatus.OK and s.done.tso_segs == -(-s.payload // mss), \
            f'a {s.payload}-byte TSO send: the NIC cut {s.done.tso_segs} segments'
    assert max(s.payload for s in tso) > 20 * mss, 'large GSO skbs once the window allows'
    c1 = await _counters(rig)
    inc = {n: (c1[n] - c0[n]) & 0xFFFF_FFFF for n in TSO_COUNTERS}
    assert inc == {'TX_FRAMES': len(want), 'TX_TSO_SENDS': len(tso),
                   'TX_TSO_SEGS': sum(-(-s.payload // mss) for s in tso),
                   'TX_ERR_TSO_HDR': 0, 'TX_ERR_TSO_LEN': 0, 'TX_ERR_TSO_MSS': 0}, inc
    qs = await nd.qstats_get()
    assert (qs['tx-hw-gso-packets'], qs['tx-hw-gso-wire-packets']) == \
        (inc['TX_TSO_SENDS'], inc['TX_TSO_SEGS'])
    assert qs['tx-hw-drops'] == 0 and rig.kernel.tcp.mib.RetransSegs == 0
    sock.close()
    await rig.finish()


TSO_RING_CASES = [(4, 0, 65160, 1448), (6, 5, 20000, 8928), (4, 7, 1, 536), (6, 0, 3000, 1440)]
"""(IP version, VLAN id (0: untagged), payload bytes, MSS): 45, 3, 1 and 3 segments."""


async def tso_ring_sends(env: DriverEnv) -> None:
    """`TxQueue.xmit_tso` of headers with and without an 802.1Q tag (headers in host memory,
    payload in device memory at an odd address across 4 KiB pages): the frames on the wire
    are the segments scapy builds (`expected_segments`), one completion per send with
    `tso_segs` = ceil(P / MSS), its descriptors and context entry freed; the NIC's
    counters agree."""
    from tests.model.test_tso_model import expected_segments, header, l3_offset, l4_offset, pattern
    tso_cap = regs.TX_OFFLOADS_TSO.get(await env.hw.read32(regs.TX_OFFLOADS))
    if not tso_cap:
        raise Unsupported('the NIC has no TSO (TX_OFFLOADS.tso reads 0)')
    wire = tx_wire(env)
    await env.hw.write32(regs.TX_FRAME_LIMIT, regs.TX_FRAME_LIMIT_MAX_FRAME_LEN.put(9100))
    q = TxQueue(env.hw, 0, TxQueueConfig(ring_log2=6))
    await q.alloc_tx_rings()
    await q.enable()
    hw0 = {n: await env.hw.read32(getattr(regs, n)) for n in TSO_COUNTERS}
    hbuf = env.hw.host.alloc(4096)
    pay = env.dev.base + 0x10_0000 + 0x7FD
    base = len(wire)
    want: list[bytes] = []
    for tag, (ipv, vlan, size, mss) in enumerate(TSO_RING_CASES):
        hdr = header(ipv, vlan, 'PA')
        payload = pattern(size, tag + 5)
        env.hw.host.write(hbuf, hdr)
        env.dev.gpu.write(pay, payload)
        segs = [(hbuf, len(hdr)), (pay, size)]
        tso = TxTso(mss=mss, hdr_len=len(hdr), l3_offset=l3_offset(vlan),
                    csum_start=l4_offset(ipv, vlan), ipv6=ipv == 6)
        await q.xmit_tso(segs, tag=tag, tso=tso)
        done: list[TxDone] = []
        for _ in range(SETTLE_POLLS):
            done += await q.clean_tx_irq()
            if done:
                break
            await env.hw.delay(SETTLE_NS)
        (d,) = done
        exp = expected_segments(ipv, vlan, 'PA', payload, mss)
        assert len(exp) == -(-size // mss)
        assert (d.status, d.tag, d.len, d.tso_segs) == (TxStatus.OK, tag, size, len(exp)), d
        assert d.ndesc == len(split_at_pages(segs)) + 1, 'its descriptors and the context entry'
        assert q.in_flight == 0
        want += exp
    await _wait(env, lambda: len(wire) - base >= len(want), 'the segments on the wire')
    got = wire[base:]
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f'segment {i} differs from scapy\'s'
    hw1 = {n: await env.hw.read32(getattr(regs, n)) for n in TSO_COUNTERS}
    inc = {n: (hw1[n] - hw0[n]) & 0xFFFF_FFFF for n in TSO_COUNTERS}
    assert inc == {'TX_FRAMES': len(want), 'TX_TSO_SENDS': len(TSO_RING_CASES),
                   'TX_TSO_SEGS': len(want), 'TX_ERR_TSO_HDR': 0, 'TX_ERR_TSO_LEN': 0,
                   'TX_ERR_TSO_MSS': 0}, inc
    assert env.dev.cpu_reads == 0


TSO_SCENARIOS: list[Scenario] = [
    Scenario('tso-ring-sends-vlan', tso_ring_sends),
    Scenario('devmem-tx-tso-ipv4', devmem_tx_tso),
    Scenario('devmem-tx-tso-ipv6', partial(devmem_tx_tso, ipv6=True)),
]
"""Need a NIC with TSO and `env.tx_frames`: tests/driver/test_tx_tso.py runs them on the
model with TSO, tests/driver/test_tso_rtl.py on nic_top."""
