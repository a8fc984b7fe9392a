"""`kubectl machinepool upgrade`."""

from __future__ import annotations

import click

from kubectl_machinepool.app.options import Source
from kubectl_machinepool.base.errors import UsageError
from kubectl_machinepool.base.kubeversion import version as parse_version
from kubectl_machinepool.cli import suggest
from kubectl_machinepool.cli.commands import (
    CONTEXT_SETTINGS,
    confirming,
    flags,
    poolnames,
    rollingout,
)
from kubectl_machinepool.cli.environment import Environment
from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.render.color import ColorMode


def _version(value: str) -> str:
    """A release read whole (base/kubeversion.py), written with its v as Cluster API's webhook
    would default it."""
    found = parse_version(value)
    if found is None or not found.plain:
        raise UsageError(
            f"--version {value!r} is not a Kubernetes release", hint="e.g. --version v1.34.1"
        )
    return "v" + value.removeprefix("v")


@click.command("upgrade", context_settings=CONTEXT_SETTINGS)
@poolnames.argument(required=True)
@click.option(
    "--version",
    "version",
    required=True,
    metavar="VERSION",
    shell_complete=suggest.versions,
    help="The Kubernetes release to upgrade to, e.g. v1.34.1",
)
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="PATH=VALUE",
    shell_complete=suggest.set_paths,
    help="A version or image field of the infra pool, as the plan lists them, and its new value "
    "(VALUE empty clears it where the provider derives it); each path once",
)
@click.option(
    "--force",
    is_flag=True,
    help="Go ahead although a pool is paused, deleting, or rolling (or not known to be done)",
)
@confirming.write_options
@rollingout.write_follow_options
@flags.source
@flags.color
@flags.access_named
@flags.pass_env
def upgrade_command(
    env: Environment,
    *,
    names: tuple[str, ...],
    version: str,
    sets: tuple[str, ...],
    force: bool,
    dry_run: str,
    yes: bool,
    ignore_owner: bool,
    wait: bool,
    timeout: str,
    stuck_after: str,
    source: Source,
    color: ColorMode,
    access: AccessOptions,
) -> None:
    """Move MachinePools to a new Kubernetes version with their image fields, rolled once.

    \b
    The infra pool's version and image fields change with the MachinePool's version, in one
    step the provider rolls once, or the command refuses and says why.

    \b
    Changing the MachinePool's version and then the infra pool's image makes the provider roll
    twice, or roll half the pool to a mismatched pair (cluster-api#7248, CAPZ#5546). upgrade
    pauses the infra pool (cluster.x-k8s.io/paused, unless it already is), writes the version
    and every field, and unpauses: the provider reconciles once, against both.
    \b
    The plan comes first: every field the provider registry lists for the infra pool kind, its
    value and the one it gets (derived from the version where the provider's own rule allows,
    else given with --set PATH=VALUE, else refused), then the checks: the skew against the
    control plane, the provider's rule on skipping minors, a topology-owned pool (its version
    is the Cluster's spec.topology.version), a pool or Cluster paused or deleting, or a rollout
    not done (--force goes ahead). Then, after confirmation (or --yes), the writes, each with
    uid/resourceVersion preconditions, undone newest first if one fails; then the rollout is
    followed as rollout status follows it. With -f DUMP --dry-run=client, the plan is made from
    a dump or export instead, and no connection is made.
    \b
    Exit codes: 0 done (or nothing to do), 1 stuck, timed out or an error (nothing written,
    or all taken back), 2 usage, 3 refused (nothing was written), 5 left changed or unknown
    (each object named), 129/130/143 interrupted.
    \b
    Examples:
      kubectl machinepool upgrade vmss-workers -n capi-prod --version v1.34.1
      kubectl machinepool upgrade asg-workers -n capi-prod --version v1.34.1 \\
          --set spec.awsLaunchTemplate.ami.id=ami-0123456789abcdef0
      kubectl machinepool upgrade eks-default -n capi-prod --version v1.34.1 --dry-run=server
      kubectl machinepool upgrade vmss-workers --version v1.34.1 -f export/ --dry-run=client
    """
    from kubectl_machinepool.app import upgrading
    from kubectl_machinepool.plans.upgrade import UpgradeRequest
    from kubectl_machinepool.plans.upgradesets import parse_sets
    from kubectl_machinepool.render.upgradeplan import render_plan

    request = UpgradeRequest(_version(version), parse_sets(sets), force)
    rollingout.write_and_follow(
        env,
        access,
        "upgrade",
        rollingout.WriteFlags(source, dry_run, yes, wait, timeout, stuck_after, color),
        names=names,
        plan=lambda ground, ns, ui: upgrading.plans_for(
            ground,
            upgrading.Upgrade(names, ns, request, follow=wait, ignore_owner=ignore_owner),
            ui=ui,
        ),
        render=render_plan,
        nothing=f"{', '.join(names)} already at {request.version}",
    )
