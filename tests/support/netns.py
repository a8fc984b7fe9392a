"""A private network namespace for live components, reached from the test run through a relay.

The Cluster API manager's webhook server binds every interface and has no flag to change that.
Run inside a namespace whose only interface is its own loopback, it cannot be reached from, or
send to, anything else. The test run and the plugin stay in the host namespace: `Relay` listens
on 127.0.0.1:<port> here and connects to 127.0.0.1:<port> inside, so one URL (and one serving
certificate) works on both sides, as a `<cluster>-kubeconfig` Secret must for the manager inside
and the plugin outside.

Needs CAP_SYS_ADMIN (root in CI); `available()` says whether this process can make one.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable

CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1

_libc = ctypes.CDLL(None, use_errno=True)

# The holder makes the namespace, brings its loopback up, says so, and lives until its stdin
# closes or the test run dies (PR_SET_PDEATHSIG): the namespace goes with the last process in it.
_HOLDER = f"""
import ctypes, fcntl, os, signal, socket, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(1, signal.SIGKILL)
if libc.unshare({CLONE_NEWNET}) != 0:
    sys.exit("unshare: " + os.strerror(ctypes.get_errno()))
with socket.socket() as s:
    req = struct.pack("16sh", b"lo", 0)
    flags = struct.unpack("16sh", fcntl.ioctl(s, {SIOCGIFFLAGS}, req))[1]
    fcntl.ioctl(s, {SIOCSIFFLAGS}, struct.pack("16sh", b"lo", flags | {IFF_UP}))
print("ready", flush=True)
sys.stdin.read()
"""


def _setns(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"setns {path}: {os.strerror(errno)}")
    finally:
        os.close(fd)


class NetworkNamespace:
    def __init__(self) -> None:
        self.holder = subprocess.Popen(
            [sys.executable, "-c", _HOLDER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.holder.stdout is not None
        if self.holder.stdout.readline().strip() != "ready":
            self.holder.kill()
            _, err = self.holder.communicate()
            raise OSError(f"could not make a network namespace: {err.strip()}")
        self.path = f"/proc/{self.holder.pid}/ns/net"

    def enter(self) -> Callable[[], None]:
        """A preexec_fn that moves a child into the namespace before it runs anything."""
        path = self.path
        return lambda: _setns(path)

    def connect(self, port: int, timeout: float = 10) -> socket.socket:
        """A TCP connection to 127.0.0.1:port inside. The network namespace is per thread, so a
        short-lived thread joins it and makes the socket; the socket keeps its namespace."""
        made: list[socket.socket | BaseException] = []

        def dial() -> None:
            try:
                _setns(self.path)
                made.append(socket.create_connection(("127.0.0.1", port), timeout=timeout))
            except BaseException as err:
                made.append(err)

        thread = threading.Thread(target=dial, name="netns-dial", daemon=True)
        thread.start()
        thread.join()
        result = made[0]
        if isinstance(result, BaseException):
            raise result
        return result

    def close(self) -> None:
        try:
            self.holder.communicate(timeout=5)  # closes stdin: the holder exits
        except subprocess.TimeoutExpired:
            self.holder.kill()
            self.holder.communicate()


def available() -> bool:
    try:
        NetworkNamespace().close()
    except OSError:
        return False
    return True


class Relay:
    """127.0.0.1:port here to 127.0.0.1:port inside, byte for byte, for every connection.

    Two blocking pumps per connection: one slow reader never holds up another connection."""

    def __init__(self, netns: NetworkNamespace, listener: socket.socket) -> None:
        self.netns = netns
        self.listener = listener
        self.port = int(listener.getsockname()[1])
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = False
        listener.listen(64)
        self._thread = threading.Thread(target=self._accept, name=f"relay-{self.port}", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                outside, _ = self.listener.accept()
            except OSError:
                return  # closed
            try:
                inside = self.netns.connect(self.port)
            except OSError:
                outside.close()
                continue
            inside.settimeout(None)
            with self._lock:
                if self._closed:
                    outside.close()
                    inside.close()
                    return
                self._open.update((outside, inside))
            pending = [2]
            for source, target in ((outside, inside), (inside, outside)):
                threading.Thread(
                    target=self._pump, args=(source, target, pending), daemon=True
                ).start()

    def _pump(self, source: socket.socket, target: socket.socket, pending: list[int]) -> None:
        try:
            while data := source.recv(65536):
                target.sendall(data)
            target.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        with self._lock:
            pending[0] -= 1
            if pending[0] and source.fileno() != -1:
                return
            for sock in (source, target):
                self._open.discard(sock)
                sock.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for sock in self._open:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            self._open.clear()
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        self._thread.join(timeout=10)


def listen_loopback() -> socket.socket:
    """A socket holding a free 127.0.0.1 port in this namespace (the relay's end)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock
