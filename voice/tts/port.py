"""The speech synthesis port: audio for a chunk of reply text, with where each word sits in it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from voice.audio.block import AudioBlock
from voice.cancel import CancelToken


@dataclass(frozen=True)
class WordTiming:
    """One whitespace-separated word of the text and its audio: samples [start, end) of the chunk."""

    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Synthesis:
    """Mono float32 audio at ENGINE_RATE starting at sample 0, and exactly one timing per word of the text.

    Timings are in text order, non-overlapping and non-decreasing. ``estimated`` is true when they were
    spread over the audio by word length rather than taken from the voice's phoneme alignments.
    """

    audio: AudioBlock
    words: tuple[WordTiming, ...]
    estimated: bool = False


class Synthesizer(Protocol):
    """Speaks one chunk of text; called from a worker thread, one chunk at a time.

    ``cancel`` fires (from another thread) once the audio is no longer wanted: a backend that waits on a
    server abandons the call at once and raises; a local voice may finish its chunk.
    """

    def synthesize(self, text: str, *, cancel: CancelToken | None = None) -> Synthesis: ...
