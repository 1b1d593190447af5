"""The module -> test map of `make test-rtl` (tb/rtl_map.py) is derived from the RTL tests'
own builds, and every module of rtl/files.f is in at least one test's design (a new module
without a test fails here)."""
from __future__ import annotations

from pathlib import Path

from tb import rtl_map


def test_modules_in_a_file(tmp_path: Path) -> None:
    f = tmp_path / "x.sv"
    f.write_text("// module commented_out;\n/* module also_not\n*/\nmodule a #(parameter int W = 1) ();\n"
                 "endmodule\n  module automatic b;\nendmodule\npackage p; endpackage\n")
    assert rtl_map.modules_in(f) == ["a", "b"]


def test_every_rtl_module_is_covered() -> None:
    entries = rtl_map.refresh(jobs="0")
    assert len(entries) >= 40, f"only {len(entries)} RTL tests recorded a design"
    assert all(e["test"].startswith("tests/") and e["modules"] for e in entries)
    modules = rtl_map.rtl_modules()
    uncovered = sorted(m for m in modules if not rtl_map.tests_for(entries, m))
    assert not uncovered, f"no test builds a design with: {', '.join(uncovered)}"
    # a unit test's design is its own sources, not the whole NIC
    classify = [e for e in entries if e["test"].startswith("tests/rtl/test_rx_classify.py")]
    assert classify and all("nic_top" not in e["modules"] and "rx_classify" in e["modules"] for e in classify)
    assert rtl_map.tests_for(entries, "rx_classify")[0].startswith("tests/rtl/test_rx_classify.py")
    # the protocol checker bound into every nic_top build is mapped too, its own tests first
    checker = rtl_map.tests_for(entries, "axi4_checker")
    assert checker[0].startswith("tests/rtl/test_protocol_checker.py")
    assert any(t.startswith("tests/rtl/test_rx_split.py") for t in checker), "nic_top builds bind the checker"
