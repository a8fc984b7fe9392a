"""Hypothesis profiles: deterministic in CI, exploring at random on a developer's machine.

`CI=true` selects "ci": a fixed sequence of examples (derandomize, no example database), so a
CI run is reproducible and its example counts are the ones below. Elsewhere "dev" runs a fifth
of them with fresh random data each time and remembers failures in .hypothesis/;
HYPOTHESIS_PROFILE=thorough runs ten times the CI counts.
"""

from __future__ import annotations

import os
from datetime import timedelta

from hypothesis import HealthCheck, settings

# Generous: only meant to catch blow-ups (a billion-laughs label took 15 s, one more level over
# a minute; a 200 KB version string 32 s), not a busy machine: a normal example takes 10-100 ms,
# one with huge strings up to 1 s, and a first run that exceeds the deadline fails only if the
# rerun does too (else hypothesis reports the timing as flaky, which a shared machine can cause).
DEADLINE = timedelta(seconds=10)
_SCALE = {"ci": 1.0, "dev": 0.2, "thorough": 10.0}
_COMMON = {
    "deadline": DEADLINE,
    "print_blob": True,
    # Huge strings and whole dumps are big by design; a loaded CI machine must not fail on that.
    "suppress_health_check": [
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
}

settings.register_profile("ci", derandomize=True, database=None, **_COMMON)
settings.register_profile("dev", **_COMMON)
settings.register_profile("thorough", **_COMMON)


def profile_name() -> str:
    chosen = os.environ.get("HYPOTHESIS_PROFILE")
    if chosen in _SCALE:
        return chosen
    return "ci" if os.environ.get("CI", "").lower() == "true" else "dev"


def examples(ci_count: int) -> int:
    """A test's example count: ci_count in CI, scaled for the other profiles."""
    return max(10, int(ci_count * _SCALE[profile_name()]))
