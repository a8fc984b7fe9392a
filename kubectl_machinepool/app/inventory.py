"""providers: what the management cluster runs (its providers and the MachinePool feature gate)
and the infra pool kinds its MachinePools use, each with the operations it honours.

Library code: no click, no printing. What could not be read comes back as notes.
"""

from __future__ import annotations

from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.fetch import read_providers
from kubectl_machinepool.model.inventory import Inventory, inventory


def read(access: AccessOptions, *, all_kinds: bool) -> Inventory:
    with Kube.connect(access) as kube:
        namespace = access.scope(kube.connection.namespace)
        snapshot = read_providers(kube, namespace, access.selector)
    return inventory(snapshot, namespace, all_kinds=all_kinds)
