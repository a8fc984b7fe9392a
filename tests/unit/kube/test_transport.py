"""Our transport (transport.py: http.client, urllib3 through a proxy) decides what the Kubernetes
client 37 decided: which proxy, which credentials on each request, which TLS checks; and it keeps
connections alive as urllib3 did. Against loopback HTTP(S) servers that record what reached them;
no API server is needed.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import ClassVar

import pytest
import yaml
from support.loopback import QuietHandler, serving
from support.pki import CertificateAuthority, write_private

from kubectl_machinepool.base.errors import ConfigError, UnreachableError
from kubectl_machinepool.kube import connection as connection_module
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.connection import Connection, load_connection
from kubectl_machinepool.kube.permissions import allowed
from kubectl_machinepool.kube.pool import POOL_SIZE
from kubectl_machinepool.kube.proxies import bypassed
from kubectl_machinepool.kube.settings import Auth, Settings
from kubectl_machinepool.kube.transport import USER_AGENT

REPO = Path(__file__).resolve().parents[3]
GROUP = {"kind": "APIGroup", "versions": [{"version": "v1beta2"}]}
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


@dataclass
class Recorder:
    """Answers every request with {} (or its path's answer) and keeps what it was sent."""

    url: str = ""
    answers: dict[str, object] = field(default_factory=dict)
    seen: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)
    server_names: list[str | None] = field(default_factory=list)  # SNI, over TLS

    def targets(self) -> list[str]:
        return [target for target, _ in self.seen]

    def headers(self, name: str) -> list[list[str]]:
        return [[v for k, v in headers if k.lower() == name.lower()] for _, headers in self.seen]


def _serve(context: ssl.SSLContext | None = None) -> Iterator[Recorder]:
    recorder = Recorder()
    if context is not None:
        context.sni_callback = lambda _socket, name, _context: recorder.server_names.append(name)

    class Handler(QuietHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            recorder.seen.append((self.path, list(self.headers.items())))
            path = self.path.split("://")[-1].partition("?")[0]
            path = path if path.startswith("/") else "/" + path.partition("/")[2]
            known = path in recorder.answers
            body = json.dumps(recorder.answers.get(path, {"kind": "Status"})).encode()
            self.reply(200 if known or not recorder.answers else 404, body)

    with serving(Handler, context) as server:
        scheme = "https" if context else "http"
        recorder.url = f"{scheme}://127.0.0.1:{server.server_address[1]}"
        yield recorder


@pytest.fixture
def server() -> Iterator[Recorder]:
    yield from _serve()


@pytest.fixture
def proxy() -> Iterator[Recorder]:
    """A forward proxy that answers for every server itself."""
    yield from _serve()


@pytest.fixture
def no_proxy_environment(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    return monkeypatch


def get(settings: Settings, headers: tuple[tuple[str, str], ...] = ()) -> dict:
    with Kube(Connection(settings, "x", "default", settings.host, headers=headers), 5) as kube:
        return kube.request("GET", "/apis/x")


def test_each_request_asks_for_the_credentials_of_the_moment(server, no_proxy_environment) -> None:
    """An exec plugin's token expires mid-run: the refresh hook is asked before every request."""
    fresh = iter([None, "Bearer second"])
    auth = Auth("Bearer first", lambda: next(fresh))
    impersonation = (("Impersonate-User", "jane"), ("Impersonate-Group", "a"))
    impersonation += (("Impersonate-Group", "b"),)
    with Kube(Connection(Settings(server.url, auth=auth), "x", "d", server.url, (), impersonation), 5) as kube:  # fmt: skip
        kube.request("GET", "/apis/x")
        kube.request("GET", "/apis/x", {"limit": "2"})
    assert server.targets() == ["/apis/x", "/apis/x?limit=2"]
    assert server.headers("Authorization") == [["Bearer first"], ["Bearer second"]]
    assert server.headers("Impersonate-Group") == [["a", "b"], ["a", "b"]]
    assert server.headers("User-Agent") == [[USER_AGENT], [USER_AGENT]]


def test_no_credentials_no_authorization_header(server, no_proxy_environment) -> None:
    get(Settings(server.url))
    assert server.headers("Authorization") == [[]]


def test_the_environment_proxy_is_used_unless_no_proxy_exempts_the_server(
    server, proxy, no_proxy_environment
) -> None:
    no_proxy_environment.setenv("HTTP_PROXY", proxy.url)
    get(Settings(server.url))
    assert (proxy.targets(), server.targets()) == ([server.url + "/apis/x"], [])
    no_proxy_environment.setenv("NO_PROXY", "example.com, 127.0.0.0/8")
    get(Settings(server.url))
    assert (len(proxy.seen), server.targets()) == (1, ["/apis/x"])


def test_only_the_proxy_for_the_servers_scheme_applies(server, no_proxy_environment) -> None:
    no_proxy_environment.setenv("HTTPS_PROXY", "http://127.0.0.1:9")  # would refuse
    get(Settings(server.url))
    assert server.targets() == ["/apis/x"]


def test_the_kubeconfig_proxy_url_wins_over_the_environment(
    tmp_path: Path, server, proxy, no_proxy_environment
) -> None:
    no_proxy_environment.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # would refuse
    config = tmp_path / "config"
    cluster = {"server": server.url, "proxy-url": proxy.url}
    config.write_text(yaml.safe_dump(_kubeconfig(cluster)))
    connection = load_connection(str(config), None, {"HOME": str(tmp_path)})
    with Kube(connection, 5) as kube:
        kube.request("GET", "/apis/x")
    assert (proxy.targets(), server.targets()) == ([server.url + "/apis/x"], [])


def _kubeconfig(cluster: dict) -> dict:
    return {
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }


@pytest.mark.parametrize(
    ("url", "no_proxy", "exempt"),
    [
        ("https://api.example.com:6443", "*", True),
        ("https://api.example.com:6443", "example.com", True),
        ("https://api.example.com:6443", ".example.com", True),
        ("https://api.example.com:6443", "api.example.com:6443", True),
        ("https://api.example.com:6443", "ample.com", False),
        ("https://api.example.com:6443", "other.org,,", False),
        ("https://10.1.2.3:6443", "10.0.0.0/8", True),
        ("https://10.1.2.3:6443", "10.1.2.3", True),
        ("https://11.1.2.3:6443", "10.0.0.0/8", False),
        ("https://[fd00::1]:6443", "fd00::/8", True),
        ("https://[fd00::1]:6443", "", False),
    ],
)
def test_no_proxy_rules(url: str, no_proxy: str, exempt: bool) -> None:
    assert bypassed(url, no_proxy) is exempt


def test_a_socks_proxy_without_pysocks_is_a_config_error(no_proxy_environment) -> None:
    try:
        import socks  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("PySocks is installed here")
    settings = Settings("https://127.0.0.1:9", proxy_url="socks5://u:secret@127.0.0.1:9")
    with pytest.raises(ConfigError, match="socks5 proxy needs the PySocks package") as err:
        get(settings)
    assert "secret" not in err.value.message


def test_an_unusable_proxy_url_is_a_config_error_that_keeps_its_password(
    no_proxy_environment,
) -> None:
    settings = Settings("https://127.0.0.1:9", proxy_url="ftp://u:secret@127.0.0.1:9")
    with pytest.raises(ConfigError, match="proxy-url cannot be used") as err:
        get(settings)
    assert "secret" not in err.value.message


def test_an_unusable_proxy_leaves_no_credential_file_open(
    tmp_path: Path, no_proxy_environment
) -> None:
    """Kube() fails before any `with` could close the in-memory client key: it closes it."""
    import base64

    data = base64.b64encode(b"-----BEGIN PRIVATE KEY-----\nNOT-A-REAL-KEY\n").decode()
    document = _kubeconfig({"server": "https://127.0.0.1:9", "proxy-url": "ftp://127.0.0.1:9"})
    document["users"][0]["user"] = {"client-certificate-data": data, "client-key-data": data}
    config = tmp_path / "config"
    config.write_text(yaml.safe_dump(document))
    connection = load_connection(str(config), None, {"HOME": str(tmp_path)})
    assert len(connection.held_files) == 2
    with pytest.raises(ConfigError, match="proxy-url cannot be used"):
        Kube(connection, 5)
    for fd in connection.held_files:
        with pytest.raises(OSError, match="Bad file descriptor"):
            os.fstat(fd)


# -- TLS ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def authority() -> CertificateAuthority:
    return CertificateAuthority("transport-test-ca")


@pytest.fixture
def tls_server(authority: CertificateAuthority, tmp_path: Path) -> Iterator[Recorder]:
    """Serves a certificate for api.internal only, never for the address it listens on."""
    issued = authority.issue("api", server_names=("api.internal",))
    (tmp_path / "server.crt").write_bytes(issued.cert)
    (tmp_path / "server.key").write_bytes(issued.key)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "server.crt", tmp_path / "server.key")
    yield from _serve(context)


def test_tls_server_name_is_what_the_certificate_is_checked_against(
    tls_server, authority, no_proxy_environment
) -> None:
    pem = authority.pem
    get(Settings(tls_server.url, ca_data=pem, tls_server_name="api.internal"))
    assert tls_server.targets() == ["/apis/x"]
    assert tls_server.server_names == ["api.internal"]  # the name sent too
    with pytest.raises(UnreachableError, match="certificate verify failed"):
        get(Settings(tls_server.url, ca_data=pem))


def test_a_der_ca_and_a_ca_file_verify_as_pem_data_does(
    tls_server, authority, tmp_path, no_proxy_environment
) -> None:
    der = ssl.PEM_cert_to_DER_cert(authority.pem.decode())
    get(Settings(tls_server.url, ca_data=der, tls_server_name="api.internal"))
    (tmp_path / "ca.crt").write_bytes(authority.pem)
    get(Settings(tls_server.url, ca_file=str(tmp_path / "ca.crt"), tls_server_name="api.internal"))
    assert len(tls_server.seen) == 2


def test_verification_is_on_unless_skipped(tls_server, no_proxy_environment) -> None:
    with pytest.raises(UnreachableError, match="certificate verify failed"):
        get(Settings(tls_server.url))
    get(Settings(tls_server.url, verify=False))
    assert tls_server.targets() == ["/apis/x"]


@pytest.fixture
def mutual_tls_server(authority: CertificateAuthority, tmp_path: Path) -> Iterator[Recorder]:
    """Serves 127.0.0.1 to clients with a certificate of the authority only."""
    issued = authority.issue("api", server_names=("127.0.0.1",))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(
        write_private(tmp_path / "server.crt", issued.cert),
        write_private(tmp_path / "server.key", issued.key),
    )
    context.load_verify_locations(cadata=authority.pem.decode())
    context.verify_mode = ssl.CERT_REQUIRED
    yield from _serve(context)


def test_the_client_certificate_is_presented(
    mutual_tls_server, authority, tmp_path, no_proxy_environment
) -> None:
    client = authority.issue("jane")
    cert = write_private(tmp_path / "client.crt", client.cert)
    key = write_private(tmp_path / "client.key", client.key)
    settings = Settings(mutual_tls_server.url, ca_data=authority.pem)
    get(replace(settings, cert_file=str(cert), key_file=str(key)))
    assert mutual_tls_server.targets() == ["/apis/x"]
    with pytest.raises(UnreachableError):
        get(settings)
    assert len(mutual_tls_server.seen) == 1


def test_an_encrypted_client_key_is_an_error_not_a_password_prompt(
    mutual_tls_server, authority, tmp_path, no_proxy_environment
) -> None:
    from cryptography.hazmat.primitives import serialization

    client = authority.issue("jane")
    key = serialization.load_pem_private_key(client.key, None).private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"secret"),
    )
    settings = Settings(
        mutual_tls_server.url,
        ca_data=authority.pem,
        cert_file=str(write_private(tmp_path / "client.crt", client.cert)),
        key_file=str(write_private(tmp_path / "client.key", key)),
    )
    with pytest.raises(UnreachableError, match="the client key is encrypted"):
        get(settings)
    assert mutual_tls_server.seen == []


# -- connections --------------------------------------------------------------------------------


class Connections(QuietHandler):
    """HTTP/1.1 kept alive; counts the connections the client has closed. GET /lines sends more
    lines than a client reads at once; with `hold`, each GET waits for that many to be in
    progress."""

    protocol_version = "HTTP/1.1"
    hold: threading.Barrier | None = None
    closed: ClassVar[list[int]]
    peers: ClassVar[list[int]]

    def handle(self) -> None:
        try:
            super().handle()
        except OSError:
            pass  # the client closed it mid-answer
        finally:
            # Counted once the client has been told (its FIN sent), not before socketserver
            # gets round to closing the socket: a test that waits for the count must find
            # the connection closed on the client's side too, however slow the machine.
            with contextlib.suppress(OSError):
                self.request.shutdown(socket.SHUT_RDWR)
            self.closed.append(self.client_address[1])

    def do_GET(self) -> None:
        self.peers.append(self.client_address[1])
        if self.hold is not None:
            self.hold.wait(10)
        self.reply(200, b'{"a": 1}\n' * (1 << 19) if self.path == "/lines" else b"{}")

    def do_POST(self) -> None:
        self.peers.append(self.client_address[1])
        self.rfile.read(int(self.headers["Content-Length"]))
        self.reply(201, json.dumps({"status": {"allowed": True}}).encode())


def connections(**attributes: object) -> type[Connections]:
    return type("Handler", (Connections,), {"closed": [], "peers": [], **attributes})


def direct(port: int) -> Kube:
    settings = Settings(f"http://127.0.0.1:{port}")
    return Kube(Connection(settings, "x", "default", settings.host), 5.0)


def eventually(condition: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + 10
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


def test_parallel_reads_keep_pool_size_connections_alive(no_proxy_environment) -> None:
    """Each read on its own connection; POOL_SIZE of them stay open for the next reads."""
    count = POOL_SIZE + 2
    handler = connections(hold=threading.Barrier(count))
    with serving(handler) as server, direct(server.server_address[1]) as kube:
        threads = [threading.Thread(target=kube.request, args=("GET", "/x")) for _ in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert len(set(handler.peers)) == count
        assert eventually(lambda: len(handler.closed) == 2)
        handler.hold = None
        for _ in range(count):
            kube.request("GET", "/x")
        assert len(set(handler.peers)) == count  # no new connection
        assert len(handler.closed) == 2
    assert eventually(lambda: len(handler.closed) == count)  # closed with the Kube


def test_an_answer_not_read_to_its_end_closes_its_connection(no_proxy_environment) -> None:
    """The next request on it would find the rest of the answer."""
    handler = connections()
    with serving(handler) as server, direct(server.server_address[1]) as kube:
        lines = kube.stream("/lines", {}, silence=5)
        next(lines)  # the first line of the answer, then no more
        lines.close()
        assert eventually(lambda: handler.closed == handler.peers[:1])
        kube.request("GET", "/x")
        kube.request("GET", "/x")
    assert handler.peers[1] != handler.peers[0]
    assert handler.peers[2] == handler.peers[1]  # read to its end: kept


def test_a_connection_the_server_closed_while_idle_is_not_used_for_a_write(
    no_proxy_environment,
) -> None:
    """A write is never sent twice: it must not go out on a connection the server has closed.
    The server closes each connection after one answer without saying so."""
    handler = connections()

    def reply(self: Connections, status: int, body: bytes, content_type: str = "") -> None:
        QuietHandler.reply(self, status, body)
        self.close_connection = True

    handler.reply = reply  # type: ignore[method-assign]
    with serving(handler) as server, direct(server.server_address[1]) as kube:
        kube.request("GET", "/x")
        assert eventually(lambda: len(handler.closed) == 1)
        assert allowed(kube, {"verb": "get"})
        kube.request("GET", "/x")
    assert len(set(handler.peers)) == 3


def test_a_path_is_percent_encoded_as_urllib3_encoded_it(server, no_proxy_environment) -> None:
    """http.client would refuse a space in a namespace given on the command line."""
    settings = Settings(server.url)
    with Kube(Connection(settings, "x", "default", settings.host), 5) as kube:
        kube.request("GET", "/api/v1/namespaces/a b/pods/ü", {"labelSelector": "a/b in (c)"})
    assert server.targets() == [
        "/api/v1/namespaces/a%20b/pods/%C3%BC?labelSelector=a%2Fb+in+%28c%29"
    ]


# -- in-cluster ---------------------------------------------------------------------------------


def service_account(tmp_path: Path) -> Path:
    sa = tmp_path / "sa"
    sa.mkdir()
    (sa / "token").write_text("first")
    (sa / "ca.crt").write_text("a CA")
    return sa


def pod(host: str = "10.0.0.1") -> dict[str, str]:
    return {"KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": "443"}


def test_the_service_account_token_is_read_again_once_its_minute_is_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sa = service_account(tmp_path)
    auth = load_connection(None, None, pod(), service_account_dir=sa).settings.auth
    (sa / "token").write_text("second")
    assert auth.header() == "bearer first"  # within the minute
    monkeypatch.setattr(connection_module, "SERVICE_ACCOUNT_TOKEN_PERIOD", timedelta(0))
    auth = load_connection(None, None, pod(), service_account_dir=sa).settings.auth
    (sa / "token").write_text("third")
    assert auth.header() == "bearer third"


def test_an_ipv6_service_host_is_bracketed(tmp_path: Path) -> None:
    conn = load_connection(
        None, None, pod("fd00::1"), service_account_dir=service_account(tmp_path)
    )
    assert conn.server == conn.settings.host == "https://[fd00::1]:443"
    assert conn.settings.ca_file == str(tmp_path / "sa" / "ca.crt")
    assert conn.settings.verify


@pytest.mark.parametrize(
    ("name", "content", "said"),
    [
        ("token", None, "Service token file does not exist."),
        ("token", "", "Token file exists but empty."),
        ("ca.crt", None, "Service certification file does not exist."),
        ("ca.crt", "", "Cert file exists but empty."),
    ],
)
def test_an_unusable_service_account(tmp_path: Path, name: str, content, said: str) -> None:
    sa = service_account(tmp_path)
    if content is None:
        (sa / name).unlink()
    else:
        (sa / name).write_text(content)
    with pytest.raises(ConfigError) as err:
        load_connection(None, None, pod(), service_account_dir=sa)
    assert err.value.message == f"in-cluster configuration is unusable: {said}"


# -- what a run imports -------------------------------------------------------------------------


def test_a_describe_without_a_proxy_imports_neither_the_kubernetes_client_nor_urllib3(
    tmp_path: Path, server
) -> None:
    """The client's import alone cost a fifth of a second and 28 MB per run; urllib3's 50-65 ms,
    which a connection no proxy applies to does not need."""
    server.answers["/apis/cluster.x-k8s.io"] = GROUP
    config = tmp_path / "config"
    config.write_text(yaml.safe_dump(_kubeconfig({"server": server.url})))
    probe = (
        "import json, sys\n"
        "from kubectl_machinepool.cli.main import main\n"
        f"try:\n    main(['describe', '--kubeconfig', {str(config)!r}, '-n', 'ns', 'pool'])\n"
        "except SystemExit:\n    pass\n"
        "roots = ('kubernetes', 'urllib3')\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in roots)))\n"
    )
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    # No proxy variable is passed on: the connection is direct.
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env={**env, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout.splitlines()[-1:] == ["[]"], done.stderr
    assert "/apis/cluster.x-k8s.io" in server.targets()
    assert len(server.seen) > 1, done.stderr  # describe went on to read the pool


def test_a_tls_session_is_taken_once_per_connection_and_resumed_by_the_next(
    authority, tmp_path, no_proxy_environment, monkeypatch
) -> None:
    """The TLS 1.3 ticket comes with a connection's first answer, and a connection opened later
    resumes that session. Python decodes a fresh copy of the session (its certificate chain
    with it) at each access: taken at every answer, a followed view grew by megabytes a minute."""
    issued = authority.issue("api", server_names=("api.internal",))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(
        write_private(tmp_path / "server.crt", issued.cert),
        write_private(tmp_path / "server.key", issued.key),
    )
    resumed: list[bool] = []

    class Handler(connections()):  # type: ignore[misc]
        def do_GET(self) -> None:
            resumed.append(self.connection.session_reused)
            super().do_GET()

    taken: list[int] = []
    session = ssl.SSLSocket.session
    assert isinstance(session, property)
    assert session.fget is not None
    getter = session.fget
    counted = property(lambda sock: (taken.append(1), getter(sock))[1], session.fset)
    monkeypatch.setattr(ssl.SSLSocket, "session", counted)
    with serving(Handler, context) as server:
        url = f"https://127.0.0.1:{server.server_address[1]}"
        settings = Settings(url, ca_data=authority.pem, tls_server_name="api.internal")
        with Kube(Connection(settings, "x", "default", settings.host), 5.0) as kube:
            for _ in range(4):
                kube.request("GET", "/x")
            Handler.hold = threading.Barrier(2)  # two at once: a second connection
            threads = [threading.Thread(target=kube.request, args=("GET", "/x")) for _ in "ab"]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(10)
    assert len(set(Handler.peers)) == 2
    assert sorted(resumed[4:]) == [False, True]  # the first connection again, the new one
    assert resumed[:4] == [False] * 4
    assert len(taken) == 2  # once per connection, after its first answer
