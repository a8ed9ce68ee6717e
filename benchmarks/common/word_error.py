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


_NUMBERS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty"
)
_SAID = {**{str(n): word for n, word in enumerate(_NUMBERS.split())}, "mr": "mister", "mrs": "missus"}


def said_words(text: str) -> list[str]:
    """``words``, with the numbers and titles whisper writes ("5", "Mr.") as they are said."""
    return [_SAID.get(word, word) for word in words(text)]


def wer_said(reference: str, hypothesis: str) -> float:
    """``wer`` over ``said_words``: "five five" heard as "5 5" is no error."""
    return wer(" ".join(said_words(reference)), " ".join(said_words(hypothesis)))


def insertions(reference: str, hypothesis: str) -> int:
    """Words of ``hypothesis`` an alignment with ``reference`` (over ``said_words``) finds no place for."""
    ref, hyp = said_words(reference), said_words(hypothesis)
    # cost[i][j]: (edits, insertions) aligning ref[:i] with hyp[:j]; fewest edits, then fewest insertions
    cost = [[(j, j) for j in range(len(hyp) + 1)]]
    for i, word in enumerate(ref, start=1):
        row = [(i, 0)]
        for j, other in enumerate(hyp, start=1):
            diagonal = cost[i - 1][j - 1]
            row.append(
                min(
                    (diagonal[0] + (word != other), diagonal[1]),
                    (cost[i - 1][j][0] + 1, cost[i - 1][j][1]),
                    (row[j - 1][0] + 1, row[j - 1][1] + 1),
                )
            )
        cost.append(row)
    return cost[-1][-1][1]
