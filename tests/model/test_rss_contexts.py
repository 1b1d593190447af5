"""RSS contexts (docs/rss.md section 3a) through the driver (`driver/ethtool.py`: `set_rxfh`
with `rss_context`, `RssContexts`, n-tuple rules with `context`) on the golden model's
registers, and the kernel's errors (net/ethtool/ioctl.c ethtool_set_rxfh / ethtool_set_rxnfc)."""
from __future__ import annotations

import collections
import errno

from driver import ethtool, regs
from driver.ethtool import (ETH_RXFH_CONTEXT_ALLOC, NtupleRules, NtupleSpec, RssContexts,
                            equal_indir)
from models.rss import NUM_CONTEXTS, Classifier, RssConfig, RssType, SteerRule, FlowType, classify
from models.rss import full_mask, tuple_from_frame
from tests.model.test_ethtool import ClassifierHw, expect_errno, frame4, run


def _setup(nq: int = 8) -> tuple[ClassifierHw, RssContexts, NtupleRules]:
    hw = ClassifierHw(nq)
    run(ethtool.set_rxfh(hw, key=bytes(range(40)), indir=equal_indir(2)))
    run(ethtool.set_rx_flow_hash(hw, {'tcp4', 'ip4'}))
    ctxs = RssContexts(hw)
    rules = NtupleRules(hw, nq, contexts=ctxs)
    return hw, ctxs, rules


def test_context_spreads_flows_over_its_queues_with_the_ring_offset():
    hw, ctxs, rules = _setup()
    k = run(ethtool.set_rxfh(hw, indir=equal_indir(4, 4), rss_context=ETH_RXFH_CONTEXT_ALLOC,
                             contexts=ctxs))
    assert k == 1 and ctxs.queues(1) == [4, 5, 6, 7]
    run(rules.add(NtupleSpec('tcp4', action=0, dst_port=5201, context=1)))
    seen = collections.Counter()
    for sport in range(40000, 40064):
        c = hw.cls.classify_frame(frame4(sport=sport, dport=5201))
        assert c.steered and 4 <= c.queue <= 7
        # independently of the model's path: the queue is the table's entry for the hash
        assert c.queue == 4 + (c.rss_hash % 128) % 4
        seen[c.queue] += 1
    assert set(seen) == {4, 5, 6, 7}, seen
    assert not hw.cls.classify_frame(frame4(dport=80)).steered       # other ports: RSS 0..1
    # Resize at runtime (ethtool -X context 1 start 4 equal 2) and a ring offset of 1:
    # queues 5..6 ... and the offset rule as ethtool defines it.
    run(ethtool.set_rxfh(hw, indir=equal_indir(2, 4), rss_context=1, contexts=ctxs))
    run(rules.add(NtupleSpec('tcp4', action=1, dst_port=5201, context=1, loc=0)))
    got = {hw.cls.classify_frame(frame4(sport=s, dport=5201)).queue for s in range(40000, 40064)}
    assert got == {5, 6}
    # context 0 is the default table (queues 0..1) plus the offset
    run(rules.add(NtupleSpec('tcp4', action=3, dst_port=5201, context=0, loc=0)))
    got = {hw.cls.classify_frame(frame4(sport=s, dport=5201)).queue for s in range(40000, 40064)}
    assert got == {3, 4}


def test_context_errors_as_the_kernel_gives_them():
    hw, ctxs, rules = _setup()
    new = dict(rss_context=ETH_RXFH_CONTEXT_ALLOC, contexts=ctxs)
    # a key or a hash function of its own: the NIC shares them (no rxfh_per_ctx_key)
    expect_errno(errno.EOPNOTSUPP, ethtool.set_rxfh(hw, key=bytes(40), **new))
    expect_errno(errno.EOPNOTSUPP, ethtool.set_rxfh(hw, hfunc='xor', **new))
    expect_errno(errno.EOPNOTSUPP, ethtool.set_rxfh(hw, indir=equal_indir(2),
                                                    rss_context=ETH_RXFH_CONTEXT_ALLOC))
    expect_errno(errno.EINVAL, ethtool.set_rxfh(hw, indir=equal_indir(9), **new))     # queue 8
    expect_errno(errno.EINVAL, ethtool.set_rxfh(hw, indir=[0] * 64, **new))           # size
    expect_errno(errno.EINVAL, ethtool.set_rxfh(hw, rss_delete=True, **new))
    expect_errno(errno.ENOENT, ethtool.set_rxfh(hw, indir=equal_indir(2), rss_context=3,
                                                contexts=ctxs))
    expect_errno(errno.ENOENT, ethtool.set_rxfh(hw, rss_context=3, rss_delete=True,
                                                contexts=ctxs))
    ids = [run(ethtool.set_rxfh(hw, **new)) for _ in range(NUM_CONTEXTS)]
    assert ids == list(range(1, NUM_CONTEXTS + 1))
    assert ctxs.get_rxfh(1).indir == equal_indir(8)               # default: every queue
    expect_errno(errno.EBUSY, ethtool.set_rxfh(hw, **new))        # none free (xa_alloc)
    expect_errno(errno.EINVAL, ethtool.set_rxfh(hw, rss_context=2, contexts=ctxs))   # no change
    # rules: a context that does not exist, an offset beyond the queues
    expect_errno(errno.EINVAL, rules.add(NtupleSpec('tcp4', 0, dst_port=1, context=9)))
    expect_errno(errno.EINVAL, rules.add(NtupleSpec('tcp4', 1, dst_port=1, context=2)))
    rid = run(rules.add(NtupleSpec('tcp4', 0, dst_port=1, context=2)))
    # deleting a context a rule points at: EBUSY; after the rule goes, it can go
    expect_errno(errno.EBUSY, ethtool.set_rxfh(hw, rss_context=2, rss_delete=True,
                                               contexts=ctxs))
    run(ethtool.set_rxfh(hw, indir=equal_indir(4, 2), rss_context=2, contexts=ctxs))  # 2..5
    rid2 = run(rules.add(NtupleSpec('tcp4', 2, dst_port=2, context=2)))             # 4..7
    # a table that would take rule rid2 (offset 2) beyond queue 7
    expect_errno(errno.EINVAL, ethtool.set_rxfh(hw, indir=[1] + [6] * 127, rss_context=2,
                                                contexts=ctxs))
    expect_errno(errno.EINVAL, lambda: rules.check_channels(7))   # rule rid2 reaches queue 7
    expect_errno(errno.EINVAL, lambda: ctxs.check_channels(7))    # context 1 spans 0..7
    run(rules.delete(rid))
    expect_errno(errno.EBUSY, ethtool.set_rxfh(hw, rss_context=2, rss_delete=True,
                                               contexts=ctxs))
    run(rules.delete(rid2))
    assert run(ethtool.set_rxfh(hw, rss_context=2, rss_delete=True, contexts=ctxs)) == 2
    assert 2 not in ctxs and run(ethtool.set_rxfh(hw, **new)) == 2         # lowest free id


def test_context_registers_and_model_match_the_pure_classify():
    """The register view (Classifier) and the pure `classify` agree on rules with contexts,
    including context numbers the NIC does not have (bad queue, counted)."""
    cls = Classifier(8)
    assert regs.RSS_CTX_CAPS_CONTEXTS.get(cls.mmio_read(regs.RSS_CTX_CAPS)) == NUM_CONTEXTS
    table = equal_indir(3, 5)
    for j in range(32):
        cls.mmio_write(regs.rss_ctx_indir_reg(32 * 3 + j),
                       sum(table[4 * j + k] << (8 * k) for k in range(4)))
    assert cls.mmio_read(regs.rss_ctx_indir_reg(32 * 3)) == 0            # write-only
    cfg = cls.rss_config             # no hash type enabled: hash 0, entry 0 (queue 5)
    assert cfg.contexts[3] == tuple(table)
    t = tuple_from_frame(frame4())
    for ctx, offset, want_bad in ((4, 0, False), (4, 2, False), (4, 3, True), (12, 0, True)):
        rule = SteerRule.exact(t, offset)
        rule = SteerRule(**{**rule.__dict__, 'context': ctx})
        c = classify(t, cfg, [rule], 8, {FlowType.TCP4: full_mask(FlowType.TCP4)})
        assert c.steered and c.bad_queue == want_bad
        assert c.queue == (0 if want_bad else table[c.rss_hash % 128] + offset)
    assert RssConfig().table(NUM_CONTEXTS + 1) is None and RssType.NONE == 0
