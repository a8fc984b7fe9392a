"""Manager regexes run here only where Python's engine cannot take exponential time."""

from __future__ import annotations

import pytest

from kubectl_machinepool.model.goregex import unsafe_reason
from kubectl_machinepool.model.propagation import sync_rules


@pytest.mark.parametrize(
    "pattern",
    [r"^node\.cluster\.x-k8s\.io/.*", r"^team$", r"(foo|bar)*", r"a*b*c+", r"^(ab){2,5}$", "["],
)
def test_ordinary_patterns_are_run(pattern: str) -> None:
    assert unsafe_reason(pattern) is None


@pytest.mark.parametrize(
    "pattern", [r"(a+)+$", r"(a*)*b", r"((ab)+c?)+", r"(?:x|(y+))*z", r"(a)\1", r"a(?=b)"]
)
def test_patterns_python_could_hang_on_or_go_would_refuse_are_not(pattern: str) -> None:
    assert unsafe_reason(pattern)


def test_a_catastrophic_manager_regex_is_left_out_not_run() -> None:
    """`(a+)+$` on a 40-character key would backtrack for hours in Python's engine."""
    deployment = {
        "metadata": {"namespace": "capi-system", "name": "capi-controller-manager"},
        "spec": {"template": {"spec": {"containers": [{
            "name": "manager", "args": ["--additional-sync-machine-labels=(a+)+$,^team$"],
        }]}}},
    }  # fmt: skip
    rules = sync_rules(deployment, (), ())
    assert rules.labels == ("^team$",)
    assert "ignored: '(a+)+$' (a repetition inside a repetition" in rules.source
    assert not rules.label_synced("a" * 40 + "!")
