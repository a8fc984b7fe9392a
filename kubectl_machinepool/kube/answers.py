"""An API server's answer read within bounds: no more bytes than a run can hold, no longer than
the request may take, and JSON that is not a Kubernetes answer said to be so.

A hostile or broken server must not exhaust memory or time: every answer is read in pieces as
they arrive, counted against a size bound and against one deadline for the whole answer.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from typing import Any

from kubectl_machinepool.base.errors import ClusterAccessError
from kubectl_machinepool.kube.liststream import NotAList, read_list, without_managed_fields
from kubectl_machinepool.kube.pool import Answer

# No answer (and no object of a list answer) is read beyond this.
MAX_ANSWER = 64 << 20
# A list answer is walked as it arrives and not held whole (liststream.py); 5000 real Nodes,
# whose image lists are most of them, come to about 100 MiB.
MAX_LIST_ANSWER = 256 << 20


def body(response: Answer, timeout: float | None, where: str) -> bytes:
    """The whole answer, at most MAX_ANSWER bytes, within timeout in all."""
    with closing(response):
        return b"".join(_chunks(response, timeout, MAX_ANSWER, "an answer", where))


def listed(
    response: Answer,
    timeout: float | None,
    item: Callable[[Any], None],
    *,
    where: str,
    path: str,
    managed_fields: bool,
) -> dict[str, Any]:
    """A list answer walked as it arrives: each element to item(), the rest returned; at most
    MAX_LIST_ANSWER bytes, MAX_ANSWER for any one object in it. managed_fields=False cuts the
    objects' managedFields before they are decoded."""
    chunks = _chunks(response, timeout, MAX_LIST_ANSWER, "a list answer", where)
    if not managed_fields:
        chunks = without_managed_fields(chunks)
    with closing(response):
        try:
            return read_list(chunks, item, MAX_ANSWER)
        except NotAList:
            raise _not_kubernetes(where, path) from None


def document(data: bytes, where: str, path: str) -> dict[str, Any]:
    """An answer's body as the JSON object every Kubernetes answer is."""
    try:
        found = json.loads(data)
    except (ValueError, RecursionError):
        found = None
    if not isinstance(found, dict):
        raise _not_kubernetes(where, path)
    return found


def _chunks(
    response: Answer, timeout: float | None, bound: int, what: str, where: str
) -> Iterator[bytes]:
    """The answer's pieces as they come: never more than bound bytes, nor past timeout in
    total: a server dripping bytes resets a per-read timeout forever."""
    deadline = None if timeout is None else time.monotonic() + timeout
    total = 0
    # read1: one receive at a time, so a server dripping bytes meets the deadline.
    while chunk := response.read1(1 << 20):
        total += len(chunk)
        if total > bound:
            raise ClusterAccessError(
                f"the API server of {where} sent {what} larger than {bound >> 20} MiB",
                hint="narrow the scope with -n or -l, or lower --chunk-size",
            )
        if deadline is not None and time.monotonic() > deadline:
            raise TimeoutError("the answer took longer than the request timeout")
        yield chunk


def _not_kubernetes(where: str, path: str) -> ClusterAccessError:
    # A login page or proxy answering in place of the API server, typically.
    return ClusterAccessError(
        f"the server of {where} did not answer {path} like a Kubernetes API server",
        hint="check the server address and any proxy in between",
    )
