"""Kubernetes versions read exactly: a string is a version as a whole, or it is none.

Cluster API's webhook takes a MachinePool's spec.template.spec.version as a semantic version
with a leading v (util/version KubeSemver), its defaulting adding the v when it is missing; a
kubelet reports one with what its distribution appends as pre-release or build metadata
(v1.33.4-eks-1a2b3c, v1.30.5-gke.1014001, v1.33.4+k3s1), all valid. Anything else is no version,
never the version it begins with: `v1.34.0;$(id)`, `v1.34.0<ESC>[2J`, `v1.34`, `1.34.0-`, a
40-digit number. Some control planes and provider fields name a release by its minor alone
(EKS's `1.33`, AKS's orchestratorVersion): release() reads those too, as exactly.
"""

from __future__ import annotations

import re

from kubectl_machinepool.base.records import record
from kubectl_machinepool.base.safetext import escape

# No version is longer; a few digits per number: int() of a 5000-digit one would raise.
MAX_LENGTH = 128
_NUMBER = r"(0|[1-9][0-9]{0,8})"
# Semantic versioning 2.0.0's identifiers: a numeric one has no leading zero.
_PRE_IDENT = r"(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_BUILD_IDENT = r"[0-9A-Za-z-]+"
_VERSION = re.compile(
    rf"(v?){_NUMBER}\.{_NUMBER}(?:\.{_NUMBER}"
    rf"(?:-({_PRE_IDENT}(?:\.{_PRE_IDENT})*))?"
    rf"(?:\+({_BUILD_IDENT}(?:\.{_BUILD_IDENT})*))?)?",
    re.ASCII,
)


@record
class Version:
    """A version as written: str() gives back exactly the text it was read from."""

    major: int
    minor: int
    # None: a release named by its minor alone (release() only).
    patch: int | None
    pre: str = ""
    build: str = ""
    prefixed: bool = True

    def __str__(self) -> str:
        patch = "" if self.patch is None else f".{self.patch}"
        pre = f"-{self.pre}" if self.pre else ""
        build = f"+{self.build}" if self.build else ""
        return f"{'v' if self.prefixed else ''}{self.major}.{self.minor}{patch}{pre}{build}"

    @property
    def minor_release(self) -> tuple[int, int]:
        return self.major, self.minor

    @property
    def core(self) -> tuple[int, int, int]:
        """major.minor.patch, a minor alone as its .0."""
        return self.major, self.minor, self.patch or 0

    @property
    def plain(self) -> bool:
        """A release as such: no pre-release, no build metadata."""
        return not self.pre and not self.build


def release(text: str | None) -> Version | None:
    """A version, or a release named by its minor alone (`1.33`, `v1.33`); None otherwise."""
    if not text or len(text) > MAX_LENGTH:
        return None
    match = _VERSION.fullmatch(text)
    if match is None:
        return None
    prefix, major, minor, patch, pre, build = match.groups()
    return Version(
        int(major), int(minor), None if patch is None else int(patch), pre or "", build or "",
        prefixed=prefix == "v",
    )  # fmt: skip


def version(text: str | None) -> Version | None:
    """A semantic version exactly (a leading v optional); None for anything else."""
    found = release(text)
    return found if found is not None and found.patch is not None else None


def unparseable(text: str | None) -> bool:
    """Set, and no semantic version."""
    return bool(text) and version(text) is None


def same_release(a: Version, b: Version) -> bool:
    """Equal as far as both say: major.minor, and the patch when both give one. Pre-release and
    build metadata are a distribution's (v1.33.4-eks-1a2b3c runs v1.33.4)."""
    if a.patch is None or b.patch is None:
        return a.minor_release == b.minor_release
    return a.core == b.core


def shown(text: str) -> str:
    """A value that is no version, quoted for a message: its control characters escaped, the
    first MAX_LENGTH characters of a longer one."""
    clipped = text if len(text) <= MAX_LENGTH else text[:MAX_LENGTH] + "…"
    return f'"{escape(clipped)}"'
