"""Requests: what the API server is asked, over transport.py; answers.py reads the answers
within bounds and discovery.py resolves kinds.

It speaks raw JSON (no typed models: the Kubernetes client is not used at all, its import alone
costs more than a fleet's describe), lists in chunks, and translates every transport or API
failure into a MachinePoolError. What to read is fetch.py's business; both return plain data.
"""

from __future__ import annotations

import builtins
import os
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import closing, contextmanager
from dataclasses import replace
from typing import Any, TypeVar
from urllib.parse import urlencode

from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.base.fields import RawObject, dig, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.kube.access import CHUNK_SIZE, AccessOptions
from kubectl_machinepool.kube.answers import MAX_ANSWER, body, document, listed
from kubectl_machinepool.kube.apierrors import Retry, api_error, retry_after, transport_errors
from kubectl_machinepool.kube.connection import Connection, load_connection
from kubectl_machinepool.kube.discovery import ServedKinds
from kubectl_machinepool.kube.interruptible import Timeouts, timeouts
from kubectl_machinepool.kube.parallel import Pending
from kubectl_machinepool.kube.pool import Answer, Headers
from kubectl_machinepool.kube.resource import Resource
from kubectl_machinepool.kube.serverclock import ServerClock
from kubectl_machinepool.kube.transport import Transport
from kubectl_machinepool.kube.watch import (
    WATCH_SLACK,
    WATCH_WINDOW,
    Health,
    Watch,
    stream_lines,
    watch,
)

# Retries of one read: after a dropped connection, or when the server says when to ask again.
READ_RETRIES = 3
METADATA_ONLY = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
T = TypeVar("T")
# The Kube each kept() run keeps for its flags.
_KEPT: dict[AccessOptions, Kube] = {}


@record
class _Call:
    method: str
    path: str
    query: dict[str, str] | None = None
    accept: str = "application/json"
    body: dict[str, Any] | None = None
    content_type: str = "application/json"
    managed_fields: bool = True


class Kube:
    """A connection to one API server plus a per-run cache of API discovery."""

    def __init__(
        self,
        connection: Connection,
        request_timeout: float | None,
        chunk_size: int = CHUNK_SIZE,
        *,
        answer_timeout: float | None = None,
    ) -> None:
        """request_timeout (--request-timeout; None for 0) bounds each request as a whole;
        connecting, the TLS handshake and the answer's silence are bounded either way
        (interruptible.timeouts). answer_timeout, when longer, bounds an answer's whole
        transfer in place of request_timeout, which then bounds the connection and each wait
        for bytes: a secondary server must answer promptly, but its thousands of Nodes take
        their time."""
        self.connection = connection
        try:
            self._transport = Transport(connection.settings)
        except BaseException:  # an unusable proxy: no `with` will close the credentials
            self._close_files()
            raise
        self._timeout = request_timeout
        self._answer_timeout = answer_timeout
        self.chunk_size = chunk_size
        self.kinds = ServedKinds(self)
        # Workload clusters reached through this one, by Cluster and flags (workload.py), those
        # being reached before a read needs them (warmstart.py), and every one made (adopt).
        self.workloads: dict[tuple[str, str, str | None, float | None], Kube] = {}
        self.warming: dict[tuple[str, str, str | None, float | None], Pending[Kube]] = {}
        self._others: builtins.list[Kube] = []
        self._held = self._closed = False
        # The server's time as its answers' Date headers say: a restart's start is on it.
        self.server_clock = ServerClock()

    @classmethod
    def connect(cls, access: AccessOptions) -> Kube:
        """A Kube for these flags: the one a run keeps for them (kept()), else a new one."""
        if (kept := _KEPT.get(access)) is not None:
            return kept
        connection = load_connection(
            access.kubeconfig, access.context, plugin_timeout=access.request_timeout
        )
        return cls(connection, access.request_timeout, access.chunk_size)

    @classmethod
    @contextmanager
    def kept(cls, access: AccessOptions) -> Iterator[Kube]:
        """One Kube for every connect(access) within, for a run that reads again and again (a
        followed view): its reads share connections, discovery and workload clusters; their
        own `with` closes nothing, the end of this one closes it."""
        kube = cls.connect(access)
        kube._held, _KEPT[access] = True, kube
        try:
            yield kube
        finally:
            del _KEPT[access]
            kube._held = False
            kube.close()

    def __enter__(self) -> Kube:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Its connections, the workload clusters' ones made through it, and its held files;
        once, and for a kept Kube when its run ends."""
        if self._held or self._closed:
            return
        self._closed = True
        for other in self._others:
            other.close()
        self._transport.close()
        self._close_files()

    def adopt(self, other: Kube) -> None:
        """Close other with this one; at once if this one is closed (a read ended meanwhile)."""
        self._others.append(other)
        if self._closed:
            other.close()

    def open_ahead(self, count: int) -> None:
        """Have count connections ready for the reads after the first request, those missing
        opened beside it: over a wide-area link a new one costs two round trips (pool.py)."""
        self._transport.open_ahead(count, timeouts(self._timeout))

    def _close_files(self) -> None:
        for fd in self.connection.held_files:
            os.close(fd)

    @property
    def timeout(self) -> float | None:
        """Each request's timeout (--request-timeout); None: none (each phase has its bound)."""
        return self._timeout

    @property
    def where(self) -> str:
        ctx = self.connection.context
        return f"context {ctx!r} ({self.connection.server})" if ctx else self.connection.server

    # -- transport ---------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        query: dict[str, str] | None = None,
        accept: str = "application/json",
        *,
        body: dict[str, Any] | None = None,
        content_type: str = "application/json",
        timeout: float | None = None,
        items: Callable[[], Callable[[Any], None]] | None = None,
        managed_fields: bool = True,
    ) -> dict[str, Any]:
        """One API call; timeout, when given, replaces the connection's own. Reads are
        retried as client-go retries them: after a dropped connection and when the server asks
        for it (429/5xx with Retry-After). A write only after a 429 with Retry-After, proof that
        it was not processed, within the one timeout its tries share (Retry.for_request): whether
        any other write took effect is for the caller to find out. With items, a list answer's
        elements go one by one, as they arrive, to the sink items() gives for each attempt, and
        the rest comes back; managed_fields=False leaves the items' managedFields out."""
        call = _Call(method, path, query, accept, body, content_type, managed_fields)
        limit, started = self._timeout if timeout is None else timeout, time.monotonic()
        for attempt in range(READ_RETRIES + 1):
            left = limit if method == "GET" or limit is None else started + limit - time.monotonic()
            try:
                sink = items() if items is not None else None
                return self._request(call, left, sink)
            except Retry as failed:
                retry = failed.for_request(method, started, limit)
                if attempt == READ_RETRIES or retry.after is None:
                    error = retry.error
                    if attempt:  # each try waited its own bounds: say how many there were
                        error = error.restated(f"{error.message} (tried {attempt + 1} times)")
                    raise error from failed.__cause__
                time.sleep(retry.after)
        raise AssertionError("unreachable")  # the loop always returns or raises

    def _request(
        self, call: _Call, timeout: float | None, item: Callable[[Any], None] | None = None
    ) -> dict[str, Any]:
        bound = self._bound(timeout)
        with transport_errors(self.where, bound):
            response = self._open(call, timeouts(timeout))
            status = response.status
            self.server_clock.heard(response.headers.get("Date"))
            if item is not None and 200 <= status < 300:
                return listed(
                    response,
                    bound,
                    item,
                    where=self.where,
                    path=call.path,
                    managed_fields=call.managed_fields,
                )
            data = body(response, bound, self.where)
            asked_to_wait = response.headers.get("Retry-After")
        if 200 <= status < 300:
            return document(data, self.where, call.path)
        error = api_error(self.where, call.method, call.path, status, data)
        wait = retry_after(asked_to_wait) if status == 429 or status >= 500 else None
        if wait is not None:
            raise Retry(error, wait)
        raise error

    def _bound(self, timeout: float | None) -> float | None:
        """How long a whole answer may take: the request timeout, or the answer timeout when
        longer (a server dripping bytes resets a per-read timeout forever)."""
        if timeout is not None and self._answer_timeout is not None:
            return max(timeout, self._answer_timeout)
        return timeout

    def _open(self, call: _Call, limits: Timeouts) -> Answer:
        """Send the request; the answer is left unread, for closing() to hand back."""
        url_path = call.path + ("?" + urlencode(call.query) if call.query else "")
        headers: Headers = [("Accept", call.accept)]
        if call.body is not None:
            headers.append(("Content-Type", call.content_type))
        headers += self.connection.headers  # repeated Impersonate-Group is allowed
        return self._transport.open(call.method, url_path, headers, call.body, limits)

    def list_of(
        self,
        resource: Resource,
        namespace: str | None,
        make: Callable[[RawObject], T],
        selector: str | None = None,
        *,
        field_selector: str | None = None,
        metadata_only: bool = False,
        managed_fields: bool = True,
    ) -> list[T]:
        """list(), keeping only what make() makes of each object as it arrives: the objects
        themselves are not held, so memory is what make() keeps of them."""
        found: list[T] = []
        query: dict[str, str] = {"limit": str(self.chunk_size)} if self.chunk_size else {}
        if selector:
            query["labelSelector"] = selector
        if field_selector:
            query["fieldSelector"] = field_selector
        accept = METADATA_ONLY if metadata_only else "application/json"
        page: list[T] = []

        def keep(item: Any) -> None:
            if not isinstance(item, dict):
                return
            # List items come without TypeMeta; keep them shaped like `kubectl get -o yaml`.
            if metadata_only:
                item.update(apiVersion=resource.api_version, kind=resource.kind)
            item.setdefault("apiVersion", resource.api_version)
            item.setdefault("kind", resource.kind)
            page.append(make(item))

        def sink() -> Callable[[Any], None]:
            page.clear()  # a retried page starts again
            return keep

        while True:
            try:
                rest = self.request(
                    "GET",
                    resource.path(namespace),
                    query,
                    accept,
                    items=sink,
                    managed_fields=managed_fields,
                )
            except MachinePoolError as err:
                if err.status != 410 or "continue" not in query or "limit" not in query:
                    raise
                # The continue token expired (compaction): list everything at once, as
                # client-go's pager does, rather than mix pages of two resourceVersions.
                found.clear()
                query.pop("continue")
                query.pop("limit")
                continue
            found += page
            token = text(dig(rest, "metadata", "continue"))
            if not token:
                return found
            query["continue"] = token

    def list(
        self,
        resource: Resource,
        namespace: str | None,
        selector: str | None = None,
        *,
        field_selector: str | None = None,
        metadata_only: bool = False,
        shape: Callable[[RawObject], None] | None = None,
        managed_fields: bool = True,
    ) -> list[RawObject]:
        """Every object of a kind in a namespace (or all), in chunks, with TypeMeta filled in.

        metadata_only asks the server for PartialObjectMetadata: names and labels without the
        data, which is all a check for Secrets needs and all it should see. shape is called
        on each object as its page arrives (to forget or share parts of it): thousands of
        per-instance objects are what a large pool's memory is made of. managed_fields=False
        cuts the objects' managedFields from the answer before it is decoded (liststream.py).
        """

        def kept(obj: RawObject) -> RawObject:
            if shape is not None:
                shape(obj)
            return obj

        return self.list_of(
            resource,
            namespace,
            kept,
            selector,
            field_selector=field_selector,
            metadata_only=metadata_only,
            managed_fields=managed_fields,
        )

    def stream(
        self,
        path: str,
        query: dict[str, str],
        *,
        silence: float,
        opened: Callable[[], None] = lambda: None,
    ) -> Generator[bytes, None, None]:
        """The lines of a streamed answer (a watch): each at most MAX_ANSWER bytes, none waited
        for longer than silence, and the stream over by then at the latest; opened() once the
        server has answered. Failures as request() raises them; a dropped connection is an
        UnreachableError."""
        deadline = time.monotonic() + silence
        try:
            with transport_errors(self.where, self._bound(silence)):
                call = _Call("GET", path, query)
                response = self._open(call, replace(timeouts(self._timeout), response=silence))
                if not 200 <= response.status < 300:
                    data = body(response, self._bound(silence), self.where)
                    raise api_error(self.where, "GET", path, response.status, data)
                opened()
                with closing(response):
                    yield from stream_lines(response, deadline, self.where, MAX_ANSWER)
        except Retry as retry:
            raise retry.error from retry.__cause__

    def watch(
        self,
        resource: Resource,
        namespace: str | None,
        *,
        name: str | None = None,
        selector: str | None = None,
        resource_version: str | None = None,
        timeout: float | None = None,
        window: float = WATCH_WINDOW,
        slack: float = WATCH_SLACK,
        health: Health | None = None,
    ) -> Generator[tuple[str, RawObject], None, None]:
        """Events (type, object) of a kind, as the watch API sends them, until timeout passes
        (None: never). See watch.watch for restarts, re-lists, backoff and bounds."""
        spec = Watch(resource, namespace, name, selector, window, slack)
        return watch(self, spec, resource_version, timeout, health)

    # -- discovery (discovery.ServedKinds: once per server and run) ----------------------

    def capi_version(self) -> str:
        return self.kinds.capi_version()

    def machine_pools(
        self, namespace: str | None, selector: str | None = None
    ) -> builtins.list[RawObject]:
        """Every MachinePool in scope: a run's first read, which also finds the version."""
        return self.kinds.machine_pools(namespace, selector)

    def likely_capi_resource(self, kind: str) -> Resource:
        return self.kinds.likely(kind)

    def capi_resource(self, kind: str) -> Resource:
        return self.kinds.capi(kind)

    def resource(self, group: str, kind: str, preferred: str | None = None) -> Resource:
        return self.kinds.resource(group, kind, preferred)
