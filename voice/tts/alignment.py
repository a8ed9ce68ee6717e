"""Word spans from phoneme alignments: which stretch of synthesized audio belongs to which word of the text.

espeak phonemizes a chunk in context and its word breaks are not the text's: it expands tokens ("$3.50"
becomes "dollar three point five zero"), joins short words ("in the" becomes one phoneme word) and merges
others ("a.m., e.g." becomes one). So each text word is phonemized on its own, that labelled
sequence is aligned to the synthesized phoneme sequence by edit distance, and every synthesized phoneme
takes the label of the text word it lines up with. Small differences between a word said alone and in
context (stress, a reduced vowel) cost a substitution and keep their label.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

# piper's markers for sentence begin and end and the padding between phoneme ids: they carry silence.
_MARKERS = frozenset({"^", "$", "_"})


@dataclass(frozen=True)
class TimedPhoneme:
    """One phoneme symbol of the synthesized audio and its samples [start, end)."""

    symbol: str
    start: int
    end: int


def is_speech(symbol: str) -> bool:
    """True for a phoneme that is part of a word; pauses (spaces, punctuation, markers) are not."""
    if symbol in _MARKERS or symbol.isspace():
        return False
    return not all(unicodedata.category(char).startswith("P") for char in symbol)


def word_spans(
    word_phonemes: Sequence[Sequence[str]], timeline: Sequence[TimedPhoneme]
) -> list[tuple[int, int]]:
    """One (start, end) sample span per text word, in order, non-overlapping and non-decreasing.

    ``word_phonemes[i]`` is text word i phonemized alone; ``timeline`` is the phonemes of the whole
    synthesized chunk with their samples. A word that got no audio (a lone dash) gets an empty span
    where the previous word ended, or where the next one starts.
    """
    isolated = [(symbol, word) for word, symbols in enumerate(word_phonemes) for symbol in symbols]
    isolated = [(symbol, word) for symbol, word in isolated if is_speech(symbol)]
    spoken, groups = _speech_with_groups(timeline)
    labels = [-1] * len(spoken)
    for a, b in _align([symbol for symbol, _ in isolated], [p.symbol for p in spoken]):
        labels[b] = isolated[a][1]
    _fill_unlabelled(labels, groups)
    return _spans_from_labels(len(word_phonemes), spoken, labels)


def _speech_with_groups(timeline: Sequence[TimedPhoneme]) -> tuple[list[TimedPhoneme], list[int]]:
    """The speech phonemes, each with the number of the pause-delimited phoneme word it belongs to."""
    spoken: list[TimedPhoneme] = []
    groups: list[int] = []
    group = 0
    for phoneme in timeline:
        if is_speech(phoneme.symbol):
            spoken.append(phoneme)
            groups.append(group)
        elif spoken and groups[-1] == group:
            group += 1
    return spoken, groups


def _align(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """Pairs (i, j) of a minimum edit-distance alignment of ``a`` to ``b``, matches and substitutions."""
    if not a or not b:
        return []
    vocabulary: dict[str, int] = {}
    a_ids = np.array([vocabulary.setdefault(s, len(vocabulary)) for s in a])
    b_ids = np.array([vocabulary.setdefault(s, len(vocabulary)) for s in b])
    cost: npt.NDArray[np.int32] = (a_ids[:, None] != b_ids[None, :]).astype(np.int32)
    n, m = len(a), len(b)
    columns = np.arange(m + 1, dtype=np.int32)
    distance = np.empty((n + 1, m + 1), dtype=np.int32)
    distance[0] = columns
    row = np.empty(m + 1, dtype=np.int32)
    for i in range(1, n + 1):
        previous = distance[i - 1]
        row[0] = i
        row[1:] = np.minimum(previous[1:] + 1, previous[:-1] + cost[i - 1])
        # Insertions chain along the row: d[j] = min over k <= j of row[k] + (j - k).
        distance[i] = np.minimum.accumulate(row - columns) + columns
    pairs: list[tuple[int, int]] = []
    i, j = n, m
    while i > 0 and j > 0:
        if distance[i, j] == distance[i - 1, j - 1] + cost[i - 1, j - 1]:
            i, j = i - 1, j - 1
            pairs.append((i, j))
        elif distance[i, j] == distance[i - 1, j] + 1:
            i -= 1
        else:
            j -= 1
    pairs.reverse()
    return pairs


def _fill_unlabelled(labels: list[int], groups: list[int]) -> None:
    """Give each unaligned phoneme the word of its phoneme-word neighbours, else of the previous word.

    Within a phoneme word the earlier neighbour wins, then the later one; a phoneme word with no aligned
    phoneme at all joins the word before it, so a word is never counted heard before its audio ends.
    """
    for index in range(1, len(labels)):
        if labels[index] < 0 and groups[index] == groups[index - 1]:
            labels[index] = labels[index - 1]
    for index in range(len(labels) - 2, -1, -1):
        if labels[index] < 0 and groups[index] == groups[index + 1]:
            labels[index] = labels[index + 1]
    for index in range(1, len(labels)):
        if labels[index] < 0:
            labels[index] = labels[index - 1]
    for index in range(len(labels) - 2, -1, -1):
        if labels[index] < 0:
            labels[index] = labels[index + 1]


def _spans_from_labels(
    word_count: int, spoken: list[TimedPhoneme], labels: list[int]
) -> list[tuple[int, int]]:
    voiced: dict[int, tuple[int, int]] = {}
    for phoneme, word in zip(spoken, labels, strict=True):
        if word >= 0:
            start = voiced[word][0] if word in voiced else phoneme.start
            voiced[word] = (start, phoneme.end)
    spans: list[tuple[int, int]] = []
    for word in range(word_count):
        if word in voiced:
            spans.append(voiced[word])
        else:
            later = [voiced[w][0] for w in range(word + 1, word_count) if w in voiced]
            at = spans[-1][1] if spans else (later[0] if later else 0)
            spans.append((at, at))
    return spans
