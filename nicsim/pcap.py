"""A small classic-pcap reader that keeps going past bad records.

`read_pcap(path)` returns a `Capture`: every record as a `Record` (frame bytes, or None with
the reason it cannot be replayed) plus `problems`, human-readable messages about the file.
Handled: both byte orders, microsecond and nanosecond timestamps; a record cut short in the
capture (caplen < wire length) is kept as a record that is not replayed; a file truncated in
the middle of a record ends the capture there with a message and a last record that is not
replayed (`capture_cut`), and a record whose length is impossible (caplen over the snaplen
and 256 KiB: a corrupt file) ends it with a `capture_corrupt` record. With `strict=True`
those two raise `PcapError` instead. Link types other than Ethernet (1) and pcapng files
are refused with a clear `PcapError`.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

LINKTYPE_ETHERNET = 1
MAGICS = {
    b"\xd4\xc3\xb2\xa1": ("<", 1_000_000), b"\xa1\xb2\xc3\xd4": (">", 1_000_000),
    b"\x4d\x3c\xb2\xa1": ("<", 1_000_000_000), b"\xa1\xb2\x3c\x4d": (">", 1_000_000_000),
}
LINKTYPE_NAMES = {0: "BSD loopback", 101: "raw IP", 113: "Linux cooked (SLL)", 105: "802.11",
                  127: "802.11 radiotap", 228: "raw IPv4", 229: "raw IPv6", 276: "Linux cooked v2"}


class PcapError(Exception):
    """The file cannot be replayed at all."""


@dataclass
class Record:
    index: int
    ts: float
    data: bytes | None
    wire_len: int
    problem: str | None = None     # why `data` is None (not replayed)


@dataclass
class Capture:
    path: str
    linktype: int
    snaplen: int
    records: list[Record] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def frames(self) -> list[bytes | None]:
        return [r.data for r in self.records]


def read_pcap(path: str | Path, strict: bool = False) -> Capture:
    """Every record of the capture at `path`; see the module docstring for bad records."""
    raw = Path(path).read_bytes()
    if len(raw) < 24:
        if raw[:4] == b"\x0a\x0d\x0d\x0a":
            raise PcapError(f"{path}: pcapng is not supported; convert it with "
                            "`tcpdump -r IN.pcapng -w OUT.pcap`")
        raise PcapError(f"{path}: {len(raw)} bytes, too short for a pcap file header (24 bytes)")
    magic = raw[:4]
    if magic == b"\x0a\x0d\x0d\x0a":
        raise PcapError(f"{path}: pcapng is not supported; convert it with "
                        "`tcpdump -r IN.pcapng -w OUT.pcap`")
    if magic not in MAGICS:
        raise PcapError(f"{path}: not a pcap file (magic {magic.hex()})")
    endian, ticks = MAGICS[magic]
    _vmaj, _vmin, _tz, _sig, snaplen, linktype = struct.unpack(endian + "HHiIII", raw[4:24])
    linktype &= 0x0FFF_FFFF
    if linktype != LINKTYPE_ETHERNET:
        name = LINKTYPE_NAMES.get(linktype, "unknown")
        raise PcapError(f"{path}: link type {linktype} ({name}), only Ethernet (1) can be "
                        "replayed into the NIC's MAC")
    cap = Capture(str(path), linktype, snaplen)

    def stop(msg: str, rec: Record) -> None:
        """The capture ends here: refused with --strict, else a record not replayed."""
        if strict:
            raise PcapError(msg + " (--strict)")
        cap.problems.append(msg)
        cap.records.append(rec)

    pos = 24
    while pos < len(raw):
        index = len(cap.records)
        if pos + 16 > len(raw):
            stop(f"{path}: file truncated in the header of record {index} (byte {pos}, "
                 f"{len(raw) - pos} of 16 bytes): {index} frames read", Record(index, 0.0, None, 0, "capture_cut"))
            break
        sec, frac, caplen, wirelen = struct.unpack(endian + "IIII", raw[pos:pos + 16])
        ts = sec + frac / ticks
        if caplen > max(snaplen, 262144) or caplen > 0x40000:
            stop(f"{path}: record {index} claims {caplen} bytes (snaplen {snaplen}): corrupt file, "
                 f"stopped after {index} frames", Record(index, ts, None, wirelen, "capture_corrupt"))
            break
        body = raw[pos + 16:pos + 16 + caplen]
        if len(body) < caplen:
            stop(f"{path}: file truncated in record {index} ({len(body)} of {caplen} bytes): "
                 f"{index} frames read", Record(index, ts, None, wirelen, "capture_cut"))
            break
        rec = Record(index, ts, bytes(body), wirelen)
        if caplen < wirelen:
            rec.data = None
            rec.problem = "capture_truncated"
            cap.problems.append(f"frame {index}: only {caplen} of its {wirelen} bytes were "
                                "captured (snaplen): not replayed")
        elif caplen < 14:
            rec.data = None
            rec.problem = "capture_runt"
            cap.problems.append(f"frame {index}: {caplen} bytes, shorter than an Ethernet "
                                "header: not replayed")
        cap.records.append(rec)
        pos += 16 + caplen
    return cap


def write_pcap(path: str | Path, frames: list[bytes], linktype: int = LINKTYPE_ETHERNET,
               snaplen: int = 262144) -> None:
    """Write `frames` as a little-endian microsecond pcap (for tests and tools)."""
    out = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, snaplen, linktype))
    for i, f in enumerate(frames):
        out += struct.pack("<IIII", i, 0, len(f), len(f)) + f
    Path(path).write_bytes(bytes(out))
