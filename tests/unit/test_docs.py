"""README is a front door with docs/ behind it: short, every link lands, and each command's section
shows an example its docs page holds (where the tests hold it to what the command prints)."""

from __future__ import annotations

import re
import shlex

import pytest
from support.docs import (
    DOCS,
    README,
    ROOT,
    anchors,
    fenced,
    outside_fences,
    page,
    pages,
    readme,
    relative_links,
    section,
    slug,
)
from support.run import run_cli

# README's sections that stand on their own rather than front a docs page.
FRONT = ("## Install", "## The main job", "## More")


def readme_sections() -> dict[str, str]:
    """README's `## ` sections after the first screen, by heading line."""
    text = readme()
    headings = re.findall(r"^## .+$", outside_fences(text), re.MULTILINE)
    return {heading: section(text, heading) for heading in headings}


def test_readme_is_under_400_lines() -> None:
    assert len(readme().splitlines()) < 400


def test_every_relative_link_lands() -> None:
    broken = []
    for path, text in pages().items():
        for link in relative_links(text):
            target, _, anchor = link.partition("#")
            file = (path.parent / target).resolve() if target else path
            if not file.exists():
                broken.append(f"{path.relative_to(ROOT)}: {link} (no such file)")
            elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text()):
                broken.append(f"{path.relative_to(ROOT)}: {link} (no such heading)")
    assert broken == []


def test_every_docs_page_is_linked_from_readme() -> None:
    linked = {link.partition("#")[0] for link in relative_links(readme())}
    assert {f"docs/{p.name}" for p in DOCS.glob("*.md")} <= linked


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        (
            "list: jsonpath, custom-columns, --sort-by, -L",
            "list-jsonpath-custom-columns---sort-by--l",
        ),
        ("Following a pool: -w", "following-a-pool--w"),
        ("describe -o json|yaml", "describe--o-jsonyaml"),
        ("Export and fleet", "export-and-fleet"),
    ],
)
def test_anchors_are_github_s(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor


def test_each_readme_section_fronts_a_docs_page_holding_its_examples() -> None:
    """A command's section links its page, and each command line, table row and output block it
    shows is on that page verbatim (so the tests that hold the page to the command hold README
    too)."""
    fronting = {h: s for h, s in readme_sections().items() if not h.startswith(FRONT)}
    assert len(fronting) >= 14
    for heading, text in fronting.items():
        targets = {link.partition("#")[0] for link in relative_links(text)}
        linked = [t for t in targets if t.startswith("docs/")]
        assert linked, f"{heading} links no docs page"
        held = "".join((README.parent / t).read_text() for t in linked)
        lines = outside_fences(text).splitlines()
        shown = [*(line for line in lines if line.startswith(("    ", "|"))), *fenced(text)]
        assert shown, f"{heading} shows no example"
        for example in shown:
            assert example in held, f"{heading}: {example!r} is on none of {linked}"


def test_readme_keeps_the_dependency_note() -> None:
    install = section(readme(), "## Install")
    assert "(`kubernetes`)" in install
    words = " ".join(install.split())
    assert "~35 MB per run, measured with kubernetes" in words
    assert "temporary files that outlive a kill" in words


def test_explain_page_shows_what_explain_prints(capsys: pytest.CaptureFixture[str]) -> None:
    text = page("explain")
    commands = [line.strip() for line in text.splitlines() if line.startswith("    kubectl ")]
    command = commands[-1]
    (block,) = fenced(text)
    result = run_cli(capsys, *shlex.split(command)[2:])
    assert (result.code, result.err, result.out) == (0, "", block), command


def test_describe_sample_is_what_describe_prints(capsys: pytest.CaptureFixture[str]) -> None:
    """The first screen of describe's page (and README's, which holds the same block) is the
    real output of the command line above it, not a hand-edited one."""
    text = page("describe")
    command = next(line.strip() for line in text.splitlines() if line.startswith("    kubectl-"))
    result = run_cli(capsys, *shlex.split(command)[1:])
    assert (result.code, result.err) == (0, "")
    assert fenced(text)[0] == result.out
    assert fenced(section(readme(), "## describe"))[0] == result.out
