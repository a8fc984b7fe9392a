"""Rollouts as production dumps show them (issue 28): a version change half way, paused, held
by a surge instance that never joined, or moving under a provider's own rolling signal.

Each builder starts from a provider scenario (support.scenarios) and changes what the state
needs, as the controllers would have left the objects.
"""

from __future__ import annotations

import copy
from datetime import timedelta
from pathlib import Path
from typing import Any

import yaml

from .objects import NOW
from .scenarios import SCENARIOS, node
from .snapshots import NAMESPACE

Obj = dict[str, Any]
NEW = "v1.34.1"
PAUSED = "cluster.x-k8s.io/paused"


def ago(minutes: float) -> str:
    return (NOW - timedelta(minutes=minutes)).isoformat().replace("+00:00", "Z")


def objects_of(scenario: str, generation: str, **kwargs: Any) -> list[Obj]:
    return SCENARIOS[scenario](generation, NAMESPACE, **kwargs)


def find(objects: list[Obj], kind: str, name: str | None = None) -> Obj:
    return next(
        o for o in objects if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)
    )


def conditions_of(obj: Obj) -> list[Obj]:
    """Every condition list of an object: current, v1beta2 and deprecated v1beta1 ones."""
    status = obj.get("status", {})
    found = [status.get("conditions", [])]
    found.append(status.get("v1beta2", {}).get("conditions", []))
    found.append(status.get("deprecated", {}).get("v1beta1", {}).get("conditions", []))
    return [c for conditions in found for c in conditions]


def set_condition(obj: Obj, kind: str, **fields: Any) -> None:
    """Change the condition `kind` in whichever of the object's lists holds it."""
    matching = [c for c in conditions_of(obj) if c["type"] == kind]
    assert matching, f"{obj['kind']} has no {kind} condition"
    for cond in matching:
        cond.update(fields)


def upgrade(objects: list[Obj], version: str = NEW) -> None:
    """The pool's version changed and the controller observed it (generation == observed)."""
    find(objects, "MachinePool")["spec"]["template"]["spec"]["version"] = version


def pause(objects: list[Obj], how: str) -> None:
    """cluster: the Cluster's spec.paused; pool or infra: the annotation on that object."""
    if how == "cluster":
        find(objects, "Cluster")["spec"]["paused"] = True
        return
    target = find(objects, "MachinePool")
    if how == "infra":
        ref = target["spec"]["template"]["spec"]["infrastructureRef"]
        target = find(objects, ref["kind"], ref["name"])
    target["metadata"].setdefault("annotations", {})[PAUSED] = ""


def asg_surge(objects: list[Obj], *, joined_minutes: float | None, recorded: bool) -> str:
    """One more ASG instance beside the three old ones (the rollout's surge), in the
    AWSMachinePool's providerIDList and, when recorded, in the MachinePool's copy. With
    joined_minutes it got a Node on the new version that turned Ready that long ago. Its
    providerID."""
    pid = "aws:///eu-west-1a/i-0000000000ee77aa1"
    asg = find(objects, "AWSMachinePool")
    asg["spec"]["providerIDList"] = [*asg["spec"]["providerIDList"], pid]
    if recorded:
        pool = find(objects, "MachinePool")
        pool["spec"]["providerIDList"] = [*pool["spec"]["providerIDList"], pid]
    if joined_minutes is not None:
        name = "ip-10-0-9-99.eu-west-1.compute.internal"
        objects.append(
            node(name, pid, NEW, NAMESPACE, "prod", "asg-workers", since=ago(joined_minutes))
        )
    return pid


def vmss_surge(objects: list[Obj], generation: str, *, bootstrap_failed: bool) -> str:
    """A fourth AzureMachinePoolMachine and its Machine, created an hour ago on the new model;
    its bootstrap failed (no Node), or it is still starting. The Machine's name."""
    name = "vmss-workers-3"
    machine = copy.deepcopy(find(objects, "Machine", "vmss-workers-2"))
    ampm = copy.deepcopy(find(objects, "AzureMachinePoolMachine", "vmss-workers-2"))
    pid = ampm["spec"]["providerID"].rsplit("/", 1)[0] + "/3"
    for obj in (machine, ampm):
        obj["metadata"].update(name=name, uid=f"{obj['kind']}-3", creationTimestamp=ago(60))
        obj["spec"]["providerID"] = pid
    machine["spec"]["infrastructureRef"]["name"] = name
    machine["spec"]["version"] = NEW
    machine["status"].pop("nodeRef", None)
    machine["status"].pop("nodeInfo", None)
    machine["status"]["phase"] = "Provisioned"
    for kind in ("Ready", "Available", "NodeReady", "NodeHealthy"):
        set_condition(machine, kind, status="False", reason="NodeDoesNotExist")
    ampm["metadata"]["ownerReferences"][-1]["name"] = name
    ampm["status"].pop("nodeRef", None)
    ampm["status"]["version"] = NEW
    if bootstrap_failed:
        failed = {
            "status": "False",
            "reason": "BootstrapFailed",
            "message": "cloud-init: kubeadm join failed: x509: certificate has expired",
            "lastTransitionTime": ago(55),
        }
        set_condition(machine, "BootstrapConfigReady", **failed)
        legacy = machine["status"]["conditions" if generation == "v1beta1" else "deprecated"]
        if generation != "v1beta1":
            legacy = legacy["v1beta1"]["conditions"]
        legacy.append({"type": "BootstrapReady", "severity": "Error", **failed})
        set_condition(ampm, "Ready", status="False", reason="BootstrapFailed")
    # CAPZ lists every AzureMachinePoolMachine; the MachinePool copied the list.
    for kind in ("AzureMachinePool", "MachinePool"):
        listed = find(objects, kind)["spec"]
        listed["providerIDList"] = [*listed["providerIDList"], pid]
    objects += [machine, ampm]
    return name


def dump(objects: list[Obj], path: Path) -> str:
    """The objects as `kubectl get -o yaml` lists them, in a file; its path."""
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects}))
    return str(path)
