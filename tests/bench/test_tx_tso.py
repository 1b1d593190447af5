"""bench/tx_tso.py without a simulator: the send sizes Linux builds, the R-beat count, the
model run's per-segment figures (counted from the model's DMA reads, expected from the
layout of docs/tx.md by hand), and the RTL path's report of a NIC without TSO."""
from __future__ import annotations

import json

import pytest

import bench.tx_tso as tso


def test_send_sizes_are_linux_size_goals() -> None:
    """(65536 - 1 - 320) // MSS whole segments (`tcp_xmit_size_goal`)."""
    assert tso.send_payload(1448) == 45 * 1448 == 65160
    assert tso.send_payload(8948) == 7 * 8948 == 62636


def test_r_beats() -> None:
    assert tso.r_beats([(0, 128)], 128) == 1
    assert tso.r_beats([(127, 2)], 128) == 2
    assert tso.r_beats([(0, 1), (4096, 1448)], 128) == 1 + 12


@pytest.mark.parametrize("mss, segs, pages", [(1448, 45, 16), (8948, 7, 16)])
def test_model_run_counts(mss: int, segs: int, pages: int) -> None:
    doc = tso.run_model([mss], ["hdrseg", "inline"], 3, 512, 1024)
    hdrseg, inline = doc["results"]
    # hdrseg: first descriptor (the header) + context entry + one descriptor per 4 KiB page
    assert hdrseg["segments_per_send"] == segs
    assert hdrseg["ring_entries_per_send"] == 2 + pages
    assert hdrseg["descriptors_per_send"] == 1 + pages
    assert hdrseg["header_reads_per_send"] == 1
    assert hdrseg["host_bytes_read_per_segment"] == pytest.approx((16 * (2 + pages) + 54) / segs)
    # inline: the 54-byte header in 4 ring entries after the context entry, never read apart
    assert inline["ring_entries_per_send"] == 2 + 4 + pages
    assert inline["descriptors_per_send"] == 1 + pages
    assert inline["header_reads_per_send"] == 0
    assert inline["host_bytes_read_per_segment"] == pytest.approx(16 * (6 + pages) / segs)
    for r in (hdrseg, inline):
        assert r["device_bytes_read_per_segment"] == mss
        assert (r["nic_tso_sends"], r["nic_tso_segs"]) == (3, 3 * segs)
        beats = -(-(54 + mss) // 64)
        assert r["mac_beats_per_segment"] == beats
        assert r["frames_per_cycle_bound"] <= 1 / beats
        assert r["frames_per_cycle"] is None


def test_bad_command_lines() -> None:
    for argv in (["--mss", "50"], ["--mss", "x"], ["--layouts", "linear"], ["--sends", "0"],
                 ["--backend", "fpga"]):
        with pytest.raises(SystemExit) as e:
            tso.main(argv)
        assert e.value.code == 2


def test_rtl_without_tso_is_reported(monkeypatch, capsys, tmp_path) -> None:
    """What the simulation writes on a nic_top whose TX_OFFLOADS.tso reads 0 becomes one
    line and exit 1, nothing written."""
    import tb.sim

    def fake_run(top, sources, module, params, name, extra_env, seed, defines) -> None:  # type: ignore[no-untyped-def]
        with open(extra_env["BENCH_OUT"], "w") as fh:
            json.dump({"no_tso": "nic_top's TX_OFFLOADS reads 0x00000080: tso is 0"}, fh)
    monkeypatch.setattr(tb.sim, "run_rtl_test", fake_run)
    rc = tso.main(["--backend", "rtl", "--out", "tx_tso_test_unused"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and "the NIC has no TSO" in err[0]
    assert not (tb.sim.BUILD_ROOT / "bench" / "tx_tso_test_unused.json").exists()
