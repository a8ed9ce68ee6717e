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


def sounds_like_echo(transcript: str, reply: str, threshold: float = 0.6) -> bool:
    """True if most words heard are the assistant's own: its voice leaking back through the mic."""
    heard = spoken_words(transcript)
    if not heard:
        return False
    own = set(spoken_words(reply))
    return sum(word in own for word in heard) / len(heard) >= threshold
