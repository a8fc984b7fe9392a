"""Domain errors and exit codes.

Every failure a user can cause or meet (bad flags, unreachable cluster, RBAC, missing objects) is
one of these, raised where it is detected and turned into `error: …` + `hint: …` once, in cli.main.
Any other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from enum import IntEnum

from kubectl_machinepool.base.spelling import closest, did_you_mean


class ExitCode(IntEnum):
    OK = 0
    ERROR = 1
    USAGE = 2
    # A guarded write declined to act; nothing changed (kubectl keeps 3 for "nothing changed").
    REFUSED = 3
    # diagnose --fail-on: the run worked and found problems at or above the chosen severity.
    FINDINGS = 4
    # A write sequence stopped part-way: the cluster is left changed, or a write's outcome is
    # unknown. The message names each object and what it holds.
    INCOMPLETE = 5
    HANGUP = 129  # SIGHUP: the terminal went away
    INTERRUPTED = 130  # SIGINT, as shells report it
    BROKEN_PIPE = 141  # the reader of stdout went away: what a SIGPIPE death reports
    TERMINATED = 143  # SIGTERM


class MachinePoolError(Exception):
    """An expected failure with a one-line message and an optional hint."""

    exit_code = ExitCode.ERROR

    def __init__(self, message: str, hint: str | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        # The HTTP status the API server answered with; None when it gave no answer.
        self.status = status

    def restated(self, message: str) -> MachinePoolError:
        """The same failure (class, hint, status) told with more context."""
        return type(self)(message, self.hint, self.status)


class ConfigError(MachinePoolError):
    """Kubeconfig, context or flag values that cannot be used."""


class ClusterAccessError(MachinePoolError):
    """The API server could not be reached, or refused us (401/403), or timed out."""


class UnreachableError(ClusterAccessError):
    """No answer at all: connection refused, name resolution, TLS handshake or timeout."""


class ConflictError(MachinePoolError):
    """The object changed since it was read (409, a failed precondition)."""


class RefusedError(MachinePoolError):
    """A safety rule says no: nothing was written."""

    exit_code = ExitCode.REFUSED


class NotFoundError(MachinePoolError):
    """A named object or API does not exist."""


def pools_not_found(
    names: Sequence[str], namespace: str | None, present: Collection[str] = ()
) -> NotFoundError:
    """present: the pools of the namespace the read listed, whose names nearest each missing
    one the hint offers (kubectl's "Did you mean this?"), at no extra request."""
    error = not_found("machinepools.cluster.x-k8s.io", names, namespace)
    others = sorted(set(present) - set(names))
    near = dict.fromkeys(n for name in names for n in closest(name, others))
    error.hint = did_you_mean(list(near)[:3])
    return error


def not_found(resource: str, names: Sequence[str], namespace: str | None) -> NotFoundError:
    """kubectl's words for named objects of a resource (plural.group) that do not exist."""
    quoted = ", ".join(f'"{name}"' for name in names)
    where = f' in namespace "{namespace}"' if namespace else ""
    return NotFoundError(f"{resource} {quoted} not found{where}")


class UsageError(MachinePoolError):
    exit_code = ExitCode.USAGE


class IncompleteError(MachinePoolError):
    """Writes stopped part-way and could not all be taken back, or their outcome is unknown."""

    exit_code = ExitCode.INCOMPLETE


class Interrupted(BaseException):
    """SIGINT, SIGTERM or SIGHUP during writes, after the state left was worked out.

    A BaseException like KeyboardInterrupt, so no `except Exception` on the way swallows it.
    """

    def __init__(self, exit_code: ExitCode, report: str = "") -> None:
        super().__init__(report)
        self.exit_code = exit_code
        self.report = report
