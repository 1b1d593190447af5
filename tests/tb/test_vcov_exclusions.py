"""tb/vcov.py's exclusions: a per-instance exclusion matches only the hierarchies of its
pattern, and every exclusion in EXCLUSIONS names an existing source line. No simulator."""
from __future__ import annotations

from pathlib import Path

from tb import vcov

REPO = Path(__file__).resolve().parents[2]


def test_instance_pattern() -> None:
    e = vcov.Exclusion("rtl/common/rr_arbiter.sv", 36, "branch", "cond_then", "tied accept", "*.u_pick")
    f = "/x/rtl/common/rr_arbiter.sv"
    assert e.matches("branch", f, 36, "cond_then", "nic_top.u_desc.u_engine.u_pick")
    assert e.matches("branch", f, 36, "cond_then", "nic_fast_top.u_node.u_nic.u_tx.u_fetch.u_pick")
    assert not e.matches("branch", f, 36, "cond_then", "nic_top.u_ar_arb")
    assert not e.matches("branch", f, 36, "cond_else", "nic_top.u_desc.u_engine.u_pick")
    assert not e.matches("line", f, 36, "cond_then", "nic_top.u_desc.u_engine.u_pick")
    assert vcov.Exclusion("rtl/a.sv", 1, "line", "", "any instance").matches("line", "/r/rtl/a.sv", 1, "block", "t.u")


def test_exclusions_name_source_lines() -> None:
    for e in vcov.EXCLUSIONS:
        src = REPO / e.file
        assert src.is_file(), e.file
        lines = src.read_text().splitlines()
        assert e.line <= len(lines), (e.file, e.line)
        assert e.reason
        # the exclusion still points at the line it was written for (a moved line fails here)
        assert e.anchor and e.anchor in lines[e.line - 1], (e.file, e.line, e.anchor, lines[e.line - 1])
