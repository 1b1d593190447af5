"""The io_uring zcrx application of the scenarios and of nicsim (docs/driver.md, "io_uring
zero-copy receive"): `zcrx_register` sets an ifq up the way the kernel selftest's
`iou-zcrx` does (ring with DEFER_TASKRUN and 32-byte CQEs, a page-aligned area of the
process's memory, a refill ring region), and `ZcrxReader` is its receive loop: RECV_ZC,
payload read in place from the area at each CQE's offset, buffers handed back through the
refill ring (unless withheld). `ZcrxReader` has `Reader`'s shape (`sock`, `got`, `eof`,
`drain`, `give_back`, `withhold`), so `Rig.transfer` drives either.
"""
from __future__ import annotations

import errno
import itertools
from dataclasses import dataclass, field

from driver.errors import KernelError
from driver.kernel import Kernel
from driver.netdev import Netdev
from driver.socket import Socket
from driver.zcrx import (IORING_SETUP_CQE32, IORING_SETUP_DEFER_TASKRUN, IORING_SETUP_SINGLE_ISSUER,
                         IoUring, IoUringRegionDesc, IoUringZcrxAreaReg, IoUringZcrxIfqReg,
                         IoUringZcrxRqe, IoZcrxArea, IoZcrxIfq, zcrx_region_size)
from models.host_memory import PAGE_SIZE

ZCRX_RING_FLAGS = IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_CQE32
"""The setup flags zcrx needs (io_uring_register_ifq(3))."""
_user_data = itertools.count(1)


def zcrx_ring(kernel: Kernel, entries: int = 256) -> IoUring:
    """An io_uring set up for zcrx."""
    return kernel.io_uring_setup(entries, ZCRX_RING_FLAGS)


@dataclass
class Zcrx:
    """One registered ifq, as the application sees it: its id, the area token and the
    (kernel) objects the scenarios inspect."""

    ring: IoUring
    reg: IoUringZcrxIfqReg
    ifq: IoZcrxIfq

    @property
    def id(self) -> int:
        return self.reg.zcrx_id

    @property
    def area(self) -> IoZcrxArea:
        assert self.ifq.area is not None
        return self.ifq.area


def zcrx_reg(netdev: Netdev, queue: int, pages: int, rq_entries: int | None = None,
             ) -> IoUringZcrxIfqReg:
    """The registration argument for `pages` of fresh process memory on `queue`."""
    addr = netdev.hw.host.alloc(pages * PAGE_SIZE, PAGE_SIZE)
    rq = rq_entries or pages
    return IoUringZcrxIfqReg(if_idx=netdev.ifindex, if_rxq=queue, rq_entries=rq,
                             area=IoUringZcrxAreaReg(addr=addr, len=pages * PAGE_SIZE),
                             region=IoUringRegionDesc(zcrx_region_size(1 << (rq - 1).bit_length())))


async def zcrx_register(ring: IoUring, netdev: Netdev, queue: int, pages: int = 256,
                        rq_entries: int | None = None) -> Zcrx:
    """`io_uring_register_ifq` on `queue` with an area of `pages` pages."""
    reg = zcrx_reg(netdev, queue, pages, rq_entries)
    await ring.register_zcrx_ifq(reg)
    ifq = ring.ifq(reg.zcrx_id)
    assert ifq is not None
    return Zcrx(ring, reg, ifq)


@dataclass
class ZcrxReader:
    """The application's RECV_ZC loop on one socket and one ifq."""

    sock: Socket
    zc: Zcrx
    withhold: bool = False
    user_data: int = field(default_factory=lambda: next(_user_data))
    got: bytearray = field(default_factory=bytearray)
    held: list[int] = field(default_factory=list)
    """The CQE offsets (area token | offset) of buffers not handed back yet."""
    zc_bytes: int = 0
    cqes: int = 0
    calls: int = 0
    eof: bool = False

    @property
    def devmem_bytes(self) -> int:
        """Bytes delivered through the provider (nicsim's report names them so)."""
        return self.zc_bytes

    def drain(self) -> int:
        """RECV_ZC until EAGAIN or end of stream, reading every CQE's bytes in place; bytes
        read."""
        ring = self.zc.ring
        n = 0
        while not self.eof:
            try:
                got = ring.recv_zc(self.sock, self.zc.id, self.user_data)
            except KernelError as e:
                if e.errno == errno.EAGAIN:
                    break
                raise
            self.calls += 1
            for cqe in ring.reap(self.user_data):
                self.cqes += 1
                if cqe.res < 0:
                    raise KernelError(-cqe.res, 'RECV_ZC completion')
                if cqe.res == 0 and not cqe.more:
                    self.eof = True
                    continue
                assert cqe.zcrx is not None
                self.got += self.zc.area.user_read(cqe.area_offset, cqe.res)
                self.zc_bytes += cqe.res
                self.held.append(cqe.zcrx.off)
            n += got
            if not self.withhold:
                self.give_back()
        return n

    def give_back(self, count: int | None = None) -> int:
        """Write refill entries for the held buffers (the first `count`), as many as the
        refill ring has room for; buffers handed back."""
        todo = self.held if count is None else self.held[:count]
        rq = self.zc.ifq.rq
        done = 0
        for off in todo:
            if not rq.push(IoUringZcrxRqe(off, PAGE_SIZE)):
                break
            done += 1
        self.held = self.held[done:]
        return done
