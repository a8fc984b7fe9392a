"""Command line: parse flags, call the core, print, map errors. No MachinePool logic lives here."""

from __future__ import annotations

import importlib
import os
import sys
from typing import NoReturn

import click

from kubectl_machinepool.base.errors import ExitCode, Interrupted, MachinePoolError
from kubectl_machinepool.base.safetext import uncoloured
from kubectl_machinepool.base.spelling import closest, did_you_mean
from kubectl_machinepool.cli.collector import rare_collections
from kubectl_machinepool.cli.commands import CONTEXT_SETTINGS
from kubectl_machinepool.cli.environment import Environment, help_width
from kubectl_machinepool.cli.pflag import KubectlGroup, persistent_options
from kubectl_machinepool.kube.interrupts import exit_code, like_ctrl_c, stopped_by

PROG = "kubectl machinepool"
COMPLETE_VAR = "_KUBECTL_MACHINEPOOL_COMPLETE"

# Subcommand name -> where it lives and the first line of its help; a command's module is
# imported only when it runs (or for its own help and completion), so start-up pays for one
# command, and the top-level help for none (a test keeps these lines equal to the commands').
COMMANDS = {
    "list": (
        "kubectl_machinepool.cli.commands.listing:list_command",
        "List MachinePools with Node-based replica counts.",
    ),
    "describe": (
        "kubectl_machinepool.cli.commands.describe:describe_command",
        "Show MachinePools as a tree, from the Cluster down to every Node, with their real health.",
    ),
    "diagnose": (
        "kubectl_machinepool.cli.commands.diagnose:diagnose_command",
        "Name every known MachinePool problem, with evidence, what to do and upstream references.",
    ),
    "explain": (
        "kubectl_machinepool.cli.commands.diagnose:explain_command",
        "Explain a diagnose rule: what it checks, why it matters, what to do, upstream references.",
    ),
    "diff": (
        "kubectl_machinepool.cli.commands.diff:diff_command",
        "Say what applying manifests will do to each MachinePool before it is applied.",
    ),
    "diff-metadata": (
        "kubectl_machinepool.cli.commands.metadata:diff_metadata_command",
        "Show where each label and annotation of the pool template did or did not arrive.",
    ),
    "events": (
        "kubectl_machinepool.cli.commands.events:events_command",
        "Show the Events of MachinePools and everything they are made of, on one timeline.",
    ),
    "rollout": (
        "kubectl_machinepool.cli.commands.rollout:rollout_group",
        "Follow, pause, resume, restart or undo a MachinePool rollout.",
    ),
    "export": (
        "kubectl_machinepool.cli.commands.export:export_command",
        "Write what describe, diagnose and diff-metadata read, for reading offline later.",
    ),
    "delete-machine": (
        "kubectl_machinepool.cli.commands.delete:delete_machine_command",
        "Remove exactly one instance of a MachinePool, safely, or refuse and say why.",
    ),
    "providers": (
        "kubectl_machinepool.cli.commands.providers:providers_command",
        "Show the installed providers, the MachinePool gate and what each pool kind honours.",
    ),
    "upgrade": (
        "kubectl_machinepool.cli.commands.upgrade:upgrade_command",
        "Move MachinePools to a new Kubernetes version with their image fields, rolled once.",
    ),
    "scale": (
        "kubectl_machinepool.cli.commands.scale:scale_command",
        "Set the size of MachinePools through their /scale subresource, or refuse and say why.",
    ),
    "fix": (
        "kubectl_machinepool.cli.commands.fix:fix_command",
        "Remedy diagnose's findings with this tool's own writes, step by step, or say why not.",
    ),
    "completion": (
        "kubectl_machinepool.cli.commands.completion:completion_command",
        "Print the shell completion script for bash, zsh, fish or PowerShell.",
    ),
}


class LazyGroup(KubectlGroup):
    def list_commands(self, ctx: click.Context) -> list[str]:  # noqa: ARG002
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:  # noqa: ARG002
        if cmd_name not in COMMANDS:
            return None
        module, _, name = COMMANDS[cmd_name][0].partition(":")
        command: click.Command = getattr(importlib.import_module(module), name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        # click's own shortening, without importing the command.
        rows = [
            (name, click.Command(name, help=COMMANDS[name][1]).get_short_help_str(limit))
            for name in names
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _show_version(ctx: click.Context, _param: click.Parameter, asked: bool) -> None:
    """Eager, as click's own --version: the commit is looked up only when asked for."""
    if asked and not ctx.resilient_parsing:
        from kubectl_machinepool.cli.version import version_line

        click.echo(version_line())
        ctx.exit()


@click.group(cls=LazyGroup, params=persistent_options(), context_settings=CONTEXT_SETTINGS)
@click.option(
    "--version",
    is_flag=True,
    is_eager=True,
    expose_value=False,
    callback=_show_version,
    help="Show the version and the commit it was built from, and exit.",
)
def cli(**_persistent: object) -> None:
    """Show the truth about Cluster API MachinePools, and act on them safely.

    \b
    Reads the management cluster (MachinePools and their provider objects) with the
    usual kubectl flags, which go after the subcommand, or before it as kubectl's own:
      kubectl machinepool list -A --context mgmt
      kubectl machinepool -n capi-prod describe machinepool/workers-0
    """


def main(argv: list[str] | None = None) -> NoReturn:
    """Console entry point: the single place where errors become messages and exit codes."""
    if sys.platform == "win32":  # elsewhere colorama has nothing to fix
        import colorama

        colorama.just_fix_windows_console()
    env = Environment.from_process()
    with rare_collections(restore=argv is not None), like_ctrl_c():
        code = _run(argv, env)
    status = code if isinstance(code, int) else ExitCode.OK
    if argv is None:  # the console script: this process ends here, with what env kept
        _end_process(status)
    sys.exit(status)


def _end_process(status: int) -> NoReturn:
    """Exit without freeing what the run read (Environment.keep): the output is flushed here,
    and every file the run wrote is closed already."""
    # A credential plugin a thread left running (Ctrl-C in a fleet) dies with the run, not
    # after it; none ran if the module was never loaded.
    plugins = sys.modules.get("kubectl_machinepool.kube.execplugin")
    if plugins is not None:
        plugins.end_all()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:
            status = ExitCode.BROKEN_PIPE if stream is sys.stdout else status
        except (OSError, ValueError):
            pass
    os._exit(status)


def _run(argv: list[str] | None, env: Environment) -> object:
    try:
        # Shell completion scripts name the executable; help text names the kubectl command.
        prog = "kubectl-machinepool" if COMPLETE_VAR in env.env else PROG
        code = cli.main(
            args=argv,
            prog_name=prog,
            complete_var=COMPLETE_VAR,
            standalone_mode=False,
            obj=env,
            terminal_width=help_width(sys.__stdout__ or env.stdout, env.env),
        )
    except click.exceptions.NoArgsIsHelpError as err:
        err.show()  # the help itself
        code = err.exit_code
    except click.ClickException as err:
        message, hint = _usage(err, sys.argv[1:] if argv is None else argv)
        click.echo(uncoloured(f"error: {message}"), err=True)
        if hint:
            click.echo(uncoloured(f"hint: {hint}"), err=True)
        code = err.exit_code
    except click.Abort as err:
        # click turns Ctrl-C (and SIGTERM, SIGHUP: like_ctrl_c) into Abort; EOF at a prompt
        # is the other cause.
        if isinstance(err.__cause__, KeyboardInterrupt):
            code = exit_code(stopped_by(err.__cause__))
        else:
            click.echo("Aborted.", err=True)
            code = ExitCode.ERROR
    except MachinePoolError as err:
        click.echo(uncoloured(f"error: {err.message}"), err=True)
        if err.hint:
            click.echo(uncoloured(f"hint: {err.hint}"), err=True)
        code = err.exit_code
    except Interrupted as err:
        if err.report:
            click.echo(uncoloured(f"interrupted: {err.report}"), err=True)
        code = err.exit_code
    except KeyboardInterrupt as err:
        code = exit_code(stopped_by(err))
    return code


def _command_path(args: list[str]) -> str:
    """The subcommand args name, for the errors click raises before it has a context (an
    option missing its value): the help to see is the subcommand's, not the root's."""
    words: list[str] = [PROG]
    command: click.Command = cli
    for arg in args:
        if not isinstance(command, click.Group):
            break
        if arg.startswith("-") or arg not in command.list_commands(ctx := click.Context(command)):
            continue
        found = command.get_command(ctx, arg)
        if found is not None:
            words.append(arg)
            command = found
    return " ".join(words)


def _usage(err: click.ClickException, args: list[str]) -> tuple[str, str | None]:
    """click's own errors in this tool's words (kubectl's where it has them): the message,
    and a hint to the closest spelling or to the help."""
    if not isinstance(err, click.UsageError):
        return err.format_message(), None
    ctx = err.ctx
    near: list[str] = []
    if isinstance(err, click.exceptions.NoSuchCommand) and ctx:
        message = f'unknown command "{err.command_name}" for "{ctx.command_path}"'
        if isinstance(ctx.command, click.Group):
            near = closest(err.command_name, ctx.command.list_commands(ctx))
    elif isinstance(err, click.exceptions.NoSuchOption) and err.option_name.startswith("--"):
        message = f"unknown flag: {err.option_name}"
        params = ctx.command.get_params(ctx) if ctx else []
        spellings = [o for p in params for o in (*p.opts, *p.secondary_opts)]
        near = closest(err.option_name, [o for o in spellings if o.startswith("--")])
    elif isinstance(err, click.exceptions.NoSuchOption):
        message = f"unknown shorthand flag: {err.option_name[1:]!r} in {err.option_name}"
    else:
        # click names an IntRange's type "integer range" where a number was not given at all.
        text = err.format_message().rstrip(".").replace("a valid integer range", "an integer")
        message = text[:1].lower() + text[1:]
    helped = f"see '{ctx.command_path if ctx else _command_path(args)} --help'"
    return message, did_you_mean(near) or helped
