"""Word errors between what was said and what was heard."""

from __future__ import annotations

import difflib
import re


def normalized_words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def words_wrong(expected: str, heard: str) -> int:
    """Word edits (substitutions, insertions, deletions) between two texts."""
    matcher = difflib.SequenceMatcher(a=normalized_words(expected), b=normalized_words(heard), autojunk=False)
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal")
