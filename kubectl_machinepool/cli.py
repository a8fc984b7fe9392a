"""Command line: parse flags, call the core, print, map errors. No MachinePool logic lives here."""

from __future__ import annotations

import os
import sys
from typing import NoReturn

import click
import colorama

from kubectl_machinepool import __version__
from kubectl_machinepool.commands.common import CONTEXT_SETTINGS
from kubectl_machinepool.commands.delete import delete_machine_command
from kubectl_machinepool.commands.describe import describe_command
from kubectl_machinepool.commands.diagnose import diagnose_command, explain_command
from kubectl_machinepool.commands.listing import list_command
from kubectl_machinepool.commands.metadata import diff_metadata_command
from kubectl_machinepool.errors import ExitCode, Interrupted, MachinePoolError
from kubectl_machinepool.safetext import scrub

PROG = "kubectl machinepool"
COMPLETE_VAR = "_KUBECTL_MACHINEPOOL_COMPLETE"


@click.group(context_settings=CONTEXT_SETTINGS)
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


for _command in (
    list_command,
    describe_command,
    diagnose_command,
    explain_command,
    diff_metadata_command,
    delete_machine_command,
):
    cli.add_command(_command)


def main(argv: list[str] | None = None) -> NoReturn:
    """Console entry point: the single place where errors become messages and exit codes."""
    colorama.just_fix_windows_console()
    try:
        # Shell completion scripts name the executable; help text names the kubectl command.
        prog = "kubectl-machinepool" if COMPLETE_VAR in os.environ else PROG
        code = cli.main(args=argv, prog_name=prog, complete_var=COMPLETE_VAR, standalone_mode=False)
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
