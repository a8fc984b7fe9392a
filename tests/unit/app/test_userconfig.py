"""The user's config file and --ignore: where the file is, what it may say, and each mistake in
it as one error naming its line."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest

from kubectl_machinepool.app.userconfig import (
    ENV,
    MAX_BYTES,
    config_path,
    flag_ignores,
    load,
    parse,
    rule_options,
)
from kubectl_machinepool.base.errors import ConfigError, UsageError
from kubectl_machinepool.diagnostics.ignoring import Ignore
from kubectl_machinepool.diagnostics.thresholds import Thresholds

SHOWN = "~/.config/kubectl-machinepool/config.yaml"
GOOD = """\
# what the on-call team accepted
ignore:
  - rule: MP1801                  # everywhere
  - rule: mp0104
    cluster: capi-prod/batch
  - rule: MP1301
    pool: capi-prod/vmss-batch
thresholds:
  scalingGrace: 5m
  drainGrace: 300
"""


def error_of(text: str) -> str:
    with pytest.raises(ConfigError) as raised:
        parse(text, SHOWN)
    assert raised.value.hint
    return raised.value.message


def test_a_good_file_is_its_ignores_and_graces() -> None:
    config = parse(GOOD, SHOWN)
    assert config.ignores == (
        Ignore("MP1801", source=SHOWN),
        Ignore("MP0104", cluster=("capi-prod", "batch"), source=SHOWN),
        Ignore("MP1301", pool=("capi-prod", "vmss-batch"), source=SHOWN),
    )
    assert config.graces == (
        ("scaling", timedelta(minutes=5)),
        ("drain", timedelta(seconds=300)),
    )


@pytest.mark.parametrize(
    "text", ["", "# all commented out\n", "ignore:\nthresholds:\n", "ignore: []\n"]
)
def test_an_empty_file_or_empty_keys_ignore_nothing(text: str) -> None:
    config = parse(text, SHOWN)
    assert (config.ignores, config.graces) == ((), ())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # YAML syntax: PyYAML's mark
        ("ignore:\n  - rule: MP1801\n   pool: a/b\n", "3: did not find expected '-' indicator"),
        ("ignore: [\n", "2: did not find expected node content"),
        (
            "a: 1\n---\nb: 2\n",
            "2: expected a single document in the stream, but found another document",
        ),
        # the shape
        ("- rule: MP1801\n", "1: the file: expected a mapping, found a list"),
        (
            "ignores:\n  - rule: MP1801\n",
            "1: the file: unknown key 'ignores' (did you mean ignore?)",
        ),
        (
            "ignore: []\ncolour: red\n",
            "2: the file: unknown key 'colour' (known: ignore, thresholds)",
        ),
        ("ignore: []\nignore: []\n", "2: the file: ignore is given twice"),
        ("ignore: MP1801\n", "1: ignore: expected a list, found a string"),
        ("ignore:\n  - MP1801\n", "2: ignore[0]: expected a mapping, found a string"),
        (
            "ignore:\n  - rule: MP1801\n    clustr: a/b\n",
            "3: ignore[0]: unknown key 'clustr' (did you mean cluster?)",
        ),
        (
            "ignore:\n  - pool: a/b\n",
            "2: ignore[0]: no rule (each entry names one, e.g. rule: MP0104)",
        ),
        (
            "ignore:\n  - rule: MP1801\n  - rule: [MP0104]\n",
            "3: ignore[1].rule: expected a string, found a list",
        ),
        ("ignore:\n  - rule: 1801\n", "2: ignore[0].rule: expected a string, found a number"),
        (
            "ignore:\n  - {rule: MP1801, 7: x}\n",
            "2: a key of ignore[0]: expected a string, found a number",
        ),
        (
            "ignore:\n- rule: MP1801\n  pool: a/b\n  cluster: a/c\n",
            "2: ignore[0]: cluster or pool, not both (a pool names its Cluster)",
        ),
        (
            "ignore:\n- rule: MP1801\n\n  pool: vmss-batch\n",
            "4: ignore[0].pool: expected namespace/name, e.g. capi-prod/vmss-batch, found 'vmss-batch'",
        ),
        (
            "ignore:\n- rule: MP1801\n  cluster: Prod/x\n",
            "3: ignore[0].cluster: expected namespace/name, e.g. capi-prod/prod, found 'Prod/x'",
        ),
        (
            "ignore:\n- rule: MP1801\n  cluster: null\n",
            "3: ignore[0].cluster: expected a string, found nothing",
        ),
        ("thresholds: 5m\n", "1: thresholds: expected a mapping, found a string"),
        (
            "thresholds:\n  scalingGrace: 5x\n",
            "2: invalid value '5x' for thresholds.scalingGrace (e.g. 5m, 90s, 1h30m)",
        ),
        (
            "thresholds:\n  taintGrace: true\n",
            "2: thresholds.taintGrace: expected a duration such as 5m, found true or false",
        ),
        (
            "thresholds:\n  rolloutGrace: 5m\n",
            "2: thresholds: unknown key 'rolloutGrace' "
            "(known: scalingGrace, taintGrace, deletingGrace, drainGrace)",
        ),
        (
            "thresholds:\n  scalinggrace: 5m\n",
            "2: thresholds: unknown key 'scalinggrace' (did you mean scalingGrace?)",
        ),
        (
            "thresholds: {scalingGrace: 1m, scalingGrace: 2m}\n",
            "1: thresholds: scalingGrace is given twice",
        ),
    ],
)
def test_each_mistake_is_one_error_naming_its_line(text: str, message: str) -> None:
    assert error_of(text) == f"{SHOWN}:{message}"


def test_an_unknown_rule_names_its_line_and_the_closest_codes() -> None:
    with pytest.raises(ConfigError) as raised:
        parse("ignore:\n  - rule: MP1801\n  - rule: MP9801\n", SHOWN)
    assert raised.value.message == f"{SHOWN}:3: ignore[1].rule: no rule MP9801"
    assert raised.value.hint is not None
    assert raised.value.hint.startswith("did you mean MP2801, MP1901 or MP1801?")


def test_aliases_are_checked_where_they_land() -> None:
    """An alias stands for its node: each use is checked, and nothing is expanded further than
    the schema goes."""
    text = "ignore:\n  - &everywhere {rule: MP1801}\n  - *everywhere\n"
    assert parse(text, SHOWN).ignores == (Ignore("MP1801", source=SHOWN),)


def env_for(tmp_path: Path, **values: str) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), **values}


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def test_the_file_is_found_as_xdg_says(tmp_path: Path) -> None:
    home = tmp_path / "home"
    default = str(home / ".config" / "kubectl-machinepool" / "config.yaml")
    assert config_path(env_for(tmp_path)) == (default, False)
    # A relative XDG_CONFIG_HOME is invalid, and so ignored.
    assert config_path(env_for(tmp_path, XDG_CONFIG_HOME="relative")) == (default, False)
    xdg = str(tmp_path / "xdg" / "kubectl-machinepool" / "config.yaml")
    assert config_path(env_for(tmp_path, XDG_CONFIG_HOME=str(tmp_path / "xdg"))) == (xdg, False)
    named = env_for(tmp_path, XDG_CONFIG_HOME=str(tmp_path / "xdg"), **{ENV: "/etc/mp.yaml"})
    assert config_path(named) == ("/etc/mp.yaml", True)
    assert config_path(env_for(tmp_path, **{ENV: "off"})) is None


def test_no_default_file_is_no_config_and_a_file_in_home_is_shown_with_a_tilde(
    tmp_path: Path,
) -> None:
    env = env_for(tmp_path)
    assert load(env) is None
    write(tmp_path / "home" / ".config" / "kubectl-machinepool" / "config.yaml", GOOD)
    config = load(env)
    assert config is not None
    assert config.shown == SHOWN
    assert load(env_for(tmp_path, **{ENV: "off"})) is None


def test_a_named_file_that_does_not_exist_is_an_error(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match=f"^{ENV} names {missing}, which does not exist$"):
        load(env_for(tmp_path, **{ENV: missing}))


def test_a_huge_file_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    path = write(tmp_path / "big.yaml", "ignore:\n" + "  - rule: MP1801\n" * (MAX_BYTES // 16))
    assert os.path.getsize(path) > MAX_BYTES
    with pytest.raises(ConfigError, match=r"^cannot read .*big\.yaml: larger than 1 MiB$"):
        load(env_for(tmp_path, **{ENV: str(path)}))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.mkdir(parents=True), "it is a directory, not a regular file"),
        (os.mkfifo, "it is a FIFO, not a regular file"),
        (lambda p: write(p, b"ignore: \xff\n"), "not UTF-8 text"),
    ],
    ids=["directory", "fifo", "not-utf8"],
)
def test_what_is_no_readable_file_is_an_error_not_a_hang(tmp_path: Path, make, message) -> None:
    path = tmp_path / "config" / "kubectl-machinepool" / "config.yaml"
    path.parent.mkdir(parents=True)
    make(path)
    with pytest.raises(ConfigError, match=message):
        load(env_for(tmp_path, XDG_CONFIG_HOME=str(tmp_path / "config")))


def test_ignore_flag_values_are_codes_in_any_case_comma_separated_and_repeatable() -> None:
    assert flag_ignores(["MP1801,mp0104", " MP1301 ", "MP1801"]) == (
        Ignore("MP1801"),
        Ignore("MP0104"),
        Ignore("MP1301"),
    )


@pytest.mark.parametrize(
    ("values", "message", "hint"),
    [
        (["MP9104"], "no rule MP9104 for --ignore", "did you mean MP0904, MP0104 or MP2101?"),
        (["R13"], "no rule R13 for --ignore", "kubectl machinepool explain --list"),
        (["MP1801,"], "invalid value 'MP1801,' for --ignore", "--ignore MP0104,MP1301"),
    ],
)
def test_an_unknown_ignore_is_a_usage_error_with_close_matches(values, message, hint) -> None:
    with pytest.raises(UsageError) as raised:
        flag_ignores(values)
    assert raised.value.message == message
    assert raised.value.hint is not None
    assert raised.value.hint.startswith(hint)


def test_flags_win_over_the_file(tmp_path: Path) -> None:
    path = write(
        tmp_path / "c.yaml",
        "ignore: [{rule: MP1801}]\nthresholds:\n  scalingGrace: 5m\n  taintGrace: 10m\n",
    )
    given = {"scaling": "1m", "taint": None, "deleting": None, "drain": None}
    options = rule_options(
        env_for(tmp_path, **{ENV: str(path)}), ignore=["MP0104"], graces=given, capi_version=None
    )
    # A grace given on the command line wins; one not given is the file's, else the default.
    assert options.thresholds == Thresholds(
        scaling=timedelta(minutes=1), taint=timedelta(minutes=10)
    )
    # --ignore adds to the file's, and comes first (the count line names it first).
    assert options.ignores == (Ignore("MP0104"), Ignore("MP1801", source=str(path)))
