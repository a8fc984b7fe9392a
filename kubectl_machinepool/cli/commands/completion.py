"""`kubectl machinepool completion SHELL`: the script that makes TAB complete
`kubectl-machinepool`.

krew installs one executable, so the script has to come from the plugin itself. It is made by
the same click that will answer each TAB, so the two always speak one protocol; completions/
holds the same scripts for packagers, and a test keeps them equal to what this prints.
"""

from __future__ import annotations

import click
from click.shell_completion import (
    BashComplete,
    FishComplete,
    PowerShellComplete,
    ShellComplete,
    ZshComplete,
)

from kubectl_machinepool.cli.commands import CONTEXT_SETTINGS, flags
from kubectl_machinepool.cli.environment import Environment

SCRIPTS: dict[str, type[ShellComplete]] = {
    "bash": BashComplete,
    "zsh": ZshComplete,
    "fish": FishComplete,
    "powershell": PowerShellComplete,
}


@click.command("completion", context_settings=CONTEXT_SETTINGS)
@click.argument("shell", type=click.Choice(list(SCRIPTS)), metavar="SHELL")
@flags.pass_env
def completion_command(env: Environment, shell: str) -> None:
    """Print the shell completion script for bash, zsh, fish or PowerShell.

    \b
    SHELL is one of bash, zsh, fish, powershell. The script completes kubectl-machinepool run
    directly; `kubectl machinepool <TAB>` goes through kubectl_complete-machinepool instead.

    \b
    Examples:
      # bash (4.4+), in ~/.bashrc
      source <(kubectl machinepool completion bash)
      # zsh, in ~/.zshrc after compinit
      source <(kubectl machinepool completion zsh)
      # fish
      kubectl machinepool completion fish > ~/.config/fish/completions/kubectl-machinepool.fish
      # PowerShell, in $PROFILE
      kubectl machinepool completion powershell | Out-String | Invoke-Expression
    """
    from kubectl_machinepool.cli.main import COMPLETE_VAR

    root = click.get_current_context().find_root().command
    maker = SCRIPTS[shell](root, {}, "kubectl-machinepool", COMPLETE_VAR)
    # The template filled in, not maker.source(): bash's source() runs the local bash to check
    # its version, which says nothing about the shell the script is written for.
    env.out(maker.source_template % maker.source_vars(), nl=False)
