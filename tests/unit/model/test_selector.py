from __future__ import annotations

import pytest

from kubectl_machinepool.base.errors import UsageError
from kubectl_machinepool.model.selector import matches

LABELS = {"env": "prod", "tier": "gpu", "cluster.x-k8s.io/cluster-name": "prod"}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("env=prod", True),
        ("env==prod", True),
        ("env=dev", False),
        ("env!=dev", True),
        ("missing!=x", True),
        ("env in (dev, prod)", True),
        ("env notin (dev,prod)", False),
        ("tier", True),
        ("!tier", False),
        ("!missing", True),
        ("env=prod,tier in (gpu,cpu),cluster.x-k8s.io/cluster-name=prod", True),
        ("env=prod,tier=cpu", False),
        ("", True),
    ],
)
def test_label_selector(selector: str, expected: bool) -> None:
    assert matches(selector, LABELS) is expected


def test_bad_selector_is_usage_error() -> None:
    with pytest.raises(UsageError):
        matches("env in prod", LABELS)
