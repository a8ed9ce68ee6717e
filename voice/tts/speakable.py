"""What of a word is said aloud: markdown markup a model slips into a reply is silent, not read out."""

from __future__ import annotations

import re

# Emphasis, headings, code ticks, quotes and table bars: espeak would read "**" as "star star".
_MARKUP = re.compile(r"[*_`#~>|]+")


def speakable(word: str) -> str:
    """``word`` without markdown markup ("" if nothing is left to say)."""
    return _MARKUP.sub("", word)
