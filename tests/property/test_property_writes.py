"""Every write command, its flags fed generated values, planned from a realistic dump whose pools
carry generated annotations (-f DUMP --dry-run=client, no server): a usage error, a refusal or
a plan, never a traceback, and every write listed is one the plan shows.

Each example is one command line: upgrade (--version, --set PATH=VALUE, --timeout,
--stuck-after, --force), scale (--replicas, --current-replicas, --force), rollout
restart|pause|resume (--max-unavailable, --drain-timeout, --timeout) or delete-machine (MACHINE,
--node, --provider-id, --pool, --replace, --scale-down, --drain-timeout, --timeout), the pools
named as kubectl names them, on a dump of a scenario or a shipped example whose pools, infra pools,
Clusters and Machines hold the annotations and fields these commands judge (paused, the pause and
restart records, the autoscaler bounds, replicas-managed-by, a version, a size, a deletion).
tests/integration/test_property_writes_live.py sends fewer of them to the real API server.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from pipeline import memory_guard
from profiles import examples
from strategies import (
    BASES,
    argv_text,
    counts,
    durations,
    serialise,
    versions,
    write_state,
)
from support.run import Result, run_cli

from kubectl_machinepool.providers.registry import PROVIDERS
from kubectl_machinepool.providers.upgrades import settable

# Raw in output: C0 but tab and newline (which scrub keeps: they lay text out), DEL, C1, lone
# surrogates.
FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
# What a write may answer from a dump: a plan (0), a usage error (2), a refusal (3), or (1) a
# named object that is not in the dump.
CODES = {0, 1, 2, 3}
# Exit 1 from a dump: what was named is not in it, or the kind that would hold it is not.
MISSING = re.compile(r"not found|is no instance of|cannot read|could not be read|cannot tell")
NUMBERED = re.compile(r"^  \d+\. ")
LISTED = re.compile(r"^(\S+)/(\S+) .* \(dry run\)$")
SECTIONS = ("Writes, in order", "Instances to replace")
# Fields the API server holds as int32: a size and a Machine's drain timeout in seconds.
INT32 = re.compile(r"nodeDrainTimeoutSeconds=([0-9]+)|to ([0-9]+) replicas")
VERSION_WRITE = re.compile(r"spec\.template\.spec\.version=(\S+)")


Draw = st.DrawFn
# The registry's --set paths of every kind, and paths no kind's upgrade writes.
SET_PATHS = sorted(
    {path for provider in PROVIDERS for path in settable(provider.upgrade)}
    | {"metadata.labels", "metadata.ownerReferences", "metadata.name", "status.replicas",
       "spec.providerIDList", "spec.template.spec.version", "spec", "spec.template.customImage.x",
       "spec.resources[]", "spec..x", "[]", ".", ""}
)  # fmt: skip


def _names(objects: list[dict[str, Any]], kind: str) -> list[str]:
    return [str(o["metadata"]["name"]) for o in objects if o.get("kind") == kind]


def _pools(draw: Draw, objects: list[dict[str, Any]]) -> list[str]:
    """One to three pools, as kubectl names them; now and then one that is not there."""
    known = _names(objects, "MachinePool") or ["missing"]
    named = draw(st.lists(st.sampled_from(known), min_size=1, max_size=3))
    if draw(st.integers(0, 9)) == 0:
        named.append(draw(st.one_of(st.just("not-there"), argv_text())))
    prefix = st.sampled_from(["", "", "", "", "", "mp/", "machinepool/", "MachinePools/",
                              "machinepool.cluster.x-k8s.io/", "machine/"])  # fmt: skip
    return [draw(prefix) + name for name in named]


def _flag(draw: Draw, name: str, values: st.SearchStrategy[str]) -> list[str]:
    """The flag with a drawn value, or not at all."""
    return [name, draw(values)] if draw(st.booleans()) else []


def _settable(objects: list[dict[str, Any]]) -> list[str]:
    """The --set paths of the infra pool kinds among the objects."""
    kinds = {o.get("kind") for o in objects}
    return [
        p for provider in PROVIDERS if provider.kind in kinds for p in settable(provider.upgrade)
    ]


def _upgrade(draw: Draw, objects: list[dict[str, Any]]) -> list[str]:
    ours = _settable(objects) or SET_PATHS
    paths = st.one_of(st.sampled_from(ours), st.sampled_from(SET_PATHS), argv_text())
    values = st.one_of(st.just(""), st.just("ami-0123456789abcdef0"), versions(), argv_text())
    sets = [
        (draw(paths), draw(values)) for _ in range(draw(st.sampled_from([0, 0, 0, 1, 1, 2, 3])))
    ]
    return ["upgrade", *_pools(draw, objects), "--version", draw(versions()),
            *[f"--set={path}={value}" for path, value in sets],
            *_flag(draw, "--timeout", durations()), *_flag(draw, "--stuck-after", durations()),
            *draw(st.sampled_from([[], ["--force"], ["--no-wait"]]))]  # fmt: skip


def _scale(draw: Draw, objects: list[dict[str, Any]]) -> list[str]:
    return ["scale", *_pools(draw, objects), "--replicas", draw(counts()),
            *_flag(draw, "--current-replicas", counts()),
            *draw(st.sampled_from([[], ["--force"]]))]  # fmt: skip


def _restart(draw: Draw, objects: list[dict[str, Any]]) -> list[str]:
    return ["rollout", "restart", *_pools(draw, objects),
            *_flag(draw, "--max-unavailable", counts()),
            *_flag(draw, "--drain-timeout", durations()), *_flag(draw, "--timeout", durations()),
            *draw(st.sampled_from([[], ["--no-wait"]]))]  # fmt: skip


def _pause(draw: Draw, objects: list[dict[str, Any]]) -> list[str]:
    return ["rollout", draw(st.sampled_from(["pause", "resume"])), *_pools(draw, objects)]


def _delete(draw: Draw, objects: list[dict[str, Any]]) -> list[str]:
    machines = _names(objects, "Machine") or ["missing"]
    nodes = _names(objects, "Node") or ["missing"]
    ids = [
        str(pid)
        for o in objects
        if o.get("kind") == "Node" and (pid := (o.get("spec") or {}).get("providerID"))
    ]
    # One instance, as it must be named, but now and then none or two.
    which = draw(st.sampled_from([["machine"], ["node"], ["id"]] * 3 + [[], ["machine", "id"]]))
    named = [
        *([draw(st.sampled_from(machines))] if "machine" in which else []),
        *(["--node", draw(st.sampled_from(nodes))] if "node" in which else []),
        *(["--provider-id", draw(st.sampled_from(ids or ["missing"]))] if "id" in which else []),
    ]
    pools = _names(objects, "MachinePool") or ["missing"]
    modes = [[], ["--replace"], ["--scale-down"]] * 2 + [["--replace", "--scale-down"]]
    return ["delete-machine", *named,
            *_flag(draw, "--pool", st.one_of(st.sampled_from(pools), argv_text())),
            *draw(st.sampled_from(modes)),
            *_flag(draw, "--drain-timeout", durations()), *_flag(draw, "--timeout", durations()),
            *draw(st.sampled_from([[], ["--allow-unverified-provider"]]))]  # fmt: skip


COMMANDS: dict[str, Callable[[Draw, list[dict[str, Any]]], list[str]]] = {
    "upgrade": _upgrade,
    "scale": _scale,
    "rollout restart": _restart,
    "rollout pause|resume": _pause,
    "delete-machine": _delete,
}


@dataclass(frozen=True)
class Call:
    base: str
    changes: tuple[str, ...]
    objects: list[dict[str, Any]] = field(repr=False)
    argv: tuple[str, ...]

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # noqa: ARG002 - its protocol
        printer.text(repr(self))  # the objects are the base's, but for the changes

    @classmethod
    def of(cls, base: str, *argv: str) -> Call:
        return cls(base, (), json.loads(BASES[base]), (*argv, "--dry-run=client", "--yes"))


@st.composite
def write_calls(draw: Draw) -> Call:
    """A dump's objects with what writes judge made odd, and a write command line for them."""
    base = draw(st.sampled_from(sorted(BASES)))
    objects: list[dict[str, Any]] = json.loads(BASES[base])
    changes = tuple(write_state(draw, objects) for _ in range(draw(st.integers(0, 3))))
    argv = COMMANDS[draw(st.sampled_from(sorted(COMMANDS)))](draw, objects)
    # Mostly a client dry run, which a dump takes; else the refusal to write to a dump.
    dry_run = draw(st.sampled_from(["--dry-run=client"] * 8 + ["--dry-run=server", ""]))
    extra = [
        dry_run,
        *_flag(draw, "--now", st.sampled_from(["2026-11-29T15:00:00Z", "2099-01-01T00:00:00Z"])),
    ]
    if draw(st.integers(0, 4)) == 0:
        extra += ["-n", draw(st.sampled_from(["capi-prod", "capi-dev", "elsewhere"]))]
    return Call(base, changes, objects, (*argv, *[e for e in extra if e], "--yes"))


def plan_items(out: str) -> list[str]:
    """The numbered items of every plan's writes and instances to replace, each with the lines
    that continue it."""
    items: list[str] = []
    inside = False
    for line in out.splitlines():
        if line.startswith(SECTIONS):
            inside = True
        elif not line.startswith("  "):
            inside = False
        elif inside and NUMBERED.match(line):
            items.append(line)
        elif inside and items:
            items[-1] += "\n" + line
    return items


def contract(result: Result) -> list[str]:
    """What every write's answer owes, whatever it was asked: the broken promises."""
    out, err, code = result.out, result.err, result.code
    broken = []
    if code not in CODES:
        broken.append(f"exit {code}")
    if "Traceback" in out + err:
        broken.append("a traceback")
    if FORBIDDEN.search(out) or FORBIDDEN.search(err):
        broken.append("a raw control character")
    lines = err.splitlines()
    errors = [i for i, line in enumerate(lines) if line.startswith("error: ")]
    hints = [i for i, line in enumerate(lines) if line.startswith("hint: ")]
    others = [
        line for line in lines if not line.startswith(("error: ", "hint: ", "warning: ", "Nothing"))
    ]
    if others:
        broken.append(f"stderr lines that are no error, hint or warning: {others[:2]}")
    if len(errors) != (code != 0):
        broken.append(f"{len(errors)} error: lines with exit {code}")
    if hints and (len(hints) > 1 or not errors or hints[0] != errors[0] + 1):
        broken.append("a hint: that does not follow the error: line")
    if code == 2 and out:
        broken.append("a usage error after printing a plan")
    if code == 1 and errors and not MISSING.search(lines[errors[0]]):
        broken.append("exit 1 for something other than an object not in the dump")
    if code == 0:
        broken += _listed_as_planned(out, err)
    return broken


def _listed_as_planned(out: str, err: str) -> list[str]:
    """Exit 0 from a dump: the plan, then each of its writes listed once, none other."""
    if not out.startswith("Planned from "):
        return ["exit 0 without a plan"]
    listed = [m.group(2) for line in out.splitlines() if (m := LISTED.match(line))]
    items = plan_items(out)
    if "Nothing to do: " in err:
        return [f"nothing to do, yet {len(listed)} writes listed"] if listed else []
    broken = []
    if not items or len(listed) != len(items):
        broken.append(f"{len(listed)} writes listed for {len(items)} in the plan")
    broken += [f"{name} listed, not in the plan" for name in listed if not _in(name, items)]
    return broken


def _in(name: str, items: list[str]) -> bool:
    # The name may end a clause: "on MachinePool ns/pool, and record revision 1".
    return any(re.search(rf"(^|[\s/]){re.escape(name)}(?=[\s,;]|$)", item) for item in items)


def asked_for(call: Call, items: list[str]) -> list[str]:
    """A plan's writes hold what was asked, and what the API server takes: the version given,
    --set only on the registry's paths, sizes and drain timeouts within an int32."""
    argv = list(call.argv)
    broken = [f"{m.group(0)}: above an int32" for item in items for m in INT32.finditer(item)
              if int(m.group(1) or m.group(2)) > 2**31 - 1]  # fmt: skip
    if argv[0] != "upgrade":
        return broken
    wanted = "v" + argv[argv.index("--version") + 1].removeprefix("v")
    written = {m.group(1) for item in items for m in VERSION_WRITE.finditer(item)}
    if written - {wanted}:
        broken.append(f"the plan writes version {sorted(written)}, not {wanted}")
    ours = _settable(call.objects)
    given = [a.removeprefix("--set=").partition("=")[0] for a in argv if a.startswith("--set=")]
    return broken + [f"--set {p} planned, no registry field" for p in given if p not in ours]


@settings(max_examples=examples(200), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(write_calls())
# Found by this test: 2562047h planned as nodeDrainTimeoutSeconds=9223369200, which the API server
# refuses (an int32).
@example(Call.of("capd/v1beta2", "delete-machine", "dev-mp-0-x7q2p", "--drain-timeout", "2562047h"))
@example(Call.of("capd/v1beta1", "rollout", "restart", "dev-mp-0", "--drain-timeout", "600000h"))
# Found by this test: a write that records a revision names its pool before a comma.
@example(Call.of("aks-managed/v1beta1", "upgrade", "aks-pool0", "--version", "v1.34.1"))
def test_every_write_answers_with_a_plan_or_one_error(
    capsys: pytest.CaptureFixture[str], call: Call
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        dump = Path(scratch) / "dump.json"
        dump.write_text(serialise(call.objects, "json-list"), encoding="utf-8")
        with memory_guard():
            result = run_cli(capsys, *call.argv, "-f", str(dump))
    command = " ".join(call.argv[:2]) if call.argv[0] == "rollout" else call.argv[0]
    event(f"{command} exit {result.code}")
    broken = contract(result)
    if result.code == 0 and not broken:
        broken = asked_for(call, plan_items(result.out))
    assert broken == [], (result.code, result.out[-3000:], result.err[-2000:])
