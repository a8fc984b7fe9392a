from __future__ import annotations

from datetime import timedelta

import pytest

from kubectl_machinepool.base.humanize import human_duration

S, M, H, D = 1, 60, 3600, 86400


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-5, "<invalid>"),
        (-1, "0s"),
        (0, "0s"),
        (119, "119s"),
        (120, "2m"),
        (125, "2m5s"),
        (9 * M + 59, "9m59s"),
        (10 * M + 30, "10m"),
        (3 * H - 1, "179m"),
        (3 * H, "3h"),
        (3 * H + 5 * M, "3h5m"),
        (8 * H + 59 * M, "8h"),
        (47 * H, "47h"),
        (2 * D + 3 * H, "2d3h"),
        (7 * D, "7d"),
        (8 * D + 5 * H, "8d"),
        (400 * D, "400d"),
        (2 * 365 * D + 10 * D, "2y10d"),
        (9 * 365 * D, "9y"),
    ],
)
def test_kubectl_duration_bands(seconds: int, text: str) -> None:
    assert human_duration(timedelta(seconds=seconds)) == text
