"""`kubectl machinepool events`."""

from __future__ import annotations

import click

from kubectl_machinepool.app.options import PoolScope, Source
from kubectl_machinepool.base.errors import MachinePoolError, UsageError
from kubectl_machinepool.cli.commands import CONTEXT_SETTINGS, flags, showing
from kubectl_machinepool.cli.environment import Environment
from kubectl_machinepool.cli.options import OutputOptions
from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.model.snapshot import Snapshot

# The Event types Kubernetes defines, the only ones kubectl events --types takes.
EVENT_TYPES = ("Normal", "Warning")


def _types(_ctx: click.Context, _param: click.Parameter, value: str | None) -> frozenset[str]:
    if not value:
        return frozenset()
    types = {t.strip().lower() for t in value.split(",")}
    unknown = sorted(types - {t.lower() for t in EVENT_TYPES})
    if unknown:
        raise UsageError(
            f"invalid value {value!r} for --types: {unknown[0]!r} is not an Event type",
            hint=f"choose from {', '.join(EVENT_TYPES)} (a comma list, any case)",
        )
    return frozenset(types)


@click.command("events", context_settings=CONTEXT_SETTINGS)
@flags.pools("Show the Events of")
@click.option(
    "--types",
    metavar="TYPES",
    callback=_types,
    help="Only Events of these types (comma list, e.g. Warning,Normal)",
)
@flags.watch
@flags.access
@flags.source
@flags.output(["table", "json", "yaml"], tables=True)
@flags.pass_env
def events_command(
    env: Environment,
    *,
    pools: PoolScope,
    types: frozenset[str],
    watch: bool,
    access: AccessOptions,
    source: Source,
    output: OutputOptions,
) -> None:
    """Show the Events of MachinePools and everything they are made of, on one timeline.

    \b
    As kubectl events, for a pool: the Events about the MachinePool, its infra pool and
    bootstrap config, its Machines and infra machines (management cluster) and its Nodes
    (workload cluster, through the <cluster>-kubeconfig Secret), core/v1 and events.k8s.io/v1
    alike, repeats folded into one row with their count, oldest last-seen first. Dumps that
    hold Events are read too.

    \b
    -w prints each new or repeated Event as it comes: the view is read again whenever a watch
    of the namespace's Events, the pools, their infra objects, Machines or Nodes reports a
    change. Ctrl-C ends it.

    \b
    Examples:
      kubectl machinepool events workers-0 -n capi-prod
      kubectl machinepool events --cluster prod --types Warning -w
    """
    from kubectl_machinepool.app import reading
    from kubectl_machinepool.model.events import EventRecord
    from kubectl_machinepool.render.events import event_doc, events_table
    from kubectl_machinepool.render.structured import SCHEMA_VERSION, document_text

    def records(loaded: reading.Loaded) -> list[EventRecord]:
        _readable(loaded.snapshot)
        found = [e for c in loaded.description.clusters for p in c.pools for e in p.events]
        found = [e for e in found if not types or e.type.lower() in types]
        return sorted(found, key=lambda e: (e.last is None, e.last, e.kind, e.name))

    def drawn(loaded: reading.Loaded, shown: list[EventRecord], *, headers: bool) -> str:
        if output.format == "table":
            lines = events_table(shown, loaded.description.now, headers=headers)
            return "".join(line + "\n" for line in lines)
        # Not Kubernetes' EventList: each item is this tool's summary of one object's Event
        # (describe's pools[].events), named by the object it is about.
        items = [event_doc(e) for e in shown]
        document = {"apiVersion": SCHEMA_VERSION, "kind": "MachinePoolEvents", "items": items}
        return document_text(document, output.format)

    if not watch:
        loaded = showing.described(env, access, source, pools, report_extras=False)
        found = records(loaded)
        if not found and output.format == "table":
            reading.check_named(loaded)
            # A note on what could not be read is warned instead: "none" would be a guess.
            if set(loaded.notes) <= set(loaded.snapshot.remarks):
                where = f" in {loaded.namespace}" if loaded.namespace else ""
                env.err(f"No events found{where}.")
            return
        env.out(drawn(loaded, found, headers=not output.no_headers), nl=False)
        if message := reading.check_found(loaded):
            env.err(message)
        return
    flags.live_only(source, "--watch")
    seen: dict[tuple[str, ...], tuple[int, object]] = {}
    started = [False]

    def new_rows(loaded: reading.Loaded) -> str:
        """kubectl events -w: the table's header once, then each new or repeated Event."""
        fresh = []
        for record in records(loaded):
            key = (*record.about, record.type, record.reason, record.message)
            if seen.get(key) != (record.count, record.last):
                seen[key] = (record.count, record.last)
                fresh.append(record)
        first, started[0] = not started[0], True
        if not fresh and not first:
            return ""
        return drawn(loaded, fresh, headers=first and not output.no_headers)

    showing.follow_described(
        env, access, pools, new_rows, color=False, report_extras=False, appended=True
    )


def _readable(snapshot: Snapshot) -> None:
    """The command's own subject: Events not read are an error, never an empty list that
    says "none" where a Warning may be."""
    if ("", "Event") in snapshot.unread:
        raise MachinePoolError(
            "the pools' Events could not be read, so none are listed",
            hint="see the warning above; the reader role (kubectl-machinepool-reader) "
            "grants list on events",
        )
