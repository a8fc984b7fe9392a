"""Which kinds the test cluster serves, and their REST names."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

PROVIDER_KINDS = Path(__file__).with_name("provider_kinds.yaml")

CAPI_KINDS = {
    "Cluster": "clusters",
    "Machine": "machines",
    "MachinePool": "machinepools",
    "MachineDeployment": "machinedeployments",
    "MachineSet": "machinesets",
    "MachineHealthCheck": "machinehealthchecks",
}

CORE_KINDS = {
    # kind: (plural, namespaced)
    "Namespace": ("namespaces", False),
    "Node": ("nodes", False),
    "Secret": ("secrets", True),
    "Event": ("events", True),
    "ConfigMap": ("configmaps", True),
    "ServiceAccount": ("serviceaccounts", True),
    "Pod": ("pods", True),
    "Role": ("roles", True),
    "RoleBinding": ("rolebindings", True),
    "ClusterRole": ("clusterroles", False),
    "ClusterRoleBinding": ("clusterrolebindings", False),
    "Deployment": ("deployments", True),
    "PodDisruptionBudget": ("poddisruptionbudgets", True),
    "CustomResourceDefinition": ("customresourcedefinitions", False),
    "ValidatingAdmissionPolicy": ("validatingadmissionpolicies", False),
    "ValidatingAdmissionPolicyBinding": ("validatingadmissionpolicybindings", False),
}


# The GitOps owners' kinds (support.gitops installs their CRDs where a test needs them).
GITOPS_KINDS = {
    "Application": "applications",
    "Kustomization": "kustomizations",
    "HelmRelease": "helmreleases",
}


@dataclass(frozen=True)
class KindInfo:
    plural: str
    namespaced: bool


@cache
def provider_kinds() -> list[dict[str, Any]]:
    return list(yaml.safe_load(PROVIDER_KINDS.read_text())["kinds"])


class Kinds:
    def __init__(self) -> None:
        self._by_kind: dict[str, KindInfo] = {k: KindInfo(p, n) for k, (p, n) in CORE_KINDS.items()}
        self._by_kind.update({k: KindInfo(p, True) for k, p in CAPI_KINDS.items()})
        self._by_kind.update({k: KindInfo(p, True) for k, p in GITOPS_KINDS.items()})
        for entry in provider_kinds():
            self._by_kind[entry["kind"]] = KindInfo(entry["plural"], entry.get("namespaced", True))

    def lookup(self, api_version: str, kind: str) -> KindInfo:
        try:
            return self._by_kind[kind]
        except KeyError:
            raise KeyError(f"test cluster does not know kind {kind} ({api_version})") from None
