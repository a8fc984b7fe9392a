"""Small HTTP(S) servers on 127.0.0.1 for unit tests of our own boundary (transport, errors,
hostile answers): a handler class in, a running server out, stopped and joined afterwards."""

from __future__ import annotations

import http.server
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class QuietHandler(http.server.BaseHTTPRequestHandler):
    """A handler that logs nothing and answers with reply()."""

    def reply(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def serving(
    handler: type[http.server.BaseHTTPRequestHandler], context: ssl.SSLContext | None = None
) -> Iterator[http.server.ThreadingHTTPServer]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if context is not None:
        server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
