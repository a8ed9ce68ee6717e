"""A link in README.md, docs/, benchmarks/ or deploy/ names a file that is there and, with a #fragment, a
heading of that file.

The README sends readers to docs/ and benchmarks/README.md for what it no longer holds; a page moved or a
heading renamed must fail here, not leave a reader on the top of a long page.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.paths import ROOT

SEARCHED = (
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted((ROOT / "benchmarks").glob("*.md")),
    *sorted((ROOT / "deploy").glob("*.md")),
)
FENCED = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\]\(([^)\s]+)\)|src=\"([^\"]+)\"")


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = FENCED.sub("", path.read_text(encoding="utf-8"))
    return {anchor(match) for match in re.findall(r"^#+ (.*)$", text, flags=re.MULTILINE)}


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    text = FENCED.sub("", path.read_text(encoding="utf-8"))
    broken = []
    for match in LINK.finditer(text):
        target = match.group(1) or match.group(2)
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        name, _, fragment = target.partition("#")
        linked = (path.parent / name).resolve() if name else path
        if not linked.exists():
            broken.append(f"{path.relative_to(root)}: {target}: no such file")
        elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
            broken.append(f"{path.relative_to(root)}: {target}: no such heading")
    return broken


def test_every_link_in_the_readme_and_docs_is_there() -> None:
    assert [broken for path in SEARCHED for broken in broken_links(path)] == []


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("## On a kiosk: `voice kiosk`", "on-a-kiosk-voice-kiosk"),
        ('## Backchannels and "stop"', "backchannels-and-stop"),
        ("## full_duplex.py: the turn-taking scorecard", "full_duplexpy-the-turn-taking-scorecard"),
    ],
)
def test_an_anchor_is_githubs(heading: str, expected: str) -> None:
    assert anchor(heading.lstrip("# ")) == expected


def test_a_renamed_heading_or_a_missing_page_is_caught(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other\n\n## Kept\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#kept) [gone](other.md#renamed) [none](missing.md) [web](https://example.com/x.md)\n",
        encoding="utf-8",
    )
    assert broken_links(page, tmp_path) == [
        "page.md: other.md#renamed: no such heading",
        "page.md: missing.md: no such file",
    ]
