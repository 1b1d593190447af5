"""TCP segmentation offload on the RTL against the golden model (docs/tx.md, "TCP segmentation
offload"; models/tso.py): `TSO` sends of TCP over IPv4 and IPv6, with and without VLAN tags,
headers inline, in their own host segment, or ending inside a segment, payload in device
memory cut into up to 17 segments at odd places; every segment the NIC sends is compared byte
for byte, in order, with `models.tso.tso_segments`, every completion field by field with the
page's completion table (`len` = P, `tso_segs`, `csum` 0), the status with
`models.tx.check_frame(tso=True)`. Random AXI stalls and MAC backpressure
(`TrafficProfile.rough()`), the AXI protocol checker bound into nic_top as in every run.

Each cocotb test runs under a simulated-time limit (`with_timeout`) and the send loop under
a no-progress limit, so a hang fails at once with what was outstanding, not at the pytest
timeout.

Every test also requires TX_OFFLOADS.tso to read 1 (the capability the driver trusts): on the
RTL before TSO (the bit ignored) send 0 came back BAD_SEG, its context entry read as a
descriptor.
"""
from __future__ import annotations

import random
import struct
from dataclasses import dataclass

import cocotb
import pytest
from cocotb.triggers import with_timeout

from driver import regs
from models.formats import (TX_FRAME_MAX_ENTRIES, TX_TSO_MAX_SEGS, TxCompletion, TxDesc,
                            TxStatus, TxTsoCtx)
from models.tso import tso_seed, tso_segments, tso_sent_bounds
from models.tx import STATUS_COUNTER, check_frame
from tb.nic_tb import NicTb, TrafficProfile
from tb.sim import nic_top_params, pytest_test_name, rtl_file_list, run_rtl_test
from tb.tx_env import PagePool, TxRing, bring_up, inline_entries, seg_offset, split_payload

LIMIT = 9076                       # TX_FRAME_LIMIT: MSS 8948 with the longest header (128)
SIM_LIMIT_US = 4000                # whole cocotb test
STALL_US = 400                     # no completion and no frame for this long: a hang


# ------------------------------------------------------------------------------------------
# Sends
# ------------------------------------------------------------------------------------------
@dataclass
class Send:
    """One posted `TSO` send: its ring entries and what the golden model says of it."""
    entries: list[TxDesc | bytes]
    first: TxDesc
    ctx: TxTsoCtx
    data: bytes                    # the send's bytes (header, payload) as the NIC gathers them
    status: TxStatus
    segments: list[bytes]          # the frames it must put on m_axis_tx


def tcp_header(rng: random.Random, ipv6: bool, vlans: int, tcp_opt: int,
               ip_opt: int = 0) -> tuple[bytes, int, int]:
    """Ethernet (+ `vlans` 802.1Q tags), IPv4 (with `ip_opt` option bytes, a multiple of 4)
    or IPv6, TCP with `tcp_opt` option bytes (a multiple of 4); the TCP checksum field holds
    the TSO seed (docs/tx.md: the pseudo-header sum without the length). Length fields and
    the IPv4 checksum hold junk the NIC must overwrite. Returns (header, l3, l4)."""
    eth = rng.randbytes(6) + rng.randbytes(6)
    for _ in range(vlans):
        eth += struct.pack(">HH", 0x8100, rng.randrange(1 << 16))
    eth += struct.pack(">H", 0x86DD if ipv6 else 0x0800)
    l3 = len(eth)
    if ipv6:
        src, dst = rng.randbytes(16), rng.randbytes(16)
        ip = struct.pack(">IHBB", 0x6000_0000 | rng.randrange(1 << 20), rng.randrange(1 << 16),
                         6, 64) + src + dst
    else:
        src, dst = rng.randbytes(4), rng.randbytes(4)
        ihl = 5 + ip_opt // 4
        ip = struct.pack(">BBHHHBBH", 0x40 | ihl, rng.randrange(256), rng.randrange(1 << 16),
                         rng.randrange(1 << 16), 0x4000, 64, 6, rng.randrange(1 << 16))
        ip += src + dst + bytes([1] * ip_opt)            # NOP options
    l4 = l3 + len(ip)
    flags = 0x10 | rng.choice([0, 0x01, 0x08, 0x09, 0x80, 0x89, 0x29])     # ACK + FIN/PSH/CWR/URG
    tcp = struct.pack(">HHIIBBHHH", rng.randrange(1 << 16), rng.randrange(1 << 16),
                      rng.randrange(1 << 32), rng.randrange(1 << 32), (5 + tcp_opt // 4) << 4,
                      flags, rng.randrange(1 << 16), tso_seed(src, dst), 0)
    tcp += bytes([1] * tcp_opt)
    return eth + ip + tcp, l3, l4


def make_send(rng: random.Random, host: PagePool, dev: PagePool, tag: int, *, ipv6: bool,
              vlans: int, mss: int, inline: bool, nsegs: int = 1, tcp_opt: int = 12,
              pay_len: int | None = None, ctx_over: dict | None = None,
              first_over: dict | None = None, last_len: int = 0,
              ip_opt: int | None = None) -> Send:
    """A `TSO` send of `nsegs` TCP segments (`pay_len` payload bytes when given) at `mss`.
    The header is inline (`inline`, the queue has CTRL.inline_en) or at the start of a host
    segment that may also hold the first payload bytes; the payload is in device memory.
    `ctx_over` / `first_over`: fields to spoil (error cases); `last_len`: the last
    descriptor holds exactly the send's last `last_len` bytes."""
    if ip_opt is None:
        ip_opt = 0 if ipv6 else rng.choice([0, 0, 8])
    hdr, l3, l4 = tcp_header(rng, ipv6, vlans, tcp_opt, ip_opt=ip_opt)
    if pay_len is None:
        pay_len = (nsegs - 1) * mss + rng.randint(1, mss)
    payload = rng.randbytes(pay_len)
    data = hdr + payload
    ctx = TxTsoCtx(mss=mss, hdr_len=len(hdr), l3_offset=l3, ipv6=ipv6)
    for k, v in (ctx_over or {}).items():
        setattr(ctx, k, v)
    descs: list[TxDesc] = []
    inl: list[bytes] = []
    pos = 0
    if inline:
        inl = inline_entries(hdr, pad=rng.randrange(256))
        pos = len(hdr)
    else:
        # The header's segment: the header and maybe the first payload bytes (the header then
        # ends inside a segment).
        extra = min(pay_len, rng.choice([0, 0, 1, 7, 100]))
        n = len(hdr) + extra
        descs.append(TxDesc(host.place(data[:n], seg_offset(rng, n)), n))
        pos = n
    rest = len(data) - pos
    max_descs = TX_TSO_MAX_SEGS - 1           # the header segment, or an INLINE descriptor of len 0
    if last_len and rest > last_len:
        lens = split_payload(rng, rest - last_len, max_descs - 1) + [last_len]
    else:
        lens = split_payload(rng, rest, max_descs) if rest else []
    for n in lens:
        descs.append(TxDesc(dev.place(data[pos:pos + n], seg_offset(rng, n)), n))
        pos += n
    if inline and (not descs or rng.random() < 0.5):
        descs.insert(0, TxDesc(0, 0))                      # the INLINE descriptor: no segment
    descs[-1].eop = True
    d0 = descs[0]
    d0.tag, d0.tso, d0.csum, d0.csum_start, d0.csum_offset = tag, True, True, l4, 16
    if inline:
        d0.inline, d0.inline_len = True, len(hdr)
    for k, v in (first_over or {}).items():
        setattr(d0, k, v)
    entries: list[TxDesc | bytes] = [d0, ctx.pack(), *inl, *descs[1:]]
    status = check_frame(entries, LIMIT, tso=True)
    segments = tso_segments(data, d0, ctx) if status == TxStatus.OK else []
    return Send(entries, d0, ctx, data, status, segments)


def expected_cpl(s: Send, idx: int, queue: int, cq_idx: int, cq_log2: int) -> TxCompletion:
    """docs/tx.md, the `TSO` send's completion table."""
    send_len = len(s.data)
    return TxCompletion(desc_idx=idx & 0xFFFF, ndesc=len(s.entries),
                        len=max(0, send_len - s.ctx.hdr_len) & 0xFFFF, tag=s.first.tag, csum=0,
                        tso_segs=len(s.segments), status=s.status, queue=queue,
                        gen=1 - ((cq_idx >> cq_log2) % 2))


# ------------------------------------------------------------------------------------------
# Posting and checking
# ------------------------------------------------------------------------------------------
async def run_sends(tb: NicTb, ring: TxRing, sends: list[Send], alone: bool = False) -> None:
    """Post the sends (as the ring allows; `alone`: each only once every earlier one has
    completed, so it is the last posted entries of its ring), then check every completion and
    every frame on m_axis_tx in order, failing after STALL_US of simulated time without
    progress."""
    posted = 0
    done = 0
    first_idx: list[int] = []
    consumed = 0
    size = 1 << ring.log2
    want_frames = [f for s in sends for f in s.segments]
    got_frames: list[bytes] = []
    idle_ns = 0
    while done < len(sends) or len(got_frames) < len(want_frames):
        rung = False
        while (posted < len(sends) and ring.sw_idx - consumed + len(sends[posted].entries) <= size
               and (not alone or posted == done)):
            first_idx.append(ring.write_descs(sends[posted].entries))
            posted += 1
            rung = True
        if rung:
            await ring.doorbell()
        await tb.delay(500)
        progress = False
        for c in ring.poll():
            assert done < len(sends), f"unexpected completion {c}"
            s = sends[done]
            want = expected_cpl(s, first_idx[done], ring.t, done, ring.cq_log2)
            assert c == want, (f"send {done} ({len(s.segments)} segments, mss {s.ctx.mss}, "
                               f"status {s.status.name}): completion {c}, want {want}")
            consumed += c.ndesc
            done += 1
            progress = True
        await ring.ack()
        for f in tb.tx_frames():
            k = len(got_frames)
            assert k < len(want_frames), f"extra frame on m_axis_tx ({len(f)} bytes)"
            want_f = want_frames[k]
            assert f == want_f, (f"frame {k}: {len(f)} bytes, want {len(want_f)}; first "
                                 f"difference at byte "
                                 f"{next((i for i, (a, b) in enumerate(zip(f, want_f)) if a != b), min(len(f), len(want_f)))}")
            got_frames.append(f)
            progress = True
        idle_ns = 0 if progress else idle_ns + 500
        assert idle_ns < STALL_US * 1000, (
            f"no progress for {STALL_US} us: {done} of {len(sends)} completions, "
            f"{len(got_frames)} of {len(want_frames)} frames")
    await tb.delay(500)
    assert not tb.tx_frames(), "extra frames on m_axis_tx after the last send"


async def setup(dut, seed_off: int) -> tuple[NicTb, random.Random, TxRing, TxRing, PagePool, PagePool, int]:
    tb = NicTb(dut, cocotb.RANDOM_SEED, TrafficProfile.rough())
    rng = random.Random(cocotb.RANDOM_SEED + seed_off)
    await tb.reset()
    tso = regs.TX_OFFLOADS_TSO.get(await tb.read32(regs.TX_OFFLOADS))
    await tb.write32(regs.TX_FRAME_LIMIT, LIMIT)
    r0 = (await bring_up(tb, [0], log2=8))[0]
    r1 = (await bring_up(tb, [1], log2=8, inline_en=True))[0]
    host = PagePool(tb, 64, device=False)
    dev = PagePool(tb, 512, device=True)
    return tb, rng, r0, r1, host, dev, tso


async def counters(tb: NicTb, names: list[str]) -> dict[str, int]:
    return {n: await tb.read32(getattr(regs, n)) for n in names if hasattr(regs, n)}


# ------------------------------------------------------------------------------------------
@cocotb.test()
async def tso_small(dut) -> None:
    """1 to 3 segments, IPv4 and IPv6, with and without VLAN, header inline or in host
    memory, MSS 536 and 1448, a last segment shorter than 60 bytes: the make-test portion."""
    async def body() -> None:
        tb, rng, r0, r1, host, dev, tso = await setup(dut, 0)
        tag = 1
        plain: list[Send] = []
        inl: list[Send] = []
        for ipv6 in (False, True):
            for vlans in (0, 1):
                for mss, nsegs in ((536, 1), (1448, 2), (536, 3)):
                    for ring_sends, inline in ((plain, False), (inl, True)):
                        ring_sends.append(make_send(rng, host, dev, tag, ipv6=ipv6, vlans=vlans,
                                                    mss=mss, nsegs=nsegs, inline=inline))
                        tag += 1
        # A last segment of 54 + 3 bytes: sent padded to 60 (docs/tx.md).
        for ring_sends, inline in ((plain, False), (inl, True)):
            ring_sends.append(make_send(rng, host, dev, tag, ipv6=False, vlans=0, mss=536,
                                        pay_len=536 + 3, inline=inline, tcp_opt=0, ip_opt=0))
            assert len(ring_sends[-1].segments[-1]) == 60
            tag += 1
        assert all(s.status == TxStatus.OK for s in plain + inl), "test setup: every send is good"
        try:
            await run_sends(tb, r0, plain)
            await run_sends(tb, r1, inl)
        except AssertionError as e:
            raise AssertionError(f"{e} (TX_OFFLOADS.tso reads {tso})") from None
        assert tso == 1, "every send matched the model but TX_OFFLOADS.tso reads 0"
    await with_timeout(body(), SIM_LIMIT_US, "us")


@cocotb.test()
async def tso_errors(dut) -> None:
    """Each status of the rules, each send followed by a good one on the same queue:
    BAD_SEG (a bad segment; 18 descriptors without EOP), TSO_BAD_HDR (hdr_len 132, CSUM
    clear, csum_offset 6, l3_offset 12), TSO_BAD_LEN (no payload), TSO_BAD_MSS
    (mss 87; hdr_len + mss over the frame limit), DMA_RD_ERR (a payload read fails: the
    segments before it are sent; the header read fails: none is), with their counters."""
    async def body() -> None:
        tb, rng, r0, _r1, host, dev, tso = await setup(dut, 1)
        tag = 100
        sends: list[Send] = []

        def add(**kw) -> Send:
            nonlocal tag
            s = make_send(rng, host, dev, tag, inline=False, **kw)
            tag += 1
            sends.append(s)
            good = make_send(rng, host, dev, tag, inline=False, ipv6=False, vlans=0, mss=536, nsegs=2)
            tag += 1
            sends.append(good)
            return s

        add(ipv6=False, vlans=0, mss=536, nsegs=2, ctx_over={"hdr_len": 132})
        add(ipv6=True, vlans=1, mss=536, nsegs=2, first_over={"csum": False})
        add(ipv6=False, vlans=0, mss=536, nsegs=2, first_over={"csum_offset": 6})
        add(ipv6=False, vlans=0, mss=536, nsegs=2, ctx_over={"l3_offset": 12})  # below 14
        add(ipv6=False, vlans=0, mss=536, nsegs=1, pay_len=0)
        add(ipv6=False, vlans=0, mss=87, nsegs=2)
        add(ipv6=True, vlans=0, mss=8948 + 100, nsegs=1)
        want_status = [TxStatus.TSO_BAD_HDR] * 4 + [TxStatus.TSO_BAD_LEN] + [TxStatus.TSO_BAD_MSS] * 2
        assert [s.status for s in sends[0::2]] == want_status, [s.status for s in sends[0::2]]
        # BAD_SEG: a payload segment of length 0 in the middle.
        s = make_send(rng, host, dev, tag, inline=False, ipv6=False, vlans=0, mss=536, nsegs=3)
        zero = TxDesc(dev.place(b"", 0), 0)
        s.entries.insert(2, zero)
        sends.append(Send(s.entries, s.first, s.ctx, s.data, check_frame(s.entries, LIMIT, tso=True), []))
        assert sends[-1].status == TxStatus.BAD_SEG
        tag += 1
        # DMA_RD_ERR: the last descriptor (the last 40 bytes of a 3-segment send, so inside
        # its last TCP segment) fails: exactly the first 2 segments are sent (rule 5).
        s = make_send(rng, host, dev, tag, inline=False, ipv6=True, vlans=1, mss=1448,
                      pay_len=2 * 1448 + 300, last_len=40)
        last = s.entries[-1]
        assert isinstance(last, TxDesc) and last.len == 40
        tb.space.add_error_range(last.addr + 39, 1)
        lens = [d.len for d in s.entries if isinstance(d, TxDesc) and d.len]
        assert tso_sent_bounds(lens, len(lens) - 1, s.ctx) == (2, 2)
        sends.append(Send(s.entries, s.first, s.ctx, s.data, TxStatus.DMA_RD_ERR, s.segments[:2]))
        tag += 1
        sends.append(make_send(rng, host, dev, tag, inline=False, ipv6=False, vlans=1, mss=536, nsegs=2))
        tag += 1
        # DMA_RD_ERR in the header read (host segment, first byte): no segment is sent.
        s = make_send(rng, host, dev, tag, inline=False, ipv6=False, vlans=0, mss=536, nsegs=3)
        hdr_seg = s.entries[0]
        assert isinstance(hdr_seg, TxDesc)
        tb.space.add_error_range(hdr_seg.addr, 1)
        lens = [d.len for d in s.entries if isinstance(d, TxDesc) and d.len]
        assert tso_sent_bounds(lens, 0, s.ctx) == (0, 0)
        sends.append(Send(s.entries, s.first, s.ctx, s.data, TxStatus.DMA_RD_ERR, []))
        tag += 1
        sends.append(make_send(rng, host, dev, tag, inline=False, ipv6=True, vlans=0, mss=536, nsegs=2))
        tag += 1
        before = await counters(tb, ["TX_FRAMES", "TX_ERR_BAD_SEG", "TX_ERR_TSO_HDR", "TX_DMA_RD_ERR",
                                     "TX_ERR_TSO_LEN", "TX_ERR_TSO_MSS", "TX_TSO_SEGS", "TX_TSO_SENDS"])
        try:
            await run_sends(tb, r0, sends)
        except AssertionError as e:
            raise AssertionError(f"{e} (TX_OFFLOADS.tso reads {tso})") from None
        after = await counters(tb, list(before))
        inc = {n: (after[n] - before[n]) & 0xFFFF_FFFF for n in before}
        want = {"TX_FRAMES": sum(len(s.segments) for s in sends), "TX_ERR_BAD_SEG": 1,
                "TX_DMA_RD_ERR": 2,
                "TX_ERR_TSO_HDR": 4, "TX_ERR_TSO_LEN": 1, "TX_ERR_TSO_MSS": 2,
                "TX_TSO_SEGS": sum(len(s.segments) for s in sends),
                "TX_TSO_SENDS": sum(s.status == TxStatus.OK for s in sends)}
        assert inc == {n: want[n] for n in inc}, f"counters {inc}, want {want}"
        assert set(inc) == set(want), f"TSO counters missing from driver.regs: {set(want) - set(inc)}"
        assert tso == 1, "every send matched the model but TX_OFFLOADS.tso reads 0"
    await with_timeout(body(), SIM_LIMIT_US, "us")


@cocotb.test()
async def tso_sweep(dut) -> None:
    """The issue's range: 1 to 45 segments, MSS 536 to 8948, up to 64 KiB sends in up to 17
    payload descriptors, IPv4/IPv6, 0-2 VLAN tags, inline or host headers (regress only)."""
    async def body() -> None:
        tb, rng, r0, r1, host, dev, tso = await setup(dut, 2)
        tag = 1000
        plain: list[Send] = []
        inl: list[Send] = []
        cases = [(536, 45), (536, rng.randint(4, 44)), (1448, 45), (1448, rng.randint(4, 44)),
                 (4096, 16), (8948, 7), (8948, 1), (rng.randint(536, 8948), 0)]
        for i, (mss, nsegs) in enumerate(cases * 2):
            nsegs = nsegs or rng.randint(1, 65535 // mss)
            pay = min(65535, (nsegs - 1) * mss + rng.randint(1, mss))
            inline = i % 2 == 1
            (inl if inline else plain).append(make_send(
                rng, host, dev, tag, ipv6=bool(i & 2), vlans=rng.randint(0, 2), mss=mss,
                nsegs=nsegs, pay_len=pay, inline=inline, tcp_opt=rng.choice([0, 12, 40])))
            tag += 1
        assert all(s.status == TxStatus.OK for s in plain + inl), [s.status for s in plain + inl]
        try:
            await run_sends(tb, r0, plain)
            await run_sends(tb, r1, inl)
        except AssertionError as e:
            raise AssertionError(f"{e} (TX_OFFLOADS.tso reads {tso})") from None
        assert tso == 1, "every send matched the model but TX_OFFLOADS.tso reads 0"
    await with_timeout(body(), 40 * SIM_LIMIT_US, "us")


@cocotb.test()
async def tso_long(dut) -> None:
    """Malformed sends that own the most ring entries a frame can (TX_FRAME_MAX_ENTRIES, 35)
    or whose descriptor lengths add up past 2^20 bytes, each posted alone (the last entries of
    its ring, nothing after it) and followed by a good send: every one completes with the
    model's status, `len` and counters, and its queue goes on (docs/tx.md, "Rings and
    registers", and the TSO completion table)."""
    async def body() -> None:
        tb, rng, r0, r1, host, dev, tso = await setup(dut, 3)
        tag = 2000

        def good(inline: bool) -> Send:
            nonlocal tag
            tag += 1
            return make_send(rng, host, dev, tag, inline=inline, ipv6=bool(tag & 1), vlans=0,
                             mss=536, nsegs=2)

        def bad(inline_len: int, lens: list[int], eop: bool = True) -> Send:
            """A TSO send of an inline header of `inline_len` bytes (0: none; a host header
            segment is then the first of `lens`) and descriptors of `lens` bytes (the first is
            the INLINE descriptor's own segment, 0: none). Lengths over 4096 are bad segments
            the NIC must refuse unread: their addresses hold nothing."""
            nonlocal tag
            tag += 1
            hdr, l3, l4 = tcp_header(rng, False, 0, 0, ip_opt=0)
            ctx = TxTsoCtx(mss=536, hdr_len=len(hdr), l3_offset=l3, ipv6=False)
            inl = rng.randbytes(inline_len)
            if inline_len:
                inl = hdr + inl[len(hdr):]
            descs = []
            for i, n in enumerate(lens):
                if n == 0 or n > 4096:
                    descs.append(TxDesc(dev.place(b"", 0), n))
                elif i == 0 and not inline_len:
                    descs.append(TxDesc(host.place(hdr + rng.randbytes(n - len(hdr)), 0), n))
                else:
                    descs.append(TxDesc(dev.place(rng.randbytes(n), seg_offset(rng, n)), n))
            descs[-1].eop = eop
            d0 = descs[0]
            d0.tag, d0.tso, d0.csum, d0.csum_start, d0.csum_offset = tag, True, True, l4, 16
            if inline_len:
                d0.inline, d0.inline_len = True, inline_len
            entries: list[TxDesc | bytes] = [d0, ctx.pack(), *inline_entries(inl), *descs[1:]]
            status = check_frame(entries, LIMIT, tso=True)
            # The send's bytes as far as completions see them (only their number matters).
            return Send(entries, d0, ctx, bytes(inline_len + sum(lens)), status, [])

        small = [rng.randint(1, 200) for _ in range(TX_TSO_MAX_SEGS)]
        inl_sends = [
            # 240 inline bytes (15 entries), an INLINE descriptor without a segment and 16
            # payload descriptors: 33 entries, EOP at entry 32 (past the RTL's old 32-entry
            # look-ahead, and fewer than 18 descriptors: it stalled).
            bad(240, [0] + small[1:17]),
            # 255 inline bytes (16 entries), 17 descriptors: 34 entries, EOP at entry 33.
            bad(255, small[:17]),
            # ... 18 descriptors: 35 entries, EOP on the last.
            bad(255, small),
            # ... and none with EOP: the send ends at its 18th descriptor, BAD_SEG.
            bad(255, small, eop=False),
            # 18 descriptors of 65535 bytes after 255 inline bytes: 1 179 885 bytes, BAD_SEG.
            bad(255, [65535] * TX_TSO_MAX_SEGS),
        ]
        # A host header segment and 16 descriptors of 65535 bytes: 54 + 1 048 560 bytes, just
        # past 2^20 (a 20-bit sum wraps to 38, below hdr_len).
        plain_sends = [bad(0, [54] + [65535] * 16), bad(0, [54] + [65535] * 17)]
        want = [TxStatus.TSO_BAD_HDR] * 3 + [TxStatus.BAD_SEG] * 2
        assert [s.status for s in inl_sends] == want, [s.status.name for s in inl_sends]
        assert [s.status for s in plain_sends] == [TxStatus.BAD_SEG] * 2
        assert [len(s.entries) for s in inl_sends] == [33, 34] + [TX_FRAME_MAX_ENTRIES] * 3
        assert [max(0, len(s.data) - s.ctx.hdr_len) & 0xFFFF for s in plain_sends] == [65520, 65519]
        sends_r1 = [x for s in inl_sends for x in (s, good(True))]
        sends_r0 = [x for s in plain_sends for x in (s, good(False))]
        names = sorted({"TX_FRAMES", "TX_TSO_SENDS", "TX_TSO_SEGS",
                        *(STATUS_COUNTER[s.status] for s in inl_sends + plain_sends)})
        before = await counters(tb, names)
        try:
            await run_sends(tb, r1, sends_r1, alone=True)
            await run_sends(tb, r0, sends_r0, alone=True)
        except AssertionError as e:
            raise AssertionError(f"{e} (TX_OFFLOADS.tso reads {tso})") from None
        after = await counters(tb, names)
        inc = {n: (after[n] - before[n]) & 0xFFFF_FFFF for n in names}
        allsends = sends_r1 + sends_r0
        want_c = {n: 0 for n in names}
        for s in allsends:
            if s.status == TxStatus.OK:
                want_c["TX_TSO_SENDS"] += 1
            else:
                want_c[STATUS_COUNTER[s.status]] += 1
        want_c["TX_FRAMES"] = want_c["TX_TSO_SEGS"] = sum(len(s.segments) for s in allsends)
        assert inc == want_c, f"counters {inc}, want {want_c}"
        assert tso == 1, "every send matched the model but TX_OFFLOADS.tso reads 0"
    await with_timeout(body(), SIM_LIMIT_US, "us")


WIDTHS = [(64, 128), (512, 1024)]


def _params(data_w: int, dma_w: int) -> dict[str, int]:
    # The builds of test_tx / test_tx_rules (same parameter spelling).
    return nic_top_params(data_w, dma_w)


@pytest.mark.rtl
@pytest.mark.parametrize("data_w,dma_w", WIDTHS)
def test_tx_tso(data_w: int, dma_w: int) -> None:
    run_rtl_test("nic_top", rtl_file_list(), "tests.rtl.test_tx_tso", _params(data_w, dma_w),
                 pytest_test_name(), testcase="tso_small,tso_errors,tso_long")


@pytest.mark.rtl
@pytest.mark.slow
@pytest.mark.regress_only
@pytest.mark.parametrize("data_w,dma_w", WIDTHS)
def test_tx_tso_sweep(data_w: int, dma_w: int) -> None:
    run_rtl_test("nic_top", rtl_file_list(), "tests.rtl.test_tx_tso", _params(data_w, dma_w),
                 pytest_test_name(), testcase="tso_sweep")
