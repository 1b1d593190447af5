"""The net device: bring-up, ethtool-style configuration, per-queue page pools and NAPI.

What a Linux NIC driver provides, on the NicHw interface (driver/hw.py), so the same code runs
on the golden model and on the RTL:

- `probe` (the PCI probe + `register_netdev`): checks `ID`, reads `CAPS`, gets an ifindex.
- `open`/`stop` (`ndo_open`/`ndo_stop`): programs the frame limit, starts/stops RX queues.
- ethtool: `get/set_ringparam` (rx ring size, `tcp-data-split`, `hds-thresh`),
  `get/set_coalesce` (`rx-usecs`, `rx-frames`: the NIC's completion batches, docs/rx-rules.md
  section 5; `tx-usecs`, `tx-frames`: TX completion moderation, docs/tx.md), `get/set_priv_flags` (`rx-mpb`: multi-packet payload buffers),
  `get/set_channels` (RX queues in use), `get/set_features` (`ethtool -k`/`-K tso on|off`:
  driver/ethtool_features.py), `set_mtu`. While a queue is bound to a dma-buf,
  disabling split, a non-zero threshold and channel counts below a bound queue are refused
  with EINVAL, as `ethnl_set_rings` and `ethnl_set_channels` do.
- The queue management ops (`struct netdev_queue_mgmt_ops`): `rx_queue_restart` allocates the
  new queue's page pools first (`ndo_queue_mem_alloc`; the payload pool's memory provider is
  the queue's binding when bound), then stops the old queue (`ndo_queue_stop`: rings off,
  posted buffers back to the old pools, pools destroyed) and starts the new one
  (`ndo_queue_start`: rings programmed, buffers posted).
- NAPI: `napi_poll` turns completions into skbs (header bytes copied out of the host header
  buffer, payload referenced as page-pool fragments, never read), hands them to the TCP layer
  and refills both rings from the page pools; when a pool is dry the refill stops and counts
  `alloc_fail`, the NIC then drops and counts (RX_DROP_NO_PAY_BUF). With multi-packet payload
  buffers a posted buffer keeps the ring's reference until the NIC has finished it (a later
  completion names a new buffer at offset 0, or its strides are used up), and each frame's
  piece takes its own reference (`page_pool_ref_netmem`), so a page (a net_iov) shared by
  several frames returns to its pool only when the ring, every skb and every devmem token on
  it have let go.

There are no interrupts on NicHw: whoever runs the driver calls `poll` (all queues) or
`napi_poll` (one queue) when it wants the driver to look at the rings.
"""
from __future__ import annotations

import errno
import ipaddress
from struct import error as struct_error
from collections import deque
from dataclasses import asdict, dataclass, field, replace
from enum import IntEnum
from typing import TYPE_CHECKING, Awaitable, Callable, TypeAlias

from driver import regs
from driver.errors import KernelError
from driver.ethtool import COALESCE_FIELDS, CoalesceAttr, EthtoolCoalesce, coalesce_attrs
from driver.ethtool_features import (NO_FEATURES, NetdevFeature, apply_features, features_report,
                                     hw_features_from_offloads)
from driver.gso import (GSO_LEGACY_MAX_SIZE, GsoHeaders, gso_headers, skb_gso_segment,
                        tso_seed_header, tso_wire_bytes)
from driver.headers import ETH_HLEN, VLAN_HLEN, HeaderError, eth_get_headlen
from driver.hw import NicHw
from driver.netmem import Netmem, Page
from driver.page_pool import HostPageAllocator, HostPageProvider, MemoryProvider, PagePool, PagePoolParams
from driver.rx_queue import (COALESCE_USECS_MAX, MAX_RING_LOG2, RxBuffer, RxFrame, RxQueue,
                             RxQueueConfig)
from driver.skbuff import IpSummed, SkBuff, SkbFrag
from driver.tx_queue import (NetdevTx, TxCsum, TxDone, TxFrameError, TxQueue, TxQueueConfig,
                             TxTso, split_at_pages)
from models.formats import (TX_TSO_MAX_HDR, TX_TSO_MAX_PAYLOAD, TX_TSO_MAX_SEGS, TX_TSO_MIN_MSS,
                            TxStatus)
from models.host_memory import PAGE_SIZE

if TYPE_CHECKING:
    from driver.devmem import NetDevmemDmabufBinding
    from driver.neigh import NeighResponder
    from driver.kernel import Kernel
    from driver.zcrx import IoZcrxIfq

    MpParams: TypeAlias = 'NetDevmemDmabufBinding | IoZcrxIfq'
    """`struct pp_memory_provider_params` (`mp_ops` + `mp_priv`): the object that makes the
    queue's payload memory provider (`memory_provider()`) and says what it has left
    (`pages_free`)."""

ID_MAGIC = 0x444D4E43
MIN_MTU = 68
MAX_MTU = 9216
DESC_CACHE = 16
"""Payload descriptors a frame may use at most (docs/rx-rules.md section 4)."""
RX_MAX_PENDING = 1 << (MAX_RING_LOG2 - 1)
"""The completion ring is twice the buffer rings, and at most 2^15 entries."""
HDS_THRESH_MAX = 0xFFFF
HDR_PULL_WINDOW = 256
"""Bytes the driver looks at to find the header length of a frame the NIC did not split."""

COUNTERS = ('RX_FRAMES', 'RX_DROP_RUNT', 'RX_DROP_FCS', 'RX_DROP_OVERSIZE', 'RX_DROP_FIFO',
            'RX_DROP_HDR_ERR', 'RX_DROP_QUEUE_OFF', 'RX_DROP_NO_HDR_BUF', 'RX_DROP_NO_PAY_BUF',
            'RX_DROP_CQ_FULL', 'RX_DMA_WR_ERR', 'RX_DMA_RD_ERR', 'RX_DESC_ERR')
"""The NIC's RX counters (docs/registers.md) `hw_stats` reads."""
TX_COUNTERS = ('TX_FRAMES', 'TX_BYTES', 'TX_ERR_BAD_SEG', 'TX_ERR_BAD_LEN', 'TX_ERR_BAD_CSUM',
               'TX_DMA_RD_ERR', 'TX_DESC_RD_ERR', 'TX_TSO_SENDS', 'TX_TSO_SEGS', 'TX_ERR_TSO_HDR',
               'TX_ERR_TSO_LEN', 'TX_ERR_TSO_MSS')
"""The NIC's TX counters (docs/tx.md) `tx_hw_stats` reads; the TSO ones read 0 on a NIC
without TSO."""
ETH_ZLEN = 60
"""Shortest frame the NIC sends (without FCS): the driver pads (`eth_skb_pad`)."""
TX_HEAD_BUF = 256
"""Host buffer for a header copy of up to this many bytes; longer heads take whole pages."""
HW_DROP_ERRORS = (TxStatus.BAD_SEG, TxStatus.BAD_LEN, TxStatus.BAD_CSUM, TxStatus.TSO_BAD_HDR,
                  TxStatus.TSO_BAD_LEN, TxStatus.TSO_BAD_MSS)
"""Completion statuses of frames the NIC refused as malformed (`tx-hw-drop-errors`)."""
TX_QUEUE_LEN = 1000
"""`txqueuelen`: frames the qdisc holds while the ring is full; beyond that it drops."""
DEFAULT_MAC = bytes.fromhex('020000000002')
"""The address test frames are sent to (tb/frames.py MAC_DST)."""
PRIV_FLAGS = ('rx-mpb',)
"""`ethtool --show-priv-flags`: `rx-mpb`, multi-packet payload buffers (docs/rx-rules.md)."""
RX_MPB_STRIDE = 64
"""Stride of multi-packet payload buffers, bytes (a module parameter of this driver)."""
RX_COALESCE_PARAMS = frozenset({CoalesceAttr.RX_USECS, CoalesceAttr.RX_MAX_FRAMES})
"""The RX part of `supported_coalesce_params` (`ETHTOOL_COALESCE_USECS |
ETHTOOL_COALESCE_MAX_FRAMES` for RX)."""
TX_COALESCE_PARAMS = frozenset({CoalesceAttr.TX_USECS, CoalesceAttr.TX_MAX_FRAMES})
"""The TX part (`TXQ.COALESCE`, docs/tx.md "Completion moderation"), when the NIC has TX."""


class TcpDataSplit(IntEnum):
    """`ETHTOOL_TCP_DATA_SPLIT_*`: the ethtool `tcp-data-split` setting."""

    UNKNOWN = 0
    """Not set by the administrator: the driver's default (this driver: no split)."""
    DISABLED = 1
    ENABLED = 2


@dataclass(frozen=True)
class RingParam:
    """`ethtool -g/-G`: ring sizes, split, threshold (`struct kernel_ethtool_ringparam`)."""

    rx_pending: int = 256
    """Entries of each buffer ring (header and payload); the completion ring has twice."""
    rx_buf_len: int = PAGE_SIZE
    """Payload buffer size: one page (a net_iov when bound)."""
    hdr_buf_len: int = 256
    """Header buffer size (host memory)."""
    tcp_data_split: TcpDataSplit = TcpDataSplit.UNKNOWN
    hds_thresh: int = 0
    rx_max_pending: int = RX_MAX_PENDING
    hds_thresh_max: int = HDS_THRESH_MAX


@dataclass(frozen=True)
class Channels:
    """`ethtool -l`: this NIC has combined channels only (RX queues here)."""

    max_combined: int
    combined_count: int


@dataclass
class RxQueueStats:
    """Per-queue counters (`struct netdev_queue_stats_rx` names where they exist)."""

    packets: int = 0
    bytes: int = 0
    alloc_fail: int = 0
    """Refills that could not get a buffer from a page pool (`rx-alloc-fail`)."""
    hds_unsplit_drops: int = 0
    """Frames the NIC did not split whose payload buffer is device memory: the CPU cannot
    read their headers, so they are dropped (gve counts these as `rx_hsplit_unsplit_pkt`)."""
    stop_drops: int = 0
    """Frames completed but not yet polled when the queue was stopped or restarted."""

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(eq=False)
class Napi:
    """`struct napi_struct` of one RX queue: page pools recycle directly only from it."""

    dev_name: str
    queue_idx: int


@dataclass(eq=False)
class NetdevRxQueue:
    """`struct netdev_rx_queue` plus the driver's state of that queue."""

    index: int
    napi: Napi
    mp_params: MpParams | None = None
    """The memory provider installed on the queue (`rxq->mp_params`): a dma-buf binding or
    an io_uring zcrx ifq (driver/zcrx.py)."""
    xsk_pool: object | None = None
    """An AF_XDP socket using the queue (bind-rx refuses such a queue with EBUSY)."""
    ring: RxQueue | None = None
    hdr_pool: PagePool | None = None
    pay_pool: PagePool | None = None
    hdr_bufs: dict[int, Netmem] = field(default_factory=dict)
    pay_bufs: dict[int, Netmem] = field(default_factory=dict)
    """Buffers posted to the NIC, by buffer id."""
    hdr_ids: list[int] = field(default_factory=list)
    pay_ids: list[int] = field(default_factory=list)
    """Buffer ids free to post."""
    pay_order: deque[int] = field(default_factory=deque)
    """Multi-packet payload buffers: the ids posted and not finished, in ring order (the
    first is the NIC's current buffer once it has used it)."""
    coalesce: EthtoolCoalesce = field(
        default_factory=lambda: EthtoolCoalesce(rx_max_coalesced_frames=1))
    """The queue's coalescing settings (`ethtool --per-queue ... --coalesce`)."""
    stats: RxQueueStats = field(default_factory=RxQueueStats)

    @property
    def running(self) -> bool:
        return self.ring is not None


@dataclass
class TxQueueStats:
    """Per-queue TX counters (`struct netdev_queue_stats_tx` names)."""

    packets: int = 0
    bytes: int = 0
    hw_drops: int = 0
    """Frames the NIC completed with an error status: not sent (`tx-hw-drops`)."""
    hw_drop_errors: int = 0
    """The part of `hw_drops` the NIC refused as malformed (`tx-hw-drop-errors`:
    BAD_SEG, BAD_LEN, BAD_CSUM); the rest are DMA read errors."""
    dropped: int = 0
    """Frames dropped before the NIC saw them: qdisc full, device down, unsendable frame,
    or posted but never completed when the queue was stopped (`tx_dropped`)."""
    stop: int = 0
    """Times the ring was full (`tx-stop`: `netif_tx_stop_queue`)."""
    wake: int = 0
    """Times a clean made room again after a stop (`tx-wake`)."""
    hw_gso_packets: int = 0
    """TSO sends the NIC completed and sent (`tx-hw-gso-packets`); each also counts its
    segments in `packets`."""
    hw_gso_bytes: int = 0
    """Their bytes as the driver posted them, one header each (`tx-hw-gso-bytes`)."""
    hw_gso_wire_packets: int = 0
    """The segments the NIC cut from them (`tx-hw-gso-wire-packets`: the completions'
    `tso_segs`)."""
    hw_gso_wire_bytes: int = 0
    """Those segments' bytes on the wire, a header each (`tx-hw-gso-wire-bytes`)."""
    sw_gso_packets: int = 0
    """GSO skbs cut in software before the driver (`skb_gso_segment`: TSO off for their IP
    version, or a send the NIC could not take)."""

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class TxBuffer:
    """`struct *_tx_buffer`: what the driver must release when a frame completes."""

    skb: SkBuff
    head_bufs: list[Page]
    """Host buffers holding the copy of the skb head the NIC reads (the `dma_map_single`)."""
    len: int
    tso: GsoHeaders | None = None
    """A TSO send: its headers (the completion's `tso_segs` say how many frames went)."""
    gso_size: int = 0


@dataclass(eq=False)
class NetdevTxQueue:
    """`struct netdev_queue` plus the driver's ring state and the qdisc in front of it."""

    index: int
    ring: TxQueue | None = None
    tx_buffers: dict[int, TxBuffer] = field(default_factory=dict)
    """Frames posted and not completed, by tag."""
    free_tags: list[int] = field(default_factory=list)
    qdisc: deque[SkBuff] = field(default_factory=deque)
    """`pfifo_fast` of one band: skbs waiting for ring room (`dev_requeue_skb`)."""
    stats: TxQueueStats = field(default_factory=TxQueueStats)
    tx_usecs: int = 0
    tx_frames: int = 1
    """The queue's completion moderation (ethtool `tx-usecs`, `tx-frames`; reset: off)."""

    @property
    def running(self) -> bool:
        return self.ring is not None


def _log2(n: int) -> int:
    return n.bit_length() - 1


class Netdev:
    """One NIC as Linux sees it (`struct net_device` and its driver)."""

    def __init__(self, kernel: Kernel, hw: NicHw, name: str = 'eth0', *,
                 rx_mpb_stride: int = RX_MPB_STRIDE) -> None:
        self.kernel = kernel
        self.hw = hw
        self.name = name
        if rx_mpb_stride < 16 or rx_mpb_stride & (rx_mpb_stride - 1) or rx_mpb_stride > PAGE_SIZE:
            raise KernelError(errno.EINVAL, f'rx_mpb_stride {rx_mpb_stride}: a power of two, '
                                            f'16 .. {PAGE_SIZE}')
        self.rx_mpb_stride = rx_mpb_stride
        self.priv_flags: dict[str, bool] = dict.fromkeys(PRIV_FLAGS, False)
        self.hw_features = NO_FEATURES
        """`dev->hw_features`: what `ethtool -K` may switch on (driver/ethtool_features.py)."""
        self.features = NO_FEATURES
        """`dev->features`: what is on. With TSO (TSO6) on, the TCP layer builds GSO skbs of
        up to `gso_max_size` for TCP over IPv4 (IPv6) through this device, and the driver
        posts them as TSO sends (docs/tx.md); off, queued GSO skbs are cut in software."""
        self.gso_max_size = GSO_LEGACY_MAX_SIZE
        """`dev->gso_max_size`: the longest GSO skb, headers included (64 KiB)."""
        self.supported_coalesce_params: frozenset[CoalesceAttr] = RX_COALESCE_PARAMS
        """`ethtool_ops->supported_coalesce_params`: the attributes `set_coalesce` takes."""
        self.rx_frames_max = 1
        """`RXQ.COALESCE.frames_max` of this NIC (read at probe)."""
        self.tx_frames_max = 1
        """`TXQ.COALESCE.frames_max` of this NIC (read at probe)."""
        self.ifindex = 0
        self.present = False
        self.running = False
        self.num_rx_queues = 0
        self.real_num_rx_queues = 0
        self.dma_bytes = 8
        self.parse_bytes = 0
        self.mtu = 1500
        self.ringparam = RingParam()
        self.xdp_prog: object | None = None
        """An attached XDP program (bind-rx refuses with EEXIST while one is)."""
        self.channel_checks: list[Callable[[int], None]] = []
        """Extra checks of a new channel count (e.g. RSS/n-tuple rules pointing at queues
        that would disappear); each raises `KernelError` to refuse."""
        self._rxqs: list[NetdevRxQueue] = []
        self._host_pages: dict[int, HostPageAllocator] = {}
        self.num_tx_queues = 0
        self.real_num_tx_queues = 0
        self.tx_max_segs = 0
        self.tx_pending = 256
        """TX descriptor ring entries (`ethtool -G tx`)."""
        self.xps_rxqs: dict[int, int] = {}
        """XPS by receive queue (`/sys/class/net/<dev>/queues/tx-<n>/xps_rxqs`, Documentation/
        networking/scaling.rst "XPS: Transmit Packet Steering"): TX queue -> bitmap of RX
        queues. Empty (the default): the flow hash picks the queue (`skb_tx_hash`)."""
        self.dev_addr: bytes = DEFAULT_MAC
        """The MAC address (`dev->dev_addr`), source of every frame sent."""
        self._txqs: list[NetdevTxQueue] = []
        self._tx_pad: int | None = None
        self.ip_addrs: list[ipaddress.IPv4Interface | ipaddress.IPv6Interface] = []
        self.neigh: NeighResponder | None = None
        """ARP and IPv6 ND for this device's addresses (`arp_process`, `ndisc_recv_ns`);
        made by `add_ip`."""
        self._neigh_tx: deque[bytes] = deque()
        self.neigh_drops = 0
        """ARP/ND frames that were malformed or unreadable (dropped)."""

    # --- probe / open / stop ----------------------------------------------------------------

    async def probe(self) -> None:
        """Find the NIC, read its capabilities and register the device."""
        magic = regs.ID_MAGIC.get(await self.hw.read32(regs.ID))
        if magic != ID_MAGIC:
            raise KernelError(errno.ENODEV, f'ID reads 0x{magic:08x}, not 0x{ID_MAGIC:08x}')
        caps = await self.hw.read32(regs.CAPS)
        self.dma_bytes = regs.CAPS_DMA_BYTES.get(caps)
        self.num_rx_queues = regs.CAPS_NUM_RXQ.get(caps)
        self.parse_bytes = regs.CAPS_PARSE_BYTES.get(caps)
        if not 1 <= self.num_rx_queues <= regs.RXQ_MAX:
            raise KernelError(errno.ENODEV, f'CAPS.num_rxq={self.num_rx_queues}')
        self.real_num_rx_queues = self.num_rx_queues
        self._rxqs = [NetdevRxQueue(i, Napi(self.name, i)) for i in range(self.num_rx_queues)]
        self.rx_frames_max = max(1, regs.RXQ_COALESCE_FRAMES_MAX.get(
            await self.hw.read32(regs.rxq_reg(0, regs.RXQ_COALESCE))))
        tx_caps = await self.hw.read32(regs.TX_CAPS)
        self.num_tx_queues = min(regs.TX_CAPS_NUM_TXQ.get(tx_caps), regs.TXQ_MAX)
        self.tx_max_segs = regs.TX_CAPS_MAX_SEGS.get(tx_caps)
        if self.tx_max_segs < 2:
            self.num_tx_queues = 0          # a NIC without a usable TX path (older RTL)
        self.real_num_tx_queues = self.num_tx_queues
        self._txqs = [NetdevTxQueue(i) for i in range(self.num_tx_queues)]
        if self.num_tx_queues:
            self.hw_features = hw_features_from_offloads(await self.hw.read32(regs.TX_OFFLOADS))
        self.features = self.hw_features
        if self.num_tx_queues:
            self.tx_frames_max = max(1, regs.TXQ_COALESCE_FRAMES_MAX.get(
                await self.hw.read32(regs.txq_reg(0, regs.TXQ_COALESCE))))
            self.supported_coalesce_params = RX_COALESCE_PARAMS | TX_COALESCE_PARAMS
        self.ifindex = self.kernel.register_netdev(self)
        self.present = True
        clock = getattr(self.hw, 'clock', None)
        if self.kernel.clock is None and clock is not None:
            self.kernel.clock = clock            # the backend's time drives the TCP timers

    async def open(self) -> None:
        """`ndo_open`: frame limit, then every RX queue in use."""
        if self.running:
            return
        await self._write_frame_limit()
        for i in range(self.real_num_rx_queues):
            await self._queue_start(self._rxqs[i], self._queue_mem_alloc(self._rxqs[i]))
        for tq in self._txqs[:self.real_num_tx_queues]:
            await self._txq_start(tq)
        self.running = True

    async def stop(self) -> None:
        """`ndo_stop`: every RX queue off, buffers back to the pools, pools destroyed."""
        for q in self._rxqs:
            if q.running:
                await self._queue_stop(q)
        for tq in self._txqs:
            if tq.running:
                await self._txq_stop(tq)
        self.running = False

    async def remove(self) -> None:
        """Stop and unregister."""
        await self.stop()
        self.kernel.unregister_netdev(self)
        self.present = False

    # --- queues -----------------------------------------------------------------------------

    def rx_queue(self, index: int) -> NetdevRxQueue:
        """`__netif_get_rx_queue`."""
        return self._rxqs[index]

    @property
    def rx_queues(self) -> list[NetdevRxQueue]:
        """The RX queues in use (`real_num_rx_queues`)."""
        return self._rxqs[:self.real_num_rx_queues]

    @property
    def hds_enabled(self) -> bool:
        return self.ringparam.tcp_data_split == TcpDataSplit.ENABLED

    def min_mp_channel_count(self) -> int:
        """`dev_get_min_mp_channel_count`: one more than the highest bound queue, or 0."""
        bound = [q.index for q in self._rxqs if q.mp_params is not None]
        return max(bound) + 1 if bound else 0

    def _allocator(self, buf_size: int) -> HostPageAllocator:
        if buf_size not in self._host_pages:
            self._host_pages[buf_size] = HostPageAllocator(self.hw.host, buf_size)
        return self._host_pages[buf_size]

    def _ring_config(self, q: NetdevRxQueue) -> RxQueueConfig:
        rp = self.ringparam
        log2 = _log2(rp.rx_pending)
        return RxQueueConfig(hdr_ring_log2=log2, pay_ring_log2=log2,
                             cq_log2=min(MAX_RING_LOG2, log2 + 1),
                             hdr_buf_bytes=rp.hdr_buf_len, pay_buf_log2=_log2(rp.rx_buf_len),
                             tcp_data_split=self.hds_enabled, hds_thresh=rp.hds_thresh,
                             pay_mpb=self.priv_flags['rx-mpb'],
                             pay_stride_log2=_log2(self.rx_mpb_stride),
                             rx_usecs=q.coalesce.rx_coalesce_usecs,
                             rx_frames=q.coalesce.rx_max_coalesced_frames)

    def _queue_mem_alloc(self, q: NetdevRxQueue) -> tuple[PagePool, PagePool]:
        """`ndo_queue_mem_alloc`: the new queue's header and payload page pools."""
        rp = self.ringparam
        hdr_pool = PagePool(
            PagePoolParams(rp.rx_pending, q.index, self.name, rp.hdr_buf_len, q.napi),
            HostPageProvider(self._allocator(rp.hdr_buf_len)))
        provider: MemoryProvider
        if q.mp_params is not None:
            provider = q.mp_params.memory_provider()
        else:
            provider = HostPageProvider(self._allocator(rp.rx_buf_len))
        pay_pool = PagePool(PagePoolParams(rp.rx_pending, q.index, self.name, rp.rx_buf_len, q.napi),
                            provider)
        return hdr_pool, pay_pool

    async def _queue_start(self, q: NetdevRxQueue, pools: tuple[PagePool, PagePool]) -> None:
        """`ndo_queue_start`: program the rings, enable, post buffers."""
        q.hdr_pool, q.pay_pool = pools
        cfg = self._ring_config(q)
        q.ring = RxQueue(self.hw, q.index, cfg, dma_bytes=self.dma_bytes)
        await q.ring.alloc_rx_rings()
        q.hdr_ids = list(reversed(range(1 << cfg.hdr_ring_log2)))
        q.pay_ids = list(reversed(range(1 << cfg.pay_ring_log2)))
        await q.ring.enable()
        await self._refill(q)

    async def _queue_stop(self, q: NetdevRxQueue) -> None:
        """`ndo_queue_stop` + `ndo_queue_mem_free`: queue off, posted buffers (and those of
        completions not polled yet) back to their pools, pools destroyed."""
        assert q.ring is not None and q.hdr_pool is not None and q.pay_pool is not None
        q.stats.stop_drops += len(await q.ring.napi_poll(budget=1 << 16))
        await q.ring.disable()
        for nm in q.hdr_bufs.values():
            q.hdr_pool.put_netmem(nm, allow_direct=True)
        for nm in q.pay_bufs.values():
            q.pay_pool.put_netmem(nm, allow_direct=True)
        q.hdr_bufs.clear()
        q.pay_bufs.clear()
        q.pay_order.clear()
        q.ring = None
        q.hdr_pool.destroy()
        q.pay_pool.destroy()
        q.hdr_pool = q.pay_pool = None

    async def rx_queue_restart(self, index: int) -> None:
        """`netdev_rx_queue_restart`: new memory first (a failure leaves the old queue
        running), then stop the old queue and start the new one. A no-op while the device
        is down or the queue is not in use: the queue picks up its settings when opened."""
        if not self.running or index >= self.real_num_rx_queues:
            return
        q = self._rxqs[index]
        pools = self._queue_mem_alloc(q)
        await self._queue_stop(q)
        await self._queue_start(q, pools)

    async def _restart_all(self) -> None:
        for q in self.rx_queues:
            await self.rx_queue_restart(q.index)

    # --- ethtool ----------------------------------------------------------------------------

    def get_ringparam(self) -> RingParam:
        return self.ringparam

    async def set_ringparam(self, *, rx_pending: int | None = None,
                            tcp_data_split: TcpDataSplit | bool | None = None,
                            hds_thresh: int | None = None,
                            hdr_buf_len: int | None = None) -> None:
        """`ethtool -G`: change what is given; restarts the queues when running."""
        rp = self.ringparam
        if isinstance(tcp_data_split, bool):
            tcp_data_split = TcpDataSplit.ENABLED if tcp_data_split else TcpDataSplit.DISABLED
        new = replace(rp,
                      rx_pending=rp.rx_pending if rx_pending is None else rx_pending,
                      tcp_data_split=rp.tcp_data_split if tcp_data_split is None
                      else TcpDataSplit(tcp_data_split),
                      hds_thresh=rp.hds_thresh if hds_thresh is None else hds_thresh,
                      hdr_buf_len=rp.hdr_buf_len if hdr_buf_len is None else hdr_buf_len)
        if not 2 <= new.rx_pending <= rp.rx_max_pending or new.rx_pending & (new.rx_pending - 1):
            raise KernelError(errno.EINVAL, f'rx {new.rx_pending}: a power of two, 2 .. '
                                            f'{rp.rx_max_pending}')
        if not 0 <= new.hds_thresh <= rp.hds_thresh_max:
            raise KernelError(errno.EINVAL, f'hds-thresh {new.hds_thresh} above '
                                            f'{rp.hds_thresh_max}')
        if (not 64 <= new.hdr_buf_len <= 1024 or PAGE_SIZE % new.hdr_buf_len
                or new.hdr_buf_len % self.dma_bytes):
            raise KernelError(errno.EINVAL, f'header buffer {new.hdr_buf_len} bytes: a power '
                                            f'of two, 64 .. 1024')
        if self.min_mp_channel_count():
            if new.tcp_data_split != TcpDataSplit.ENABLED:
                raise KernelError(errno.EINVAL, "can't disable tcp-data-split while device "
                                                'has memory provider enabled')
            if new.hds_thresh:
                raise KernelError(errno.EINVAL, "can't set non-zero hds_thresh while device "
                                                'is memory provider enabled')
        self.ringparam = new
        await self._restart_all()

    def get_coalesce(self, queue: int = 0) -> EthtoolCoalesce:
        """`ethtool -c` (`get_coalesce`): the settings of RX queue `queue` and, when the NIC
        has it, TX queue `queue` (all queues have the same unless `set_per_queue_coalesce`
        made them differ). EINVAL for a queue the NIC has in neither direction."""
        if not 0 <= queue < max(self.num_rx_queues, self.num_tx_queues):
            raise KernelError(errno.EINVAL, f'queue {queue}: no such RX or TX queue')
        c = replace(self._rxqs[queue].coalesce) if queue < self.num_rx_queues else EthtoolCoalesce()
        if queue < self.num_tx_queues:
            tq = self._txqs[queue]
            c.tx_coalesce_usecs, c.tx_max_coalesced_frames = tq.tx_usecs, tq.tx_frames
        return c

    def coalesce_reply(self, queue: int = 0) -> dict[CoalesceAttr, int]:
        """What `ETHTOOL_MSG_COALESCE_GET_REPLY` carries (`coalesce_fill_reply`): every
        supported attribute, and an unsupported one only when it is not zero (netlink can tell
        "n/a" from 0; net/ethtool/coalesce.c `coalesce_put_u32`)."""
        cur = self.get_coalesce(queue)
        out = {}
        for attr, name in COALESCE_FIELDS.items():
            value = getattr(cur, name)
            if attr in self.supported_coalesce_params or value:
                out[attr] = value
        return out

    async def set_coalesce(self, attrs: dict[CoalesceAttr | str | int, int]) -> None:
        """`ethtool -C` (`ETHTOOL_MSG_COALESCE_SET`, `ethnl_set_coalesce`) on every queue:
        `attrs` by `CoalesceAttr`, attribute number or `ethtool -C` name
        (`driver.ethtool.parse_coalesce_args`). As the kernel does: an attribute outside
        `supported_coalesce_params` is refused with EINVAL ("cannot modify an unsupported
        parameter") before anything changes; a request that changes nothing is a no-op;
        then the driver's checks (EINVAL): `rx-usecs` / `tx-usecs` above 65535, `rx-frames` /
        `tx-frames` above the NIC's batch (`RXQ/TXQ.COALESCE.frames_max`), usecs and frames
        both 0. `rx-*` apply to the RX queues, `tx-*` to the TX queues, at once to running
        queues."""
        await self._set_coalesce(list(range(self.num_rx_queues)), list(range(self.num_tx_queues)),
                                 attrs)

    async def set_per_queue_coalesce(self, queue_mask: int,
                                     attrs: dict[CoalesceAttr | str | int, int]) -> None:
        """`ethtool --per-queue queue_mask M --coalesce ...` (`set_per_queue_coalesce`):
        as `set_coalesce`, for the queues whose bits are set; EINVAL for a bit of a queue the
        NIC does not have in a direction the request changes (`rx-*`: RX queues, `tx-*`: TX
        queues)."""
        req = coalesce_attrs(attrs)
        if queue_mask <= 0:
            raise KernelError(errno.EINVAL, f'queue_mask 0x{queue_mask:x}: no queue')
        bits = [q for q in range(queue_mask.bit_length()) if queue_mask >> q & 1]
        top = {'RX': self.num_rx_queues if req.keys() - TX_COALESCE_PARAMS else None,
               'TX': self.num_tx_queues if req.keys() & TX_COALESCE_PARAMS else None}
        for kind, n in top.items():
            if n is not None and bits[-1] >= n:
                raise KernelError(errno.EINVAL, f'queue_mask 0x{queue_mask:x}: {kind} queues are '
                                                f'0..{n - 1}')
        await self._set_coalesce([q for q in bits if q < self.num_rx_queues],
                                 [q for q in bits if q < self.num_tx_queues], attrs)

    async def _set_coalesce(self, rx: list[int], tx: list[int],
                            attrs: dict[CoalesceAttr | str | int, int]) -> None:
        req = coalesce_attrs(attrs)
        unsupported = sorted(a.name for a in req if a not in self.supported_coalesce_params)
        if unsupported:
            raise KernelError(errno.EINVAL, 'cannot modify an unsupported parameter: '
                                            + ', '.join(unsupported))
        rx_updates = {COALESCE_FIELDS[a]: v for a, v in req.items() if a in RX_COALESCE_PARAMS}
        tx_req = {a: v for a, v in req.items() if a in TX_COALESCE_PARAMS}
        queues = [self._rxqs[q] for q in rx] if rx_updates else []
        new = [replace(q.coalesce, **rx_updates) for q in queues]
        for c in new:
            self._check_coalesce('rx', c.rx_coalesce_usecs, c.rx_max_coalesced_frames)
        tqs = [self._txqs[q] for q in tx] if tx_req else []
        tx_new = [(tx_req.get(CoalesceAttr.TX_USECS, tq.tx_usecs),
                   tx_req.get(CoalesceAttr.TX_MAX_FRAMES, tq.tx_frames)) for tq in tqs]
        for usecs, frames in tx_new:
            self._check_coalesce('tx', usecs, frames)
        for q, c in zip(queues, new):
            if c == q.coalesce:
                continue
            q.coalesce = c
            if q.ring is not None:
                await q.ring.set_coalesce(c.rx_coalesce_usecs, c.rx_max_coalesced_frames)
        for tq, (usecs, frames) in zip(tqs, tx_new):
            if (usecs, frames) == (tq.tx_usecs, tq.tx_frames):
                continue
            tq.tx_usecs, tq.tx_frames = usecs, frames
            if tq.ring is not None:
                await tq.ring.set_coalesce(usecs, frames)

    def _check_coalesce(self, kind: str, usecs: int, frames: int) -> None:
        """The driver's checks of `{kind}-usecs` / `{kind}-frames` (EINVAL)."""
        top = self.rx_frames_max if kind == 'rx' else self.tx_frames_max
        if usecs > COALESCE_USECS_MAX:
            raise KernelError(errno.EINVAL, f'{kind}-usecs {usecs}: at most {COALESCE_USECS_MAX}')
        if frames > top:
            raise KernelError(errno.EINVAL, f'{kind}-frames {frames}: at most {top} '
                                            f'(the NIC batches that many completions)')
        if usecs == 0 and frames == 0:
            raise KernelError(errno.EINVAL, f'{kind}-usecs and {kind}-frames both 0 (use '
                                            f'{kind}-frames 1 for no coalescing)')

    def get_features(self) -> dict[str, str]:
        """`ethtool -k`: each switchable feature on, off, or off [fixed]."""
        return features_report(self.hw_features, self.features)

    def set_features(self, changes: dict[str, bool]) -> None:
        """`ethtool -K DEV tso on|off` (`parse_features_args`): EINVAL for an unknown name,
        EOPNOTSUPP to turn on what the NIC lacks; nothing changes on an error."""
        self.features = apply_features(self.hw_features, self.features, changes)

    def get_priv_flags(self) -> dict[str, bool]:
        """`ethtool --show-priv-flags`."""
        return dict(self.priv_flags)

    async def set_priv_flags(self, flags: dict[str, bool]) -> None:
        """`ethtool --set-priv-flags DEV rx-mpb on|off`: EINVAL for an unknown flag; a change
        restarts the running queues."""
        unknown = sorted(set(flags) - set(PRIV_FLAGS))
        if unknown:
            raise KernelError(errno.EINVAL, f'unknown private flag(s) {unknown}; known: '
                                            f'{list(PRIV_FLAGS)}')
        new = {**self.priv_flags, **{k: bool(v) for k, v in flags.items()}}
        if new == self.priv_flags:
            return
        self.priv_flags = new
        await self._restart_all()

    def get_channels(self) -> Channels:
        return Channels(self.num_rx_queues, self.real_num_rx_queues)

    async def set_channels(self, combined: int) -> None:
        """`ethtool -L combined N`: the RX queues in use."""
        if not 1 <= combined <= self.num_rx_queues:
            raise KernelError(errno.EINVAL, f'combined {combined}: 1 .. {self.num_rx_queues}')
        if combined < self.min_mp_channel_count():
            raise KernelError(errno.EINVAL, 'requested channel counts are too low for '
                                            'existing memory provider setting')
        for check in self.channel_checks:
            check(combined)
        old = self.real_num_rx_queues
        self.real_num_rx_queues = combined
        if not self.running:
            return
        for i in range(combined, old):
            if self._rxqs[i].running:
                await self._queue_stop(self._rxqs[i])
        for i in range(old, combined):
            await self._queue_start(self._rxqs[i], self._queue_mem_alloc(self._rxqs[i]))

    async def set_mtu(self, mtu: int) -> None:
        """`ndo_change_mtu`: the NIC's frame limit follows (MTU + Ethernet + two VLAN tags)."""
        if not MIN_MTU <= mtu <= MAX_MTU:
            raise KernelError(errno.EINVAL, f'mtu {mtu}: {MIN_MTU} .. {MAX_MTU}')
        if -(-self._frame_limit(mtu) // self.ringparam.rx_buf_len) > DESC_CACHE:
            raise KernelError(errno.EINVAL, f'mtu {mtu} needs more than {DESC_CACHE} buffers')
        self.mtu = mtu
        await self._write_frame_limit()

    @staticmethod
    def _frame_limit(mtu: int) -> int:
        return mtu + ETH_HLEN + 2 * VLAN_HLEN

    async def _write_frame_limit(self) -> None:
        limit = self._frame_limit(self.mtu)
        await self.hw.write32(regs.RX_FRAME_LIMIT, regs.RX_FRAME_LIMIT_MAX_FRAME_LEN.put(limit))
        if self.num_tx_queues:
            await self.hw.write32(regs.TX_FRAME_LIMIT, regs.TX_FRAME_LIMIT_MAX_FRAME_LEN.put(limit))

    # --- statistics -------------------------------------------------------------------------

    async def hw_stats(self) -> dict[str, int]:
        """The NIC's RX counters by register name."""
        return {name: await self.hw.read32(getattr(regs, name)) for name in COUNTERS}

    def qstats(self, index: int) -> RxQueueStats:
        return self._rxqs[index].stats

    async def qstats_get(self) -> dict[str, int]:
        """Device totals with the names of the netdev netlink `qstats-get` reply:
        `rx-packets`, `rx-bytes`, `rx-alloc-fail` (refills the page pools could not serve),
        `rx-hw-drops` (every frame the NIC dropped) and `rx-hw-drop-overruns` (the part
        dropped for lack of buffers or completion space)."""
        hw = await self.hw_stats()
        drops = {n: v for n, v in hw.items() if n.startswith('RX_DROP_')}
        overruns = ('RX_DROP_FIFO', 'RX_DROP_NO_HDR_BUF', 'RX_DROP_NO_PAY_BUF', 'RX_DROP_CQ_FULL')
        return {
            'rx-packets': sum(q.stats.packets for q in self._rxqs),
            'rx-bytes': sum(q.stats.bytes for q in self._rxqs),
            'rx-alloc-fail': sum(q.stats.alloc_fail for q in self._rxqs),
            'rx-hw-drops': sum(drops.values()),
            'rx-hw-drop-overruns': sum(drops[n] for n in overruns),
            'tx-packets': sum(q.stats.packets for q in self._txqs),
            'tx-bytes': sum(q.stats.bytes for q in self._txqs),
            'tx-hw-drops': sum(q.stats.hw_drops for q in self._txqs),
            'tx-hw-drop-errors': sum(q.stats.hw_drop_errors for q in self._txqs),
            'tx-stop': sum(q.stats.stop for q in self._txqs),
            'tx-wake': sum(q.stats.wake for q in self._txqs),
            'tx-dropped': sum(q.stats.dropped for q in self._txqs),
            'tx-hw-gso-packets': sum(q.stats.hw_gso_packets for q in self._txqs),
            'tx-hw-gso-bytes': sum(q.stats.hw_gso_bytes for q in self._txqs),
            'tx-hw-gso-wire-packets': sum(q.stats.hw_gso_wire_packets for q in self._txqs),
            'tx-hw-gso-wire-bytes': sum(q.stats.hw_gso_wire_bytes for q in self._txqs),
        }

    async def tx_hw_stats(self) -> dict[str, int]:
        """The NIC's TX counters by register name (empty without a TX path)."""
        if not self.num_tx_queues:
            return {}
        return {name: await self.hw.read32(getattr(regs, name)) for name in TX_COUNTERS}

    def tx_qstats(self, index: int) -> TxQueueStats:
        return self._txqs[index].stats

    # --- NAPI -------------------------------------------------------------------------------

    async def poll(self, budget: int = 64) -> int:
        """Run NAPI once on every running queue: RX (frames to the stack, refill), TX
        (completions: buffers released, skbs freed, waiting frames posted), then the ACKs
        the received data calls for. Returns the frames handled, RX and TX."""
        done = 0
        for q in self.rx_queues:
            if q.running:
                done += await self.napi_poll(q.index, budget)
        for tq in self._txqs:
            if tq.running:
                done += await self.clean_tx(tq.index, 4 * budget)
        while self._neigh_tx:
            await self.dev_queue_xmit(SkBuff(head=self._neigh_tx.popleft()))
        await self.kernel.tcp.run_timers()
        await self.kernel.tcp.flush_acks(self)
        return done

    async def napi_poll(self, index: int, budget: int = 64) -> int:
        """The queue's NAPI poll: up to `budget` frames to the stack, then refill."""
        q = self._rxqs[index]
        if q.ring is None:
            return 0
        frames = await q.ring.napi_poll(budget)
        for frame in frames:
            skb = self._build_skb(q, frame)
            if skb is not None:
                self.netif_receive_skb(skb, q.napi)
        await self._refill(q)
        return len(frames)

    def netif_receive_skb(self, skb: SkBuff, napi: Napi | None = None) -> None:
        """`__netif_receive_skb_core`: ARP (`arp_rcv`) and ICMPv6 neighbour discovery
        (`ndisc_rcv`) to this device's responder, whose answers leave at the end of the
        poll; everything else to IP/TCP."""
        head = skb.head[skb.data:skb.data + 21]
        ethertype = int.from_bytes(head[12:14], 'big') if len(head) >= 14 else 0
        if ethertype == 0x0806 or (ethertype == 0x86DD and len(head) == 21 and head[20] == 58):
            self._neigh_rcv(skb, napi)
            return
        self.kernel.tcp.rcv(skb, napi)

    def _neigh_rcv(self, skb: SkBuff, napi: Napi | None) -> None:
        from driver.neigh import NeighError
        if self.neigh is None or not skb.readable:
            self.neigh_drops += int(not skb.readable)
            skb.free(napi)
            return
        frame = skb.head[skb.data:] + skb.copy_bits(skb.headlen, skb.data_len)
        skb.free(napi)
        try:
            reply = self.neigh.handle(frame)
        except NeighError:
            self.neigh_drops += 1
            return
        if reply is not None:
            self._neigh_tx.append(reply)

    def neigh_solicit(self, addr: str) -> None:
        """Ask for `addr`'s MAC (`neigh_probe`): an ARP request or a Neighbor Solicitation,
        sent at the next poll; the answer fills the table `Kernel.neigh_lookup` reads."""
        if self.neigh is None:
            raise KernelError(errno.EADDRNOTAVAIL, f'{self.name} has no address')
        ip = ipaddress.ip_address(addr)
        self._neigh_tx.append(self.neigh.arp_request(addr) if ip.version == 4
                              else self.neigh.neighbor_solicit(addr))

    def _build_skb(self, q: NetdevRxQueue, frame: RxFrame) -> SkBuff | None:
        """Completions of one frame -> skb. Header bytes are copied out of the host header
        buffer (which goes straight back to its pool); payload buffers become fragments."""
        assert q.hdr_pool is not None and q.pay_pool is not None
        hdr_nm = None
        if frame.hdr_buf_id is not None:
            hdr_nm = q.hdr_bufs.pop(frame.hdr_buf_id)
            q.hdr_ids.append(frame.hdr_buf_id)
        frags = []
        ring = q.ring
        assert ring is not None
        if ring.config.pay_mpb:
            for c in frame.pieces:
                frags.append(self._mpb_frag(q, ring, c))
        else:
            for buf_id, n in frame.fragments:
                frags.append(SkbFrag(q.pay_bufs.pop(buf_id), 0, n))
                q.pay_ids.append(buf_id)
        q.stats.packets += 1
        q.stats.bytes += frame.hdr_len + frame.payload_len
        skb = SkBuff(frags=frags, queue_mapping=q.index, hash=frame.first.rss_hash,
                     dev_name=self.name, skb_iif=self.ifindex)
        if frame.split and hdr_nm is not None:
            skb.head = hdr_nm.cpu_read(0, frame.hdr_len)
            q.hdr_pool.put_netmem(hdr_nm, allow_direct=True)
            return skb
        if hdr_nm is not None:
            q.hdr_pool.put_netmem(hdr_nm, allow_direct=True)
        if not skb.readable:
            q.stats.hds_unsplit_drops += 1
            skb.free(q.napi)
            return None
        window = skb.copy_bits(0, min(skb.len, HDR_PULL_WINDOW))
        skb.pull_to_head(eth_get_headlen(window), q.napi)
        return skb

    def _mpb_frag(self, q: NetdevRxQueue, ring: RxQueue, c) -> SkbFrag:
        """A piece in a multi-packet payload buffer: its own page-pool reference on the
        buffer; buffers the NIC has finished (docs/rx-rules.md) drop the ring's reference."""
        assert q.pay_pool is not None
        if c.pay_off == 0:
            # A new current buffer: every buffer posted before it is finished.
            while q.pay_order and q.pay_order[0] != c.pay_buf_id:
                self._mpb_finish(q, q.pay_order[0])
        if not q.pay_order or q.pay_order[0] != c.pay_buf_id:
            raise RuntimeError(f'rx queue {q.index}: completion names payload buffer '
                               f'{c.pay_buf_id} at stride {c.pay_off}, not the current buffer')
        nm = q.pay_bufs[c.pay_buf_id]
        off = ring.pay_offset(c)
        q.pay_pool.ref_netmem(nm)
        stride = 1 << ring.config.pay_stride_log2
        if off + -(-c.pay_len // stride) * stride >= ring.config.pay_buf_bytes:
            self._mpb_finish(q, c.pay_buf_id)           # its strides are used up
        return SkbFrag(nm, off, c.pay_len)

    @staticmethod
    def _mpb_finish(q: NetdevRxQueue, buf_id: int) -> None:
        """The NIC will not write `buf_id` again: drop the ring's reference, free its id."""
        assert q.pay_pool is not None
        q.pay_order.remove(buf_id)
        q.pay_pool.put_netmem(q.pay_bufs.pop(buf_id), allow_direct=True)
        q.pay_ids.append(buf_id)

    async def _refill(self, q: NetdevRxQueue) -> None:
        """Post a buffer in every free ring slot, as far as the page pools allow."""
        assert q.ring is not None and q.hdr_pool is not None and q.pay_pool is not None
        for pool, bufs, ids, post in ((q.hdr_pool, q.hdr_bufs, q.hdr_ids, q.ring.post_hdr_buffers),
                                      (q.pay_pool, q.pay_bufs, q.pay_ids, q.ring.post_pay_buffers)):
            new: list[RxBuffer] = []
            while ids:
                nm = pool.alloc_netmem()
                if nm is None:
                    q.stats.alloc_fail += 1
                    break
                buf_id = ids.pop()
                bufs[buf_id] = nm
                new.append(RxBuffer(nm.dma_addr, buf_id))
            if new:
                await post(new)
                if bufs is q.pay_bufs and q.ring.config.pay_mpb:
                    q.pay_order.extend(b.buf_id for b in new)

    # --- transmit ---------------------------------------------------------------------------

    def add_ip(self, addr: str) -> None:
        """`ip addr add ADDR/PREFIX dev DEV`: the address, and its connected route."""
        from driver.neigh import NeighResponder
        iface = ipaddress.ip_interface(addr)
        self.ip_addrs.append(iface)
        self.kernel.route_add(str(iface.network), self)
        if self.neigh is None:
            self.neigh = NeighResponder(self.dev_addr)
        self.neigh.mac = self.dev_addr
        if iface.version == 4 and self.neigh.ipv4 is None:
            self.neigh.ipv4 = iface.ip.packed
        if iface.version == 6 and self.neigh.ipv6 is None:
            self.neigh.ipv6 = iface.ip.packed

    def source_addr(self, family_version: int) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
        """The first address of the device of that IP version (source address selection)."""
        return next((i.ip for i in self.ip_addrs if i.version == family_version), None)

    @property
    def netmem_tx(self) -> bool:
        """`dev->netmem_tx`: the driver can send skbs whose fragments are net_iovs (bind-tx
        refuses a device without it). True when the NIC has a TX path."""
        return self.num_tx_queues > 0

    def tx_queue(self, index: int) -> NetdevTxQueue:
        return self._txqs[index]

    @property
    def tx_queues(self) -> list[NetdevTxQueue]:
        return self._txqs[:self.real_num_tx_queues]

    async def _txq_start(self, tq: NetdevTxQueue) -> None:
        """Allocate and program the rings, enable the queue."""
        if self._tx_pad is None:
            self._tx_pad = self.hw.host.alloc(ETH_ZLEN, 64)
            self.hw.host.fill(self._tx_pad, ETH_ZLEN, 0)
        tq.ring = TxQueue(self.hw, tq.index,
                          TxQueueConfig(ring_log2=_log2(self.tx_pending), tx_usecs=tq.tx_usecs,
                                        tx_frames=tq.tx_frames),
                          max_segs=self.tx_max_segs)
        await tq.ring.alloc_tx_rings()
        tq.free_tags = list(reversed(range(tq.ring.ring_size)))
        await tq.ring.enable()

    async def _txq_stop(self, tq: NetdevTxQueue) -> None:
        """Queue off (the NIC finishes a started frame), its completions collected, what
        was posted but never started (and the qdisc backlog) dropped and counted; every skb
        is freed, so zero-copy notifications still come."""
        assert tq.ring is not None
        await self.clean_tx(tq.index, 1 << 16, run_qdisc=False)
        await tq.ring.disable()
        await self.clean_tx(tq.index, 1 << 16, run_qdisc=False)
        await tq.ring.reset_indices()
        await tq.ring.free_tx_rings()
        for buf in tq.tx_buffers.values():
            self._tx_unmap(buf)
            tq.stats.dropped += 1
            buf.skb.tx_status = None
            buf.skb.free()
        tq.tx_buffers.clear()
        while tq.qdisc:
            tq.stats.dropped += 1
            tq.qdisc.popleft().free()
        tq.ring = None

    def set_xps_rxqs(self, txq: int, rxq_mask: int) -> None:
        """`echo <mask> > queues/tx-<txq>/xps_rxqs`: sockets whose last segment came in on an
        RX queue of the mask send on `txq` (0 clears it). EINVAL for a queue that is not
        there."""
        if not 0 <= txq < self.real_num_tx_queues or rxq_mask >> self.real_num_rx_queues:
            raise KernelError(errno.EINVAL, f'xps_rxqs: tx-{txq} mask {rxq_mask:#x}')
        if rxq_mask:
            self.xps_rxqs[txq] = rxq_mask
        else:
            self.xps_rxqs.pop(txq, None)

    def xps_queue(self, rx_queue: int, flow_hash: int) -> int:
        """`get_xps_queue` with the rxqs map, as `netdev_pick_tx` calls it for a socket: the TX
        queues mapped to the socket's RX queue (`sk_rx_queue_get`), the flow hash choosing
        among several; the flow hash alone when none is mapped or the socket has received
        nothing yet."""
        qs = [t for t, m in sorted(self.xps_rxqs.items()) if rx_queue >= 0 and m >> rx_queue & 1]
        return qs[flow_hash % len(qs)] if qs else flow_hash

    def netdev_pick_tx(self, skb: SkBuff) -> NetdevTxQueue:
        """`netdev_pick_tx`: the queue the skb's flow hash (set by the stack) selects."""
        return self._txqs[skb.queue_mapping % self.real_num_tx_queues]

    async def dev_queue_xmit(self, skb: SkBuff) -> bool:
        """`dev_queue_xmit`: into the queue's qdisc, then as much of the qdisc as the ring
        takes. False (and the skb freed) when it was dropped: device down, no TX path, or
        the qdisc full."""
        if not self.running or not self.real_num_tx_queues:
            if self._txqs:
                self._txqs[0].stats.dropped += 1
            skb.free()
            return False
        tq = self.netdev_pick_tx(skb)
        if len(tq.qdisc) >= TX_QUEUE_LEN:
            tq.stats.dropped += 1
            skb.free()
            return False
        tq.qdisc.append(skb)
        await self._qdisc_run(tq)
        return True

    def gso_feature(self, ipv6: bool) -> NetdevFeature:
        return NetdevFeature.TSO6 if ipv6 else NetdevFeature.TSO

    def tso_headers(self, skb: SkBuff, ring_size: int | None = None) -> GsoHeaders | None:
        """`netif_needs_gso` + `ndo_features_check` for a GSO skb: its headers when the NIC
        can cut it now (TSO or TSO6 on for its IP version, `mss` at least `TX_TSO_MIN_MSS`,
        a header and an MSS within the frame limit, headers of at most `TX_TSO_MAX_HDR`
        bytes, payload of at most `TX_TSO_MAX_PAYLOAD`, at most `TX_TSO_MAX_SEGS`
        descriptors, and with its context entry no more entries than the ring has,
        `ring_size`); None: software GSO must cut it first."""
        try:
            g = gso_headers(skb.head[skb.data:skb.data + 128 + 64])
        except (HeaderError, IndexError, struct_error):
            return None
        if not self.features & self.gso_feature(g.ipv6):
            return None
        mss = skb.gso_size
        payload = skb.len - g.hdr_len
        if (mss < TX_TSO_MIN_MSS or g.hdr_len > TX_TSO_MAX_HDR or payload > TX_TSO_MAX_PAYLOAD
                or g.hdr_len + mss > self._frame_limit(self.mtu) or payload <= 0):
            return None
        descs = self._tx_head_descs(skb.headlen) + len(split_at_pages(
            [(f.netmem.dma_addr + f.offset, f.size) for f in skb.frags]))
        if descs > TX_TSO_MAX_SEGS or (ring_size is not None and descs + 1 > ring_size):
            return None
        return g

    @staticmethod
    def _tx_head_descs(n: int) -> int:
        """Descriptors the copy of an `n`-byte head takes (`_tx_map_head`: one small buffer
        inside a page, or whole pages)."""
        return 1 if n <= TX_HEAD_BUF else -(-n // PAGE_SIZE)

    async def _qdisc_run(self, tq: NetdevTxQueue) -> None:
        """`__qdisc_run`: hand skbs to the driver until the ring is full (`NETDEV_TX_BUSY`:
        the skb stays at the head) or the qdisc is empty; `xmit_more` batches the doorbell.
        A GSO skb the device cannot take now is cut in software first (`validate_xmit_skb`
        -> `skb_gso_segment`), its segments taking its place at the head."""
        while tq.qdisc and tq.ring is not None:
            skb = tq.qdisc[0]
            if (skb.gso_size and skb.len > skb.gso_size
                    and self.tso_headers(skb, tq.ring.ring_size) is None):
                tq.qdisc.popleft()
                segs = skb_gso_segment(skb)
                skb.free()
                tq.stats.sw_gso_packets += 1
                tq.qdisc.extendleft(reversed(segs))
                continue
            rc = await self.start_xmit(skb, tq, xmit_more=len(tq.qdisc) > 1)
            if rc == NetdevTx.BUSY:
                return
            tq.qdisc.popleft()

    async def start_xmit(self, skb: SkBuff, tq: NetdevTxQueue,
                         xmit_more: bool = False) -> NetdevTx:
        """`ndo_start_xmit`: pad to 60 bytes, copy the head into host buffers the NIC can
        read (`dma_map_single`), turn fragments into bus addresses (`skb_frag_dma_map`; a
        net_iov's is its dma-buf page), post descriptors with the checksum request.
        `NetdevTx.BUSY` when the ring lacks room; an skb the NIC could never send is dropped
        and counted (`NETDEV_TX_OK`)."""
        ring = tq.ring
        assert ring is not None
        if not tq.free_tags:
            tq.stats.stop += 1
            await ring.kick()
            return NetdevTx.BUSY
        if skb.gso_size and skb.len > skb.gso_size:
            g = self.tso_headers(skb, ring.ring_size)
            assert g is not None, '_qdisc_run cuts what the NIC cannot take'
            return await self._start_xmit_tso(skb, tq, g, xmit_more)
        head = skb.head[skb.data:]
        pad = max(0, ETH_ZLEN - skb.len)
        if pad and not skb.frags:
            head += bytes(pad)              # eth_skb_pad on a linear skb
            pad = 0
        head_bufs = self._tx_map_head(head)
        segs = [(b.dma_addr, min(b.size, len(head) - i * b.size)) for i, b in enumerate(head_bufs)]
        segs += [(f.netmem.dma_addr + f.offset, f.size) for f in skb.frags]
        if pad:
            assert self._tx_pad is not None
            segs.append((self._tx_pad, pad))   # zero bytes after the device-memory payload
        csum = (TxCsum(skb.csum_start, skb.csum_offset)
                if skb.ip_summed == IpSummed.CHECKSUM_PARTIAL else None)
        tag = tq.free_tags[-1]
        return await self._tx_post(
            tq, skb, head_bufs, ring.xmit_frame(segs, tag=tag, csum=csum, xmit_more=xmit_more),
            (TxFrameError,), TxBuffer(skb, head_bufs, len(head) + skb.data_len + pad))

    async def _tx_post(self, tq: NetdevTxQueue, skb: SkBuff, head_bufs: list[Page],
                       post: Awaitable[NetdevTx], errors: tuple[type[Exception], ...],
                       buf: TxBuffer) -> NetdevTx:
        """Post one frame or TSO send (`post`, the ring call) and account for it as
        `ndo_start_xmit` does: a frame the ring refuses is dropped and freed (OK), a full
        ring unmaps and returns BUSY for the qdisc to requeue, a posted one keeps its tag."""
        tag = tq.free_tags[-1]
        try:
            rc = await post
        except errors:
            self._tx_unmap(TxBuffer(skb, head_bufs, 0))
            tq.stats.dropped += 1
            skb.free()
            return NetdevTx.OK
        if rc == NetdevTx.BUSY:
            self._tx_unmap(TxBuffer(skb, head_bufs, 0))
            tq.stats.stop += 1
            return rc
        tq.free_tags.pop()
        tq.tx_buffers[tag] = buf
        return NetdevTx.OK

    async def _start_xmit_tso(self, skb: SkBuff, tq: NetdevTxQueue, g: GsoHeaders,
                              xmit_more: bool) -> NetdevTx:
        """The TSO half of `ndo_start_xmit` (docs/tx.md, "TCP segmentation offload"): the
        head (headers, with the TCP checksum seeded without the length, and any linear
        payload) copied into host buffers, the fragments as they are, one `TSO` send with
        `gso_size` as its MSS; one completion for all its segments."""
        ring = tq.ring
        assert ring is not None
        head = tso_seed_header(skb.head[skb.data:], g)
        head_bufs = self._tx_map_head(head)
        segs = [(b.dma_addr, min(b.size, len(head) - i * b.size)) for i, b in enumerate(head_bufs)]
        segs += [(f.netmem.dma_addr + f.offset, f.size) for f in skb.frags]
        tso = TxTso(mss=skb.gso_size, hdr_len=g.hdr_len, l3_offset=g.l3_offset,
                    csum_start=g.csum_start, ipv6=g.ipv6)
        tag = tq.free_tags[-1]
        return await self._tx_post(
            tq, skb, head_bufs, ring.xmit_tso(segs, tag=tag, tso=tso, xmit_more=xmit_more),
            (TxFrameError, ValueError), TxBuffer(skb, head_bufs, skb.len, g, skb.gso_size))

    def _tx_map_head(self, head: bytes) -> list[Page]:
        """Copy the head into host buffers: one small buffer, or pages."""
        size = TX_HEAD_BUF if len(head) <= TX_HEAD_BUF else PAGE_SIZE
        alloc = self._allocator(size)
        bufs: list[Page] = []
        for i in range(0, len(head), size):
            page = alloc.alloc()
            if page is None:
                raise KernelError(errno.ENOMEM, 'no host memory for a TX header')
            self.hw.host.write(page.dma_addr, head[i:i + size])
            bufs.append(page)
        return bufs

    def _tx_unmap(self, buf: TxBuffer) -> None:
        for page in buf.head_bufs:
            self._allocator(page.size).free(page)
        buf.head_bufs = []

    async def clean_tx(self, index: int, budget: int = 256, run_qdisc: bool = True) -> int:
        """The TX half of NAPI (`*_clean_tx_irq`): completions read, header buffers freed,
        stats counted, skbs freed (their destructors and zero-copy completions run), then
        the qdisc gets the room back (`netif_tx_wake_queue`). Frames completed."""
        tq = self._txqs[index]
        if tq.ring is None:
            return 0
        was_stopped = tq.ring.stopped
        done = await tq.ring.clean_tx_irq(budget)
        for d in done:
            self._tx_complete(tq, d)
        if done and was_stopped:
            tq.stats.wake += 1
        if run_qdisc and tq.ring.enabled:
            await self._qdisc_run(tq)
        return len(done)

    def _tx_complete(self, tq: NetdevTxQueue, d: TxDone) -> None:
        buf = tq.tx_buffers.pop(d.tag)
        tq.free_tags.append(d.tag)
        self._tx_unmap(buf)
        if d.ok and buf.tso is not None:
            pay = buf.len - buf.tso.hdr_len
            wire = tso_wire_bytes(pay, buf.tso.hdr_len, buf.gso_size)
            tq.stats.packets += d.tso_segs
            tq.stats.bytes += wire
            tq.stats.hw_gso_packets += 1
            tq.stats.hw_gso_bytes += buf.len
            tq.stats.hw_gso_wire_packets += d.tso_segs
            tq.stats.hw_gso_wire_bytes += wire
        elif d.ok:
            tq.stats.packets += 1
            tq.stats.bytes += buf.len
        else:
            tq.stats.hw_drops += 1
            if d.status in HW_DROP_ERRORS:
                tq.stats.hw_drop_errors += 1
        buf.skb.tx_status = int(d.status)
        buf.skb.free()
