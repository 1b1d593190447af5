"""The driver's one exception type: an errno, as the kernel would return it, plus the
netlink extended-ack message where the kernel sets one.

`KernelError` is an `OSError`, so `err.errno` compares with the `errno` module's names
(`errno.EINVAL`, `errno.ERANGE`, ...). `ETOOSMALL` (525) is kernel-internal and missing from
Python's `errno` module; it is defined here.
"""
from __future__ import annotations

import errno as _errno
import os

ETOOSMALL = 525
"""Buffer or request is too small (include/linux/errno.h); returned by recvmsg when the
control buffer cannot hold the next devmem message and nothing was delivered yet."""

_NAMES = {ETOOSMALL: 'ETOOSMALL'}


def errno_name(err: int) -> str:
    """`'EINVAL'` for `errno.EINVAL`, also for the kernel-only codes defined here."""
    return _NAMES.get(err) or _errno.errorcode.get(err, f'errno {err}')


class KernelError(OSError):
    """A system call or netlink request failed with `errno`; `extack` is the kernel's
    NL_SET_ERR_MSG text (or a short reason) when there is one."""

    def __init__(self, err: int, extack: str | None = None) -> None:
        strerror = 'Buffer or request is too small' if err == ETOOSMALL else os.strerror(err)
        super().__init__(err, strerror)
        self.extack = extack

    @property
    def name(self) -> str:
        return errno_name(self.errno or 0)

    def __str__(self) -> str:
        text = f'[{self.name}] {self.strerror}'
        return f'{text}: {self.extack}' if self.extack else text
