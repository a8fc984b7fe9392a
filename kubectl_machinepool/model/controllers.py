"""The providers' controller Deployments as clusterctl installs them: which one is Cluster API's
core, its manager container, the image tag and the command-line flags it runs with.

diagnose reads the Cluster API version from the core's image tag, diff-metadata its sync flags
and `providers` every provider's image and the MachinePool feature gate.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

from kubectl_machinepool.base.fields import RawObject, dig, items, mapping, strings, text
from kubectl_machinepool.model.snapshot import Snapshot

# clusterctl labels every component of a provider with this, valued as its Provider object is
# named (cmd/clusterctl/api/v1alpha3/labels.go ManifestLabel): "cluster-api" for the core.
PROVIDER_LABEL = "cluster.x-k8s.io/provider"
CORE_PROVIDER = "cluster-api"
CORE_DEPLOYMENT = "capi-controller-manager"


def is_core_controller(obj: RawObject) -> bool:
    if obj.get("kind") != "Deployment":
        return False
    labels = mapping(dig(obj, "metadata", "labels"))
    return labels.get(PROVIDER_LABEL) == CORE_PROVIDER or dig(obj, "metadata", "name") == (
        CORE_DEPLOYMENT
    )


def core_controller(snapshot: Snapshot) -> RawObject | None:
    """The Cluster API core controller's Deployment, when it was read (or is in the dump)."""
    return next((o for o in snapshot.of_kind("apps", "Deployment") if is_core_controller(o)), None)


def containers(deployment: RawObject) -> list[dict[str, Any]]:
    return items(dig(deployment, "spec", "template", "spec", "containers"))


def manager(deployment: RawObject) -> dict[str, Any] | None:
    """The container kubebuilder names `manager`: the controller itself, not a sidecar."""
    return next((c for c in containers(deployment) if c.get("name") == "manager"), None)


def image_tag(container: dict[str, Any]) -> str:
    """The image's tag without its digest; "" when it has none."""
    image = (text(container.get("image")) or "").split("@")[0]
    name = image.rpartition("/")[2]
    return name.rpartition(":")[2] if ":" in name else ""


def controller_tag(deployment: RawObject) -> str:
    """The manager's image tag, or the first container's when none is named manager."""
    found = manager(deployment) or next(iter(containers(deployment)), None)
    return image_tag(found) if found else ""


def split_arg(arg: str) -> list[str]:
    """Some installs pass all flags in one string: the words of it."""
    try:
        return shlex.split(arg)
    except ValueError:  # an unbalanced quote: the manager would not have started with it
        return arg.split()


def args(container: dict[str, Any]) -> list[str]:
    found: list[str] = []
    for arg in strings(container.get("args")):
        found += split_arg(arg) if " " in arg else [arg]
    return found


def flag_values(args: Sequence[str], flag: str) -> list[str]:
    """pflag StringSlice values: `--flag=a,b`, `--flag a,b`, repeatable."""
    values: list[str] = []
    for index, arg in enumerate(args):
        raw = None
        if arg.startswith(flag + "="):
            raw = arg[len(flag) + 1 :]
        elif arg == flag and index + 1 < len(args):
            raw = args[index + 1]
        if raw is not None:
            values += [v for v in raw.split(",") if v]
    return values
