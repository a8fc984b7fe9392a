"""A write is asked again only on a 429 with Retry-After, the one answer that proves the server
did not process it, and only while the wait fits in the request timeout; every other failure of
a write is its caller's to settle. Against a loopback server answering a script."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from support.loopback import QuietHandler, serving

from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.kube.client import READ_RETRIES, Kube
from kubectl_machinepool.kube.connection import connection_from_dict

PATH = "/apis/cluster.x-k8s.io/v1beta2/namespaces/ns/machinepools/mp/scale"
BUSY = json.dumps({"kind": "Status", "code": 429, "message": "too many requests"}).encode()
DONE = json.dumps({"kind": "Scale", "spec": {"replicas": 3}}).encode()


@dataclass
class Script:
    """Each request gets the next (status, Retry-After, body); the last one repeats."""

    answers: list[tuple[int, str | None, bytes]] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)

    def next(self, method: str) -> tuple[int, str | None, bytes]:
        self.asked.append(method)
        return self.answers[min(len(self.asked), len(self.answers)) - 1]


@pytest.fixture
def script() -> Iterator[tuple[Script, str]]:
    played = Script()

    class Handler(QuietHandler):
        def answer(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status, wait, body = played.next(self.command)
            self.send_response(status)
            if wait is not None:
                self.send_header("Retry-After", wait)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_PUT = do_PATCH = do_POST = do_DELETE = answer

    with serving(Handler) as server:
        yield played, f"http://127.0.0.1:{server.server_address[1]}"


def kube(url: str, timeout: float | None) -> Kube:
    config = {
        "clusters": [{"name": "c", "cluster": {"server": url}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    return Kube(connection_from_dict(config, "test"), timeout)


@pytest.mark.parametrize("timeout", [None, 30.0], ids=["no-request-timeout", "30s"])
@pytest.mark.parametrize("method", ["PUT", "PATCH", "POST", "DELETE"])
def test_a_429_with_retry_after_is_sent_again(script, method: str, timeout: float | None) -> None:
    played, url = script
    played.answers = [(429, "0", BUSY), (200, None, DONE)]
    with kube(url, timeout) as client:
        assert client.request(method, PATH, body={}) == json.loads(DONE)
    assert played.asked == [method, method]


def test_a_wait_past_the_request_timeout_is_not_waited(script) -> None:
    played, url = script
    played.answers = [(429, "5", BUSY), (200, None, DONE)]
    with kube(url, 2.0) as client, pytest.raises(MachinePoolError) as refused:
        client.request("PUT", PATH, body={})
    assert refused.value.status == 429
    assert refused.value.message == (
        "too many requests (HTTP 429); asked to try again in 5s, past the request timeout (2s)"
    )
    assert played.asked == ["PUT"]


@pytest.mark.parametrize(
    ("status", "wait"),
    [(500, "0"), (503, "0"), (504, "0"), (429, None), (429, "\u00b2"), (429, "11")],
    ids=["500", "503", "504", "no-retry-after", "not-a-number", "longer-than-honoured"],
)
def test_any_other_failure_of_a_write_is_sent_once(script, status: int, wait: str | None) -> None:
    """A 5xx may come after etcd took the write: asking again could apply it twice."""
    played, url = script
    played.answers = [(status, wait, BUSY), (200, None, DONE)]
    with kube(url, None) as client, pytest.raises(MachinePoolError) as failed:
        client.request("PATCH", PATH, body={})
    assert failed.value.status == status
    assert played.asked == ["PATCH"]


def test_a_server_busy_every_time_is_asked_a_bounded_number_of_times(script) -> None:
    played, url = script
    played.answers = [(429, "0", BUSY)]
    with kube(url, 30.0) as client, pytest.raises(MachinePoolError) as refused:
        client.request("PUT", PATH, body={})
    assert refused.value.message == f"too many requests (HTTP 429) (tried {READ_RETRIES + 1} times)"
    assert played.asked == ["PUT"] * (READ_RETRIES + 1)
