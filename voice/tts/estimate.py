"""Word spans estimated from the audio alone, for a voice that gives no phoneme alignments.

The sounding part of the audio (leading and trailing silence trimmed) is shared out among the words in
proportion to a rough spoken length: letters and vowel groups, more for digits and symbols that expand
into words ("$3.50"), with gaps where punctuation makes the voice pause. Every span then lies a little
later than that share puts it, so a word whose share ends early is not yet counted heard: the model must
never be told of a word the user did not hear, and being told of one word too few costs little.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from voice.audio.block import ENGINE_RATE, Samples
from voice.tts.chunker import ends_clause, ends_sentence

# Samples quieter than this fraction of the peak (-40 dB) count as silence when trimming.
_SILENCE = 0.01
_VOWEL_GROUP = re.compile(r"[aeiouy]+", re.IGNORECASE)
# Digits and these symbols are spoken as words of their own, roughly this many syllables each.
_DIGIT_WEIGHT = 1.5
_SYMBOL_WEIGHT = {"$": 2.0, "%": 2.0, "&": 1.0, "@": 1.0, "+": 1.0, "€": 1.0, "£": 1.0}
_LETTERS = re.compile(r"[^a-z]")
# "make", "played", "makes" (but not "table", "wanted", "boxes"): one vowel group fewer than written.
_SILENT_ENDING = re.compile(r"(?:[^aeiouyl]e|[^aeiouytd]ed|[^aeiouyszxhgc]es)$")
# Per syllable, per letter, and the pauses after a clause and a sentence: fitted to piper's alignments.
_SYLLABLE_SHARE = 0.25
_LETTER_SHARE = 0.3
_CLAUSE_PAUSE = 2.0
_SENTENCE_PAUSE = 2.0
# Spans lie this much later (never past the audio): a word whose share ends a little early is not yet
# called heard (more lateness gave fewer such claims but fell short of the heard words more often).
LATE_S = 0.04


def spoken_weight(word: str) -> float:
    """A rough number of syllables in ``word`` as it will be read out (at least one)."""
    weight = float(len(_VOWEL_GROUP.findall(word)))
    weight += sum(_DIGIT_WEIGHT for char in word if char.isdigit())
    weight += sum(_SYMBOL_WEIGHT.get(char, 0.0) for char in word)
    return max(1.0, weight)


def sounded_weight(word: str) -> float:
    """How long a voice takes over ``word``, in rough units: a quarter per syllable (a final silent "e",
    "-ed" or "-es" is none) and 0.3 per letter, digits and symbols as read (1.5 a digit).

    Letters count most because consonant clusters take time: against piper's phoneme alignments (the
    scenarios' replies, with the servers' noise) 5 % of words end 124 ms or more early by these shares,
    175 ms by half a unit a syllable with pauses of 1 and 1.5.
    """
    letters = _LETTERS.sub("", word.lower())
    syllables = len(_VOWEL_GROUP.findall(letters))
    if syllables > 1 and _SILENT_ENDING.search(letters):
        syllables -= 1
    weight = _SYLLABLE_SHARE * syllables + _LETTER_SHARE * len(letters)
    weight += sum(_DIGIT_WEIGHT for char in word if char.isdigit())
    weight += sum(_SYMBOL_WEIGHT.get(char, 0.0) for char in word)
    return max(_SYLLABLE_SHARE + _LETTER_SHARE, weight)


def pause_after(word: str) -> float:
    """How long a voice pauses after ``word``: only at clause and sentence ends."""
    if ends_sentence(word):
        return _SENTENCE_PAUSE
    return _CLAUSE_PAUSE if ends_clause(word) else 0.0


def estimate_spans(words: Sequence[str], samples: Samples) -> list[tuple[int, int]]:
    """One (start, end) span per word over the sounding part of ``samples`` (at ENGINE_RATE), with
    pauses at punctuation, each placed ``LATE_S`` late; silent audio gives every word (0, 0)."""
    if not words:
        return []
    magnitude = np.abs(samples)
    loud = np.flatnonzero(magnitude > _SILENCE * float(np.max(magnitude, initial=0.0)))
    if not loud.size:
        return [(0, 0)] * len(words)
    first, last = int(loud[0]), int(loud[-1]) + 1
    bounds: list[tuple[float, float]] = []
    cursor = 0.0
    for index, word in enumerate(words):
        if index:
            cursor += pause_after(words[index - 1])
        weight = sounded_weight(word)
        bounds.append((cursor, cursor + weight))
        cursor += weight
    scale = (last - first) / cursor
    start_at = first + round(LATE_S * ENGINE_RATE)
    return [
        (min(samples.size, start_at + round(start * scale)), min(samples.size, start_at + round(end * scale)))
        for start, end in bounds
    ]
