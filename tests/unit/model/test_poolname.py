from __future__ import annotations

from kubectl_machinepool.model.poolname import pool_label_value


def test_valid_names_are_kept() -> None:
    assert pool_label_value("prod-pool-0") == "prod-pool-0"
    assert pool_label_value("a" * 63) == "a" * 63


def test_long_names_hash_like_cluster_api() -> None:
    # Cluster API's own test vector for MustFormatValue.
    assert pool_label_value("machineSetName" * 12) == "hash_FR_ghQ_z"


def test_invalid_characters_hash_too() -> None:
    assert pool_label_value("-starts-with-dash").startswith("hash_")
