"""A hostile `<cluster>-kubeconfig` Secret, and the workload server it names, meet one-line notes.

Whoever may write Secrets in a pool's namespace writes that kubeconfig, and so also chooses the
server the plugin then asks for Nodes. The reads go through the plugin's own fetch functions
against a loopback HTTP server that plays the management cluster (it serves the Secret) and,
where the Secret points back at it, the workload cluster. No API server is needed.
"""

from __future__ import annotations

import base64
import json
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import yaml
from support.loopback import QuietHandler, serving

from kubectl_machinepool.base.errors import ConfigError
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.connection import connection_from_dict
from kubectl_machinepool.kube.workload import workload_nodes

NAMESPACE = "capi"
CLUSTER = "prod"
SECRET_PATH = f"/api/v1/namespaces/{NAMESPACE}/secrets/{CLUSTER}-kubeconfig"
SOURCE = f"Secret {NAMESPACE}/{CLUSTER}-kubeconfig"
NOT_SHOWN = f"Nodes of Cluster {NAMESPACE}/{CLUSTER} are not shown: "
# Far above what refusing the documents below needs, far below what expanding them takes
# (the 25 KB bomb once became 10 million headers and over a GiB).
MEMORY_BOUND = 64 << 20


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    # Raw header lines: a hostile server is not bound to latin-1 text.
    headers: tuple[bytes, ...] = ()


@dataclass
class Loopback:
    """Answers each path with its Answer (404 otherwise) and counts what was asked."""

    port: int = 0
    answers: dict[str, Answer] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def answer(self, path: str) -> Answer:
        self.asked.append(path)
        return self.answers.get(path, Answer(404, b'{"kind":"Status","code":404}'))


@pytest.fixture
def loopback() -> Iterator[Loopback]:
    served = Loopback()

    class Handler(QuietHandler):
        def do_GET(self) -> None:
            answer = served.answer(self.path.partition("?")[0])
            head = [f"HTTP/1.1 {answer.status} X".encode(), b"Content-Type: application/json"]
            head += [*answer.headers, f"Content-Length: {len(answer.body)}".encode()]
            self.wfile.write(b"\r\n".join(head) + b"\r\n\r\n" + answer.body)

    with serving(Handler) as server:
        served.port = int(server.server_address[1])
        yield served


def kubeconfig(server: str, cluster: dict[str, Any] | None = None, user: Any = None) -> dict:
    return {
        "clusters": [{"name": "c", "cluster": {"server": server, **(cluster or {})}}],
        "users": [{"name": "u", "user": user or {"token": "t"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }


def management(loopback: Loopback) -> Kube:
    return Kube(connection_from_dict(kubeconfig(loopback.url), "management"), 5)


def serve_secret(loopback: Loopback, value: str) -> None:
    secret = {"kind": "Secret", "data": {"value": base64.b64encode(value.encode()).decode()}}
    loopback.answers[SECRET_PATH] = Answer(200, json.dumps(secret).encode())


def nodes_note(loopback: Loopback) -> str:
    """What describe would say about the Cluster's Nodes; it must be said, on one line."""
    with management(loopback) as kube:
        found = workload_nodes(kube, NAMESPACE, CLUSTER, None, None)
    assert not found.read
    assert found.note is not None
    assert "\n" not in found.note
    assert found.note.isprintable()
    return found.note


def alias_bomb(keys: int, items: int) -> str:
    """A kubeconfig whose as-user-extra keys all alias one list (the review's reproduction)."""
    aliases = "\n".join(f"        k{i}: *L" for i in range(keys))
    return (
        "extra: &L [" + ",".join(["x"] * items) + "]\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
        f"users:\n  - name: u\n    user:\n      token: t\n      as-user-extra:\n{aliases}\n"
    )


def test_an_aliased_impersonation_bomb_is_refused_before_it_expands(loopback) -> None:
    """25 KB of Secret standing for 10 million Impersonate-Extra headers."""
    serve_secret(loopback, alias_bomb(keys=500, items=20_000))
    tracemalloc.start()
    try:
        note = nodes_note(loopback)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert note == (
        f"{NOT_SHOWN}cannot parse {SOURCE}: excessive aliasing (its YAML aliases expand to "
        "over 10 times its size)"
    )
    assert peak < MEMORY_BOUND
    assert loopback.asked == [SECRET_PATH]  # nothing was sent to the server it names


def test_aliases_within_bounds_still_meet_the_impersonation_limit(loopback) -> None:
    """Few enough aliases to be parsed, yet 200 headers: the entry limit refuses them."""
    serve_secret(loopback, alias_bomb(keys=10, items=20))
    assert nodes_note(loopback) == (
        f"{NOT_SHOWN}kubeconfig {SOURCE} is invalid: users.u must be at most 64 "
        "impersonation entries"
    )
    assert loopback.asked == [SECRET_PATH]


@pytest.mark.parametrize(
    "name",
    ["a\x00b", "a" * 300, "ünï.example", "a b", "host\r\nX-Evil: 1"],
    ids=["nul", "too-long", "unicode", "space", "crlf"],
)
def test_a_tls_server_name_that_is_no_host_name_is_a_note(loopback, name: str) -> None:
    secret = kubeconfig("https://127.0.0.1:1", {"tls-server-name": name})
    # safe_dump writes a NUL as the escape "\0": the Secret holds valid YAML.
    serve_secret(loopback, yaml.safe_dump(secret))
    assert nodes_note(loopback) == (
        f"{NOT_SHOWN}kubeconfig {SOURCE} is invalid: clusters.c.tls-server-name must be a host name"
    )


def test_a_tls_server_name_with_a_nul_is_refused_before_any_request() -> None:
    """Directly: the ssl module would raise TypeError on the NUL when the request is made."""
    document = kubeconfig("https://127.0.0.1:1", {"tls-server-name": "a\x00b"})
    with pytest.raises(ConfigError) as refused:
        connection_from_dict(document, SOURCE)
    assert refused.value.message == (
        f"kubeconfig {SOURCE} is invalid: clusters.c.tls-server-name must be a host name"
    )


@pytest.mark.parametrize(
    "retry_after",
    # latin-1 "²" and "¹" pass str.isdigit(); Arabic-Indic three (sent as UTF-8) arrives as
    # latin-1 mojibake; a 20-digit number is far past the longest wait honoured.
    [b"\xb2", b"\xb9", "٣".encode(), b"99999999999999999999", b""],
    ids=["superscript-two", "superscript-one", "arabic-three", "huge", "empty"],
)
def test_a_retry_after_that_is_no_wait_is_not_waited_for(loopback, retry_after: bytes) -> None:
    """The Secret points at the loopback itself, which answers the Nodes list 429."""
    serve_secret(loopback, yaml.safe_dump(kubeconfig(loopback.url)))
    status = {"kind": "Status", "code": 429, "message": "too many requests"}
    loopback.answers["/api/v1/nodes"] = Answer(
        429, json.dumps(status).encode(), (b"Retry-After: " + retry_after,)
    )
    assert nodes_note(loopback) == f"{NOT_SHOWN}too many requests (HTTP 429)"
    # Asked once, not again (the Nodes' Events are asked beside them, 404 here).
    assert sorted(loopback.asked) == sorted([SECRET_PATH, "/api/v1/nodes", "/api/v1/events"])
