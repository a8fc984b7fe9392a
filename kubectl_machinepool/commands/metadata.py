"""`kubectl machinepool diff-metadata`."""

from __future__ import annotations

from typing import Any

import click

from kubectl_machinepool.color import Palette
from kubectl_machinepool.commands.common import (
    CONTEXT_SETTINGS,
    access_options,
    build_access,
    build_output,
    echo,
    input_options,
    load_description,
    output_options,
    parse_now,
    pool_options,
    report_missing,
)
from kubectl_machinepool.diagnostics import core_controller
from kubectl_machinepool.propagation import ANNOTATIONS_FLAG, LABELS_FLAG, propagation, sync_rules
from kubectl_machinepool.render.propagation import propagation_document, render_propagation
from kubectl_machinepool.render.structured import to_json, to_yaml
from kubectl_machinepool.snapshot import CAPI_GROUP


@click.command("diff-metadata", context_settings=CONTEXT_SETTINGS)
@pool_options("Compare")
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
@access_options
@input_options
@output_options(["text", "json", "yaml"])
def diff_metadata_command(**params: Any) -> None:
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
    access = build_access(params)
    output = build_output(params)
    loaded = load_description(params, access, parse_now(params["now"]), report_extras=False)
    rules = sync_rules(
        core_controller(loaded.snapshot), params["sync_labels"], params["sync_annotations"]
    )
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
    if output.format == "text":
        if results:
            echo(render_propagation(results, Palette(output.color)), nl=False, color=output.color)
    else:
        document = propagation_document(results)
        echo(to_json(document) if output.format == "json" else to_yaml(document), nl=False)
    report_missing(loaded.description, loaded.selection, loaded.namespace)
