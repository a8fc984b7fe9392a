"""A Kubernetes version is read whole or not at all: any string parses to exactly itself, or is
no version; never the version it begins with (issue 49, item 7)."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from kubectl_machinepool.base.kubeversion import (
    MAX_LENGTH,
    Version,
    release,
    same_release,
    shown,
    unparseable,
    version,
)

HOSTILE = [
    "v1.34.0;$(id)",
    "v1.34.0\x1b[2J",
    "v1.34.0 ",
    " v1.34.0",
    "v1.34.0\n",
    "v1.34",
    "1.34",
    "1.34.0-",
    "1.34.0+",
    "v1.34.0-rc..1",
    "v1.34.0-01",  # a numeric pre-release identifier has no leading zero
    "v01.34.0",
    "V1.34.0",
    "vv1.34.0",
    "v1.34.0.1",
    "v1.34.0_1",  # Cluster API's KubeSemver takes _, semantic versioning does not
    "1" * 40,
    "v" + "1" * 40 + ".0.0",
    "v1.34.0-" + "a" * MAX_LENGTH,
    "v\u0661.\u0663\u0664.\u0660",  # Arabic-Indic digits: digits to \d, not to a version
    "",
]

VALID = [
    "v1.34.0",
    "1.34.0",  # Cluster API's defaulting webhook adds the v
    "v1.33.4+k3s1",
    "v1.33.4-eks-1234",
    "v1.30.5-gke.1014001",
    "v1.28.15+rke2r1",
    "v1.35.0-rc.1",
    "v1.29.8-3+f10c92d",
    "v0.0.0",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_anything_but_a_whole_version_is_unparseable(text: str) -> None:
    assert version(text) is None
    assert unparseable(text) is bool(text)


@pytest.mark.parametrize("text", VALID)
def test_versions_with_build_metadata_stay_valid(text: str) -> None:
    found = version(text)
    assert found is not None
    assert str(found) == text
    assert found.core == tuple(int(n) for n in text.removeprefix("v").split("-")[0].split("+")[0].split("."))  # fmt: skip


def test_a_release_may_name_its_minor_alone_where_a_provider_does() -> None:
    assert release("1.33") == Version(1, 33, None, prefixed=False)
    assert str(release("v1.33")) == "v1.33"
    assert version("v1.33") is None
    assert release("1.33-eks") is None  # pre-release and build only after a patch


def test_the_same_release_as_far_as_both_say() -> None:
    def same(a: str, b: str) -> bool:
        x, y = release(a), release(b)
        assert x is not None
        assert y is not None
        return same_release(x, y)

    assert same("v1.33.4-eks-1a2b3c", "v1.33.4")
    assert same("1.33", "v1.33.9")
    assert not same("v1.33.4", "v1.33.5")


def test_shown_escapes_and_bounds_what_is_no_version() -> None:
    assert shown("v1.34.0\x1b[2J") == '"v1.34.0\\x1b[2J"'
    long = shown("x" * 10_000)
    assert len(long) == MAX_LENGTH + 3
    assert long.endswith('…"')


VERSIONISH = st.text(alphabet="v0123456789.-+abk \x1b;$()", max_size=30)


@given(st.one_of(VERSIONISH, st.text(max_size=40)))
@example("v1.34.0;$(id)")
@example("v1.34.0\x1b[2J")
def test_any_string_is_exactly_itself_or_no_version(text: str) -> None:
    for parse in (version, release):
        found = parse(text)
        assert found is None or str(found) == text


HEADS = st.from_regex(r"v?(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})", fullmatch=True)  # fmt: skip
# What does not carry on a number: a digit would make it another patch.
TAILS = st.text(min_size=1, max_size=10).filter(lambda t: not t[0].isdecimal())


@given(HEADS, TAILS)
def test_a_version_with_anything_after_it_is_never_the_version(head: str, tail: str) -> None:
    assert version(head) is not None
    found = version(head + tail)
    # The tail is pre-release or build metadata of a longer version, or the whole is none.
    assert found is None or (str(found) == head + tail and tail[0] in "-+")
