"""describe's JSON document with its streamed lists made whole, as tests compare it (the
command itself writes the stream as it goes)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubectl_machinepool.diagnostics.core import Finding
from kubectl_machinepool.model.description import Description
from kubectl_machinepool.render.streams import materialized
from kubectl_machinepool.render.structured import describe_stream


def describe_document(description: Description, findings: Sequence[Finding] = ()) -> dict[str, Any]:
    document: dict[str, Any] = materialized(describe_stream(description, findings))
    return document
