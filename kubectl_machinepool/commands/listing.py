"""`kubectl machinepool list`."""

from __future__ import annotations

import sys
from typing import Any

import click

from kubectl_machinepool.color import Palette
from kubectl_machinepool.commands.common import (
    CONTEXT_SETTINGS,
    access_options,
    build_access,
    build_output,
    echo,
    input_options,
    output_options,
    parse_now,
    scope_namespace,
    warn,
)
from kubectl_machinepool.description import Selection, selected
from kubectl_machinepool.dump import load_dump
from kubectl_machinepool.fetch import read_pools
from kubectl_machinepool.kube import Kube
from kubectl_machinepool.model import machine_pools
from kubectl_machinepool.render.listing import LIST_FORMATS, ListView
from kubectl_machinepool.snapshot import Snapshot


@click.command("list", context_settings=CONTEXT_SETTINGS)
@access_options
@input_options
@output_options(list(LIST_FORMATS))
def list_command(**params: Any) -> None:
    """List MachinePools with Node-based replica counts.

    \b
    Columns:
      DESIRED    spec.replicas, what the pool is asked to run
      CURRENT    status.replicas: instances the infrastructure provider reports
      READY      Nodes matching the pool's providerIDList that are Ready. Node-based on
                 every CAPI version: on v1beta2 it is status.deprecated.v1beta1.readyReplicas,
                 because the v1beta2 readyReplicas of a pool without MachinePool Machines is a
                 copy of CURRENT
      AVAILABLE  of those, Ready for at least minReadySeconds (same source as READY)
      PHASE      status.phase as computed by Cluster API
      VERSION    spec.template.spec.version, the desired Kubernetes version
      INFRA      kind of the infra pool (spec.template.spec.infrastructureRef)
      MACHINES   yes when the infra pool sets status.infrastructureMachineKind to a
                 per-instance kind, i.e. the pool has MachinePool Machines (GKE's pool
                 names itself: no); <unknown> when the infra pool is unreadable
      AGE        time since the MachinePool was created
    -o wide adds FAILURE DOMAINS (spec.failureDomains) and BOOTSTRAP (bootstrap config kind).

    \b
    Examples:
      # every pool of the current context's namespace
      kubectl machinepool list
      # all namespaces, with failure domains and bootstrap kinds
      kubectl machinepool list -A -o wide
    """
    access = build_access(params)
    output = build_output(params)
    now = parse_now(params["now"])
    if params["filenames"]:
        namespace = scope_namespace(access, None)
        dump = load_dump(params["filenames"], sys.stdin)
        selection = Selection(namespace, selector=access.selector)
        snapshot = Snapshot.of(
            [o for o in dump.objects if o.get("kind") != "MachinePool" or selected(o, selection)]
        )
    else:
        with Kube.connect(access) as kube:
            namespace = scope_namespace(access, kube.connection.namespace)
            snapshot = read_pools(kube, namespace, access.selector)
    for note in snapshot.notes:
        warn(note)
    pools = machine_pools(snapshot)
    if not pools and output.format in ("table", "wide", "name"):
        where = f" in {namespace} namespace" if namespace else ""
        echo(f"No resources found{where}.", err=True)
        return
    view = ListView(
        pools=pools,
        now=now,
        palette=Palette(output.color),
        all_namespaces=namespace is None,
        no_headers=output.no_headers,
    )
    echo(LIST_FORMATS[output.format](view), nl=False, color=output.color)
