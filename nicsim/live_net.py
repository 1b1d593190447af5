"""A private network namespace with a TAP device: the Linux side of a live co-simulation.

The simulated NIC's MAC ports are bridged to a TAP device that lives in a network namespace
of its own, so the real Linux TCP/IP stack of that namespace is the peer of the reference
driver. Nothing of the machine's own network is touched.

How it is built, and why nothing can be left behind:

- One thread of this process calls `unshare(CLONE_NEWNET)`. From then on that thread (and
  only that thread; namespaces are per thread) is in a new, anonymous network namespace. It
  is never bind-mounted under /run/netns, so it has no name and nothing outside this process
  refers to it.
- In that thread the TAP device is created with `TUNSETIFF` (not persistent) and configured
  with `ip`, run as child processes of that thread (a forked child starts in its parent
  thread's namespaces).
- Sockets for the Linux peer are created in that thread (`run_in_ns`); a socket stays in the
  namespace it was created in, whichever thread uses it later.
- When the TAP file descriptor and the last socket are closed, the kernel deletes the TAP
  device and then the namespace. This also happens when the process is killed (even with
  SIGKILL): the kernel closes the descriptors. `close()` does it explicitly.

Requires root (CAP_NET_ADMIN), /dev/net/tun and `ip` (Debian package iproute2). `probe()`
says why a machine cannot, so tests can skip with that reason.
"""
from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import queue
import shutil
import struct
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

CLONE_NEWNET = 0x4000_0000
TUNSETIFF = 0x4004_54CA
IFF_TAP = 0x0002
IFF_NO_PI = 0x1000
TUN_DEV = "/dev/net/tun"


class LiveNetError(RuntimeError):
    """The namespace or the TAP device could not be set up; the message says which step."""


@dataclass(frozen=True)
class LiveNetConfig:
    """Addresses of the Linux side (the TAP device) and of the simulated NIC's host.

    The NIC side's addresses are what the reference driver answers ARP/ND for; the kernel in
    the namespace reaches them through the TAP device.
    """

    tap_name: str = "nicsim0"
    linux_mac: str = "02:00:00:00:00:01"
    linux_ipv4: str = "10.77.0.1"
    nic_ipv4: str = "10.77.0.2"
    prefix_v4: int = 24
    linux_ipv6: str = "fd77::1"
    nic_ipv6: str = "fd77::2"
    prefix_v6: int = 64
    mtu: int = 1500


def probe() -> str | None:
    """None when live networking works here, else the reason it does not (for a skip)."""
    if os.geteuid() != 0:
        return "live networking needs root (CAP_NET_ADMIN) to create a namespace and a TAP device"
    if not os.path.exists(TUN_DEV):
        return f"{TUN_DEV} does not exist (no TUN/TAP support in this kernel or container)"
    if shutil.which("ip") is None:
        return "the `ip` command (Debian package iproute2) is not installed"
    try:
        net = LiveNet(LiveNetConfig(tap_name="nicsimprobe"))
    except LiveNetError as e:
        return str(e)
    net.close()
    return None


class LiveNet:
    """The namespace, its TAP device, and a thread that runs work inside the namespace.

    Use as a context manager. `read_frame()`/`write_frame()` move Ethernet frames (no FCS)
    between the TAP device and the caller: frames Linux sends come out of `read_frame`,
    frames written with `write_frame` arrive at Linux as if received by its NIC.
    """

    def __init__(self, cfg: LiveNetConfig | None = None) -> None:
        self.cfg = cfg or LiveNetConfig()
        if len(self.cfg.tap_name.encode()) > 15:
            raise ValueError(f"tap_name {self.cfg.tap_name!r} is longer than 15 bytes (IFNAMSIZ)")
        self._jobs: queue.Queue[tuple[Callable[[], Any], queue.Queue] | None] = queue.Queue()
        self._ready: queue.Queue[BaseException | None] = queue.Queue()
        self.tap_fd = -1
        self._closed = False
        self._thread = threading.Thread(target=self._ns_main, name="nicsim-netns", daemon=True)
        self._thread.start()
        err = self._ready.get()
        if err is not None:
            self._thread.join(timeout=5)
            raise LiveNetError(str(err)) from err

    # ------------------------------------------------------------------- the namespace thread
    def _ns_main(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(CLONE_NEWNET) != 0:
            e = ctypes.get_errno()
            self._ready.put(LiveNetError(f"unshare(CLONE_NEWNET) failed: {os.strerror(e)} ({errno.errorcode.get(e, e)})"))
            return
        try:
            self.tap_fd = self._create_tap()
            self._configure()
        except BaseException as e:  # noqa: BLE001 - reported to the constructor
            if self.tap_fd >= 0:
                os.close(self.tap_fd)
                self.tap_fd = -1
            self._ready.put(e)
            return
        self._ready.put(None)
        while True:
            job = self._jobs.get()
            if job is None:
                return
            fn, reply = job
            try:
                reply.put((True, fn()))
            except BaseException as e:  # noqa: BLE001 - re-raised in the caller
                reply.put((False, e))

    def _create_tap(self) -> int:
        try:
            fd = os.open(TUN_DEV, os.O_RDWR | os.O_CLOEXEC)
        except OSError as e:
            raise LiveNetError(f"cannot open {TUN_DEV}: {e.strerror}") from e
        ifr = struct.pack("16sH22x", self.cfg.tap_name.encode(), IFF_TAP | IFF_NO_PI)
        try:
            fcntl.ioctl(fd, TUNSETIFF, ifr)
        except OSError as e:
            os.close(fd)
            raise LiveNetError(f"TUNSETIFF {self.cfg.tap_name}: {e.strerror}") from e
        return fd

    def _ip(self, *args: str) -> None:
        r = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
        if r.returncode != 0:
            raise LiveNetError(f"ip {' '.join(args)}: {r.stderr.strip() or 'exit ' + str(r.returncode)}")

    def _configure(self) -> None:
        c = self.cfg
        # No duplicate-address detection and no router solicitations: the IPv6 address is
        # usable at once, and the only IPv6 frames Linux sends are the ones the test causes.
        for key, value in (("accept_dad", "0"), ("dad_transmits", "0"), ("router_solicitations", "0")):
            for scope in ("default", "all"):
                path = f"/proc/sys/net/ipv6/conf/{scope}/{key}"
                if os.path.exists(path):
                    with open(path, "w") as f:
                        f.write(value)
        self._ip("link", "set", "lo", "up")
        self._ip("link", "set", c.tap_name, "address", c.linux_mac, "mtu", str(c.mtu))
        self._ip("addr", "add", f"{c.linux_ipv4}/{c.prefix_v4}", "dev", c.tap_name)
        self._ip("-6", "addr", "add", f"{c.linux_ipv6}/{c.prefix_v6}", "dev", c.tap_name, "nodad")
        self._ip("link", "set", c.tap_name, "up")

    # ------------------------------------------------------------------- caller side
    def run_in_ns(self, fn: Callable[[], T]) -> T:
        """Run `fn` in the namespace thread and return its result (or raise its exception).

        Sockets made by `fn` belong to the namespace: that is how the Linux peer's sockets are
        created. Keep `fn` short; it blocks the namespace thread.
        """
        if self._closed:
            raise LiveNetError("the live network is closed")
        reply: queue.Queue[tuple[bool, Any]] = queue.Queue()
        self._jobs.put((fn, reply))
        ok, value = reply.get()
        if not ok:
            raise value
        return value

    def ip(self, *args: str) -> str:
        """`ip ARGS` inside the namespace; returns its standard output."""
        def run() -> str:
            r = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
            if r.returncode != 0:
                raise LiveNetError(f"ip {' '.join(args)}: {r.stderr.strip()}")
            return r.stdout
        return self.run_in_ns(run)

    def read_frame(self, max_len: int = 65536) -> bytes | None:
        """The next frame Linux sent, or None if there is none now (non-blocking)."""
        try:
            return os.read(self.tap_fd, max_len)
        except BlockingIOError:
            return None

    def write_frame(self, frame: bytes) -> None:
        """Deliver one Ethernet frame (no FCS) to Linux."""
        n = os.write(self.tap_fd, frame)
        if n != len(frame):
            raise LiveNetError(f"short write to the TAP device: {n} of {len(frame)} bytes")

    def set_nonblocking(self) -> None:
        os.set_blocking(self.tap_fd, False)

    def close(self) -> None:
        """Delete the TAP device and let the namespace go (idempotent)."""
        if self._closed:
            return
        self._closed = True
        if self.tap_fd >= 0:
            os.close(self.tap_fd)
            self.tap_fd = -1
        self._jobs.put(None)
        self._thread.join(timeout=5)

    def __enter__(self) -> LiveNet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
