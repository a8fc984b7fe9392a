"""`kubectl machinepool delete-machine`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from kubectl_machinepool.app.options import Source
from kubectl_machinepool.base.durations import parse_duration
from kubectl_machinepool.base.errors import UsageError
from kubectl_machinepool.cli import suggest
from kubectl_machinepool.cli.commands import CONTEXT_SETTINGS, confirming, flags, poolnames
from kubectl_machinepool.cli.environment import Environment
from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.kube.interrupts import before_writes
from kubectl_machinepool.render.color import ColorMode

if TYPE_CHECKING:
    from kubectl_machinepool.app.deleting import DeleteMachine


def _asked(
    *,
    machine: str | None,
    node: str | None,
    provider_id: str | None,
    pool: str | None,
    replace: bool,
    scale_down: bool,
    drain_timeout: str | None,
    allow_unverified_provider: bool,
    workload_kubeconfig: str | None,
) -> DeleteMachine:
    """The instance, mode and drain timeout, checked before anything is read or written."""
    from kubectl_machinepool.app.deleting import DeleteMachine
    from kubectl_machinepool.plans.deletetarget import Mode, Wanted

    if len([v for v in (machine, node, provider_id) if v]) != 1:
        raise UsageError(
            "name exactly one instance: a Machine name, --node NODE or --provider-id ID",
            hint="kubectl machinepool describe POOL lists them",
        )
    if replace and scale_down:
        raise UsageError("--replace and --scale-down exclude each other", hint="pick one")
    drain = flags.drain_timeout(drain_timeout)
    return DeleteMachine(
        Wanted(machine, node, provider_id),
        Mode.SCALE_DOWN if scale_down else Mode.REPLACE,
        pool,
        drain,
        allow_unverified_provider,
        workload_kubeconfig,
    )


asked_group = flags.group(
    "asked",
    [
        click.argument(
            "machine",
            required=False,
            metavar="[MACHINE]",
            shell_complete=suggest.machine_names,
            callback=poolnames.machine_name,
        ),
        click.option(
            "--node",
            metavar="NODE",
            shell_complete=suggest.node_names,
            help="The instance by its workload cluster Node name",
        ),
        click.option("--provider-id", metavar="ID", help="The instance by its providerID"),
        click.option(
            "--pool",
            metavar="NAME",
            shell_complete=suggest.pool_names,
            callback=poolnames.name,
            help="The MachinePool it must belong to (else inferred)",
        ),
        click.option(
            "--replace",
            is_flag=True,
            help="Delete the Machine; the provider creates a replacement (the default)",
        ),
        click.option(
            "--scale-down",
            is_flag=True,
            help="Mark the Machine cluster.x-k8s.io/delete-machine and lower replicas by one",
        ),
        click.option(
            "--drain-timeout",
            metavar="DURATION",
            help="Set the Machine's node drain timeout first, e.g. 10m (pool Machines have none)",
        ),
        click.option(
            "--allow-unverified-provider",
            is_flag=True,
            help="Go ahead where this tool has not verified what the provider does",
        ),
        flags.workload_kubeconfig,
    ],
    _asked,
)


@click.command("delete-machine", context_settings=CONTEXT_SETTINGS)
@asked_group
@confirming.write_options
@click.option(
    "--wait/--no-wait",
    default=None,
    help="Follow the deletion until the Machine is gone (default: on a terminal)",
)
@click.option(
    "--timeout",
    default="30m",
    show_default=True,
    metavar="DURATION",
    help="How long --wait follows (0: no limit)",
)
@flags.source
@flags.color
@flags.access
@flags.pass_env
def delete_machine_command(
    env: Environment,
    *,
    asked: DeleteMachine,
    dry_run: str,
    yes: bool,
    ignore_owner: bool,
    wait: bool | None,
    timeout: str,
    source: Source,
    color: ColorMode,
    access: AccessOptions,
) -> None:
    """Remove exactly one instance of a MachinePool, safely, or refuse and say why.

    \b
    The instance is a Machine name, --node NODE or --provider-id ID. First comes the plan:
    the verdict for this provider, every safety check, and each write in order. Then, after
    confirmation (or --yes), the writes, each with uid/resourceVersion preconditions.
    \b
    --replace     delete the Machine: Cluster API drains its Node, deletes the infra machine,
                  and the provider deletes the instance and creates a replacement
    --scale-down  annotate the Machine cluster.x-k8s.io/delete-machine, then lower
                  spec.replicas by one through /scale, as cluster-autoscaler does; only where
                  the provider deletes the annotated instance first (Azure VMSS, CAPD)
    \b
    Pools without MachinePool Machines, OCI pools (deleting a Machine leaves the instance
    running) and managed node pools are refused with what to do instead.
    With -f DUMP --dry-run=client, the plan is made from a dump or export instead (no
    connection is made, the PodDisruptionBudgets are not read); -f is refused otherwise.
    \b
    Exit codes: 0 done, 1 error (nothing written, or all taken back), 2 usage, 3 refused
    (nothing was written), 5 left changed or unknown (each object named), 129/130/143 interrupted.
    """
    from dataclasses import replace

    from kubectl_machinepool.app.carrying import DryRun
    from kubectl_machinepool.app.deleting import Carry, carry_out, plan_for, plan_on, preview
    from kubectl_machinepool.app.planning import Dump
    from kubectl_machinepool.kube.client import Kube
    from kubectl_machinepool.render.color import Palette
    from kubectl_machinepool.render.deleteplan import render_plan

    follow_for = parse_duration(timeout, "--timeout")
    painted = env.color(color)
    palette = Palette(painted)
    if confirming.from_dump("delete-machine", source, dry_run):
        dump = Dump.load(source, env.stdin, env.now)
        asked = replace(
            asked,
            namespace=access.scope(None),
            selector=access.selector,
            ignore_owner=ignore_owner,
        )
        plan = plan_on(dump, asked, warn=env.warn)
        env.out(dump.heading)
        env.out(render_plan(plan, palette, width=env.width), nl=False, color=painted)
        preview(plan, confirming.callbacks(env, yes))
        return
    carry = Carry(DryRun(dry_run), env.stdout_tty if wait is None else wait, follow_for)
    ui = confirming.callbacks(env, yes)
    with Kube.connect(access) as kube:
        asked = replace(
            asked,
            request_timeout=access.request_timeout,
            namespace=access.scope(kube.connection.namespace),
            selector=access.selector,
            follow=carry.wait,
            ignore_owner=ignore_owner,
        )
        with before_writes():
            plan = plan_for(kube, asked, warn=env.warn)
            env.out(render_plan(plan, palette, width=env.width), nl=False, color=painted)
        carry_out(kube, plan, asked, carry, ui)
