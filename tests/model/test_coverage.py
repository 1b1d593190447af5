"""The pyvsc cover models of tb/uvm/coverage.py with known samples: the percentages this
project reports (instance figures, computed from the UCIS data) against hand counts and
against pyvsc's own instance coverage, pyvsc's type coverage shown to count ignore bins (why
it is not used), UCIS XML written and merged (hit counts add up), illegal bins raising, and
the RX and TX models' exclusions applied as declared. No simulator."""
from __future__ import annotations

import itertools

import pytest

from tb.uvm import coverage as fc


def _spec(name: str) -> fc.GroupSpec:
    return fc.GroupSpec(name, {"a": ("a0", "a1", "a2"), "b": ("b0", "b1", "b2")}, (
        fc.CrossSpec("ab", ("a", "b"), (
            fc.Exclusion("ignore", "a0 never meets b", lambda v: v["a"] == "a0"),
            fc.Exclusion("illegal", "a2 with b0 is a bug", lambda v: v["a"] == "a2" and v["b"] == "b0"),
        )),
    ))


def test_cross_percent_with_ignore_and_illegal_bins(tmp_path) -> None:
    g = fc.CoverGroup(_spec("known_samples"))
    for a, b in [("a1", "b1"), ("a2", "b2"), ("a1", "b2"), ("a0", "b0")]:
        g.sample(a=a, b=b)
    # 9 combinations, 3 ignored (a0), 1 illegal (a2,b0): 5 count; hit: a1b1 a1b2 a2b2 = 3 of 5.
    pyvsc = g.inst_coverage()
    assert pyvsc["a"] == pyvsc["b"] == 100.0
    assert pyvsc["ab"] == pytest.approx(60.0)
    # pyvsc's type coverage counts the ignored bins (and the a0,b0 hit): 4 of 9 for the cross,
    # which would make the group read (100 + 100 + 44.4) / 3.
    assert g.cg.get_coverage() == pytest.approx((100 + 100 + 400 / 9) / 3, abs=0.01)

    xml = fc.write_ucis(tmp_path / "one.xml")
    groups = fc.read_ucis(xml)
    ab = groups["known_samples"].items["ab"]
    assert set(ab.bins) == {"a1|b0", "a1|b1", "a1|b2", "a2|b1", "a2|b2"}    # exclusions not written
    assert ab.hit == 3 and ab.total == 5 and ab.percent == pytest.approx(pyvsc["ab"])
    assert sorted(ab.holes) == ["a1|b0", "a2|b1"]
    assert groups["known_samples"].items["a"].bins == {"a0": 1, "a1": 2, "a2": 1}
    # group figure: bins hit over bins that count, points and crosses together: (3+3+3)/(3+3+5)
    assert groups["known_samples"].percent == pytest.approx(100 * 9 / 11)

    merged = fc.merge_ucis([xml, xml], tmp_path / "merged.xml")
    m = fc.read_ucis(merged)["known_samples"]
    assert m.items["ab"].bins["a1|b1"] == 2 and m.items["a"].bins["a1"] == 4
    assert m.items["ab"].hit == 3

    with pytest.raises(fc.IllegalBinHit, match="a2 with b0 is a bug"):
        g.sample(a="a2", b="b0")
    with pytest.raises(ValueError, match="not one of its bins"):
        g.sample(a="a9", b="b0")
    with pytest.raises(ValueError, match="no value"):
        g.sample(a="a1")


@pytest.mark.parametrize("spec", fc.SPECS, ids=lambda s: s.name)
def test_model_exclusions_as_declared(spec: fc.GroupSpec) -> None:
    """pyvsc's counting bins of every cross of the RX and TX models are exactly the
    combinations no exclusion names (the exclusions reach pyvsc as declared)."""
    g = fc.CoverGroup(spec)
    for c in spec.crosses:
        want = 0
        for combo in itertools.product(*(spec.points[p] for p in c.points)):
            v = dict(zip(c.points, combo))
            want += not any(e.when(v) for e in c.exclusions)
        model = getattr(g.cg, c.name).model
        got = len(model.hit_l) - model.n_ignore - model.n_illegal
        assert got == want, (c.name, got, want)
        assert got > 0
    assert all(e.reason for c in spec.crosses for e in c.exclusions)


def test_rx_and_tx_models_sample() -> None:
    rx = fc.nic_rx_covergroup()
    rx.sample(protocol="ipv4/tcp", split="split", queue_kind="rss/devmem", error="none", vlan="0",
              size="512-1517", pay_bufs="1", drop="none")
    with pytest.raises(fc.IllegalBinHit, match="never split"):
        rx.sample(protocol="non_ip", split="split", queue_kind="rss/devmem", error="none", vlan="0",
                  size="60", pay_bufs="1", drop="none")
    tx = fc.nic_tx_covergroup()
    tx.sample(segments="2", hdr_offset="unaligned", pay_offset="ends_at_4k", crossing="none", csum="tcp4",
              status="OK", queue="0", interleave="first", pay_mem="device")
    with pytest.raises(fc.IllegalBinHit, match="crossing 4 KiB"):
        tx.sample(segments="2", hdr_offset="unaligned", pay_offset="unaligned", crossing="crosses_4k",
                  csum="none", status="OK", queue="0", interleave="first", pay_mem="device")
    assert fc.tx_segments_bin(16) == "16" and fc.tx_segments_bin(9) == "9-15"
    assert fc.tx_offset_bin(0x1000, 10) == "page_start" and fc.tx_offset_bin(0x1FF6, 10) == "ends_at_4k"


def test_read_ucis_applies_the_current_exclusions(tmp_path) -> None:
    """A UCIS file sampled before an exclusion existed: reading it with a spec that has the
    exclusion leaves that cross bin out (as a fresh run would), and keeps it without."""
    g = fc.CoverGroup(_spec("late_exclusion"))
    for a, b in [("a1", "b1"), ("a1", "b2")]:
        g.sample(a=a, b=b)
    xml = fc.write_ucis(tmp_path / "late.xml")
    later = fc.GroupSpec("late_exclusion", _spec("late_exclusion").points, (
        fc.CrossSpec("ab", ("a", "b"), (
            *_spec("x").cross("ab").exclusions,
            fc.Exclusion("ignore", "a1 never meets b0", lambda v: v["a"] == "a1" and v["b"] == "b0"),
        )),
    ))
    ab_then = fc.read_ucis(xml, [_spec("late_exclusion")])["late_exclusion"].items["ab"]
    ab_now = fc.read_ucis(xml, [later])["late_exclusion"].items["ab"]
    assert "a1|b0" in ab_then.bins and ab_then.total == 5 and ab_then.hit == 2
    assert "a1|b0" not in ab_now.bins and ab_now.total == 4 and ab_now.hit == 2
