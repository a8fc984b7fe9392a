"""How long a request may wait, and how it waits: each phase bounded, and answers read so
that a stopping signal (Ctrl-C, SIGTERM, SIGHUP) is never lost while a request waits for one.

Every phase has a bound, whatever --request-timeout says: a server that takes TCP connections and
never speaks TLS held the plugin silent for as long as anyone let it run. A phase that passes its
bound raises Stalled, which names it, so that the error can say what the server did not do.

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
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any, Literal

from kubectl_machinepool.base.records import record

# The longest a signal may wait to be handled while an answer is awaited.
SLICE = 0.25
# How long connecting and the TLS handshake may take, whatever --request-timeout says (a shorter
# one shortens them): 10 s is client-go's TLS handshake timeout, which kubectl keeps; its dialer
# allows 30 s to connect, where 10 s is already three SYNs resent without an answer.
CONNECT_TIMEOUT = 10.0
HANDSHAKE_TIMEOUT = 10.0
# Without --request-timeout, how long an answer may keep silent (before its first byte, or
# between two). kube-apiserver ends every request but a watch after 60 s (its own
# --request-timeout) with an error that says so; past that margin no answer is coming.
RESPONSE_TIMEOUT = 90.0
# The phases Stalled names. Through a proxy, the TCP connection to it, the tunnel and the TLS
# handshake are one step of urllib3's, told apart by no one: "proxy".
Phase = Literal["connect", "handshake", "proxy", "response"]


@record
class Timeouts:
    """The bound of each phase of one request, in seconds: the TCP connection, the TLS
    handshake, and the response's silence (before its first byte and between any two)."""

    connect: float
    handshake: float
    response: float


def timeouts(limit: float | None) -> Timeouts:
    """Each phase's bound for a request that may take limit seconds in all (--request-timeout;
    None for 0, kubectl's "no limit" on the whole request): connecting and the handshake are
    bounded as kubectl bounds them either way, and silence by RESPONSE_TIMEOUT."""
    if limit is None:
        return Timeouts(CONNECT_TIMEOUT, HANDSHAKE_TIMEOUT, RESPONSE_TIMEOUT)
    return Timeouts(min(limit, CONNECT_TIMEOUT), min(limit, HANDSHAKE_TIMEOUT), limit)


class Stalled(TimeoutError):
    """A phase of a request that passed its bound."""

    def __init__(self, phase: Phase, seconds: float) -> None:
        super().__init__(f"{phase} timed out after {seconds:g} s")
        self.phase = phase
        self.seconds = seconds


@contextmanager
def phase(name: Phase, seconds: float) -> Iterator[None]:
    """A timeout within, named as this phase's (one a deeper phase named is kept)."""
    try:
        yield
    except Stalled:
        raise
    except TimeoutError as err:
        raise Stalled(name, seconds) from err


def stall_in(err: BaseException) -> Stalled | None:
    """The Stalled that err is, or was raised from or while handling: urllib3 wraps ours."""
    seen: BaseException | None = err
    while seen is not None and not isinstance(seen, Stalled):
        seen = seen.__cause__ or seen.__context__
    return seen


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
            except TimeoutError as err:
                if self._bound is not None and time.monotonic() - started >= self._bound:
                    raise Stalled("response", self._bound) from err

    def close(self) -> None:
        if not self.closed:
            self._file.close()
            # The socket may go on: through a proxy, this was the answer to CONNECT, and the TLS
            # handshake that follows must meet its own bound, not a slice.
            with suppress(OSError):  # closed already
                self._sock.settimeout(self._bound)
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
    with Response, as direct ones do, and a stall while they connect named "proxy": urllib3
    says "read timed out" of a tunnel or a TLS handshake that never ends."""
    patient = {}
    for scheme, pool in pools.items():
        base = pool.ConnectionCls
        members = {"response_class": Response, "connect": _connect_naming_stalls(base)}
        connection = type(base.__name__, (base,), members)
        patient[scheme] = type(pool.__name__, (pool,), {"ConnectionCls": connection})
    return patient


def _connect_naming_stalls(base: Any) -> Any:
    def connect(self: Any) -> None:
        # urllib3 bounds each step of connecting by its connect timeout; the proxy's answer to
        # CONNECT is read as any answer (a Stalled "response").
        from urllib3.exceptions import ConnectTimeoutError, NewConnectionError

        try:
            base.connect(self)
        except NewConnectionError:
            raise  # refused or unresolved, which urllib3 derives from ConnectTimeoutError
        except (TimeoutError, ConnectTimeoutError) as err:
            raise Stalled("proxy", self.timeout) from err

    return connect
