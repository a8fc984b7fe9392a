"""Command line: parse flags, call the core, print, map errors. No MachinePool logic lives here."""

from __future__ import annotations

import importlib
import sys
from typing import NoReturn

import click

from kubectl_machinepool import __version__
from kubectl_machinepool.commands.flags import CONTEXT_SETTINGS
from kubectl_machinepool.environment import Environment
from kubectl_machinepool.errors import ExitCode, Interrupted, MachinePoolError
from kubectl_machinepool.safetext import scrub

PROG = "kubectl machinepool"
COMPLETE_VAR = "_KUBECTL_MACHINEPOOL_COMPLETE"

# Subcommand name -> where it lives; a command's module is imported only when it runs (or for
# help and completion of that command), so start-up pays for one command, not all.
COMMANDS = {
    "list": "kubectl_machinepool.commands.listing:list_command",
    "describe": "kubectl_machinepool.commands.describe:describe_command",
    "diagnose": "kubectl_machinepool.commands.diagnose:diagnose_command",
    "explain": "kubectl_machinepool.commands.diagnose:explain_command",
    "diff-metadata": "kubectl_machinepool.commands.metadata:diff_metadata_command",
    "delete-machine": "kubectl_machinepool.commands.delete:delete_machine_command",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:  # noqa: ARG002
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:  # noqa: ARG002
        where = COMMANDS.get(cmd_name)
        if where is None:
            return None
        module, _, name = where.partition(":")
        command: click.Command = getattr(importlib.import_module(module), name)
        return command


@click.group(cls=LazyGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(
    __version__, "--version", prog_name="kubectl-machinepool", message="%(prog)s %(version)s"
)
def cli() -> None:
    """Show the truth about Cluster API MachinePools, and act on them safely.

    \b
    Reads the management cluster (MachinePools and their provider objects) with the
    usual kubectl flags, which go after the subcommand:
      kubectl machinepool list -A --context mgmt
    """


def main(argv: list[str] | None = None) -> NoReturn:
    """Console entry point: the single place where errors become messages and exit codes."""
    if sys.platform == "win32":  # elsewhere colorama has nothing to fix
        import colorama

        colorama.just_fix_windows_console()
    env = Environment.from_process()
    try:
        # Shell completion scripts name the executable; help text names the kubectl command.
        prog = "kubectl-machinepool" if COMPLETE_VAR in env.env else PROG
        code = cli.main(
            args=argv, prog_name=prog, complete_var=COMPLETE_VAR, standalone_mode=False, obj=env
        )
    except click.ClickException as err:
        err.show()
        code = err.exit_code
    except click.Abort as err:
        # click turns Ctrl-C into Abort; EOF at a prompt is the other cause.
        if isinstance(err.__cause__, KeyboardInterrupt):
            code = ExitCode.INTERRUPTED
        else:
            click.echo("Aborted.", err=True)
            code = ExitCode.ERROR
    except MachinePoolError as err:
        click.echo(scrub(f"error: {err.message}"), err=True)
        if err.hint:
            click.echo(scrub(f"hint: {err.hint}"), err=True)
        code = err.exit_code
    except Interrupted as err:
        if err.report:
            click.echo(scrub(f"interrupted: {err.report}"), err=True)
        code = err.exit_code
    except KeyboardInterrupt:
        code = ExitCode.INTERRUPTED
    sys.exit(code if isinstance(code, int) else ExitCode.OK)
