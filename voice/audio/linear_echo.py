"""A linear echo canceller for what ASR hears: it subtracts a filtered copy of the speaker, nothing more.

WebRTC AEC3 also suppresses whatever echo it could not subtract, and during double talk that
suppression eats the user's words (design §3: "Sorry, I meant on Sunday." became "I'm done Sunday.").
A linear filter cannot remove what is not correlated with the speaker, so the user's voice passes
intact and only the echo is reduced. This is a partitioned-block frequency-domain NLMS filter
(overlap-save, 10 ms partitions): cheap in numpy, and it adds no delay.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.errors import AudioError, ProtocolError

PARTITION_MS = 10
TAIL_MS = 400  # the longest echo path it models: delays up to 300 ms plus the reference's lead and room tail
STEP = 0.4  # NLMS step: larger adapts faster and is disturbed more by double talk
_EPSILON = 1e-6


class LinearEchoCanceller:
    """Echo removed by an adaptive linear filter from ``reference``; blocks must be whole 10 ms frames."""

    def __init__(self, rate: int = ENGINE_RATE, tail_ms: int = TAIL_MS, step: float = STEP) -> None:
        self.rate = rate
        self._block = rate * PARTITION_MS // 1000
        self._partitions = -(-tail_ms // PARTITION_MS)
        self._step = step
        bins = self._block + 1
        self._weights: npt.NDArray[np.complex128] = np.zeros((self._partitions, bins), np.complex128)
        self._spectra: npt.NDArray[np.complex128] = np.zeros((self._partitions, bins), np.complex128)
        self._power = np.full(bins, _EPSILON)
        self._previous = np.zeros(self._block)
        self._next: int | None = None

    def process(self, mic: AudioBlock, reference: AudioBlock) -> AudioBlock:
        if (mic.start, mic.frames) != (reference.start, reference.frames):
            raise ProtocolError(
                f"echo reference spans samples {reference.start}-{reference.end}, "
                f"the mic {mic.start}-{mic.end}"
            )
        if mic.frames % self._block:
            raise AudioError(f"linear echo canceller takes whole {PARTITION_MS} ms frames, got {mic.frames}")
        if self._next is not None and mic.start != self._next:
            raise ProtocolError(f"mic block at sample {mic.start} does not follow the previous one")
        self._next = mic.end
        out = np.empty(mic.frames, dtype=np.float32)
        for at in range(0, mic.frames, self._block):
            out[at : at + self._block] = self._frame(
                mic.samples[at : at + self._block], reference.samples[at : at + self._block]
            )
        return AudioBlock(out, self.rate, mic.start)

    def _frame(self, mic: Samples, reference: Samples) -> Samples:
        n = self._block
        current = reference.astype(np.float64)
        spectrum = np.fft.rfft(np.concatenate((self._previous, current)))
        self._previous = current
        self._spectra = np.roll(self._spectra, 1, axis=0)
        self._spectra[0] = spectrum
        estimate = np.fft.irfft((self._weights * self._spectra).sum(axis=0), 2 * n)[n:]
        error = mic.astype(np.float64) - estimate
        # Normalise each bin by the reference's smoothed power: the step is the same for loud and quiet bins.
        self._power = 0.9 * self._power + 0.1 * np.abs(spectrum) ** 2
        gradient_spectrum = np.fft.rfft(np.concatenate((np.zeros(n), error)))
        update = self._step * gradient_spectrum / (self._power * self._partitions + _EPSILON)
        correction = np.fft.irfft(np.conj(self._spectra) * update, 2 * n, axis=1)
        correction[:, n:] = 0.0  # keep the filter causal: each partition is n taps long
        self._weights += np.fft.rfft(correction, axis=1)
        return error.astype(np.float32)
