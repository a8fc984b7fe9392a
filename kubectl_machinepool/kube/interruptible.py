"""Answers read so that Ctrl-C is never lost while a request waits for one.

Python runs a signal's handler only between bytecodes of the main thread. A signal that comes
after the last such point and before a receive blocks (the interpreter has just let other
threads run: the moment a thread that looks for the wait, or a user, is likeliest to act), or
one the kernel hands to another thread, is noticed only when the receive returns: with no
request timeout, never. The fault matrix found it: SIGINT sent to the plugin while a write was
held went unhandled in about one run of three. So each receive here waits at most SLICE and is
repeated until the bound its caller set on the socket has passed: a signal is handled within
SLICE, and a request timeout means what it meant.
"""

from __future__ import annotations

import http.client
import io
import socket
import time
from typing import Any

# The longest a signal may wait to be handled while an answer is awaited.
SLICE = 0.25


class _Receiver(io.RawIOBase):
    """The socket's bytes, each receive bounded as the socket's timeout said, waited for in
    slices."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__()
        self._sock = sock
        self._bound = sock.gettimeout()  # set by the caller for each receive; None: no bound
        # A file of the socket's own, which keeps it open while the answer is read even after
        # http.client closes a connection the server will close (as its own file would).
        self._file = sock.makefile("rb", buffering=0)
        sock.settimeout(SLICE if self._bound is None else min(self._bound, SLICE))

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        started = time.monotonic()
        while True:
            try:
                return self._sock.recv_into(buffer)
            except TimeoutError:
                if self._bound is not None and time.monotonic() - started >= self._bound:
                    raise

    def close(self) -> None:
        if not self.closed:
            self._file.close()
        super().close()


class _Socket:
    """All http.client's answer asks of its socket: a file to read from."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def makefile(self, _mode: str) -> io.BufferedReader:
        return io.BufferedReader(_Receiver(self._sock))


class Response(http.client.HTTPResponse):
    """http.client's answer, read through a _Receiver: a connection's response_class."""

    def __init__(self, sock: socket.socket, *args: Any, **kwargs: Any) -> None:
        super().__init__(_Socket(sock), *args, **kwargs)  # type: ignore[arg-type]


def proxied_pools(pools: dict[str, Any]) -> dict[str, Any]:
    """urllib3's connection pool classes by scheme (plain, socks), their connections answering
    with Response, as direct ones do."""
    patient = {}
    for scheme, pool in pools.items():
        connection = type(
            pool.ConnectionCls.__name__, (pool.ConnectionCls,), {"response_class": Response}
        )
        patient[scheme] = type(pool.__name__, (pool,), {"ConnectionCls": connection})
    return patient
