"""`kubectl machinepool rollout`: status here, pause and resume in pausing.py, restart in
restart.py."""

from __future__ import annotations

import importlib
from datetime import timedelta
from typing import ClassVar

import click

from kubectl_machinepool.app.options import PoolScope, RuleOptions, Source
from kubectl_machinepool.base.durations import parse_duration
from kubectl_machinepool.base.errors import UsageError
from kubectl_machinepool.cli.commands import CONTEXT_SETTINGS, flags, rollingout
from kubectl_machinepool.cli.commands.rollingout import Shown, fail
from kubectl_machinepool.cli.environment import Environment
from kubectl_machinepool.cli.options import OutputOptions
from kubectl_machinepool.cli.pflag import KubectlGroup, persistent_options
from kubectl_machinepool.kube.access import AccessOptions


class _Rollout(KubectlGroup):
    """status here; pause, resume and restart loaded from their modules when asked for, as
    main.py loads every command."""

    LAZY: ClassVar[dict[str, str]] = {
        "pause": "kubectl_machinepool.cli.commands.pausing:pause_command",
        "resume": "kubectl_machinepool.cli.commands.pausing:resume_command",
        "restart": "kubectl_machinepool.cli.commands.restart:restart_command",
        "history": "kubectl_machinepool.cli.commands.history:history_command",
        "undo": "kubectl_machinepool.cli.commands.undo:undo_command",
    }

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *self.LAZY])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.LAZY:
            return super().get_command(ctx, cmd_name)
        module, _, name = self.LAZY[cmd_name].partition(":")
        command: click.Command = getattr(importlib.import_module(module), name)
        return command


@click.group(
    "rollout", cls=_Rollout, params=persistent_options(), context_settings=CONTEXT_SETTINGS
)
def rollout_group(**_persistent: object) -> None:
    """Follow, pause, resume, restart or undo a MachinePool rollout.

    \b
    status follows it until every instance runs what the pool asks for; pause and resume stop
    and release it; restart replaces every instance; history lists the revisions upgrade,
    scale and restart recorded on the pool, and undo goes back to one.

    \b
    Examples:
      kubectl machinepool rollout status workers-0 -n capi-prod
      kubectl machinepool rollout pause workers-0 -n capi-prod
      kubectl machinepool rollout restart workers-0 -n capi-prod
    """


@rollout_group.command("status", context_settings=CONTEXT_SETTINGS)
@flags.pools("Follow")
@click.option(
    "--watch/--no-watch",
    "-w",
    default=True,
    show_default=True,
    help="Wait until the rollout ends; -w=false (or --no-watch) reports once",
)
@rollingout.follow_options
@flags.rules
@flags.access
@flags.source
@flags.output(["text", "json", "yaml"])
@flags.pass_env
def status_command(
    env: Environment,
    *,
    pools: PoolScope,
    watch: bool,
    timeout: str,
    stuck_after: str,
    rules: RuleOptions,
    access: AccessOptions,
    source: Source,
    output: OutputOptions,
) -> None:
    """Show where each pool's rollout stands, and wait until it is done.

    \b
    Per pool: the target (the Kubernetes version the provider rolls to, the infra pool's
    version and image fields, the bootstrap config and its generation, the pool's generation
    against observedGeneration), then every instance up to date, old or unknown, with the
    evidence: its Node's kubelet version, the provider's per-instance model flag where it has
    one (CAPZ latestModelApplied), the Machine's version when there is no Node. Upstream's
    own counters and observedGeneration say nothing about this (cluster-api#10059).

    \b
    As kubectl rollout status: waits until every pool is rolled out (exit 0), or gives up
    at --timeout (exit 1). A rollout in which nothing moved for --stuck-after (no instance
    created, deleted or turned Ready, no template write) is stuck: exit 1, with the findings
    that say why. -w=false reports once: exit 0, or 1 when stuck. Waiting reads again only
    when a watch of the pools, Machines, infra objects or Nodes says something changed.

    \b
    Examples:
      # wait for a version change to reach every instance
      kubectl machinepool rollout status workers-0 -n capi-prod --timeout 30m
      # every pool of a Cluster, once
      kubectl machinepool rollout status --cluster prod -w=false
      # a dump, as at the time it was taken
      kubectl machinepool rollout status -f dump.yaml --now 2026-11-29T15:00:00Z
    """
    from kubectl_machinepool.app import rolloutstatus
    from kubectl_machinepool.render import rollout as render
    from kubectl_machinepool.render.structured import write_document

    limit = parse_duration(timeout, "--timeout")
    stuck_limit = timedelta(seconds=parse_duration(stuck_after, "--stuck-after") or 0)
    watch = watch and not source.filenames  # a dump does not change: reported once
    scoped = pools.names or pools.cluster or access.all_namespaces or access.selector
    if not scoped and not source.filenames:
        raise UsageError(
            "name at least one MachinePool, or use --cluster, -l or -A",
            hint="kubectl machinepool rollout status NAME -n NAMESPACE",
        )
    show = Shown(env, text=output.format == "text")

    if watch:
        end, report = rolloutstatus.follow(
            access,
            pools,
            rules,
            stuck_after=stuck_limit,
            timeout=limit,
            show=show,
            warn=env.warn,
            wall=env.now,
        )
    else:
        now = source.now or env.now()
        end, report = rolloutstatus.once(
            access, source, pools, rules, stuck_after=stuck_limit, now=now, stdin=env.stdin
        )
        show(report)
    if output.format != "text":
        write_document(render.document(report, end.value), output.format, env.write)
    fail(report, end)
