"""``WordGuard``: a Transcriber that never passes on words the audio cannot hold.

Whisper invents words: on a short utterance its cut encoder window loops ("five five" came back as
"5" twelve times), on noise its full window writes a stock phrase, and given the assistant's words as
a prompt it may hand them back. A transcript is not used when it

- repeats a word more than ``SAME_WORD_AT_MOST`` times in a row, or a phrase of two to four words more
  than ``SAME_PHRASE_AT_MOST`` times (people say "no no no", not "no" six times);
- has more words than ``EXTRA_WORDS`` and ``WORDS_PER_VOICED_S`` per second of voiced audio allow (a
  LibriVox reader's "it was the epoch of belief" is 7 words a voiced second, the fastest measured; the
  cut window's loops ran at 17 to 21);
- has any words where the voice detector hears under ``LEAST_VOICED_S`` of voice;
- is the whole sentence it was prompted with, of ``ECHOED_PROMPT_WORDS`` words or more (whisper handing
  back its prompt; an answer may repeat a word of the question, "Heads or tails?" "Tails."), or, prompted,
  says a phrase twice (a prompt made whisper say "Do you hear me?" twice for once).

Such a transcript is decoded once more without context, by ``redecode`` if there is one (whisper's full
30 s window), else by the same transcriber if it had context, and used if that one holds; otherwise it
is dropped: ``UnusableTranscript`` says why in one line, which the session log keeps as the utterance's
failed transcription. The rule applies to every backend, local or remote; only the redecoder is
whisper's.
"""

from __future__ import annotations

import re
from typing import Protocol, runtime_checkable

import numpy as np
import webrtcvad

from voice.asr.context import prompt_from
from voice.asr.port import Transcriber, Transcript
from voice.asr.transcript_words import longest_run
from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.cancel import CancelToken
from voice.errors import ModelError

SAME_WORD_AT_MOST = 3
SAME_PHRASE_AT_MOST = 2
WORDS_PER_VOICED_S = 8.0
EXTRA_WORDS = 2
LEAST_VOICED_S = 0.1
ECHOED_PROMPT_WORDS = 3
_FRAME = ENGINE_RATE // 50  # webrtcvad's 20 ms frames
_VAD_MODE = 2  # the quiet VAD's aggressiveness (voice/audio/vad.py)
_QUIETEST_DBFS = -55.0  # a frame quieter than this is not voice, whatever webrtcvad says
_ABOVE_FLOOR_DB = 10.0  # nor one this close to the utterance's quietest tenth (steady noise)


class UnusableTranscript(ModelError):
    """A transcript the audio cannot hold, with no other decode that can: the utterance is dropped."""


def words_of(text: str) -> list[str]:
    """The words of ``text`` as whisper writes them, lower case, punctuation dropped."""
    return re.findall(r"[a-z0-9']+", text.lower())


def voiced_seconds(samples: Samples) -> float:
    """How much of ``samples`` (mono, ENGINE_RATE) sounds voiced: webrtcvad's frames above the noise."""
    frames = len(samples) // _FRAME
    if frames == 0:
        return 0.0
    framed = np.asarray(samples[: frames * _FRAME], dtype=np.float64).reshape(frames, _FRAME)
    levels = 10 * np.log10(np.mean(framed**2, axis=1) + 1e-12)
    floor = float(np.percentile(levels, 10))
    pcm = (np.clip(framed, -1.0, 1.0) * 32767).astype("<i2")
    vad = webrtcvad.Vad(_VAD_MODE)
    voiced = sum(
        1
        for level, frame in zip(levels, pcm, strict=True)
        if level >= max(_QUIETEST_DBFS, floor + _ABOVE_FLOOR_DB)
        and vad.is_speech(frame.tobytes(), ENGINE_RATE)
    )
    return voiced * _FRAME / ENGINE_RATE


def why_unusable(text: str, voiced_s: float, context: str = "") -> str | None:
    """Why the audio cannot hold ``text`` (one clause), or None when it can."""
    words = words_of(text)
    if not words:
        return None
    size, times = longest_run(words)
    if (size == 1 and times > SAME_WORD_AT_MOST) or (size > 1 and times > SAME_PHRASE_AT_MOST):
        return f"it repeats {' '.join(words[:size]) if size > 1 else words[0]!r} {times} times"
    if voiced_s < LEAST_VOICED_S:
        return f"the voice detector heard only {voiced_s:.2f} s of voice"
    allowed = EXTRA_WORDS + WORDS_PER_VOICED_S * voiced_s
    if len(words) > allowed:
        return f"{len(words)} words in {voiced_s:.2f} s of voice is faster than anyone speaks"
    prompt = words_of(prompt_from(context))
    if len(prompt) >= ECHOED_PROMPT_WORDS and words == prompt:
        return "it is the assistant's own sentence it was prompted with"
    if prompt and size > 1 and times > 1:
        return f"prompted, it says {' '.join(words[:size])!r} {times} times"
    return None


def _shown(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


class WordGuard:
    """Wraps any Transcriber: a transcript the audio cannot hold is decoded again or dropped.

    ``redecode``: a more careful decoder of the same audio (whisper's full window), tried once, without
    context, when the first transcript is unusable; without one (a remote server) the same transcriber
    tries again without context if it had one, else the transcript is dropped at once.
    """

    def __init__(self, inner: Transcriber, redecode: Transcriber | None = None) -> None:
        self._inner = inner
        self._redecode = redecode

    def transcribe(
        self,
        audio: AudioBlock,
        *,
        word_timings: bool = False,
        over_reply: bool = False,
        cancel: CancelToken | None = None,
        context: str = "",
    ) -> Transcript:
        heard = self._inner.transcribe(
            audio, word_timings=word_timings, over_reply=over_reply, cancel=cancel, context=context
        )
        voiced_s = voiced_seconds(audio.samples)
        why = why_unusable(heard.text, voiced_s, context)
        if why is None:
            return heard
        second = self._redecode or (self._inner if context else None)
        if second is not None:
            again = second.transcribe(audio, word_timings=word_timings, over_reply=over_reply, cancel=cancel)
            if why_unusable(again.text, voiced_s) is None:
                return again
            heard, why = again, why_unusable(again.text, voiced_s) or why
        raise UnusableTranscript(f"not used: ASR heard {_shown(heard.text)!r}, but {why}")


@runtime_checkable
class HasFullWindow(Protocol):
    """A transcriber with a more careful way to decode the same audio (whisper: its full window)."""

    def full_window(self) -> Transcriber: ...


def guarded(transcriber: Transcriber) -> WordGuard:
    """``transcriber`` behind the guard, re-decoding on its full window if it has one, else dropping."""
    careful = transcriber.full_window() if isinstance(transcriber, HasFullWindow) else None
    return WordGuard(transcriber, redecode=careful)
