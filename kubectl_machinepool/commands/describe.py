"""`kubectl machinepool describe`."""

from __future__ import annotations

import sys
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
    utf8,
)
from kubectl_machinepool.commands.diagnose import run_rules, threshold_options
from kubectl_machinepool.errors import UsageError
from kubectl_machinepool.render.structured import describe_document, to_json, to_yaml
from kubectl_machinepool.render.tree import ASCII, UNICODE, TreeOptions, render_tree

DESCRIBE_FORMATS = ["tree", "json", "yaml"]


def _show_conditions(value: str | None) -> frozenset[str]:
    if not value:
        return frozenset()
    kinds = [k.strip().lower() for k in value.split(",")]
    if any(not k or " " in k for k in kinds):
        raise UsageError(
            f"invalid value {value!r} for --show-conditions", hint="a comma list of kinds, or all"
        )
    return frozenset(kinds)


@click.command("describe", context_settings=CONTEXT_SETTINGS)
@pool_options("Describe")
@click.option(
    "--show-all", is_flag=True, help="List healthy instances one by one instead of grouping them"
)
@click.option(
    "--show-conditions",
    metavar="KINDS",
    help="List every condition of these kinds (comma list, e.g. MachinePool,Machine,Node, or all)",
)
@threshold_options
@access_options
@input_options
@output_options(DESCRIBE_FORMATS)
def describe_command(**params: Any) -> None:
    """Show MachinePools as a tree, from the Cluster down to every Node, with their real health.

    \b
    For each pool a summary comes first: desired, provider-reported and Node-matched replica
    counts, providerIDList against Nodes, versions, autoscaler and replicas-managed-by
    annotations, paused/deleting, failure domains, and whether one instance can be deleted.
    Then the tree: Cluster -> MachinePool -> bootstrap config, infra pool -> each instance
    (Machine -> infra machine -> Node, or providerID -> Node). Instances with problems come
    first; healthy ones fold into one row unless --show-all. CONDITION says which condition
    set a row uses: MachinePools set only Paused in v1beta2, so theirs is the v1beta1 Ready.

    \b
    Nodes come from the workload cluster through the <cluster>-kubeconfig Secret, held in
    memory only; without access (RBAC, unreachable) the rest is shown with a note.

    \b
    Examples:
      # one pool
      kubectl machinepool describe workers-0 -n capi-prod
      # every pool of a Cluster, each instance listed
      kubectl machinepool describe --cluster prod --show-all
      # a dump, read as at the time it was taken
      kubectl machinepool describe -f dump.yaml --now 2026-11-29T15:00:00Z
    """
    access = build_access(params)
    output = build_output(params)
    now = parse_now(params["now"])
    loaded = load_description(params, access, now, report_extras=False)
    description = loaded.description
    findings = run_rules(loaded, params)
    if output.format == "tree" and description.clusters:
        opts = TreeOptions(
            now=now,
            palette=Palette(output.color),
            show_all=params["show_all"],
            show_conditions=_show_conditions(params["show_conditions"]),
            glyphs=UNICODE if utf8(sys.stdout) else ASCII,
            no_headers=output.no_headers,
            findings=tuple(findings),
        )
        echo(render_tree(description, opts), nl=False, color=output.color)
    elif output.format != "tree":
        # Scripts get a document even when nothing matched.
        document = describe_document(description, findings)
        echo(to_json(document) if output.format == "json" else to_yaml(document), nl=False)
    report_missing(description, loaded.selection, loaded.namespace)
