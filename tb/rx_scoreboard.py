"""Scoreboard for the RX split path: the RTL's completions, header buffers and payload
buffers against the golden model's `expected_placement` (models/nic_model.py).

It also owns the buffers it lends the NIC, so it knows which buffer ids the NIC must use
(descriptors are consumed in ring order) and can check that every DMA write landed inside a
posted buffer or the completion ring and that nothing past a buffer's valid bytes changed.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from driver.rx_queue import RxBuffer, RxFrame, RxQueue
from models.bus import DmaAddressSpace
from models.device_memory import DeviceMemory
from models.formats import CPL_BYTES
from models.host_memory import HostMemory
from models.nic_model import (INFO_COUNTERS, Placement, PlacementConfig, expected_placement,
                              property_counts)

CANARY = 0xA5
_CANARY_BYTE = bytes([CANARY])


def _canary_from(buf: bytes, start: int) -> bool:
    """True when every byte of `buf` from `start` on is the canary (no copy)."""
    return buf.count(_CANARY_BYTE, start) == len(buf) - start


@dataclass
class _Expected:
    index: int
    frame: bytes
    placement: Placement
    rss_hash: int = 0
    rss_type: int = 0


@dataclass
class RxScoreboard:
    host: HostMemory
    dev: DeviceMemory
    cfg: PlacementConfig
    queue: int = 0
    hdr_bufs: dict[int, int] = field(default_factory=dict)     # id -> host address
    pay_bufs: dict[int, int] = field(default_factory=dict)     # id -> bus address
    hdr_order: deque[int] = field(default_factory=deque)       # posted, not yet used
    pay_order: deque[int] = field(default_factory=deque)
    expected: deque[_Expected] = field(default_factory=deque)
    cq_idx: int = 0
    cq_size: int = 0
    cq_base: int | None = None      # when set, completions are also compared byte for byte
    checked: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    hdr_bytes_to_host: int = 0
    payload_bytes_to_device: int = 0
    payload_bytes_to_host: int = 0
    sent: int = 0
    info: dict[str, int] = field(default_factory=lambda: dict.fromkeys(INFO_COUNTERS, 0))
    delivered: list[RxFrame] = field(default_factory=list)   # checked frames, in order
    delivered_index: list[int] = field(default_factory=list)  # their index among sent frames
    delivered_payload: list[bytes] = field(default_factory=list)  # payload as the GPU read it

    # ------------------------------------------------------------------ buffers
    def _canary(self, buf_id: int, hdr: bool) -> None:
        if hdr:
            self.host.fill(self.hdr_bufs[buf_id], self.cfg.hdr_buf_bytes, CANARY)
        else:
            addr = self.pay_bufs[buf_id]
            n = self.cfg.pay_buf_bytes
            if self.dev.contains(addr, n):
                self.dev.gpu.fill(addr, n, CANARY)
            else:
                self.host.fill(addr, n, CANARY)

    def _read_pay(self, addr: int, n: int) -> bytes:
        # The GPU reads device memory; only host buffers are read by the CPU.
        return self.dev.gpu.read(addr, n) if self.dev.contains(addr, n) else self.host.read(addr, n)

    async def post_hdr(self, rxq: RxQueue, ids: list[int]) -> None:
        for i in ids:
            self._canary(i, hdr=True)
        await rxq.post_hdr_buffers([RxBuffer(self.hdr_bufs[i], i) for i in ids])
        self.hdr_order.extend(ids)

    async def post_pay(self, rxq: RxQueue, ids: list[int]) -> None:
        for i in ids:
            self._canary(i, hdr=False)
        await rxq.post_pay_buffers([RxBuffer(self.pay_bufs[i], i) for i in ids])
        self.pay_order.extend(ids)

    # ------------------------------------------------------------------ traffic
    def sent_frame(self, frame: bytes, bad_fcs: bool = False, cls=None) -> Placement:
        """Record a frame given to the NIC for this queue; returns what the model says happens
        to it. `cls` is the model's classification (RSS hash and type) when RSS is on."""
        p = expected_placement(frame, self.cfg, bad_fcs=bad_fcs, queue=self.queue)
        self.sent += 1
        if p.parse is not None:                  # the ingress kept it: the parser saw it
            for name, n in property_counts(p.parse).items():
                self.info[name] += n

        if p.dropped:
            self.dropped[p.drop_counter] = self.dropped.get(p.drop_counter, 0) + 1
        else:
            self.expected.append(_Expected(self.sent - 1, bytes(frame), p,
                                           cls.rss_hash if cls else 0, int(cls.rss_type) if cls else 0))
        return p

    def check(self, got: RxFrame) -> tuple[list[int], list[int]]:
        """Compare one received frame with the model; returns the (header, payload) buffer ids
        it used so the caller can recycle them."""
        assert self.expected, f"the NIC delivered a frame the model drops or never saw: {got}"
        exp = self.expected.popleft()
        p = exp.placement
        where = f"frame #{exp.index} ({len(exp.frame)} bytes)"
        hdr_id = self.hdr_order.popleft() if p.split else 0
        pay_ids = [self.pay_order.popleft() for _ in range(p.n_pay_bufs)]
        want = p.completions(hdr_id, pay_ids, self.cq_idx, self.cq_size, exp.rss_hash, exp.rss_type)
        self.cq_idx = (self.cq_idx + len(want)) & 0xFFFF
        assert len(got.completions) == len(want), \
            f"{where}: {len(got.completions)} completions, model says {len(want)}"
        for i, (g, w) in enumerate(zip(got.completions, want)):
            assert g == w, f"{where}: completion {i} differs\n  rtl:   {g}\n  model: {w}"
            if self.cq_base is not None:
                # Byte for byte, reserved bits included (the decoded compare ignores them).
                idx = (self.cq_idx - len(want) + i) % self.cq_size
                raw = self.host.read(self.cq_base + CPL_BYTES * idx, CPL_BYTES)
                assert raw == w.pack(), f"{where}: completion {i} bytes {raw.hex()} != model {w.pack().hex()}"

        if p.split:
            addr = self.hdr_bufs[hdr_id]
            buf = self.host.read(addr, self.cfg.hdr_buf_bytes)
            assert buf[:p.hdr_len] == p.hdr_bytes, f"{where}: header buffer bytes differ"
            assert _canary_from(buf, p.hdr_len), \
                f"{where}: header buffer written past hdr_len={p.hdr_len}"
            self.hdr_bytes_to_host += p.hdr_len
        payload = bytearray()
        for buf_id, piece in zip(pay_ids, p.payload_pieces()):
            addr = self.pay_bufs[buf_id]
            buf = self._read_pay(addr, self.cfg.pay_buf_bytes)
            payload += buf[:len(piece)]
            assert buf[:len(piece)] == piece, f"{where}: payload buffer {buf_id} bytes differ"
            assert _canary_from(buf, len(piece)), \
                f"{where}: payload buffer {buf_id} written past {len(piece)} bytes"
            if self.dev.contains(addr, 1):
                self.payload_bytes_to_device += len(piece)
            else:
                self.payload_bytes_to_host += len(piece)
        self.checked += 1
        self.info['RX_HDR_OVERFLOW'] += int(p.hdr_overflow)
        self.delivered.append(got)
        self.delivered_index.append(exp.index)
        self.delivered_payload.append(bytes(payload))
        return ([hdr_id] if p.split else []), pay_ids

    @property
    def outstanding(self) -> int:
        return len(self.expected)

    def check_writes_in_bounds(self, space: DmaAddressSpace, cq_base: int) -> None:
        """Every DMA write since the start lies inside a lent buffer or the completion ring."""
        ranges = [(a, self.cfg.hdr_buf_bytes) for a in self.hdr_bufs.values()]
        ranges += [(a, self.cfg.pay_buf_bytes) for a in self.pay_bufs.values()]
        ranges.append((cq_base, self.cq_size * CPL_BYTES))
        for addr, n in space.writes:
            assert any(a <= addr and addr + n <= a + size for a, size in ranges), \
                f"DMA write of {n} bytes at 0x{addr:x} is outside every posted buffer and the completion ring"
