"""The shape of the house: each package imports only the packages below it (the layout map in
docs/architecture.md), no module imports itself through others, and only the command line knows
click."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from support.docs import page, section

PACKAGE = Path(__file__).resolve().parents[2] / "kubectl_machinepool"
NAME = PACKAGE.name
LAYOUT = section(page("architecture"), "# How the code is laid out")


def layout_map() -> dict[str, frozenset[str]]:
    """What each package may import besides itself, as the layout map's package table says, in
    its order: "everything below" is every package after the row, "nothing" none."""
    rows = re.findall(r"^\| `([a-z]+)/` \| [^|]+ \| ([^|]+) \|$", LAYOUT, re.MULTILINE)
    order = [package for package, _ in rows]
    may: dict[str, frozenset[str]] = {}
    for at, (package, allowed) in enumerate(rows):
        if allowed == "everything below":
            may[package] = frozenset(order[at + 1 :])
        elif allowed == "nothing":
            may[package] = frozenset()
        else:
            may[package] = frozenset(name.strip() for name in allowed.split(","))
    return may


# app runs a command's job and never prints, so it does not see render; render draws what it is
# given and never reads, so it does not see kube or app.
MAY_IMPORT = layout_map()
# The package's own modules at its root: the version (which every package may read) and the
# entry point of `python -m kubectl_machinepool`.
ROOT_MODULES = {"": frozenset(MAY_IMPORT), "__main__": frozenset({"cli"})}


def module_of(path: Path) -> str:
    """ "kube.client" for kube/client.py, "kube" for kube/__init__.py, "" for the root."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_of(p): p for p in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in p.parts}


def imported(path: Path, known: Iterable[str]) -> set[str]:
    """The package's modules this file imports, wherever the import is (a function, a
    TYPE_CHECKING block): `from pkg.kube import fencing` is the module kube.fencing."""
    known = set(known)
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        for name in names:
            if name == NAME or name.startswith(NAME + "."):
                relative = name[len(NAME) + 1 :]
                if relative in known:
                    found.add(relative)
    return found


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imported(path, found) - {name} for name, path in found.items()}


def package_of(module: str) -> str:
    return module.split(".", maxsplit=1)[0] if module else ""


def wrong_way(imports: Mapping[str, Iterable[str]]) -> list[str]:
    """Each import that points against MAY_IMPORT, as "importer -> imported"."""
    wrong = []
    for module, targets in imports.items():
        home = package_of(module)
        allowed = ROOT_MODULES[module] if module in ROOT_MODULES else MAY_IMPORT[home]
        for target in sorted(targets):
            there = package_of(target)
            if there not in (home, "") and there not in allowed:
                wrong.append(f"{module} -> {target}")
    return wrong


def circles(imports: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Groups of modules that import one another, through any path (Tarjan's components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in imports.get(module, ()):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(imports):
        if module not in index:
            visit(module)
    return found


def test_every_package_is_in_the_order() -> None:
    packages = {package_of(m) for m in modules() if "." in m or (PACKAGE / m).is_dir()}
    assert packages - {""} == set(MAY_IMPORT)


def test_imports_flow_one_way() -> None:
    assert wrong_way(graph()) == []


def test_no_module_imports_itself_through_others() -> None:
    # A package's __init__ that gathers its modules is the one loop allowed: importing
    # diagnostics.core runs diagnostics/__init__.py first, which is not a circle of modules.
    imports = {m: {t for t in ts if t != package_of(m)} for m, ts in graph().items()}
    assert circles(imports) == []


def test_the_checks_catch_a_wrong_way_import_and_a_circle() -> None:
    """The checks themselves, on the real graph with one bad import added."""
    real = graph()
    assert wrong_way({**real, "model.pool": real["model.pool"] | {"app.reading"}}) == [
        "model.pool -> app.reading"
    ]
    assert wrong_way({**real, "render.tree": real["render.tree"] | {"kube.client"}}) == [
        "render.tree -> kube.client"
    ]
    looped = {**real, "base.fields": {"base.timeutil"}, "base.timeutil": {"base.fields"}}
    assert circles(looped) == [["base.fields", "base.timeutil"]]


def test_only_the_command_line_imports_click() -> None:
    offenders = []
    for module, path in modules().items():
        if package_of(module) == "cli":
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(n == "click" or n.startswith("click.") for n in names):
                offenders.append(module)
    assert offenders == []


def test_no_command_module_imports_another() -> None:
    commands = {m for m in modules() if m.startswith("cli.commands.")}
    assert len(commands) >= 5
    shared = {
        "cli.commands.flags",
        "cli.commands.poolnames",
        "cli.commands.showing",
        "cli.commands.confirming",
        "cli.commands.poolwrites",
        "cli.commands.rollingout",
    }
    for module, targets in graph().items():
        if module in commands:
            assert targets & commands - shared == set(), module


# The methods of kube.client.Kube that send a request; only kube/ calls them.
REQUESTS = frozenset({"request", "list", "list_of", "stream", "watch", "machine_pools"})


def requests_outside_kube(sources: Mapping[str, str]) -> list[str]:
    """module:line of each call of a request method outside kube/."""
    found = []
    for module, source in sources.items():
        if module == "kube" or module.startswith("kube."):
            continue
        for node in ast.walk(ast.parse(source)):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in REQUESTS
            ):
                found.append(f"{module}:{node.lineno}")
    return found


def test_only_kube_talks_to_an_api_server() -> None:
    sources = {module: path.read_text() for module, path in modules().items()}
    assert requests_outside_kube(sources) == []
    wrong = {"app.reading": "def f(kube):\n    return kube.list(None, None)\n"}
    assert requests_outside_kube(wrong) == ["app.reading:2"]


# About 400 lines a module: past it, a module has usually taken a second job.
MAX_LINES = 405


def test_no_module_is_over_about_400_lines() -> None:
    long = {
        m: n for m, p in modules().items() if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def test_setup_cfg_installs_every_package() -> None:
    """setup.cfg lists packages one by one: one missing installs a plugin without it (an
    editable install does not show it)."""
    import configparser

    config = configparser.ConfigParser()
    config.read(PACKAGE.parent / "setup.cfg")
    listed = set(config["options"]["packages"].split())
    found = {
        ".".join(p.relative_to(PACKAGE.parent).parts[:-1])
        for p in PACKAGE.rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    assert found <= listed


def test_the_layout_map_is_layered() -> None:
    """Data flows down the list: a package may import only packages listed below it."""
    order = list(MAY_IMPORT)
    assert order[0] == "cli"
    assert order[-1] == "base"
    for at, package in enumerate(order):
        assert MAY_IMPORT[package] <= set(order[at + 1 :]), package
    assert "render" not in MAY_IMPORT["app"]
    assert {"kube", "app"}.isdisjoint(MAY_IMPORT["render"])


def test_the_layout_map_names_every_module() -> None:
    named = set(re.findall(r"`([a-z_/]+\.py|[a-z_]+/)`", LAYOUT))
    unlisted = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" in path.parts or path.name in ("__init__.py", "__main__.py"):
            continue
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] == "diagnostics":
            continue  # listed as diagnostics/, one family per module
        if str(relative) not in named and relative.name not in named:
            unlisted.append(str(relative))
    assert unlisted == []
    assert "diagnostics/" in named
