"""The wake word is no part of what the user asks: dropped from the start of a transcript."""

from __future__ import annotations

import re
from collections.abc import Callable
from difflib import SequenceMatcher

from voice.asr.port import TimedWord, Transcriber, Transcript
from voice.audio.block import AudioBlock
from voice.cancel import CancelToken

_LETTERS = re.compile(r"[^a-z0-9]+")
MIN_WORDS = 3200  # 200 ms: less after the wake word holds no word
ALIKE = 0.75  # whisper spells a wake word its own way ("OK, Nabu", "Okay Nabo"): close letters count


def _letters(text: str) -> str:
    return _LETTERS.sub("", text.lower())


def wake_words_said(text: str, phrase: str) -> int:
    """How many of ``text``'s first words are the wake ``phrase`` as whisper may have spelt it (0: none)."""
    wanted = _letters(phrase)
    spoken = text.split()
    best, best_likeness = 0, ALIKE
    for count in range(1, min(len(spoken), len(phrase.split()) + 1) + 1):
        likeness = SequenceMatcher(None, _letters(" ".join(spoken[:count])), wanted).ratio()
        if likeness >= best_likeness:
            best, best_likeness = count, likeness
    return best


def without_wake_words(text: str, phrase: str) -> str:
    """``text`` without the wake ``phrase`` it starts with, first letter raised ("okay nabu, what's" ->
    "What's"); ``text`` itself if it does not start with it."""
    count = wake_words_said(text, phrase)
    if not count:
        return text
    rest = " ".join(text.split()[count:]).lstrip(",.!?;: ")
    return rest[:1].upper() + rest[1:]


class WakeWordsDropped:
    """A transcriber that leaves out a wake word said first: the audio up to where the wake word was
    heard (``wake_sample``: the mic-clock sample after the latest wake word, or None) is not transcribed,
    and a transcript still starting with the wake word's words loses them."""

    def __init__(self, inner: Transcriber, phrase: str, wake_sample: Callable[[], int | None]) -> None:
        self._inner = inner
        self._phrase = phrase
        self._wake_sample = wake_sample  # set on the driver's thread, read on the ASR worker's

    def transcribe(
        self,
        audio: AudioBlock,
        *,
        word_timings: bool = False,
        over_reply: bool = False,
        cancel: CancelToken | None = None,
        context: str = "",
    ) -> Transcript:
        cut = self._wake_sample()
        skipped = 0 if cut is None or not audio.start < cut < audio.end else cut - audio.start
        if cut is not None and skipped:
            if audio.end - cut < MIN_WORDS:
                return Transcript("")  # the wake word alone: no words for the assistant
            audio = AudioBlock(audio.samples[skipped:], audio.rate, cut, audio.device_time)
        heard = self._inner.transcribe(
            audio, word_timings=word_timings, over_reply=over_reply, cancel=cancel, context=context
        )
        count = wake_words_said(heard.text, self._phrase)
        words = heard.words
        if count and len(words) == len(heard.text.split()):
            words = words[count:]
        if skipped:  # word times stay relative to the audio the caller gave
            later = skipped / audio.rate
            words = tuple(TimedWord(w.text, w.start_s + later, w.end_s + later) for w in words)
        return Transcript(without_wake_words(heard.text, self._phrase), words)
