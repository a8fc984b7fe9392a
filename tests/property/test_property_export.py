"""Properties of an export read back: whatever a manifest holds (someone else wrote it), the
reader returns a Snapshot the whole pipeline handles, or refuses in one line."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pipeline import run_pipeline
from profiles import examples
from strategies import any_values

from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.offline import bundlefiles, export
from kubectl_machinepool.offline.dump import load_dump, objects_in

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "azure-vmss.yaml"
FIELDS = [
    "capturedAt", "notes", "ruleNotes", "unread", "unreadNotes", "secretsScope", "workloads",
    "scope", "clusterAPIVersion",
]  # fmt: skip


def _documents() -> dict:
    snapshot = load_dump([str(EXAMPLE)], None)
    return export.documents_of(
        snapshot,
        captured=datetime(2026, 11, 29, 15, tzinfo=UTC),
        scope=export.Scope(None),
        versions=export.Versions("0", None, "unknown"),
    )


@settings(
    max_examples=examples(60),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    changes=st.dictionaries(st.sampled_from(FIELDS), any_values(surrogates=False), min_size=1),
    workload=any_values(surrogates=False),
)
def test_any_manifest_is_read_or_refused_in_one_line(tmp_path_factory, changes, workload) -> None:
    documents = _documents()
    manifest = {**documents[export.MANIFEST], **changes}
    if isinstance(manifest.get("workloads"), list) and manifest["workloads"]:
        manifest["workloads"] = [workload, *manifest["workloads"]]
    directory = tmp_path_factory.mktemp("export")
    for name, document in {**documents, export.MANIFEST: manifest}.items():
        text = yaml.safe_dump(document) if name == export.MANIFEST else json.dumps(document)
        (directory / name).write_text(text)
    try:
        snapshot = bundlefiles.load(str(directory), objects_in)
    except MachinePoolError as err:
        assert "\n" not in err.message  # noqa: PT017 - one line, whatever it says
        return
    run_pipeline(snapshot)
