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


def misheard_in_one_place(heard: str, said: str) -> bool:
    """Word for word but in one place, where at most two words said were heard as one to three others; none
    lost, none added. Tiny.en hears "what about the weekend" as "what about that we can" over the reply's
    echo with the AVX2 kernels forced on an Intel Xeon, right on an AMD EPYC's (docs/architecture.md §3)."""
    matcher = difflib.SequenceMatcher(a=normalized_words(said), b=normalized_words(heard), autojunk=False)
    slips = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if not slips:
        return True
    if len(slips) > 1:
        return False
    tag, i1, i2, j1, j2 = slips[0]
    return tag == "replace" and i2 - i1 <= 2 and j2 - j1 <= 3
