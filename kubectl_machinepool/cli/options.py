"""The printing and fleet flags, as frozen values built once and passed to the renderers."""

from __future__ import annotations

from datetime import datetime

from kubectl_machinepool.base.errors import UsageError
from kubectl_machinepool.base.records import record
from kubectl_machinepool.base.timeutil import parse_time
from kubectl_machinepool.render.color import ColorMode


@record
class FleetOptions:
    """--contexts, --all-contexts and --parallel: which management clusters a fleet view reads,
    and how many at once."""

    contexts: tuple[str, ...] = ()
    every: bool = False
    # Contexts read at once, each in its own process; None: one per core.
    parallel: int | None = None

    @property
    def asked(self) -> bool:
        return self.every or bool(self.contexts)


@record
class OutputOptions:
    format: str = "table"
    no_headers: bool = False
    color: ColorMode = "auto"
    # What follows the = of -o jsonpath=…, custom-columns=… and their -file forms.
    template: str = ""


@record
class ListOptions:
    """list's kubectl printing flags: --sort-by, -L/--label-columns, --show-labels."""

    sort_by: str = ""
    label_columns: tuple[str, ...] = ()
    show_labels: bool = False


def parse_now(value: str | None) -> datetime | None:
    if not value:
        return None
    parsed = parse_time(value)
    if parsed is None:
        raise UsageError(
            f"invalid value {value!r} for --now",
            hint="use RFC 3339 before the year 9001, e.g. 2026-11-29T15:00:00Z",
        )
    return parsed
