"""A dump's own time: `kubectl get` records none, so a dump is read as at its newest timestamp
and says so; --now wins, and an export's capture time wins over any timestamp it holds."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from support.run import run_cli

from kubectl_machinepool.offline import bundlefiles, export
from kubectl_machinepool.offline.dump import load_dump, newest_time

pytestmark = pytest.mark.usefixtures("no_cluster")

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = str(ROOT / "examples")
NOW = "2026-11-29T15:00:00Z"
NOTE = (
    "the dump has no capture time: ages are as at 2026-11-29T15:00:00Z, its newest timestamp; "
    "give --now to change it"
)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def machine_pool(**status: object) -> dict[str, object]:
    return {
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "MachinePool",
        "metadata": {
            "name": "workers",
            "namespace": "capi-prod",
            "creationTimestamp": "2026-11-01T10:00:00Z",
            "managedFields": [
                {"manager": "manager", "operation": "Update", "time": "2026-11-20T09:00:00Z"}
            ],
        },
        "status": status,
    }


@pytest.mark.parametrize(
    ("objects", "newest"),
    [
        ([machine_pool()], "2026-11-20T09:00:00Z"),  # managedFields' time
        (
            [
                machine_pool(
                    conditions=[{"type": "Paused", "lastTransitionTime": "2026-11-21T00:00:00Z"}],
                    deprecated={
                        "v1beta1": {
                            "conditions": [
                                {"type": "Ready", "lastTransitionTime": "2026-11-22T00:00:00Z"}
                            ]
                        }
                    },
                )
            ],
            "2026-11-22T00:00:00Z",
        ),
        (
            [
                {
                    "apiVersion": "events.k8s.io/v1",
                    "kind": "Event",
                    "metadata": {"name": "e", "creationTimestamp": "2026-11-01T00:00:00Z"},
                    "eventTime": "2026-11-02T00:00:00.000000Z",
                    "series": {"count": 4, "lastObservedTime": "2026-11-29T14:58:12.345678Z"},
                }
            ],
            "2026-11-29T14:58:12.345678Z",
        ),
        (
            [
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {"name": "n", "deletionTimestamp": "2026-11-25T00:00:00Z"},
                    "status": {
                        "conditions": [
                            {
                                "type": "Ready",
                                "lastHeartbeatTime": "2026-11-28T00:00:00Z",
                                "lastTransitionTime": "2026-11-01T00:00:00Z",
                            }
                        ]
                    },
                }
            ],
            "2026-11-28T00:00:00Z",
        ),
    ],
)
def test_the_newest_time_is_taken_from_where_objects_record_one(
    objects: list[dict[str, object]], newest: str
) -> None:
    assert newest_time(objects) == at(newest)


def test_a_time_elsewhere_or_past_a_long_list_is_not_read() -> None:
    """Only the fields that date what happened count (a spec field named time is anything), and
    a list longer than any real object's is read no further than its head."""
    pool = machine_pool()
    pool["spec"] = {"time": "2030-01-01T00:00:00Z", "template": {"lastTransitionTime": "2031"}}
    later = {"manager": "x", "time": "2029-01-01T00:00:00Z"}
    pool["metadata"]["managedFields"] = [{"manager": "m", "time": "not a time"}] * 64 + [later]  # type: ignore[index]
    pool["status"] = {"conditions": "2029-01-01T00:00:00Z"}
    assert newest_time([pool]) == at("2026-11-01T10:00:00Z")  # its creationTimestamp
    assert newest_time([{"kind": "Secret", "metadata": {"name": "s"}}]) is None


def test_a_dump_is_read_as_at_its_newest_timestamp_unless_now_is_given() -> None:
    inferred = load_dump([EXAMPLES], None)
    assert inferred.captured == at(NOW)
    assert inferred.notes == inferred.remarks == (NOTE,)
    given = load_dump([EXAMPLES], None, now=at("2026-12-01T00:00:00Z"))
    assert (given.captured, given.notes, given.remarks) == (None, (), ())
    timeless = load_dump(
        ["-"], io.StringIO(yaml.safe_dump({"kind": "Secret", "metadata": {"name": "s"}}))
    )
    assert (timeless.captured, timeless.notes) == (None, ())


@pytest.mark.parametrize(
    "command",
    [
        ("describe",),
        ("diagnose",),
        ("list",),
        ("events",),
        ("diff-metadata",),
        ("rollout", "status"),
        ("describe", "vmss-workers", "-o", "yaml"),
    ],
)
def test_the_examples_read_the_same_without_now_as_at_their_time(
    capsys: pytest.CaptureFixture[str], command: tuple[str, ...]
) -> None:
    """The examples were dumped at 15:00: a kubelet that posts its status had just beaten."""
    given = run_cli(capsys, *command, "-f", EXAMPLES, "--now", NOW)
    inferred = run_cli(capsys, *command, "-f", EXAMPLES)
    assert inferred.code == given.code
    if command[-1] == "yaml":
        document, want = yaml.safe_load(inferred.out), yaml.safe_load(given.out)
        assert document.pop("notes") == [NOTE]
        assert want.pop("notes") == []
        assert document == want
    else:
        assert inferred.out == given.out
    assert inferred.err == f"warning: {NOTE}\n" + given.err


@pytest.mark.parametrize("command", [("diagnose",), ("rollout", "status")])
def test_the_note_is_in_the_json_notes(
    capsys: pytest.CaptureFixture[str], command: tuple[str, ...]
) -> None:
    result = run_cli(capsys, *command, "-f", EXAMPLES, "-o", "json")
    assert NOTE in json.loads(result.out)["notes"]


def test_an_old_dump_says_when_its_ages_are_as_at(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The issue's dump: without the note, 16d ages read from today's clock looked like facts."""
    dump = tmp_path / "old.yaml"
    dump.write_text(
        (ROOT / "examples" / "aws-asg.yaml")
        .read_text()
        .replace("2026-11-29T15:00:00Z", "2026-11-29T14:00:00Z")
    )
    result = run_cli(capsys, "describe", "-f", str(dump))
    assert result.err.splitlines()[0] == (
        "warning: the dump has no capture time: ages are as at 2026-11-29T14:00:00Z, its newest "
        "timestamp; give --now to change it"
    )
    assert (
        result.out
        == run_cli(capsys, "describe", "-f", str(dump), "--now", "2026-11-29T14:00:00Z").out
    )


def test_an_export_is_read_as_at_its_capture_and_now_still_wins(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    captured = at("2026-12-01T15:00:00Z")  # two days after the newest timestamp it holds
    documents = export.documents_of(
        load_dump([EXAMPLES], None, now=captured),
        captured=captured,
        scope=export.Scope(None),
        versions=export.Versions("0.0.0", None, None),
    )
    bundle = tmp_path / "export"
    bundlefiles.write(documents, str(bundle), captured.timestamp())
    read = run_cli(capsys, "describe", "-f", str(bundle))
    as_captured = run_cli(capsys, "describe", "-f", EXAMPLES, "--now", "2026-12-01T15:00:00Z")
    assert read.out == as_captured.out
    assert "capture time" not in read.err
    now = run_cli(capsys, "describe", "-f", str(bundle), "--now", NOW)
    assert now.out == run_cli(capsys, "describe", "-f", EXAMPLES, "--now", NOW).out
