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


def same_but_one_word(heard: str, said: str) -> bool:
    """The same words but for at most one word heard as another; none lost, none added.

    Whisper's int8 words differ by CPU kernels: on the cut window tiny.en hears "What will the winner be
    like tomorrow?" on AVX2 and in float32, "weather" with MKL's VNNI kernels (docs/architecture.md §3).
    """
    heard_words, said_words = normalized_words(heard), normalized_words(said)
    return len(heard_words) == len(said_words) and sum(map(str.__ne__, heard_words, said_words)) <= 1
