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


# --------------------------------------------------------------------------------------------
# Arguments of the system-call mirrors. Python lets a caller pass any object where C has an
# int, a pointer or a struct; the kernel never sees such a call, but it sees its nearest C
# equivalent: a pointer it cannot read (EFAULT) or a length or value it refuses (EINVAL).
# These checks give that errno instead of a TypeError or struct.error from deep inside.
# --------------------------------------------------------------------------------------------

def check_int(value: object, what: str, lo: int | None = None, hi: int | None = None,
              err: int = _errno.EINVAL) -> int:
    """`value` as an int in [lo, hi], else KernelError(err) naming `what`."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise KernelError(err, f'{what} {value!r}: not an integer')
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        span = f'{lo}..{hi}' if lo is not None and hi is not None else (
            f'at least {lo}' if lo is not None else f'at most {hi}')
        raise KernelError(err, f'{what} {value}: out of range ({span})')
    return value


def check_buffer(value: object, what: str) -> bytes:
    """A bytes-like `value` (what a user pointer points at), else EFAULT."""
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise KernelError(_errno.EFAULT, f'{what}: {type(value).__name__} {value!r:.40} is not a buffer')
    return bytes(value)


def check_sockaddr(address: object, what: str = 'address') -> tuple[str, int]:
    """`(host, port)` as `bind(2)`/`connect(2)` take a sockaddr: a str address and a 16-bit
    port, else EINVAL (the kernel's answer to a sockaddr it cannot use)."""
    import ipaddress
    if not isinstance(address, tuple) or len(address) != 2:
        raise KernelError(_errno.EINVAL, f'{what} {address!r}: not an (address, port) pair')
    host, port = address
    if not isinstance(host, str):
        raise KernelError(_errno.EINVAL, f'{what} host {host!r}: not an address string')
    if host:
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise KernelError(_errno.EINVAL, f'{what} host {host!r}: not an IPv4 or IPv6 address') from None
    check_int(port, f'{what} port', 0, 0xFFFF)
    return host, port
