"""Word error rate, as the echo benchmarks score what whisper heard of a user against what they said."""

from __future__ import annotations

import re


def words(text: str) -> list[str]:
    """Lower-case words, punctuation dropped."""
    return re.findall(r"[a-z0-9']+", text.lower())


def wer(reference: str, hypothesis: str) -> float:
    """Word-level edit distance over the reference's length (0 for a perfect transcript)."""
    ref, hyp = words(reference), words(hypothesis)
    row = list(range(len(hyp) + 1))
    for i, word in enumerate(ref, start=1):
        diagonal, row[0] = row[0], i
        for j, other in enumerate(hyp, start=1):
            diagonal, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, diagonal + (word != other))
    return row[-1] / max(1, len(ref))
