"""kubectl's habits on the command line, on the shipped examples: pflag's spellings of flag
values, TYPE/NAME, the persistent flags before the subcommand, one error style, "did you mean"."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
import yaml
from support.kubeconfigs import dead_kubeconfig
from support.run import Result, run_cli

from kubectl_machinepool.cli import pflag, suggest
from kubectl_machinepool.cli.completion import main as complete
from kubectl_machinepool.cli.main import COMMANDS, cli

EXAMPLES = str(Path(__file__).resolve().parents[3] / "examples")
NOW = "2026-11-29T15:00:00Z"
POOL = "vmss-batch"

pytestmark = pytest.mark.usefixtures("no_cluster")


def ok(capsys: pytest.CaptureFixture[str], *args: str) -> Result:
    result = run_cli(capsys, *args)
    assert result.code == 0, result.err
    return result


# -- pflag's spellings ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spelled", "as_click"),
    [
        (["-o=json"], ["-o", "json"]),
        (["-o="], ["-o", ""]),
        (["-l=env=prod"], ["-l", "env=prod"]),
        (["-ojson", "--output=json"], ["-ojson", "--output=json"]),
        (["-A=true"], ["-A"]),
        (["-A=false"], []),
        (["-A", "-A=false"], []),
        (["-A=true", "--all-namespaces=0"], []),
        (["-A=false", "-A"], ["-A"]),
        (["--all-namespaces=True"], ["--all-namespaces"]),
        (["--wait=false"], ["--no-wait"]),
        (["--no-wait=true"], ["--no-wait"]),
        (["--no-wait=false"], ["--wait"]),
        (["-n", "-A=true"], ["-n", "-A=true"]),  # a value, whatever it looks like
        (["POOL", "--", "-A=true"], ["POOL", "--", "-A=true"]),
    ],
)
def test_pflag_spellings_become_clicks(spelled: list[str], as_click: list[str]) -> None:
    command = click.Command(
        "probe",
        params=[
            click.Option(["-o", "--output"]),
            click.Option(["-l"]),
            click.Option(["-n"]),
            click.Option(["-A", "--all-namespaces"], is_flag=True),
            click.Option(["--wait/--no-wait"], default=None),
            click.Argument(["names"], nargs=-1),
        ],
    )
    assert pflag.spelled(command, spelled, resilient=False) == as_click


def every_command() -> list[click.Command]:
    ctx = click.Context(cli)
    found: list[click.Command] = []
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None
        if isinstance(command, click.Group):
            found += [command.get_command(ctx, sub) for sub in command.list_commands(ctx)]  # type: ignore[misc]
        else:
            found.append(command)
    return found


def test_a_boolean_without_an_off_switch_is_off_unless_given() -> None:
    """What makes `--flag=false` the same as leaving the flag out."""
    for command in every_command():
        for param in command.params:
            if isinstance(param, click.Option) and param.is_bool_flag and not param.secondary_opts:
                assert param.default is not True, (command.name, param.name)


@pytest.mark.parametrize(
    ("spelled", "same_as"),
    [
        (["-o=name"], ["-o", "name"]),
        (["-o=json", "-n=capi-prod"], ["-o", "json", "-n", "capi-prod"]),
        (["-n", "nowhere", "-A=true", "-o=name"], ["-A", "-o", "name"]),
        (["-n", "nowhere", "--all-namespaces=true", "-o=name"], ["-A", "-o", "name"]),
        (["-n", "nowhere", "-A=false", "-o=name"], ["-n", "nowhere", "-o", "name"]),
        (["-n", "nowhere", "-A", "--all-namespaces=false"], ["-n", "nowhere"]),
        (["--show-labels=true"], ["--show-labels"]),
        (["--no-headers=false", "--show-labels=false"], []),
    ],
)
def test_list_reads_pflag_spellings(capsys, spelled: list[str], same_as: list[str]) -> None:
    given = ok(capsys, "list", "-f", EXAMPLES, "--now", NOW, *spelled)
    assert given == ok(capsys, "list", "-f", EXAMPLES, "--now", NOW, *same_as)


def test_a_boolean_value_that_is_not_one_is_a_usage_error(capsys) -> None:
    result = run_cli(capsys, "list", "-f", EXAMPLES, "-A=yes")
    assert (result.code, result.err.splitlines()) == (
        2,
        ["error: invalid value 'yes' for -A", "hint: true or false"],
    )


# -- TYPE/NAME -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spelled",
    [
        f"machinepool/{POOL}",
        f"machinepools/{POOL}",
        f"mp/{POOL}",
        f"MachinePool/{POOL}",
        f"machinepool.cluster.x-k8s.io/{POOL}",
        f"mp.cluster.x-k8s.io/{POOL}",
        f"machinepools.v1beta2.cluster.x-k8s.io/{POOL}",
    ],
)
@pytest.mark.parametrize(
    "command",
    [
        ["list"],
        ["describe"],
        ["diagnose"],
        ["events"],
        ["diff-metadata"],
        ["rollout", "status", "-w=false"],
    ],
)
def test_a_pool_by_type_and_name_is_the_pool(capsys, command: list[str], spelled: str) -> None:
    args = ["-n", "capi-prod", "-f", EXAMPLES, "--now", NOW]
    by_type = run_cli(capsys, *command, spelled, *args)
    assert by_type == run_cli(capsys, *command, POOL, *args)
    assert "not found" not in by_type.err


def test_what_list_o_name_prints_is_what_describe_takes(capsys) -> None:
    names = ok(capsys, "list", "-f", EXAMPLES, "-o", "name").out.split()
    assert f"machinepool.cluster.x-k8s.io/{POOL}" in names
    args = ["-n", "capi-prod", "-f", EXAMPLES, "--now", NOW]
    plain = [name.rpartition("/")[2] for name in names]
    assert ok(capsys, "describe", *names, *args) == ok(capsys, "describe", *plain, *args)


@pytest.mark.parametrize(
    ("spelled", "says"),
    [
        ("machine/x", "takes MachinePools, not 'machine' ('machine/x')"),
        ("MP/x", "takes MachinePools, not 'MP'"),  # kubectl expands a short name as written
        ("machinepool.apps/x", "takes MachinePools, not 'machinepool.apps'"),
        ("machinepools.v1alpha4.cluster.x-k8s.io/x", "takes MachinePools"),
        ("machinepool/", "must have a single resource and name: 'machinepool/'"),
        ("machinepool/a/b", "must have a single resource and name"),
    ],
)
@pytest.mark.parametrize(
    "command",
    [
        ["describe"],
        ["diagnose"],
        ["events"],
        ["diff-metadata"],
        ["export", "-o", "out"],
        ["rollout", "status"],
        ["rollout", "pause"],
        ["rollout", "resume"],
        ["rollout", "restart"],
        ["scale", "--replicas", "1"],
        ["upgrade", "--version", "v1.34.1"],
        ["delete-machine", "m-1", "--pool"],
    ],
)
def test_another_type_is_a_usage_error_naming_the_accepted_ones(
    capsys, command: list[str], spelled: str, says: str
) -> None:
    result = run_cli(capsys, *command, spelled)
    assert result.code == 2
    error, hint = result.err.splitlines()
    assert says in error
    if "takes" in says:
        path = " ".join(command[:2] if command[0] == "rollout" else command[:1])
        path += " --pool" if command[-1] == "--pool" else ""
        assert error.startswith(f"error: kubectl machinepool {path} takes MachinePools, not ")
    assert hint == (
        "hint: name a pool as NAME or TYPE/NAME, TYPE one of machinepool, machinepools, mp, "
        "machinepool.cluster.x-k8s.io"
    )


# -- persistent flags before the subcommand ------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (["-n", "capi-prod"], ["-n", "capi-prod"]),
        (["--namespace=capi-prod"], ["-n", "capi-prod"]),
        (["-n=nowhere"], ["-n", "nowhere"]),
        (["-n", "nowhere"], ["-n", "nowhere", "-A=false"]),
        (["-n", "nowhere"], ["-n", "capi-prod", "-n", "nowhere"]),
    ],
)
def test_namespace_before_the_subcommand_is_the_same_flag(capsys, before, after) -> None:
    args = [POOL, "-f", EXAMPLES, "--now", NOW]
    assert run_cli(capsys, *before, "describe", *args) == run_cli(capsys, "describe", *args, *after)


def test_after_the_subcommand_wins(capsys) -> None:
    args = [POOL, "-f", EXAMPLES, "--now", NOW]
    both = ok(capsys, "-n", "nowhere", "describe", *args, "-n", "capi-prod")
    assert both == ok(capsys, "describe", *args, "-n", "capi-prod")
    assert POOL in both.out


def test_rollout_takes_them_before_either_word(capsys) -> None:
    args = [POOL, "-f", EXAMPLES, "--now", NOW, "-w=false"]
    after = run_cli(capsys, "rollout", "status", *args, "-n", "capi-prod")
    assert POOL in after.out
    assert run_cli(capsys, "-n", "capi-prod", "rollout", "status", *args) == after
    assert run_cli(capsys, "rollout", "-n", "capi-prod", "status", *args) == after
    assert run_cli(capsys, "-n", "x", "rollout", "-n", "capi-prod", "status", *args) == after


def test_kubeconfig_and_context_before_reach_the_subcommand(capsys, tmp_path) -> None:
    missing = str(tmp_path / "none.yaml")
    before = run_cli(capsys, "--kubeconfig", missing, "--context", "c", "list")
    assert before == run_cli(capsys, "list", "--kubeconfig", missing, "--context", "c")
    assert before.code == 1
    assert missing in before.err


def test_request_timeout_before_is_checked_as_after(capsys) -> None:
    before = run_cli(capsys, "--request-timeout", "5x", "list")
    assert before == run_cli(capsys, "list", "--request-timeout", "5x")
    assert before.code == 2


def test_a_command_without_those_flags_ignores_them(capsys) -> None:
    assert ok(capsys, "-n", "capi-prod", "explain", "MP0101") == ok(capsys, "explain", "MP0101")


def test_completion_after_a_namespace_before_the_subcommand(capsys, tmp_path, monkeypatch) -> None:
    """`kubectl machinepool -n ns describe <TAB>` offers that namespace's pools (here from the
    cache a first TAB leaves; the kubeconfig's server refuses connections)."""
    monkeypatch.setenv("KUBECONFIG", str(dead_kubeconfig(tmp_path)))
    cached = [("spares", "Cluster prod"), ("workers", "Cluster prod")]
    suggest._cached(suggest._cache_key("pools", {"namespace": "prod-ns"}), lambda: cached)

    def answer(*words: str) -> list[str]:
        complete(list(words))
        return capsys.readouterr().out.splitlines()

    offered = ["spares\tCluster prod", "workers\tCluster prod", ":4"]
    assert answer("-n", "prod-ns", "describe", "") == offered
    assert answer("--namespace=prod-ns", "rollout", "pause", "") == offered
    assert answer("-n", "elsewhere", "describe", "") == [":4"]  # not cached: asked, refused
    after_flags = [line.split("\t")[0] for line in answer("-n", "prod-ns", "d")]
    assert after_flags == ["delete-machine", "describe", "diagnose", "diff", "diff-metadata", ":4"]


# -- one error style, "did you mean" -------------------------------------------------------------

HELP = "hint: see 'kubectl machinepool --help'"


@pytest.mark.parametrize(
    ("args", "lines"),
    [
        (["lst"], ['error: unknown command "lst" for "kubectl machinepool"', "hint: did you mean list?"]),
        (["desc"], ['error: unknown command "desc" for "kubectl machinepool"', "hint: did you mean describe?"]),
        (["rollout", "stat"], ['error: unknown command "stat" for "kubectl machinepool rollout"', "hint: did you mean status?"]),
        (["frobnicate"], ['error: unknown command "frobnicate" for "kubectl machinepool"', HELP]),
        (["describe", "--shw-all"], ["error: unknown flag: --shw-all", "hint: did you mean --show-all?"]),
        (["describe", "--namespce", "x"], ["error: unknown flag: --namespce", "hint: did you mean --namespace?"]),
        (["rollout", "status", "--no-wach"], ["error: unknown flag: --no-wach", "hint: did you mean --no-watch?"]),
        (["--contxt", "c", "list"], ["error: unknown flag: --contxt", "hint: did you mean --context?"]),
        (["list", "-x"], ["error: unknown shorthand flag: 'x' in -x", "hint: see 'kubectl machinepool list --help'"]),
        (["scale", "vmss-workers"], ["error: missing option '--replicas'", "hint: see 'kubectl machinepool scale --help'"]),
        (["-n"], ["error: option '-n' requires an argument", HELP]),
        (["scale", "p", "--replicas", "abc"], ["error: invalid value for '--replicas': 'abc' is not an integer", "hint: see 'kubectl machinepool scale --help'"]),
        (["list", "-n"], ["error: option '-n' requires an argument", "hint: see 'kubectl machinepool list --help'"]),
        (["-n", "x", "rollout", "undo", "p", "--to-revision"], ["error: option '--to-revision' requires an argument", "hint: see 'kubectl machinepool rollout undo --help'"]),
    ],
)  # fmt: skip
def test_usage_errors_are_an_error_and_a_hint(capsys, args: list[str], lines: list[str]) -> None:
    result = run_cli(capsys, *args)
    assert (result.code, result.out, result.err.splitlines()) == (2, "", lines)


def test_a_bad_flag_value_says_what_is_wrong_and_where_the_help_is(capsys) -> None:
    result = run_cli(capsys, "list", "-o=xml")
    error, hint = result.err.splitlines()
    assert result.code == 2
    assert error.startswith("error: invalid value for '-o' / '--output': 'xml' is not one of table")
    assert hint == "hint: see 'kubectl machinepool list --help'"


# -- json and yaml -------------------------------------------------------------------------------


def test_every_command_with_json_has_yaml() -> None:
    for command in every_command():
        for param in command.params:
            formats = getattr(param.type, "formats", None) or getattr(param.type, "choices", ())
            if param.name == "format" and "json" in formats:
                assert "yaml" in formats, command.name


def test_rollout_status_yaml_is_its_json(capsys) -> None:
    args = ["rollout", "status", POOL, "-n", "capi-prod", "-f", EXAMPLES, "--now", NOW]
    as_json = run_cli(capsys, *args, "-o", "json")
    as_yaml = run_cli(capsys, *args, "-o=yaml")
    assert as_yaml.code == as_json.code
    assert yaml.safe_load(as_yaml.out) == json.loads(as_json.out)
    assert json.loads(as_json.out)


# -- which commands take -A and -l ----------------------------------------------------------------

NAMED_IN_ONE_NAMESPACE = {
    "scale",
    "upgrade",
    "pause",
    "resume",
    "restart",
    "undo",
    "history",
    "diff",
}


def test_a_command_on_named_pools_does_not_offer_a_selector_it_would_ignore() -> None:
    """The writes once listed -A and -l in --help, refused -A and ignored -l: a plan for a pool
    the selector did not select was shown and carried out."""
    offering = {
        command.name: {p.name for p in command.params} & {"all_namespaces", "selector"}
        for command in every_command()
    }
    assert {name for name, flags in offering.items() if flags} >= {"list", "describe", "diagnose"}
    for name in NAMED_IN_ONE_NAMESPACE:
        assert offering[name] == set(), name


@pytest.mark.parametrize("flag", [["-l", "env=prod"], ["--selector=env=prod"], ["-A"]])
def test_a_selector_on_a_write_is_a_usage_error(capsys, flag: list[str]) -> None:
    result = run_cli(
        capsys, "scale", "asg-workers", "--replicas", "5", *flag, "-f", EXAMPLES, "--dry-run=client"
    )
    assert result.code == 2, result.out
    assert result.err.startswith("error: unknown "), result.err
    assert "patched" not in result.out


def test_no_headers_is_offered_only_where_the_text_has_tables() -> None:
    """diagnose, diff-metadata, rollout status and diff took --no-headers and did nothing."""
    offering = {c.name for c in every_command() if "no_headers" in {p.name for p in c.params}}
    assert offering == {"list", "describe", "events", "history", "providers"}


@pytest.mark.parametrize(
    "spelled",
    ["machine/vmss-workers-1", "machines.cluster.x-k8s.io/vmss-workers-1", "ma/vmss-workers-1"],
)
def test_delete_machine_takes_a_machine_as_kubectl_get_machines_o_name_prints_it(
    capsys, spelled: str
) -> None:
    args = ["-n", "capi-prod", "-f", EXAMPLES, "--now", NOW, "--dry-run=client"]
    by_type = run_cli(capsys, "delete-machine", spelled, *args)
    assert by_type == run_cli(capsys, "delete-machine", "vmss-workers-1", *args)
    assert by_type.code == 0, by_type.err
    other = run_cli(capsys, "delete-machine", "mp/vmss-workers-1", *args)
    assert other.code == 2
    assert other.err.startswith("error: delete-machine takes Machines, not 'mp'")
