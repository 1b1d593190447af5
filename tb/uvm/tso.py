"""TSO sends in the pyuvm TX environment (docs/tx.md, "TCP segmentation offload").

`tso_item` builds one `TSO` send as a driver would: a TCP header (scapy: Ethernet, 0-2 VLAN
tags, IPv4 with or without options or IPv6, TCP with options; the TCP checksum field holds the
TSO seed, `models.tso.tso_seed`; the length fields and the IPv4 checksum hold junk the NIC
must overwrite) at the start of a host segment that may also hold the first payload bytes,
the payload (1..45 segments of MSS 536..8948, at most 65535 bytes) in up to 17 segments of
device or host memory at any offset, and the TSO context entry after the first descriptor.
Faults, one per send: an MSS below TX_TSO_MIN_MSS or over the frame limit (TSO_BAD_MSS), a
bad header description (hdr_len over TX_TSO_MAX_HDR, CSUM clear, csum_offset not 16, an
l3_offset below 14: TSO_BAD_HDR), no payload (TSO_BAD_LEN), a zero-length payload
descriptor (BAD_SEG).

What the NIC must do is the golden model's: the status from `models.tx.check_frame(tso=True)`,
the segments on the wire from `models.tso.tso_segments`, the completion from docs/tx.md's TSO
completion table (`tso_completion`), the counters from docs/tx.md's TSO counter rules
(`tso_counts`). The scoreboard (tb/uvm/tx_agent.py) checks all three.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from scapy.layers.inet import IP, TCP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Ether

from models.formats import TX_TSO_MAX_HDR, TX_TSO_MAX_PAYLOAD, TX_TSO_MAX_SEGS, TX_TSO_MIN_MSS
from models.formats import TxCompletion, TxDesc, TxStatus, TxTsoCtx
from models.tso import tso_seed, tso_segments
from models.tx import STATUS_COUNTER, check_frame
from tb import tx_env

TSO_FAULTS = ("none", "bad_mss", "bad_hdr", "bad_len", "bad_seg")
TSO_MAX_SEGMENTS = 45          # the range: 1..45 TCP segments per send
MSS_CHOICES = (536, 1448, 8948)


@dataclass
class TsoSend:
    """What the model says of one posted send."""
    first: TxDesc
    ctx: TxTsoCtx
    data: bytes                 # the send's bytes (header, payload) as the NIC gathers them
    send_len: int               # the bytes its descriptors add up to (a BAD_SEG send: not len(data))
    status: TxStatus
    segments: list[bytes]       # the frames it puts on m_axis_tx, in order
    ipv6: bool
    vlans: int
    fault: str


def tcp_header(rng: random.Random, ipv6: bool, vlans: int) -> tuple[bytes, int, int]:
    """(header, l3_offset, csum_start): Ethernet, `vlans` 802.1Q tags, IPv4 (maybe with
    options) or IPv6, TCP with options and flags, the TCP checksum field seeded."""
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    for _ in range(vlans):
        eth = eth / Dot1Q(vlan=rng.randrange(1, 4095))
    if ipv6:
        src = ":".join(f"{rng.randrange(65536):x}" for _ in range(8))
        dst = ":".join(f"{rng.randrange(65536):x}" for _ in range(8))
        ip = IPv6(src=src, dst=dst, plen=rng.randrange(65536), fl=rng.randrange(1 << 20))
    else:
        src = ".".join(str(rng.randrange(1, 255)) for _ in range(4))
        dst = ".".join(str(rng.randrange(1, 255)) for _ in range(4))
        ip = IP(src=src, dst=dst, id=rng.randrange(65536), flags="DF", len=rng.randrange(65536),
                chksum=rng.randrange(65536), options=b"\x01" * rng.choice([0, 0, 4, 8, 40]) or [])
    l3 = 14 + 4 * vlans
    ip_bytes = bytes(ip)
    l4 = l3 + len(ip_bytes)
    raw_src = ip_bytes[8:24] if ipv6 else ip_bytes[12:16]
    raw_dst = ip_bytes[24:40] if ipv6 else ip_bytes[16:20]
    flags = rng.choice(["A", "PA", "FA", "FPA", "CA", "CPA"])
    tcp = TCP(sport=rng.randrange(1, 65536), dport=rng.randrange(1, 65536), seq=rng.randrange(1 << 32),
              ack=rng.randrange(1 << 32), flags=flags, window=rng.randrange(65536),
              chksum=tso_seed(raw_src, raw_dst), options=[("NOP", None)] * rng.choice([0, 4, 12, 40]))
    hdr = bytes(eth / ip / tcp)
    return hdr, l3, l4


def _segments_count(rng: random.Random, mss: int) -> int:
    most = min(TSO_MAX_SEGMENTS, TX_TSO_MAX_PAYLOAD // mss)
    pick = rng.choices(["1", "2", "3-8", "9-44", "max"], [3, 3, 3, 2, 1])[0]
    n = {"1": 1, "2": 2, "3-8": rng.randint(3, 8), "9-44": rng.randint(9, 44), "max": most}[pick]
    return max(1, min(n, most))


def tso_item_send(rng: random.Random, host: tx_env.PagePool, pay_pool: tx_env.PagePool, tag: int,
                  limit: int, fault_rate: float) -> tuple[TsoSend, list[TxDesc | bytes]]:
    """One send and its ring entries (first descriptor, context entry, further descriptors)."""
    ipv6 = rng.random() < 0.5
    vlans = rng.choice([0, 0, 1, 2])
    fault = rng.choice(TSO_FAULTS[1:]) if rng.random() < fault_rate else "none"
    hdr, l3, l4 = tcp_header(rng, ipv6, vlans)
    mss = rng.choice([*MSS_CHOICES, rng.randint(537, 1447), rng.randint(1449, 8947)])   # each mss bin alike
    mss = min(mss, limit - len(hdr))
    nsegs = _segments_count(rng, mss)
    pay_len = min(TX_TSO_MAX_PAYLOAD, (nsegs - 1) * mss + rng.randint(1, mss))
    ctx = TxTsoCtx(mss=mss, hdr_len=len(hdr), l3_offset=l3, ipv6=ipv6)
    if fault == "bad_mss":
        ctx.mss = rng.choice([rng.randint(1, TX_TSO_MIN_MSS - 1), limit - len(hdr) + rng.randint(1, 200)])
        pay_len = min(pay_len, 3000)
    elif fault == "bad_len":
        pay_len = 0
    data = hdr + rng.randbytes(pay_len)
    extra = min(pay_len, rng.choice([0, 0, 1, 7, 100]))        # the header may end inside a segment
    n0 = len(hdr) + extra
    descs = [TxDesc(host.place(data[:n0], tx_env.seg_offset(rng, n0)), n0)]
    pos = n0
    for n in (tx_env.split_payload(rng, len(data) - pos, TX_TSO_MAX_SEGS - 1) if pos < len(data) else []):
        descs.append(TxDesc(pay_pool.place(data[pos:pos + n], tx_env.seg_offset(rng, n)), n))
        pos += n
    if fault == "bad_seg":                                       # a zero-length payload descriptor
        at = rng.randint(1, len(descs)) if len(descs) < TX_TSO_MAX_SEGS else len(descs) - 1
        if len(descs) < TX_TSO_MAX_SEGS:
            descs.insert(at, TxDesc(pay_pool.place(b"", 0), 0))
        else:
            descs[at] = TxDesc(descs[at].addr, 0)
    descs[-1].eop = True
    d0 = descs[0]
    d0.tag, d0.tso, d0.csum, d0.csum_start, d0.csum_offset = tag & 0xFFFF, True, True, l4, 16
    if fault == "bad_hdr":
        how = rng.randrange(4)
        if how == 0:
            ctx.hdr_len = TX_TSO_MAX_HDR + 4
        elif how == 1:
            d0.csum = False
        elif how == 2:
            d0.csum_offset = 6
        else:
            ctx.l3_offset = 12
    entries: list[TxDesc | bytes] = [d0, ctx.pack(), *descs[1:]]
    status = check_frame(entries, limit, tso=True)
    segments = tso_segments(data, d0, ctx) if status == TxStatus.OK else []
    send_len = sum(d.len for d in descs)
    return TsoSend(d0, ctx, data, send_len, status, segments, ipv6, vlans, fault), entries


def tso_completion(s: TsoSend, idx: int, ndesc: int, queue: int, cq_idx: int, cq_log2: int) -> TxCompletion:
    """docs/tx.md, the `TSO` send's completion: `len` P (the send's bytes, as its descriptors
    add up, minus hdr_len, 0 when negative, low 16 bits), `tso_segs` the segments sent,
    `csum` 0."""
    return TxCompletion(desc_idx=idx & 0xFFFF, ndesc=ndesc, len=max(0, s.send_len - s.ctx.hdr_len) & 0xFFFF,
                        tag=s.first.tag, csum=0, tso_segs=len(s.segments), status=s.status, queue=queue,
                        gen=1 - ((cq_idx >> cq_log2) % 2))


def tso_counts(s: TsoSend) -> dict[str, int]:
    """docs/tx.md's TSO counters for one send: a sent send counts in TX_TSO_SENDS, its
    segments in TX_TSO_SEGS and, as the frames they are on the wire, in TX_FRAMES and
    TX_BYTES (padded to 60); a failed one once, under its status."""
    if s.status != TxStatus.OK:
        return {STATUS_COUNTER[s.status]: 1}
    n = len(s.segments)
    return {"TX_TSO_SENDS": 1, "TX_TSO_SEGS": n, "TX_FRAMES": n,
            "TX_BYTES": sum(len(f) for f in s.segments)}


# ---------------------------------------------------------------------------------------------
# coverage bins
# ---------------------------------------------------------------------------------------------
def tso_segs_bin(n: int) -> str:
    return "0" if n == 0 else "1" if n == 1 else "2" if n == 2 else "3-8" if n <= 8 else "9-44" if n < 45 else "45"


def tso_mss_bin(s: TsoSend, limit: int) -> str:
    mss = s.ctx.mss
    if mss < TX_TSO_MIN_MSS or s.ctx.hdr_len + mss > limit:
        return "bad"
    return ("536" if mss <= 536 else "537-1447" if mss < 1448 else "1448" if mss == 1448
            else "1449-8947" if mss < 8948 else "8948")
