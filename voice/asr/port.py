"""The speech recognition port: what the engine needs from any transcriber."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.cancel import CancelToken
from voice.errors import AudioError


@dataclass(frozen=True)
class TimedWord:
    """One recognized word and where it was spoken, in seconds from the start of the transcribed audio."""

    text: str
    start_s: float
    end_s: float


@dataclass(frozen=True)
class Transcript:
    """The recognized text; ``words`` is filled only when word timings were asked for. ``earlier_s``:
    ASR heard this much before the utterance it was given (the voice began before the VAD found it)."""

    text: str
    words: tuple[TimedWord, ...] = ()
    earlier_s: float = 0.0


class Transcriber(Protocol):
    """Turns one utterance (mono float32 at ENGINE_RATE) into text; called from a worker thread.

    ``over_reply``: the assistant's own voice may be in the audio (a user cutting in over its reply), so
    the transcriber should take its most careful path (whisper decodes its full 30 s window).
    ``cancel`` fires (from another thread) once the text is no longer wanted: a backend that waits on a
    server abandons the call at once and raises; a local model may finish.
    ``context`` is what the assistant last asked the user, as far as they heard it: a backend that takes
    a prompt hears an answer in its words (voice.asr.context); one that does not ignores it.
    """

    def transcribe(
        self,
        audio: AudioBlock,
        *,
        word_timings: bool = False,
        over_reply: bool = False,
        cancel: CancelToken | None = None,
        context: str = "",
    ) -> Transcript: ...


def require_engine_audio(audio: AudioBlock, who: str) -> None:
    """Every transcriber takes the engine's mono ENGINE_RATE audio; anything else is a driver's bug."""
    if audio.rate != ENGINE_RATE or audio.channels != 1:
        raise AudioError(
            f"{who} needs mono {ENGINE_RATE} Hz audio, got {audio.channels} channels at {audio.rate} Hz"
        )
