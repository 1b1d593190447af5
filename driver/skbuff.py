"""`struct sk_buff`, reduced to what devmem RX needs.

An skb has a head (bytes in host memory: the headers the NIC wrote to a header buffer, or
that the driver pulled out of a host page) and fragments that reference page-pool buffers.
`data` is how far the head has been pulled: `head[data:]` is linear payload. A fragment in
device memory (`NetIov`) makes the skb unreadable (`skb->unreadable`, `skb_frags_readable`
false): its bytes can only be handed to the user as dma-buf offsets, never copied.

Each fragment owns one page-pool reference on its buffer; `free` (`kfree_skb`/`consume_skb`)
drops it, recycling the buffer into the pool's cache when called from the pool's own NAPI
context, else through the pool's ring.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Callable, Protocol

from driver.netmem import Netmem

if TYPE_CHECKING:
    from driver.netdev import Napi


class IpSummed(IntEnum):
    """`skb->ip_summed` on transmit."""

    CHECKSUM_NONE = 0
    """The L4 checksum is in the headers already (or there is none)."""
    CHECKSUM_PARTIAL = 3
    """The device computes the L4 checksum from `csum_start`; the field at
    `csum_start + csum_offset` holds the pseudo-header sum."""


class UbufInfo(Protocol):
    """`struct ubuf_info`: a zero-copy user buffer an skb references; `put` is
    `skb_zcopy_clear` -> `net_zcopy_put` for that skb (one reference)."""

    def put(self, skb: SkBuff | None = None) -> None: ...

    def get(self) -> UbufInfo:
        """`net_zcopy_get`: one more reference (a segment of a GSO skb cut in software)."""
        ...


@dataclass
class SkbFrag:
    """`skb_frag_t`: `size` bytes at `offset` inside `netmem`."""

    netmem: Netmem
    offset: int
    size: int


@dataclass(eq=False)
class SkBuff:
    head: bytes = b''
    frags: list[SkbFrag] = field(default_factory=list)
    data: int = 0
    queue_mapping: int = 0
    hash: int = 0
    dev_name: str = ''
    # TCP control block (TCP_SKB_CB): filled by the TCP layer
    seq: int = 0
    fin: bool = False
    freed: bool = False
    skb_iif: int = 0
    """ifindex of the device the skb arrived on (receive)."""
    src_mac: bytes | None = None
    """The Ethernet source of a received frame (the TCP layer answers RSTs to it)."""
    tcp_options: dict[int, bytes] = field(default_factory=dict)
    """TCP options of a received segment (kind -> value)."""
    # --- transmit -------------------------------------------------------------------------
    ip_summed: IpSummed = IpSummed.CHECKSUM_NONE
    csum_start: int = 0
    """Offset of the L4 header from the start of the frame (`skb_checksum_start_offset`)."""
    csum_offset: int = 0
    ubuf: UbufInfo | None = None
    """`skb_zcopy(skb)`: the MSG_ZEROCOPY completion this skb holds a reference of."""
    frag_unref: Callable[[Netmem], None] | None = None
    """How a fragment's reference is dropped when it is not a page-pool buffer (devmem TX
    net_iovs hold their binding: `net_devmem_put_net_iov`)."""
    frag_ref: Callable[[Netmem], None] | None = None
    """How one more reference on a fragment is taken (`net_devmem_get_net_iov`), for the
    segments software GSO cuts from this skb (driver/gso.py)."""
    gso_size: int = 0
    """`skb_shinfo(skb)->gso_size`: a GSO skb (TCP payload of several MSS), to be cut into
    segments of this many payload bytes by the NIC (TSO) or by software GSO; 0: one frame."""
    gso_segs: int = 0
    """`skb_shinfo(skb)->gso_segs`: the segments it makes, `ceil(payload / gso_size)`."""
    tx_status: int | None = None
    """Set by the driver's TX completion: the NIC's status (0 = sent), None if the frame
    never reached the NIC (dropped by the driver or a stopped queue)."""
    destructor: Callable[[SkBuff], None] | None = None
    """`skb->destructor`: runs when the skb is freed (the TCP layer's TX completion)."""

    # --- geometry ---------------------------------------------------------------------------

    @property
    def headlen(self) -> int:
        """`skb_headlen`: linear bytes after `data`."""
        return len(self.head) - self.data

    @property
    def data_len(self) -> int:
        """Bytes in fragments."""
        return sum(f.size for f in self.frags)

    @property
    def len(self) -> int:
        return self.headlen + self.data_len

    @property
    def end_seq(self) -> int:
        """Sequence number after the data (FIN not included)."""
        return (self.seq + self.len) & 0xFFFFFFFF

    @property
    def readable(self) -> bool:
        """`skb_frags_readable`: no fragment is in device memory."""
        return all(f.netmem.readable for f in self.frags)

    # --- reshaping --------------------------------------------------------------------------

    def pull_to_head(self, n: int, napi: Napi | None = None) -> None:
        """Move the first `n` fragment bytes into the head (`__pskb_pull_tail`); only for
        readable fragments: the CPU reads them. A fragment emptied this way is released."""
        out = bytearray()
        while n > 0 and self.frags:
            f = self.frags[0]
            k = min(n, f.size)
            out += f.netmem.cpu_read(f.offset, k)
            f.offset += k
            f.size -= k
            n -= k
            if f.size == 0:
                self.frags.pop(0)
                _put(f.netmem, napi)
        self.head = self.head + bytes(out)

    def pull(self, n: int) -> None:
        """`skb_pull`: advance `data` over `n` head bytes."""
        if n > self.headlen:
            raise ValueError(f'pull of {n} bytes, {self.headlen} in the head')
        self.data += n

    def trim_front(self, n: int, napi: Napi | None = None) -> None:
        """Drop the first `n` payload bytes (TCP trimming an overlap); fragments emptied
        are released."""
        k = min(n, self.headlen)
        self.data += k
        n -= k
        while n > 0:
            f = self.frags[0]
            k = min(n, f.size)
            f.offset += k
            f.size -= k
            n -= k
            if f.size == 0:
                self.frags.pop(0)
                _put(f.netmem, napi)

    def trim(self, length: int, napi: Napi | None = None) -> None:
        """`pskb_trim`: keep the first `length` payload bytes (drop Ethernet padding)."""
        if length >= self.len:
            return
        if length <= self.headlen:
            self.head = self.head[:self.data + length]
            keep_frags: list[SkbFrag] = []
            drop = self.frags
        else:
            left = length - self.headlen
            keep_frags, drop = [], []
            for f in self.frags:
                if left <= 0:
                    drop.append(f)
                    continue
                if f.size > left:
                    f.size = left
                keep_frags.append(f)
                left -= f.size
        self.frags = keep_frags
        for f in drop:
            _put(f.netmem, napi)

    def copy_bits(self, offset: int, n: int) -> bytes:
        """`skb_copy_bits`: `n` payload bytes from `offset`; the CPU reads them, so this is
        only for readable skbs (a device-memory fragment would raise in the model)."""
        out = bytearray()
        if offset < self.headlen:
            k = min(n, self.headlen - offset)
            out += self.head[self.data + offset:self.data + offset + k]
            n -= k
            offset += k
        start = self.headlen
        for f in self.frags:
            if n <= 0:
                break
            end = start + f.size
            if offset < end:
                k = min(n, end - offset)
                out += f.netmem.cpu_read(f.offset + offset - start, k)
                n -= k
                offset += k
            start = end
        return bytes(out)

    def free(self, napi: Napi | None = None) -> None:
        """`kfree_skb`/`consume_skb`: drop the fragments' page-pool references."""
        if self.freed:
            raise RuntimeError('double free of an skb')
        self.freed = True
        if self.destructor is not None:
            self.destructor(self)
        for f in self.frags:
            if self.frag_unref is not None:
                self.frag_unref(f.netmem)
            else:
                _put(f.netmem, napi)
        self.frags = []
        if self.ubuf is not None:
            ubuf, self.ubuf = self.ubuf, None
            ubuf.put(self)


def _put(netmem: Netmem, napi: Napi | None) -> None:
    """`skb_pp_recycle` -> `napi_pp_put_page`: direct recycling only from the NAPI instance
    the page pool belongs to."""
    pool = netmem.pp
    if pool is None:
        raise RuntimeError(f'{netmem!r} is not owned by a page pool')
    pool.put_netmem(netmem, allow_direct=napi is not None and pool.params.napi is napi)


# ------------------------------------------------------------------------------------------
# MSG_ZEROCOPY completions (net/core/skbuff.c msg_zerocopy_*, include/uapi/linux/errqueue.h)
# ------------------------------------------------------------------------------------------

SO_EE_ORIGIN_ZEROCOPY = 5
SO_EE_CODE_ZEROCOPY_COPIED = 1


@dataclass
class SockExtendedErr:
    """`struct sock_extended_err` (16 bytes). A zero-copy notification has `ee_errno` 0,
    `ee_origin` SO_EE_ORIGIN_ZEROCOPY and the range of send calls `[ee_info, ee_data]`."""

    ee_errno: int = 0
    ee_origin: int = 0
    ee_type: int = 0
    ee_code: int = 0
    ee_info: int = 0
    ee_data: int = 0

    FORMAT = struct.Struct('<IBBBxII')

    @property
    def lo(self) -> int:
        return self.ee_info

    @property
    def hi(self) -> int:
        return self.ee_data

    def pack(self) -> bytes:
        return self.FORMAT.pack(self.ee_errno, self.ee_origin, self.ee_type, self.ee_code,
                                self.ee_info, self.ee_data)

    @classmethod
    def unpack(cls, raw: bytes) -> SockExtendedErr:
        return cls(*cls.FORMAT.unpack(raw[:16]))


assert SockExtendedErr.FORMAT.size == 16


class ZerocopySock(Protocol):
    """What a notification needs of the socket."""

    def zerocopy_notify(self, lo: int, length: int, code: int) -> None: ...


@dataclass(eq=False)
class MsgZerocopy:
    """`struct ubuf_info_msgzc` of one sendmsg call: id `id` (the socket's `sk_zckey` at the
    call), one reference for the call itself and one per skb built from it. When the last
    goes (the NIC completed every frame, or they were dropped), `__msg_zerocopy_callback`
    queues the notification on the socket's error queue."""

    sk: ZerocopySock
    id: int
    len: int = 1
    refcnt: int = 1
    zerocopy: bool = True
    """False when the data was copied (SO_EE_CODE_ZEROCOPY_COPIED)."""
    frames: int = 0
    frames_failed: int = 0
    """Frames of this call the NIC completed with an error status, or that never reached it."""
    done: bool = False

    def get(self) -> MsgZerocopy:
        self.refcnt += 1
        return self

    def put(self, skb: SkBuff | None = None) -> None:
        if skb is not None:
            self.frames += 1
            if skb.tx_status != 0:
                self.frames_failed += 1
        self.refcnt -= 1
        if self.refcnt == 0:
            self.done = True
            self.sk.zerocopy_notify(self.id, self.len,
                                    0 if self.zerocopy else SO_EE_CODE_ZEROCOPY_COPIED)
