"""What of the assistant's words ASR is prompted with: the last sentence of what the user heard.

An answer is said in the words of the question before it ("Pick a card." -> "Hearts."): whisper, given
that question as text said before, hears the answer in its words. The last sentence alone: earlier
sentences of a long reply pull whisper towards the reply's topic, not the user's answer.
"""

from __future__ import annotations

import re

PROMPT_WORDS_AT_MOST = 40  # a sentence; whisper takes up to 223 tokens, but more is more to echo back

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def prompt_from(heard: str) -> str:
    """The last sentence (or question) of ``heard``, at most PROMPT_WORDS_AT_MOST words; '' for none."""
    sentences = [s for s in _SENTENCE_END.split(heard.strip()) if s]
    if not sentences:
        return ""
    return " ".join(sentences[-1].split()[-PROMPT_WORDS_AT_MOST:])
