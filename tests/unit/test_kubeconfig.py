"""Kubeconfig resolution follows kubectl; the real kubernetes client loader, no cluster needed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from kubectl_machinepool.errors import ConfigError
from kubectl_machinepool.kubeconfig import load_connection


def kubeconfig(
    path: Path, contexts: dict[str, str], current: str | None, namespace: str | None = None
) -> Path:
    """A kubeconfig whose contexts map a context name to a server URL (one cluster per context)."""
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": c, "cluster": {"server": s}} for c, s in contexts.items()],
        "users": [{"name": "u", "user": {"token": f"token-of-{path.stem}"}}],
        "contexts": [
            {
                "name": c,
                "context": {
                    "cluster": c,
                    "user": "u",
                    **({"namespace": namespace} if namespace else {}),
                },
            }
            for c in contexts
        ],
    }
    if current:
        doc["current-context"] = current
    path.write_text(yaml.safe_dump(doc))
    return path


def env_with(tmp_path: Path, **values: str) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), **values}


def test_first_file_sets_current_context_like_kubectl(tmp_path: Path) -> None:
    a = kubeconfig(tmp_path / "a.yaml", {"ctx-a": "https://a.example:6443"}, "ctx-a")
    b = kubeconfig(tmp_path / "b.yaml", {"ctx-b": "https://b.example:6443"}, "ctx-b")
    conn = load_connection(None, None, env_with(tmp_path, KUBECONFIG=f"{a}{os.pathsep}{b}"))
    assert (conn.context, conn.server) == ("ctx-a", "https://a.example:6443")
    # The first file's token: users merge first-wins too.
    assert conn.configuration.api_key["BearerToken"] == "Bearer token-of-a"


def test_later_file_sets_current_context_when_earlier_ones_do_not(tmp_path: Path) -> None:
    a = kubeconfig(tmp_path / "a.yaml", {"ctx-a": "https://a.example:6443"}, None)
    b = kubeconfig(tmp_path / "b.yaml", {"ctx-b": "https://b.example:6443"}, "ctx-b")
    conn = load_connection(None, None, env_with(tmp_path, KUBECONFIG=f"{a}{os.pathsep}{b}"))
    assert conn.context == "ctx-b"


def test_same_named_cluster_first_file_wins(tmp_path: Path) -> None:
    a = kubeconfig(tmp_path / "a.yaml", {"shared": "https://first:6443"}, "shared")
    b = kubeconfig(tmp_path / "b.yaml", {"shared": "https://second:6443"}, "shared")
    conn = load_connection(None, None, env_with(tmp_path, KUBECONFIG=f"{b}{os.pathsep}{a}"))
    assert conn.server == "https://second:6443"


def test_missing_and_empty_kubeconfig_entries_are_skipped(tmp_path: Path) -> None:
    a = kubeconfig(tmp_path / "a.yaml", {"ctx-a": "https://a:6443"}, "ctx-a")
    value = os.pathsep.join(["", str(tmp_path / "nope.yaml"), str(a)])
    assert load_connection(None, None, env_with(tmp_path, KUBECONFIG=value)).context == "ctx-a"


def test_context_flag_and_context_namespace(tmp_path: Path) -> None:
    a = kubeconfig(
        tmp_path / "a.yaml",
        {"one": "https://1:6443", "two": "https://2:6443"},
        "one",
        "capi-system",
    )
    conn = load_connection(str(a), "two", env_with(tmp_path))
    assert (conn.context, conn.server, conn.namespace) == ("two", "https://2:6443", "capi-system")


def test_kubeconfig_flag_beats_env(tmp_path: Path) -> None:
    a = kubeconfig(tmp_path / "a.yaml", {"ctx-a": "https://a:6443"}, "ctx-a")
    b = kubeconfig(tmp_path / "b.yaml", {"ctx-b": "https://b:6443"}, "ctx-b")
    assert load_connection(str(b), None, env_with(tmp_path, KUBECONFIG=str(a))).context == "ctx-b"


def test_default_home_kubeconfig(tmp_path: Path) -> None:
    (tmp_path / "home" / ".kube").mkdir(parents=True)
    kubeconfig(tmp_path / "home" / ".kube" / "config", {"home": "https://home:6443"}, "home")
    conn = load_connection(None, None, env_with(tmp_path))
    assert (conn.context, conn.namespace) == ("home", "default")


@pytest.mark.parametrize(
    ("flag", "context", "message"),
    [
        ("missing.yaml", None, "does not exist"),
        ("a.yaml", "nope", 'context "nope" does not exist'),
        ("nocurrent.yaml", None, "current-context is not set"),
    ],
)
def test_unusable_kubeconfig_is_a_config_error_with_hint(
    tmp_path: Path, flag: str, context: str | None, message: str
) -> None:
    kubeconfig(tmp_path / "a.yaml", {"ctx-a": "https://a:6443"}, "ctx-a")
    kubeconfig(tmp_path / "nocurrent.yaml", {"ctx-a": "https://a:6443"}, None)
    with pytest.raises(ConfigError, match=message) as err:
        load_connection(str(tmp_path / flag), context, env_with(tmp_path))
    assert err.value.hint


def test_no_kubeconfig_and_no_pod_environment(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no kubeconfig found") as err:
        load_connection(None, None, env_with(tmp_path))
    assert "KUBECONFIG" in (err.value.hint or "")


def service_account(tmp_path: Path) -> Path:
    sa = tmp_path / "sa"
    sa.mkdir()
    (sa / "token").write_text("sa-token")
    (sa / "ca.crt").write_text("not checked until a request is made")
    (sa / "namespace").write_text("capi-system\n")
    return sa


def test_in_cluster_only_without_any_kubeconfig(tmp_path: Path) -> None:
    pod_env = env_with(tmp_path, KUBERNETES_SERVICE_HOST="10.0.0.1", KUBERNETES_SERVICE_PORT="443")
    conn = load_connection(None, None, pod_env, service_account_dir=service_account(tmp_path))
    assert (conn.context, conn.server, conn.namespace) == (
        None,
        "https://10.0.0.1:443",
        "capi-system",
    )
    assert conn.configuration.api_key["BearerToken"].lower() == "bearer sa-token"


def test_kubeconfig_wins_over_pod_environment(tmp_path: Path) -> None:
    a = kubeconfig(tmp_path / "a.yaml", {"ctx-a": "https://a:6443"}, "ctx-a")
    pod_env = env_with(
        tmp_path,
        KUBECONFIG=str(a),
        KUBERNETES_SERVICE_HOST="10.0.0.1",
        KUBERNETES_SERVICE_PORT="443",
    )
    assert (
        load_connection(None, None, pod_env, service_account_dir=service_account(tmp_path)).context
        == "ctx-a"
    )
