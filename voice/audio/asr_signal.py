"""What ASR hears of an utterance: AEC3's output where echo may be in the mic, the raw mic elsewhere.

AEC3's suppression damages the words of a user who talks over the assistant (design §3), yet where
the assistant is audible it is also what keeps the assistant's own words out of the user's
transcript. Once playback pauses for a barge-in and the echo tail has died away, the raw mic holds
the user's words alone, intact. :class:`AsrSignal` keeps the raw mic and when the speaker was
audible, by clock sample; :class:`TranscribingAsrSignal` hands ASR each utterance (cut by the VAD
from AEC3's output) with its echo-free stretches taken from the raw mic instead, so the engine
itself does not change.
"""

from __future__ import annotations

import threading

import numpy as np

from voice.asr.port import Transcriber, Transcript
from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.audio.vad import DEFAULT_BARGE_IN

KEPT_SECONDS = 40  # longer than the longest utterance (30 s) plus the VAD's pre-roll
FRAME_MS = 10
ECHO_TAIL_MS = 400  # echo may reach the mic this long after the reference played (delay, lead, room)
AUDIBLE = 1e-4  # reference RMS above this (-80 dBFS) is sound the mic may pick up
ECHO_ONLY = 0.97  # raw mic this alike to the speaker's own sound (normalised correlation) holds no user


class AsrSignal:
    """The raw mic and, per 10 ms, whether echo may be in it, for the last ``KEPT_SECONDS``.

    ``add`` runs where the mic blocks are handled; ``words_for`` on the ASR worker.
    """

    def __init__(self, rate: int = ENGINE_RATE) -> None:
        self.rate = rate
        self._frame = rate * FRAME_MS // 1000
        self._tail = ECHO_TAIL_MS // FRAME_MS
        self._raw = np.zeros(KEPT_SECONDS * rate, dtype=np.float32)
        self._reference = np.zeros(len(self._raw), dtype=np.float32)
        self._audible = np.zeros(len(self._raw) // self._frame, dtype=bool)  # per frame of the reference
        self._end: int | None = None
        self._lock = threading.Lock()

    def add(self, mic: AudioBlock, reference: AudioBlock) -> None:
        """The raw ``mic`` block and the reference the echo canceller got for it (whole 10 ms frames)."""
        loud = np.sqrt(np.mean(np.square(reference.samples.reshape(-1, self._frame)), axis=1)) > AUDIBLE
        with self._lock:
            _write(self._raw, mic.start, mic.samples)
            _write(self._reference, mic.start, reference.samples)
            _write(self._audible, mic.start // self._frame, loud)
            self._end = mic.end

    def words_for(self, utterance: AudioBlock) -> AudioBlock:
        """``utterance`` (AEC3's output) with the raw mic wherever no echo can be in it; as is if not kept."""
        start, frames = utterance.start, utterance.frames
        with self._lock:
            end = self._end
            first = start // self._frame - self._tail
            if end is None or start + frames > end or first * self._frame < end - len(self._raw):
                return utterance
            raw = np.take(self._raw, np.arange(start, start + frames), mode="wrap")
            audible = np.take(
                self._audible, np.arange(first, (start + frames - 1) // self._frame + 1), mode="wrap"
            )
        # a frame is echo-free when the reference was silent for the whole tail before it
        window = np.convolve(audible, np.ones(self._tail + 1), mode="valid")  # one per utterance frame
        free = np.repeat(window == 0, self._frame)[start % self._frame :][:frames].astype(np.float32)
        half = self._frame // 2
        edged = np.pad(free, (half, self._frame - half - 1), mode="edge")
        ramp = np.convolve(edged, np.ones(self._frame) / self._frame, mode="valid")  # 10 ms cross-fades
        words: Samples = (ramp * raw + (1.0 - ramp) * utterance.samples).astype(np.float32)
        return AudioBlock(words, utterance.rate, start)

    def only_echo(self, utterance: AudioBlock) -> bool:
        """Is the raw mic over ``utterance`` nothing but the speaker's sound coming back (echo AEC3 let
        through while it adapted), so like the reference that no one else can be speaking?"""
        # only the voiced part: the VAD's pre-roll and tail around it are echo whoever spoke
        edge = DEFAULT_BARGE_IN.pre_roll_ms * self.rate // 1000
        start, frames, tail = utterance.start + edge, utterance.frames - 2 * edge, self._tail * self._frame
        if frames <= 0:
            return False
        with self._lock:
            end = self._end
            if end is None or start + frames > end or start - tail < end - len(self._raw):
                return False
            raw = np.take(self._raw, np.arange(start, start + frames), mode="wrap")
            reference = np.take(self._reference, np.arange(start - tail, start + frames), mode="wrap")
        if not np.any(reference):
            return False
        return _max_correlation(reference, raw) >= ECHO_ONLY


def _max_correlation(reference: Samples, raw: Samples) -> float:
    """The largest normalised correlation of ``raw`` with any stretch of ``reference`` as long as it."""
    size = len(reference) + len(raw)
    products = np.fft.irfft(np.fft.rfft(reference, size) * np.conj(np.fft.rfft(raw, size)), size)
    lags = len(reference) - len(raw) + 1
    energy = np.cumsum(np.concatenate(([0.0], np.square(reference, dtype=np.float64))))
    windows = energy[len(raw) : len(raw) + lags] - energy[:lags]
    norm = np.sqrt(np.maximum(windows, 1e-12) * float(np.sum(np.square(raw, dtype=np.float64))))
    return float(np.max(np.abs(products[:lags]) / np.maximum(norm, 1e-12)))


def _write(ring: np.ndarray, at: int, values: np.ndarray) -> None:
    """Store ``values`` in ``ring`` from index ``at`` on (modulo its length)."""
    index = np.arange(at, at + len(values)) % len(ring)
    ring[index] = values


class TranscribingAsrSignal:
    """A Transcriber that hears each utterance through :meth:`AsrSignal.words_for`."""

    def __init__(self, inner: Transcriber, signal: AsrSignal) -> None:
        self._inner = inner
        self._signal = signal

    def transcribe(self, audio: AudioBlock, *, word_timings: bool = False) -> Transcript:
        if self._signal.only_echo(audio):
            return Transcript("")  # no words of the user's: whisper would only guess at the echo
        return self._inner.transcribe(self._signal.words_for(audio), word_timings=word_timings)
