"""dma-buf bindings for RX and TX (net/core/devmem.c, net/core/netdev-genl.c).

`NetlinkSocket.bind_rx` is the netlink command `bind-rx` of the "netdev" family
(`netdev_nl_bind_rx_doit`). Its checks, in order, and their errors:

1. missing ifindex, dma-buf fd or queue list, or an empty queue list: EINVAL
2. no such device (or not present): ENODEV
3. `net_devmem_bind_dmabuf`: the fd is not a dma-buf: EBADF; a binding id is allocated
   (cyclic, from 1, unique across devices); the scatter list becomes gen_pool chunks of
   PAGE_SIZE net_iovs; a scatter entry whose length is not page-aligned: EINVAL
4. per queue, `net_devmem_bind_dmabuf_to_queue`: not an RX queue EINVAL; index >= the RX
   queues in use ERANGE "rx queue index out of range"; split not enabled EINVAL
   "tcp-data-split is disabled"; threshold not zero EINVAL "hds-thresh is not zero"; an XDP
   program attached EEXIST; queue already bound EEXIST; queue used by AF_XDP EBUSY; then the
   queue is restarted (`netdev_rx_queue_restart`) with a page pool whose memory provider is
   the binding.

Any failure unbinds what was done, queues included. There is no unbind command: closing the
netlink socket unbinds every binding it made (`netdev_nl_sock_priv_destroy`).

Lifetime: unbind erases the id at once (`net_devmem_lookup_dmabuf` fails) and restarts the
queues with host memory. The binding object lives on while anything holds a reference: each
page pool that uses it holds one, and a page pool lives until its last buffer is back, so
buffers still in sockets or held by user tokens keep it alive, and those tokens can still be
returned. When the last reference goes, the gen_pool is destroyed and the dma-buf reference
dropped (`__net_devmem_dmabuf_binding_free`).
"""
from __future__ import annotations

import errno
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Iterable

from driver.errors import KernelError, check_int
from driver.genpool import GenPool
from driver.netmem import PAGE_SHIFT, NetIov, Netmem
from driver.page_pool import PagePool
from models.host_memory import PAGE_SIZE

if TYPE_CHECKING:
    from driver.kernel import DmaBufFile, Kernel
    from driver.netdev import MpParams, Netdev
    from models.device_memory import DmaBuf


class DmaDirection(IntEnum):
    """`enum dma_data_direction` of a binding: RX bindings are written by the NIC, TX
    bindings read by it."""

    DMA_TO_DEVICE = 1
    DMA_FROM_DEVICE = 2


class QueueType(IntEnum):
    """`enum netdev_queue_type`."""

    RX = 0
    TX = 1


@dataclass(frozen=True)
class QueueId:
    """The nested `queue-id` attribute of bind-rx: queue type and index."""

    type: QueueType
    id: int


@dataclass(eq=False)
class DmabufGenpoolChunkOwner:
    """`struct dmabuf_genpool_chunk_owner`: one scatter-list entry of the bound dma-buf."""

    base_virtual: int
    """Offset of the entry inside the dma-buf."""
    base_dma_addr: int
    num_niovs: int
    binding: NetDevmemDmabufBinding
    niovs: list[NetIov] = field(default_factory=list)


@dataclass(eq=False)
class NetDevmemDmabufBinding:
    """`struct net_devmem_dmabuf_binding`."""

    kernel: Kernel
    dev: Netdev
    file: DmaBufFile
    id: int = 0
    chunk_pool: GenPool[DmabufGenpoolChunkOwner] = field(
        default_factory=lambda: GenPool(PAGE_SHIFT))
    bound_rxqs: list[int] = field(default_factory=list)
    direction: DmaDirection = DmaDirection.DMA_FROM_DEVICE
    tx_vec: list[NetIov] | None = None
    """TX bindings only (`binding->tx_vec`): the net_iov of every page of the dma-buf, by
    `offset // PAGE_SIZE`, so sendmsg turns a dma-buf offset into a bus address at once."""
    ref: int = 1
    freed: bool = False
    warnings: list[str] = field(default_factory=list)

    @property
    def dmabuf(self) -> DmaBuf:
        return self.file.dmabuf

    @property
    def npages(self) -> int:
        return self.chunk_pool.size() // PAGE_SIZE if not self.freed else 0

    @property
    def pages_free(self) -> int:
        """Pages in the gen_pool, not handed to any page pool."""
        return self.chunk_pool.avail() // PAGE_SIZE if not self.freed else 0

    # --- refcount ---------------------------------------------------------------------------

    def memory_provider(self) -> DmabufDevmemProvider:
        """`rxq->mp_params.mp_ops` for a bound queue's new payload page pool."""
        return DmabufDevmemProvider(self)

    def get(self) -> None:
        """`net_devmem_dmabuf_binding_get`."""
        if self.freed:
            raise RuntimeError(f'binding {self.id}: get after free')
        self.ref += 1

    def put(self) -> None:
        """`net_devmem_dmabuf_binding_put`: free on the last reference."""
        self.ref -= 1
        if self.ref == 0:
            self._free()

    def _free(self) -> None:
        """`__net_devmem_dmabuf_binding_free`."""
        size, avail = self.chunk_pool.size(), self.chunk_pool.avail()
        if size != avail:
            self.warnings.append(f"can't destroy genpool. size={size}, avail={avail}")
        else:
            self.chunk_pool.destroy()
        self.freed = True
        self.file.put()

    # --- net_iov allocation -----------------------------------------------------------------

    def alloc_net_iov(self) -> NetIov | None:
        """`net_devmem_alloc_dmabuf`: one PAGE_SIZE net_iov, first fit, or None."""
        got = self.chunk_pool.alloc_owner(PAGE_SIZE)
        if got is None:
            return None
        dma_addr, owner = got
        niov = owner.niovs[(dma_addr - owner.base_dma_addr) >> PAGE_SHIFT]
        niov.pp = None
        niov.pp_ref_count = 0
        return niov

    def free_net_iov(self, niov: NetIov) -> None:
        """`net_devmem_free_dmabuf`."""
        if not self.chunk_pool.has_addr(niov.dma_addr, PAGE_SIZE):
            self.warnings.append(f'free of {niov!r}: not in this binding')
            return
        self.chunk_pool.free(niov.dma_addr, PAGE_SIZE)

    # --- TX ---------------------------------------------------------------------------------

    @property
    def is_tx(self) -> bool:
        return self.tx_vec is not None

    def get_niov_at(self, virt_addr: int) -> tuple[NetIov, int, int] | None:
        """`net_devmem_get_niov_at`: the net_iov holding dma-buf offset `virt_addr`, the
        offset inside it and the bytes left in its page; None at or past the dma-buf size."""
        if self.tx_vec is None or not 0 <= virt_addr < self.dmabuf.size:
            return None
        off = virt_addr % PAGE_SIZE
        return self.tx_vec[virt_addr // PAGE_SIZE], off, PAGE_SIZE - off

    def get_net_iov(self, niov: Netmem) -> None:
        """`net_devmem_get_net_iov`: a TX skb fragment holds the binding (the fragment's
        netmem, always a net_iov of this binding; only the binding's count moves)."""
        self.get()

    def put_net_iov(self, niov: Netmem) -> None:
        """`net_devmem_put_net_iov`; an skb's `frag_unref` for its fragments."""
        self.put()


class DmabufDevmemProvider:
    """`dmabuf_devmem_ops`: the memory provider of a bound queue's payload page pool."""

    def __init__(self, binding: NetDevmemDmabufBinding) -> None:
        self.binding = binding

    def init(self, pool: PagePool) -> None:
        """`mp_dmabuf_devmem_init`: order-0 pages only; the pool holds a binding ref."""
        if pool.params.buf_size != PAGE_SIZE:
            raise KernelError(errno.E2BIG, 'devmem page pools hand out PAGE_SIZE buffers only')
        self.binding.get()

    def alloc_netmems(self, pool: PagePool) -> NetIov | None:
        return self.binding.alloc_net_iov()

    def release_netmem(self, pool: PagePool, netmem: Netmem) -> None:
        assert isinstance(netmem, NetIov)
        self.binding.free_net_iov(netmem)

    def destroy(self, pool: PagePool) -> None:
        self.binding.put()


# ------------------------------------------------------------------------------------------
# bind / unbind
# ------------------------------------------------------------------------------------------

def net_devmem_bind_dmabuf(kernel: Kernel, dev: Netdev, dmabuf_fd: int,
                           direction: DmaDirection = DmaDirection.DMA_FROM_DEVICE,
                           ) -> NetDevmemDmabufBinding:
    """Create a binding: dma-buf reference, id, gen_pool of the scatter list (and, for TX,
    the `tx_vec` of every page)."""
    file = kernel.dma_buf_get(dmabuf_fd)
    binding = NetDevmemDmabufBinding(kernel, dev, file, direction=direction)
    binding.id = kernel.devmem_id_alloc(binding)
    virtual = 0
    owners: list[DmabufGenpoolChunkOwner] = []
    for chunk in binding.dmabuf.chunks:  # the attachment's sg_table
        if chunk.length % PAGE_SIZE:
            kernel.devmem_bindings.pop(binding.id, None)
            file.put()
            raise KernelError(errno.EINVAL, 'dma-buf scatterlist entry is not PAGE_SIZE aligned')
        owner = DmabufGenpoolChunkOwner(virtual, chunk.bus_addr, chunk.length // PAGE_SIZE,
                                        binding)
        binding.chunk_pool.add_owner(chunk.bus_addr, chunk.bus_addr, chunk.length, owner)
        owner.niovs = [NetIov(owner, i) for i in range(owner.num_niovs)]
        owners.append(owner)
        virtual += chunk.length
    if direction == DmaDirection.DMA_TO_DEVICE:
        binding.tx_vec = [niov for owner in owners for niov in owner.niovs]
    return binding


async def net_devmem_bind_dmabuf_to_queue(dev: Netdev, rxq_idx: int,
                                          binding: NetDevmemDmabufBinding) -> None:
    """Checks of one queue, then restart it with the binding as its memory provider."""
    await net_mp_open_rxq(dev, rxq_idx, binding)
    binding.bound_rxqs.append(rxq_idx)


async def net_mp_open_rxq(dev: Netdev, rxq_idx: int, mp_params: MpParams) -> None:
    """`__net_mp_open_rxq` (net/core/netdev_rx_queue.c): the checks every memory provider
    (a dma-buf binding, an io_uring zcrx ifq) passes to be installed on an RX queue, in the
    kernel's order, then the queue restart; on a failed restart the queue keeps its old
    provider."""
    # The netlink attribute is a u32: a negative index is as out of range as a large one.
    if not isinstance(rxq_idx, int) or rxq_idx < 0 or rxq_idx >= dev.real_num_rx_queues:
        raise KernelError(errno.ERANGE, 'rx queue index out of range')
    if not dev.hds_enabled:
        raise KernelError(errno.EINVAL, 'tcp-data-split is disabled')
    if dev.ringparam.hds_thresh:
        raise KernelError(errno.EINVAL, 'hds-thresh is not zero')
    if dev.xdp_prog is not None:
        raise KernelError(errno.EEXIST, 'unable to custom memory provider to device with XDP '
                                        'program attached')
    rxq = dev.rx_queue(rxq_idx)
    if rxq.mp_params is not None:
        raise KernelError(errno.EEXIST, 'designated queue already memory provider bound')
    if rxq.xsk_pool is not None:
        raise KernelError(errno.EBUSY, 'designated queue already in use by AF_XDP')
    rxq.mp_params = mp_params
    try:
        await dev.rx_queue_restart(rxq_idx)
    except KernelError:
        rxq.mp_params = None
        raise


async def net_mp_close_rxq(dev: Netdev, rxq_idx: int, old: MpParams) -> None:
    """`__net_mp_close_rxq`: remove `old` from the queue and restart it with host pages (the
    old page pool lives on while its buffers are out)."""
    if not 0 <= rxq_idx < dev.num_rx_queues:
        return
    rxq = dev.rx_queue(rxq_idx)
    if rxq.mp_params is not old:
        return
    rxq.mp_params = None
    await dev.rx_queue_restart(rxq_idx)


async def net_devmem_unbind_dmabuf(binding: NetDevmemDmabufBinding) -> None:
    """Erase the id, give the queues back to host memory, drop the netlink reference."""
    kernel, dev = binding.kernel, binding.dev
    if kernel.devmem_bindings.get(binding.id) is binding:
        del kernel.devmem_bindings[binding.id]
    for rxq_idx in list(binding.bound_rxqs):
        await net_mp_close_rxq(dev, rxq_idx, binding)
    binding.bound_rxqs.clear()
    binding.put()


def net_devmem_get_binding(kernel: Kernel, dmabuf_id: int) -> NetDevmemDmabufBinding:
    """`net_devmem_get_binding`, the id half: the TX binding behind `dmabuf_id`; EINVAL for
    an unknown (or unbound) id and for an RX binding. (The route check, ENODEV, is made by
    sendmsg after the dma-buf range check; see driver/socket.py.)"""
    binding = kernel.devmem_lookup(dmabuf_id)
    if binding is None or not binding.is_tx:
        raise KernelError(errno.EINVAL, f'dma-buf id {dmabuf_id} is not a TX binding')
    return binding


# ------------------------------------------------------------------------------------------
# the netlink side
# ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class QueueInfo:
    """Reply of the netlink `queue-get` command."""

    ifindex: int
    type: QueueType
    id: int
    dmabuf: int | None
    """Id of the binding the queue's memory provider uses, if any."""
    io_uring: bool = False
    """The queue's memory provider is an io_uring zcrx ifq (the `io-uring` attribute)."""


class NetlinkSocket:
    """A generic-netlink socket of the "netdev" family. Bindings made through it belong to
    it (`struct netdev_nl_sock`) and are unbound when it closes."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.bindings: list[NetDevmemDmabufBinding] = []
        self.closed = False

    async def __aenter__(self) -> NetlinkSocket:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def bind_rx(self, ifindex: int | None, fd: int | None,
                      queues: Iterable[QueueId | int] | None) -> int:
        """`bind-rx`: bind the dma-buf behind `fd` to RX `queues` of device `ifindex`;
        returns the binding id. A plain int in `queues` means an RX queue."""
        if self.closed:
            raise KernelError(errno.EBADF, 'netlink socket is closed')
        if queues is not None and (isinstance(queues, (str, bytes)) or not hasattr(queues, '__iter__')):
            raise KernelError(errno.EINVAL, f'queues {queues!r}: a list of queue ids')
        qlist = None if queues is None else [
            q if isinstance(q, QueueId) else QueueId(QueueType.RX, check_int(q, 'queue id')) for q in queues]
        if ifindex is not None:
            check_int(ifindex, 'ifindex', err=errno.ENODEV)
        if ifindex is None or fd is None or not qlist:
            missing = 'ifindex' if ifindex is None else 'fd' if fd is None else 'queues'
            raise KernelError(errno.EINVAL, f'missing attribute: {missing}')
        dev = self.kernel.dev_get_by_index(ifindex)
        if dev is None or not dev.present:
            raise KernelError(errno.ENODEV, f'no device with ifindex {ifindex}')
        binding = net_devmem_bind_dmabuf(self.kernel, dev, fd)
        try:
            for q in qlist:
                if q.type != QueueType.RX:
                    raise KernelError(errno.EINVAL, 'queue type is not rx')
                await net_devmem_bind_dmabuf_to_queue(dev, q.id, binding)
        except KernelError:
            await net_devmem_unbind_dmabuf(binding)
            raise
        self.bindings.append(binding)
        return binding.id

    async def bind_tx(self, ifindex: int | None, fd: int | None) -> int:
        """`bind-tx` (`netdev_nl_bind_tx_doit`): bind the dma-buf behind `fd` for
        transmission through device `ifindex`; returns the binding id (from the same id space
        as bind-rx). Checks, in order: missing ifindex or fd EINVAL; no such device, or not
        present, ENODEV; a driver without netmem TX EOPNOTSUPP; then as bind-rx: not a dma-buf
        EBADF, a scatter entry not page-aligned EINVAL. No queue is involved: the binding
        belongs to the device, and only sockets routed through it may use it."""
        if self.closed:
            raise KernelError(errno.EBADF, 'netlink socket is closed')
        if ifindex is None or fd is None:
            raise KernelError(errno.EINVAL, f'missing attribute: {"ifindex" if ifindex is None else "fd"}')
        check_int(ifindex, 'ifindex', err=errno.ENODEV)
        dev = self.kernel.dev_get_by_index(ifindex)
        if dev is None or not dev.present:
            raise KernelError(errno.ENODEV, f'no device with ifindex {ifindex}')
        if not dev.netmem_tx:
            raise KernelError(errno.EOPNOTSUPP, 'Driver does not support netmem TX')
        binding = net_devmem_bind_dmabuf(self.kernel, dev, fd, DmaDirection.DMA_TO_DEVICE)
        self.bindings.append(binding)
        return binding.id

    def queue_get(self, ifindex: int, qid: int, qtype: QueueType = QueueType.RX) -> QueueInfo:
        """`queue-get`: which binding (if any) an RX queue uses."""
        dev = self.kernel.dev_get_by_index(ifindex)
        if dev is None:
            raise KernelError(errno.ENODEV, f'no device with ifindex {ifindex}')
        if qtype != QueueType.RX or not 0 <= qid < dev.real_num_rx_queues:
            raise KernelError(errno.EINVAL, 'no such queue')
        mp = dev.rx_queue(qid).mp_params
        if isinstance(mp, NetDevmemDmabufBinding):
            return QueueInfo(ifindex, qtype, qid, mp.id)
        return QueueInfo(ifindex, qtype, qid, None, io_uring=mp is not None)

    async def close(self) -> None:
        """Closing the socket unbinds everything it bound."""
        if self.closed:
            return
        self.closed = True
        while self.bindings:
            await net_devmem_unbind_dmabuf(self.bindings.pop())
