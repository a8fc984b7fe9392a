"""Kubeconfig resolution follows kubectl, into transport.Settings; no cluster needed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from kubectl_machinepool.base.errors import ConfigError
from kubectl_machinepool.kube.connection import load_connection


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
    assert conn.settings.auth.header() == "Bearer token-of-a"


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


@pytest.mark.parametrize("where", ["flag", "KUBECONFIG"])
def test_a_kubeconfig_from_a_pipe_is_read_as_kubectl_reads_it(tmp_path: Path, where: str) -> None:
    """`--kubeconfig <(vault read ...)` and KUBECONFIG=<(...) are /dev/fd/N, a pipe: once taken
    for a file that does not exist (flag) or silently left out (KUBECONFIG)."""
    text = kubeconfig(tmp_path / "a.yaml", {"piped": "https://piped:6443"}, "piped").read_text()
    read, write = os.pipe()
    os.write(write, text.encode())
    os.close(write)
    try:
        pipe = f"/dev/fd/{read}"
        if where == "flag":
            conn = load_connection(pipe, None, env_with(tmp_path))
        else:
            conn = load_connection(None, None, env_with(tmp_path, KUBECONFIG=pipe))
    finally:
        os.close(read)
    assert (conn.context, conn.server) == ("piped", "https://piped:6443")


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
    assert conn.settings.auth.header() == "bearer sa-token"


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


def test_a_kubeconfig_that_is_not_a_mapping(tmp_path: Path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="is not a kubeconfig"):
        load_connection(str(path), None, env_with(tmp_path))


def test_a_context_without_server(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "a.yaml", {"ctx": "https://a:6443"}, "ctx")
    doc = yaml.safe_load(path.read_text())
    del doc["clusters"][0]["cluster"]["server"]
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(ConfigError, match="names no cluster server"):
        load_connection(str(path), None, env_with(tmp_path))


def with_user(path: Path, user: dict) -> Path:
    doc = yaml.safe_load(path.read_text())
    doc["users"][0]["user"] = user
    path.write_text(yaml.safe_dump(doc))
    return path


def test_failing_exec_plugin_is_an_error_not_an_anonymous_request(tmp_path: Path) -> None:
    plugin = tmp_path / "expired.sh"
    plugin.write_text("#!/bin/sh\necho 'token expired: run aws sso login' >&2\nexit 1\n")
    plugin.chmod(0o755)
    path = kubeconfig(tmp_path / "a.yaml", {"eks": "https://eks.example:443"}, "eks")
    with_user(
        path,
        {
            "exec": {
                "apiVersion": "client.authentication.k8s.io/v1",
                "command": str(plugin),
                "interactiveMode": "Never",
            }
        },
    )
    with pytest.raises(ConfigError, match='getting credentials for context "eks" failed') as err:
        load_connection(str(path), None, env_with(tmp_path))
    assert "token expired: run aws sso login" in err.value.message


def test_impersonation_becomes_kubectls_headers(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "a.yaml", {"ctx": "https://a:6443"}, "ctx")
    with_user(
        path,
        {
            "token": "t",
            "as": "jane",
            "as-groups": ["ops", "viewers"],
            "as-user-extra": {"scopes": ["a"]},
        },
    )
    conn = load_connection(str(path), None, env_with(tmp_path))
    assert conn.headers == (
        ("Impersonate-User", "jane"),
        ("Impersonate-Group", "ops"),
        ("Impersonate-Group", "viewers"),
        ("Impersonate-Extra-scopes", "a"),
    )


@pytest.mark.parametrize(
    ("user", "cluster", "what"),
    [
        ({"exec": {"command": "sh", "args": ["-c", "touch /tmp/pwned"]}}, {}, "exec"),
        ({"auth-provider": {"name": "oidc"}}, {}, "auth-provider"),
        ({"tokenFile": "/home/me/.secret"}, {}, "tokenFile"),
        (
            {"client-certificate": "/etc/key.pem", "client-key": "/etc/key.pem"},
            {},
            "client-certificate, client-key",
        ),
        ({"token": "t"}, {"certificate-authority": "/etc/ca.pem"}, "certificate-authority"),
    ],
)
def test_a_secrets_kubeconfig_may_not_run_commands_or_read_files(
    tmp_path: Path, user: dict, cluster: dict, what: str
) -> None:
    from kubectl_machinepool.kube.connection import connection_from_dict

    config = {
        "apiVersion": "v1",
        "clusters": [{"name": "w", "cluster": {"server": "https://w:6443", **cluster}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "w", "context": {"cluster": "w", "user": "u"}}],
        "current-context": "w",
    }
    with pytest.raises(
        ConfigError, match=f"uses {what}; from a Secret only inline credentials are used"
    ) as err:
        connection_from_dict(config, "Secret ns/w-kubeconfig")
    assert "--workload-kubeconfig" in (err.value.hint or "")
    assert not Path("/tmp/pwned").exists()


@pytest.mark.parametrize("broken", [{"clusters": 5}, {"users": "x"}, {"contexts": [7]}])
def test_a_malformed_secret_kubeconfig_is_a_config_error(broken: dict) -> None:
    from kubectl_machinepool.kube.connection import connection_from_dict

    config = {
        "clusters": [{"name": "w", "cluster": {"server": "https://w:6443"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "w", "context": {"cluster": "w", "user": "u"}}],
        "current-context": "w",
        **broken,
    }
    with pytest.raises(ConfigError):
        connection_from_dict(config, "Secret ns/w-kubeconfig")


def _secret_yaml(user_name: str, user_body: str, extra_users: str = "") -> str:
    """A Secret's kubeconfig as YAML text, so names keep the types YAML gives them."""
    return f"""
apiVersion: v1
clusters:
- name: w
  cluster: {{server: "https://w.example:6443"}}
users:
- name: safe
  user: {{token: harmless}}
- name: {user_name}
  user: {user_body}
{extra_users}
contexts:
- name: w
  context: {{cluster: w, user: {user_name}}}
current-context: w
"""


@pytest.mark.parametrize("name", ["1", "true", "1.5", "null", "~", "[a]", "{a: 1}"])
def test_a_secret_user_whose_name_is_not_a_string_never_runs_its_plugin(
    tmp_path: Path, name: str
) -> None:
    """The check and the connection must read the same entry: a name YAML types as a number,
    a boolean or null is refused outright, as kubectl refuses it."""
    from kubectl_machinepool.kube.connection import connection_from_dict

    marker = tmp_path / "ran"
    body = f'{{exec: {{apiVersion: client.authentication.k8s.io/v1, command: touch, args: ["{marker}"]}}}}'
    with pytest.raises(ConfigError):
        connection_from_dict(yaml.safe_load(_secret_yaml(name, body)), "Secret ns/w-kubeconfig")
    assert not marker.exists()


@pytest.mark.parametrize("name", ["1", "true", "1.5"])
@pytest.mark.parametrize(
    "body",
    [
        "{tokenFile: /etc/hostname}",
        "{client-certificate: /etc/hostname, client-key: /etc/hostname}",
    ],
)
def test_a_secret_may_not_read_files_under_any_name(name: str, body: str) -> None:
    from kubectl_machinepool.kube.connection import connection_from_dict

    with pytest.raises(ConfigError):
        connection_from_dict(yaml.safe_load(_secret_yaml(name, body)), "Secret ns/w-kubeconfig")


def test_a_secret_cluster_with_a_non_string_name_cannot_smuggle_a_ca_path() -> None:
    from kubectl_machinepool.kube.connection import connection_from_dict

    document = yaml.safe_load(_secret_yaml("u", "{token: t}"))
    document["clusters"] = [
        {"name": 1, "cluster": {"server": "https://w:6443", "certificate-authority": "/etc/x"}}
    ]
    document["contexts"][0]["context"]["cluster"] = 1
    with pytest.raises(ConfigError):
        connection_from_dict(document, "Secret ns/w-kubeconfig")


def test_duplicate_names_are_refused_like_kubectl() -> None:
    from kubectl_machinepool.kube.connection import connection_from_dict

    twice = "- name: u\n  user: {exec: {command: touch}}"
    with pytest.raises(ConfigError, match="names 'u' twice"):
        connection_from_dict(
            yaml.safe_load(_secret_yaml("u", "{token: t}", twice)), "Secret ns/w-kubeconfig"
        )


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("server", 5),
        ("insecure-skip-tls-verify", "true"),
        ("certificate-authority-data", "not base64!"),
        ("server", "ftp://w:21"),
        ("server", "https://w:99999"),
    ],
)
def test_a_secret_cluster_field_of_the_wrong_type_is_refused(field: str, value: object) -> None:
    from kubectl_machinepool.kube.connection import connection_from_dict

    document = yaml.safe_load(_secret_yaml("u", "{token: t}"))
    document["clusters"][0]["cluster"][field] = value
    with pytest.raises(ConfigError):
        connection_from_dict(document, "Secret ns/w-kubeconfig")


def test_a_token_ending_in_a_newline_is_used_without_it() -> None:
    from kubectl_machinepool.kube.connection import connection_from_dict

    document = yaml.safe_load(_secret_yaml("u", '{token: "s3cr3t-token\\n"}'))
    conn = connection_from_dict(document, "Secret ns/w-kubeconfig")
    assert conn.settings.auth.header() == "Bearer s3cr3t-token"


@pytest.mark.parametrize("token", ["abc\ndef", "abc def", "abc\x1b[2Jdef", ""])
def test_a_token_that_is_not_one_word_is_refused_without_repeating_it(token: str) -> None:
    from kubectl_machinepool.kube.connection import connection_from_dict

    document = yaml.safe_load(_secret_yaml("u", "{token: x}"))
    document["users"][1]["user"]["token"] = token + " "
    with pytest.raises(ConfigError) as err:
        connection_from_dict(document, "Secret ns/w-kubeconfig")
    if token:
        assert token not in err.value.message


def test_a_password_in_the_server_url_is_never_kept() -> None:
    from kubectl_machinepool.kube.connection import connection_from_dict

    document = yaml.safe_load(_secret_yaml("u", "{token: t}"))
    document["clusters"][0]["cluster"]["server"] = "https://admin:hunter2@w.example:6443/"
    conn = connection_from_dict(document, "Secret ns/w-kubeconfig")
    assert conn.server == conn.settings.host == "https://w.example:6443"


def test_inline_key_data_never_becomes_a_file(tmp_path: Path, monkeypatch) -> None:
    """The client library would write client-key-data to $TMPDIR, where a kill leaves it."""
    import base64
    import tempfile

    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setenv("TMPDIR", str(temp))
    path = kubeconfig(tmp_path / "a.yaml", {"ctx": "https://a:6443"}, "ctx")
    key = base64.b64encode(b"-----BEGIN PRIVATE KEY-----\nNOT-A-REAL-KEY\n").decode()
    with_user(path, {"client-certificate-data": key, "client-key-data": key})
    doc = yaml.safe_load(path.read_text())
    doc["clusters"][0]["cluster"]["certificate-authority-data"] = key
    path.write_text(yaml.safe_dump(doc))
    conn = load_connection(str(path), None, env_with(tmp_path))
    try:
        assert list(temp.iterdir()) == []
        assert conn.settings.key_file.startswith("/proc/self/fd/")
        assert Path(conn.settings.key_file).read_bytes().startswith(b"-----BEGIN PRIVATE")
        assert (conn.settings.ca_file, conn.settings.ca_data) == (None, base64.b64decode(key))
    finally:
        for fd in conn.held_files:
            os.close(fd)


def test_a_kubeconfig_file_with_aliased_impersonation_is_refused_before_expanding(
    tmp_path: Path,
) -> None:
    """500 keys sharing one list: counted first, not built into millions of headers."""
    items = ", ".join(f"v{i}" for i in range(2000))
    extra = "\n".join(f"      k{i}: *big" for i in range(500))
    path = tmp_path / "aliased.yaml"
    path.write_text(f"""
apiVersion: v1
clusters: [{{name: c, cluster: {{server: "https://c:6443"}}}}]
users:
- name: u
  user:
    token: t
    as-groups: &big [{items}]
    as-user-extra:
{extra}
contexts: [{{name: x, context: {{cluster: c, user: u}}}}]
current-context: x
""")
    with pytest.raises(ConfigError, match=r"excessive aliasing|impersonation entries"):
        load_connection(str(path), None, env_with(tmp_path))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("apiVersion: v1\nclusters: [\n", "cannot parse"),
        ("just a string\n", "is not a kubeconfig"),
        (
            "current-context: c\ncontexts: [{name: c, context: {cluster: nope, user: u}}]\n"
            "users: [{name: u, user: {token: t}}]\n",
            "names no cluster server",
        ),
    ],
)
def test_a_broken_kubeconfig_says_where_to_look(tmp_path: Path, text: str, message: str) -> None:
    """These once had no hint at all: the one-line error style promises one."""
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message) as err:
        load_connection(str(path), None, env_with(tmp_path))
    assert err.value.hint == "kubectl config view --minify shows what kubectl reads there"
