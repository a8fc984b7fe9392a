"""diagnose against the real API server: the reads rules need, and the same answers as offline."""

from __future__ import annotations

import json

from support.management import create_scenario, kubectl_dump
from support.objects import NOW
from support.run import run_cli
from support.scenarios import SCENARIOS, core_manager

AT = NOW.isoformat().replace("+00:00", "Z")


def diagnosis(mgmt, namespace: str, capsys, *extra: str) -> dict:
    result = run_cli(
        capsys,
        "diagnose",
        "-n",
        namespace,
        "--kubeconfig",
        str(mgmt.kubeconfig),
        "--now",
        AT,
        "-o",
        "json",
        *extra,
    )
    assert result.code == 0, result.err
    return json.loads(result.out)


def load(mgmt, scenario: str, change=None) -> str:
    namespace = mgmt.new_namespace()
    objects = SCENARIOS[scenario](mgmt.generation, namespace, namespace.removeprefix("t-"))
    if change:
        change(objects)
    create_scenario(mgmt, objects)
    return namespace


def test_stuck_scaling_up_live(mgmt, capsys) -> None:
    namespace = load(mgmt, "aws-asg")
    doc = diagnosis(mgmt, namespace, capsys)
    [finding] = [f for f in doc["findings"] if f["code"] == "MP0101"]
    assert "kubernetes-sigs/cluster-api#10541" in finding["refs"]
    assert f"i-0{namespace.removeprefix('t-')}003a5f12" in finding["message"]
    assert doc["summary"]["error"] == 0


def test_capi_version_from_the_core_controller_deployment(v1beta2, capsys) -> None:
    """The version-dependent panic rule (MP0501) is an error once the image tag says v1.12."""

    def failing(objects):
        next(o for o in objects if o["kind"] == "OCIMachinePool")["status"].update(
            failureReason="InstancePoolProvisionFailed", failureMessage="Out of host capacity"
        )

    namespace = load(v1beta2, "oci-instance-pool", failing)
    before = [f for f in diagnosis(v1beta2, namespace, capsys)["findings"] if f["code"] == "MP0501"]
    assert [f["severity"] for f in before] == ["warning"]  # version unknown yet

    system = v1beta2.new_namespace()
    v1beta2.api.create(
        core_manager(system, "registry.example/cluster-api/cluster-api-controller:v1.12.3")
    )
    try:
        doc = diagnosis(v1beta2, namespace, capsys)
        assert doc["capiVersion"] == {
            "version": "v1.12.3",
            "source": f"image of Deployment {system}/capi-controller-manager",
        }
        assert [f["severity"] for f in doc["findings"] if f["code"] == "MP0501"] == ["error"]
        overridden = diagnosis(v1beta2, namespace, capsys, "--capi-version", "v1.10.5")
        assert [f for f in overridden["findings"] if f["code"] == "MP0501"] == []
    finally:
        v1beta2.api.request(
            "DELETE", f"/apis/apps/v1/namespaces/{system}/deployments/capi-controller-manager"
        )


def test_missing_bootstrap_data_and_token_secrets_live(v1beta2, capsys) -> None:
    def with_token(objects):
        config = next(o for o in objects if o["kind"] == "KubeadmConfig")
        config["spec"]["joinConfiguration"]["discovery"] = {
            "bootstrapToken": {"token": "q7w8e9.0123456789abcdef"}
        }

    namespace = load(v1beta2, "capd", with_token)
    assert {"MP1502", "MP1503"} & {
        f["code"] for f in diagnosis(v1beta2, namespace, capsys)["findings"]
    } == {"MP1503"}

    v1beta2.api.create({
        "apiVersion": "v1", "kind": "Secret", "type": "bootstrap.kubernetes.io/token",
        "metadata": {"name": "bootstrap-token-q7w8e9", "namespace": "kube-system"},
        "stringData": {"token-id": "q7w8e9", "token-secret": "0123456789abcdef"},
    })  # fmt: skip
    v1beta2.api.request("DELETE", f"/api/v1/namespaces/{namespace}/secrets/dev-mp-0-bootstrap-data")

    codes = {f["code"] for f in diagnosis(v1beta2, namespace, capsys)["findings"]}
    assert "MP1502" in codes
    assert "MP1503" not in codes


def test_fail_on_sets_the_exit_code(v1beta2, capsys) -> None:
    namespace = load(v1beta2, "aws-asg")
    config = str(v1beta2.kubeconfig)
    assert (
        run_cli(capsys, "diagnose", "-n", namespace, "--kubeconfig", config, "--now", AT).code == 0
    )
    assert (
        run_cli(
            capsys,
            "diagnose",
            "-n",
            namespace,
            "--kubeconfig",
            config,
            "--now",
            AT,
            "--fail-on",
            "error",
        ).code
        == 0
    )
    failed = run_cli(
        capsys,
        "diagnose",
        "-n",
        namespace,
        "--kubeconfig",
        config,
        "--now",
        AT,
        "--fail-on",
        "warning",
    )
    assert failed.code == 4
    assert failed.err.strip() == "error: 1 finding(s) at or above warning (--fail-on)"


def test_live_diagnosis_equals_offline_of_the_same_objects(mgmt, capsys, tmp_path) -> None:
    namespace = mgmt.new_namespace()
    objects = SCENARIOS["azure-vmss"](mgmt.generation, namespace, namespace.removeprefix("t-"))
    create_scenario(mgmt, objects)
    live = run_cli(
        capsys, "diagnose", "-n", namespace, "--kubeconfig", str(mgmt.kubeconfig), "--now", AT
    )
    offline = run_cli(
        capsys,
        "diagnose",
        "-n",
        namespace,
        *kubectl_dump(mgmt, namespace, objects, tmp_path),
        "--now",
        AT,
    )
    assert live.code == offline.code == 0
    assert live.out == offline.out
    assert "MP0102" in live.out
