"""describe's Cloud line and the commands for an instance that never joined (render/cloud.py):
what the summary says, and that a wrapped command is still the one command for a shell."""

from __future__ import annotations

import shlex
import shutil
import subprocess

import pytest
from support.objects import NOW
from support.scenarios import SCENARIOS
from support.snapshots import NAMESPACE, snapshot_of

from kubectl_machinepool.model.cloud import InstanceCloud, PoolCloud
from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.render.cloud import (
    CONTINUED,
    cloud_line,
    command_lines,
    more_sentence,
    never_joined_sentence,
)
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.tree import TreeOptions, summary_block

TERMINATE = (
    "aws autoscaling terminate-instance-in-auto-scaling-group --region eu-west-1 "
    "--instance-id i-000000000003a5f12 --no-should-decrement-desired-capacity"
)
COMMANDS = [
    TERMINATE,
    "az vmss get-instance-view --resource-group 'rg(prod)' --name vmss-a --instance-id 7",
    "oci compute instance get --instance-id "
    "ocid1.instance.oc1.eu-frankfurt-1.antheljt00000000aaq4antheljt00000000aaq4antheljt",
]


def pool_cloud(**changes: object) -> PoolCloud:
    stray = InstanceCloud(
        "aws:///eu-west-1c/i-0abc", None, "i-0abc", "providerID", "eu-west-1c", "providerID",
        False, "aws ec2 describe-instances --instance-ids i-0abc", None,
    )  # fmt: skip
    fields: dict[str, object] = {
        "cloud": "AWS",
        "kind": "Auto Scaling Group",
        "name": "asg-workers",
        "pool_id": None,
        "instance_type": "m6i.large",
        "images": (("AMI", "ami-0abc"), ("launch template", "lt-0abc (version 3)")),
        "instances": (stray,),
    }
    return PoolCloud(**{**fields, **changes})  # type: ignore[arg-type]


def test_the_cloud_line_names_the_pool_its_instance_type_and_image() -> None:
    assert cloud_line(pool_cloud()) == (
        "AWS Auto Scaling Group asg-workers, m6i.large, AMI ami-0abc, launch template lt-0abc "
        "(version 3)"
    )
    assert cloud_line(
        pool_cloud(cloud="OCI", kind="instance pool", pool_id="ocid1.x", images=())
    ) == ("OCI instance pool asg-workers (ocid1.x), m6i.large")
    # A kind that already says its cloud is not named twice; what is not known is left out.
    docker = pool_cloud(cloud="Docker", kind="docker containers", name=None, instance_type=None)
    assert (
        cloud_line(docker) == "docker containers, AMI ami-0abc, launch template lt-0abc (version 3)"
    )
    assert cloud_line(None) is None


def test_an_instance_that_never_joined_says_why_and_what_to_run() -> None:
    cloud = pool_cloud()
    [stray] = cloud.instances
    assert never_joined_sentence(stray, cloud) == (
        "i-0abc (eu-west-1c): no Node has its providerID; if it stays so, run by hand:"
    )
    unknown = InstanceCloud(None, "vmss-a-3", None, None, None, None, False)
    assert never_joined_sentence(unknown, cloud) == (
        "an instance: vmss-a-3 has no providerID yet; look it up in the AWS console"
    )
    assert more_sentence(cloud) is None
    many = pool_cloud(instances=(stray,) * 5)
    assert more_sentence(many) == (
        "and 2 more; describe -o json gives each one's ID, zone and commands"
    )


@pytest.mark.parametrize("room", [16, 40, 60, 76, 200])
@pytest.mark.parametrize("command", COMMANDS)
def test_a_wrapped_command_fits_and_is_still_one_command(command: str, room: int) -> None:
    lines = command_lines(command, room)
    for line in lines:
        assert len(line) <= room or " " not in line.strip(), line
    for line in lines[1:]:
        assert line.startswith(CONTINUED)
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    # What the shell makes of it pasted whole, the words printed one a line.
    pasted = "printf '%s\\n' " + "\n".join(lines)
    words = subprocess.run([bash, "-c", pasted], capture_output=True, text=True, check=True)
    assert words.stdout.splitlines() == shlex.split(command)


def test_the_summary_puts_the_cloud_after_the_infrastructure() -> None:
    objects = SCENARIOS["aws-asg"]("v1beta2", NAMESPACE)
    [cluster] = describe(snapshot_of(objects), Selection(), NOW).clusters
    [pool] = cluster.pools
    lines = summary_block(pool, TreeOptions(NOW, Palette(False), width=100))
    labels = [line[2:24].rstrip(": ") for line in lines[1:] if line[2:3] != " "]
    assert labels[:5] == ["Cluster", "Infrastructure", "Cloud", "Never joined", "Bootstrap"]
    joined = "\n".join(lines)
    assert "aws ec2 describe-instances --region eu-west-1 --instance-ids \\\n" in joined
