"""Synthetic skbs for socket- and TCP-level tests: what NAPI would hand the stack, built
without a NIC. Payload is written into device memory through the GPU accessor (standing in
for the NIC's DMA), headers come from the scapy frame the TCP peer builds."""
from __future__ import annotations

import types
from dataclasses import dataclass, field

from driver.devmem import DmabufDevmemProvider, NetDevmemDmabufBinding, net_devmem_bind_dmabuf
from driver.headers import AF_INET
from driver.kernel import Kernel
from driver.netmem import NetIov
from driver.page_pool import PagePool, PagePoolParams
from driver.skbuff import SkBuff, SkbFrag
from driver.socket import SOCK_STREAM, Socket
from models.device_memory import DeviceMemory, DmaBuf
from tb.scenario import TcpPeer

DEV_BASE = 0x40_0000_0000
PAGE = 4096


@dataclass
class Synth:
    pages: int = 64
    kernel: Kernel = field(default_factory=Kernel)
    peer: TcpPeer = field(default_factory=TcpPeer)

    def __post_init__(self) -> None:
        self.dev = DeviceMemory(DEV_BASE, max(self.pages, 16) * PAGE * 2)
        self.dmabuf: DmaBuf = self.dev.export_dmabuf(self.pages * PAGE, chunk_size=4 * PAGE)
        self.fd = self.kernel.dma_buf_fd(self.dmabuf)
        netdev = types.SimpleNamespace(ifindex=1, name='synth0')
        self.binding: NetDevmemDmabufBinding = net_devmem_bind_dmabuf(self.kernel, netdev, self.fd)  # type: ignore[arg-type]
        self.pool = PagePool(PagePoolParams(pool_size=self.pages), DmabufDevmemProvider(self.binding))
        self.hdr_len = 14 + self.peer.flow.l3_l4_header_bytes

    def connect(self) -> Socket:
        lst = self.kernel.socket(AF_INET, SOCK_STREAM)
        lst.bind(('0.0.0.0', self.peer.flow.dport))
        lst.listen()
        self.kernel.tcp.rcv(SkBuff(head=self.peer.syn()))
        assert lst.sk is not None
        (req,) = lst.sk.syn_queue             # the SYN-ACK cannot leave (no device): its ISS
        self.kernel.tcp.rcv(SkBuff(head=self.peer.handshake_ack(req.iss)))
        sock, _ = lst.accept()
        return sock

    def niov(self) -> NetIov:
        n = self.pool.alloc_netmem()
        assert isinstance(n, NetIov), 'the dma-buf ran out'
        return n

    def skb(self, offset: int, payload: bytes, linear: int = 0, frag_size: int = PAGE,
            frag_offset: int = 0, flags: str = 'PA') -> SkBuff:
        """The segment at stream `offset`: `linear` payload bytes in the head, the rest in
        device-memory fragments of at most `frag_size` bytes starting `frag_offset` into
        each net_iov."""
        frame = self.peer.frame(self.peer.seq_of(offset), payload, flags)
        head = frame[:self.hdr_len + linear]
        frags = []
        pos = linear
        while pos < len(payload):
            n = min(frag_size, PAGE - frag_offset, len(payload) - pos)
            niov = self.niov()
            self.dmabuf.gpu_write(niov.virtual_addr + frag_offset, payload[pos:pos + n])
            frags.append(SkbFrag(niov, frag_offset, n))
            pos += n
        return SkBuff(head=head, frags=frags)

    def rcv(self, skb: SkBuff) -> None:
        self.kernel.tcp.rcv(skb)
