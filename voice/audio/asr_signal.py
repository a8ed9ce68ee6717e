"""Each part hears what it needs: the VAD and echo judgement AEC3's echo-free output, ASR the words intact.

AEC3's double-talk suppression damages the words of a user who talks over the assistant (design §3);
a linear canceller leaves them whole. :class:`AsrSignal` keeps the mic as ASR should hear it (the
linear canceller's output) by clock sample, and :class:`TranscribingAsrSignal` hands ASR that span of
it for each utterance the VAD cut from the AEC3 output, so the engine itself does not change.
"""

from __future__ import annotations

import threading

import numpy as np

from voice.asr.port import Transcriber, Transcript
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.linear_echo import LinearEchoCanceller

KEPT_SECONDS = 40  # longer than the longest utterance (30 s) plus the VAD's pre-roll


class AsrSignal:
    """The mic with the echo removed linearly, kept for the last ``KEPT_SECONDS`` by clock sample.

    ``add`` runs where the mic blocks are handled; ``span`` on the ASR worker.
    """

    def __init__(self, canceller: LinearEchoCanceller | None = None, rate: int = ENGINE_RATE) -> None:
        self.rate = rate
        self._canceller = canceller or LinearEchoCanceller(rate)
        self._ring = np.zeros(KEPT_SECONDS * rate, dtype=np.float32)
        self._end: int | None = None
        self._lock = threading.Lock()

    def add(self, mic: AudioBlock, reference: AudioBlock) -> None:
        cleaned = self._canceller.process(mic, reference).samples
        with self._lock:
            at = mic.start % len(self._ring)
            head = min(len(cleaned), len(self._ring) - at)
            self._ring[at : at + head] = cleaned[:head]
            self._ring[: len(cleaned) - head] = cleaned[head:]
            self._end = mic.end

    def span(self, start: int, frames: int) -> AudioBlock | None:
        """Clock samples [start, start + frames), or None if they are not all kept."""
        with self._lock:
            end = self._end
            if (
                end is None
                or start + frames > end
                or start < end - len(self._ring)
                or frames > len(self._ring)
            ):
                return None
            at = start % len(self._ring)
            out = np.take(self._ring, np.arange(at, at + frames), mode="wrap")
        return AudioBlock(out.astype(np.float32), self.rate, start)


class TranscribingAsrSignal:
    """A Transcriber that transcribes an utterance's span of the ASR signal instead of the VAD's audio."""

    def __init__(self, inner: Transcriber, signal: AsrSignal) -> None:
        self._inner = inner
        self._signal = signal

    def transcribe(self, audio: AudioBlock, *, word_timings: bool = False) -> Transcript:
        words = self._signal.span(audio.start, audio.frames)
        return self._inner.transcribe(audio if words is None else words, word_timings=word_timings)
