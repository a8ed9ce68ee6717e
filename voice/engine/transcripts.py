"""Judging transcripts: is this real speech from the user, or noise or the assistant's own echo?"""

from __future__ import annotations

import re

_NON_SPEECH = re.compile(r"\[[^\]]*\]|\([^)]*\)|\*[^*]*\*")  # whisper's "[coughing]", "(knocking)"
_WORD = re.compile(r"[a-z0-9']+")


def spoken_words(text: str) -> list[str]:
    """Lower-case words of a transcript, without whisper's sound annotations."""
    return _WORD.findall(_NON_SPEECH.sub(" ", text.lower()))


def is_meaningful(text: str) -> bool:
    """True if the transcript holds at least one word (a cough or click gives none)."""
    return bool(spoken_words(text))


def sounds_like_echo(transcript: str, recently_played: str, threshold: float = 0.8) -> bool:
    """True if the words heard are, in order, the words the assistant just played: its own voice.

    A user who cuts in may well reuse a word or two of the reply; echo repeats a run of it.
    """
    heard = spoken_words(transcript)
    if not heard:
        return False
    return _common_subsequence(heard, spoken_words(recently_played)) / len(heard) >= threshold


def _common_subsequence(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence of two word lists."""
    row = [0] * (len(b) + 1)
    for word in a:
        diagonal = 0
        for j, other in enumerate(b, start=1):
            diagonal, row[j] = row[j], diagonal + 1 if word == other else max(row[j], row[j - 1])
    return row[-1]
