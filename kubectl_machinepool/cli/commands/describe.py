"""`kubectl machinepool describe`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from kubectl_machinepool.app.options import PoolScope, RuleOptions, Source
from kubectl_machinepool.base.errors import UsageError
from kubectl_machinepool.cli.commands import CONTEXT_SETTINGS, flags, showing
from kubectl_machinepool.cli.environment import Environment
from kubectl_machinepool.cli.options import OutputOptions
from kubectl_machinepool.kube.access import AccessOptions

if TYPE_CHECKING:
    from kubectl_machinepool.app.reading import Loaded


def _show_conditions(
    _ctx: click.Context, _param: click.Parameter, value: str | None
) -> frozenset[str]:
    if not value:
        return frozenset()
    kinds = [k.strip() for k in value.split(",")]
    if any(not k or " " in k for k in kinds):
        raise UsageError(
            f"invalid value {value!r} for --show-conditions", hint="a comma list of kinds, or all"
        )
    return frozenset(kinds)


# The kinds whose conditions the tree lists in every pool's tree, whatever its provider.
_CORE_KINDS = ("Cluster", "MachinePool", "Machine", "Node")


def _check_kinds(kinds: frozenset[str], loaded: Loaded) -> None:
    """--show-conditions names kinds the tree can show: the core ones, every infra kind the
    provider registry knows, and the kinds of the pools' objects as read (a bootstrap config,
    another provider's infra pool)."""
    from kubectl_machinepool.providers.registry import PROVIDERS

    shown = {
        state.kind
        for cluster in loaded.description.clusters
        for pool in cluster.pools
        for state in (pool.bootstrap, pool.infra, *(i.infra_machine for i in pool.instances))
        if state is not None
    }
    infra = {p.kind for p in PROVIDERS} | {p.machine_kind for p in PROVIDERS if p.machine_kind}
    known = {k.lower() for k in ("all", *_CORE_KINDS, *shown, *infra)}
    unknown = sorted(k for k in kinds if k.lower() not in known)
    if unknown:
        listed = ", ".join(["all", *_CORE_KINDS, *sorted(shown)])
        raise UsageError(
            f"invalid value {unknown[0]!r} for --show-conditions: not a kind the tree shows",
            hint=f"choose from {listed} (a comma list, any case), or an infra pool or "
            "machine kind docs/providers.md names",
        )


def _renderers() -> None:
    """What describe goes on with, imported while the reads run (app/reading.py)."""
    from kubectl_machinepool.render import structured, tree  # noqa: F401


@click.command("describe", context_settings=CONTEXT_SETTINGS)
@flags.pools("Describe")
@click.option(
    "--show-all", is_flag=True, help="List healthy instances one by one instead of grouping them"
)
@click.option(
    "--show-conditions",
    metavar="KINDS",
    callback=_show_conditions,
    help="List every condition of these kinds (comma list, e.g. MachinePool,Machine,Node, or all)",
)
@flags.watch
@flags.rules
@flags.access
@flags.source
@flags.output(["tree", "json", "yaml"], tables=True)
@flags.pass_env
def describe_command(
    env: Environment,
    *,
    pools: PoolScope,
    show_all: bool,
    show_conditions: frozenset[str],
    watch: bool,
    rules: RuleOptions,
    access: AccessOptions,
    source: Source,
    output: OutputOptions,
) -> None:
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
    -w shows the tree again whenever a watch of the pools, their infra objects, Machines or
    Nodes reports a change: on a terminal in place, under a line saying what changed; piped,
    a new block after such a line. It reads nothing on a timer; Ctrl-C ends it.

    \b
    Examples:
      # one pool
      kubectl machinepool describe workers-0 -n capi-prod
      # every pool of a Cluster, each instance listed
      kubectl machinepool describe --cluster prod --show-all
      # follow a pool while it scales or upgrades
      kubectl machinepool describe workers-0 -n capi-prod -w
      # a dump, read as at the time it was taken
      kubectl machinepool describe -f dump.yaml --now 2026-11-29T15:00:00Z
    """
    from kubectl_machinepool.app import reading

    color = env.color(output.color)

    def drawn(loaded: reading.Loaded) -> str:
        from kubectl_machinepool.render.color import Palette
        from kubectl_machinepool.render.findings import ignored_line
        from kubectl_machinepool.render.glyphs import ASCII, UNICODE
        from kubectl_machinepool.render.structured import describe_stream, document_text
        from kubectl_machinepool.render.tree import TreeOptions, render_tree

        _check_kinds(show_conditions, loaded)
        _, findings, ignored = reading.judged(loaded, rules)
        if output.format == "tree":
            if not loaded.description.clusters:
                return ""
            opts = TreeOptions(
                now=loaded.description.now,
                palette=Palette(color),
                show_all=show_all,
                show_conditions=frozenset(k.lower() for k in show_conditions),
                glyphs=UNICODE if env.utf8 else ASCII,
                no_headers=output.no_headers,
                findings=tuple(findings),
                width=env.width,
            )
            return render_tree(loaded.description, opts) + ignored_line(ignored)
        # Scripts get a document even when nothing matched.
        document = describe_stream(loaded.description, findings, ignored)
        return document_text(document, output.format)

    if watch:
        flags.live_only(source, "--watch")
        showing.follow_described(env, access, pools, drawn, color=color, report_extras=False)
        return
    loaded = showing.described(env, access, source, pools, report_extras=False, prepare=_renderers)
    _check_kinds(show_conditions, loaded)
    if output.format == "tree":
        env.out(drawn(loaded), nl=False, color=color)
    else:
        from kubectl_machinepool.render.structured import describe_stream, write_document

        _, findings, ignored = reading.judged(loaded, rules)
        document = describe_stream(loaded.description, findings, ignored)
        write_document(document, output.format, env.write)
    if message := reading.check_found(loaded):
        env.err(message)
