"""Issue 6 acceptance on the RTL: devmem at both ends of a TCP connection through one nic_top
whose TX port is cabled to its own RX port (`loopback=True`), on the fast harness at both
widths and per beat (cocotbext-axi) at 512 bits.

One driver (one Kernel, one Netdev) owns two sockets: the sender, connected to 10.1.0.2:7000
and bound with bind-tx to dma-buf A, sends with MSG_ZEROCOPY from dma-buf offsets (bytes
the "GPU" wrote); the receiver, accepted on 7000, gets the flow on RX queue 3 (an n-tuple
rule; RSS spreads the rest over queues 0..2), which is bound to dma-buf B. Every segment,
both directions (data, SYN, SYN-ACK, ACKs, FIN), leaves through m_axis_tx and comes back
through s_axis_rx, with random MAC gaps, TX backpressure and DMA stalls
(TrafficProfile.rough; 10 % DMA stalls under the DMA slaves whose AWREADY waits for W,
tests.axi_slaves). Expectations (spec "Transmitting", docs/tx.md, docs/driver.md):

- dma-buf B receives exactly the bytes of dma-buf A named by the sends (GPU accessor);
- no CPU read of device memory (both dma-bufs live in the testbench's one GPU memory);
- every frame on the wire has a valid IPv4 header checksum and TCP checksum (scapy);
- the MSG_ZEROCOPY notifications cover every send call exactly once, and only once the
  data was acknowledged;
- the NIC's TX counters: TX_FRAMES = the frames that came out of m_axis_tx = the driver's
  completed frames (tx-packets), TX_BYTES their bytes, no TX error; RX: every looped frame
  was delivered (RX_FRAMES), nothing dropped, nothing retransmitted.

Under the DMA slaves whose AWREADY waits for W (TSO on, as everywhere) RX may drop frames, and
then only as RX_DROP_FIFO, every one counted: RX_FRAMES + RX_DROP_FIFO = the looped frames.
That is a rate effect, not a lost frame (docs/verification.md, "DMA slave behaviours"): the
receiver ACKs every segment, its ACKs wait in TX behind the sender's TSO send and then leave
back to back, about 0.6 minimum-size frames per cycle at 512 bits, while RX behind such a
slave places about one small frame per 7 cycles; the 64-frame metadata queue fills and the
last ACKs of the burst are dropped. TCP recovers (ACKs are cumulative; a dropped data segment
is retransmitted), so the run then checks recovery: every byte delivered once, in order,
byte-exact, every notification, no RST, and retransmissions only when something was dropped.
Since the driver's TCP charges TSO sends by segments and validates cwnd (issue 23, merged
2026-12-03), the same happens at 512 bits behind the default slave for some seeds (seed
494234633: 3 RX_DROP_FIFO drops; the driver of f587e28 drops none for that seed, same RTL),
so counted RX_DROP_FIFO drops are accepted behind every slave at 512 bits and the recovery
checks apply; at 64 bits the default slave must still drop nothing.
"""
from __future__ import annotations

import random
import time
from dataclasses import replace

import cocotb
import pytest
from cocotb.utils import get_sim_time

from driver import ethtool, regs
from driver.headers import AF_INET
from driver.kernel import Kernel
from driver.netdev import Netdev
from driver.socket import MSG_ZEROCOPY, SO_ZEROCOPY, SOCK_STREAM, SOL_SOCKET
from driver.tcp import TcpState
from models.host_memory import PAGE_SIZE
from tb.axi_wr_slave import AwReady, check_awready_exercised
from tb.fast.build import run_nic_test
from tb.fast.fast_tb import nic_tb_for
from tb.nic_tb import CLK_NS, NicTb, TrafficProfile
from tb.sim import pytest_test_name
from tb.scenario import Reader
from tb.scenario.tx import check_tcp_frame, tcp_payload, zc_cmsg
from tests.axi_slaves import awready_env, awready_params

NQ = 4
DEVMEM_Q = NQ - 1
PORT = 7000
TX_PAGES = 80                     # dma-buf A: 320 KiB
RX_PAGES = 128                    # dma-buf B
# (dma-buf A offset, length) of each sendmsg: odd offsets, one 1-byte send, 4 KiB crossings;
# 288 KiB + 7 bytes in all
SENDS = [(1, 100_000), (100_001, 60_000), (160_001, 1), (160_002, 96_921), (256_923, 38_000)]
POLLS = 200_000


async def _bring_up(tb: NicTb) -> tuple[Kernel, Netdev]:
    k = Kernel()
    nd = Netdev(k, tb)
    await nd.probe()
    assert nd.netmem_tx, 'the NIC has a TX path'
    await nd.set_channels(NQ)
    await nd.set_ringparam(rx_pending=64, tcp_data_split=True, hds_thresh=0)
    await nd.set_mtu(1500)
    await nd.open()
    nd.add_ip('10.1.0.1/24')          # the sender's address (the first: source selection)
    nd.add_ip('10.1.0.2/24')          # the receiver's
    k.neigh_add('10.1.0.1', nd.dev_addr)   # both "hosts" are behind the same MAC
    k.neigh_add('10.1.0.2', nd.dev_addr)
    await ethtool.set_rx_flow_hash(tb, {'ip4', 'tcp4', 'udp4', 'ip6', 'tcp6', 'udp6'})
    await ethtool.set_rxfh(tb, key=bytes(range(0x6D, 0x6D + 40)), num_queues=NQ)
    await ethtool.set_rxfh_equal(tb, NQ - 1, NQ)
    rules = ethtool.NtupleRules(tb, nd.real_num_rx_queues)
    await rules.clear()
    await rules.add(ethtool.NtupleSpec('tcp4', DEVMEM_Q, dst_ip='10.1.0.2', dst_port=PORT))
    return k, nd


@cocotb.test()
async def run_loopback(dut) -> None:
    # rough ports: random MAC RX gaps, TX backpressure and DMA stalls (30 %)
    profile = TrafficProfile.rough()
    if profile.awready is not AwReady.INDEPENDENT:
        # A slave that waits for W before AW serialises every burst's AW behind its data (the
        # NIC's W runs at most the presented burst ahead of the AW handshakes): a few cycles
        # per burst. With 30 % stalls on each DMA channel at MAC 512 bits that overflowed the
        # RX FIFO (5 of 411 frames dropped and counted), which this test's no-drop,
        # no-retransmission checks forbid; 10 % stalls, as the driver scenarios use.
        profile = replace(profile, dma_stall=0.1)
    tb = nic_tb_for(dut, cocotb.RANDOM_SEED, profile, loopback=True)
    await tb.reset()
    wall0, sim0 = time.monotonic(), get_sim_time('ns')
    k, nd = await _bring_up(tb)
    # Counted RX_DROP_FIFO drops are a rate effect behind a waiting slave, and at 512 bits
    # behind any slave (module docstring).
    drops_ok = profile.awready is not AwReady.INDEPENDENT or tb.data_bytes * 8 == 512
    nl = k.netlink_open()
    rx_buf = tb.dev.export_dmabuf(RX_PAGES * PAGE_SIZE, chunk_size=16 * PAGE_SIZE)
    rx_id = await nl.bind_rx(nd.ifindex, k.dma_buf_fd(rx_buf), [DEVMEM_Q])
    tx_buf = tb.dev.export_dmabuf(TX_PAGES * PAGE_SIZE, chunk_size=4 * PAGE_SIZE,
                                  rng=random.Random(cocotb.RANDOM_SEED))
    tx_id = await nl.bind_tx(nd.ifindex, k.dma_buf_fd(tx_buf))
    data = random.Random(cocotb.RANDOM_SEED ^ 0x5EED).randbytes(tx_buf.size)
    tx_buf.gpu_write(0, data)                          # the GPU wrote dma-buf A

    async def run_until(cond, what: str) -> None:      # type: ignore[no-untyped-def]
        for _ in range(POLLS):
            if cond():
                return
            n = await nd.poll()
            if not reader_drain() and not n:       # the application reads after every poll
                await tb.delay(100)
        raise AssertionError(f'{what}: not reached after {POLLS} polls')

    reader: Reader | None = None
    reading = True

    def reader_drain() -> int:
        return reader.drain() if reader is not None and reading else 0

    # --- the handshake, through the loop
    lst = k.socket(AF_INET, SOCK_STREAM)
    lst.bind(('0.0.0.0', PORT))
    lst.listen()
    sa = k.socket(AF_INET, SOCK_STREAM)
    await sa.connect(('10.1.0.2', PORT))
    ska = sa.sk
    assert ska is not None
    await run_until(lambda: ska.state == TcpState.ESTABLISHED and lst.sk.accept_queue,
                    'the handshake')
    sb, _ = lst.accept()
    skb = sb.sk
    assert skb is not None and skb.state == TcpState.ESTABLISHED
    reader = Reader(sb, {rx_id: rx_buf})
    sa.setsockopt(SOL_SOCKET, SO_ZEROCOPY, 1)

    # --- devmem data A -> B
    want = b''
    notes: list[tuple[int, int]] = []
    sim_send = get_sim_time('ns')
    for off, n in SENDS:
        assert await sa.sendmsg([(off, n)], zc_cmsg(tx_id), MSG_ZEROCOPY) == n
        want += data[off:off + n]
    total = len(want)
    ends = [sum(n for _, n in SENDS[:i + 1]) for i in range(len(SENDS))]  # stream offsets
    early: list[str] = []

    def all_notified() -> bool:
        got = sa.zerocopy_notifications()
        acked = (ska.snd_una - ska.iss - 1) & 0xFFFF_FFFF
        early.extend(f'call {hi} notified with {acked} of {ends[hi]} B acknowledged'
                     for _, hi in got if acked < ends[hi])
        notes.extend(got)
        return len(reader.got) == total and ska.snd_una == ska.write_seq \
            and sum(hi - lo + 1 for lo, hi in notes) >= len(SENDS)

    await run_until(all_notified, 'every byte received and acknowledged, every notification')
    sim_data = get_sim_time('ns')

    # --- close: FIN both ways, through the loop
    sa.close()
    await run_until(lambda: reader.eof, "the sender's FIN")
    reading = False                                    # B closes: nothing more to read
    sb.close()
    await run_until(lambda: skb.state == TcpState.CLOSED and ska.state == TcpState.TIME_WAIT,
                    'the close')
    for _ in range(2000):                              # the last ACK's completion, its RX
        await nd.poll()
        hw_tx = await tb.read32(regs.TX_FRAMES)
        hw_rx = await tb.read32(regs.RX_FRAMES)
        drops = await tb.read32(regs.RX_DROP_FIFO)
        if (not any(tq.tx_buffers for tq in nd.tx_queues) and len(tb.looped_frames) == hw_tx
                and hw_rx + drops == hw_tx and tb.rx_queued == 0):
            break
        await tb.delay(100)
    else:
        raise AssertionError(
            f'the last frames did not come around the loop: TX buffers not completed '
            f'{[len(tq.tx_buffers) for tq in nd.tx_queues]}, {len(tb.looped_frames)} frames looped, '
            f'TX_FRAMES {hw_tx}, RX_FRAMES {hw_rx}, {tb.rx_queued} queued on RX; RX {await nd.hw_stats()}')
    sim_end = get_sim_time('ns')

    # --- the bytes: dma-buf B holds what the GPU wrote in A, read by the GPU only
    assert bytes(reader.got) == want, 'dma-buf B received the bytes of dma-buf A'
    assert want == b''.join(tx_buf.gpu_read(o, n) for o, n in SENDS)
    assert reader.devmem_bytes == total and reader.linear_bytes == 0 \
        and reader.ordinary_bytes == 0 and reader.ids_seen == {rx_id}
    assert tb.dev.cpu_reads == 0, 'the CPU read device memory'
    # --- notifications: every call exactly once, in order, after its data was acknowledged
    ids = [i for lo, hi in notes for i in range(lo, hi + 1)]
    assert ids == list(range(len(SENDS))), f'notifications {notes}'
    assert not early, early
    # --- the wire and the counters
    wire = tb.looped_frames
    pkts = [check_tcp_frame(f) for f in wire]          # IPv4 + TCP checksums (scapy)
    from scapy.layers.inet import TCP
    to_b = [p for p in pkts if p[TCP].dport == PORT]
    data_frames = [p for p in to_b if tcp_payload(p)]
    retrans = k.tcp.mib.RetransSegs
    if retrans == 0:
        sent = b''.join(tcp_payload(p) for p in data_frames)
        assert sent == want, (f'the data frames carry {len(sent)} B, {total} B sent; '
                              f'{k.tcp.mib.as_dict()}; RX {await nd.hw_stats()}')
    else:
        # Retransmitted segments repeat stream bytes: each data frame must carry the stream's
        # bytes at its sequence number, and together they cover the stream.
        covered = bytearray(total)
        for p in data_frames:
            off = (p[TCP].seq - ska.iss - 1) & 0xFFFF_FFFF
            pay = tcp_payload(p)
            assert pay == want[off:off + len(pay)], f'data frame at stream offset {off}: wrong bytes'
            covered[off:off + len(pay)] = b'\x01' * len(pay)
        assert all(covered), 'the data frames do not cover the stream'
    
    hw = await nd.tx_hw_stats()
    qs = await nd.qstats_get()
    assert hw['TX_FRAMES'] == len(wire), 'TX_FRAMES = frames that came out of m_axis_tx'
    assert hw['TX_BYTES'] == sum(len(f) for f in wire)
    assert qs['tx-packets'] == len(wire), "the driver's completed frames = frames sent"
    # No TX error counted; TX_TSO_SENDS / TX_TSO_SEGS count the TSO sends (TSO is on here).
    assert all(hw[n] == 0 for n in hw if n not in ('TX_FRAMES', 'TX_BYTES', 'TX_TSO_SENDS', 'TX_TSO_SEGS')), hw
    assert hw['TX_TSO_SEGS'] <= hw['TX_FRAMES'] and (hw['TX_TSO_SENDS'] == 0) == (hw['TX_TSO_SEGS'] == 0), hw
    assert qs['tx-hw-drops'] == 0 and qs['tx-dropped'] == 0
    rxhw = await nd.hw_stats()
    drops = rxhw['RX_DROP_FIFO']
    assert drops == 0 or drops_ok, f'{drops} frames dropped at the RX FIFO behind the default slave at {tb.data_bytes * 8} bits'
    assert rxhw['RX_FRAMES'] + drops == len(wire), 'every looped frame delivered or counted dropped'
    assert all(v == 0 for n, v in rxhw.items() if n.startswith('RX_DROP') and n != 'RX_DROP_FIFO'), rxhw
    assert len(to_b) - drops <= nd.qstats(DEVMEM_Q).packets <= len(to_b), \
        'the flow to B on the bound queue only'
    assert retrans == 0 or drops > 0, f'{retrans} retransmissions without a drop'
    assert k.tcp.mib.OutRsts == 0
    assert skb.state == TcpState.CLOSED and ska.state == TcpState.TIME_WAIT
    check_awready_exercised(tb)
    data_cycles = (sim_data - sim_send) / CLK_NS
    dut._log.info(
        'loopback DATA_W=%d: %d B devmem A->B in %d data frames; %d frames through the loop '
        '(%d to B, %d to A: SYN, ACKs, FINs included), TX_FRAMES %d, %d notifications %s; '
        'first sendmsg to the last notification %.0f cycles (%.2f B/cycle), whole run %.0f '
        'cycles; RX_DROP_FIFO %d, %d retransmissions; %.1f s wall',
        tb.data_bytes * 8, total, len(data_frames), len(wire), len(to_b), len(wire) - len(to_b),
        hw['TX_FRAMES'], len(notes), notes, data_cycles, total / data_cycles,
        (sim_end - sim0) / CLK_NS, drops, retrans, time.monotonic() - wall0)


@pytest.mark.rtl
@pytest.mark.timeout(900)
@pytest.mark.parametrize('data_w,testbench,awready', awready_params(
    [(64, 'fast'), (512, 'fast'), (512, 'per-beat')], [(64, 'fast'), (512, 'fast')],
    # per-beat (cocotbext-axi partners, Python per beat: ~40 s of simulation) in make regress;
    # make test keeps the per-beat testbench in the RX, TX and pyuvm tests
    marks_of=lambda p: [pytest.mark.regress_only] if p[1] == 'per-beat' else []))
def test_loopback_devmem_both_ends(data_w: int, testbench: str, awready: str | None) -> None:
    """Also on the fast harness under DMA slaves whose AWREADY waits for W (first or last beat)."""
    run_nic_test(testbench, 'tests.rtl.test_loopback', {'DATA_W': data_w}, pytest_test_name(),
                 extra_env=awready_env(awready))
