"""The wake phrase: found in a transcript, it wakes a sleeping kiosk; the words after it are the input."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable

from voice.asr.port import Transcriber, Transcript
from voice.audio.block import AudioBlock
from voice.cancel import CancelToken

_WORD = re.compile(r"[a-z0-9']+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def after_phrase(text: str, phrase: str) -> str | None:
    """What was said after ``phrase`` (ignoring case and punctuation), or None if it was not said."""
    wanted = _words(phrase)
    spoken = text.split()
    plain = [" ".join(_words(word)) for word in spoken]
    for start in range(len(plain) - len(wanted) + 1):
        if plain[start : start + len(wanted)] == wanted:
            return " ".join(spoken[start + len(wanted) :]).lstrip(",.!?;: ")
    return None


class Sleep:
    """Asleep or awake, set from the loop and read (and woken) from the ASR worker."""

    def __init__(self, on_woken: Callable[[], None]) -> None:
        self._asleep = False
        self._lock = threading.Lock()
        self._on_woken = on_woken  # must be safe to call from any thread

    @property
    def asleep(self) -> bool:
        with self._lock:
            return self._asleep

    def fall_asleep(self) -> None:
        with self._lock:
            self._asleep = True

    def wake(self) -> bool:
        """Wake up; True if it was asleep."""
        with self._lock:
            was, self._asleep = self._asleep, False
        if was:
            self._on_woken()
        return was


class WakeGate:
    """A transcriber that, while asleep, passes on only what follows the wake phrase (and wakes)."""

    def __init__(self, inner: Transcriber, phrase: str, sleep: Sleep) -> None:
        self._inner = inner
        self._phrase = phrase
        self._sleep = sleep

    def transcribe(
        self,
        audio: AudioBlock,
        *,
        word_timings: bool = False,
        over_reply: bool = False,
        cancel: CancelToken | None = None,
        context: str = "",
    ) -> Transcript:
        transcript = self._inner.transcribe(
            audio, word_timings=word_timings, over_reply=over_reply, cancel=cancel, context=context
        )
        if not self._sleep.asleep:
            return transcript
        rest = after_phrase(transcript.text, self._phrase)
        if rest is None:
            return Transcript("")  # not meant for the kiosk: no words, nothing starts
        self._sleep.wake()
        return Transcript(rest)
