"""`ethtool -k` / `-K tso on|off` (driver/ethtool_features.py, `Netdev.get/set_features`):
TSO and TSO6 are advertised exactly when the NIC's `TX_OFFLOADS.tso` reads 1, on by default
then, switchable; a NIC without TSO (the model by default, the RTL before TSO) shows them fixed off
and refuses to turn them on with EOPNOTSUPP."""
from __future__ import annotations

import asyncio
import errno

import pytest

from driver import regs
from driver.backends.model import ModelHw
from driver.errors import KernelError
from driver.ethtool_features import ALL_TSO, NetdevFeature, parse_features_args
from driver.kernel import Kernel
from driver.netdev import Netdev


async def _dev(tso: bool) -> Netdev:
    hw = ModelHw()
    hw.nic.tx.tso = tso
    dev = Netdev(Kernel(), hw)
    await dev.probe()
    return dev


def test_no_tso_nic_fixed_off_and_refuses() -> None:
    async def body() -> None:
        dev = await _dev(False)
        assert regs.TX_OFFLOADS_TSO.get(await dev.hw.read32(regs.TX_OFFLOADS)) == 0
        assert dev.get_features() == {'tx-tcp-segmentation': 'off [fixed]',
                                      'tx-tcp6-segmentation': 'off [fixed]'}
        with pytest.raises(KernelError) as e:
            dev.set_features(parse_features_args('tso on'))
        assert e.value.errno == errno.EOPNOTSUPP
        dev.set_features(parse_features_args('tso off'))          # always allowed
        assert not dev.features
    asyncio.run(body())


def test_tso_nic_on_by_default_and_switchable() -> None:
    async def body() -> None:
        dev = await _dev(True)
        assert dev.hw_features == ALL_TSO and dev.features == ALL_TSO
        dev.set_features(parse_features_args('tso off'))
        assert dev.get_features() == {'tx-tcp-segmentation': 'off', 'tx-tcp6-segmentation': 'off'}
        dev.set_features(parse_features_args(['tx-tcp6-segmentation', 'on']))
        assert dev.features == NetdevFeature.TSO6
        dev.set_features(parse_features_args('tcp-segmentation-offload on'))
        assert dev.get_features() == {'tx-tcp-segmentation': 'on', 'tx-tcp6-segmentation': 'on'}
    asyncio.run(body())


@pytest.mark.parametrize('args', ['', 'tso', 'tso maybe', 'gso on', 'tso on tso6'])
def test_bad_arguments_are_einval(args: str) -> None:
    with pytest.raises(KernelError) as e:
        parse_features_args(args)
    assert e.value.errno == errno.EINVAL
