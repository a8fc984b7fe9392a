"""How the API server's answers and the transport's failures become MachinePoolErrors."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager

from kubectl_machinepool.base.errors import (
    ClusterAccessError,
    ConflictError,
    MachinePoolError,
    NotFoundError,
    UnreachableError,
)
from kubectl_machinepool.base.fields import text
from kubectl_machinepool.kube.interruptible import Phase, Stalled
from kubectl_machinepool.kube.pool import BadEncoding

# The longest Retry-After honoured; a server asking for more gets its error reported.
MAX_RETRY_AFTER = 10.0
# What a server that stalled in each phase did not do, and what to look at.
STALLS: dict[Phase, tuple[str, str]] = {
    "connect": (
        "did not accept a connection",
        "check that the cluster is up and reachable from here (VPN, firewall), and --context",
    ),
    "handshake": (
        "did not complete the TLS handshake",
        "something takes connections there but does not speak TLS: check the server's URL and "
        "port in the kubeconfig, and any VPN or load balancer in between",
    ),
    "proxy": (
        "could not be reached through the proxy",
        "check the proxy (the kubeconfig's proxy-url, else HTTPS_PROXY and NO_PROXY) and that "
        "it reaches the server",
    ),
    "response": (
        "did not answer",
        "it took the request and sent nothing back: check the API server's health, or wait "
        "longer with --request-timeout (e.g. 5m)",
    ),
}


def unreachable(where: str, err: BaseException) -> UnreachableError:
    return UnreachableError(
        f"cannot reach the API server of {where}: {_reason(err)}",
        hint="check --context and --kubeconfig, and that the cluster is up",
    )


def stalled(where: str, err: Stalled) -> UnreachableError:
    """A phase that passed its bound, named with the server, the context and the bound."""
    what, hint = STALLS[err.phase]
    return UnreachableError(
        f"the API server of {where} {what} within {duration(err.seconds)}", hint=hint
    )


@contextmanager
def transport_errors(where: str, whole: float | None = None) -> Iterator[None]:
    """Every transport failure as a MachinePoolError (a dropped connection: a Retry). whole:
    the bound on a whole answer (answers.py's deadline, the one timeout not a Stalled)."""
    try:
        yield
    except BadEncoding as err:
        raise ClusterAccessError(
            f"the API server of {where} sent {err}",
            hint="check any proxy in between, or set disable-compression: true for this "
            "cluster in the kubeconfig",
        ) from None
    except ConnectionRefusedError as err:
        # Caught first: no connection was made, so none was dropped.
        raise unreachable(where, err) from err
    except Stalled as err:
        raise stalled(where, err) from err
    except TimeoutError as err:
        within = f" within {duration(whole)}" if whole is not None else " in time"
        raise UnreachableError(
            f"the API server of {where} did not send its whole answer{within}",
            hint="narrow the scope with -n or -l, or raise --request-timeout",
        ) from err
    except (http.client.HTTPException, ConnectionError) as err:
        # Dropped before an answer came: a read may simply be asked again.
        raise Retry(unreachable(where, err), 0.0) from err
    except OSError as err:
        raise unreachable(where, err) from err
    except (ValueError, TypeError) as err:
        # http.client refuses header values with control characters, ssl a server name with
        # a NUL; never echo them.
        raise ClusterAccessError(
            f"the request to {where} could not be sent ({type(err).__name__})"
        ) from err


def api_error(where: str, method: str, path: str, status: int, body: bytes) -> MachinePoolError:
    try:
        message = json.loads(body).get("message") or ""
    except (ValueError, AttributeError, RecursionError):
        message = ""
    return status_error(where, status, text(message) or f"{method} {path} returned HTTP {status}")


def status_error(where: str, status: int, message: str) -> MachinePoolError:
    """The error for an HTTP status (or a watch's ERROR event) with the server's message."""
    if status == 401:
        return ClusterAccessError(
            f"the API server of {where} rejected the credentials (401 Unauthorized)",
            hint="log in again or refresh the credentials of this context",
            status=status,
        )
    if status == 403:
        return ClusterAccessError(
            message, hint="ask an administrator for RBAC access to it", status=status
        )
    if status == 404:
        return NotFoundError(message, status=status)
    if status == 409:
        return ConflictError(
            message, hint="it changed since it was read: run the command again", status=status
        )
    return MachinePoolError(f"{message} (HTTP {status})", status=status)


class Retry(Exception):
    """A failed request that may be asked again, after `after` seconds (None: it may not)."""

    def __init__(self, error: MachinePoolError, after: float | None) -> None:
        super().__init__(error.message)
        self.error = error
        self.after = after

    def for_request(self, method: str, started: float, timeout: float | None) -> Retry:
        """This failure of a request sent first at `started`. A write may be asked again only
        after a 429, which the API server's rate limits (max-in-flight, priority and fairness)
        answer before any handler runs, and only while the wait ends within the timeout all its
        tries share: a 5xx, or a connection dropped, may come after etcd stored it (client-go
        retries a write on a 5xx with Retry-After; this does not)."""
        if method == "GET" or self.after is None:
            return self
        if self.error.status != 429:
            return Retry(self.error, None)
        if timeout is None or time.monotonic() + self.after < started + timeout:
            return self
        said = (
            f"{self.error.message}; asked to try again in {duration(self.after)}, past the "
            f"request timeout ({duration(timeout)})"
        )
        return Retry(self.error.restated(said), None)


def retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (kube-apiserver sends whole seconds)."""
    if value is None or not (value.strip().isascii() and value.strip().isdigit()):
        return None
    seconds = float(value.strip())
    return seconds if seconds <= MAX_RETRY_AFTER else None


def duration(seconds: float) -> str:
    """Seconds as Go prints a duration, as kubectl's flags take it: 300ms, 10s, 1m30s."""
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    hours, rest = divmod(seconds, 3600)
    minutes, rest = divmod(rest, 60)
    shown = f"{rest:.3f}".rstrip("0").rstrip(".") + "s"
    if hours or minutes:
        shown = f"{minutes:.0f}m{shown}"
    return f"{hours:.0f}h{shown}" if hours else shown


def _reason(err: BaseException) -> str:
    """The useful last part of a socket, ssl or http.client error, on one line."""
    # Some failures carry no text at all (an empty SSLError): their kind says it then.
    lines = str(err).strip().splitlines() or [type(err).__name__]
    text = lines[-1]
    return text.rsplit("] ", 1)[-1] if "[Errno" in text else text
