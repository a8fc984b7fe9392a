"""`kubectl machinepool diagnose` and `kubectl machinepool explain`."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import click

from kubectl_machinepool.color import Palette
from kubectl_machinepool.commands.common import (
    CONTEXT_SETTINGS,
    F,
    Loaded,
    access_options,
    build_access,
    build_output,
    echo,
    input_options,
    load_description,
    output_options,
    parse_now,
    pool_options,
    report_missing,
    with_options,
)
from kubectl_machinepool.diagnostics import (
    BY_CODE,
    RULES,
    Finding,
    Severity,
    Thresholds,
    capi_version,
    diagnose,
)
from kubectl_machinepool.errors import ExitCode, MachinePoolError, NotFoundError
from kubectl_machinepool.options import parse_duration
from kubectl_machinepool.render.findings import (
    DiagnosisView,
    diagnosis_document,
    explain,
    explain_list,
    render_diagnosis,
)
from kubectl_machinepool.render.structured import to_json, to_yaml

_GRACES = (
    ("scaling", "--scaling-grace", "2m", "How long ScalingUp may last before it is a finding"),
    ("taint", "--taint-grace", "5m", "How long a Ready Node may keep the uninitialized taint"),
    (
        "deleting",
        "--deleting-grace",
        "15m",
        "How long a pool may be deleting before it is a finding",
    ),
    (
        "drain",
        "--drain-grace",
        "15m",
        "How long a Machine may drain its Node before it is a finding",
    ),
)


def threshold_options(command: F) -> F:
    """The clock rules: thresholds for states that are normal briefly and a problem for long."""
    options = [
        click.option(flag, default=default, show_default=True, metavar="DURATION", help=text)
        for _, flag, default, text in _GRACES
    ]
    options.append(
        click.option(
            "--capi-version",
            metavar="VERSION",
            help="Cluster API version for version-dependent rules (default: from its image)",
        )
    )
    return with_options(command, options)


def thresholds(params: dict[str, Any]) -> Thresholds:
    values = {
        name: timedelta(seconds=parse_duration(params[flag[2:].replace("-", "_")], flag) or 0)
        for name, flag, _, _ in _GRACES
    }
    return Thresholds(**values)


def run_rules(loaded: Loaded, params: dict[str, Any]) -> list[Finding]:
    capi = capi_version(loaded.snapshot, params["capi_version"])
    return diagnose(loaded.description, loaded.snapshot, capi, thresholds(params))


class FindingsAbove(MachinePoolError):
    """--fail-on: the run worked and found problems at or above the chosen severity."""

    exit_code = ExitCode.FINDINGS


@click.command("diagnose", context_settings=CONTEXT_SETTINGS)
@pool_options("Diagnose")
@click.option(
    "--fail-on",
    type=click.Choice(["warning", "error"]),
    help="Exit with code 4 when a finding of this severity or worse exists",
)
@threshold_options
@access_options
@input_options
@output_options(["text", "json", "yaml"])
def diagnose_command(**params: Any) -> None:
    """Name every known MachinePool problem, with evidence, what to do and upstream references.

    \b
    Each finding has a stable code (MP0101 ...), a severity (info, warning, error), the object
    it is about, a message with the concrete evidence, what to do next, and references to the
    upstream issues. `kubectl machinepool explain CODE` describes a rule; `explain --list`
    lists them all. Rules that depend on the Cluster API version read it from the
    capi-controller-manager image tag (or --capi-version); when it is unknown they say so and
    keep a lower severity. Findings do not change the exit code unless --fail-on is given.

    \b
    Examples:
      # every pool of the current namespace
      kubectl machinepool diagnose
      # in CI: fail on warnings and errors, from a dump taken earlier
      kubectl machinepool diagnose -A -f dump.yaml --now 2026-11-29T15:00:00Z --fail-on warning
    """
    access = build_access(params)
    output = build_output(params)
    now = parse_now(params["now"])
    loaded = load_description(params, access, now, report_extras=True)
    capi = capi_version(loaded.snapshot, params["capi_version"])
    view = DiagnosisView(
        loaded.description,
        diagnose(loaded.description, loaded.snapshot, capi, thresholds(params)),
        capi,
        thresholds(params),
        Palette(output.color),
    )
    if output.format == "text":
        if loaded.description.clusters:
            echo(render_diagnosis(view), nl=False, color=output.color)
    else:
        document = diagnosis_document(view)
        echo(to_json(document) if output.format == "json" else to_yaml(document), nl=False)
    report_missing(loaded.description, loaded.selection, loaded.namespace)
    if params["fail_on"]:
        floor = Severity.WARNING if params["fail_on"] == "warning" else Severity.ERROR
        worst = [f for f in view.findings if f.severity >= floor]
        if worst:
            raise FindingsAbove(
                f"{len(worst)} finding(s) at or above {params['fail_on']} (--fail-on)"
            )


@click.command("explain", context_settings=CONTEXT_SETTINGS)
@click.argument("code", required=False)
@click.option("--list", "list_all", is_flag=True, help="List every rule's code, severity and title")
def explain_command(code: str | None, list_all: bool) -> None:
    """Explain a diagnose rule: what it checks, why it matters, what to do, upstream references.

    \b
    Examples:
      kubectl machinepool explain MP0101
      kubectl machinepool explain --list
    """
    if list_all or not code:
        echo(explain_list(RULES), nl=False)
        return
    wanted = code.strip().upper()
    rule = BY_CODE.get(wanted) or next((r for r in RULES if r.rule.upper() == wanted), None)
    if rule is None:
        raise NotFoundError(
            f"no rule {code}", hint="kubectl machinepool explain --list shows them all"
        )
    echo(explain(rule), nl=False)
