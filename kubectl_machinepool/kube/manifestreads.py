"""What `diff` asks the API server: each manifest object as it is and as applying it would leave
it, by a server-side dry-run apply (defaulting and admission webhooks included, nothing stored);
the MachinePools of the manifest's namespaces and their infra pools; the PodDisruptionBudgets of
a Cluster's workload cluster, one LIST.

The dry run is sent as kubectl diff --server-side sends it, under this tool's field manager and
without forcing. A change of fields another manager owns (the applier from git, kubectl) is a
409 conflict, as it is to kubectl diff; it is then sent again forced, as kubectl diff
--force-conflicts does, and the conflict is said: with dryRun nothing is stored either way, and
the server still defaults and its webhooks still judge. A user without patch permission gets the
client-side comparison instead, and is told why.
"""

from __future__ import annotations

from collections.abc import Iterable

from kubectl_machinepool.base.errors import (
    ClusterAccessError,
    ConflictError,
    MachinePoolError,
    NotFoundError,
)
from kubectl_machinepool.base.fields import RawObject, mapping, text
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.resource import BUDGETS, Resource
from kubectl_machinepool.kube.workload import workload_kube
from kubectl_machinepool.model.manifestdiff import applied
from kubectl_machinepool.plans.consequences import Compared, ref_of
from kubectl_machinepool.plans.rolling import Budgets
from kubectl_machinepool.plans.writes import FIELD_MANAGER

APPLY_PATCH = "application/apply-patch+yaml"
DRY_RUN = {"dryRun": "All", "fieldManager": FIELD_MANAGER, "force": "false"}
FORCED = {**DRY_RUN, "force": "true"}
SERVER_SIDE = "server-side dry-run apply"
CLIENT_SIDE = "client-side (--server-side=false): no defaulting, no webhooks"
# What an apply answer of these statuses means: the server refused the object itself.
_REFUSALS = (400, 422)


def _resource(kube: Kube, manifest: RawObject) -> Resource:
    """The manifest's kind in the manifest's own version, as kubectl diff compares it."""
    ref = ref_of(manifest)
    version = (text(manifest.get("apiVersion")) or "").rpartition("/")[2]
    try:
        found = kube.resource(ref.group, ref.kind, version)
    except NotFoundError as err:
        raise MachinePoolError(
            f"no API on {kube.where} serves {ref.kind} in {text(manifest.get('apiVersion'))}",
            hint="check the manifest's apiVersion and kind, and that the provider is installed",
        ) from err
    return Resource(ref.group, version, ref.kind, found.plural, found.namespaced)


def _object_path(resource: Resource, namespace: str, name: str) -> str:
    return f"{resource.path(namespace)}/{name}"


def _read(kube: Kube, resource: Resource, namespace: str, name: str) -> RawObject | None:
    """One object by name, or None: a LIST narrowed to the name, so that the read-only role's
    list grants suffice (it grants no GET of provider kinds)."""
    found = kube.list(resource, namespace, field_selector=f"metadata.name={name}")
    return found[0] if found else None


def compare(kube: Kube, manifest: RawObject, *, server_side: bool) -> Compared:
    """The object as read (None when it does not exist) and as the apply would leave it."""
    resource = _resource(kube, manifest)
    ref = ref_of(manifest)
    path = _object_path(resource, ref.namespace, ref.name)
    live = _read(kube, resource, ref.namespace, ref.name)
    if not server_side:
        return _client_side(manifest, live, CLIENT_SIDE)
    how = SERVER_SIDE
    try:
        try:
            result = _dry_run(kube, path, manifest, DRY_RUN)
        except ConflictError as err:
            how = f"{SERVER_SIDE}, forced: {_first_line(err.message)}"
            result = _dry_run(kube, path, manifest, FORCED)
    except ClusterAccessError as err:
        if err.status != 403:
            raise
        why = (
            f"client-side: no permission to patch {resource.plural}.{resource.group} (the "
            "server-side dry run needs it), so no defaulting, no webhooks"
        )
        return _client_side(manifest, live, why)
    except MachinePoolError as err:
        if err.status not in _REFUSALS:
            raise
        return Compared(manifest, live, None, how, refused=_first_line(err.message))
    return Compared(manifest, live, result, how)


def _dry_run(kube: Kube, path: str, manifest: RawObject, query: dict[str, str]) -> RawObject:
    return kube.request("PATCH", path, query, body=manifest, content_type=APPLY_PATCH)


def _first_line(message: str) -> str:
    return message.strip().splitlines()[0] if message.strip() else message


def _client_side(manifest: RawObject, live: RawObject | None, how: str) -> Compared:
    return Compared(manifest, live, applied(live or {}, manifest), how)


def read_machine_pools(kube: Kube, namespaces: Iterable[str]) -> list[RawObject]:
    """The MachinePools of each namespace, one LIST each."""
    found: list[RawObject] = []
    for namespace in sorted(set(namespaces)):
        found += kube.machine_pools(namespace)
    return found


def read_infra_pool(
    kube: Kube, namespace: str, group: str, kind: str, name: str
) -> tuple[RawObject | None, str | None]:
    """An infra pool a MachinePool names (None when it is not there), or why it is unknown."""
    try:
        return _read(kube, kube.resource(group, kind), namespace, name), None
    except MachinePoolError as err:
        said = f"{kind} {namespace}/{name} could not be read, so what depends on it is unknown"
        return None, f"{said}: {err.message}"


def budgets(
    kube: Kube, namespace: str, cluster: str, override: str | None, timeout: float | None
) -> Budgets:
    """Every PodDisruptionBudget of the Cluster's workload cluster, or why they are unknown."""
    try:
        with workload_kube(kube, namespace, cluster, override, timeout) as workload:
            found = workload.list(BUDGETS, None)
    except MachinePoolError as err:
        said = f"PodDisruptionBudgets of Cluster {namespace}/{cluster} are not known"
        return Budgets(None, f"{said}: {err.message}")
    return Budgets(tuple(mapping(b) for b in found))
