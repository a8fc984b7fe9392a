"""diff with the shipped roles on the real API server: the reader compares client-side and says
why (its dry run needs patch), the operator's MachinePools and infra pools are compared by a
server-side dry run (forced over the fields the seeding client owns, said), its bootstrap configs
client-side; nothing is written either way. Without the Secret the budgets are said unknown, and
without the bootstrap configs' list the run is one error line.

The seeded CAPD pool (DockerMachinePool pinned to kindest/node:v1.34.0) in one namespace serves
every test.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.controlplane import ControlPlane
from support.management import management_cluster
from support.roles import (
    INFRA,
    OPERATOR,
    POOL,
    READER,
    Obj,
    Seeded,
    apply,
    cli,
    install_roles,
    narrowed,
    seed,
    unseed,
)

BOOTSTRAP = "bootstrap.cluster.x-k8s.io"


@pytest.fixture(scope="module")
def seeded(control_plane: ControlPlane) -> Iterator[tuple[Seeded, dict[str, Obj]]]:
    mgmt = management_cluster(control_plane, "v1beta2")
    roles = install_roles(mgmt)
    found = seed(mgmt, roles)
    yield found, roles
    unseed(found)


def _manifest(tmp_path: Path, ns: str) -> str:
    """A new custom image for the pool (rolls every instance) and a KubeadmConfig changed under
    its name (rolls none)."""
    objects = [
        {
            "apiVersion": f"{INFRA}/v1beta2",
            "kind": "DockerMachinePool",
            "metadata": {"name": POOL, "namespace": ns},
            "spec": {"template": {"customImage": "kindest/node:v1.34.1"}},
        },
        {
            "apiVersion": f"{BOOTSTRAP}/v1beta2",
            "kind": "KubeadmConfig",
            "metadata": {"name": POOL, "namespace": ns},
            "spec": {"joinConfiguration": {"nodeRegistration": {"name": "{{ ds.meta_data.x }}"}}},
        },
    ]
    path = tmp_path / "manifest.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    return str(path)


def _state(found: Seeded) -> dict[str, str]:
    """resourceVersion of every object the manifest names, and of the pool."""
    state = found.state()
    for group, plural in ((INFRA, "dockermachinepools"), (BOOTSTRAP, "kubeadmconfigs")):
        path = f"/apis/{group}/v1beta2/namespaces/{found.namespace}/{plural}"
        for item in found.mgmt.api.request("GET", path)["items"]:
            state[f"{plural}/{item['metadata']['name']}"] = item["metadata"]["resourceVersion"]
    return state


def _diff(capsys: Any, user: Any, manifest: str, ns: str) -> tuple[int, dict[str, Any], str]:
    result = cli(capsys, user, "diff", "-f", manifest, "-n", ns, "--exit-code", "-o", "json")
    return result.code, json.loads(result.out), result.err


def _compared(document: dict[str, Any]) -> dict[str, str]:
    [pool] = document["pools"]
    return {o["kind"]: o["comparedBy"] for o in pool["objects"]}


def test_the_reader_compares_client_side_and_the_operator_server_side(
    seeded: tuple[Seeded, dict[str, Obj]], tmp_path: Path, capsys: Any
) -> None:
    found, roles = seeded
    ns, manifest = found.namespace, _manifest(tmp_path, found.namespace)
    before = _state(found)

    reader = found.user("diff-reader", roles[READER])
    code, document, err = _diff(capsys, reader, manifest, ns)
    assert err == ""
    [pool] = document["pools"]
    assert (code, pool["effect"], pool["roll"]["instances"]) == (2, "RollsAll", 2)
    # Read through the workload role (None: not read). The workload cluster is the worker's
    # shared test server: budgets other tests left in their namespaces count too.
    budgets = pool["roll"]["blockingBudgets"]
    assert budgets is not None
    assert not [b for b in budgets if b.startswith(f"{ns}/")]
    for how in _compared(document).values():
        assert how.startswith("client-side: no permission to patch "), how

    operator = found.user("diff-operator", roles[READER], roles[OPERATOR])
    code, document, err = _diff(capsys, operator, manifest, ns)
    assert err == ""
    assert (code, document["pools"][0]["effect"]) == (2, "RollsAll")
    compared = _compared(document)
    # The seeding client owns the image: the dry run conflicts, and is forced.
    assert compared["DockerMachinePool"].startswith("server-side dry-run apply, forced: "), compared
    assert "conflict" in compared["DockerMachinePool"]
    assert compared["KubeadmConfig"].startswith(
        f"client-side: no permission to patch kubeadmconfigs.{BOOTSTRAP}"
    )
    assert _state(found) == before


def test_without_secrets_the_budgets_are_said_unknown(
    seeded: tuple[Seeded, dict[str, Obj]], tmp_path: Path, capsys: Any
) -> None:
    found, roles = seeded
    role = narrowed(
        roles[READER], f"reader-diff-no-secrets-{found.namespace}", lambda g: g[1] == "secrets"
    )
    apply(found.mgmt, role)
    user = found.user("diff-no-secrets", role)
    manifest = _manifest(tmp_path, found.namespace)
    code, document, err = _diff(capsys, user, manifest, found.namespace)
    roll = document["pools"][0]["roll"]
    assert (code, roll["blockingBudgets"]) == (2, None)
    assert "forbidden" in roll["budgetsNote"]
    [warning] = err.splitlines()
    assert warning == f"warning: {roll['budgetsNote']}"


def test_without_the_bootstrap_configs_list_the_run_is_one_error_line(
    seeded: tuple[Seeded, dict[str, Obj]], tmp_path: Path, capsys: Any
) -> None:
    found, roles = seeded
    role = narrowed(
        roles[READER], f"reader-diff-no-bootstrap-{found.namespace}", lambda g: g[0] == BOOTSTRAP
    )
    apply(found.mgmt, role)
    user = found.user("diff-no-bootstrap", role)
    manifest = _manifest(tmp_path, found.namespace)
    result = cli(capsys, user, "diff", "-f", manifest, "-n", found.namespace)
    assert result.code == 1, result.out + result.err
    [line, hint] = result.err.splitlines()
    assert line.startswith("error: "), line
    assert "kubeadmconfigs" in line, line
    assert hint.startswith("hint: ")
    assert result.out == ""
