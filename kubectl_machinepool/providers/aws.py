"""Cluster API Provider AWS (CAPA): EC2 Auto Scaling groups, EKS managed node groups, ROSA HCP
node pools. Field paths checked against the json tags of kubernetes-sigs/cluster-api-provider-aws
2cf09d78547d (v2.11.1): exp/api/v1beta2 (awsmachinepool, awsmanagedmachinepool, rosamachinepool,
types.go), api/v1beta2/types.go. CAPA has no releaseVersion field: the EKS AMI release is
spec.amiVersion; an AWSMachinePool has no version field (an explicit AMI id is opaque; without
one CAPA looks the AMI up by the MachinePool's version).
"""

from __future__ import annotations

from kubectl_machinepool.providers.operations import Operations
from kubectl_machinepool.providers.readings import EKS_RELEASE
from kubectl_machinepool.providers.records import (
    INFRA_GROUP,
    REPLACED,
    CloudFields,
    InstanceDeletion,
    Provider,
    RollingSignal,
    VersionField,
    ZoneSource,
)
from kubectl_machinepool.providers.rolls import (
    BOOTSTRAP_REF,
    BOOTSTRAP_SECRET,
    VERSION,
    Effect,
    Rolls,
    Rule,
    When,
    bootstrap_rule,
    path,
)
from kubectl_machinepool.providers.upgrades import Upgrade, UpgradeField

_ASG_DOCS = (
    "AWS EC2 Auto Scaling user guide: Availability Zone distribution and rebalancing activities"
)


def _capa_zones(
    subnets: str, rebalance: str, source: str, suspended: tuple[str, ...] = ()
) -> ZoneSource:
    """CAPA places the ASG by its subnets, else its own zones, else spec.failureDomains, else the
    cluster's private subnets (pkg/cloud/scope/shared.go)."""
    return ZoneSource(
        fields=("spec.availabilityZones",),
        placed_by=(subnets,),
        failure_domains=True,
        replacement="the ASG launches the replacement in the zone with the fewest instances",
        rebalance=rebalance,
        rebalance_suspended=suspended,
        source=source,
    )


# The region is the zone's leading `<area>-<direction>-<n>` (eu-west-1c, us-west-2-lax-1a);
# without one the CLI's configured region is used.
_EC2_DESCRIBE = (
    "aws ec2 describe-instances --region {region} --instance-ids {instance}",
    "aws ec2 describe-instances --instance-ids {instance}",
)
# The group launches a replacement (AWS CLI: autoscaling terminate-instance-in-auto-scaling-group).
_ASG_TERMINATE = (
    "aws autoscaling terminate-instance-in-auto-scaling-group --region {region} "
    "--instance-id {instance} --no-should-decrement-desired-capacity",
    "aws autoscaling terminate-instance-in-auto-scaling-group --instance-id {instance} "
    "--no-should-decrement-desired-capacity",
)
_LAUNCH_TEMPLATE = (
    ("launch template", "{status.launchTemplateID} (version {status.launchTemplateVersion})"),
    ("launch template", "{status.launchTemplateID}"),
)


# What starts an ASG instance refresh: a new launch template version that changes more than
# the user data (pkg/cloud/services/ec2/launchtemplate.go ReconcileLaunchTemplate).
_LAUNCH_TEMPLATE_CHANGE = "pkg/cloud/services/ec2/launchtemplate.go ReconcileLaunchTemplate"
_REFRESH = "a new launch template version, and CAPA starts an ASG instance refresh"
_NO_REFRESH = When(
    path("spec.refreshPreferences.disable"),
    Effect.NEW_ONLY,
    "spec.refreshPreferences.disable: a new launch template version without an instance "
    "refresh, which only new instances get",
    "exp/controllers/awsmachinepool_controller.go",
    value=True,
)
_PINNED_AMI = When(
    path("spec.awsLaunchTemplate.ami.id"),
    Effect.ROLLS_NONE,
    "the AMI is pinned in spec.awsLaunchTemplate.ami.id: the new version reaches no instance "
    "until the AMI changes too (cluster-api#7248)",
    "pkg/cloud/services/ec2/launchtemplate.go DiscoverLaunchTemplateAMI",
)
_ASG_ROLLS = Rolls(
    infra=(
        *(
            Rule(
                path(f"spec.awsLaunchTemplate.{name}"),
                Effect.ROLLS_ALL,
                _REFRESH,
                f"{_LAUNCH_TEMPLATE_CHANGE}, LaunchTemplateNeedsUpdate",
                when=(_NO_REFRESH,),
            )
            for name in (
                "ami",
                "iamInstanceProfile",
                "instanceType",
                "instanceMetadataOptions",
                "spotMarketOptions",
                "capacityReservationId",
                "privateDnsName",
                "sshKeyName",
                "additionalSecurityGroups",
            )
        ),
        Rule(
            path("spec.additionalTags"),
            Effect.ROLLS_ALL,
            "changed tags are " + _REFRESH,
            f"{_LAUNCH_TEMPLATE_CHANGE} tagsChanged",
            surprise="a tag change replaces every instance of an AWSMachinePool",
            when=(_NO_REFRESH,),
        ),
        Rule(
            path("spec.refreshPreferences"),
            Effect.ROLLS_NONE,
            "it says how the next instance refresh goes",
            "pkg/cloud/services/autoscaling/autoscalinggroup.go StartASGInstanceRefresh",
        ),
    ),
    pool=(
        Rule(
            VERSION,
            Effect.ROLLS_ALL,
            "CAPA looks up the AMI of the new version: a new AMI is " + _REFRESH,
            f"{_LAUNCH_TEMPLATE_CHANGE}, DiscoverLaunchTemplateAMI",
            when=(_PINNED_AMI, _NO_REFRESH),
        ),
        *(
            Rule(
                field,
                Effect.ROLLS_ALL,
                "a new data Secret name is " + _REFRESH + " (CAPA#4619)",
                f"{_LAUNCH_TEMPLATE_CHANGE} userDataSecretKeyChanged",
                when=(_NO_REFRESH,),
            )
            for field in (BOOTSTRAP_REF, BOOTSTRAP_SECRET)
        ),
    ),
    bootstrap=bootstrap_rule(
        "user data alone makes a new launch template version without an instance refresh "
        "(CAPA#4071)",
        _LAUNCH_TEMPLATE_CHANGE,
    ),
    strategy=(path("spec.refreshPreferences"),),
    strategy_default="an ASG instance refresh, strategy Rolling, AWS's default preferences "
    "(pkg/cloud/services/autoscaling/autoscalinggroup.go StartASGInstanceRefresh)",
)
_NODEGROUP = "pkg/cloud/services/eks/nodegroup.go"
_EKS_ROLLS = Rolls(
    infra=(
        Rule(
            path("spec.amiVersion"),
            Effect.MANAGED_UPGRADE,
            "CAPA asks EKS to update the node group to the AMI release",
            f"{_NODEGROUP} reconcileNodegroupVersion",
        ),
        Rule(
            path("spec.scaling"),
            Effect.SCALES,
            "CAPA sends the node group's new scaling bounds",
            f"{_NODEGROUP} reconcileNodegroupConfig",
        ),
        *(
            Rule(
                path(f"spec.{name}"),
                Effect.ROLLS_NONE,
                "CAPA updates the node group's configuration in place",
                f"{_NODEGROUP} reconcileNodegroupConfig",
            )
            for name in ("labels", "taints", "updateConfig")
        ),
    ),
    pool=(
        Rule(
            VERSION,
            Effect.MANAGED_UPGRADE,
            "CAPA asks EKS to update the node group one minor per call, to a newer version "
            "only; EKS replaces the nodes as spec.updateConfig allows",
            f"{_NODEGROUP} reconcileNodegroupVersion",
        ),
    ),
    strategy=(path("spec.updateConfig"),),
    strategy_default="EKS's managed node update, one node unavailable at a time (EKS user "
    "guide: managed node update behavior; docs)",
)


PROVIDERS: tuple[Provider, ...] = (
    Provider(
        INFRA_GROUP,
        "AWSMachinePool",
        "Auto Scaling Group",
        # Only with CAPA's MachinePoolMachines feature gate (default off).
        "AWSMachine",
        InstanceDeletion(
            True,
            REPLACED + " (the ASG keeps its desired capacity)",
            False,
            "CAPA ignores the annotation: the ASG termination policy picks the instance, undrained",
            source="controllers/awsmachine_controller.go reconcileDelete; CAPA#2023, CAPA#2574",
        ),
        # CAPA suspends only the processes spec.suspendProcesses names
        # (exp/controllers/awsmachinepool_controller.go).
        zones=_capa_zones(
            "spec.subnets",
            "AZRebalance then evens the zones out, launching before it terminates",
            _ASG_DOCS,
            ("spec.suspendProcesses.processes.azRebalance", "spec.suspendProcesses.all"),
        ),
        cloud=CloudFields(
            "AWS",
            # CAPA names the ASG and its launch template after the AWSMachinePool.
            name=("{metadata.name}",),
            instance_type=("{spec.awsLaunchTemplate.instanceType}",),
            image=(("AMI", "{spec.awsLaunchTemplate.ami.id}"), *_LAUNCH_TEMPLATE),
            machine_id="spec.instanceID",
            inspect=_EC2_DESCRIBE,
            replace=_ASG_TERMINATE,
            source="exp/api/v1beta2/awsmachinepool_types.go; pkg/cloud/scope/machinepool.go Name, "
            "LaunchTemplateName; api/v1beta2/awsmachine_types.go",
        ),
        autoscaler_scale_in="CAPA ignores cluster.x-k8s.io/delete-machine: on scale-down the ASG "
        "terminates an arbitrary instance, undrained",
        model_version_field="status.launchTemplateVersion",
        upgrade=Upgrade(
            fields=(
                UpgradeField(
                    "spec.awsLaunchTemplate.ami.id",
                    None,
                    "spec.awsLaunchTemplate.ami.id",
                    "pkg/cloud/services/ec2/launchtemplate.go DiscoverLaunchTemplateAMI",
                ),
            ),
        ),
        rolls=_ASG_ROLLS,
        operations=Operations(
            rolls="a new launch template version (a new AMI, instance type or bootstrap data, "
            "or a new bootstrap config name, CAPA#4619) makes CAPA start an ASG instance refresh "
            "as spec.refreshPreferences says (pkg/cloud/services/autoscaling/autoscalinggroup.go "
            "StartASGInstanceRefresh)",
            pause_caveat="an ASG instance refresh already started goes on in AWS, and the ASG "
            "still replaces unhealthy instances and rebalances zones (AWS EC2 Auto Scaling user "
            "guide: instance refresh, health checks; docs)",
            machines_need="CAPA's MachinePoolMachines feature gate (EXP_MACHINE_POOL_MACHINES, "
            "alpha, off by default; feature/feature.go)",
        ),
    ),
    Provider(
        INFRA_GROUP,
        "AWSManagedMachinePool",
        "EKS managed node group",
        None,
        # The EKS AMI release; CAPA sends it apart from the Kubernetes version it takes from
        # the MachinePool (pkg/cloud/services/eks/nodegroup.go reconcileNodegroupVersion).
        version_fields=(
            VersionField(
                "spec.amiVersion", EKS_RELEASE, "exp/api/v1beta2/awsmanagedmachinepool_types.go"
            ),
        ),
        zones=_capa_zones(
            "spec.subnetIDs",
            "the node group's ASG evens the zones out (AZRebalance, which EKS relies on)",
            _ASG_DOCS + "; EKS user guide: managed node update behavior",
        ),
        model_version_field="status.launchTemplateVersion",
        node_image_label="eks.amazonaws.com/nodegroup-image",
        cloud=CloudFields(
            "AWS",
            # Defaulted by CAPA's webhook; the node group's ASG replaces a terminated instance.
            name=("{spec.eksNodegroupName}",),
            instance_type=("{spec.instanceType}", "{spec.awsLaunchTemplate.instanceType}"),
            image=(
                ("AMI type", "{spec.amiType}"),
                ("AMI release", "{spec.amiVersion}"),
                ("AMI", "{spec.awsLaunchTemplate.ami.id}"),
                *_LAUNCH_TEMPLATE,
            ),
            inspect=_EC2_DESCRIBE,
            replace=_ASG_TERMINATE,
            source="exp/api/v1beta2/awsmanagedmachinepool_types.go; "
            "pkg/cloud/scope/managednodegroup.go NodegroupName",
        ),
        upgrade=Upgrade(
            fields=(
                # Pinned, it is a second node group update after the version's (nodegroup.go
                # reconcileNodegroupVersion sends a version or a release, never both).
                UpgradeField(
                    "spec.amiVersion",
                    None,
                    "spec.amiVersion",
                    "pkg/cloud/services/eks/nodegroup.go reconcileNodegroupVersion",
                ),
                UpgradeField(
                    "spec.awsLaunchTemplate.ami.id",
                    None,
                    "spec.awsLaunchTemplate.ami.id",
                    "pkg/cloud/services/ec2/launchtemplate.go DiscoverLaunchTemplateAMI",
                ),
            ),
            steps_minors="CAPA updates an EKS node group one minor per call "
            "(pkg/cloud/services/eks/nodegroup.go): a pool several minors behind rolls once per "
            "minor",
        ),
        rolls=_EKS_ROLLS,
        operations=Operations(
            rolls="a new version, spec.amiVersion or launch template makes CAPA ask EKS for a "
            "node group update, which replaces the nodes as spec.updateConfig allows "
            "(pkg/cloud/services/eks/nodegroup.go reconcileNodegroupVersion)",
            pause_caveat="an EKS node group update already in progress goes on in AWS (EKS user "
            "guide: managed node update behavior; docs)",
        ),
    ),
    Provider(
        INFRA_GROUP,
        "ROSAMachinePool",
        "ROSA HCP node pool",
        None,
        rolling=(RollingSignal("RosaMachinePoolUpgrading", "True"),),
        zones=ZoneSource(fields=("spec.availabilityZone",), placed_by=("spec.subnet",)),
        # The nodes are EC2 instances of the customer's account; OpenShift Cluster Manager
        # replaces them.
        cloud=CloudFields(
            "AWS",
            name=("{spec.nodePoolName}",),
            pool_id=("{status.id}",),
            instance_type=("{spec.instanceType}",),
            inspect=_EC2_DESCRIBE,
            source="exp/api/v1beta2/rosamachinepool_types.go",
        ),
        upgrade=Upgrade(
            deployed=UpgradeField(
                "spec.version",
                None,
                None,
                "exp/controllers/rosamachinepool_controller.go reconcileMachinePoolVersion",
            ),
        ),
        rolls=Rolls(
            infra=(
                Rule(
                    path("spec.version"),
                    Effect.MANAGED_UPGRADE,
                    "CAPA schedules a ROSA node pool upgrade",
                    "exp/controllers/rosamachinepool_controller.go reconcileMachinePoolVersion",
                ),
            ),
            strategy=(path("spec.updateConfig.rollingUpdate"),),
            strategy_default="OpenShift Cluster Manager's default node pool upgrade (not verified)",
        ),
        operations=Operations(
            rolls="a new spec.version makes CAPA schedule a ROSA node pool upgrade, which "
            "replaces the nodes as spec.updateConfig.rollingUpdate allows "
            "(exp/controllers/rosamachinepool_controller.go reconcileMachinePoolVersion)",
            pause_caveat="a node pool upgrade already scheduled in OpenShift Cluster Manager "
            "goes on, and spec.autoRepair still replaces nodes "
            "(exp/api/v1beta2/rosamachinepool_types.go)",
        ),
    ),
)
