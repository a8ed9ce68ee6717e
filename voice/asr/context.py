"""What of the assistant's words ASR is given, and how a prompted transcript ends.

An answer is said in the words of the question before it ("Pick a card." -> "Hearts."): whisper, given
that question as text said before, hears the answer in its words. So ASR's context is the last sentence
the user heard, and only when it asks them something (``answer_context``): after "Sure." or a statement
the user says something new, and a prompt only made whisper hear it in the reply's words.

A prompt also moves whisper's punctuation, which decides when a turn ends (voice.engine.utterances):
prompted with "Would you like to hear the rest of the forecast?", it wrote "Turn on the lights." with a
full stop at a pause the user went on from, where it wrote no stop unprompted. So a prompted transcript
ends as the same audio decoded without a prompt ends (``with_ending_of``): the prompt chooses words,
never where the sentence stops.

It is off unless ``[asr] context = true`` (``heeding_context``): it helped answers on the tuning voices
and hurt them on held-out ones (README, Hearing).
"""

from __future__ import annotations

import re

from voice.asr.port import Transcriber, Transcript
from voice.audio.block import AudioBlock
from voice.cancel import CancelToken

PROMPT_WORDS_AT_MOST = 40  # a sentence; whisper takes up to 223 tokens, but more is more to echo back

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# A request opens with a verb that asks for an answer, after an "Okay," or a "now" at most.
_REQUEST = re.compile(
    r"^(?:(?:ok(?:ay)?|all ?right|right|so|now|then|please)\b,?\s+)*"
    r"(?:pick|choose|name|tell me|say|guess|give me|spell|select|think of|let me know)\b",
    re.IGNORECASE,
)
_CLOSING = re.compile(r"[\s.?!,;:\u2026-]*$")  # a transcript's closing punctuation ("Sorry,", "Hearts.")


class _Unprompted:
    """A transcriber that hears every utterance without the assistant's words as context."""

    def __init__(self, inner: Transcriber) -> None:
        self._inner = inner

    def transcribe(
        self,
        audio: AudioBlock,
        *,
        word_timings: bool = False,
        over_reply: bool = False,
        cancel: CancelToken | None = None,
        context: str = "",
    ) -> Transcript:
        return self._inner.transcribe(audio, word_timings=word_timings, over_reply=over_reply, cancel=cancel)


def heeding_context(transcriber: Transcriber, heed: bool) -> Transcriber:
    """``transcriber`` given the engine's context only if ``heed`` (``[asr] context``, off by default: on
    voices it was not tuned on, answers were heard worse with it: word error 0.757 against 0.646)."""
    return transcriber if heed else _Unprompted(transcriber)


def prompt_from(heard: str) -> str:
    """The last sentence (or question) of ``heard``, at most PROMPT_WORDS_AT_MOST words; '' for none."""
    sentences = [s for s in _SENTENCE_END.split(heard.strip()) if s]
    if not sentences:
        return ""
    return " ".join(sentences[-1].split()[-PROMPT_WORDS_AT_MOST:])


def asks_the_user(sentence: str) -> bool:
    """A question ("Heads or tails?"), or a request for an answer ("Pick a card.", "Okay, name a colour.")."""
    return sentence.rstrip().endswith("?") or bool(_REQUEST.match(sentence.strip()))


def answer_context(heard: str, *, over_reply: bool = False) -> str:
    """ASR's context after the assistant said ``heard``: its last sentence if that asks the user
    something, else ''; none ``over_reply``: whisper heard the reply's own words ("Sorry" as "story")."""
    if over_reply:
        return ""
    sentence = prompt_from(heard)
    return sentence if asks_the_user(sentence) else ""


def with_ending_of(prompted: str, plain: str) -> str:
    """``prompted`` with its closing punctuation replaced by ``plain``'s (the same audio, unprompted)."""
    ending = _CLOSING.search(plain)
    return _CLOSING.sub("", prompted) + (ending.group().strip() if ending else "")
