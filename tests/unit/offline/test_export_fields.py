"""What an export keeps of each object: a marker planted in every string field of realistic
objects of every kind it reads, and in an unknown field at every level of each, comes out of the
bundle only in the fields the allow-list keeps on purpose."""

from __future__ import annotations

import copy
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from support.healthchecks import checked_status, health_check
from support.objects import T0
from support.scenarios import SCENARIOS, condition, core_manager, kubeadm_config, uid

from kubectl_machinepool.model.snapshot import Snapshot, WorkloadNodes
from kubectl_machinepool.offline import bundlefiles, export
from kubectl_machinepool.offline.exportfields import REMOVED

Obj = dict[str, Any]
CAPTURED = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)
VERSIONS = export.Versions(
    "0.0.0", "v1.14.0", "image of Deployment capi-system/capi-controller-manager"
)
MARKER = re.compile(r"MARK[0-9]{6}X")
UNKNOWN = "someFutureField"


def kubeadm_config_with_credentials(generation: str) -> Obj:
    """What CABPK users put in a KubeadmConfig: a bootstrap token, a TLS bootstrap token, a
    discovery kubeconfig whose user has an auth-provider and an exec plugin, inline files,
    users, ignition."""
    config = kubeadm_config(generation, "ns", "prod", "creds")
    user = {
        "authProvider": {
            "name": "oidc",
            "config": {"id-token": "eyJhbGciOi.id.token", "client-secret": "hunter2"},
        },
        "exec": {
            "command": "/bin/get-token",
            "args": ["--secret", "s3cr3t"],
            "env": [{"name": "TOKEN", "value": "t0ps3cret"}],
        },
    }
    config["spec"]["joinConfiguration"]["discovery"] = {
        "bootstrapToken": {"token": "abcdef.0123456789abcdef", "apiServerEndpoint": "10.0.0.1"},
        "tlsBootstrapToken": "tls-bootstrap-secret",
        "file": {
            "kubeConfig": {
                "cluster": {"server": "https://10.0.0.1:6443", "certificateAuthorityData": "Q0E="},
                "user": user,
            }
        },
    }
    config["spec"]["files"] = [{"path": "/etc/x", "content": "inline-secret", "owner": "root"}]
    config["spec"]["users"] = [{"name": "ops", "passwd": "$6$hash", "sshAuthorizedKeys": ["k"]}]
    config["spec"]["ignition"] = {
        "containerLinuxConfig": {"additionalConfig": "passwd: {users: [{password_hash: x}]}"}
    }
    return config


def metadata(kind: str, name: str) -> Obj:
    labels = {"cluster.x-k8s.io/cluster-name": "prod"}
    return {"name": name, "namespace": "ns", "uid": uid(kind, "ns", name), "labels": labels}


def control_plane(generation: str) -> Obj:
    return {
        "apiVersion": f"controlplane.cluster.x-k8s.io/{generation}",
        "kind": "KubeadmControlPlane",
        "metadata": metadata("KubeadmControlPlane", "prod-control-plane"),
        "spec": {
            "version": "v1.31.4",
            "replicas": 3,
            "kubeadmConfigSpec": {"files": [{"path": "/etc/y", "content": "cp-secret"}]},
        },
        "status": {"version": "v1.31.4", "conditions": [condition("RollingOut", "False")]},
    }


def aso_pool(generation: str) -> Obj:
    """CAPZ's AzureASOManagedMachinePool, its ASO agent pool embedded."""
    return {
        "apiVersion": f"infrastructure.cluster.x-k8s.io/{generation}",
        "kind": "AzureASOManagedMachinePool",
        "metadata": metadata("AzureASOManagedMachinePool", "aso"),
        "spec": {
            "resources": [
                {
                    "apiVersion": "containerservice.azure.com/v1api20240901",
                    "kind": "ManagedClustersAgentPool",
                    "metadata": {"name": "aso-pool"},
                    "spec": {
                        "orchestratorVersion": "1.31.4",
                        "availabilityZones": ["1", "2"],
                        "owner": {"name": "prod"},
                        "linuxProfile": {"ssh": {"publicKeys": [{"keyData": "ssh-rsa AAA"}]}},
                    },
                }
            ]
        },
        "status": {"ready": True, "replicas": 2},
    }


def events_api_event() -> Obj:
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "workers.1", "namespace": "ns"},
        "regarding": {"kind": "MachinePool", "name": "workers", "namespace": "ns"},
        "reason": "SuccessfulCreate",
        "note": "created",
        "type": "Normal",
        "eventTime": T0,
        "reportingController": "machinepool-controller",
        "series": {"count": 2, "lastObservedTime": T0},
    }


def every_kind() -> list[Obj]:
    """Realistic objects of every kind an export reads, in both generations."""
    objects: list[Obj] = []
    for generation in ("v1beta2", "v1beta1"):
        for build in SCENARIOS.values():
            objects += build(generation, "ns", "")
        selector = {"matchLabels": {"cluster.x-k8s.io/pool-name": "workers"}}
        objects.append(
            health_check(
                generation,
                "ns",
                "workers-unhealthy",
                "prod",
                selector,
                max_unhealthy="40%",
                template=("infrastructure.cluster.x-k8s.io/v1beta1", "Metal3Remediation", "r"),
                status=checked_status(generation, ["m-1"], 1, 1),
            )
        )
        objects += [
            kubeadm_config_with_credentials(generation),
            control_plane(generation),
            aso_pool(generation),
        ]
    args = ("--additional-sync-machine-labels=team", "--feature-gates=MachinePool=true")
    manager = core_manager("capi-system", args=args)
    manager["spec"]["template"]["spec"]["containers"][0]["env"] = [
        {"name": "AWS_SECRET", "value": "aws-secret"}
    ]
    return [*objects, manager, events_api_event()]


def planted(value: Any, path: str, where: dict[str, str]) -> Any:
    """The value with every string replaced by a new marker (apiVersion and kind excepted: they
    say which allow-list applies) and an unknown field added to every mapping. where: each
    marker's path, any key of a label, annotation or matchLabels map named `*`."""
    if isinstance(value, str):
        marker = f"MARK{len(where):06d}X"
        where[marker] = path
        return marker
    if isinstance(value, list):
        return [planted(v, f"{path}[]", where) for v in value]
    if not isinstance(value, dict):
        return value
    keep = ("apiVersion", "kind") if path in ("", "spec.resources[]") else ()
    string_map = path.endswith(("labels", "annotations", "matchLabels"))
    copied = {
        k: v if k in keep else planted(v, f"{path}.{'*' if string_map else k}".lstrip("."), where)
        for k, v in value.items()
    }
    copied[UNKNOWN] = planted("x", f"{path}.{'*' if string_map else UNKNOWN}".lstrip("."), where)
    return copied


def exported_texts(objects: list[Obj], target: Path) -> str:
    nodes = [o for o in objects if o["kind"] == "Node"]
    node_events = [o for o in objects if o["kind"] == "Event" and "Node" in str(o)]
    management = [o for o in objects if o["kind"] != "Node"]
    snapshot = Snapshot.of(
        management, workloads=[WorkloadNodes("ns", "prod", tuple(nodes), events=tuple(node_events))]
    )
    documents = export.documents_of(
        snapshot, captured=CAPTURED, scope=export.Scope("ns"), versions=VERSIONS
    )
    bundlefiles.write(documents, str(target), 0)
    with bundlefiles.tarfile.open(target) as tar:
        return "".join(tar.extractfile(m).read().decode() for m in tar if m.isreg())


# The string fields an export keeps, and why. Every kind but Secret keeps its identity, its
# labels and annotations and its owner references: they join objects, diff-metadata compares
# them, --redact works on them.
IDENTITY = {
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "metadata.creationTimestamp",
    "metadata.deletionTimestamp",
    "metadata.resourceVersion",
    "metadata.finalizers[]",
    "metadata.labels.*",
    "metadata.annotations.*",
    *(f"metadata.ownerReferences[].{k}" for k in ("apiVersion", "kind", "name", "uid")),
}
# What describe and diagnose show of any object: its conditions, phase and failure texts.
CONDITION_LISTS = (
    "status.conditions",
    "status.v1beta2.conditions",
    "status.deprecated.v1beta1.conditions",
)
STATE = {
    *(
        f"{where}[].{key}"
        for where in CONDITION_LISTS
        for key in ("type", "status", "reason", "message", "lastTransitionTime", "severity")
    ),
    "status.phase",
    "status.failureReason",
    "status.failureMessage",
}
REF = ("apiGroup", "apiVersion", "kind", "name")
# What the readers read of each kind besides (provider kinds: as the provider registry says).
READ = {
    "MachinePool": {
        "spec.clusterName",
        "spec.failureDomains[]",
        "spec.providerIDList[]",
        "spec.template.metadata.labels.*",
        "spec.template.metadata.annotations.*",
        "spec.template.spec.version",
        "spec.template.spec.bootstrap.dataSecretName",
        *(f"spec.template.spec.bootstrap.configRef.{k}" for k in REF),
        *(f"spec.template.spec.infrastructureRef.{k}" for k in REF),
        "status.nodeRefs[].name",
        "status.nodeRefs[].uid",
    },
    "Machine": {
        "spec.providerID",
        "spec.version",
        *(f"spec.infrastructureRef.{k}" for k in REF),
        "status.nodeRef.name",
    },
    "Cluster": {"spec.topology.version", *(f"spec.controlPlaneRef.{k}" for k in REF)},
    "MachineHealthCheck": {
        "spec.clusterName",
        "spec.selector.matchLabels.*",
        "spec.maxUnhealthy",
        "spec.unhealthyConditions[].type",
        "spec.unhealthyConditions[].status",
        "spec.unhealthyConditions[].timeout",
        "spec.checks.unhealthyNodeConditions[].type",
        "spec.checks.unhealthyNodeConditions[].status",
        "spec.remediation.triggerIf.unhealthyLessThanOrEqualTo",
        *(f"spec.remediationTemplate.{k}" for k in ("apiVersion", "kind", "name")),
        *(f"spec.remediation.templateRef.{k}" for k in ("apiVersion", "kind", "name")),
    },
    "Node": {
        "spec.providerID",
        "spec.taints[].key",
        "spec.taints[].effect",
        "status.nodeInfo.kubeletVersion",
    },
    "Event": {
        *(f"involvedObject.{k}" for k in ("apiVersion", "kind", "name", "namespace")),
        *(f"regarding.{k}" for k in ("kind", "name", "namespace")),
        "type",
        "reason",
        "message",
        "note",
        "firstTimestamp",
        "lastTimestamp",
        "eventTime",
        "series.lastObservedTime",
        "source.component",
        "reportingController",
    },
    # The core controller's image (the Cluster API version); its args only when sync flags.
    "Deployment": {"spec.template.spec.containers[].name", "spec.template.spec.containers[].image"},
    # Rules ask of a Secret only whether one by that name exists.
    "Secret": set(),
    "KubeadmConfig": set(),
    "KubeadmControlPlane": {"spec.version", "status.version"},
    # And describe's Cloud line: a pool's name, instance type and image in its cloud.
    "AWSMachinePool": {
        "spec.availabilityZones[]",
        "status.launchTemplateVersion",
        "spec.awsLaunchTemplate.instanceType",
        "status.launchTemplateID",
    },
    "AWSManagedMachinePool": {
        "spec.amiType",
        "spec.amiVersion",
        "spec.availabilityZones[]",
        "spec.eksNodegroupName",
        "spec.instanceType",
    },
    "AzureMachinePool": {
        *(
            f"{where}.{image}.{key}"
            for where in ("spec.template.image", "status.image")
            for image, keys in {
                "computeGallery": ("gallery", "version"),
                "sharedGallery": ("gallery", "version"),
                "marketplace": ("publisher", "offer", "version"),
            }.items()
            for key in keys
        ),
        "status.provisioningState",
        "spec.template.vmSize",
        "status.image.computeGallery.name",
    },
    "AzureMachinePoolMachine": {"spec.instanceID"},
    "AzureManagedMachinePool": {"spec.availabilityZones[]", "spec.name", "spec.sku"},
    "AzureASOManagedMachinePool": {
        "spec.resources[].metadata.name",
        "spec.resources[].spec.orchestratorVersion",
        "spec.resources[].spec.availabilityZones[]",
    },
    "ManagedClustersAgentPool": {
        "spec.orchestratorVersion",
        "status.currentOrchestratorVersion",
        "status.nodeImageVersion",
    },
    "DockerMachinePool": {"spec.template.customImage"},
    "DockerMachine": set(),
    "GCPManagedMachinePool": {"spec.nodeLocations[]", "spec.machineType", "spec.nodePoolName"},
    "OCIMachinePool": {
        "spec.placementDetails[].availabilityDomain",
        "spec.instanceConfiguration.shape",
    },
    "OCIMachinePoolMachine": {"spec.ocid"},
    "ScalewayManagedMachinePool": {"spec.zone", "spec.nodeType"},
}
# What rules read of any provider object: which kind an infra pool's instances are, and the
# providerID that joins an infra machine to its Node (only infra pools say which kinds are
# machines, so every provider kind keeps it).
PROVIDER = {"status.infrastructureMachineKind", "spec.providerID"}
CORE = {"MachinePool", "Machine", "Cluster", "MachineHealthCheck", "Node"}
# Fields that hold credentials, each planted in the objects above: never kept, nor anything
# under them. (A bootstrap token keeps its id: test_export_bundle; here it is a marker alone.)
CREDENTIALS = {
    "KubeadmConfig": {
        "spec.joinConfiguration.discovery.bootstrapToken.token",
        "spec.joinConfiguration.discovery.tlsBootstrapToken",
        "spec.joinConfiguration.discovery.file.kubeConfig.user.authProvider.config.id-token",
        "spec.joinConfiguration.discovery.file.kubeConfig.user.authProvider.config.client-secret",
        "spec.joinConfiguration.discovery.file.kubeConfig.user.exec.env[].value",
        "spec.joinConfiguration.discovery.file.kubeConfig.user.exec.args[]",
        "spec.joinConfiguration.discovery.file.kubeConfig.cluster.certificateAuthorityData",
        "spec.ignition.containerLinuxConfig.additionalConfig",
        "spec.files[].content",
        "spec.users[].passwd",
    },
    "KubeadmControlPlane": {"spec.kubeadmConfigSpec.files[].content"},
    "Secret": {"data.value", "data.format"},
    "Deployment": {"spec.template.spec.containers[].env[].value"},
    "AzureASOManagedMachinePool": {"spec.resources[].spec.linuxProfile.ssh.publicKeys[].keyData"},
}


def allowed(kind: str, path: str) -> bool:
    if kind == "Secret":
        return path in {"metadata.name", "metadata.namespace"}
    if path in IDENTITY or path in READ[kind]:
        return True
    if kind in ("Event", "Deployment"):
        return False
    return path in STATE or (kind not in CORE and path in PROVIDER)


def test_a_marker_in_any_string_comes_out_only_where_the_allow_list_keeps_it(tmp_path) -> None:
    where: dict[str, str] = {}
    kind_of: dict[str, str] = {}
    objects = []
    for obj in every_kind():
        before = set(where)
        objects.append(planted(copy.deepcopy(obj), "", where))
        kind_of.update((marker, obj["kind"]) for marker in set(where) - before)
    text = exported_texts(objects, tmp_path / "export.tar.gz")

    planted_fields = {(kind_of[m], p) for m, p in where.items()}
    kept = {(kind_of[m], where[m]) for m in MARKER.findall(text)}
    assert {kind for kind, _ in planted_fields} == set(READ)
    for kind, paths in CREDENTIALS.items():
        assert {(kind, p) for p in paths} <= planted_fields
        assert not {(kind, p) for p in paths} & kept
    # An unknown field is kept nowhere but as a key of a label or annotation map.
    assert not [path for _, path in kept if UNKNOWN in path]
    assert kept == {(kind, path) for kind, path in planted_fields if allowed(kind, path)}


@pytest.mark.parametrize("generation", ["v1beta2", "v1beta1"])
def test_the_kubeadm_credentials_that_leaked_are_gone(generation, tmp_path) -> None:
    config = kubeadm_config_with_credentials(generation)
    text = exported_texts([config], tmp_path / "export.tar.gz")
    for leaked in ("tls-bootstrap-secret", "eyJhbGciOi", "hunter2", "password_hash", "0123456789"):
        assert leaked not in text
    # The token's id stays: the missing-token rule names its Secret by it.
    assert f'"token":"abcdef.{REMOVED}"' in text
