"""Devmem TX on the golden model: the TX ring alone (TxQueue), the route check (ENODEV), a DMA
read error, and a loopback of two NICs with devmem on both ends. Expectations come from
docs/tx.md and the spec's "Transmitting" section."""
from __future__ import annotations

import asyncio
import errno
import random

import pytest

from driver import regs
from driver.backends.model import ModelHw
from driver.kernel import Kernel
from driver.netdev import Netdev
from driver.socket import MSG_SOCK_DEVMEM, MSG_ZEROCOPY, SO_ZEROCOPY, SOL_SOCKET
from driver.headers import AF_INET
from driver.socket import SOCK_STREAM
from driver.tcp import TcpState
from driver.tx_queue import NetdevTx, TxCsum, TxFrameError, TxQueue, TxQueueConfig, split_at_pages
from models.formats import TxStatus
from models.host_memory import PAGE_SIZE
from tb.scenario import ModelEnv, Reader, expect_errno
from tb.scenario.tx import check_tcp_frame, peer_acks_all, tcp_payload, tx_connection, zc_cmsg


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


# --- the ring ---------------------------------------------------------------------------------

def test_split_at_pages() -> None:
    assert split_at_pages([(4095, 2)]) == [(4095, 1), (4096, 1)]
    assert split_at_pages([(0, 4096)]) == [(0, 4096)]
    assert split_at_pages([(100, 10000)]) == [(100, 3996), (4096, 4096), (8192, 1908)]
    assert split_at_pages([(5, 0)]) == []


async def _ring(log2: int = 3) -> tuple[ModelHw, TxQueue, int]:
    hw = ModelHw()
    q = TxQueue(hw, 0, TxQueueConfig(ring_log2=log2))
    await q.alloc_tx_rings()
    await q.enable()
    buf = hw.host.alloc(3 * PAGE_SIZE)
    frame = bytes(12) + b'\x08\x00' + bytes(100)
    hw.host.write(buf, frame)
    return hw, q, buf


def test_ring_full_busy_doorbell_batching_and_completions() -> None:
    async def body() -> None:
        hw, q, buf = await _ring(3)                    # 8 descriptors
        done = []
        q.on_complete = done.append
        # a 114-byte frame posted as 3 segments across a 4 KiB boundary -> 4 descriptors? no:
        # the buffer is page-aligned, segments are cut only where they cross a page
        segs = [(buf, 14), (buf + 14, 50), (buf + 64, 50)]
        assert await q.xmit_frame(segs, tag=7, xmit_more=True) == NetdevTx.OK
        assert q.doorbells == 0 and hw.wire.tx_frames == [], 'xmit_more holds the doorbell'
        assert await q.xmit_frame(segs, tag=8) == NetdevTx.OK
        assert q.doorbells == 1 and len(hw.wire.tx_frames) == 2
        # 6 descriptors posted, 2 free: a 3-descriptor frame does not fit
        assert q.desc_unused == 2
        assert await q.xmit_frame(segs, tag=9) == NetdevTx.BUSY and q.stopped
        got = await q.clean_tx_irq()
        assert [(d.tag, d.status) for d in got] == [(7, TxStatus.OK), (8, TxStatus.OK)]
        assert done == got and q.desc_unused == 8 and not q.stopped
        assert await q.xmit_frame(segs, tag=9) == NetdevTx.OK
        assert [d.tag for d in await q.clean_tx_irq()] == [9]
        assert hw.wire.tx_frames[0] == hw.host.read(buf, 114)
        # a segment crossing 4 KiB is cut in two descriptors; more than 16 is refused
        assert await q.xmit_frame([(buf + 4096 - 60, 120)], tag=1) == NetdevTx.OK
        (d,) = await q.clean_tx_irq()
        assert d.ndesc == 2 and d.ok
        with pytest.raises(TxFrameError):
            await q.xmit_frame([(buf + i * 64, 1) for i in range(17)], tag=2)
        # wrap the ring many times: indices are free-running
        for i in range(40):
            assert await q.xmit_frame([(buf, 114)], tag=i) == NetdevTx.OK
            assert [x.tag for x in await q.clean_tx_irq()] == [i]
        await q.disable()
    run(body())


def test_checksum_offload_request_is_honoured() -> None:
    """The driver's TxCsum reaches the NIC: the field at csum_start + csum_offset comes out
    as the complement of the sum from csum_start (RFC 1071), the seed included."""
    async def body() -> None:
        hw, q, buf = await _ring()
        frame = bytearray(bytes(12) + b'\x08\x00' + bytes(range(100)))
        frame[34 + 16:34 + 18] = b'\x12\x34'           # the seed
        hw.host.write(buf, bytes(frame))
        await q.xmit_frame([(buf, len(frame))], tag=3, csum=TxCsum(34, 16))
        (d,) = await q.clean_tx_irq()
        out = hw.wire.tx_frames[-1]
        words = bytes(frame[34:]) + b'\0'
        total = sum(int.from_bytes(words[i:i + 2], 'big') for i in range(0, len(words) - 1, 2))
        while total >> 16:
            total = (total & 0xFFFF) + (total >> 16)
        assert int.from_bytes(out[50:52], 'big') == (~total & 0xFFFF) == d.csum
    run(body())


# --- sockets on the model ---------------------------------------------------------------------

def test_route_through_another_device_is_enodev() -> None:
    """The TX binding is for eth0; a route to the peer through eth1 makes sendmsg ENODEV,
    which comes after the offset check (EFAULT)."""
    async def body() -> None:
        env = ModelEnv()
        rig, sock, peer, b = await tx_connection(env, pages=16)
        other = Netdev(rig.kernel, ModelHw())
        await other.probe()
        await other.open()
        sk = sock.sk
        assert sk is not None and sk.raddr is not None
        rig.kernel.route_add(f'{sk.raddr}/32', other)
        sk.dst_dev = rig.kernel.tcp.route(sk.raddr)     # the socket's cached route is redone
        assert sk.dst_dev is other
        try:
            await sock.sendmsg([(0, 100)], zc_cmsg(b.id), MSG_ZEROCOPY)
        except OSError as e:
            assert e.errno == errno.ENODEV
        else:
            raise AssertionError('sent through the wrong device')
        try:
            await sock.sendmsg([(b.dmabuf.size, 1)], zc_cmsg(b.id), MSG_ZEROCOPY)
        except OSError as e:
            assert e.errno == errno.EFAULT
        else:
            raise AssertionError('sent past the dma-buf')
        await rig.finish()
    run(body())


def test_dma_read_error_is_retransmitted_on_rto() -> None:
    """A frame the NIC fails (DMA read error) is not sent; its data stays in the retransmit
    queue, so no notification yet. After the RTO (RFC 6298: backoff, the dma-buf read again
    by the NIC, not by the CPU) it goes out with the dma-buf bytes; the peer's ACK brings
    the notification."""
    async def body() -> None:
        env = ModelEnv()
        rig, sock, peer, b = await tx_connection(env, pages=16)
        wire = env.tx_frames
        sk = sock.sk
        assert sk is not None
        bad_page = b.dmabuf.offset_to_bus(5 * PAGE_SIZE)
        env.hw.space.add_error_range(bad_page + 100, 8)
        before = len(wire)
        await sock.sendmsg([(5 * PAGE_SIZE, 1000)], zc_cmsg(b.id), MSG_ZEROCOPY)
        assert len(wire) == before, 'a failed frame is not sent'
        await rig.netdev.poll()
        expect_errno(errno.EAGAIN, sock.recvmsg, 0, 64, 0x2000)
        qs = await rig.netdev.qstats_get()
        assert qs['tx-hw-drops'] == 1 and qs['tx-hw-drop-errors'] == 0
        assert (await rig.netdev.tx_hw_stats())['TX_DMA_RD_ERR'] == 1
        assert rig.kernel.tcp.mib.TCPTxHwErrors == 1
        env.hw.space.clear_error_ranges()
        rto = sk.rto_ns
        assert 200_000_000 <= rto <= 1_000_000_000, 'RFC 6298 bounds (Linux RTO_MIN 200 ms)'
        env.hw.clock.advance(rto - 1)
        await rig.netdev.poll()
        assert len(wire) == before, 'not before the RTO'
        env.hw.clock.advance(1)
        await rig.netdev.poll()
        assert len(wire) == before + 1 and rig.kernel.tcp.mib.TCPTimeouts == 1
        assert sk.rto_ns == 2 * rto, 'backoff doubles the RTO'
        pkt = check_tcp_frame(wire[-1])
        assert tcp_payload(pkt) == b.dmabuf.gpu_read(5 * PAGE_SIZE, 1000)
        expect_errno(errno.EAGAIN, sock.recvmsg, 0, 64, 0x2000)
        await peer_acks_all(rig, peer, sock, wire)
        assert sock.zerocopy_notifications() == [(0, 0)]
        await sock.sendmsg([(6 * PAGE_SIZE, 1000)], zc_cmsg(b.id), MSG_ZEROCOPY)
        pkt = check_tcp_frame(wire[-1])
        assert tcp_payload(pkt) == b.dmabuf.gpu_read(6 * PAGE_SIZE, 1000)
        await peer_acks_all(rig, peer, sock, wire)
        assert sock.zerocopy_notifications() == [(1, 1)]
        assert env.dev.cpu_reads == 0
        await rig.finish()
    run(body())


def test_stop_with_frames_in_flight_then_retransmit() -> None:
    """Frames posted but not completed when the device stops are dropped and counted; the
    data is still in the retransmit queue, so no notification. Once the device is up again
    the RTO sends it again (then the next hole on the partial ACK, RFC 6582), and the ACK
    brings the notification."""
    async def body() -> None:
        env = ModelEnv()
        rig, sock, peer, b = await tx_connection(env, pages=16)
        wire = env.tx_frames
        env.hw.nic.tx_autorun = False              # the NIC does not get to send them
        await sock.sendmsg([(0, 3000)], zc_cmsg(b.id), MSG_ZEROCOPY)
        await rig.netdev.stop()
        assert (await rig.netdev.qstats_get())['tx-dropped'] == 3
        assert sock.zerocopy_notifications() == []
        env.hw.nic.tx_autorun = True
        await rig.netdev.open()
        before = len(wire)
        env.hw.clock.advance(2_000_000_000)
        await peer_acks_all(rig, peer, sock, wire)
        got = b''.join(tcp_payload(check_tcp_frame(f)) for f in wire[before:])
        assert got == b.dmabuf.gpu_read(0, 3000)
        assert sock.zerocopy_notifications() == [(0, 0)]
        await rig.finish()
    run(body())


@pytest.mark.parametrize('mtu', [1500, 9000])
def test_loopback_devmem_both_ends(mtu: int) -> None:
    """Host A sends from dma-buf A through NIC A; its TX wire is NIC B's RX wire (and back).
    B has devmem RX on queue 0. The bytes the GPU wrote in A arrive in B's dma-buf unchanged,
    no CPU read on either side, the ACKs come back to A and A's notifications arrive."""
    async def body() -> None:
        hosts = []
        for i, (ip, mac) in enumerate((('10.1.0.1/24', '020000000a01'),
                                       ('10.1.0.2/24', '020000000a02'))):
            hw = ModelHw(seed=i)
            k = Kernel()
            nd = Netdev(k, hw, name=f'eth{i}')
            nd.dev_addr = bytes.fromhex(mac)
            await nd.probe()
            await nd.set_ringparam(rx_pending=64, tcp_data_split=True, hds_thresh=0)
            await nd.set_mtu(mtu)
            await nd.open()
            nd.add_ip(ip)
            hosts.append((hw, k, nd))
        (hwa, ka, nda), (hwb, kb, ndb) = hosts
        hwa.wire.on_tx = hwb.wire.send
        hwb.wire.on_tx = hwa.wire.send
        ka.neigh_add('10.1.0.2', ndb.dev_addr)
        kb.neigh_add('10.1.0.1', nda.dev_addr)
        # B: devmem RX; A: devmem TX
        rx_buf = hwb.dev.export_dmabuf(128 * PAGE_SIZE)
        rx_id = await kb.netlink_open().bind_rx(ndb.ifindex, kb.dma_buf_fd(rx_buf), [0])
        tx_buf = hwa.dev.export_dmabuf(32 * PAGE_SIZE, chunk_size=4 * PAGE_SIZE)
        tx_id = await ka.netlink_open().bind_tx(nda.ifindex, ka.dma_buf_fd(tx_buf))
        data = random.Random(mtu).randbytes(tx_buf.size)
        tx_buf.gpu_write(0, data)
        lst = kb.socket(AF_INET, SOCK_STREAM)
        lst.bind(('0.0.0.0', 7000))
        lst.listen()
        sa = ka.socket(AF_INET, SOCK_STREAM)
        await sa.connect(('10.1.0.2', 7000))
        for _ in range(3):
            await ndb.poll()
            await nda.poll()
        assert sa.tcp_info().state == TcpState.ESTABLISHED
        sb, _ = lst.accept()
        sa.setsockopt(SOL_SOCKET, SO_ZEROCOPY, 1)
        reader = Reader(sb, {rx_id: rx_buf})
        want = b''
        for off, n in ((3, 40000), (40003, 24000), (64003, 1)):
            assert await sa.sendmsg([(off, n)], zc_cmsg(tx_id), MSG_ZEROCOPY) == n
            want += data[off:off + n]
            for _ in range(3):
                await ndb.poll()
                reader.drain()
                await nda.poll()
        assert bytes(reader.got) == want
        assert reader.devmem_bytes == len(want) and reader.ordinary_bytes == 0
        assert sa.zerocopy_notifications() == [(0, 2)]
        ska = sa.sk
        assert ska is not None and ska.snd_una == ska.snd_nxt, 'B acknowledged everything'
        assert hwa.dev.cpu_reads == 0 and hwb.dev.cpu_reads == 0
        qa = await nda.qstats_get()
        assert qa['tx-hw-drops'] == 0 and qa['tx-dropped'] == 0
        assert (await ndb.qstats_get())['rx-hw-drops'] == 0
    run(body())
