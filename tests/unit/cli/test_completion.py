"""Shell completion without a cluster: kubectl's protocol, flag values, files, and the scripts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
import yaml
from support.kubeconfigs import dead_kubeconfig
from support.run import run_cli

from kubectl_machinepool.cli.completion import main as complete
from kubectl_machinepool.cli.main import COMPLETE_VAR

REPO = Path(__file__).resolve().parents[3]
SCRIPTS = {
    "bash": "kubectl-machinepool.bash",
    "zsh": "_kubectl-machinepool",
    "fish": "kubectl-machinepool.fish",
    "powershell": "kubectl-machinepool.ps1",
}


pytestmark = pytest.mark.usefixtures("no_cluster")


def answer(capsys: pytest.CaptureFixture[str], *words: str) -> list[str]:
    complete(list(words))
    return capsys.readouterr().out.splitlines()


def test_subcommands_with_their_descriptions(capsys) -> None:
    lines = answer(capsys, "d")
    assert [line.split("\t")[0] for line in lines] == [
        "delete-machine", "describe", "diagnose", "diff", "diff-metadata", ":4",
    ]  # fmt: skip
    assert lines[1].startswith("describe\tShow MachinePools as a tree")


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (
            ("list", "-o", ""),
            ["table", "wide", "json", "yaml", "name", "jsonpath=", "custom-columns=", ":4"],
        ),
        (("list", "-o", "js"), ["json", "jsonpath=", ":4"]),
        (("list", "-o", "jsonp"), ["jsonpath=", ":6"]),  # no space: the template goes on
        (("describe", "--color", "a"), ["auto", "always", ":4"]),
        (("delete-machine", "--dry-run", ""), ["none", "client", "server", ":4"]),
        (("list", "--kubeconfig", ""), [":0"]),  # the shell completes file names
        (("describe", "-f", ""), [":0"]),
        (("describe", "--context", ""), [":4"]),  # no kubeconfig: nothing, quietly
        (("describe", ""), [":4"]),  # no cluster: no pool names, no error
    ],
)
def test_flag_values_and_files(capsys, words, expected) -> None:
    assert answer(capsys, *words) == expected


def test_flags_complete_by_prefix(capsys) -> None:
    lines = answer(capsys, "delete-machine", "--dr")
    assert [line.split("\t")[0] for line in lines] == ["--drain-timeout", "--dry-run", ":4"]


def test_contexts_come_from_every_kubeconfig_file(capsys, tmp_path, monkeypatch) -> None:
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text(
        yaml.safe_dump({"contexts": [{"name": "prod", "context": {"cluster": "eu-1"}}]})
    )
    second.write_text(
        yaml.safe_dump(
            {
                "contexts": [
                    {"name": "prod", "context": {"cluster": "other"}},
                    {"name": "dev", "context": {"cluster": "lab"}},
                ]
            }
        )
    )
    monkeypatch.setenv("KUBECONFIG", f"{first}:{second}")
    assert answer(capsys, "list", "--context", "") == [
        "dev\tcluster lab",
        "prod\tcluster eu-1",
        ":4",
    ]
    assert answer(capsys, "list", "--kubeconfig", str(second), "--context", "p") == [
        "prod\tcluster other", ":4",
    ]  # fmt: skip


def test_a_broken_kubeconfig_never_reaches_the_shell(capsys, tmp_path, monkeypatch) -> None:
    broken = tmp_path / "config"
    broken.write_text("contexts: [: not yaml")
    monkeypatch.setenv("KUBECONFIG", str(broken))
    assert answer(capsys, "describe", "--context", "") == [":4"]
    assert answer(capsys, "describe", "-n", "") == [":4"]


@pytest.mark.parametrize("shell", sorted(SCRIPTS))
def test_the_completion_command_prints_the_shipped_script(shell, monkeypatch, capsys) -> None:
    """One script per shell: what `completion SHELL` prints (krew users' only source), what
    completions/ ships, and what click itself writes for the variable are the same text."""
    printed = run_cli(capsys, "completion", shell)
    shipped = (REPO / "completions" / SCRIPTS[shell]).read_text()
    assert (printed.code, printed.err) == (0, "")
    assert printed.out == shipped, (
        f"completions/{SCRIPTS[shell]} is out of date: "
        f"kubectl-machinepool completion {shell} > completions/{SCRIPTS[shell]}"
    )
    monkeypatch.setenv(COMPLETE_VAR, f"{shell}_source")
    assert run_cli(capsys).out == shipped


@pytest.mark.parametrize("args", [("completion", "tcsh"), ("completion",)])
def test_a_shell_not_known_is_a_usage_error_naming_the_known_ones(args, capsys) -> None:
    done = run_cli(capsys, *args)
    assert (done.code, done.out) == (2, "")
    assert all(shell in done.err for shell in SCRIPTS), done.err
    assert "Traceback" not in done.err


def test_the_completion_command_completes_its_shells(capsys) -> None:
    assert answer(capsys, "completion", "") == [*SCRIPTS, ":4"]
    assert answer(capsys, "completion", "p") == ["powershell", ":4"]


def test_the_completion_path_never_imports_the_typed_client(tmp_path: Path) -> None:
    """Importing the 37.x typed APIs and models costs about 2 s: no TAB may pay for it."""
    import subprocess
    import sys

    config = dead_kubeconfig(tmp_path)
    probe = (
        "import sys\n"
        "from kubectl_machinepool.cli.completion import main\n"
        "main(['describe', '-n', 'x', ''])\n"
        "typed = [m for m in sys.modules if m.startswith(('kubernetes.client.api.', "
        "'kubernetes.client.models.'))]\n"
        "print(typed)\n"
    )
    env = {"KUBECONFIG": str(config), "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines() == [":4", "[]"]


def test_a_hostile_name_is_never_offered_to_the_shell() -> None:
    from kubectl_machinepool.cli.suggest import _offer

    values = [
        ("workers", "a pool"),
        ("evil\n:0", ""),
        ("two words", ""),
        ("\x1b]0;owned\x07", ""),
        ("ok", "help \x1b[2J"),
    ]
    offered = _offer(values, "")
    assert [(i.value, i.help) for i in offered] == [
        ("workers", "a pool"),
        ("ok", "help \\x1b[2J"),
    ]


def test_explain_completes_every_rule_code_with_its_title(capsys) -> None:
    from kubectl_machinepool.diagnostics.rules import RULES

    assert answer(capsys, "explain", "") == [f"{r.code}\t{r.title}" for r in RULES] + [":4"]
    typed = answer(capsys, "explain", "mp000")  # explain takes any case
    assert typed == [f"{r.code}\t{r.title}" for r in RULES if r.code.startswith("MP000")] + [":4"]
    assert len(typed) > 1


EXAMPLES = str(REPO / "examples")
EXAMPLE_POOLS = [
    "asg-workers\tCluster prod",
    "eks-default\tCluster prod",
    "vmss-batch\tCluster batch",
    "vmss-workers\tCluster prod",
    ":4",
]


def commands_reading_pools_from_dumps() -> list[tuple[str, ...]]:
    """Every command, subcommands included, that takes -f and names pools."""
    from kubectl_machinepool.cli.main import COMMANDS, cli

    found: list[tuple[str, ...]] = []
    for name in sorted(COMMANDS):
        command = cli.get_command(click.Context(cli), name)
        assert command is not None
        inner = command.commands.items() if isinstance(command, click.Group) else [("", command)]
        for sub, leaf in inner:
            params = {p.name for p in leaf.params}
            if {"filenames", "names"} <= params:
                found.append((name, sub) if sub else (name,))
    return found


def test_every_command_given_a_dump_completes_the_dump_s_pools(
    capsys, monkeypatch, tmp_path
) -> None:
    # The kubeconfig names a cluster that refuses connections: these names come from the dump.
    monkeypatch.setenv("KUBECONFIG", str(dead_kubeconfig(tmp_path)))
    commands = commands_reading_pools_from_dumps()
    assert {
        ("describe",),
        ("diagnose",),
        ("events",),
        ("diff-metadata",),
        ("rollout", "status"),
    } <= set(commands)
    for words in commands:
        assert answer(capsys, *words, "-f", EXAMPLES, "") == EXAMPLE_POOLS, words
    assert answer(capsys, "describe", "-f", EXAMPLES, "vmss-") == EXAMPLE_POOLS[2:]
    assert answer(capsys, "describe", "-n", "capi-prod", "-f", EXAMPLES, "") == EXAMPLE_POOLS
    assert answer(capsys, "describe", "-n", "other", "-f", EXAMPLES, "") == [":4"]
    assert answer(capsys, "describe", "-n", "other", "-A", "-f", EXAMPLES, "") == EXAMPLE_POOLS
    one = str(REPO / "examples" / "aws-asg.yaml")
    assert answer(capsys, "diagnose", "-f", one, "") == ["asg-workers\tCluster prod", ":4"]
    assert answer(capsys, "describe", "-f", EXAMPLES, "--cluster", "") == ["batch", "prod", ":4"]
    assert capsys.readouterr().err == ""


def test_a_changed_dump_is_read_again(capsys, tmp_path) -> None:
    dump = tmp_path / "dump.yaml"
    pool = yaml.safe_load((REPO / "examples" / "aws-asg.yaml").read_text())
    dump.write_text(yaml.safe_dump(pool))
    assert answer(capsys, "describe", "-f", str(dump), "") == ["asg-workers\tCluster prod", ":4"]
    for item in pool["items"]:
        if item["kind"] == "MachinePool":
            item["metadata"]["name"] = "renamed"
    dump.write_text(yaml.safe_dump(pool))
    assert answer(capsys, "describe", "-f", str(dump), "") == ["renamed\tCluster prod", ":4"]


def hostile_dumps(tmp_path) -> dict[str, str]:
    """-f values that must offer nothing, quickly and quietly."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # no writer: opening it to read would wait for ever
    (tmp_path / "broken.yaml").write_text("kind: [")
    (tmp_path / "deep.json").write_text("[" * 300 + "]" * 300)  # past the dump reader's depth
    laughs = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    laughs += [
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    ]
    (tmp_path / "laughs.yaml").write_text("\n".join(laughs) + "\n")
    (tmp_path / "empty").mkdir()
    return {
        "missing": str(tmp_path / "nope.yaml"),
        "stdin": "-",
        "fifo": str(fifo),
        "malformed": str(tmp_path / "broken.yaml"),
        "too deep": str(tmp_path / "deep.json"),
        "alias bomb": str(tmp_path / "laughs.yaml"),
        "no MachinePool": str(tmp_path / "empty"),
    }


def test_a_dump_that_cannot_be_read_offers_nothing_and_says_nothing(capsys, tmp_path) -> None:
    for what, path in hostile_dumps(tmp_path).items():
        assert answer(capsys, "describe", "-f", path, "") == [":4"], what
        assert capsys.readouterr().err == "", what


def test_the_console_script_answers_complete_as_the_bridge_does(capsys) -> None:
    """`kubectl-machinepool __complete WORDS...` (what the single file's kubectl_complete-
    machinepool runs) is kubectl_complete-machinepool's answer. In a process of its own: the
    package's `main` is the cli.main module once that is imported."""
    script = "from kubectl_machinepool.cli import main; main(['__complete', 'd'])"
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == answer(capsys, "d")
