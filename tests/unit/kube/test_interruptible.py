"""kube/interruptible.py: a signal sent while a request waits for an answer that never comes is
handled, wherever it lands: in the moment before the receive blocks, or at another thread.

Against loopback servers that read each request and hold it unanswered (over TLS straight, and
through a forward proxy); the plugin's transport with no request timeout (the response's default
bound, longer than the test's watchdog), in the main thread. On
the code before interruptible.py, a signal sent to the main thread at the first moment the wait
shows went unhandled within a few rounds over TLS, and one handed to another thread every time:
the request waited for the watchdog's answer.
"""

from __future__ import annotations

import signal
import ssl
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import pytest
from support.loopback import QuietHandler, serving
from support.pki import CertificateAuthority

from kubectl_machinepool.kube.interruptible import timeouts
from kubectl_machinepool.kube.settings import Settings
from kubectl_machinepool.kube.transport import Transport

ROUNDS = 20
# A bound on a hang, never a measure: a signal handled at all is handled within a second.
WATCHDOG = 60.0


@dataclass
class Holder:
    """Reads each request and answers none until let go (then with 200 {})."""

    url: str = ""
    arrived: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(0))
    let_go: threading.Event = field(default_factory=threading.Event)


@contextmanager
def holding(context: ssl.SSLContext | None) -> Iterator[Holder]:
    holder = Holder()

    class Handler(QuietHandler):
        protocol_version = "HTTP/1.1"

        def do_PATCH(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            holder.arrived.release()
            holder.let_go.wait()
            with suppress(OSError):  # the client stopped waiting, as it should
                self.reply(200, b"{}")

    with serving(Handler, context) as server:
        scheme = "https" if context else "http"
        holder.url = f"{scheme}://127.0.0.1:{server.server_address[1]}"
        try:
            yield holder
        finally:
            holder.let_go.set()


class Stopped(BaseException):
    pass


def _stop(_signum: int, _frame: FrameType | None) -> None:
    raise Stopped


def _at_the_wait(arrived: threading.Semaphore, to_main: bool) -> None:
    """SIGINT at the first moment the main thread is seen waiting for the answer: as soon as
    this thread runs again after the request arrived, which is when the main thread lets the
    interpreter go to block, the moment a signal used to be lost in. To the main thread, or to
    this one, as the kernel may hand a Ctrl-C to any thread of the process."""
    arrived.acquire()
    main = threading.main_thread().ident or 0
    while True:
        frame = sys._current_frames().get(main)
        while frame is not None and frame.f_code.co_name != "getresponse":
            frame = frame.f_back
        if frame is not None:
            break
        time.sleep(0.001)
    target = main if to_main else threading.get_ident()
    signal.pthread_kill(target, signal.SIGINT)


def _interrupted_every_time(holder: Holder, settings: Settings, to_main: bool) -> list[str]:
    """Each round's end: "stopped" when the signal ended the wait, else what did."""
    transport = Transport(settings)
    watchdog = threading.Timer(WATCHDOG, holder.let_go.set)
    watchdog.start()
    saved = signal.signal(signal.SIGINT, _stop)
    ends = []
    try:
        for _ in range(ROUNDS):
            threading.Thread(
                target=_at_the_wait, args=(holder.arrived, to_main), daemon=True
            ).start()
            try:
                transport.open("PATCH", "/apis/x", [], {}, timeouts(None)).close()
                ends.append("answered")
            except Stopped:
                ends.append("stopped")
    finally:
        signal.signal(signal.SIGINT, saved)
        watchdog.cancel()
        transport.close()
    return ends


@pytest.mark.parametrize("to_main", [True, False], ids=["to-the-main-thread", "to-another"])
def test_a_signal_ends_the_wait_for_a_held_answer_over_tls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, to_main: bool
) -> None:
    authority = CertificateAuthority("interruptible-test-ca")
    issued = authority.issue("api", server_names=("api.internal",))
    (tmp_path / "server.crt").write_bytes(issued.cert)
    (tmp_path / "server.key").write_bytes(issued.key)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "server.crt", tmp_path / "server.key")
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    with holding(context) as holder:
        settings = Settings(holder.url, ca_data=authority.pem, tls_server_name="api.internal")
        assert _interrupted_every_time(holder, settings, to_main) == ["stopped"] * ROUNDS


@pytest.mark.parametrize("to_main", [True, False], ids=["to-the-main-thread", "to-another"])
def test_a_signal_ends_the_wait_for_a_held_answer_through_a_proxy(
    monkeypatch: pytest.MonkeyPatch, to_main: bool
) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    with holding(None) as holder:
        settings = Settings("http://api.internal:8080", proxy_url=holder.url)
        assert _interrupted_every_time(holder, settings, to_main) == ["stopped"] * ROUNDS
