"""A "§N" pointer in code or docs names a section of docs/architecture.md that is there and fits.

A pointer fits when the section names the file it is in (or that file's folder), or the lines around it
share a word with the section's topics: its heading and its bold lead-ins (for §N.M, rule M of the
section's numbered list). "The event stream (§7)" fits "7. The event API"; "AEC3 eats the user's words
(§3)" does not fit "3. Components and where models come from".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.paths import ROOT

ARCHITECTURE = ROOT / "docs" / "architecture.md"
POINTER = re.compile(r"§(\d+)(?:\.(\d+))?")
SEARCHED = ("voice", "tests", "benchmarks", "docs", "scripts", "deploy", "README.md")
SUFFIXES = {".py", ".md", ".html", ".sh", ".service"}
AROUND = 2  # lines either side of the pointer that say what it points at
SKIPPED = {"tests/test_doc_pointers.py"}  # its examples point wrongly on purpose
# Words too common in this project to tell one section from another.
COMMON = {
    "the", "and", "for", "its", "not", "are", "one", "out", "any", "but", "all", "was", "has", "how", "who",
    "voice", "their", "there", "which", "where", "what", "with", "from", "that", "this", "when", "each",
    "before", "after", "only", "never", "once", "then", "into", "more", "than", "also", "been", "have",
    "will", "must", "does", "says", "said",
}  # fmt: skip


@dataclass(frozen=True)
class Pointer:
    path: str  # relative to the repository
    line: int
    section: int
    rule: int | None
    context: str

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class Section:
    topics: str  # the heading and the bold lead-ins
    text: str
    rules: dict[int, str]  # the items of its first numbered list, whole


def stems(text: str) -> set[str]:
    """The words of ``text`` that can carry a meaning, cut to their first five letters."""
    words = re.findall(r"[a-z]{3,}", text.lower())
    return {word[:5] for word in words if word not in COMMON}


def sections(text: str) -> dict[int, Section]:
    """Each numbered section of docs/architecture.md."""
    found: dict[int, Section] = {}
    for part in re.split(r"^## ", text, flags=re.MULTILINE)[1:]:
        heading, _, body = part.partition("\n")
        number = re.match(r"(\d+)\. ", heading)
        if number is None:
            continue
        bold = " ".join(re.findall(r"\*\*(.+?)\*\*", body))
        items = re.split(r"^(\d+)\. ", body, flags=re.MULTILINE)
        rules = {int(n): item.split("\n\n")[0] for n, item in zip(items[1::2], items[2::2], strict=True)}
        found[int(number.group(1))] = Section(f"{heading} {bold}", body, rules)
    return found


def pointers(path: Path, text: str) -> list[Pointer]:
    lines = text.splitlines()
    found = []
    for index, line in enumerate(lines):
        for match in POINTER.finditer(line):
            context = " ".join(lines[max(0, index - AROUND) : index + AROUND + 1])
            section, rule = int(match.group(1)), match.group(2)
            relative = str(path.relative_to(ROOT))
            found.append(Pointer(relative, index + 1, section, int(rule) if rule else None, context))
    return found


def every_pointer() -> list[Pointer]:
    paths: list[Path] = []
    for name in SEARCHED:
        place = ROOT / name
        paths += [place] if place.is_file() else sorted(p for p in place.rglob("*") if p.suffix in SUFFIXES)
    paths = [path for path in paths if str(path.relative_to(ROOT)) not in SKIPPED]
    return [found for path in paths for found in pointers(path, path.read_text(encoding="utf-8"))]


def misfit(pointer: Pointer, known: dict[int, Section]) -> str | None:
    """Why ``pointer`` does not hold, or None."""
    if pointer.section not in known:
        return f"{pointer.where}: §{pointer.section} is not a section of docs/architecture.md"
    section = known[pointer.section]
    if pointer.rule is not None:
        if pointer.rule not in section.rules:
            return f"{pointer.where}: §{pointer.section} has no rule {pointer.rule}"
        if not stems(section.rules[pointer.rule]) & stems(pointer.context):
            return f"{pointer.where}: nothing around §{pointer.section}.{pointer.rule} speaks of its rule"
        return None
    folder = pointer.path.rsplit("/", 1)[0] + "/"
    if pointer.path in section.text or f"`{folder}`" in section.text:
        return None
    if not stems(section.topics) & stems(pointer.context):
        topics = section.topics.split(" ", 1)[1][:60]
        return f"{pointer.where}: nothing around §{pointer.section} speaks of {topics!r}"
    return None


def test_every_pointer_names_a_section_that_is_there_and_fits() -> None:
    known = sections(ARCHITECTURE.read_text(encoding="utf-8"))
    found = every_pointer()
    assert len(found) > 40  # the search reaches the code, the tests and the docs
    assert [reason for pointer in found if (reason := misfit(pointer, known))] == []


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("The event stream's consumers (docs/architecture.md §12).", "is not a section"),
        ("AEC3's suppression eats the user's words (docs/architecture.md §3).", "nothing around §3"),
        ("The durable session log (docs/architecture.md §1.9).", "has no rule 9"),
        ("The retry policy: only before anything was heard (§1.7).", "nothing around §1"),
    ],
)
def test_a_pointer_to_a_gone_section_or_one_that_says_something_else_fails(line: str, why: str) -> None:
    known = sections(ARCHITECTURE.read_text(encoding="utf-8"))
    (pointer,) = pointers(ROOT / "voice" / "example.py", line)
    reason = misfit(pointer, known)
    assert reason is not None
    assert why in reason
