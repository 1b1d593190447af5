"""`nicsim live --zcrx-queues`: Linux's TCP sends to the driver through the model NIC and the
driver receives with io_uring zero-copy receive (an ifq on queue 2, the flow steered there),
with loss, byte-exact and with no kernel copy; the bad command lines."""
from __future__ import annotations

import pytest

from nicsim.cli import main
from nicsim.live import LiveConfig, run_model
from nicsim.live_net import probe

REASON = probe()


@pytest.mark.skipif(REASON is not None, reason=f"live networking unavailable: {REASON}")
@pytest.mark.timeout(300)
def test_live_zcrx_rx_with_loss() -> None:
    lines: list[str] = []
    cfg = LiveConfig(nbytes=256 << 10, drop_rate=0.01, seed=9, tap_name="nslzc0", timeout_s=240,
                     tx=False, zcrx_queues=[2, 3])
    res = run_model(cfg, lines.append)
    assert res.ok, res.errors
    assert res.rx_ok and res.rx_bytes == cfg.nbytes and res.rx_devmem_bytes == cfg.nbytes
    assert res.cpu_reads == 0 and res.tcp['OutRsts'] == 0
    assert any("io_uring zcrx RX queue(s) [2, 3]" in line for line in lines), lines[:3]
    assert any("via io_uring zcrx" in line for line in lines)


@pytest.mark.parametrize("argv, msg", [
    (["--zcrx-queues", "0"], "--zcrx-queues: queue 0 takes the ordinary traffic"),
    (["--zcrx-queues", "1,1"], "--zcrx-queues [1, 1]: distinct queues 1..7"),
    (["--zcrx-queues", "9"], "--zcrx-queues [9]: distinct queues 1..7"),
    (["--zcrx-queues", "x"], "--zcrx-queues: 'x' is not a queue number"),
])
def test_live_zcrx_bad_input(argv: list[str], msg: str, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        rc = main(["live", *argv])
    except SystemExit as e:
        rc = int(e.code or 0)
    err = capsys.readouterr().err
    assert rc == 2 and msg in err and err.count("\n") == 1, err
