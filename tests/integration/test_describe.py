"""describe against the real API server: live output equals offline output of the same objects."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from support.management import ManagementCluster, create_scenario, delete_nodes, kubectl_dump
from support.objects import NOW
from support.run import run_cli
from support.scenarios import SCENARIOS

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "describe"
SCHEMA = json.loads(
    resources.files("kubectl_machinepool").joinpath("schemas/describe.json").read_text()
)
AT = NOW.isoformat().replace("+00:00", "Z")


Loaded = tuple[str, str, list[dict[str, Any]]]


def load(mgmt: ManagementCluster, scenario: str) -> Loaded:
    namespace = mgmt.new_namespace()
    salt = namespace.removeprefix("t-")
    objects = SCENARIOS[scenario](mgmt.generation, namespace, salt)
    create_scenario(mgmt, objects)
    return namespace, salt, objects


def server_fields_dropped(value: Any) -> Any:
    if isinstance(value, dict):
        if value.get("code") == "MP1102":
            # How long the rollout has not moved counts from creation times, which the API
            # server sets (the test's own time, after --now) and a fixture sets as it likes.
            message = re.sub(r"not moved for \S+", "not moved for …", value["message"])
            value = {**value, "message": message}
        return {
            k: server_fields_dropped(v)
            for k, v in value.items()
            if k not in ("uid", "creationTimestamp")
        }
    if isinstance(value, list):
        return [server_fields_dropped(v) for v in value]
    return value


def as_golden(document: dict[str, Any], namespace: str, salt: str, generation: str) -> Any:
    """A live document in the golden's terms: fixture namespace and names, no server-set fields."""
    text = (
        json.dumps(document)
        .replace(namespace, "capi-prod")
        .replace(f"-{salt}", "")
        .replace(salt, "0" * 8)
    )
    if generation == "v1beta1":
        # Goldens are rendered from v1beta2 objects; on CAPI 1.10 core and CABPK serve v1beta1.
        for group in ("cluster.x-k8s.io", "bootstrap.cluster.x-k8s.io"):
            text = text.replace(f'"{group}/v1beta1"', f'"{group}/v1beta2"')
    return server_fields_dropped(json.loads(text))


@pytest.fixture
def loader(mgmt: ManagementCluster) -> Iterator[Callable[[str], Loaded]]:
    """load(), and the scenarios' Nodes deleted afterwards (support.management.delete_nodes)."""
    loaded: list[list[dict[str, Any]]] = []

    def load_one(scenario: str) -> Loaded:
        found = load(mgmt, scenario)
        loaded.append(found[2])
        return found

    yield load_one
    for objects in loaded:
        delete_nodes(mgmt, objects)


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_live_equals_offline_and_matches_the_golden(
    mgmt, scenario, loader, tmp_path, capsys
) -> None:
    namespace, salt, objects = loader(scenario)
    config = str(mgmt.kubeconfig)

    live = run_cli(capsys, "describe", "-n", namespace, "--kubeconfig", config, "--now", AT)
    assert (live.code, live.err) == (0, "")
    offline = run_cli(
        capsys,
        "describe",
        "-n",
        namespace,
        *kubectl_dump(mgmt, namespace, objects, tmp_path),
        "--now",
        AT,
    )
    assert (offline.code, offline.err) == (0, "")
    assert live.out == offline.out

    as_json = run_cli(
        capsys, "describe", "-n", namespace, "--kubeconfig", config, "--now", AT, "-o", "json"
    )
    jsonschema.validate(json.loads(as_json.out), SCHEMA)
    golden = json.loads((GOLDEN / f"{scenario}.json").read_text())
    live_doc = as_golden(json.loads(as_json.out), namespace, salt, mgmt.generation)
    golden_doc = server_fields_dropped(golden)
    if mgmt.generation == "v1beta1":
        # The v1beta2 API's copied counters show up in findings (MP1901, and as evidence in
        # MP0101's message); on v1beta1 the same findings fire, with that evidence left out.
        def codes(doc: dict[str, Any]) -> list[tuple[str, str]]:
            return [(f["code"], f["subject"]) for f in doc.pop("findings") if f["code"] != "MP1901"]

        assert codes(live_doc) == codes(golden_doc)
    assert live_doc == golden_doc


READ_CAPI = {
    "apiGroups": [
        "cluster.x-k8s.io",
        "infrastructure.cluster.x-k8s.io",
        "bootstrap.cluster.x-k8s.io",
    ],
    "resources": ["*"],
    "verbs": ["get", "list"],
}
# Without it every describe warns that the pools' Events are not shown (test_unreadable.py).
READ_EVENTS = {"apiGroups": [""], "resources": ["events"], "verbs": ["list"]}


def test_without_secret_access_the_management_tree_and_one_note(v1beta2, capsys) -> None:
    namespace, _, _ = load(v1beta2, "azure-vmss")
    viewer = v1beta2.server.add_user(f"viewer-{namespace}")
    v1beta2.grant(viewer.name, namespace, [READ_CAPI, READ_EVENTS])

    result = run_cli(
        capsys, "describe", "-n", namespace, "--kubeconfig", str(viewer.kubeconfig), "--now", AT
    )

    assert result.code == 0
    assert result.err.splitlines() == [
        f'warning: Nodes of Cluster {namespace}/prod are not shown: secrets "prod-kubeconfig" is forbidden: '
        f'User "{viewer.name}" cannot get resource "secrets" in API group "" in the namespace "{namespace}"'
    ]
    assert "Machine " + namespace + "/vmss-workers-2" in result.out
    assert "Node " not in result.out
    assert "Nodes matched" not in result.out


def test_unreachable_workload_cluster_times_out_into_a_note(v1beta2, capsys, tmp_path) -> None:
    import base64
    import socket

    import yaml

    namespace, _, _ = load(v1beta2, "aws-asg")
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        port = silent.getsockname()[1]
        config = v1beta2.server.kubeconfig_dict(v1beta2.server.admin, "prod-admin@prod")
        config["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{port}"
        secret = f"/api/v1/namespaces/{namespace}/secrets/prod-kubeconfig"
        patch = {"data": {"value": base64.b64encode(yaml.safe_dump(config).encode()).decode()}}
        v1beta2.api.request("PATCH", secret, patch, "application/merge-patch+json")

        result = run_cli(
            capsys,
            "describe",
            "-n",
            namespace,
            "--kubeconfig",
            str(v1beta2.kubeconfig),
            "--request-timeout",
            "1s",
        )

    assert result.code == 0
    assert result.err.splitlines() == [
        f"warning: Nodes of Cluster {namespace}/prod are not shown: the API server of context "
        f"'prod-admin@prod' (https://127.0.0.1:{port}) did not complete the TLS handshake "
        "within 1s"
    ]
    assert "MachinePool " + namespace + "/asg-workers" in result.out


def test_workload_kubeconfig_flag_replaces_the_secret(v1beta2, capsys) -> None:
    namespace, _, _ = load(v1beta2, "aws-asg")
    v1beta2.api.request("DELETE", f"/api/v1/namespaces/{namespace}/secrets/prod-kubeconfig")
    config = str(v1beta2.kubeconfig)

    without = run_cli(capsys, "describe", "-n", namespace, "--kubeconfig", config)
    assert 'secrets "prod-kubeconfig" not found' in without.err

    with_flag = run_cli(
        capsys, "describe", "-n", namespace, "--kubeconfig", config, "--workload-kubeconfig", config
    )
    assert (with_flag.code, with_flag.err) == (0, "")
    assert "Nodes matched 2" in with_flag.out


def test_secret_credentials_never_reach_the_disk(v1beta2, capsys) -> None:
    """The workload kubeconfig's client key is used from memory, never written to a file."""
    import base64
    import tempfile

    import yaml

    namespace, _, _ = load(v1beta2, "aws-asg")
    workload_user = v1beta2.server.add_user(f"workload-admin-{namespace}", ("system:masters",))
    config = v1beta2.server.kubeconfig_dict(workload_user, "prod-admin@prod")
    secret = f"/api/v1/namespaces/{namespace}/secrets/prod-kubeconfig"
    patch = {"data": {"value": base64.b64encode(yaml.safe_dump(config).encode()).decode()}}
    v1beta2.api.request("PATCH", secret, patch, "application/merge-patch+json")
    key = workload_user.key.read_bytes()
    before = set(Path(tempfile.gettempdir()).iterdir())

    result = run_cli(capsys, "describe", "-n", namespace, "--kubeconfig", str(v1beta2.kubeconfig))

    assert (result.code, result.err) == (0, "")
    assert "Nodes matched 2" in result.out  # the Secret was used
    written = [p for p in set(Path(tempfile.gettempdir()).iterdir()) - before if p.is_file()]
    assert not [p for p in written if key in p.read_bytes()]
    assert key not in result.out.encode()


def test_describe_by_name_and_by_cluster(mgmt, capsys) -> None:
    namespace, _, _ = load(mgmt, "capd")
    config = str(mgmt.kubeconfig)
    by_name = run_cli(
        capsys, "describe", "dev-mp-0", "-n", namespace, "--kubeconfig", config, "-o", "json"
    )
    by_cluster = run_cli(
        capsys,
        "describe",
        "--cluster",
        "dev",
        "-n",
        namespace,
        "--kubeconfig",
        config,
        "-o",
        "json",
    )
    pools = [
        [p["name"] for c in json.loads(r.out)["clusters"] for p in c["machinePools"]]
        for r in (by_name, by_cluster)
    ]
    assert pools == [["dev-mp-0"], ["dev-mp-0"]]
    missing = run_cli(capsys, "describe", "nope", "-n", namespace, "--kubeconfig", config)
    assert (missing.code, missing.err) == (
        1,
        f'error: machinepools.cluster.x-k8s.io "nope" not found in namespace "{namespace}"\n',
    )


def test_a_secret_asking_to_run_a_command_is_refused(v1beta2, capsys, tmp_path) -> None:
    import base64

    import yaml

    namespace, _, _ = load(v1beta2, "aws-asg")
    marker = tmp_path / "ran"
    config = v1beta2.server.kubeconfig_dict(v1beta2.server.admin, "prod-admin@prod")
    config["users"][0]["user"] = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": "sh",
            "args": ["-c", f"touch {marker}"],
        }
    }
    patch = {"data": {"value": base64.b64encode(yaml.safe_dump(config).encode()).decode()}}
    v1beta2.api.request(
        "PATCH",
        f"/api/v1/namespaces/{namespace}/secrets/prod-kubeconfig",
        patch,
        "application/merge-patch+json",
    )

    result = run_cli(capsys, "describe", "-n", namespace, "--kubeconfig", str(v1beta2.kubeconfig))

    assert result.code == 0
    assert not marker.exists()
    assert result.err.splitlines() == [
        f"warning: Nodes of Cluster {namespace}/prod are not shown: the kubeconfig in Secret {namespace}/prod-kubeconfig "
        "uses exec; from a Secret only inline credentials are used"
    ]


def test_unreadable_infra_machines_raise_no_false_alarms(v1beta2, capsys) -> None:
    namespace, _, _ = load(v1beta2, "azure-vmss")
    viewer = v1beta2.server.add_user(f"no-ampm-{namespace}")
    rules = [
        {"apiGroups": ["cluster.x-k8s.io"], "resources": ["*"], "verbs": ["get", "list"]},
        {"apiGroups": ["bootstrap.cluster.x-k8s.io"], "resources": ["*"], "verbs": ["get", "list"]},
        {
            "apiGroups": ["infrastructure.cluster.x-k8s.io"],
            "resources": ["azuremachinepools"],
            "verbs": ["get", "list"],
        },
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]},
        READ_EVENTS,
    ]
    v1beta2.grant(viewer.name, namespace, rules)

    result = run_cli(
        capsys, "describe", "-n", namespace, "--kubeconfig", str(viewer.kubeconfig), "-o", "json"
    )

    assert result.code == 0
    [warning] = result.err.splitlines()
    assert warning.startswith("warning: cannot read AzureMachinePoolMachine objects")
    instances = json.loads(result.out)["clusters"][0]["machinePools"][0]["instances"]
    problems = {i["machine"]["name"]: i["problems"] for i in instances}
    assert problems["vmss-workers-1"] == []
    assert all("not found" not in p for ps in problems.values() for p in ps)


def test_a_pools_view_holds_its_stray_node_live(mgmt, loader, tmp_path, capsys) -> None:
    """describe NAME reads only the named pool's objects but every MachinePool of its
    namespace: the Node the Cluster's view lists as most likely the pool's is in the pool's
    view too, live as offline, and diagnose NAME judges it."""
    namespace, _, objects = loader("azure-image-drift")
    [pool] = [
        o["metadata"]["name"]
        for o in objects
        if o["kind"] == "MachinePool" and o["metadata"]["name"].startswith("vmss-batch")
    ]
    [stray] = [
        o["metadata"]["name"]
        for o in objects
        if o["kind"] == "Node"
        and o["metadata"]["name"].startswith(pool)
        and o["metadata"]["name"].endswith("-000002")
    ]
    config = ("--kubeconfig", str(mgmt.kubeconfig))
    view = ("-n", namespace, "--now", AT)

    live = run_cli(capsys, "describe", pool, *view, *config)
    assert (live.code, live.err) == (0, "")
    offline = run_cli(
        capsys, "describe", pool, *view, *kubectl_dump(mgmt, namespace, objects, tmp_path)
    )
    assert live.out == offline.out
    assert f"Node {stray}" in live.out
    assert "1 most likely of " + pool in live.out

    diagnosis = run_cli(capsys, "diagnose", pool, *view, *config, "-o", "json")
    about = {f["code"] for f in json.loads(diagnosis.out)["findings"] if stray in f["subject"]}
    assert about == {"MP0104", "MP0801"}


def test_an_instance_that_never_joined_names_the_clouds_commands_live(mgmt, loader, capsys) -> None:
    """The ASG instance without a Node, as the live objects give it: its ID and zone from its
    providerID, the pool's name and launch template, and the AWS commands to run by hand, in
    text and JSON alike."""
    namespace, _, objects = loader("aws-asg")
    [pool] = [o for o in objects if o["kind"] == "MachinePool"]
    [pid] = [p for p in pool["spec"]["providerIDList"] if p.startswith("aws:///eu-west-1c/")]
    instance = pid.rsplit("/", 1)[1]
    view = ("-n", namespace, "--kubeconfig", str(mgmt.kubeconfig), "--now", AT)

    text = run_cli(capsys, "describe", *view)
    assert (text.code, text.err) == (0, "")
    assert "Cloud:                AWS Auto Scaling Group asg-workers, m6i.xlarge" in text.out
    assert f"Never joined:         {instance} (eu-west-1c): no Node has its providerID" in text.out

    document = json.loads(run_cli(capsys, "describe", *view, "-o", "json").out)
    [described] = document["clusters"][0]["machinePools"]
    assert described["cloud"]["images"] == [
        {"label": "launch template", "value": "lt-0a1b2c3d4e5f67890 (version 4)"}
    ]
    [never] = [i["cloud"] for i in described["instances"] if i["cloud"]["joined"] is False]
    assert (never["id"], never["zone"]) == (instance, "eu-west-1c")
    assert (
        never["inspect"]
        == f"aws ec2 describe-instances --region eu-west-1 --instance-ids {instance}"
    )
    assert never["replace"] == (
        "aws autoscaling terminate-instance-in-auto-scaling-group --region eu-west-1 "
        f"--instance-id {instance} --no-should-decrement-desired-capacity"
    )
