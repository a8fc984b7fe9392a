"""The value of the `cluster.x-k8s.io/pool-name` label, as Cluster API formats it.

MachinePool names may be 253 characters long, label values only 63; longer (or otherwise invalid)
names become `hash_<base64url(fnv32a(name))>_z`, so Machines of such a pool can only be found by
formatting the pool's name the same way.
"""

from __future__ import annotations

import base64
import re

POOL_NAME_LABEL = "cluster.x-k8s.io/pool-name"
CLUSTER_NAME_LABEL = "cluster.x-k8s.io/cluster-name"

_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_SURROGATE = re.compile("[\ud800-\udfff]")
_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193


def _fnv32a(data: bytes) -> int:
    value = _FNV32_OFFSET
    for byte in data:
        value = ((value ^ byte) * _FNV32_PRIME) & 0xFFFFFFFF
    return value


def pool_label_value(name: str) -> str:
    if len(name) <= 63 and _LABEL_VALUE.fullmatch(name):  # Go's $ never matches before a \n
        return name
    # Go strings hold no lone surrogates: its JSON decoder makes each one U+FFFD.
    data = _SURROGATE.sub("\ufffd", name).encode()
    digest = base64.urlsafe_b64encode(_fnv32a(data).to_bytes(4, "big")).rstrip(b"=")
    return f"hash_{digest.decode()}_z"
