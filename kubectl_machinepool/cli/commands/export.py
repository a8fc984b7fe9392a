"""`kubectl machinepool export`."""

from __future__ import annotations

import re

import click

from kubectl_machinepool.app.options import PoolScope
from kubectl_machinepool.base.errors import UsageError
from kubectl_machinepool.cli.commands import CONTEXT_SETTINGS, flags
from kubectl_machinepool.cli.environment import Environment
from kubectl_machinepool.kube.access import AccessOptions


def _patterns(
    _ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]
) -> tuple[re.Pattern[str], ...]:
    compiled = []
    for value in values:
        try:
            compiled.append(re.compile(value))
        except re.error as err:
            raise UsageError(
                f"invalid --redact pattern {value!r}: {err}", hint="a regular expression"
            ) from err
    return tuple(compiled)


@click.command("export", context_settings=CONTEXT_SETTINGS)
@flags.pools("Export")
@click.option(
    "-o",
    "--output",
    "path",
    required=True,
    metavar="DIR|FILE.tar.gz",
    help="Write the export to this new (or empty) directory, or this new .tar.gz file",
)
@click.option(
    "--redact",
    multiple=True,
    metavar="REGEX",
    callback=_patterns,
    help="Replace what this matches in names and label and annotation values, everywhere",
)
@flags.access
@flags.pass_env
def export_command(
    env: Environment,
    *,
    pools: PoolScope,
    path: str,
    redact: tuple[re.Pattern[str], ...],
    access: AccessOptions,
) -> None:
    """Write what describe, diagnose and diff-metadata read, for reading offline later.

    \b
    The export holds the Cluster API objects in scope (Clusters, MachinePools, Machines,
    infra pools and machines, bootstrap configs, control planes, MachineHealthChecks,
    Events), the core manager's Deployment, Secret names, and each workload cluster's Nodes
    and Node Events. Of each object it keeps only the fields these commands read (a bootstrap
    token only its id), so no credential and no field unknown to it leaves the cluster.
    manifest.yaml says when it was captured, the Cluster API and plugin versions, and what
    could not be read and why. Read it with -f DIR or -f FILE.tar.gz: ages are read as at
    the capture unless --now says otherwise.

    \b
    --redact REGEX (repeatable) replaces each text it matches in an object's name or
    namespace, or in a label or annotation value, by the same salted token wherever the
    text appears, so that references still join.

    \b
    Examples:
      # one pool, for a support ticket
      kubectl machinepool export workers-0 -n capi-prod -o workers-0.tar.gz
      # every pool, names of customers hidden
      kubectl machinepool export -A -o fleet/ --redact 'acme-[a-z]+'
      # read it back
      kubectl machinepool diagnose -A -f workers-0.tar.gz
    """
    from kubectl_machinepool.app import exporting
    from kubectl_machinepool.base.humanize import byte_size

    progress = env.progress if env.stderr_tty else None
    exported = exporting.export_pools(
        access,
        pools,
        path,
        patterns=redact,
        clock=env.now,
        progress=progress or (lambda _: None),
    )
    if progress:
        progress("")
    for note in exported.notes:
        env.warn(note)
    if exported.nothing:
        env.err(exported.nothing)
    env.out(
        f"exported {exported.pools} MachinePool(s), {exported.objects} objects and "
        f"{exported.nodes} Nodes of {exported.clusters} workload cluster(s) to {path} "
        f"({byte_size(exported.size)})"
    )
