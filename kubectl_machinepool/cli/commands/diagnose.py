"""`kubectl machinepool diagnose` and `kubectl machinepool explain`."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

import click

from kubectl_machinepool.app.options import PoolScope, RuleOptions, Source
from kubectl_machinepool.base.errors import ExitCode, MachinePoolError, NotFoundError, UsageError
from kubectl_machinepool.cli import suggest
from kubectl_machinepool.cli.commands import CONTEXT_SETTINGS, flags, showing
from kubectl_machinepool.cli.environment import Environment
from kubectl_machinepool.cli.options import FleetOptions, OutputOptions
from kubectl_machinepool.kube.access import AccessOptions

if TYPE_CHECKING:
    from kubectl_machinepool.app.reading import Loaded
    from kubectl_machinepool.diagnostics.core import Finding
    from kubectl_machinepool.model.fleet import Read
    from kubectl_machinepool.render.findings import DiagnosisView
    from kubectl_machinepool.render.fleet import ContextDiagnosis


class FindingsAbove(MachinePoolError):
    """--fail-on: the run worked and found problems at or above the chosen severity."""

    exit_code = ExitCode.FINDINGS


def _renderers() -> None:
    """What diagnose goes on with, imported while the reads run (app/reading.py)."""
    from kubectl_machinepool.render import findings, structured  # noqa: F401


@click.command("diagnose", context_settings=CONTEXT_SETTINGS)
@flags.pools("Diagnose")
@click.option(
    "--fail-on",
    type=click.Choice(["warning", "error", "unreadable"]),
    multiple=True,
    help="Exit with code 4 when a finding of this severity or worse exists; unreadable: exit "
    "with code 1 when a context of a fleet could not be read. Repeatable",
)
@flags.watch
@flags.fleet
@flags.rules
@flags.access
@flags.source
@flags.output(["text", "json", "yaml"])
@flags.pass_env
def diagnose_command(
    env: Environment,
    *,
    pools: PoolScope,
    fail_on: tuple[str, ...],
    watch: bool,
    fleet: FleetOptions,
    rules: RuleOptions,
    access: AccessOptions,
    source: Source,
    output: OutputOptions,
) -> None:
    """Name every known MachinePool problem, with evidence, what to do and upstream references.

    \b
    Each finding has a stable code (MP0101 ...), a severity (info, warning, error), the object
    it is about, a message with the concrete evidence, what to do next, and references to the
    upstream issues. `kubectl machinepool explain CODE` describes a rule; `explain --list`
    lists them all. Rules that depend on the Cluster API version read it from the
    capi-controller-manager image tag (or --capi-version); when it is unknown they say so and
    keep a lower severity. Findings do not change the exit code unless --fail-on is given, nor
    does a context of a fleet that could not be read unless --fail-on unreadable is.

    \b
    Examples:
      # every pool of the current namespace
      kubectl machinepool diagnose
      # in CI: fail on warnings and errors, from a dump taken earlier
      kubectl machinepool diagnose -A -f dump.yaml --now 2026-11-29T15:00:00Z --fail-on warning
    """
    from kubectl_machinepool.app import reading

    color = env.color(output.color)

    def view_of(loaded: reading.Loaded) -> DiagnosisView:
        from kubectl_machinepool.render.color import Palette
        from kubectl_machinepool.render.findings import DiagnosisView

        capi, findings, ignored = reading.judged(loaded, rules)
        return DiagnosisView(
            loaded.description, findings, capi, rules.thresholds, Palette(color), ignored
        )

    def text_of(view: DiagnosisView) -> str:
        from kubectl_machinepool.render.findings import render_diagnosis

        return render_diagnosis(view, width=env.width) if view.description.clusters else ""

    def drawn(loaded: reading.Loaded) -> str:
        from kubectl_machinepool.render.findings import diagnosis_document
        from kubectl_machinepool.render.structured import document_text

        view = view_of(loaded)
        if output.format == "text":
            return text_of(view)
        return document_text(diagnosis_document(view), output.format)

    if fleet.asked:
        if watch:
            raise UsageError("a fleet view is read once", hint="drop --watch")
        flags.fleet_only_live(access, source)
        views = _fleet_views(
            env, access, fleet, pools, view_of=view_of, fmt=output.format,
            now=source.now or env.now(),
        )  # fmt: skip
        reads = _show_fleet(env, views, output.format, color)
        findings = [f for read in reads if read.value for f in read.value.findings]
        unread = sum(1 for read in reads if read.value is None)
        _fail_on(fail_on, findings, unread=(unread, len(reads)))
        return
    if watch:
        flags.live_only(source, "--watch")
        if fail_on:
            raise UsageError("--fail-on needs one diagnosis, not --watch", hint="drop one of them")
        showing.follow_described(env, access, pools, drawn, color=color, report_extras=True)
        return
    loaded = showing.described(
        env, access, source, pools, report_extras=True, judged=bool(fail_on), prepare=_renderers
    )
    view = view_of(loaded)
    if output.format == "text":
        env.out(text_of(view), nl=False, color=color)
    else:
        from kubectl_machinepool.render.findings import diagnosis_document
        from kubectl_machinepool.render.structured import write_document

        write_document(diagnosis_document(view), output.format, env.write)
    if message := reading.check_found(loaded):
        env.err(message)
    if note := _ignored_for_fail_on(fail_on, view.ignored.findings):
        env.err(note)
    _fail_on(fail_on, view.findings)


def _ignored_for_fail_on(fail_on: tuple[str, ...], ignored: Sequence[Finding]) -> str | None:
    """Ignored findings never fail the run (that is what ignoring them is for): say how many
    would have."""
    from kubectl_machinepool.diagnostics.core import Severity

    floor = next((s for s in ("warning", "error") if s in fail_on), None)
    severity = Severity.WARNING if floor == "warning" else Severity.ERROR
    count = sum(1 for f in ignored if f.severity >= severity) if floor else 0
    if not count:
        return None
    return f"{count} ignored finding(s) at or above {floor} do not count for --fail-on"


def _fail_on(
    fail_on: tuple[str, ...], findings: Sequence[Finding], unread: tuple[int, int] = (0, 0)
) -> None:
    """unread: how many contexts of a fleet were not read, of how many. (Outside a fleet, a
    context that cannot be read fails the run before this.)"""
    from kubectl_machinepool.diagnostics.core import Severity

    floor = next((s for s in ("warning", "error") if s in fail_on), None)
    severity = Severity.WARNING if floor == "warning" else Severity.ERROR
    worst = [f for f in findings if f.severity >= severity] if floor else []
    above = f"{len(worst)} finding(s) at or above {floor}"
    if "unreadable" in fail_on and unread[0]:
        # A cluster left unchecked makes the run a failure (1), whatever the others' findings.
        also = f"; {above}" if worst else ""
        raise MachinePoolError(
            f"{unread[0]} of {unread[1]} contexts not read{also} (--fail-on)",
            hint="check the warnings above",
        )
    if worst:
        raise FindingsAbove(f"{above} (--fail-on)")


def _fleet_views(
    env: Environment,
    access: AccessOptions,
    fleet: FleetOptions,
    pools: PoolScope,
    *,
    view_of: Callable[[Loaded], DiagnosisView],
    fmt: str,
    now: datetime,
) -> Iterator[Read[ContextDiagnosis]]:
    """Each context diagnosed in its own process, which sends back what will be shown; what a
    context could not read is warned under its name."""
    from kubectl_machinepool.app import fleet as fleets
    from kubectl_machinepool.app import reading
    from kubectl_machinepool.render.fleet import context_diagnosis

    def diagnosed(at: AccessOptions) -> ContextDiagnosis:
        loaded = reading.load_description(at, Source(), pools, now, None, report_extras=True)
        return context_diagnosis(view_of(loaded), fmt, env.width)

    return fleets.read_fleet(
        access,
        diagnosed,
        wanted=fleet.contexts,
        every=fleet.every,
        parallel=fleet.parallel,
        prepare=lambda: reading.import_next(_renderers),
        notes_of=lambda diagnosis: diagnosis.notes,
        warn=env.warn,
    )


def _show_fleet(
    env: Environment, reads: Iterator[Read[ContextDiagnosis]], output_format: str, color: bool
) -> list[Read[ContextDiagnosis]]:
    """Text: each context's block as soon as it is in (and, as a run where no context could be
    read prints none, once one was); a document: once all are."""
    from kubectl_machinepool.render import fleet as render

    shown: list[Read[ContextDiagnosis]] = []
    printed, some = 0, False
    for read in reads:
        shown.append(read)
        some = some or read.value is not None
        if output_format != "text" or not some:
            continue
        for i in range(printed, len(shown)):
            env.out(render.diagnosis_block(shown[i], first=i == 0), nl=False, color=color)
        printed = len(shown)
    if output_format == "text":
        env.out(render.diagnosis_summary(shown), nl=False, color=color)
        return shown
    from kubectl_machinepool.render.structured import write_document

    write_document(render.diagnosis_fleet_document(shown), output_format, env.write)
    return shown


@click.command("explain", context_settings=CONTEXT_SETTINGS)
@click.argument("code", required=False, shell_complete=suggest.rule_codes)
@click.option("--list", "list_all", is_flag=True, help="List every rule's code, severity and title")
@flags.pass_env
def explain_command(env: Environment, code: str | None, list_all: bool) -> None:
    """Explain a diagnose rule: what it checks, why it matters, what to do, upstream references.

    \b
    Examples:
      kubectl machinepool explain MP0101
      kubectl machinepool explain --list
    """
    from kubectl_machinepool.diagnostics.rules import BY_CODE, RULES
    from kubectl_machinepool.render.findings import explain, explain_list

    if list_all and code is not None:
        raise UsageError(
            "--list lists every rule: it takes no CODE",
            hint=f"run: kubectl machinepool explain {code}",
        )
    if code is None or list_all:
        env.out(explain_list(RULES), nl=False)
        return
    wanted = code.strip().upper()
    rule = BY_CODE.get(wanted) or next((r for r in RULES if r.rule.upper() == wanted), None)
    if rule is None or not wanted:
        raise NotFoundError(
            f"no rule {code.strip() or repr(code)}",
            hint="kubectl machinepool explain --list shows them all",
        )
    env.out(explain(rule, width=env.width), nl=False)
