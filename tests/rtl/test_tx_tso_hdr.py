"""tx_tso_hdr (rtl/tx/tx_tso_hdr.sv) alone against the TSO golden model (models/tso.py).

For every send the testbench loads the header, collects each segment's header beats (under
random output backpressure and input gaps, checking AXI-Stream stability of every held
beat), appends the segment's payload, completes the checksum as the TX path does for any
CHECKSUM_PARTIAL frame (`models.tx.l4_checksum` at csum_start, csum_offset 16) and compares
the frame with `models.tso.tso_segments`, segment by segment: IPv4 and IPv6, with and
without VLAN, IPv4 options, 1 to 46 segments, MSS 536 to 8948, random IDs, sequence
numbers (wrapping) and flags.

The cocotb tests below run inside the simulator; the pytest function at the bottom builds and
runs them at DATA_W 64 and 512.
"""
from __future__ import annotations

import random
from ipaddress import ip_address

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge
from scapy.all import IP, TCP, Dot1Q, Ether, IPOption_NOP, IPv6

from models.formats import TxDesc, TxTsoCtx
from models.tso import tso_seed, tso_segments
from models.tx import l4_checksum
from tb.sim import pytest_test_name, run_rtl_test

SOURCES = ["rtl/formats/generated/nic_dma_pkg.sv", "rtl/tx/tx_tso_hdr.sv"]
SRC4, DST4 = "10.1.2.3", "192.168.100.7"
SRC6, DST6 = "fd00::1:2", "2001:db8::99"


def make_send(rng: random.Random, ipv: int, vlan: bool, ip_opts: int, pay_len: int,
              mss: int) -> tuple[bytes, TxDesc, TxTsoCtx]:
    """A send as a driver posts it: header (seed in the TCP checksum field) and payload."""
    e = Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02")
    if vlan:
        e = e / Dot1Q(vlan=rng.randrange(1, 4095))
    if ipv == 4:
        ip = IP(src=SRC4, dst=DST4, id=rng.randrange(65536), flags="DF", ttl=64,
                options=[IPOption_NOP()] * (4 * ip_opts))
    else:
        ip = IPv6(src=SRC6, dst=DST6, hlim=64)
    flags = "".join(f for f in "FSRPAUEC" if f in "A" or rng.random() < 0.4).replace("S", "")
    opts = rng.choice([[], [("NOP", None), ("NOP", None), ("Timestamp", (rng.randrange(1 << 32), 5))]])
    tcp = TCP(sport=rng.randrange(1, 65536), dport=5201, seq=rng.choice([rng.randrange(1 << 32), 0xFFFF_FF00]),
              ack=rng.randrange(1 << 32), flags=flags, window=rng.randrange(65536), options=opts)
    hdr = bytearray(bytes(e / ip / tcp))
    l3 = 18 if vlan else 14
    l4 = l3 + (20 + 4 * ip_opts if ipv == 4 else 40)
    src, dst = (SRC4, DST4) if ipv == 4 else (SRC6, DST6)
    hdr[l4 + 16:l4 + 18] = tso_seed(ip_address(src).packed, ip_address(dst).packed).to_bytes(2, "big")
    payload = bytes(rng.randrange(256) for _ in range(pay_len))
    first = TxDesc(addr=0, len=0, tso=True, csum=True, csum_start=l4, csum_offset=16)
    ctx = TxTsoCtx(mss=mss, hdr_len=len(hdr), l3_offset=l3, ipv6=ipv == 6)
    return bytes(hdr) + payload, first, ctx


class Tb:
    def __init__(self, dut) -> None:
        self.dut = dut
        self.rng = random.Random(cocotb.RANDOM_SEED)

    async def reset(self) -> None:
        d = self.dut
        cocotb.start_soon(Clock(d.clk, 4, unit="ns").start())
        d.rst.value = 1
        d.s_cmd_valid.value = 0
        d.s_hdr_tvalid.value = 0
        d.m_tready.value = 0
        for _ in range(3):
            await RisingEdge(d.clk)
        d.rst.value = 0
        await RisingEdge(d.clk)

    # Inputs are driven and outputs sampled at the falling edge, where every register output
    # has settled: a beat with VALID and READY both high then is taken at the next rising edge
    # (no ready or valid of this block depends combinationally on the other side).
    async def drive(self, send: bytes, first: TxDesc, ctx: TxTsoCtx, db: int) -> None:
        d = self.dut
        await FallingEdge(d.clk)
        d.s_cmd_hdr_len.value = ctx.hdr_len
        d.s_cmd_l3_off.value = ctx.l3_offset
        d.s_cmd_l4_off.value = first.csum_start
        d.s_cmd_ipv6.value = int(ctx.ipv6)
        d.s_cmd_mss.value = ctx.mss
        d.s_cmd_pay_len.value = len(send) - ctx.hdr_len
        d.s_cmd_valid.value = 1
        while not int(d.s_cmd_ready.value):
            await FallingEdge(d.clk)
        await FallingEdge(d.clk)
        d.s_cmd_valid.value = 0
        nb = -(-ctx.hdr_len // db)
        for b in range(nb):
            while self.rng.random() < 0.3:
                d.s_hdr_tvalid.value = 0
                await FallingEdge(d.clk)
            chunk = send[b * db:(b + 1) * db].ljust(db, b"\0")   # the beat carries payload too
            d.s_hdr_tdata.value = int.from_bytes(chunk, "little")
            d.s_hdr_tlast.value = int(b == nb - 1)
            d.s_hdr_tvalid.value = 1
            while not int(d.s_hdr_tready.value):
                await FallingEdge(d.clk)
            await FallingEdge(d.clk)
        d.s_hdr_tvalid.value = 0

    async def collect(self, nsegs: int, db: int, stall: float) -> list[tuple[bytes, int, int, int]]:
        """(header bytes, first, last, pay_len) per segment; AXI-Stream stability checked."""
        d = self.dut
        out = []
        cur = bytearray()
        held = None
        cycles = 0
        while len(out) < nsegs:
            await FallingEdge(d.clk)
            ready = int(self.rng.random() >= stall)
            d.m_tready.value = ready
            cycles += 1
            assert cycles < 200_000, "tx_tso_hdr: no output (hang)"
            if not int(d.m_tvalid.value):
                assert held is None, "AXIS: TVALID dropped before TREADY"
                continue
            beat = (int(d.m_tdata.value), int(d.m_tkeep.value), int(d.m_tlast.value),
                    int(d.m_tuser.value))
            # m_hdr is the segment's header while its first beat is on show (the consumer
            # takes it with that beat); after it, it may change.
            if not cur:
                beat += (int(d.m_hdr.value).to_bytes(len(d.m_hdr.value) // 8, "little"),)
            if held is not None:
                assert beat == held, f"AXIS: beat (or m_hdr with the first beat) changed while stalled: {held} -> {beat}"
            if not ready:
                held = beat
                continue
            held = None
            data, keep, last, user = beat[:4]
            if not cur:
                seg_hdr = beat[4]
            nkeep = bin(keep).count("1")
            assert keep == (1 << nkeep) - 1, f"TKEEP not contiguous: {keep:x}"
            assert last or nkeep == db, "TKEEP not full before TLAST"
            cur += data.to_bytes(db, "little")[:nkeep]
            if last:
                assert seg_hdr[:len(cur)] == bytes(cur), "m_hdr differs from the header beats"
                out.append((bytes(cur), user >> 17 & 1, user >> 16 & 1, user & 0xFFFF))
                cur = bytearray()
        await FallingEdge(d.clk)
        d.m_tready.value = 0
        return out


async def run_send(tb: Tb, send: bytes, first: TxDesc, ctx: TxTsoCtx, db: int,
                   stall: float) -> None:
    want = tso_segments(send, first, ctx)
    pay = send[ctx.hdr_len:]
    drv = cocotb.start_soon(tb.drive(send, first, ctx, db))
    got = await tb.collect(len(want), db, stall)
    await drv
    for k, (hdr, f, last, pay_k) in enumerate(got):
        chunk = pay[k * ctx.mss:(k + 1) * ctx.mss]
        assert (f, last, pay_k) == (int(k == 0), int(k == len(want) - 1), len(chunk)), \
            f"segment {k}: tuser first/last/pay_len {(f, last, pay_k)}"
        assert len(hdr) == ctx.hdr_len, f"segment {k}: header of {len(hdr)} bytes"
        frame, _ = l4_checksum(hdr + chunk, first.csum_start, 16)
        w = want[k][:len(frame)]
        if frame != w:
            diff = [i for i in range(len(frame)) if frame[i] != w[i]][:8]
            raise AssertionError(f"segment {k} of {len(want)} (ipv6={ctx.ipv6}, l3={ctx.l3_offset}, "
                                 f"l4={first.csum_start}, hdr={ctx.hdr_len}, mss={ctx.mss}): "
                                 f"bytes differ at {diff}: got {[frame[i] for i in diff]} "
                                 f"want {[w[i] for i in diff]}")
    # nothing more comes out
    for _ in range(4):
        await FallingEdge(tb.dut.clk)
        assert not int(tb.dut.m_tvalid.value), "output beat after the send's last segment"
    assert not int(tb.dut.busy.value)


def data_bytes(dut) -> int:
    return len(dut.m_tkeep.value)


@cocotb.test()
async def directed(dut) -> None:
    """The corners: 1 segment, 45 and 46 segments, MSS 536 and 8948, IPv4 options, VLAN."""
    tb = Tb(dut)
    await tb.reset()
    db = data_bytes(dut)
    rng = tb.rng
    for ipv, vlan, opts, pay, mss in [(4, False, 0, 1, 536), (4, True, 0, 65160, 1448),
                                      (6, False, 0, 65535, 1448), (6, True, 0, 20000, 8948),
                                      (4, False, 10, 3000, 536), (4, True, 3, 8948, 8948)]:
        send, first, ctx = make_send(rng, ipv, vlan, opts, pay, mss)
        await run_send(tb, send, first, ctx, db, stall=0.0)


@cocotb.test()
async def header_of_128_bytes(dut) -> None:
    """hdr_len = TX_TSO_MAX_HDR (128), the longest header tx.md allows, in every beat the
    block stores (16 at 64 bits). A real Ethernet + IP + TCP header is 2 mod 4 bytes long,
    never 128; the context may still say 128 (the rules check hdr_len <= 128 and a TCP header
    of at least 20 bytes, not the TCP data offset), and then the bytes after the TCP header up
    to 128 are header bytes, copied into every segment: as models/tso.py does."""
    tb = Tb(dut)
    await tb.reset()
    db = data_bytes(dut)
    for ipv, vlan, opts in ((4, True, 10), (6, False, 0)):
        send, first, ctx = make_send(tb.rng, ipv, vlan, opts, 5000, 1448)
        assert ctx.hdr_len < 128
        ctx = TxTsoCtx(mss=ctx.mss, hdr_len=128, l3_offset=ctx.l3_offset, ipv6=ctx.ipv6)
        await run_send(tb, send, first, ctx, db, stall=0.3)


@cocotb.test()
async def random_sends(dut) -> None:
    """Random sends under output backpressure and input gaps."""
    tb = Tb(dut)
    await tb.reset()
    db = data_bytes(dut)
    rng = tb.rng
    for _ in range(16):
        ipv = rng.choice([4, 6])
        mss = rng.choice([536, 1220, 1448, 4096, 8948, rng.randrange(536, 8949)])
        pay = rng.randrange(1, min(65536, mss * 12))
        send, first, ctx = make_send(rng, ipv, rng.random() < 0.5,
                                     rng.randrange(0, 11) if ipv == 4 else 0, pay, mss)
        await run_send(tb, send, first, ctx, db, stall=rng.choice([0.0, 0.3, 0.7]))


@cocotb.test()
async def empty_commands_emit_nothing(dut) -> None:
    """mss 0 or pay_len 0 (refused upstream): the block takes the header and emits nothing."""
    tb = Tb(dut)
    await tb.reset()
    db = data_bytes(dut)
    send, first, ctx = make_send(tb.rng, 4, False, 0, 100, 536)
    for bad in (TxTsoCtx(mss=0, hdr_len=ctx.hdr_len, l3_offset=14), None):
        c = bad if bad is not None else ctx
        s = send if bad is not None else send[:ctx.hdr_len]
        await tb.drive(s, first, c, db)
        for _ in range(40):
            await FallingEdge(dut.clk)
            assert not int(dut.m_tvalid.value)
        assert not int(dut.busy.value)
    # and the next send is fine
    await run_send(tb, send, first, ctx, db, stall=0.2)


# --------------------------------------------------------------------------------------------
# pytest entry point
# --------------------------------------------------------------------------------------------
@pytest.mark.rtl
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("data_w", [64, 512])
def test_tx_tso_hdr(data_w: int) -> None:
    run_rtl_test("tx_tso_hdr", SOURCES, "tests.rtl.test_tx_tso_hdr", {"DATA_W": data_w},
                 pytest_test_name())
