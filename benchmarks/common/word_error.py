"""Word error rate, as the echo benchmarks score what whisper heard of a user against what they said."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace


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


@dataclass(frozen=True)
class Alignment:
    """How a hypothesis lines up with its reference, word by word, in order."""

    hits: int = 0
    substitutions: int = 0
    deletions: int = 0  # reference words the hypothesis lacks
    insertions: int = 0  # hypothesis words with no place in the reference

    @property
    def edits(self) -> int:
        return self.substitutions + self.deletions + self.insertions


def fewest_edits(found: Alignment) -> tuple[int, ...]:
    """WER's alignment; of equals, the one with fewest insertions."""
    return found.edits, found.insertions


def most_hits(found: Alignment) -> tuple[int, ...]:
    """The alignment that matches the most words in order; of equals, the one with fewest edits."""
    return -found.hits, found.edits


def align(
    reference: str, hypothesis: str, prefer: Callable[[Alignment], tuple[int, ...]] = fewest_edits
) -> Alignment:
    """The alignment of ``hypothesis`` with ``reference`` (over ``said_words``) ``prefer`` ranks first."""
    ref, hyp = said_words(reference), said_words(hypothesis)
    # best[i][j]: the preferred alignment of ref[:i] with hyp[:j] (both orders rank sums, so it is built up)
    best = [[Alignment(insertions=j) for j in range(len(hyp) + 1)]]
    for i, word in enumerate(ref, start=1):
        row = [Alignment(deletions=i)]
        for j, other in enumerate(hyp, start=1):
            diagonal, up, left = best[i - 1][j - 1], best[i - 1][j], row[j - 1]
            matched = word == other
            row.append(
                min(
                    replace(
                        diagonal,
                        hits=diagonal.hits + matched,
                        substitutions=diagonal.substitutions + (not matched),
                    ),
                    replace(up, deletions=up.deletions + 1),
                    replace(left, insertions=left.insertions + 1),
                    key=prefer,
                )
            )
        best.append(row)
    return best[-1][-1]


def insertions(reference: str, hypothesis: str) -> int:
    """Words of ``hypothesis`` an alignment with ``reference`` (over ``said_words``) finds no place for."""
    return align(reference, hypothesis).insertions
