"""The memory block shared between Python and the compiled half of the fast path
(tb/fast/fastmem.cpp): one memfd (or, for the standalone speed ceiling, one file) mapped by both,
viewed here with numpy. No copies: HostMemory/DeviceMemory are built on views of it, so the
bytes the NIC's DMA writes are the bytes the scoreboard reads.

Layout (64-bit little-endian words in the header; indices must match fastmem.cpp's H_*):
  header (4 KiB) | DMA regions (page aligned) | RX frame table | RX frame data |
  CSR command table | DMA log | TX frame table | TX frame data | standalone buffer tables
  (optional)
"""
from __future__ import annotations

import mmap
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAGIC = 0x314D454D5453414E
PAGE = 4096

H_MAGIC, H_VERSION, H_TOTAL, H_NREG, H_REG = 0, 1, 2, 3, 4
H_NERR, H_ERR = 28, 29
MAX_REGIONS, MAX_ERR = 8, 8
H_RX_PROD, H_RX_CONS, H_RX_CAP, H_RX_TAB, H_RX_DATA, H_RX_DATA_SIZE, H_RX_IDLE, H_RX_SEED = range(48, 56)
H_CSR_PROD, H_CSR_DONE, H_CSR_CAP, H_CSR_TAB = range(64, 68)
H_LOG_PROD, H_LOG_CAP, H_LOG_TAB, H_LOG_LOST, H_LOG_OK = range(72, 77)
H_ST_WBEATS, H_ST_RBEATS, H_ST_RXBEATS, H_ST_CSR, H_ST_WBURSTS, H_ST_RBURSTS = range(80, 86)
(H_SA_FRAMES, H_SA_CQ_BASE, H_SA_CQ_LOG2, H_SA_HDR_BASE, H_SA_HDR_LOG2, H_SA_PAY_BASE,
 H_SA_PAY_LOG2, H_SA_HDR_SW_REG, H_SA_PAY_SW_REG, H_SA_CQ_SW_REG, H_SA_HDR_BUFS, H_SA_PAY_BUFS,
 H_SA_NHDR, H_SA_NPAY, H_SA_HDR_SW, H_SA_PAY_SW) = range(96, 112)
(H_SA_DONE, H_SA_CPLS, H_SA_T0_NS, H_SA_T1_NS, H_SA_CYC0, H_SA_CYC1, H_SA_CQ_SW,
 H_SA_BAD) = range(112, 120)
(H_SA_RX_TOTAL, H_SA_RX_PERIOD, H_SA_INFLIGHT, H_SA_CPU0_NS, H_SA_CPU1_NS, H_SA_START_CYC,
 H_SA_LAST_CPL_CYC, H_SA_LAST_CPLS) = range(120, 128)

H_TX_PROD, H_TX_CONS, H_TX_CAP, H_TX_TAB, H_TX_DATA, H_TX_DATA_SIZE, H_TX_WP, H_TX_RP, H_ST_TXBEATS = range(136, 145)

LOG_WRITE_OK, LOG_WRITE_ERR, LOG_READ_ERR = 0x000, 0x200, 0x201


def _align(x: int, a: int = PAGE) -> int:
    return (x + a - 1) & ~(a - 1)


@dataclass(frozen=True)
class RegionSpec:
    name: str
    base: int
    size: int


class SharedBlock:
    """The shared block: create it, hand `token` to the harness, use the numpy views."""

    _generation = 0

    def __init__(self, regions: list[RegionSpec], rx_frames: int = 1 << 16,
                 rx_data_bytes: int = 16 << 20, csr_cap: int = 1024, log_cap: int = 1 << 18,
                 tx_frames: int = 1 << 14, tx_data_bytes: int = 4 << 20,
                 sa_bufs: int = 0, path: str | Path | None = None) -> None:
        if len(regions) > MAX_REGIONS:
            raise ValueError(f"at most {MAX_REGIONS} regions")
        off = PAGE
        self.region_off: dict[str, int] = {}
        for r in regions:
            if r.size % PAGE:
                raise ValueError(f"region {r.name}: size must be a multiple of {PAGE}")
            self.region_off[r.name] = off
            off += r.size
        rx_tab = off
        off = _align(off + 16 * rx_frames)
        rx_data = off
        off = _align(off + rx_data_bytes)
        csr_tab = off
        off = _align(off + 32 * csr_cap)
        log_tab = off
        off = _align(off + 32 * log_cap)
        tx_tab = off
        off = _align(off + 16 * tx_frames)
        tx_data = off
        off = _align(off + tx_data_bytes)
        sa_tab = off
        off = _align(off + 16 * sa_bufs)
        self.total = off
        if path is None:
            self.fd = os.memfd_create("nic-fastmem")
        else:
            self.fd = os.open(str(path), os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        os.ftruncate(self.fd, self.total)
        self.mm = mmap.mmap(self.fd, self.total, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        self.u8 = np.frombuffer(self.mm, dtype=np.uint8)
        self.h = np.frombuffer(self.mm, dtype=np.uint64, count=512)
        h = self.h
        h[H_MAGIC] = MAGIC
        h[H_VERSION] = 1
        h[H_TOTAL] = self.total
        h[H_NREG] = len(regions)
        for i, r in enumerate(regions):
            h[H_REG + 3 * i: H_REG + 3 * i + 3] = (r.base, r.size, self.region_off[r.name])
        self.regions = regions
        h[H_RX_CAP], h[H_RX_TAB], h[H_RX_DATA], h[H_RX_DATA_SIZE] = rx_frames, rx_tab, rx_data, rx_data_bytes
        h[H_RX_SEED] = 0x9E3779B97F4A7C15
        h[H_CSR_CAP], h[H_CSR_TAB] = csr_cap, csr_tab
        h[H_LOG_CAP], h[H_LOG_TAB], h[H_LOG_OK] = log_cap, log_tab, 1
        h[H_TX_CAP], h[H_TX_TAB], h[H_TX_DATA], h[H_TX_DATA_SIZE] = tx_frames, tx_tab, tx_data, tx_data_bytes
        self.tx_tab = np.frombuffer(self.mm, dtype=np.uint64, count=2 * tx_frames, offset=tx_tab).reshape(-1, 2)
        self.tx_data = self.u8[tx_data:tx_data + tx_data_bytes]
        self.rx_tab = np.frombuffer(self.mm, dtype=np.uint64, count=2 * rx_frames, offset=rx_tab).reshape(-1, 2)
        self.rx_data = self.u8[rx_data:rx_data + rx_data_bytes]
        self._rx_mv = self.rx_data.data.cast("B")    # the array's own memoryview
        self.csr_tab = np.frombuffer(self.mm, dtype=np.uint64, count=4 * csr_cap, offset=csr_tab).reshape(-1, 4)
        self.log_tab = np.frombuffer(self.mm, dtype=np.uint64, count=4 * log_cap, offset=log_tab).reshape(-1, 4)
        self.sa_tab_off = sa_tab
        self.sa_tab = np.frombuffer(self.mm, dtype=np.uint64, count=2 * sa_bufs, offset=sa_tab) if sa_bufs else None
        # RX frame data is a ring of bytes: frame i occupies [start, end) of a running count.
        self._rx_cap, self._rx_size = rx_frames, rx_data_bytes     # fixed: kept as Python ints
        self._rx_wp = 0
        self._rx_ends: list[tuple[int, int]] = []   # (frame index, running end) not yet known consumed
        self._log_rp = 0
        SharedBlock._generation += 1
        self.token = ((SharedBlock._generation & 0x7FFF) << 16) | self.fd

    # ------------------------------------------------------------------ regions
    def region_buffer(self, name: str) -> memoryview:
        """A writable view of region `name`'s bytes (for HostMemory/DeviceMemory(buffer=))."""
        r = next(r for r in self.regions if r.name == name)
        off = self.region_off[name]
        return memoryview(self.mm)[off:off + r.size]

    def set_error_ranges(self, ranges: list[tuple[int, int]]) -> None:
        if len(ranges) > MAX_ERR:
            raise ValueError(f"the fast DMA target takes at most {MAX_ERR} error ranges")
        h = self.h
        for i, (a, n) in enumerate(ranges):
            h[H_ERR + 2 * i], h[H_ERR + 2 * i + 1] = a, n
        h[H_NERR] = len(ranges)

    # ------------------------------------------------------------------ RX frames
    @property
    def rx_pending(self) -> int:
        return int(self.h[H_RX_PROD] - self.h[H_RX_CONS])

    def rx_room(self, nbytes: int) -> bool:
        """True when a frame of `nbytes` fits now (frame table and data area)."""
        h = self.h
        if int(h[H_RX_PROD] - h[H_RX_CONS]) >= self._rx_cap:
            return False
        size = self._rx_size
        oldest = self._rx_oldest_start()
        start = self._place(nbytes, size)
        return start + nbytes - oldest <= size

    def _rx_oldest_start(self) -> int:
        cons = int(self.h[H_RX_CONS])
        i = 0
        while i < len(self._rx_ends) and self._rx_ends[i][0] < cons:
            i += 1
        if i:
            del self._rx_ends[:i]
        return self._rx_ends[0][1] if self._rx_ends else self._rx_wp

    def _place(self, nbytes: int, size: int) -> int:
        """Running start of the next frame: frames never wrap around the data area's end."""
        off = self._rx_wp % size
        return self._rx_wp if off + nbytes <= size else self._rx_wp + (size - off)

    def rx_push(self, frame: bytes | bytearray | memoryview, bad_fcs: bool = False) -> None:
        """Queue one frame (without FCS) for the harness's RX source; caller checked rx_room."""
        n = len(frame)
        if n == 0:
            raise ValueError("the fast RX source cannot send an empty frame")
        h = self.h
        size = self._rx_size
        if n > size:
            raise ValueError(f"frame of {n} bytes exceeds the RX frame area ({size})")
        start = self._place(n, size)
        off = start % size
        self._rx_mv[off:off + n] = frame if isinstance(frame, (bytes, bytearray)) else bytes(frame)
        idx = int(h[H_RX_PROD])
        self.rx_tab[idx % self._rx_cap] = (off, n | (int(bad_fcs) << 32))
        self._rx_ends.append((idx, start))
        self._rx_wp = start + n
        h[H_RX_PROD] = idx + 1

    # ------------------------------------------------------------------ CSR commands
    def csr_push(self, addr: int, data: int, write: bool) -> int:
        """Queue one CSR access; returns its sequence number."""
        h = self.h
        idx = int(h[H_CSR_PROD])
        cap = int(h[H_CSR_CAP])
        if idx - int(h[H_CSR_DONE]) >= cap:
            raise RuntimeError("CSR command queue full")
        self.csr_tab[idx % cap] = (addr, data & 0xFFFF_FFFF, int(write), 0)
        h[H_CSR_PROD] = idx + 1
        return idx

    def csr_done(self, idx: int) -> bool:
        return int(self.h[H_CSR_DONE]) > idx

    def csr_result(self, idx: int) -> tuple[int, int]:
        """(read data, AXI response) of a finished command."""
        v = int(self.csr_tab[idx % int(self.h[H_CSR_CAP])][3])
        return v & 0xFFFF_FFFF, (v >> 32) & 3

    # ------------------------------------------------------------------ DMA log
    def drain_log(self) -> np.ndarray:
        """New log entries since the last call, as an (n, 4) array (addr, len, kind, 0)."""
        h = self.h
        prod = int(h[H_LOG_PROD])
        cap = int(h[H_LOG_CAP])
        n = prod - self._log_rp
        if n > cap:
            raise RuntimeError(f"fast DMA log overflowed: {n - cap} entries lost; drain more often")
        idx = np.arange(self._log_rp, prod) % cap
        self._log_rp = prod
        return self.log_tab[idx]

    # ------------------------------------------------------------------ TX frames
    @property
    def tx_pending(self) -> int:
        """Frames the harness has queued that `drain_tx` has not returned yet."""
        return int(self.h[H_TX_PROD] - self.h[H_TX_CONS])

    def drain_tx(self) -> list[bytes]:
        """Every frame the NIC has finished sending since the last call, in order; their
        space goes back to the harness."""
        h = self.h
        prod, cons = int(h[H_TX_PROD]), int(h[H_TX_CONS])
        if prod == cons:
            return []
        cap, size = int(h[H_TX_CAP]), int(h[H_TX_DATA_SIZE])
        out = []
        end = int(h[H_TX_RP])
        for i in range(cons, prod):
            start, n = (int(v) for v in self.tx_tab[i % cap])
            off = start % size
            if off + n <= size:
                out.append(self.tx_data[off:off + n].tobytes())
            else:
                out.append(self.tx_data[off:].tobytes() + self.tx_data[:off + n - size].tobytes())
            end = start + n
        h[H_TX_RP] = end
        h[H_TX_CONS] = prod
        return out

    def stats(self) -> dict[str, int]:
        h = self.h
        return {"w_beats": int(h[H_ST_WBEATS]), "r_beats": int(h[H_ST_RBEATS]),
                "rx_beats": int(h[H_ST_RXBEATS]), "tx_beats": int(h[H_ST_TXBEATS]),
                "csr_ops": int(h[H_ST_CSR]),
                "w_bursts": int(h[H_ST_WBURSTS]), "r_bursts": int(h[H_ST_RBURSTS])}

    def close(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass
