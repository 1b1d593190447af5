"""driver/devmem.py and driver/kernel.py: binding ids, net_iov geometry, lifetimes."""
from __future__ import annotations

import asyncio
import errno

import pytest

from driver.backends.model import ModelHw
from driver.devmem import DmabufDevmemProvider
from driver.errors import KernelError
from driver.kernel import Kernel
from driver.netdev import Netdev
from driver.netmem import NetIov

PAGE = 4096


async def netdev_on(kernel: Kernel, hw: ModelHw, name: str, open_: bool = True) -> Netdev:
    nd = Netdev(kernel, hw, name)
    await nd.probe()
    await nd.set_ringparam(rx_pending=16, tcp_data_split=True, hds_thresh=0)
    if open_:
        await nd.open()
    return nd


def test_ids_are_global_across_devices_and_cyclic() -> None:
    async def run() -> None:
        k = Kernel()
        hw1, hw2 = ModelHw(), ModelHw()
        nd1, nd2 = await netdev_on(k, hw1, 'eth0'), await netdev_on(k, hw2, 'eth1')
        assert (nd1.ifindex, nd2.ifindex) == (1, 2)
        nl1, nl2 = k.netlink_open(), k.netlink_open()
        fd1 = k.dma_buf_fd(hw1.dev.export_dmabuf(32 * PAGE))
        fd2 = k.dma_buf_fd(hw2.dev.export_dmabuf(32 * PAGE))
        assert await nl1.bind_rx(nd1.ifindex, fd1, [0]) == 1
        assert await nl2.bind_rx(nd2.ifindex, fd2, [0]) == 2
        await nl1.close()
        assert k.devmem_lookup(1) is None and k.devmem_lookup(2) is not None
        nl3 = k.netlink_open()
        assert await nl3.bind_rx(nd1.ifindex, fd1, [0]) == 3, 'ids are not reused at once'
        # a request refused before the dma-buf is looked up uses no id ...
        for bad in ((None, fd1, [0]), (99, fd1, [0]), (nd1.ifindex, 77, [0])):
            with pytest.raises(KernelError):
                await nl3.bind_rx(*bad)
        # ... one refused after it (here: already bound) has used one, as in Linux
        with pytest.raises(KernelError) as e:
            await nl3.bind_rx(nd1.ifindex, fd1, [0])
        assert e.value.errno == errno.EEXIST
        await nl3.close()
        assert await k.netlink_open().bind_rx(nd1.ifindex, fd1, [0]) == 5
    asyncio.run(run())


def test_net_iovs_cover_the_dmabuf_page_by_page() -> None:
    async def run() -> None:
        k = Kernel()
        hw = ModelHw()
        nd = await netdev_on(k, hw, 'eth0')
        dmabuf = hw.dev.export_dmabuf(24 * PAGE, chunk_size=4 * PAGE)
        assert len({c.bus_addr for c in dmabuf.chunks}) == 6
        bid = await k.netlink_open().bind_rx(nd.ifindex, k.dma_buf_fd(dmabuf), [0])
        binding = k.devmem_lookup(bid)
        assert binding is not None and binding.npages == 24
        owners = [c.owner for c in binding.chunk_pool.chunks]
        assert sorted(o.base_virtual for o in owners) == [i * 4 * PAGE for i in range(6)]
        seen = set()
        for o in owners:
            for niov in o.niovs:
                assert dmabuf.offset_to_bus(niov.virtual_addr) == niov.dma_addr
                assert niov.binding_id == bid
                seen.add(niov.virtual_addr)
        assert seen == {i * PAGE for i in range(24)}
        q = nd.rx_queue(0)
        assert isinstance(q.pay_pool.mp, DmabufDevmemProvider)      # type: ignore[union-attr]
        posted = list(q.pay_bufs.values())
        assert len(posted) == 16 and all(isinstance(n, NetIov) for n in posted)
        assert all(hw.dev.contains(n.dma_addr, PAGE) for n in posted)
        assert binding.pages_free == 24 - 16
        assert all(not hw.dev.contains(n.dma_addr) for n in q.hdr_bufs.values()), \
            'header buffers stay in host memory'
    asyncio.run(run())


def test_bind_while_down_takes_effect_at_open_and_fd_lifetime() -> None:
    async def run() -> None:
        k = Kernel()
        hw = ModelHw()
        nd = await netdev_on(k, hw, 'eth0', open_=False)
        free = hw.dev.free_bytes
        dmabuf = hw.dev.export_dmabuf(32 * PAGE)
        fd = k.dma_buf_fd(dmabuf)
        nl = k.netlink_open()
        bid = await nl.bind_rx(nd.ifindex, fd, [0])
        k.close(fd)
        assert hw.dev.free_bytes == free - 32 * PAGE, 'the binding holds the dma-buf'
        await nd.open()
        assert isinstance(nd.rx_queue(0).pay_pool.mp, DmabufDevmemProvider)  # type: ignore[union-attr]
        binding = k.devmem_lookup(bid)
        await nd.stop()
        assert binding is not None and not binding.freed and binding.pages_free == 32
        await nl.close()
        assert binding.freed and hw.dev.free_bytes == free
        with pytest.raises(KernelError) as e:
            k.close(fd)
        assert e.value.errno == errno.EBADF
    asyncio.run(run())
