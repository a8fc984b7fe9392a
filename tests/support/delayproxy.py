"""Loopback TCP proxies that put a wide-area round trip between a client and API servers, and
count what a run costs there: connections, TLS handshakes, bytes and round-trip depth.

Not the fault proxy (faultproxy.py): that one ends TLS itself and forwards whole answers, so
the handshakes it sees are its own and a watch does not stream through it. These pass bytes
untouched: the client's own TLS handshakes with the API server are the ones counted, each
ClientHello and ServerHello read to tell a resumed session (TLS 1.3 pre_shared_key, or a 1.2
session id echoed) from a full one; the server's certificate still names 127.0.0.1, so a
kubeconfig only changes its port.

Every chunk read from either side is written to the other one way (rtt / 2) later, in order.
Bandwidth is not limited unless set (set_bandwidth): then every connection of every proxy shares
one link of that rate each way, as a user's VPN or office uplink is shared, and a chunk leaves
once the link has sent those before it. A new connection's first bytes reach the server no sooner than one
round trip after it was accepted: the kernel accepts a loopback connection at once, where a
real one costs the TCP handshake's round trip before the client can send anything.

Round-trip depth is the longest chain of flights that wait on each other. A flight is a run of
chunks in one direction on one connection; a server's flight answers the client's before it.
A client's flight is one level above the highest level the client had been answered at when
it began (a new connection: two, the TCP handshake first), as if it waited on all of it: with
round trips much longer than the client's work between them, flights of one chain are apart by
a round trip and those of parallel chains go out together, so this is the chain's length. It
counts across the proxies of one Proxies, as a client's requests to one server may wait on
another's answers.

All proxies of a Proxies run in one asyncio loop in a daemon thread; its methods are called
from other threads. Everything listens on 127.0.0.1 and stops with close() or the process.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
from collections.abc import Callable, Coroutine
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, TypeVar

CHUNK = 65536
T = TypeVar("T")
# TLS: a handshake record, and the two messages that say whether a session is resumed.
_HANDSHAKE_RECORD = 22
_CLIENT_HELLO, _SERVER_HELLO = 1, 2
_PRE_SHARED_KEY = 41
_SUPPORTED_VERSIONS = 43
_TLS13 = 0x0304
# A hello larger than this (or not one at all) is not parsed further.
_HELLO_LIMIT = 1 << 16


@dataclass(frozen=True)
class Counts:
    """What one proxy carried since the last reset."""

    connections: int = 0
    # Opened once the client had more answers than when it opened its first one here: a
    # handshake later phases wait for, where the connections opened together cost one level.
    late: int = 0
    handshakes: int = 0  # ClientHellos seen
    resumed: int = 0  # of which the server resumed a session
    up: int = 0  # bytes client to server
    down: int = 0
    deepest: int = 0  # the level of the deepest flight to this server

    @property
    def full_handshakes(self) -> int:
        return self.handshakes - self.resumed


@dataclass(frozen=True)
class Hello:
    """What a ClientHello or ServerHello says about resumption."""

    session_id: bytes
    pre_shared_key: bool
    tls13: bool


def parse_hello(data: bytes) -> Hello | None:
    """The first hello in data (a TLS record stream's start), None until it is all there or
    when data is not one."""
    if len(data) < 9 or data[0] != _HANDSHAKE_RECORD:
        return None
    length = struct.unpack_from("!H", data, 3)[0]
    body = data[5 : 5 + length]
    if len(body) < length or body[0] not in (_CLIENT_HELLO, _SERVER_HELLO):
        return None
    kind = body[0]
    hello_len = int.from_bytes(body[1:4], "big")
    hello = body[4 : 4 + hello_len]
    if len(hello) < hello_len:
        return None  # split over records: not parsed (never so for these hellos)
    try:
        at = 2 + 32  # legacy version, random
        session_id = hello[at + 1 : at + 1 + hello[at]]
        at += 1 + hello[at]
        if kind == _CLIENT_HELLO:
            at += 2 + struct.unpack_from("!H", hello, at)[0]  # cipher suites
            at += 1 + hello[at]  # compression methods
        else:
            at += 3  # the cipher suite and compression method chosen
        extensions: dict[int, bytes] = {}
        if at < len(hello):
            end = at + 2 + struct.unpack_from("!H", hello, at)[0]
            at += 2
            while at + 4 <= end:
                ext, size = struct.unpack_from("!HH", hello, at)
                extensions[ext] = hello[at + 4 : at + 4 + size]
                at += 4 + size
    except (IndexError, struct.error):
        return None
    versions = extensions.get(_SUPPORTED_VERSIONS, b"")
    if kind == _CLIENT_HELLO:  # a length, then the versions offered
        offered = {versions[i : i + 2] for i in range(1, len(versions) - 1, 2)}
        tls13 = _TLS13.to_bytes(2, "big") in offered
    else:  # the one chosen
        tls13 = versions == _TLS13.to_bytes(2, "big")
    return Hello(bytes(session_id), _PRE_SHARED_KEY in extensions, tls13)


def resumed(client: Hello | None, server: Hello | None) -> bool:
    """Whether the server took up a session the client offered."""
    if client is None or server is None:
        return False
    if server.tls13:
        return server.pre_shared_key
    return bool(client.session_id) and client.session_id == server.session_id


class _Levels:
    """The round-trip levels of one Proxies' run: the highest the client has been answered at,
    and the deepest flight."""

    def __init__(self) -> None:
        self.answered = 0
        self.depth = 0

    def flight(self, level: int) -> int:
        self.depth = max(self.depth, level)
        return level


class _Link:
    """One client connection and its upstream, with its flights."""

    def __init__(self, proxy: DelayProxy, accepted: float) -> None:
        self.proxy = proxy
        self.accepted = accepted
        # The TCP handshake: a level of its own, on top of what the client had been answered.
        self.levels = levels = proxy.owner.levels
        self.connected = levels.flight(levels.answered + 1)
        self.last: str | None = None
        self.level = self.connected
        self.hellos: dict[str, bytearray] = {"up": bytearray(), "down": bytearray()}
        self.parsed: dict[str, Hello | None] = {}
        self.writers: list[asyncio.StreamWriter] = []

    def arrived(self, direction: str, data: bytes) -> int:
        """The level of a chunk that just arrived from one side."""
        if self.levels is not self.proxy.owner.levels:
            # Opened in an earlier run (a reset makes new levels): what it still carries, a
            # close or a late ticket, is no flight of this run's.
            return 0
        if direction != self.last:
            self.last = direction
            if direction == "up":
                self.level = self.levels.flight(max(self.levels.answered, self.connected) + 1)
                counts = self.proxy.counts
                counts["deepest"] = max(counts["deepest"], self.level)
        self._hello(direction, data)
        return self.level

    def _hello(self, direction: str, data: bytes) -> None:
        if direction in self.parsed:
            return
        seen = self.hellos[direction]
        seen += data[: _HELLO_LIMIT - len(seen)]
        hello = parse_hello(bytes(seen))
        if hello is None and len(seen) < _HELLO_LIMIT and seen[0] == _HANDSHAKE_RECORD:
            return  # wait for the rest
        self.parsed[direction] = hello
        self.hellos[direction] = bytearray()
        counts = self.proxy.counts
        if direction == "up" and hello is not None:
            counts["handshakes"] += 1
        if direction == "down" and resumed(self.parsed.get("up"), hello):
            counts["resumed"] += 1


class DelayProxy:
    """One listener in front of one upstream port."""

    def __init__(self, owner: Proxies, name: str, upstream_port: int) -> None:
        self.owner = owner
        self.name = name
        self.upstream_port = upstream_port
        self.port = 0
        self.counts: dict[str, int] = {}
        self.links: set[_Link] = set()
        self.open = asyncio.Event()  # cleared: new connections wait (the network is down)
        self.open.set()
        self._server: asyncio.Server | None = None
        self.reset()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def reset(self) -> None:
        self.counts = dict.fromkeys(
            ("connections", "late", "handshakes", "resumed", "up", "down", "deepest"), 0
        )
        self.first_opened: int | None = None  # the levels answered when the first was opened

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            self.open.set()
            self.drop()

    def drop(self) -> None:
        """Reset every connection (RST, not FIN): a network path lost."""
        for link in list(self.links):
            for writer in link.writers:
                sock = writer.get_extra_info("socket")
                if sock is not None:
                    with suppress(OSError):
                        sock.setsockopt(
                            socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                        )
                writer.transport.abort()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        answered = self.owner.levels.answered
        link = _Link(self, loop.time())
        link.writers.append(writer)
        self.links.add(link)
        self.counts["connections"] += 1
        if self.first_opened is None:
            self.first_opened = answered
        elif answered > self.first_opened:
            self.counts["late"] += 1
        try:
            await self.open.wait()
            try:
                up_reader, up_writer = await asyncio.open_connection(
                    "127.0.0.1", self.upstream_port
                )
            except OSError:
                writer.transport.abort()
                return
            link.writers.append(up_writer)
            await asyncio.gather(
                self._pump(link, "up", reader, up_writer),
                self._pump(link, "down", up_reader, writer),
            )
        finally:
            self.links.discard(link)
            for one in link.writers:
                one.transport.abort()

    async def _pump(
        self,
        link: _Link,
        direction: str,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        """Read one side, write the other one way later; the end (or a reset) passed on."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[float, bytes, int] | None] = asyncio.Queue()
        owner = self.owner

        async def deliver() -> None:
            while (item := await queue.get()) is not None:
                at, data, level = item
                if (wait := at - loop.time()) > 0:
                    await asyncio.sleep(wait)
                writer.write(data)
                await writer.drain()
                if direction == "down":  # into its own run's levels, not a later run's
                    link.levels.answered = max(link.levels.answered, level)
            if writer.can_write_eof():
                writer.write_eof()

        sender = asyncio.create_task(deliver())
        last = 0.0
        try:
            while data := await reader.read(CHUNK):
                now = loop.time()
                self.counts[direction] += len(data)
                at = owner.sent(direction, now, len(data)) + owner.one_way
                if direction == "up":  # not before the TCP handshake's round trip
                    at = max(at, link.accepted + 3 * owner.one_way)
                last = max(last, at)
                queue.put_nowait((last, data, link.arrived(direction, data)))
        except (ConnectionError, OSError):
            for one in link.writers:
                one.transport.abort()
        queue.put_nowait(None)
        try:
            await sender
        except (ConnectionError, OSError):
            for one in link.writers:
                one.transport.abort()


@dataclass(frozen=True)
class Run:
    """What every proxy carried since the last reset, and the run's round-trip depth."""

    counts: dict[str, Counts]
    depth: int


class Proxies:
    """Delay proxies sharing one loop, one round-trip delay and one count of levels."""

    def __init__(self, rtt: float = 0.0) -> None:
        self.one_way = rtt / 2
        self.rate = 0.0  # bytes per second each way; 0: unlimited
        self.link_free = {"up": 0.0, "down": 0.0}  # when each way's link has sent all it took
        self.levels = _Levels()
        self.proxies: dict[str, DelayProxy] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="delay-proxies")
        self._thread.daemon = True
        self._thread.start()

    def _call(self, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        return asyncio.run_coroutine_threadsafe(make(), self._loop).result(30)

    def _do(self, call: Callable[[], T]) -> T:
        async def run() -> T:
            return call()

        return self._call(run)

    def add(self, name: str, upstream_port: int) -> DelayProxy:
        """A proxy in front of 127.0.0.1:upstream_port, listening on a port of its own."""

        async def make() -> DelayProxy:
            proxy = DelayProxy(self, name, upstream_port)
            await proxy.start()
            return proxy

        self.proxies[name] = self._call(make)
        return self.proxies[name]

    def set_rtt(self, rtt: float) -> None:
        def change() -> None:
            self.one_way = rtt / 2

        self._do(change)

    def sent(self, direction: str, now: float, size: int) -> float:
        """When the link has sent size bytes taken now (at once when unlimited)."""
        if not self.rate:
            return now
        self.link_free[direction] = max(now, self.link_free[direction]) + size / self.rate
        return self.link_free[direction]

    def set_bandwidth(self, mbit: float) -> None:
        """The shared link's rate in Mbit/s each way; 0: unlimited."""

        def change() -> None:
            self.rate = mbit * 1e6 / 8

        self._do(change)

    def reset(self) -> None:
        """Counts and levels from zero: a new run begins."""

        def clear() -> None:
            self.levels = _Levels()
            for proxy in self.proxies.values():
                proxy.reset()

        self._do(clear)

    def run(self) -> Run:
        def read() -> Run:
            counts = {name: Counts(**p.counts) for name, p in self.proxies.items()}
            return Run(counts, self.levels.depth)

        return self._do(read)

    def drop(self, name: str) -> None:
        """Reset every connection of one proxy."""
        self._do(self.proxies[name].drop)

    def hold(self, name: str, held: bool) -> None:
        """While held, a new connection through this proxy is taken and never forwarded."""
        event = self.proxies[name].open
        self._do(event.clear if held else event.set)

    def connections(self, name: str) -> int:
        """Connections open now through one proxy."""
        return self._do(lambda: len(self.proxies[name].links))

    def close(self) -> None:
        async def stop() -> None:
            for proxy in self.proxies.values():
                await proxy.stop()
            # Their connections reset, the rest ends by itself (cancelling a stream's handler
            # makes asyncio log the CancelledError).
            others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            if others:
                await asyncio.wait(others, timeout=5)

        if self._thread.is_alive():
            self._call(stop)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
        self._loop.close()

    def __enter__(self) -> Proxies:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
