"""The simulated kernel: the state Linux keeps globally, kept in one object you pass around.

Linux has global tables the devmem path depends on: net devices by ifindex (per network
namespace), the process's file descriptor table (a dma-buf reaches bind-rx as an fd), the
xarray of dma-buf bindings (`net_devmem_dmabuf_bindings`, ids unique across all devices,
allocated cyclically from 1), and the TCP socket hash tables. `Kernel` holds all of them, so
two tests, or two simulated hosts, never share state.
"""
from __future__ import annotations

import errno
import ipaddress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from driver.clock import Clock, VirtualClock
from driver.errors import KernelError
from models.device_memory import DmaBuf

if TYPE_CHECKING:
    from driver.devmem import NetDevmemDmabufBinding, NetlinkSocket
    from driver.netdev import Netdev
    from driver.socket import Socket
    from driver.tcp import TcpStack
    from driver.zcrx import IoUring

U32_MAX = 0xFFFF_FFFF


@dataclass(eq=False)
class DmaBufFile:
    """`struct dma_buf` behind its `struct file`: the exporter's memory, reference-counted.

    The fd holds one reference, each binding another (`dma_buf_get`/`dma_buf_put`). When the
    last goes, the exporter frees the memory (`DeviceMemory.release_dmabuf`).
    """

    dmabuf: DmaBuf
    refcount: int = 1
    released: bool = False

    def get(self) -> DmaBufFile:
        self.refcount += 1
        return self

    def put(self) -> None:
        self.refcount -= 1
        if self.refcount == 0:
            self.released = True
            self.dmabuf.device.release_dmabuf(self.dmabuf)


@dataclass(eq=False)
class Kernel:
    """One simulated kernel (one network namespace)."""

    netdevs: dict[int, Netdev] = field(default_factory=dict)
    files: dict[int, DmaBufFile] = field(default_factory=dict)
    devmem_bindings: dict[int, NetDevmemDmabufBinding] = field(default_factory=dict)
    """`net_devmem_dmabuf_bindings`: binding id -> binding, while bound."""
    _next_ifindex: int = 1
    _next_fd: int = 3
    _binding_id_next: int = 1
    _tcp: TcpStack | None = None
    routes: list[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, int]] = field(default_factory=list)
    """The main routing table: (destination prefix, ifindex); longest prefix wins."""
    neigh: dict[ipaddress.IPv4Address | ipaddress.IPv6Address, bytes] = field(default_factory=dict)
    """Static neighbour entries (`ip neigh add ADDR lladdr MAC dev ...`)."""
    clock: Clock | None = None
    """Time for the TCP timers (driver/clock.py). None: the first probed device's backend
    clock (`hw.clock`) is taken, else a `VirtualClock` nobody advances."""

    def get_clock(self) -> Clock:
        if self.clock is None:
            self.clock = VirtualClock()
        return self.clock

    # --- net devices ------------------------------------------------------------------------

    def register_netdev(self, dev: Netdev) -> int:
        """`register_netdevice`: give `dev` the next ifindex."""
        ifindex = self._next_ifindex
        self._next_ifindex += 1
        self.netdevs[ifindex] = dev
        return ifindex

    def unregister_netdev(self, dev: Netdev) -> None:
        self.netdevs.pop(dev.ifindex, None)

    def dev_get_by_index(self, ifindex: int) -> Netdev | None:
        """`netdev_get_by_index`."""
        return self.netdevs.get(ifindex)

    # --- routes and neighbours ---------------------------------------------------------------

    def route_add(self, prefix: str, dev: Netdev) -> None:
        """`ip route add PREFIX dev DEV`."""
        self.routes.append((ipaddress.ip_network(prefix, strict=False), dev.ifindex))

    def ip_route_output(self, daddr: ipaddress.IPv4Address | ipaddress.IPv6Address
                        ) -> Netdev | None:
        """`ip_route_output_key`: the device of the longest matching prefix, or None."""
        best = None
        for net, ifindex in self.routes:
            if net.version == daddr.version and daddr in net and (
                    best is None or net.prefixlen > best[0].prefixlen):
                best = (net, ifindex)
        return self.dev_get_by_index(best[1]) if best is not None else None

    def neigh_add(self, addr: str, lladdr: bytes) -> None:
        """`ip neigh add ADDR lladdr MAC`."""
        self.neigh[ipaddress.ip_address(addr)] = lladdr

    def neigh_lookup(self, addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bytes | None:
        """A static entry, else what a device's ARP/ND learned (`neigh_lookup` on arp_tbl /
        nd_tbl)."""
        mac = self.neigh.get(addr)
        if mac is not None:
            return mac
        for dev in self.netdevs.values():
            resp = getattr(dev, 'neigh', None)
            if resp is not None:
                mac = resp.lookup(addr.packed)
                if mac is not None:
                    return mac
        return None

    # --- dma-buf file descriptors -----------------------------------------------------------

    def dma_buf_fd(self, dmabuf: DmaBuf) -> int:
        """What an exporter (the GPU driver) does to give userspace a dma-buf: install it as
        an fd. The fd owns one reference; `close` drops it. Only a dma-buf can be (EINVAL)."""
        if not isinstance(dmabuf, DmaBuf):
            raise KernelError(errno.EINVAL, f'{type(dmabuf).__name__} is not a dma-buf')
        fd = self._next_fd
        self._next_fd += 1
        self.files[fd] = DmaBufFile(dmabuf)
        return fd

    def dma_buf_get(self, fd: int) -> DmaBufFile:
        """`dma_buf_get`: a new reference on the dma-buf behind `fd` (EBADF if none)."""
        file = self.files.get(fd)
        if file is None:
            raise KernelError(errno.EBADF, f'fd {fd} is not a dma-buf')
        return file.get()

    def close(self, fd: int) -> None:
        """`close(fd)` on a dma-buf fd."""
        file = self.files.pop(fd, None)
        if file is None:
            raise KernelError(errno.EBADF, f'fd {fd} is not open')
        file.put()

    # --- devmem bindings --------------------------------------------------------------------

    def devmem_id_alloc(self, binding: NetDevmemDmabufBinding) -> int:
        """`xa_alloc_cyclic(&net_devmem_dmabuf_bindings, ..., xa_limit_32b, &id_alloc_next)`
        with XA_FLAGS_ALLOC1: the first free id from the cursor, wrapping to 1."""
        if len(self.devmem_bindings) >= U32_MAX:
            raise KernelError(errno.EBUSY, 'binding ids exhausted')
        nid = self._binding_id_next
        while nid in self.devmem_bindings:
            nid = nid + 1 if nid < U32_MAX else 1
        self.devmem_bindings[nid] = binding
        self._binding_id_next = nid + 1 if nid < U32_MAX else 1
        return nid

    def devmem_lookup(self, binding_id: int) -> NetDevmemDmabufBinding | None:
        """`net_devmem_lookup_dmabuf`: None once the binding is unbound."""
        return self.devmem_bindings.get(binding_id)

    # --- sockets ----------------------------------------------------------------------------

    @property
    def tcp(self) -> TcpStack:
        if self._tcp is None:
            from driver.tcp import TcpStack
            self._tcp = TcpStack(self)
        return self._tcp

    def socket(self, family: int, type: int) -> Socket:
        """`socket(2)`: `AF_INET`/`AF_INET6` with `SOCK_STREAM` (TCP) or `SOCK_DGRAM`."""
        from driver.socket import Socket
        return Socket.create(self, family, type)

    def netlink_open(self) -> NetlinkSocket:
        """A generic-netlink socket speaking the "netdev" family (bind-rx, queue-get)."""
        from driver.devmem import NetlinkSocket
        return NetlinkSocket(self)

    def io_uring_setup(self, entries: int, flags: int, *, cap_net_admin: bool = True) -> IoUring:
        """`io_uring_setup(2)`: an io_uring instance (driver/zcrx.py: zero-copy receive needs
        `IORING_SETUP_DEFER_TASKRUN` and `IORING_SETUP_CQE32`). `cap_net_admin`: whether the
        caller has CAP_NET_ADMIN (registering an ifq needs it)."""
        from driver.zcrx import IoUring
        return IoUring(self, entries, flags, cap_net_admin=cap_net_admin)
