"""The whole offline pipeline on dumps holding MachineHealthChecks broken in hostile ways: the
checks and the Machines they mark are mutated (the other bases never carry a check, so the
general pipeline properties would not reach this code), and every output keeps its contract."""

from __future__ import annotations

import json

from hypothesis import event, given, settings
from hypothesis import strategies as st
from pipeline import (
    check_documents,
    check_identities,
    control_characters,
    memory_guard,
    run_pipeline,
    snapshot_from,
)
from profiles import examples
from strategies import (
    FORMATS,
    NAMESPACE,
    Options,
    delete_field,
    edge_number,
    edge_time,
    hostile_key,
    hostile_string,
    huge_strings,
    null_field,
    retype_field,
    serialise,
)
from support.healthchecks import health_check, health_checked
from support.scenarios import SCENARIOS

from kubectl_machinepool.base.errors import MachinePoolError

Obj = dict[str, object]
# (scenario, pool, cluster): pools with MachinePool Machines, and one without.
POOLS = [
    ("azure-vmss", "vmss-workers", "prod"),
    ("capd", "dev-mp-0", "dev"),
    ("aws-asg", "asg-workers", "prod"),
]
SELECTORS = [
    {"matchExpressions": [{"key": "cluster.x-k8s.io/pool-name", "operator": "In", "values": ["vmss-workers", "dev-mp-0", "asg-workers"]}]},
    {"matchExpressions": [{"key": "node-role.kubernetes.io/worker", "operator": "Exists"}]},
    {"matchLabels": {"team": "payments"}, "matchExpressions": [{"key": "spot", "operator": "DoesNotExist"}]},
    {},
]  # fmt: skip
# Those that change a field of one object (the others link objects, which one object cannot).
IN_PLACE = [
    delete_field, null_field, retype_field, hostile_string, hostile_key, huge_strings,
    edge_number, edge_time,
]  # fmt: skip


def _base(draw: st.DrawFn) -> tuple[list[Obj], list[Obj]]:
    """A scenario with a check that marked one Machine, a second check, and what to break."""
    name, pool, cluster = draw(st.sampled_from(POOLS))
    generation = draw(st.sampled_from(["v1beta2", "v1beta1"]))
    objects = SCENARIOS[name](generation, NAMESPACE)
    machines = sorted(o["metadata"]["name"] for o in objects if o["kind"] == "Machine")
    marked = {m: "2026-11-29T14:00:00Z" for m in machines[:1]}
    health_checked(pool, cluster, marked, template=draw(st.booleans()))(objects)
    selector = draw(st.sampled_from(SELECTORS))
    objects.append(
        health_check(generation, NAMESPACE, "second", cluster, json.loads(json.dumps(selector)))
    )
    targets = [o for o in objects if o["kind"] in ("MachineHealthCheck", "Machine")]
    return objects, targets


@settings(max_examples=examples(100))
@given(st.data())
def test_checks_broken_in_any_way_keep_every_output_whole(data: st.DataObject) -> None:
    objects, targets = _base(data.draw)
    fmt = data.draw(st.sampled_from(FORMATS))
    opts = Options(surrogates=fmt.startswith("json"), yaml_types=fmt.startswith("yaml"))
    for mutation in data.draw(st.lists(st.sampled_from(IN_PLACE), max_size=6)):
        # Mutations pick their field in the list they get: these objects, not the whole dump.
        mutation(data.draw, [data.draw(st.sampled_from(targets))], opts)
    try:
        with memory_guard():
            snapshot = snapshot_from(serialise(objects, fmt))
    except MachinePoolError as err:
        assert "\n" not in err.message  # noqa: PT017 - the refusal is one line
        event("refused")
        return
    with memory_guard():
        _, out = run_pipeline(snapshot)
    check_documents(out)
    check_identities(snapshot, out)
    assert control_characters(out) == {}
    document = out.documents["describe-json"][0]
    shown = [
        check
        for cluster in document["clusters"]
        for pool in cluster["machinePools"]
        for check in pool["healthChecks"] or ()
    ]
    event(f"checks shown: {min(len(shown), 2)}")
