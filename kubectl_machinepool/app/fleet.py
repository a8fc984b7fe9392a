"""Many management clusters at once (--contexts, --all-contexts): one read per kubeconfig
context, side by side, each ending in its value or in the one line that says why not.

Library code: no click, no printing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from typing import TypeVar

from kubectl_machinepool.app.forked import default_parallel, run_forked
from kubectl_machinepool.base.errors import MachinePoolError, UsageError
from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.kube.kubefiles import kubeconfig_paths
from kubectl_machinepool.model.fleet import Read

T = TypeVar("T")

# Without --request-timeout a read may wait for a server that answers slowly (only silence is
# bounded, at 90 s) and for its credential plugin; in a fleet a slow context (or a hung plugin)
# must become a note soon, not hold the view. The bound also keeps each plugin from prompting:
# several run at once (execplugin.py).
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
    access: AccessOptions,
    names: Sequence[str],
    read: Callable[[AccessOptions], T],
    parallel: int | None = None,
    prepare: Callable[[], None] | None = None,
) -> Iterator[Read[T]]:
    """read() once per context, each in its own process, `parallel` at once (default: one per
    core); yielded in the order of names, each as soon as it and those before it are in.

    What read() returns travels back pickled: the caller makes it small (what it will print),
    and the objects it was made from stay in the child. prepare() imports what read() will,
    here, once: every child starts with it instead of importing it again."""
    if prepare is not None:
        prepare()
    timeout = access.request_timeout or FLEET_REQUEST_TIMEOUT

    def reading(name: str) -> Callable[[], Read[T]]:
        def call() -> Read[T]:
            try:
                return Read(name, read(replace(access, context=name, request_timeout=timeout)))
            except MachinePoolError as err:
                return Read(name, None, err.message)

        return call

    def died(index: int, why: str) -> Read[T]:
        return Read(names[index], None, why)

    calls = [reading(name) for name in names]
    return run_forked(calls, parallel or default_parallel(), died)


def read_fleet(
    access: AccessOptions,
    read: Callable[[AccessOptions], T],
    *,
    wanted: Sequence[str],
    every: bool,
    parallel: int | None,
    prepare: Callable[[], None],
    notes_of: Callable[[T], Iterable[str]],
    warn: Callable[[str], None],
) -> Iterator[Read[T]]:
    """Each context asked for, read, in order as each is in: a context not read, and what a
    read one could not read, is warned under the context's name; when no context could be
    read, that is the error, once the last is in."""
    some = False
    for one in read_each(access, contexts(access, wanted, every), read, parallel, prepare):
        if one.value is None:
            warn(f"context {one.context} not read: {one.error}")
        else:
            some = True
            for note in notes_of(one.value):
                warn(f"context {one.context}: {note}")
        yield one
    if not some:
        raise MachinePoolError("no context could be read", hint="check the warnings above")
