"""What every whole-pool write command (upgrade, scale, rollout pause|resume|restart) does
around its own plan and carry-out: connect, plan the named pools of one namespace, print each
plan, and carry them out, or say there is nothing to do."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

from kubectl_machinepool.base.errors import UsageError
from kubectl_machinepool.cli.environment import Environment
from kubectl_machinepool.kube.access import AccessOptions

if TYPE_CHECKING:
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
    plan: Callable[[Kube, str], Sequence[P]],
    render: Callable[..., str],
    painted: bool,
    nothing: str,
    carry: Callable[[Kube, Sequence[P]], R],
) -> R | None:
    """The plans printed, then carry's result; None when every plan has nothing to do (said:
    "Nothing to do: {nothing}.")."""
    from kubectl_machinepool.kube.client import Kube
    from kubectl_machinepool.render.color import Palette

    with Kube.connect(access) as kube:
        namespace = access.scope(kube.connection.namespace)
        if namespace is None:
            raise UsageError(
                f"{command} acts in one namespace: -A is not taken", hint="use -n NAMESPACE"
            )
        plans = plan(kube, namespace)
        for one in plans:
            env.out(render(one, Palette(painted), width=env.width), nl=False, color=painted)
        if all(p.nothing_to_do for p in plans):
            env.err(f"Nothing to do: {nothing}.")
            return None
        return carry(kube, plans)
