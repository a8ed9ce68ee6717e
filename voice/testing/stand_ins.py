"""Stand-ins for the VAD, whisper and piper, so the engine and runner run without models or a clock.

Each keeps no history of its own: a long session driven through them grows only what voice grows.
"""

from __future__ import annotations

import numpy as np

from voice.asr.port import TimedWord, Transcript
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.vad import VadEvent
from voice.cancel import CancelToken
from voice.tts.port import Synthesis, WordTiming

WORD = 4_000  # every stand-in word plays for a quarter of a second
QUESTION = "What will the weather be like tomorrow?"


class ScriptedVad:
    """Says speech started, paused or ended exactly when told (``next_events``, taken by the next block)."""

    voiced_until = 0  # the script says when speech happens; no frame counts as voiced here
    start_window = 200 * ENGINE_RATE // 1000

    def __init__(self) -> None:
        self.next_events: list[VadEvent] = []
        self.assistant_speaking = False  # as the engine said at the last block
        self.utterances_ended = 0  # times the engine ended an utterance at a pause
        self.so_far: AudioBlock | None = None  # what utterance_so_far answers

    def process(self, block: AudioBlock, assistant_speaking: bool) -> list[VadEvent]:
        self.assistant_speaking = assistant_speaking
        events, self.next_events = self.next_events, []
        return events

    def end_utterance(self) -> None:
        self.utterances_ended += 1

    def utterance_so_far(self) -> AudioBlock | None:
        """The script's utterance in progress, if one is set (``so_far``)."""
        return self.so_far


class Hears:
    """Whisper as a stand-in: each utterance is the next of ``queued`` while any are left, else ``text``."""

    def __init__(self, text: str = QUESTION, *, words: tuple[TimedWord, ...] = ()) -> None:
        self.text = text
        self.words = words
        self.queued: list[str] = []

    def transcribe(
        self,
        audio: AudioBlock,
        *,
        word_timings: bool = False,
        over_reply: bool = False,
        cancel: CancelToken | None = None,
        context: str = "",
    ) -> Transcript:
        return Transcript(self.queued.pop(0) if self.queued else self.text, self.words)


class EvenSynthesizer:
    """Piper as a stand-in: every word gets WORD samples of a tone, so what played is easy to count."""

    def synthesize(self, text: str, *, cancel: CancelToken | None = None) -> Synthesis:
        words = text.split()
        tone = np.full(len(words) * WORD, 0.1, dtype=np.float32)
        timings = tuple(WordTiming(w, i * WORD, (i + 1) * WORD) for i, w in enumerate(words))
        return Synthesis(AudioBlock(tone, ENGINE_RATE), timings)
