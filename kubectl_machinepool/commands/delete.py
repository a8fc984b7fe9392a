"""`kubectl machinepool delete-machine`."""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

import click

from kubectl_machinepool import suggest
from kubectl_machinepool.color import Palette, use_color
from kubectl_machinepool.commands.flags import CONTEXT_SETTINGS
from kubectl_machinepool.commands.flags import access as access_options
from kubectl_machinepool.commands.flags import color as color_option
from kubectl_machinepool.deleteplan import (
    Access,
    Disruption,
    Mode,
    Plan,
    Request,
    Target,
    Wanted,
    find_target,
    plan_deletion,
    writes_for,
)
from kubectl_machinepool.deletion import Verdict
from kubectl_machinepool.description import Description, Selection, describe
from kubectl_machinepool.errors import (
    ClusterAccessError,
    ExitCode,
    Interrupted,
    MachinePoolError,
    NotFoundError,
    RefusedError,
    UsageError,
)
from kubectl_machinepool.execute import execute, follow
from kubectl_machinepool.fetch import read_description, workload_disruption, workload_kube
from kubectl_machinepool.kube import Kube
from kubectl_machinepool.options import AccessOptions, parse_duration
from kubectl_machinepool.render.deleteplan import render_plan
from kubectl_machinepool.safetext import scrub
from kubectl_machinepool.snapshot import CAPI_GROUP, Snapshot


def echo(text: str, *, err: bool = False, nl: bool = True, color: bool | None = None) -> None:
    click.echo(scrub(text), err=err, nl=nl, color=color)


def warn(message: str) -> None:
    echo(f"warning: {message}", err=True)


def parse_now(_: None) -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def scope_namespace(access: AccessOptions, default: str | None) -> str | None:
    return access.scope(default)


def _wanted(params: dict[str, Any]) -> Wanted:
    given = [v for v in (params["machine"], params["node"], params["provider_id"]) if v]
    if len(given) != 1:
        raise UsageError(
            "name exactly one instance: a Machine name, --node NODE or --provider-id ID",
            hint="kubectl machinepool describe POOL lists them",
        )
    return Wanted(params["machine"], params["node"], params["provider_id"])


def _one_target(targets: list[Target], wanted: Wanted, namespace: str | None) -> Target:
    where = f' in namespace "{namespace}"' if namespace else ""
    if not targets:
        hint = "kubectl machinepool describe lists each pool's instances"
        if wanted.machine:
            hint = "a Machine of a MachineDeployment is deleted with kubectl delete machine"
        raise NotFoundError(f"{wanted.display} is no instance of a MachinePool{where}", hint=hint)
    if len(targets) > 1:
        pools = ", ".join(sorted(f"{t.pool.pool.namespace}/{t.pool.pool.name}" for t in targets))
        raise UsageError(
            f"{wanted.display} names instances of several pools: {pools}",
            hint="pick one with -n NAMESPACE, or --pool NAME within a namespace",
        )
    return targets[0]


def _permissions(
    kube: Kube, target: Target, request: Request, now: datetime
) -> dict[Access, bool | None]:
    answers: dict[Access, bool | None] = {}
    for write in writes_for(target, request, now):
        try:
            answers[write.access] = kube.allowed(write.access.attributes)
        except MachinePoolError:
            answers[write.access] = None  # could not ask: the plan says so
    return answers


def _disruption(
    kube: Kube, target: Target, override: str | None, timeout: float | None
) -> Disruption:
    machine = target.instance.machine
    if target.pool.deletion.verdict is Verdict.NOT_SUPPORTED or machine is None:
        return Disruption(None, "nothing will be drained")
    if not machine.node_name:
        return Disruption(None, "the Machine has no Node")
    cluster = target.cluster
    return workload_disruption(
        kube, cluster.namespace, cluster.name, override, timeout, node=machine.node_name
    )


def _confirmed(assume_yes: bool) -> bool:
    if assume_yes:
        return True
    if not sys.stdin.isatty():
        raise RefusedError(
            "not confirmed, and there is no terminal to ask on: nothing was written",
            hint="review the plan, then run again with --yes",
        )
    try:
        return click.confirm("Go ahead?", default=False, err=True)
    except click.Abort:  # Ctrl-C or end of input at the prompt
        raise Interrupted(ExitCode.INTERRUPTED, "Cancelled: nothing was written.") from None


def _request(params: dict[str, Any]) -> Request:
    """The mode and drain timeout, checked before anything is read or written."""
    if params["replace"] and params["scale_down"]:
        raise UsageError("--replace and --scale-down exclude each other", hint="pick one")
    drain = None
    if params["drain_timeout"]:
        seconds = parse_duration(params["drain_timeout"], "--drain-timeout")
        if seconds is None or seconds < 1:
            raise UsageError(
                f"--drain-timeout {params['drain_timeout']} would not bound the drain",
                hint="give at least 1s (Cluster API counts whole seconds; 0 means no limit)",
            )
        drain = timedelta(seconds=seconds)
    mode = Mode.SCALE_DOWN if params["scale_down"] else Mode.REPLACE
    return Request(mode, drain, params["allow_unverified_provider"])


def _note_on(snapshot: Snapshot, kind: str) -> str | None:
    """The note saying why this very kind could not be read (not one that merely names it)."""
    return next((n for n in snapshot.notes if n.startswith(f"cannot read {kind} objects")), None)


def _unread_for(description: Description, snapshot: Snapshot, wanted: Wanted) -> list[str]:
    """What could not be read that might hold the instance the user named."""
    unread = []
    for cluster in description.clusters:
        for pool in cluster.pools:
            ref = pool.pool.infrastructure_ref
            if pool.infra_unread and ref is not None:
                unread.append(f"{ref.kind} {pool.pool.namespace}/{ref.name}")
        if wanted.node and not cluster.nodes_read:
            unread.append(f"the Nodes of Cluster {cluster.namespace}/{cluster.name}")
    unread += [f"{kind} objects" for group, kind in snapshot.unread if group != CAPI_GROUP]
    return sorted(set(unread))


def _readable(snapshot: Snapshot, target: Target) -> None:
    """Without the pool's infra pool, Machines and infra machines no verdict is honest."""
    pool = target.pool
    ref = pool.pool.infrastructure_ref
    if pool.infra_unread and ref is not None:
        why = _note_on(snapshot, ref.kind) or f"cannot read {ref.kind} objects"
        raise ClusterAccessError(
            f"{why}; without {ref.kind} {ref.name}, whether {target.name} can be deleted "
            "is unknown",
            hint=f"delete-machine needs to get and list {ref.kind} objects in the namespace",
        )
    kinds = [(CAPI_GROUP, "Machine")]
    if pool.infra and pool.pool.machine_kind:
        kinds.append((pool.infra.api_version.rpartition("/")[0], pool.pool.machine_kind))
    for group, kind in kinds:
        if not snapshot.was_read(group, kind):
            raise ClusterAccessError(
                _note_on(snapshot, kind) or f"cannot read {kind} objects",
                hint=f"delete-machine needs to list {kind} objects in the namespace",
            )


def _plan(
    kube: Kube, access: AccessOptions, params: dict[str, Any], wanted: Wanted, request: Request
) -> Plan:
    now = parse_now(None)
    namespace = scope_namespace(access, kube.connection.namespace)
    pool = params["pool"]
    selection = Selection(namespace, (pool,) if pool else (), selector=access.selector)
    snapshot = read_description(
        kube, namespace, selection, params["workload_kubeconfig"], access.request_timeout
    )
    description = describe(snapshot, selection, now)
    if pool and not any(c.pools for c in description.clusters):
        where = f' in namespace "{namespace}"' if namespace else ""
        raise NotFoundError(f'machinepools.cluster.x-k8s.io "{pool}" not found{where}')
    for note in description.notes:
        warn(note)
    if not snapshot.was_read(CAPI_GROUP, "Machine"):
        raise ClusterAccessError(
            _note_on(snapshot, "Machine") or "cannot read Machine objects",
            hint="delete-machine needs to list Machine objects in the namespace",
        )
    targets = find_target(description, snapshot, wanted)
    unread = _unread_for(description, snapshot, wanted)
    if not targets and unread:
        raise ClusterAccessError(
            f"cannot tell whether {wanted.display} is an instance of a MachinePool: "
            f"{', '.join(unread)} could not be read",
            hint="see the warnings above; delete-machine needs to read them",
        )
    target = _one_target(targets, wanted, namespace)
    _readable(snapshot, target)
    permissions = _permissions(kube, target, request, now)
    disruption = _disruption(kube, target, params["workload_kubeconfig"], access.request_timeout)
    return plan_deletion(target, request, now, permissions, disruption)


def _follow(
    kube: Kube,
    plan: Plan,
    params: dict[str, Any],
    access: AccessOptions,
    timeout: float | None,
) -> None:
    """Follow the deletion; stopping (Ctrl-C, a timeout) never stops the deletion itself."""
    cluster = plan.target.cluster
    machine = next(w.target for w in plan.writes if w.target.plural == "machines")
    workload: Kube | None = None
    try:
        echo(
            f"Following {machine.display} until it is gone (Ctrl-C stops following, not the "
            "deletion)...",
            err=True,
        )
        try:
            workload = workload_kube(
                kube,
                cluster.namespace,
                cluster.name,
                params["workload_kubeconfig"],
                access.request_timeout,
            )
        except MachinePoolError as err:
            warn(f"the Node is not followed: {err.message}")
        follow(kube, workload, plan, timeout=timeout, report=echo, warn=warn)
    except KeyboardInterrupt:
        echo(
            f"Stopped following: the deletion of {machine.display} goes on in the cluster.",
            err=True,
        )
        raise
    finally:
        if workload is not None:
            workload.__exit__(None, None, None)


@click.command("delete-machine", context_settings=CONTEXT_SETTINGS)
@click.argument(
    "machine", required=False, metavar="[MACHINE]", shell_complete=suggest.machine_names
)
@click.option(
    "--node",
    metavar="NODE",
    shell_complete=suggest.node_names,
    help="The instance by its workload cluster Node name",
)
@click.option("--provider-id", metavar="ID", help="The instance by its providerID")
@click.option(
    "--pool",
    metavar="NAME",
    shell_complete=suggest.pool_names,
    help="The MachinePool it must belong to (else inferred)",
)
@click.option(
    "--replace",
    is_flag=True,
    help="Delete the Machine; the provider creates a replacement (the default)",
)
@click.option(
    "--scale-down",
    is_flag=True,
    help="Mark the Machine cluster.x-k8s.io/delete-machine and lower replicas by one",
)
@click.option(
    "--drain-timeout",
    metavar="DURATION",
    help="Set the Machine's node drain timeout first, e.g. 10m (pool Machines have none)",
)
@click.option(
    "--allow-unverified-provider",
    is_flag=True,
    help="Go ahead where this tool has not verified what the provider does",
)
@click.option(
    "--dry-run",
    type=click.Choice(["none", "client", "server"]),
    default="none",
    show_default=True,
    help="client: only show the plan; server: send every write with dryRun=All",
)
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation")
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
@click.option(
    "--workload-kubeconfig",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Reach the workload cluster with this kubeconfig, not the <cluster>-kubeconfig Secret",
)
@click.option(
    "-f",
    "--filename",
    "filenames",
    multiple=True,
    type=click.Path(),
    metavar="PATH",
    help="Refused: see below",
)
@color_option
@access_options
def delete_machine_command(**params: Any) -> None:
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
    It acts on a live cluster only: -f is refused.
    \b
    Exit codes: 0 done, 1 error (nothing written, or all taken back), 2 usage, 3 refused
    (nothing was written), 5 left changed or unknown (each object named), 130/143 interrupted.
    """
    if params["filenames"]:
        raise RefusedError(
            "delete-machine changes a live cluster and cannot act on a dump (-f)",
            hint="drop -f; describe -f and diagnose -f read dumps",
        )
    wanted = _wanted(params)
    request = _request(params)
    follow_for = parse_duration(params["timeout"], "--timeout")
    access = params["access"]
    palette = Palette(use_color(params["color"], sys.stdout, os.environ))
    with Kube.connect(access) as kube:
        try:
            plan = _plan(kube, access, params, wanted, request)
        except MachinePoolError as err:
            raise err.restated(f"{err.message}; nothing was written") from err
        echo(render_plan(plan, palette), nl=False)
        if plan.refusals:
            first = plan.refusals[0].message
            more = f" (and {len(plan.refusals) - 1} more above)" if len(plan.refusals) > 1 else ""
            raise RefusedError(f"refused: {first}{more}; nothing was written")
        if params["dry_run"] == "client":
            for write in plan.writes:
                echo(f"{write.target.kubectl_name} {write.done} (dry run)")
            return
        server_dry_run = params["dry_run"] == "server"
        if not server_dry_run and not _confirmed(params["yes"]):
            echo("Cancelled: nothing was written.", err=True)
            return
        outcome = execute(kube, plan, dry_run=server_dry_run, warn=warn)
        final = plan.writes[-1]
        for line in outcome.lines if final.verb != "delete" else outcome.lines[:-1]:
            echo(line)
        wait = params["wait"] if params["wait"] is not None else sys.stdout.isatty()
        if wait and not server_dry_run:
            _follow(kube, plan, params, access, follow_for)
            machine = next(w.target for w in plan.writes if w.target.plural == "machines")
            echo(f"{machine.kubectl_name} deleted")
        elif final.verb == "delete":
            echo(outcome.lines[-1])
        elif not server_dry_run:
            echo("The provider deletes the marked Machine next (--wait follows it).")
