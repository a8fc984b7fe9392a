"""Polling loops bounded by time, generously: a guard against a hang, never a race.

A loop of N tries of a request and a short sleep lasts as long as the machine lets it; on a
busy 2-core machine (CI beside other work, a newcomer's laptop) the event it waits for can come
later than an idle machine's N tries. GUARD is how long a test waits before calling it a hang.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

GUARD = 120.0


def polls(every: float, seconds: float = GUARD) -> Iterator[int]:
    """Yields 0, 1, 2, ... with `every` seconds between, until `seconds` have passed."""
    deadline = time.monotonic() + seconds
    attempt = 0
    while True:
        yield attempt
        attempt += 1
        if time.monotonic() >= deadline:
            return
        time.sleep(every)
