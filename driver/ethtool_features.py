"""Netdev features, as `ethtool -k` shows them and `ethtool -K` switches them
(`ETHTOOL_MSG_FEATURES_GET` / `_SET`, `netdev_update_features`).

Only the features this NIC may offer beyond its fixed ones are switchable: TCP segmentation
offload, `NETIF_F_TSO` (`tx-tcp-segmentation`) and `NETIF_F_TSO6` (`tx-tcp6-segmentation`),
advertised in `hw_features` when the NIC's `TX_OFFLOADS.tso` reads 1 (docs/tx.md, "TCP
segmentation offload") and on by default then, as Linux drivers set `features =
hw_features`. ethtool's legacy name `tso` switches both (`ETHTOOL_STSO`, `NETIF_F_ALL_TSO`).

| ethtool | here |
|---|---|
| `ethtool -k DEV` | `Netdev.get_features()` |
| `ethtool -K DEV tso on\\|off` | `Netdev.set_features(parse_features_args("tso off"))` |

Errors are `KernelError`s: EINVAL for an unknown name or bad syntax (exit 2 on a command
line), EOPNOTSUPP to turn on a feature the NIC does not have (ethtool: "Could not change any
device features").
"""
from __future__ import annotations

import errno
from enum import IntFlag

from driver import regs
from driver.errors import KernelError


class NetdevFeature(IntFlag):
    """The switchable `NETIF_F_*` bits of this driver (our own bit values, not Linux's)."""

    TSO = 1 << 0
    """`NETIF_F_TSO`: TCP/IPv4 segmentation offload."""
    TSO6 = 1 << 1
    """`NETIF_F_TSO6`: TCP/IPv6 segmentation offload."""


NO_FEATURES = NetdevFeature(0)
ALL_TSO = NetdevFeature.TSO | NetdevFeature.TSO6

FEATURE_NAMES: dict[str, NetdevFeature] = {
    'tx-tcp-segmentation': NetdevFeature.TSO,
    'tx-tcp6-segmentation': NetdevFeature.TSO6,
}
"""The `ethtool -k` strings (`netdev_features_strings`)."""

FEATURE_ALIASES: dict[str, NetdevFeature] = {
    'tso': ALL_TSO,
    'tcp-segmentation-offload': ALL_TSO,
}
"""ethtool's legacy names (`-K tso on`), each switching several features."""


def hw_features_from_offloads(tx_offloads: int) -> NetdevFeature:
    """`hw_features` from the NIC's `TX_OFFLOADS` register."""
    return ALL_TSO if regs.TX_OFFLOADS_TSO.get(tx_offloads) else NO_FEATURES


def parse_features_args(args: str | list[str]) -> dict[str, bool]:
    """`ethtool -K DEV` arguments: `NAME on|off` pairs, e.g. "tso off"."""
    words = args.split() if isinstance(args, str) else list(args)
    if not words or len(words) % 2:
        raise KernelError(errno.EINVAL, f'ethtool -K wants NAME on|off pairs, got {words!r}')
    out: dict[str, bool] = {}
    for name, value in zip(words[::2], words[1::2]):
        if value not in ('on', 'off'):
            raise KernelError(errno.EINVAL, f'ethtool -K {name}: {value!r} is not on or off')
        feature_mask(name)
        out[name] = value == 'on'
    return out


def feature_mask(name: str) -> NetdevFeature:
    """The features a name switches; EINVAL for an unknown one."""
    if name in FEATURE_NAMES:
        return FEATURE_NAMES[name]
    if name in FEATURE_ALIASES:
        return FEATURE_ALIASES[name]
    known = sorted([*FEATURE_NAMES, *FEATURE_ALIASES])
    raise KernelError(errno.EINVAL, f'unknown feature {name!r}; known: {known}')


def apply_features(hw_features: NetdevFeature, features: NetdevFeature,
                   changes: dict[str, bool]) -> NetdevFeature:
    """The features after `ethtool -K` `changes`: EOPNOTSUPP to turn on one outside
    `hw_features` (nothing changes then); turning one off is always allowed."""
    new = features
    for name, on in changes.items():
        mask = feature_mask(name)
        if on:
            if mask & ~hw_features:
                raise KernelError(errno.EOPNOTSUPP,
                                  f'{name}: the NIC does not offer it (TX_OFFLOADS.tso is 0)')
            new |= mask
        else:
            new &= ~mask
    return new


def features_report(hw_features: NetdevFeature, features: NetdevFeature) -> dict[str, str]:
    """`ethtool -k`: "on", "off", or "off [fixed]" for a feature the NIC does not offer."""
    return {name: ('on' if features & bit else 'off') + ('' if hw_features & bit else ' [fixed]')
            for name, bit in FEATURE_NAMES.items()}
