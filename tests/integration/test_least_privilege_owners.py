"""The owner read with least privilege, on the real API server (issue 50): a pool tracked by a
self-healing Argo CD Application (capd-argo), scaled by a user with the shipped reader and
operator roles. Without kubectl-machinepool-owner-reader the Application is forbidden: unknown
owner state, refused with nothing written, never "no owner"; --ignore-owner writes and says why
the state is unknown. With the role bound, the verdict is known: a self-heal sync reverts it.
"""

from __future__ import annotations

import pytest
from support.controlplane import ControlPlane
from support.gitops import install_gitops_crds, pool_path
from support.management import create_scenario, delete_nodes, management_cluster
from support.roles import OPERATOR, READER, Seeded, apply, cli, flat, install_roles, manifests
from support.scenarios import VARIANTS

POOL = "dev-mp-0"
SCALE = ("scale", POOL, "--replicas", "3", "--yes")


def test_an_owner_the_user_may_not_read_is_unknown_and_refused(
    control_plane: ControlPlane, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    mgmt = management_cluster(control_plane, "v1beta2")
    install_gitops_crds(mgmt)
    roles = install_roles(mgmt)
    (owners,) = manifests("kubectl-machinepool-owners")
    apply(mgmt, owners)
    ns = mgmt.new_namespace()
    objects = VARIANTS["capd-argo"](mgmt.generation, ns, ns.removeprefix("t-"))
    create_scenario(mgmt, objects)
    request.addfinalizer(lambda: delete_nodes(mgmt, objects))
    seeded = Seeded(mgmt, ns, ns.removeprefix("t-"))
    path = pool_path(mgmt, ns, POOL)
    before = mgmt.api.request("GET", path)["metadata"]["resourceVersion"]

    user = seeded.user("no-owners", roles[READER], roles[OPERATOR])
    forbidden = (
        f"unknown owner state: Application {ns}/prod-pools could not be read: "
        f'applications.argoproj.io "prod-pools" is forbidden: User "{user.name}" cannot get '
        'resource "applications"'
    )
    refused = cli(capsys, user, *SCALE, "-n", ns)
    assert refused.code == 3, refused.out + refused.err
    assert forbidden in flat(refused.err)
    assert flat(refused.err).endswith("nothing was written")
    assert mgmt.api.request("GET", path)["metadata"]["resourceVersion"] == before

    reader = seeded.user("owners", roles[READER], roles[OPERATOR], owners)
    known = cli(capsys, reader, *SCALE, "-n", ns)
    assert known.code == 3, known.out + known.err
    assert "a self-heal sync reverts this write" in flat(known.err)
    assert mgmt.api.request("GET", path)["metadata"]["resourceVersion"] == before

    going = cli(capsys, user, *SCALE, "-n", ns, "--ignore-owner")
    assert going.code == 0, going.out + going.err
    assert f"{forbidden} in API group" in flat(going.out)
    assert "(--ignore-owner: writing anyway" in flat(going.out)
    assert mgmt.api.request("GET", path)["spec"]["replicas"] == 3
