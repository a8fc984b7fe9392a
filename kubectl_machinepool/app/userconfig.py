"""The user's config file, and --ignore: the findings an operator has accepted and the rules'
thresholds, as the rule options of a command that judges.

The file is $KUBECTL_MACHINEPOOL_CONFIG (`off`: none, as kubectl's KUBERC), else
$XDG_CONFIG_HOME/kubectl-machinepool/config.yaml, else ~/.config/kubectl-machinepool/config.yaml;
a default file that does not exist is no config. It is read as -f is (base/inputfiles.py: a
regular file, bounded) and checked node by node from yaml.compose, so that every error names its
line. Flags win over the file: a grace given on the command line, and --ignore added to the
file's ignores. YAML is imported only when there is a file to read.

    ignore:
      - rule: MP1801                  # everywhere
      - rule: MP0104
        cluster: capi-prod/batch      # only in this Cluster (namespace/name)
      - rule: MP1301
        pool: capi-prod/vmss-batch    # only on this MachinePool (namespace/name)
    thresholds:
      scalingGrace: 5m                # and taintGrace, deletingGrace, drainGrace
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING

from kubectl_machinepool.app.options import RuleOptions
from kubectl_machinepool.base.durations import parse_duration
from kubectl_machinepool.base.errors import ConfigError, MachinePoolError, UsageError
from kubectl_machinepool.base.inputfiles import Budget, decoded, read_file
from kubectl_machinepool.base.kubeversion import version
from kubectl_machinepool.base.records import record
from kubectl_machinepool.diagnostics.ignoring import FLAG, Ignore
from kubectl_machinepool.diagnostics.thresholds import Thresholds

if TYPE_CHECKING:
    import yaml

ENV = "KUBECTL_MACHINEPOOL_CONFIG"
# Hand-written: a few hundred entries take some KiB.
MAX_BYTES = 1 << 20
# The file's names for the graces, and the Thresholds field each sets.
GRACES = {
    "scalingGrace": "scaling",
    "taintGrace": "taint",
    "deletingGrace": "deleting",
    "drainGrace": "drain",
}
_TOP = ("ignore", "thresholds")
_ENTRY = ("rule", "cluster", "pool")
_HINT = (
    f"fix the file, or set {ENV}=off to run without it; its keys: ignore (a list of rule, with "
    f"cluster or pool as namespace/name) and thresholds ({', '.join(GRACES)})"
)
_TAG = "tag:yaml.org,2002:"
_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")


@record
class UserConfig:
    # The file as the user is shown it (~ for the home directory).
    shown: str
    ignores: tuple[Ignore, ...] = ()
    # Thresholds' field names and their values, for the graces the file sets.
    graces: tuple[tuple[str, timedelta], ...] = ()


def rule_options(
    env: Mapping[str, str],
    *,
    ignore: Sequence[str],
    graces: Mapping[str, str | None],
    capi_version: str | None,
) -> RuleOptions:
    """The rule options of a command that judges. ignore: --ignore's values as given; graces:
    the --NAME-grace flags' values by Thresholds field name, None where not given."""
    if capi_version is not None and version(capi_version) is None:
        # Read whole, as every version is: v1.10.3;x is not v1.10.3.
        raise UsageError(
            f"--capi-version {capi_version!r} is not a semantic version", hint="e.g. v1.10.3"
        )
    ignores = flag_ignores(ignore)
    given = {
        name: timedelta(seconds=parse_duration(value, f"--{name}-grace") or 0)
        for name, value in graces.items()
        if value is not None
    }
    config = load(env) or UserConfig("")
    # What the command line gives wins over the file; --ignore adds to the file's.
    values = {**dict(config.graces), **given}
    return RuleOptions(Thresholds(**values), capi_version, (*ignores, *config.ignores))


def flag_ignores(values: Sequence[str]) -> tuple[Ignore, ...]:
    """--ignore RULE[,RULE...], repeatable: codes, any case."""
    codes = [code.strip() for value in values for code in value.split(",")]
    if any(not code for code in codes):
        raise UsageError(
            f"invalid value {','.join(values)!r} for {FLAG}", hint=f"{FLAG} MP0104,MP1301"
        )
    found = []
    for code in codes:
        known, close = _known(code)
        if known is None:
            raise UsageError(f"no rule {code} for {FLAG}", hint=_rule_hint(close))
        found.append(Ignore(known))
    return tuple(dict.fromkeys(found))


def _known(code: str) -> tuple[str | None, list[str]]:
    """The rule code as the registry spells it, else the closest codes."""
    from kubectl_machinepool.diagnostics.rules import BY_CODE

    wanted = code.upper()
    if wanted in BY_CODE:
        return wanted, []
    number = int(wanted[2:]) if wanted[2:].isdigit() else None

    def likeness(known: str) -> tuple[float, int]:
        # Codes are alike in most characters: among equally alike ones, the nearest number.
        ratio = difflib.SequenceMatcher(None, wanted, known).ratio()
        return ratio, -abs(int(known[2:]) - number) if number is not None else 0

    close = sorted(difflib.get_close_matches(wanted, BY_CODE, n=len(BY_CODE)), key=likeness)
    return None, close[::-1][:3]


def _rule_hint(close: Sequence[str]) -> str:
    listing = "kubectl machinepool explain --list lists every rule"
    if not close:
        return listing
    spelled = " or ".join([", ".join(close[:-1]), close[-1]] if len(close) > 1 else close)
    return f"did you mean {spelled}? {listing}"


def config_path(env: Mapping[str, str]) -> tuple[str, bool] | None:
    """The file to read, and whether it was named ($KUBECTL_MACHINEPOOL_CONFIG); None: off."""
    named = env.get(ENV, "")
    if named == "off":
        return None
    if named:
        return named, True
    base = env.get("XDG_CONFIG_HOME", "")
    if not os.path.isabs(base):  # the XDG spec: a relative path is invalid, and ignored
        base = os.path.join(_home(env), ".config")
    return os.path.join(base, "kubectl-machinepool", "config.yaml"), False


def _home(env: Mapping[str, str]) -> str:
    return env.get("HOME") or os.path.expanduser("~")


def shown_path(path: str, env: Mapping[str, str]) -> str:
    home = _home(env).rstrip("/")
    return "~" + path[len(home) :] if home and path.startswith(home + "/") else path


def load(env: Mapping[str, str]) -> UserConfig | None:
    """The config file read and checked; None when there is none."""
    where = config_path(env)
    if where is None:
        return None
    path, named = where
    shown = shown_path(path, env)
    try:
        if not named and not os.path.lexists(path):
            return None
        text = decoded(shown, read_file(path, Budget(shown), limit=MAX_BYTES))
    except MachinePoolError as err:
        missing = named and not os.path.lexists(path)
        message = f"{ENV} names {shown}, which does not exist" if missing else err.message
        raise ConfigError(message, hint=_HINT) from err
    return parse(text, shown)


def parse(text: str, shown: str) -> UserConfig:
    """The file's text checked against its schema; errors name shown:line."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        root = yaml.compose(text, Loader=loader)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = f":{mark.line + 1}" if mark else ""
        # "expected a single document in the stream" (the context), "but found another
        # document" (the problem): one sentence.
        said = f"{err.context}, {err.problem}" if (err.problem or "").startswith("but ") else None
        raise ConfigError(
            f"{shown}{line}: {said or err.problem or err.context}", hint=_HINT
        ) from err
    except (yaml.YAMLError, RecursionError, ValueError) as err:
        raise ConfigError(f"{shown}: not YAML this tool reads ({err})", hint=_HINT) from err
    if root is None:
        return UserConfig(shown)
    top = _Checker(shown).mapping(root, "the file", _TOP)
    ignores = _ignores(top.get("ignore"), shown)
    graces = _graces(top.get("thresholds"), shown)
    return UserConfig(shown, ignores, graces)


def _ignores(node: yaml.Node | None, shown: str) -> tuple[Ignore, ...]:
    check = _Checker(shown)
    entries = check.sequence(node, "ignore") if node is not None else []
    found = []
    for at, entry in enumerate(entries):
        where = f"ignore[{at}]"
        keys = check.mapping(entry, where, _ENTRY)
        if "rule" not in keys:
            raise check.error(entry, f"{where}: no rule (each entry names one, e.g. rule: MP0104)")
        code = check.string(keys["rule"], f"{where}.rule")
        known, close = _known(code)
        if known is None:
            message = f"{where}.rule: no rule {code}"
            raise ConfigError(f"{shown}:{_line(keys['rule'])}: {message}", hint=_rule_hint(close))
        if "cluster" in keys and "pool" in keys:
            raise check.error(
                entry, f"{where}: cluster or pool, not both (a pool names its Cluster)"
            )
        cluster = check.named(keys.get("cluster"), f"{where}.cluster", "capi-prod/prod")
        pool = check.named(keys.get("pool"), f"{where}.pool", "capi-prod/vmss-batch")
        found.append(Ignore(known, cluster, pool, shown))
    return tuple(dict.fromkeys(found))


def _graces(node: yaml.Node | None, shown: str) -> tuple[tuple[str, timedelta], ...]:
    check = _Checker(shown)
    if node is None or node.tag == _TAG + "null":
        return ()
    graces = []
    for key, value in check.mapping(node, "thresholds", tuple(GRACES)).items():
        where = f"thresholds.{key}"
        text = check.scalar(value, where, ("str", "int"), "a duration such as 5m")
        try:
            seconds = parse_duration(text, where)
        except UsageError as err:
            raise check.error(value, f"{err.message} (e.g. 5m, 90s, 1h30m)") from err
        graces.append((GRACES[key], timedelta(seconds=seconds or 0)))
    return tuple(graces)


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def _kind(node: yaml.Node) -> str:
    """What a node holds, in words."""
    tag = str(node.tag).removeprefix(_TAG)
    words = {"map": "a mapping", "seq": "a list", "str": "a string", "null": "nothing"}
    named = {"int": "a number", "float": "a number", "bool": "true or false"}
    return words.get(tag) or named.get(tag) or f"a value of type {tag}"


class _Checker:
    """Checks on the composed nodes, each error naming the file and the node's line."""

    def __init__(self, shown: str) -> None:
        self.shown = shown

    def error(self, node: yaml.Node, message: str) -> ConfigError:
        return ConfigError(f"{self.shown}:{_line(node)}: {message}", hint=_HINT)

    def mapping(self, node: yaml.Node, where: str, known: Sequence[str]) -> dict[str, yaml.Node]:
        """A mapping with string keys among known, each once."""
        if node.tag != _TAG + "map":
            raise self.error(node, f"{where}: expected a mapping, found {_kind(node)}")
        found: dict[str, yaml.Node] = {}
        for key, value in node.value:
            name = self.string(key, f"a key of {where}")
            if name not in known:
                close = difflib.get_close_matches(name, known, n=1)
                also = f" (did you mean {close[0]}?)" if close else f" (known: {', '.join(known)})"
                raise self.error(key, f"{where}: unknown key {name!r}{also}")
            if name in found:
                raise self.error(key, f"{where}: {name} is given twice")
            found[name] = value
        return found

    def sequence(self, node: yaml.Node, where: str) -> list[yaml.Node]:
        if node.tag == _TAG + "null":
            return []
        if node.tag != _TAG + "seq":
            raise self.error(node, f"{where}: expected a list, found {_kind(node)}")
        return list(node.value)

    def scalar(self, node: yaml.Node, where: str, tags: Sequence[str], wanted: str) -> str:
        if node.tag.removeprefix(_TAG) not in tags:
            raise self.error(node, f"{where}: expected {wanted}, found {_kind(node)}")
        return str(node.value)

    def string(self, node: yaml.Node, where: str) -> str:
        return self.scalar(node, where, ("str",), "a string")

    def named(self, node: yaml.Node | None, where: str, example: str) -> tuple[str, str] | None:
        """namespace/name, each part as Kubernetes allows it."""
        if node is None:
            return None
        value = self.string(node, where)
        namespace, slash, name = value.partition("/")
        if not (slash and _LABEL.fullmatch(namespace) and _SUBDOMAIN.fullmatch(name)):
            raise self.error(
                node, f"{where}: expected namespace/name, e.g. {example}, found {value!r}"
            )
        return namespace, name
