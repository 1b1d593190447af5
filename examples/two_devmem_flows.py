"""Two steered devmem flows on two dma-bufs, tokens returned late.

Run it:  nicsim scenario examples/two_devmem_flows.py [--backend model|rtl] [--data-width 64]

An administrator's setup (docs/driver.md): header split on, n-tuple rules that pin flow A
(port 5201) to queue 2 and flow B (port 5202) to queue 3, RSS "equal 2" over queues 0-1, and
two dma-bufs, one bound to each queue. Two TCP connections then each carry 48 KiB. The
application reads both with MSG_SOCK_DEVMEM but keeps every token (the GPU is still using
the buffers) until both streams are complete; only then does it give them back with
SO_DEVMEM_DONTNEED. It checks that each stream's fragments come only from its own dma-buf,
that every byte read through the GPU accessor is what was sent, that the held tokens pinned
the buffers (the page pools' buffers in use) and that returning them frees them all.
"""
from __future__ import annotations

from driver import ethtool
from tb.frames import Flow
from tb.scenario import DriverEnv, Reader, Rig, TcpPeer, make_data, require_steering

STREAM_BYTES = 48 << 10


async def scenario_two_flows_late_tokens(env: DriverEnv) -> None:
    nq = 4
    rig = await Rig.create(env, rx_pending=64, channels=nq, num_rxq=nq)
    nd = rig.netdev
    await require_steering(env, nd)
    await ethtool.set_rx_flow_hash(nd.hw, {"ip4", "tcp4", "udp4", "ip6", "tcp6", "udp6"})
    await ethtool.set_rxfh_equal(nd.hw, 2, nq)              # ordinary traffic: queues 0 and 1
    rules = ethtool.NtupleRules(nd.hw, nd.real_num_rx_queues)
    await rules.clear()
    peers, binds, readers = [], [], []
    for i, (port, queue) in enumerate(((5201, 2), (5202, 3))):
        peer = TcpPeer(Flow(sport=40000 + i, dport=port))
        await rules.add(ethtool.NtupleSpec("tcp4", queue, src_ip=peer.src, dst_ip=peer.dst,
                                           src_port=peer.flow.sport, dst_port=port))
        b = await rig.bind([queue], pages=64)               # 256 KiB each: holds a stream
        sock = await rig.connect(peer, rig.listen(port))
        peers.append(peer)
        binds.append(b)
        readers.append(Reader(sock, {b.id: b.dmabuf}, withhold=True))
    want = [make_data("random", STREAM_BYTES, seed=20 + i) for i in range(2)]
    for peer, data in zip(peers, want):
        peer.write(data)
        peer.shutdown()
    for peer, reader in zip(peers, readers):
        await rig.transfer(peer, reader)

    for b, r, data in zip(binds, readers, want):
        assert bytes(r.got) == data and r.eof, "the stream read through the GPU is what was sent"
        assert r.ids_seen == {b.id}, f"fragments of dma-buf {r.ids_seen}, bound was {b.id}"
        assert r.devmem_bytes == len(data) and r.linear_bytes == 0
        assert r.sock.tcp_info().tokens_outstanding == len(r.held) > 0
    pools = [nd.rx_queue(q).pay_pool for q in (2, 3)]
    pinned = [p.in_use for p in pools]
    for r in readers:
        assert r.give_back() > 0
        assert r.sock.tcp_info().tokens_outstanding == 0
    freed = [a - p.in_use for a, p in zip(pinned, pools)]
    assert all(n > 0 for n in freed), f"returning the tokens freed no buffer: {freed}"
    for p, q in zip(pools, (2, 3)):
        assert p.in_use == len(nd.rx_queue(q).pay_bufs), "only the posted buffers stay in use"
    for r in readers:
        r.sock.close()
    await rig.finish()
