"""What every whole-pool write command (upgrade, scale, rollout pause|resume|restart) does
around its own plan and carry-out: connect, plan the named pools of one namespace, print each
plan, and carry them out, or say there is nothing to do. With -f (and --dry-run=client only),
the plans are made from the dump and their writes listed: no connection is made."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

from kubectl_machinepool.app.options import Source
from kubectl_machinepool.cli.commands import confirming
from kubectl_machinepool.cli.environment import Environment
from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.kube.interrupts import before_writes

if TYPE_CHECKING:
    from kubectl_machinepool.app.carrying import Callbacks
    from kubectl_machinepool.app.planning import Ground
    from kubectl_machinepool.kube.client import Kube


class _Plan(Protocol):
    @property
    def nothing_to_do(self) -> bool: ...


P = TypeVar("P", bound=_Plan)
R = TypeVar("R")


def plan_and_carry(
    env: Environment,
    access: AccessOptions,
    command: str,
    *,
    source: Source,
    dry_run: str,
    plan: Callable[[Ground, str | None], Sequence[P]],
    render: Callable[..., str],
    painted: bool,
    nothing: str,
    carry: Callable[[Kube, Sequence[P]], R],
    preview: Callable[[Sequence[P], Callbacks], None],
) -> R | None:
    """The plans printed, then carry's result (preview's, from a dump); None when every plan
    has nothing to do (said: "Nothing to do: {nothing}.")."""
    from kubectl_machinepool.app.planning import Dump, Live
    from kubectl_machinepool.kube.client import Kube
    from kubectl_machinepool.render.color import Palette

    def show(plans: Sequence[P]) -> bool:
        for one in plans:
            env.out(render(one, Palette(painted), width=env.width), nl=False, color=painted)
        if all(p.nothing_to_do for p in plans):
            env.err(f"Nothing to do: {nothing}.")
            return False
        return True

    if confirming.from_dump(command, source, dry_run):
        dump = Dump.load(source, env.stdin, env.now)
        plans = plan(dump, access.namespace)
        env.out(dump.heading)
        if show(plans):
            preview(plans, confirming.callbacks(env, assume_yes=False))
        return None
    with Kube.connect(access) as kube:
        with before_writes():
            plans = plan(Live(kube, env.now()), access.scope(kube.connection.namespace))
            shown = show(plans)
        return carry(kube, plans) if shown else None
