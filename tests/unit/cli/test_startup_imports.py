"""What a start-up imports: `--help` and a TAB must not load the Kubernetes client or tabulate.

Each case runs a console script's entry point in a fresh interpreter and reads its sys.modules
afterwards; the time itself is tests/benchmarks/startup.py's business (no timed assertions here).
"""

from __future__ import annotations

import configparser
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.kubeconfigs import dead_kubeconfig

from kubectl_machinepool.cli import suggest

REPO = Path(__file__).resolve().parents[3]
HEAVY = ("kubernetes", "tabulate")
# What a cached pool name must not need: the kubeconfig's parser, the connection, the server.
COLD_ONLY = (
    "yaml",
    "kubectl_machinepool.kube.kubeconfig",
    "kubectl_machinepool.kube.connection",
    "kubectl_machinepool.kube.client",
)
NAMESPACE = "prod-ns"
CACHED = [("spares", "Cluster prod"), ("workers", "Cluster prod")]  # sorted, as read() leaves them
MARKER = "--- modules ---"


def entry_point(script: str) -> tuple[str, str]:
    """(module, function) of a console script, as setup.cfg installs it."""
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg")
    for line in config["options.entry_points"]["console_scripts"].strip().splitlines():
        name, target = (part.strip() for part in line.split("="))
        if name == script:
            module, function = target.split(":")
            return module, function
    raise AssertionError(f"setup.cfg installs no {script}")


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A kubeconfig whose server refuses connections: a pool name can only come from the cache."""
    config = dead_kubeconfig(tmp_path)
    values = {
        "HOME": str(tmp_path),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "KUBECONFIG": str(config),
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    return {**values, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": path}


def prime_pool_cache() -> None:
    """What a first TAB on `describe -n prod-ns ""` leaves behind, written by the cache itself
    with a producer standing in for the cluster (the test's environment is os.environ's)."""
    key = suggest._cache_key("pools", {"namespace": NAMESPACE})
    assert suggest._cached(key, lambda: CACHED) == CACHED


def run_probe(env: dict[str, str], body: str) -> tuple[list[str], set[str]]:
    """Runs body in a fresh interpreter: what it printed, and every module loaded by the end."""
    probe = f"import json, sys\n{body}\nprint({MARKER!r})\nprint(json.dumps(sorted(sys.modules)))\n"
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=False
    )
    assert MARKER in done.stdout, done.stderr
    output, modules = done.stdout.split(MARKER + "\n")
    return output.splitlines(), set(json.loads(modules))


def run_entry_point(
    env: dict[str, str], script: str, argv: list[str]
) -> tuple[list[str], set[str]]:
    module, function = entry_point(script)
    body = (
        f"from {module} import {function}\n"
        f"try:\n    {function}({argv!r})\nexcept SystemExit:\n    pass\n"
    )
    return run_probe(env, body)


def loaded(modules: set[str], roots: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if m in roots or m.startswith(tuple(r + "." for r in roots)))


@pytest.mark.parametrize(
    ("script", "argv", "shown"),
    [
        ("kubectl-machinepool", ["--help"], "describe"),
        ("kubectl-machinepool", ["describe", "--help"], "--namespace"),
        ("kubectl_complete-machinepool", [""], "describe\t"),  # subcommand names
        ("kubectl_complete-machinepool", ["describe", "--"], "--namespace\t"),  # flag names
    ],
    ids=["help", "describe-help", "complete-subcommands", "complete-flags"],
)
def test_help_and_completion_load_neither_the_client_nor_tabulate(env, script, argv, shown) -> None:
    output, modules = run_entry_point(env, script, argv)
    assert any(shown in line for line in output), output
    assert loaded(modules, HEAVY) == []


def test_a_warm_pool_name_completion_loads_neither(env) -> None:
    prime_pool_cache()
    words = ["describe", "-n", NAMESPACE, ""]
    output, modules = run_entry_point(env, "kubectl_complete-machinepool", words)
    assert output == ["spares\tCluster prod", "workers\tCluster prod", ":4"]
    assert loaded(modules, HEAVY) == []


def pool_name_probe(args: list[str], incomplete: str) -> str:
    """A describe-like command whose pool-name argument completes through suggest.py alone."""
    return (
        "import click\n"
        "from kubectl_machinepool.cli import suggest\n"
        "names = click.Argument(['names'], nargs=-1, shell_complete=suggest.pool_names)\n"
        "command = click.Command('describe', params=[click.Option(['-n', '--namespace']), names])\n"
        f"ctx = command.make_context('describe', {args!r}, resilient_parsing=True)\n"
        f"for item in suggest.pool_names(ctx, names, {incomplete!r}):\n"
        "    print(item.value, item.help, sep='\\t')\n"
    )


def test_a_cached_pool_name_needs_no_kubeconfig_parser_connection_or_client(env) -> None:
    """The completion side alone (suggest.py under a pool-name argument): the answer the cache
    holds, with none of the modules a cache miss needs."""
    prime_pool_cache()
    output, modules = run_probe(env, pool_name_probe(["-n", NAMESPACE], "w"))
    assert output == ["workers\tCluster prod"]
    assert loaded(modules, HEAVY + COLD_ONLY) == []


def test_a_cold_pool_name_completion_still_reads_the_kubeconfig(env) -> None:
    """The other side of the lazy imports: without a cached answer the cluster is asked (here it
    refuses), so the kubeconfig is read; nothing is offered and nothing breaks."""
    prime_pool_cache()  # for another namespace than the one asked about
    output, modules = run_probe(env, pool_name_probe(["-n", "elsewhere"], ""))
    assert output == []
    assert "kubectl_machinepool.kube.connection" in modules


def test_a_cached_answer_serves_only_its_own_kubeconfig_context_and_namespace(env) -> None:
    """What the cache key is made of, now that it is found before anything is loaded."""
    prime_pool_cache()
    config = env["KUBECONFIG"]

    def answer(params: dict[str, str]) -> list[tuple[str, str]]:
        return suggest._cached(suggest._cache_key("pools", params), lambda: [("fresh", "")])

    assert answer({"namespace": NAMESPACE}) == CACHED
    assert answer({"namespace": "other"}) != CACHED
    assert answer({"namespace": NAMESPACE, "context": "another"}) != CACHED
    assert answer({"namespace": NAMESPACE, "kubeconfig": config}) == CACHED  # the same file
    later = os.stat(config).st_mtime_ns + 1_000_000_000
    os.utime(config, ns=(later, later))  # the kubeconfig was edited
    assert answer({"namespace": NAMESPACE}) != CACHED


def test_a_cache_file_holding_another_key_is_no_answer(env) -> None:
    """Files are named by a 32-bit checksum: the key inside decides, so a collision is a miss."""
    prime_pool_cache()
    (entry,) = Path(env["XDG_CACHE_HOME"]).rglob("*.json")
    stored = json.loads(entry.read_text())
    entry.write_text(json.dumps({**stored, "key": stored["key"].replace(NAMESPACE, "other")}))
    key = suggest._cache_key("pools", {"namespace": NAMESPACE})
    assert suggest._cached(key, lambda: [("fresh", "")]) == [("fresh", "")]


# The model, the rules and the renderers: a read command imports them while its reads run.
AFTER_THE_READS = (
    "kubectl_machinepool.model.description",
    "kubectl_machinepool.diagnostics.rules",
    "kubectl_machinepool.render.tree",
    "kubectl_machinepool.render.findings",
)


@pytest.mark.parametrize("command", ["describe", "diagnose", "diff-metadata"])
def test_the_first_request_goes_out_before_the_model_and_renderers_are_imported(
    env, command
) -> None:
    """The server refuses the connection: what counts is what was loaded when it was tried."""
    body = (
        "from kubectl_machinepool.kube import client as kube\n"
        "asked = kube.Kube.request\n"
        "def first(self, *args, **kwargs):\n"
        f"    print(*(m for m in {AFTER_THE_READS!r} if m in sys.modules), 'asked', sep='\\n')\n"
        "    kube.Kube.request = asked\n"
        "    return asked(self, *args, **kwargs)\n"
        "kube.Kube.request = first\n"
        "from kubectl_machinepool.cli.main import main\n"
        f"try:\n    main([{command!r}, '--request-timeout', '5s'])\nexcept SystemExit:\n    pass\n"
    )
    output, modules = run_probe(env, body)
    assert output == ["asked"]
    assert "kubectl_machinepool.kube.connection" in modules


def test_list_loads_the_jsonpath_modules_only_for_the_formats_using_them(env) -> None:
    dump = str(REPO / "examples" / "azure-vmss.yaml")
    modules = ("kubectl_machinepool.render.columns", "kubectl_machinepool.render.jsonpath")
    for argv, wanted in [
        (["list", "-f", dump, "-o", "wide", "-L", "env", "--show-labels"], []),
        (["list", "-f", dump, "-o", "jsonpath={.kind}"], ["kubectl_machinepool.render.jsonpath"]),
        (["list", "-f", dump, "-o", "custom-columns=N:.metadata.name"], list(modules)),
        (["list", "-f", dump, "--sort-by=.metadata.name"], list(modules)),
    ]:
        output, loaded_now = run_entry_point(env, "kubectl-machinepool", argv)
        assert output, argv
        # jsonpath is a package: any of its modules counts as it.
        assert sorted({r for r in modules if loaded(loaded_now, (r,))}) == wanted, argv
