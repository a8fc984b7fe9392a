"""`kubectl machinepool diff-metadata`."""

from __future__ import annotations

import click

from kubectl_machinepool.app.options import PoolScope, Source
from kubectl_machinepool.cli.commands import CONTEXT_SETTINGS, flags, showing
from kubectl_machinepool.cli.environment import Environment
from kubectl_machinepool.cli.options import OutputOptions
from kubectl_machinepool.kube.access import AccessOptions

# The core manager's own flag names (propagation.LABELS_FLAG/ANNOTATIONS_FLAG, which read them
# from its Deployment); spelled here so that --help does not import propagation.
LABELS_FLAG = "--additional-sync-machine-labels"
ANNOTATIONS_FLAG = "--additional-sync-machine-annotations"


def _next_modules() -> None:
    """What diff-metadata goes on with, imported while the reads run (app/reading.py)."""
    from kubectl_machinepool.model import propagation  # noqa: F401
    from kubectl_machinepool.render import propagation as shown  # noqa: F401
    from kubectl_machinepool.render import structured  # noqa: F401


@click.command("diff-metadata", context_settings=CONTEXT_SETTINGS)
@flags.pools("Compare")
@click.option(
    LABELS_FLAG,
    "sync_labels",
    multiple=True,
    metavar="REGEX",
    help="The core manager's extra label regexes (default: read from its Deployment)",
)
@click.option(
    ANNOTATIONS_FLAG,
    "sync_annotations",
    multiple=True,
    metavar="REGEX",
    help="The core manager's extra annotation regexes (default: read from its Deployment)",
)
@flags.access
@flags.source
@flags.output(["text", "json", "yaml"])
@flags.pass_env
def diff_metadata_command(
    env: Environment,
    *,
    pools: PoolScope,
    sync_labels: tuple[str, ...],
    sync_annotations: tuple[str, ...],
    access: AccessOptions,
    source: Source,
    output: OutputOptions,
) -> None:
    """Show where each label and annotation of the pool template did or did not arrive.

    \b
    For every key of spec.template.metadata, on every Machine and Node of the pool: present,
    missing, a different value, or never expected there, with the reason: a pool without
    MachinePool Machines passes nothing to its Nodes, and from Machines only labels in
    node-role.kubernetes.io, node-restriction.kubernetes.io and node.cluster.x-k8s.io
    (annotations: node.cluster.x-k8s.io) reach Nodes, plus what the core manager's
    --additional-sync-machine-labels/-annotations regexes match. Keys Cluster API put on
    Nodes that the template no longer has are listed too. Cluster API's own keys are ignored.

    \b
    Examples:
      kubectl machinepool diff-metadata workers-0 -n capi-prod
      # as if the manager ran with an extra label regex
      kubectl machinepool diff-metadata workers-0 --additional-sync-machine-labels '^example\\.com/'
    """
    loaded = showing.described(
        env, access, source, pools, report_extras=False, prepare=_next_modules
    )
    from kubectl_machinepool.app import reading
    from kubectl_machinepool.base.apiversion import CAPI_GROUP
    from kubectl_machinepool.diagnostics.rules import core_controller
    from kubectl_machinepool.model.propagation import propagation, sync_rules
    from kubectl_machinepool.render.color import Palette
    from kubectl_machinepool.render.glyphs import ASCII, UNICODE
    from kubectl_machinepool.render.propagation import propagation_document, render_propagation
    from kubectl_machinepool.render.structured import write_document

    rules = sync_rules(core_controller(loaded.snapshot), sync_labels, sync_annotations)
    results = [
        propagation(
            pool,
            loaded.snapshot.find(CAPI_GROUP, "MachinePool", pool.pool.namespace, pool.pool.name)
            or {},
            rules,
        )
        for cluster in loaded.description.clusters
        for pool in cluster.pools
    ]
    color = env.color(output.color)
    if output.format == "text":
        if results:
            glyphs = UNICODE if env.utf8 else ASCII
            text = render_propagation(results, Palette(color), glyphs=glyphs, width=env.width)
            env.out(text, nl=False, color=color)
    else:
        document = propagation_document(results)
        write_document(document, output.format, env.write)
    if message := reading.check_found(loaded):
        env.err(message)
