"""Credentials, RBAC and version resolution against the real API server."""

from __future__ import annotations

import base64
import json
import os
import socket
import sys

import pytest
import yaml
from support.delayproxy import Proxies
from support.objects import list_scenario
from support.run import run_cli

from kubectl_machinepool.base.errors import NotFoundError
from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.connection import connection_from_dict, load_connection
from kubectl_machinepool.kube.fetch import read_pools
from kubectl_machinepool.kube.resource import Resource
from kubectl_machinepool.model.selector import Selection

MACHINEPOOLS = {
    "apiGroups": ["cluster.x-k8s.io"],
    "resources": ["machinepools"],
    "verbs": ["get", "list"],
}
INFRA_POOLS = {
    "apiGroups": ["infrastructure.cluster.x-k8s.io"],
    "resources": ["awsmachinepools", "azuremachinepools", "gcpmanagedmachinepools"],
    "verbs": ["get", "list"],
}


def machines_column(output: str) -> dict[str, str]:
    header, *lines = output.splitlines()
    at = header.split().index("MACHINES")
    return {row[0]: row[at] for row in (line.split() for line in lines)}


def nodes_forbidden(ns: str, user: str) -> str:
    """list's warning when the user may not get the Cluster's kubeconfig Secret."""
    return (
        f'warning: Nodes of Cluster {ns}/prod are not shown: secrets "prod-kubeconfig" is '
        f'forbidden: User "{user}" cannot get resource "secrets" in API group "" in the '
        f'namespace "{ns}"'
    )


def test_without_rights_on_infra_pools_the_table_says_unknown(v1beta2, capsys) -> None:
    ns = v1beta2.new_namespace()
    v1beta2.create(list_scenario("v1beta2", ns))
    viewer = v1beta2.server.add_user(f"pool-viewer-{ns}")
    v1beta2.grant(viewer.name, ns, [MACHINEPOOLS])

    result = run_cli(capsys, "list", "-n", ns, "--kubeconfig", str(viewer.kubeconfig))

    assert result.code == 0
    assert set(machines_column(result.out).values()) == {"<unknown>"}
    *warnings, nodes = result.err.splitlines()
    assert len(warnings) == 3  # one per infra kind that could not be listed
    assert all(w.startswith("warning: cannot read ") for w in warnings)
    assert any('cannot list resource "awsmachinepools"' in w for w in warnings)
    assert nodes == nodes_forbidden(ns, viewer.name)


def test_infra_versions_resolve_through_discovery_without_crd_access(v1beta2, capsys) -> None:
    ns = v1beta2.new_namespace()
    v1beta2.create(list_scenario("v1beta2", ns))
    viewer = v1beta2.server.add_user(f"infra-viewer-{ns}")
    v1beta2.grant(viewer.name, ns, [MACHINEPOOLS, INFRA_POOLS])

    result = run_cli(capsys, "list", "-n", ns, "--kubeconfig", str(viewer.kubeconfig))

    assert (result.code, result.err) == (0, nodes_forbidden(ns, viewer.name) + "\n")
    assert machines_column(result.out) == {
        "asg-workers": "no",
        "gke-default": "no",  # GCPManagedMachinePool names itself: no per-instance Machines
        "pending-pool": "<unknown>",
        "vmss-workers": "yes",
    }


def test_no_rights_at_all_is_a_one_line_error(mgmt, namespace, capsys) -> None:
    nobody = mgmt.server.add_user(f"nobody-{namespace}")
    result = run_cli(capsys, "list", "-n", namespace, "--kubeconfig", str(nobody.kubeconfig))
    assert result.code == 1
    error, hint = result.err.splitlines()
    assert error == (
        f'error: machinepools.cluster.x-k8s.io is forbidden: User "{nobody.name}" cannot list resource '
        f'"machinepools" in API group "cluster.x-k8s.io" in the namespace "{namespace}"'
    )
    assert hint.startswith("hint: ")


def test_unknown_client_certificate_is_unauthorized(v1beta2, capsys, tmp_path) -> None:
    from support.pki import CertificateAuthority

    stranger = CertificateAuthority("someone-else").issue("admin", ("system:masters",))
    config = v1beta2.server.kubeconfig_dict(v1beta2.server.admin)
    config["users"][0]["user"] = {
        "client-certificate-data": base64.b64encode(stranger.cert).decode(),
        "client-key-data": base64.b64encode(stranger.key).decode(),
    }
    path = tmp_path / "stranger.yaml"
    path.write_text(yaml.safe_dump(config))

    result = run_cli(capsys, "list", "--kubeconfig", str(path))

    assert result.code == 1
    assert "rejected the credentials (401 Unauthorized)" in result.err
    assert "Traceback" not in result.err


def test_exec_credential_plugin(v1beta2, capsys, tmp_path) -> None:
    """An exec plugin (like `aws eks get-token`) that hands back a client certificate."""
    ns = v1beta2.new_namespace()
    v1beta2.create(list_scenario("v1beta2", ns))
    v1beta2.workload_kubeconfig_secret(ns, "prod")  # list reads the Cluster's Nodes too
    admin = v1beta2.server.admin
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {
            "clientCertificateData": admin.cert.read_text(),
            "clientKeyData": admin.key.read_text(),
        },
    }
    plugin = tmp_path / "credential-plugin.py"
    plugin.write_text(
        f"import json, os\nassert 'KUBERNETES_EXEC_INFO' in os.environ\nprint(json.dumps({credential!r}))\n"
    )
    config = v1beta2.server.kubeconfig_dict(admin)
    config["users"][0]["user"] = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(plugin)],
            "interactiveMode": "Never",
        }
    }
    path = tmp_path / "exec.yaml"
    path.write_text(yaml.safe_dump(config))

    result = run_cli(capsys, "list", "-n", ns, "-o", "name", "--kubeconfig", str(path))

    assert (result.code, result.err) == (0, "")
    assert "machinepool.cluster.x-k8s.io/asg-workers" in result.out


def test_kubeconfig_list_first_current_context_wins(v1beta2, capsys, tmp_path, monkeypatch) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead_port = sock.getsockname()[1]
    live = v1beta2.server.kubeconfig_dict(v1beta2.server.admin, "live")
    dead = json.loads(json.dumps(live))
    dead["clusters"][0].update(
        name="dead",
        cluster={**dead["clusters"][0]["cluster"], "server": f"https://127.0.0.1:{dead_port}"},
    )
    dead["contexts"][0].update(
        name="dead", context={"cluster": "dead", "user": dead["users"][0]["name"]}
    )
    dead["current-context"] = "dead"
    (tmp_path / "live.yaml").write_text(yaml.safe_dump(live))
    (tmp_path / "dead.yaml").write_text(yaml.safe_dump(dead))

    monkeypatch.setenv(
        "KUBECONFIG", os.pathsep.join([str(tmp_path / "live.yaml"), str(tmp_path / "dead.yaml")])
    )
    assert run_cli(capsys, "list", "-A").code == 0

    monkeypatch.setenv(
        "KUBECONFIG", os.pathsep.join([str(tmp_path / "dead.yaml"), str(tmp_path / "live.yaml")])
    )
    refused = run_cli(capsys, "list", "-A")
    assert refused.code == 1
    assert f"context 'dead' (https://127.0.0.1:{dead_port})" in refused.err
    # --context still reaches the other file's context.
    assert run_cli(capsys, "list", "-A", "--context", "live").code == 0


def test_in_cluster_service_account(v1beta2, tmp_path) -> None:
    ns = v1beta2.new_namespace()
    v1beta2.create(list_scenario("v1beta2", ns))
    v1beta2.api.create(
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "inspector", "namespace": ns},
        }
    )
    v1beta2.grant(f"system:serviceaccount:{ns}:inspector", ns, [MACHINEPOOLS, INFRA_POOLS])
    token = v1beta2.api.request(
        "POST",
        f"/api/v1/namespaces/{ns}/serviceaccounts/inspector/token",
        {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 3600},
        },
    )["status"]["token"]
    sa = tmp_path / "serviceaccount"
    sa.mkdir()
    (sa / "token").write_text(token)
    (sa / "ca.crt").write_bytes(v1beta2.server.ca_file.read_bytes())
    (sa / "namespace").write_text(ns)
    pod_env = {
        "HOME": str(tmp_path),
        "KUBERNETES_SERVICE_HOST": "127.0.0.1",
        "KUBERNETES_SERVICE_PORT": str(v1beta2.server.port),
    }

    connection = load_connection(None, None, pod_env, service_account_dir=sa)
    with Kube(connection, request_timeout=10) as kube:
        snapshot = read_pools(kube, ns, Selection(ns), None, None)

    assert connection.namespace == ns
    # Its Nodes are not for this account: the Cluster's kubeconfig Secret is not granted.
    user = f"system:serviceaccount:{ns}:inspector"
    assert snapshot.notes == (nodes_forbidden(ns, user).removeprefix("warning: "),)
    assert sum(1 for o in snapshot.objects if o["kind"] == "MachinePool") == 4


@pytest.mark.parametrize(
    ("group", "kind", "version", "plural"),
    [
        # CAPA labels only the v1beta1 contract, with "v1beta1_v1beta2"; only v1beta2 is served.
        ("infrastructure.cluster.x-k8s.io", "AWSMachinePool", "v1beta2", "awsmachinepools"),
        ("infrastructure.cluster.x-k8s.io", "AzureMachinePool", "v1beta1", "azuremachinepools"),
        # Scaleway maps the v1beta2 contract to its own v1alpha2.
        (
            "infrastructure.cluster.x-k8s.io",
            "ScalewayManagedMachinePool",
            "v1alpha2",
            "scalewaymanagedmachinepools",
        ),
        # CAPOCI: v1beta1_v1beta2 under the v1beta1 contract, both served.
        ("infrastructure.cluster.x-k8s.io", "OCIMachinePool", "v1beta2", "ocimachinepools"),
        ("bootstrap.cluster.x-k8s.io", "KubeadmConfig", "v1beta2", "kubeadmconfigs"),
        (
            "controlplane.cluster.x-k8s.io",
            "AWSManagedControlPlane",
            "v1beta2",
            "awsmanagedcontrolplanes",
        ),
    ],
)
def test_version_of_a_versionless_ref_comes_from_the_contract_label(
    v1beta2, group, kind, version, plural
) -> None:
    with Kube.connect(AccessOptions(kubeconfig=str(v1beta2.kubeconfig))) as kube:
        resource = kube.resource(group, kind)
    assert (resource.version, resource.plural, resource.namespaced) == (version, plural, True)


def test_unknown_kind_is_not_found(v1beta2) -> None:
    with (
        Kube.connect(AccessOptions(kubeconfig=str(v1beta2.kubeconfig))) as kube,
        pytest.raises(NotFoundError),
    ):
        kube.resource("infrastructure.cluster.x-k8s.io", "VSphereMachinePool")


def test_workload_cluster_secret_points_back_at_the_api_server(v1beta2, tmp_path) -> None:
    ns = v1beta2.new_namespace()
    v1beta2.workload_kubeconfig_secret(ns, "prod")
    secret = v1beta2.api.request("GET", f"/api/v1/namespaces/{ns}/secrets/prod-kubeconfig")
    kubeconfig = tmp_path / "workload.yaml"
    kubeconfig.write_bytes(base64.b64decode(secret["data"]["value"]))

    with Kube.connect(AccessOptions(kubeconfig=str(kubeconfig))) as kube:
        assert kube.connection.context == "prod-admin@prod"
        assert kube.request("GET", "/api/v1/namespaces/default")["metadata"]["name"] == "default"


def test_a_cluster_without_cluster_api_says_so(control_plane, capsys) -> None:
    """The usual slip: the context points at a workload cluster, not the management cluster."""
    bare = control_plane.server("no-capi")
    result = run_cli(capsys, "list", "--kubeconfig", str(bare.admin.kubeconfig))
    assert result.code == 1
    assert result.err.splitlines() == [
        f"error: Cluster API is not installed on context 'admin@no-capi' ({bare.server}): "
        "the cluster.x-k8s.io API group is not served",
        "hint: MachinePools live on the management cluster; check --context",
    ]


def test_kubeconfig_impersonation_is_honoured(v1beta2, capsys, tmp_path) -> None:
    """`as:` in the kubeconfig must not be silently dropped: that would act with more rights."""
    ns = v1beta2.new_namespace()
    config = v1beta2.server.kubeconfig_dict(v1beta2.server.admin)
    config["users"][0]["user"]["as"] = f"nobody-{ns}"
    path = tmp_path / "impersonating.yaml"
    path.write_text(yaml.safe_dump(config))

    result = run_cli(capsys, "list", "-n", ns, "--kubeconfig", str(path))

    assert result.code == 1
    assert f'User "nobody-{ns}" cannot list resource "machinepools"' in result.err


def test_a_failing_webhook_on_a_provider_kind_is_a_note_not_the_end(v1beta2, capsys) -> None:
    """A conversion webhook that is down answers 500 for its kind; the rest still shows."""
    from support.crds import install

    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "webhookmachinepools.infrastructure.cluster.x-k8s.io", "labels": {"cluster.x-k8s.io/v1beta2": "v1beta2"}},
        "spec": {
            "group": "infrastructure.cluster.x-k8s.io",
            "names": {"kind": "WebhookMachinePool", "listKind": "WebhookMachinePoolList", "plural": "webhookmachinepools", "singular": "webhookmachinepool"},
            "scope": "Namespaced",
            "conversion": {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": {"url": "https://127.0.0.1:1/convert"}}},
            "versions": [
                {"name": v, "served": True, "storage": v == "v1beta1", "subresources": {"status": {}},
                 "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}
                for v in ("v1beta1", "v1beta2")
            ],
        },
    }  # fmt: skip
    install(v1beta2.api, [crd])
    try:
        ns = v1beta2.new_namespace()
        v1beta2.workload_kubeconfig_secret(ns, "prod")  # list reads the Cluster's Nodes too
        pool = list_scenario("v1beta2", ns)[0]
        pool["spec"]["template"]["spec"]["infrastructureRef"]["kind"] = "WebhookMachinePool"
        v1beta2.create([pool])
        v1beta2.api.request("POST", f"/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/{ns}/webhookmachinepools",
                            {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "WebhookMachinePool", "metadata": {"name": "asg-workers"}})  # fmt: skip

        result = run_cli(capsys, "list", "-n", ns, "--kubeconfig", str(v1beta2.kubeconfig))
    finally:
        # The server shares this CRD with every later test: a dead webhook in it answers 429 to
        # anything that lists the whole group.
        v1beta2.api.request(
            "PATCH",
            f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}",
            {"spec": {"conversion": {"strategy": "None", "webhook": None}}},
            "application/merge-patch+json",
        )

    assert result.code == 0
    assert machines_column(result.out) == {"asg-workers": "<unknown>"}
    [warning] = result.err.splitlines()
    assert warning.startswith(
        "warning: cannot read WebhookMachinePool objects, so MACHINES shows <unknown>: "
    )
    assert "conversion webhook" in warning


def test_a_big_list_comes_gzipped_unless_the_kubeconfig_disables_compression(v1beta2) -> None:
    """The API server compresses a list answer of 128 KiB or more when asked (kubectl asks); the
    bytes that crossed the proxy in front of it tell which was sent."""
    ns = v1beta2.new_namespace()
    configmaps = Resource("", "v1", "ConfigMap", "configmaps")
    data = {"d": "node-image-list " * 256}  # 4 KiB, as repetitive as real objects are
    meta = [{"name": f"c{i}", "namespace": ns} for i in range(64)]
    v1beta2.create(
        [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": m, "data": data} for m in meta]
    )
    server = v1beta2.server
    received, listed = {}, {}
    with Proxies() as proxies:
        proxy = proxies.add("mgmt", server.port)
        for disabled in (False, True):
            document = server.kubeconfig_dict(server.admin)
            document["clusters"][0]["cluster"].update(server=proxy.url)
            if disabled:
                document["clusters"][0]["cluster"]["disable-compression"] = True
            proxies.reset()
            with Kube(connection_from_dict(document, "test"), 60) as kube:
                found = kube.list(configmaps, ns)
            listed[disabled] = sorted((c["metadata"]["name"], c["data"]["d"]) for c in found)
            received[disabled] = proxies.run().counts["mgmt"].down
    assert listed[False] == listed[True] == sorted((f"c{i}", data["d"]) for i in range(64))
    assert received[True] > 64 * 4096
    assert received[False] < received[True] / 5
