"""driver/netdev.py: probe, ethtool settings, channels, the frames NAPI must treat specially."""
from __future__ import annotations

import asyncio
import errno

import pytest
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

from driver import regs
from driver.backends.model import ModelHw
from driver.errors import KernelError
from driver.hw import NicHw
from driver.kernel import Kernel
from driver.netdev import Netdev
from driver.socket import MSG_SOCK_DEVMEM
from tb.frames import pad, pattern
from tb.scenario import ModelEnv, Reader, Rig, TcpPeer


class NotANic:
    host = None

    async def read32(self, addr: int) -> int:
        return 0

    async def write32(self, addr: int, value: int) -> None:
        pass

    async def delay(self, ns: int) -> None:
        pass


def run(coro):
    return asyncio.run(coro)


def test_probe_refuses_another_device() -> None:
    with pytest.raises(KernelError) as e:
        run(Netdev(Kernel(), NotANic()).probe())  # type: ignore[arg-type]
    assert e.value.errno == errno.ENODEV


def test_ethtool_settings_and_limits() -> None:
    async def go() -> None:
        hw: ModelHw = ModelHw(num_rxq=2)
        as_nichw: NicHw = hw                           # ModelHw implements the interface
        assert as_nichw is hw
        nd = Netdev(Kernel(), hw)
        await nd.probe()
        assert nd.get_channels().max_combined == 2 and nd.dma_bytes == 8
        bad: list[dict[str, int]] = [{'rx_pending': 48}, {'rx_pending': 1},
                                     {'rx_pending': 1 << 15}, {'hds_thresh': 1 << 16},
                                     {'hdr_buf_len': 100}]
        for kw in bad:
            with pytest.raises(KernelError) as e:
                await nd.set_ringparam(**kw)  # type: ignore[arg-type]
            assert e.value.errno == errno.EINVAL
        for mtu in (67, 9217):
            with pytest.raises(KernelError):
                await nd.set_mtu(mtu)
        await nd.set_mtu(9000)
        assert await hw.read32(regs.RX_FRAME_LIMIT) == 9022
        await nd.open()
        assert [q.running for q in nd._rxqs] == [True, True]
        await nd.set_channels(1)
        assert [q.running for q in nd._rxqs] == [True, False]
        assert await hw.read32(regs.rxq_reg(1, regs.RXQ_CTRL)) == 0
        await nd.set_channels(2)
        assert [q.running for q in nd._rxqs] == [True, True]
        for count in (0, 3):
            with pytest.raises(KernelError):
                await nd.set_channels(count)
        await nd.set_ringparam(rx_pending=8, tcp_data_split=True, hds_thresh=0)
        assert await hw.read32(regs.rxq_reg(0, regs.RXQ_CTRL)) == 3
        assert len(nd.rx_queue(1).pay_bufs) == 8
        await nd.stop()
        assert not any(q.running for q in nd._rxqs)
    run(go())


def test_unsplit_frame_on_a_bound_queue_is_dropped_unread() -> None:
    """Headers too long for the parse window: the NIC delivers the frame unsplit, into device
    memory; the CPU cannot read its headers, so the driver drops and counts it."""
    async def go() -> None:
        env = ModelEnv()
        rig = await Rig.create(env, rx_pending=16)
        await rig.bind([0], pages=32)
        frame = pad(bytes(Ether() / IP(options=b'\x01' * 40) / TCP(options=[('NOP', None)] * 40)
                          / (b'z' * 100)))
        await rig.send([frame])
        await rig.pump()
        assert await rig.hw('RX_FRAMES') == 1
        q = rig.netdev.qstats(0)
        assert q.hds_unsplit_drops == 1 and q.packets == 1
        assert rig.netdev.rx_queue(0).pay_pool.in_use == 16     # type: ignore[union-attr]
        await rig.finish()
    run(go())


def test_unsplit_host_frames_pull_headers_and_trim_padding() -> None:
    """Split off on an unbound queue: the driver reads the headers out of the host page,
    the stack trims Ethernet padding (1-byte payload in a 60-byte frame)."""
    async def go() -> None:
        env = ModelEnv()
        rig = await Rig.create(env, rx_pending=16, split=False)
        lst = rig.listen()
        peer = TcpPeer()
        sock = await rig.connect(peer, lst)
        reader = Reader(sock)
        want = b''
        for n in (1, 5, 1000):
            data = pattern(n, start=len(want))
            want += data
            peer.write(data)
            frames = peer.next_frames(1 << 20)
            assert len(frames) == 1
            await rig.send(frames)
            await rig.pump()
            reader.drain()
        assert bytes(reader.got) == want and reader.ordinary_bytes == len(want)
        m_frames = rig.netdev.qstats(0).packets
        assert m_frames == 5 and rig.kernel.tcp.mib.InErrs == 0   # SYN, ACK, 3 segments
        with pytest.raises(KernelError) as e:
            sock.recvmsg(10, 0, MSG_SOCK_DEVMEM)
        assert e.value.errno == errno.EAGAIN
        await rig.finish()
    run(go())


def test_coalesce_registers_per_queue() -> None:
    """ethtool -C / --per-queue --coalesce reach RXQ[q].COALESCE; frames_max comes from the NIC."""
    from driver.ethtool import CoalesceAttr, parse_coalesce_args

    async def go() -> None:
        hw = ModelHw(num_rxq=2)
        nd = Netdev(Kernel(), hw)
        await nd.probe()
        await nd.open()
        assert nd.rx_frames_max == 16
        co = [regs.rxq_reg(q, regs.RXQ_COALESCE) for q in (0, 1)]
        assert [regs.RXQ_COALESCE_FRAMES.get(await hw.read32(a)) for a in co] == [1, 1]
        await nd.set_coalesce(parse_coalesce_args('rx-usecs 3 rx-frames 12'))
        assert [await hw.read32(a) & 0xFFFFFF for a in co] == [3 | 12 << 16] * 2
        await nd.set_per_queue_coalesce(0b10, {CoalesceAttr.RX_USECS: 9})
        assert [regs.RXQ_COALESCE_USECS.get(await hw.read32(a)) for a in co] == [3, 9]
        assert nd.get_coalesce(1).rx_coalesce_usecs == 9 and nd.get_coalesce(0).rx_coalesce_usecs == 3
        for bad in ({'rx-frames': 17}, {'rx-usecs': 65536}, {'rx-usecs': 0, 'rx-frames': 0},
                    {'tx-usecs-irq': 1}, {99: 1}, {'rx-usecs': -1}):
            with pytest.raises(KernelError) as e:
                await nd.set_coalesce(bad)            # type: ignore[arg-type]
            assert e.value.errno == errno.EINVAL, bad
        with pytest.raises(KernelError) as e:
            await nd.set_per_queue_coalesce(0b100, {'rx-usecs': 1})
        assert e.value.errno == errno.EINVAL
        assert [regs.RXQ_COALESCE_USECS.get(await hw.read32(a)) for a in co] == [3, 9]
        await nd.set_ringparam(rx_pending=128)        # queues restart: settings stay
        assert [regs.RXQ_COALESCE_USECS.get(await hw.read32(a)) for a in co] == [3, 9]
    run(go())
