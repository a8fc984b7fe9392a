"""`kubectl machinepool providers`."""

from __future__ import annotations

import click

from kubectl_machinepool.cli.commands import CONTEXT_SETTINGS, flags
from kubectl_machinepool.cli.environment import Environment
from kubectl_machinepool.cli.options import OutputOptions
from kubectl_machinepool.kube.access import AccessOptions


@click.command("providers", context_settings=CONTEXT_SETTINGS)
@click.option(
    "--all-kinds",
    is_flag=True,
    help="One row for every infra pool kind this tool knows, not only the kinds in use",
)
@flags.access
@flags.output(["text", "json", "yaml"], tables=True)
@flags.pass_env
def providers_command(
    env: Environment, *, all_kinds: bool, access: AccessOptions, output: OutputOptions
) -> None:
    """Show the installed providers, the MachinePool gate and what each pool kind honours.

    \b
    The providers are clusterctl's Provider objects (every namespace); on a cluster clusterctl
    did not install, the controller Deployments labelled cluster.x-k8s.io/provider, versioned
    by their image tags. The MachinePool feature gate is read from the core manager's
    --feature-gates, else its release's default (on since v1.7.0).

    \b
    Then, for each infra pool kind the MachinePools in scope use (-n, -A, -l as for list):
    whether its instances can be described one by one (MachinePool Machines), deleted one at
    a time, restarted, upgraded with their image fields, scaled from zero by the autoscaler,
    and scaled in by the autoscaler on the node it chose; each "no" with why and where
    upstream says so, and what a pause does not stop. Nothing is written.

    \b
    Examples:
      kubectl machinepool providers -A
      kubectl machinepool providers --all-kinds -o yaml
    """
    from kubectl_machinepool.app.inventory import read
    from kubectl_machinepool.render.providers import providers_document, providers_text
    from kubectl_machinepool.render.structured import document_text

    inventory = read(access, all_kinds=all_kinds)
    for note in inventory.notes:
        env.warn(note)
    if output.format == "text":
        text = providers_text(inventory, env.width, no_headers=output.no_headers)
        env.out(text, nl=False)
    else:
        env.out(document_text(providers_document(inventory), output.format), nl=False)
