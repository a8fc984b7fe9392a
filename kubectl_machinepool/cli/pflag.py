"""The command line as kubectl (pflag) reads it, made into what click reads.

pflag takes a value after `=` on a short flag (`-o=json`, `-n=prod`) and on a boolean flag
(`-A=true`, `--watch=0`); click would read `=json` as the value and `-A=true` as the flags
`-A -= ...`. And kubectl's persistent flags may come before the subcommand
(`kubectl machinepool -n prod list`): given there, they reach the subcommand as if written first
among its own, so the subcommand's own spelling wins, as kubectl's does.
"""

from __future__ import annotations

from typing import Any

import click
from click.core import ParameterSource

from kubectl_machinepool.base.errors import UsageError

# strconv.ParseBool's spellings, which pflag's booleans take.
_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")
# kubectl's persistent flags that this tool's commands take (flags.access).
PERSISTENT = ("kubeconfig", "context", "namespace", "request_timeout")


def persistent_options() -> list[click.Parameter]:
    """New objects of flags.access's own options for these, for a group to parse: the help,
    checks and completion of the spelling before the subcommand are the ones after it."""
    from kubectl_machinepool.cli.commands import flags

    def probe(**_: Any) -> None:
        return None

    declared: list[click.Parameter] = flags.access(probe).__click_params__  # type: ignore[attr-defined]
    # click keeps decorators' options last-applied first.
    return [p for p in reversed(declared) if p.name in PERSISTENT]


class KubectlGroup(click.Group):
    """A group that reads its own flags, and hands its subcommand its flags, as pflag spells
    them, the persistent ones given before the subcommand first."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, spelled(self, args, resilient=ctx.resilient_parsing))

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        if command is None or isinstance(command, click.Group):
            return name, command, rest  # a group spells its own (parse_args above)
        own = spelled(command, rest, resilient=ctx.resilient_parsing)
        return name, command, [*given_before(ctx, command), *own]


def given_before(ctx: click.Context, command: click.Command) -> list[str]:
    """The persistent flags typed before the subcommand that it takes, the innermost group's
    where several set one; flags it does not take are ignored, as kubectl ignores them."""
    values: dict[str, Any] = {}
    level: click.Context | None = ctx
    while level is not None:
        for name in PERSISTENT:
            given = level.get_parameter_source(name) is ParameterSource.COMMANDLINE
            if given and name not in values and level.params.get(name) is not None:
                values[name] = level.params[name]
        level = level.parent
    taken = {p.name: p for p in command.params if isinstance(p, click.Option)}
    return [f"{_long(taken[name])}={value}" for name, value in values.items() if name in taken]


def _long(option: click.Option) -> str:
    return next((o for o in option.opts if o.startswith("--")), option.opts[0])


def spelled(command: click.Command, args: list[str], *, resilient: bool) -> list[str]:
    """args with pflag's spellings made click's: `-o=json` -> `-o json`; a boolean's `=true`
    -> the flag, `=false` -> its off switch, or none (and the flag given earlier taken back).
    A group's words end at its subcommand's name. Completion (resilient) never fails here."""
    options = {
        spelling: p
        for p in command.params
        if isinstance(p, click.Option)
        for spelling in (*p.opts, *p.secondary_opts)
    }
    out: list[str | None] = []
    on_at: dict[str | None, list[int]] = {}  # where each boolean was turned on so far
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--" or (isinstance(command, click.Group) and not _is_flag(word)):
            out.extend(args[i - 1 :])
            break
        option = options.get(_name(word)) if _is_flag(word) else None
        if option is not None and option.is_bool_flag:
            words, off = _boolean(option, word, resilient)
            for at in on_at.pop(option.name, []) if off else []:
                out[at] = None
            if words and words[0] in option.opts:
                on_at.setdefault(option.name, []).append(len(out))
            out.extend(words)
        elif option is not None and not (option.is_flag or option.count):
            name, equals, value = _parts(word)
            if equals and not name.startswith("--"):
                out.extend([name, value])
            elif word == name:  # its value is the next word, whatever it looks like
                out.extend(args[i - 1 : i + option.nargs])
                i += option.nargs
            else:
                out.append(word)
        else:
            out.append(word)
    return [w for w in out if w is not None]


def _is_flag(word: str) -> bool:
    return word.startswith("-") and word != "-"


def _name(word: str) -> str:
    return word.partition("=")[0] if word.startswith("--") else word[:2]


def _parts(word: str) -> tuple[str, str, str]:
    """(flag, "=" or "", value): a long flag's value after `=`, a short flag's after `-x=`."""
    if word.startswith("--"):
        return word.partition("=")
    equals = "=" if word[2:3] == "=" else ""
    return word[:2], equals, word[3:] if equals else word[2:]


def _boolean(option: click.Option, word: str, resilient: bool) -> tuple[list[str], bool]:
    """The words click reads for this boolean as written, and whether it turns off one given
    earlier (click has no word for that when the flag has no off switch: it is taken back)."""
    name, equals, value = _parts(word)
    if not equals:
        return [word], False
    if value not in _TRUE + _FALSE:
        if resilient:
            return [word], False
        raise UsageError(f"invalid value {value!r} for {name}", hint="true or false")
    # --no-wait=true: the off switch, on
    on = (value in _TRUE) != (name in option.secondary_opts)
    if option.secondary_opts:
        return [_long(option) if on else option.secondary_opts[0]], False
    return ([name] if on else []), not on
