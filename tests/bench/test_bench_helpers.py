"""The benchmarks' Python helpers, checked without a simulator, so that `make test` catches
what would otherwise only break `make bench` (a helper's signature drifting from the class it
extends broke the goodput bench once)."""
from __future__ import annotations

import importlib
import pkgutil

import pytest
from scapy.layers.inet import TCP
from scapy.layers.l2 import Ether

import bench
from bench.rx_metrics_sim import TCP_TS_OPTION, TsPeer
from tb.frames import Flow


@pytest.mark.parametrize("name", sorted(m.name for m in pkgutil.iter_modules(bench.__path__)))
def test_bench_module_imports(name: str) -> None:
    importlib.import_module(f"bench.{name}")


@pytest.mark.parametrize("mtu, mss", [(1500, 1448), (9000, 8948)])
def test_ts_peer_segments(mtu: int, mss: int) -> None:
    """Data segments carry NOP, NOP, timestamps as Linux sends them (MSS 1448 at MTU 1500); the
    SYN carries only its MSS option; pure ACKs are built through the same path."""
    peer = TsPeer(Flow(), mtu=mtu)
    assert peer.mss == mss
    syn = TCP(bytes(Ether(peer.syn())[TCP]))
    assert syn.flags == "S" and syn.options == [("MSS", mss)]

    data = peer.frame(peer.seq_of(0), bytes(mss))
    seg = Ether(data)[TCP]
    assert [o[0] for o in seg.options] == ["NOP", "NOP", "Timestamp"]
    assert seg.dataofs * 4 == 20 + TCP_TS_OPTION
    assert len(data) == 14 + 20 + 20 + TCP_TS_OPTION + mss == mtu + 14

    ack = Ether(peer.ack_frame(12345, window=1000))[TCP]
    assert ack.flags == "A" and ack.ack == 12345 and ack.window == 1000
