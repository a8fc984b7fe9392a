"""The shipped RBAC roles on the real API server: the roles, fresh users bound to exactly them,
a seeded CAPD scenario whose `<cluster>-kubeconfig` Secret holds a workload user bound only to
the workload roles, and probes: commands that show what one grant is for."""

from __future__ import annotations

import base64
import copy
import itertools
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

import pytest
import yaml

from .controlplane import User
from .kubeapi import APIError
from .management import ManagementCluster, create_scenario
from .run import Result, run_cli
from .scenarios import SCENARIOS, core_manager
from .waiting import GUARD, polls

READER = "kubectl-machinepool-reader"
DELETER = "kubectl-machinepool-deleter"
WORKLOAD = "kubectl-machinepool-workload"
OPERATOR = "kubectl-machinepool-operator"
INFRA = "infrastructure.cluster.x-k8s.io"
POOL = "dev-mp-0"
MACHINES = ("dev-mp-0-k9d4m", "dev-mp-0-x7q2p")
# Users are named by a serial, not a random suffix: two users of one test with the same name
# would be one user holding both users' bindings (the one way found for a CI run where a probe
# user lacking a grant still had it).
_USERS = itertools.count(1)
Obj = dict[str, Any]


def manifests(name: str) -> list[Obj]:
    """The documents of a shipped manifest, read the way an installed package holds them."""
    text = (resources.files("kubectl_machinepool") / "rbac" / f"{name}.yaml").read_text()
    return [doc for doc in yaml.safe_load_all(text) if doc]


def apply(mgmt: ManagementCluster, obj: Obj) -> None:
    """Create, or replace what an earlier test created under the same name."""
    try:
        mgmt.api.create(obj)
    except APIError as err:
        if err.status != 409:
            raise
        body = copy.deepcopy(obj)
        body["metadata"]["resourceVersion"] = mgmt.api.get(obj)["metadata"]["resourceVersion"]
        mgmt.api.request("PUT", mgmt.api.path_of(obj, obj["metadata"]["name"]), body)


def bind(mgmt: ManagementCluster, user: str, role: Obj, namespace: str | None = None) -> None:
    """Bind a role: cluster-wide, or (namespace) with a RoleBinding that references it."""
    role_ns = role["metadata"].get("namespace")
    where = namespace or role_ns
    scope = {"namespace": where} if where else {}
    mgmt.api.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding" if where else "ClusterRoleBinding",
            "metadata": {"name": f"{user}-{secrets.token_hex(3)}", **scope},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": role["kind"],
                "name": role["metadata"]["name"],
            },
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
        }
    )
    wait_granted(mgmt, user, role, where)


def wait_granted(mgmt: ManagementCluster, user: str, role: Obj, namespace: str | None) -> None:
    """Until the API server's authorizer has seen the binding and the role: it reads them from
    an informer, so a request sent right after the create can still be refused (seen in CI)."""
    pending = [
        {
            "verb": verb,
            "group": group,
            "resource": resource,
            **({"namespace": namespace} if namespace else {}),
            **({"name": rule["resourceNames"][0]} if rule.get("resourceNames") else {}),
        }
        for rule in role["rules"]
        for group in rule.get("apiGroups", ())
        for resource in rule.get("resources", ())
        for verb in rule["verbs"]
    ]
    deadline = time.monotonic() + GUARD
    while pending:
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {"user": user, "resourceAttributes": pending[0]},
        }
        answer = mgmt.api.request(
            "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review
        )
        if answer["status"].get("allowed"):
            pending.pop(0)
            continue
        assert time.monotonic() < deadline, f"{user} still may not {pending[0]} after {GUARD:g} s"
        time.sleep(0.05)


Grant = tuple[str, str, str]  # (API group, resource, verb)


def grants(role: Obj) -> set[Grant]:
    return {
        (group, resource, verb)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


def narrowed(role: Obj, name: str, drop: Callable[[Grant], bool]) -> Obj:
    """The role without some of its grants: what a stricter administrator gives."""
    kept = sorted(g for g in grants(role) if not drop(g))
    assert len(kept) < len(grants(role)), f"{role['metadata']['name']} has no such grant"
    rules = [{"apiGroups": [g], "resources": [r], "verbs": [v]} for g, r, v in kept]
    return {**role, "metadata": {**role["metadata"], "name": name}, "rules": rules}


@dataclass(frozen=True)
class Seeded:
    """One scenario in its own namespace, and the users made for it."""

    mgmt: ManagementCluster
    namespace: str
    salt: str

    @property
    def nodes(self) -> list[str]:
        return [f"dev-{m}-{self.salt}" for m in MACHINES]

    def user(self, prefix: str, *roles: Obj, namespace: str | None = None) -> User:
        """A fresh user bound to exactly these roles (in one namespace, or cluster-wide)."""
        user = self.mgmt.server.add_user(f"{prefix}-{next(_USERS)}-{self.namespace}")
        for role in roles:
            bind(self.mgmt, user.name, role, namespace)
        return user

    def workload_credentials(self, *roles: Obj) -> None:
        """Put a fresh user bound to exactly these roles into the `<cluster>-kubeconfig` Secret."""
        user = self.user("workload", *roles)
        config = yaml.safe_dump(self.mgmt.server.kubeconfig_dict(user, "dev-admin@dev"))
        self.mgmt.api.request(
            "PATCH",
            f"/api/v1/namespaces/{self.namespace}/secrets/dev-kubeconfig",
            {"data": {"value": base64.b64encode(config.encode()).decode()}},
            "application/merge-patch+json",
        )

    def state(self) -> dict[str, str]:
        """resourceVersion of every object a delete-machine could write."""
        base = f"/apis/cluster.x-k8s.io/{self.mgmt.generation}/namespaces/{self.namespace}"
        found = {}
        for plural in ("machines", "machinepools"):
            for item in self.mgmt.api.request("GET", f"{base}/{plural}")["items"]:
                meta = item["metadata"]
                found[f"{plural}/{meta['name']}"] = meta["resourceVersion"]
        return found


def install_roles(mgmt: ManagementCluster) -> dict[str, Obj]:
    roles = {}
    for name in (READER, DELETER, WORKLOAD, OPERATOR):
        for obj in manifests(name):
            apply(mgmt, obj)
            roles[obj["metadata"]["name"]] = obj
    return roles


def seeded_event(namespace: str, kind: str, name: str) -> Obj:
    """An Event about one object, its message naming the object (what a probe looks for)."""
    about = {"kind": kind, "name": name, **({"namespace": namespace} if kind != "Node" else {})}
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{name}.seeded", "namespace": namespace},
        "involvedObject": about,
        "type": "Normal",
        "reason": "Seeded",
        "message": f"seeded event about {kind} {name}",
        "count": 1,
        "firstTimestamp": "2026-11-29T14:00:00Z",
        "lastTimestamp": "2026-11-29T14:00:00Z",
        "source": {"component": "test"},
    }


def seed(mgmt: ManagementCluster, roles: dict[str, Obj]) -> Seeded:
    """The CAPD scenario (a pool with MachinePool Machines), the core controller's Deployment,
    and a `<cluster>-kubeconfig` Secret whose user has only the workload roles."""
    namespace = mgmt.new_namespace()
    salt = namespace.removeprefix("t-")
    objects = SCENARIOS["capd"](mgmt.generation, namespace, salt)
    node = f"dev-{MACHINES[1]}-{salt}"
    events = [seeded_event(namespace, "MachinePool", POOL), seeded_event("default", "Node", node)]
    create_scenario(mgmt, [*objects, core_manager(namespace), *events])
    seeded = Seeded(mgmt, namespace, salt)
    seeded.workload_credentials(
        roles["kubectl-machinepool-workload-reader"], roles["kubectl-machinepool-bootstrap-tokens"]
    )
    return seeded


def unseed(seeded: Seeded) -> None:
    """The core controller's Deployment goes: other tests list Deployments in every namespace
    of the same API server, and one left here would be the manager they find."""
    seeded.mgmt.api.request(
        "DELETE",
        f"/apis/apps/v1/namespaces/{seeded.namespace}/deployments/capi-controller-manager",
    )


def cli(capsys: pytest.CaptureFixture[str], user: User, *args: str) -> Result:
    return run_cli(capsys, *args, "--kubeconfig", str(user.kubeconfig))


def ok(result: Result) -> Result:
    """Exit 0 with nothing on stderr: no `warning: cannot read`, no note of any kind."""
    assert (result.code, result.err) == (0, ""), result.out + result.err
    return result


def assert_allowed_everywhere(result: Result, namespace: str) -> None:
    """-A on the shared test server: other tests leave Clusters whose workload API server is gone
    (a note each); what matters is that RBAC refused nothing and this namespace has no note."""
    assert result.code == 0, result.err
    assert "forbidden" not in result.err
    assert f"{namespace}/" not in result.err


def one_line_error(result: Result, *fragments: str) -> None:
    assert result.code == 1, result.out + result.err
    lines = result.err.splitlines()
    assert len(lines) == 2, result.err
    assert lines[0].startswith("error: "), result.err
    assert lines[1].startswith("hint: "), result.err
    for fragment in fragments:
        assert fragment in lines[0], result.err


def flat(text: str) -> str:
    """Wrapped plan and tree text as one line, so phrases can be matched across wraps."""
    return " ".join(text.split())


# -- the full roles -------------------------------------------------------------------------


def finish_deletion(seeded: Seeded, machine: str) -> threading.Thread:
    """What Cluster API does once the Machine is deleting, reduced to the end: the finalizer goes."""
    path = (
        f"/apis/cluster.x-k8s.io/{seeded.mgmt.generation}/namespaces/{seeded.namespace}"
        f"/machines/{machine}"
    )

    def controller() -> None:
        for _ in polls(0.05):
            try:
                current = seeded.mgmt.api.request("GET", path)
            except APIError:
                return
            if current["metadata"].get("deletionTimestamp"):
                seeded.mgmt.api.request(
                    "PATCH",
                    path,
                    {"metadata": {"finalizers": None}},
                    "application/merge-patch+json",
                )
                return

    thread = threading.Thread(target=controller, daemon=True)
    thread.start()
    return thread


@dataclass(frozen=True)
class Probe:
    """A command that shows what one grant is for: without the grant, `gained` appears in its
    output (a note, a refusal) or `lost` (what the grant makes visible) is gone."""

    args: tuple[str, ...]  # {ns}, {machine}, {spare} and {node} are filled in
    gained: str = ""
    lost: str = ""
    # A real deletion (--wait): the Machine's finalizer is removed once it is deleting.
    finish: bool = False

    def argv(self, seeded: Seeded) -> list[str]:
        names = {"ns": seeded.namespace, "machine": MACHINES[1], "spare": MACHINES[0]}
        return [a.format(node=seeded.nodes[1], **names) for a in self.args]

    def run(self, capsys: pytest.CaptureFixture[str], seeded: Seeded, user: User) -> str:
        argv = self.argv(seeded)
        finisher = finish_deletion(seeded, argv[1]) if self.finish else None
        try:
            result = cli(capsys, user, *argv)
        finally:
            if finisher is not None:
                finisher.join()
        return flat(result.out + result.err)


def check_probe(
    capsys: pytest.CaptureFixture[str], seeded: Seeded, probe: Probe, full: User, narrow: User
) -> list[str]:
    """What is wrong with one probe: the narrowed grant changes nothing, or the full one fails."""
    said = probe.run(capsys, seeded, narrow)
    wrong = []
    if probe.gained and probe.gained not in said:
        wrong.append(f"without it, no {probe.gained!r} in: {said}")
    if probe.lost:
        if probe.lost in said:
            wrong.append(f"without it, still {probe.lost!r}")
        with_grant = probe.run(capsys, seeded, full)
        if probe.lost not in with_grant:
            wrong.append(f"with it, no {probe.lost!r} in: {with_grant}")
    return wrong


def unneeded(
    capsys: pytest.CaptureFixture[str],
    seeded: Seeded,
    role: Obj,
    probes: dict[Grant, Probe],
    others: tuple[Obj, ...],
) -> list[str]:
    """Each grant's probe, run by a user with the role less that grant (and the other roles):
    what is wrong, when the grant's absence shows nothing."""
    full = seeded.user("full", role, *others)
    wrong = []
    for grant, probe in sorted(probes.items()):
        name = f"{role['metadata']['name']}-{secrets.token_hex(3)}"
        less = narrowed(role, name, lambda g, d=grant: g == d)
        apply(seeded.mgmt, less)
        narrow = seeded.user("less", less, *others)
        wrong += [f"{grant}: {w}" for w in check_probe(capsys, seeded, probe, full, narrow)]
    return wrong
