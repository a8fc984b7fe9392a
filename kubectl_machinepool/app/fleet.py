"""Many management clusters at once (--contexts, --all-contexts): one read per kubeconfig
context, side by side, each ending in its value or in the one line that says why not.

Library code: no click, no printing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import TypeVar

from kubectl_machinepool.base.errors import MachinePoolError, UsageError
from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.kube.kubefiles import kubeconfig_paths
from kubectl_machinepool.kube.parallel import start_daemon
from kubectl_machinepool.model.fleet import Read

T = TypeVar("T")

# Contexts read at once. Each read runs its own LISTs side by side (parallel.MAX_PARALLEL
# in all), so more contexts at once would only queue behind them.
MAX_CONTEXTS = 4
# Without --request-timeout one read waits for its server, and its credential plugin, forever; in
# a fleet an unreachable context (or a hung plugin) must become a note, not a hang. The bound also
# keeps each plugin from prompting: several run at once (execplugin.py).
FLEET_REQUEST_TIMEOUT = 30.0


def contexts(access: AccessOptions, wanted: Sequence[str], every: bool) -> list[str]:
    """The contexts asked for (--contexts a,b), or every context of the kubeconfig."""
    from kubectl_machinepool.kube.kubeconfig import context_names

    try:
        known = [name for name, _ in context_names(kubeconfig_paths(access.kubeconfig, os.environ))]
    except MachinePoolError as err:
        raise UsageError(
            err.message, hint="--contexts and --all-contexts read the kubeconfig"
        ) from err
    if every:
        if not known:
            raise UsageError(
                "the kubeconfig has no context", hint="add one, or drop --all-contexts"
            )
        return known
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise UsageError(
            f'context "{unknown[0]}" does not exist in the kubeconfig',
            hint="kubectl config get-contexts lists them",
        )
    return list(dict.fromkeys(wanted))


def read_each(
    access: AccessOptions, names: Sequence[str], read: Callable[[AccessOptions], T]
) -> list[Read[T]]:
    """read() once per context, at most MAX_CONTEXTS at once; in the order of names."""
    timeout = access.request_timeout or FLEET_REQUEST_TIMEOUT
    found: dict[str, Read[T]] = {}
    slots = threading.BoundedSemaphore(MAX_CONTEXTS)
    failures: list[BaseException] = []

    def one(name: str) -> None:
        with slots:
            try:
                value = read(replace(access, context=name, request_timeout=timeout))
            except MachinePoolError as err:
                found[name] = Read(name, None, err.message)
            except BaseException as err:  # a bug, not a context's fault: the caller sees it
                failures.append(err)
            else:
                found[name] = Read(name, value)

    # Daemon threads, as parallel.py's: a silent server must not outlive Ctrl-C.
    threads = [start_daemon(one, n) for n in names]
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return [found[name] for name in names]


def read_fleet(
    access: AccessOptions,
    read: Callable[[AccessOptions], T],
    *,
    wanted: Sequence[str],
    every: bool,
    notes_of: Callable[[T], Iterable[str]],
    warn: Callable[[str], None],
) -> list[Read[T]]:
    """Each context asked for, read: a context not read, and what a read one could not read,
    is warned under the context's name; when no context could be read, that is the error."""
    reads = read_each(access, contexts(access, wanted, every), read)
    for one in reads:
        if one.value is None:
            warn(f"context {one.context} not read: {one.error}")
            continue
        for note in notes_of(one.value):
            warn(f"context {one.context}: {note}")
    if all(one.value is None for one in reads):
        raise MachinePoolError("no context could be read", hint="check the warnings above")
    return reads
