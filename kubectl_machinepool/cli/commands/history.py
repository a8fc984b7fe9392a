"""`kubectl machinepool rollout history`."""

from __future__ import annotations

import click

from kubectl_machinepool.app.options import Source
from kubectl_machinepool.cli import suggest
from kubectl_machinepool.cli.commands import CONTEXT_SETTINGS, flags, poolnames
from kubectl_machinepool.cli.environment import Environment
from kubectl_machinepool.cli.options import OutputOptions
from kubectl_machinepool.kube.access import AccessOptions


@click.command("history", context_settings=CONTEXT_SETTINGS)
@click.argument("pool", metavar="NAME", callback=poolnames.name, shell_complete=suggest.pool_names)
@click.option(
    "--revision",
    type=click.IntRange(min=1),
    default=None,
    shell_complete=suggest.revisions,
    help="Show this revision's fields in full",
)
@flags.source
@flags.access_named
@flags.output(["table", "json", "yaml"], tables=True)
@flags.pass_env
def history_command(
    env: Environment,
    *,
    pool: str,
    revision: int | None,
    source: Source,
    access: AccessOptions,
    output: OutputOptions,
) -> None:
    """Show the revisions upgrade, scale and rollout restart recorded on a MachinePool.

    \b
    One row per revision: its number, the command that made it (CHANGE-CAUSE), what it
    changed from what to what, when it was planned and by which version of this tool.
    --revision N shows that revision's fields in full, the values rollout undo --to-revision N
    goes back to. The revisions live in the MachinePool's kubectl-machinepool/revisions
    annotation (the last 10), so they move with it (clusterctl move); reading them costs one
    GET of the pool, whatever its size. A pool with none says so and exits 0; an annotation not
    as the tool writes it (hostile, too large, out of order) is no usable history: exit 1 with
    the reason. Works on a dump or export (-f) too.

    \b
    Examples:
      kubectl machinepool rollout history vmss-workers -n capi-prod
      kubectl machinepool rollout history vmss-workers -n capi-prod --revision 3
      kubectl machinepool rollout history vmss-workers -f export/ -o yaml
    """
    from kubectl_machinepool.app import history
    from kubectl_machinepool.render.history import (
        history_document,
        history_table,
        revision_text,
    )
    from kubectl_machinepool.render.structured import write_document

    if source.filenames:
        found = history.from_dump(source, access.namespace, pool, env.stdin)
    else:
        found = history.live(access, pool)
    if found.history.unusable:
        raise found.unusable
    revisions = found.history.revisions
    if revision is not None:
        revisions = (found.revision(revision),)
    if output.format != "table":
        document = history_document(found.namespace, found.name, revisions)
        write_document(document, output.format, env.write)
    elif revision is not None:
        env.out(revision_text(found.name, revisions[0]), nl=False)
    else:
        env.out(history_table(found.name, revisions, output.no_headers), nl=False)
