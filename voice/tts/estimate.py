"""Word spans estimated from the audio alone, for a voice that gives no phoneme alignments.

The sounding part of the audio (leading and trailing silence trimmed) is shared out among the words in
proportion to a rough spoken length: vowel groups for letters, more for digits and symbols that expand
into words ("$3.50").
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

import numpy as np

from voice.audio.block import Samples

# Samples quieter than this fraction of the peak (-40 dB) count as silence when trimming.
_SILENCE = 0.01
_VOWEL_GROUP = re.compile(r"[aeiouy]+", re.IGNORECASE)
# Digits and these symbols are spoken as words of their own, roughly this many syllables each.
_DIGIT_WEIGHT = 1.5
_SYMBOL_WEIGHT = {"$": 2.0, "%": 2.0, "&": 1.0, "@": 1.0, "+": 1.0, "€": 1.0, "£": 1.0}


def spoken_weight(word: str) -> float:
    """A rough number of syllables in ``word`` as it will be read out (at least one)."""
    weight = float(len(_VOWEL_GROUP.findall(word)))
    weight += sum(_DIGIT_WEIGHT for char in word if char.isdigit())
    weight += sum(_SYMBOL_WEIGHT.get(char, 0.0) for char in word)
    return max(1.0, weight)


def estimate_spans(words: Sequence[str], samples: Samples) -> list[tuple[int, int]]:
    """One (start, end) span per word, consecutive over the sounding part of ``samples``."""
    if not words:
        return []
    loud = np.flatnonzero(np.abs(samples) > _SILENCE * float(np.max(np.abs(samples), initial=0.0)))
    first, last = (int(loud[0]), int(loud[-1]) + 1) if loud.size else (0, 0)
    edges = np.cumsum([0.0, *(spoken_weight(word) for word in words)])
    bounds = np.rint(first + (last - first) * edges / edges[-1]).astype(int)
    return [(int(start), int(end)) for start, end in itertools.pairwise(bounds)]
