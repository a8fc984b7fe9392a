"""A kind as the API serves it (group, version, plural): the paths its requests use."""

from __future__ import annotations

from kubectl_machinepool.base.records import record


@record
class Resource:
    """A kind as the API serves it: where its objects are listed, watched and written."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            return f"{base}/namespaces/{namespace}/{self.plural}"
        return f"{base}/{self.plural}"


# The core kinds this tool reads.
NODES = Resource("", "v1", "Node", "nodes", namespaced=False)
EVENTS = Resource("", "v1", "Event", "events")
SECRETS = Resource("", "v1", "Secret", "secrets")
PODS = Resource("", "v1", "Pod", "pods")
BUDGETS = Resource("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets")
DEPLOYMENTS = Resource("apps", "v1", "Deployment", "deployments")
# clusterctl's inventory: one object per installed provider (v1alpha3 is its only version).
CLUSTERCTL_PROVIDERS = Resource("clusterctl.cluster.x-k8s.io", "v1alpha3", "Provider", "providers")
