"""`kubectl machinepool diff`."""

from __future__ import annotations

import click

from kubectl_machinepool.cli.commands import CONTEXT_SETTINGS, flags
from kubectl_machinepool.cli.environment import Environment
from kubectl_machinepool.cli.options import OutputOptions
from kubectl_machinepool.kube.access import AccessOptions


@click.command("diff", context_settings=CONTEXT_SETTINGS)
@click.option(
    "-f",
    "--filename",
    "filenames",
    multiple=True,
    required=True,
    type=click.Path(),
    metavar="PATH",
    help="The manifests to compare: a file, a directory of them or - (repeatable)",
)
@click.option(
    "--against",
    type=click.Path(),
    metavar="EXPORT",
    help="Compare with an export (kubectl machinepool export) or a dump, not the cluster",
)
@click.option(
    "--server-side/--no-server-side",
    default=True,
    show_default=True,
    help="Compare by a server-side dry-run apply (defaulting and webhooks count); "
    "--server-side=false compares client-side",
)
@click.option(
    "--exit-code",
    is_flag=True,
    help="Exit 0 no change, 1 changes that do not roll, 2 changes that roll (or may), 3 refused",
)
@flags.workload_kubeconfig
@flags.access_named
@flags.output(["text", "json", "yaml"])
@flags.pass_env
def diff_command(
    env: Environment,
    *,
    filenames: tuple[str, ...],
    against: str | None,
    server_side: bool,
    exit_code: bool,
    workload_kubeconfig: str | None,
    access: AccessOptions,
    output: OutputOptions,
) -> int:
    """Say what applying manifests will do to each MachinePool before it is applied.

    \b
    For every MachinePool, infra pool and bootstrap config in the manifests: the fields that
    change (in kubectl diff's order), compared with the live object by a server-side dry-run
    apply (no permission to patch, or a conflict with another field manager: client-side, and
    said), and per pool the consequence from the provider's known behaviour: rolls every
    instance, rolls none, changes only new instances, scales, starts the managed service's
    upgrade, refused (the server's message) or unknown effect, with the reason and upstream
    reference. Where it rolls: the provider's strategy, the instances affected, the workload
    cluster's PodDisruptionBudgets that allow no disruption now, the last recorded rollout;
    and who applies the pool from outside. Nothing is written.
    \b
    Exit codes: 0 (with --exit-code: no change), 1 an error (with --exit-code also: changes
    that do not roll), 2 usage (with --exit-code also: changes that roll or may), 3 with
    --exit-code: refused by the API server or a webhook.
    \b
    Examples:
      kubectl machinepool diff -f workers.yaml -n capi-prod
      # a CI gate on a pull request, without cluster access
      kubectl machinepool diff -f manifests/ --against export.tar.gz --exit-code
    """
    from kubectl_machinepool.app.diffing import DiffAsked, diff
    from kubectl_machinepool.render.color import Palette
    from kubectl_machinepool.render.diff import diff_document, render_diff
    from kubectl_machinepool.render.structured import write_document

    asked = DiffAsked(filenames, against, server_side, workload_kubeconfig)
    diffed = diff(access, asked, env.stdin)
    for note in diffed.notes:
        env.warn(note)
    if output.format == "text":
        color = env.color(output.color)
        text = render_diff(diffed.result, diffed.skipped, Palette(color), width=env.width)
        env.out(text, nl=False, color=color)
    else:
        write_document(diff_document(diffed.result, diffed.skipped), output.format, env.write)
    return diffed.result.exit_code if exit_code else 0
