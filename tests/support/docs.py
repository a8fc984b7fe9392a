"""README.md and the pages under docs/ behind it, as the tests that hold them to the code read them.

README is the front door: one short section per command, each with one example and a link to its
page under docs/, where the full reference and the real output live.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def readme() -> str:
    return README.read_text()


def page(name: str) -> str:
    """docs/NAME.md."""
    return (DOCS / f"{name}.md").read_text()


def pages() -> dict[Path, str]:
    """README.md and every docs page, by path."""
    return {path: path.read_text() for path in [README, *sorted(DOCS.glob("*.md"))]}


def section(text: str, heading: str) -> str:
    """From the line that starts with heading to the next heading of its level or above (or the
    end): `section(page("list"), "## list: jsonpath")` ends before the next `## ` or `# `."""
    start = text.index(heading)
    level = len(heading) - len(heading.lstrip("#"))
    rest = text[start + len(heading) :]
    following = re.search(rf"^#{{1,{level}}} ", rest, re.MULTILINE)
    return text[start : start + len(heading) + (following.start() if following else len(rest))]


def fenced(text: str) -> list[str]:
    """The contents of the ``` blocks in text, each ending in a newline."""
    return text.split("```\n")[1::2]


def outside_fences(text: str) -> str:
    """text without its fenced blocks (whose lines are output, not markdown)."""
    return "".join(re.split(r"^```[a-z]*\n.*?^```\n", text, flags=re.MULTILINE | re.DOTALL))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, each space
    a `-`: `list: jsonpath, custom-columns, --sort-by, -L` is
    `list-jsonpath-custom-columns---sort-by--l`."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors of a page's headings; a repeated heading gets -1, -2, ... as on GitHub."""
    found: set[str] = set()
    for heading in re.findall(r"^#{1,6} (.+)$", outside_fences(text), re.MULTILINE):
        anchor = base = slug(heading)
        count = 0
        while anchor in found:
            count += 1
            anchor = f"{base}-{count}"
        found.add(anchor)
    return found


def relative_links(text: str) -> list[str]:
    """The targets of text's markdown links that are not URLs: `docs/list.md#list`, `#describe`."""
    targets = re.findall(r"\]\(([^)\s]+)\)", outside_fences(text))
    return [t for t in targets if not re.match(r"[a-z][a-z0-9+.-]*:", t)]
