"""Sample-rate conversion on soxr: whole signals, and streams cut into chunks (TTS output, devices)."""

from __future__ import annotations

from typing import Literal, TypeVar

import numpy as np
import numpy.typing as npt
import soxr

from voice.audio.block import Samples
from voice.errors import AudioError


def _check_rates(from_rate: int, to_rate: int) -> None:
    if from_rate <= 0 or to_rate <= 0:
        raise AudioError(f"cannot resample from {from_rate} Hz to {to_rate} Hz: rates must be positive")


Quality = Literal["HQ", "VHQ"]
Float = TypeVar("Float", np.float32, np.float64)


def resample(
    samples: npt.NDArray[Float], from_rate: int, to_rate: int, *, quality: Quality = "HQ"
) -> npt.NDArray[Float]:
    """Convert a whole mono or (frames, channels) signal from one rate to another, in its own precision.

    The engine resamples float32 at "HQ"; the fixture maker has always worked in float64 at "VHQ", and
    keeps doing so to make the same bytes.
    """
    _check_rates(from_rate, to_rate)
    if from_rate == to_rate:
        return samples
    dtype = np.float64 if samples.dtype == np.float64 else np.float32
    converted = soxr.resample(np.ascontiguousarray(samples, dtype=dtype), from_rate, to_rate, quality=quality)
    return np.asarray(converted, dtype=dtype)


class StreamResampler:
    """Converts a mono signal arriving in chunks; unlike resampling each chunk, it leaves no seams.

    The output lags the input by the filter's delay; :meth:`flush` returns what is still held back at the end.
    """

    def __init__(self, from_rate: int, to_rate: int) -> None:
        _check_rates(from_rate, to_rate)
        self.from_rate = from_rate
        self.to_rate = to_rate
        self._stream = soxr.ResampleStream(from_rate, to_rate, 1, dtype="float32", quality="HQ")

    def process(self, samples: Samples) -> Samples:
        """Feed the next chunk; returns the converted samples that are ready (possibly none)."""
        chunk = np.ascontiguousarray(samples, dtype=np.float32)
        return np.asarray(self._stream.resample_chunk(chunk, last=False), dtype=np.float32)

    def flush(self) -> Samples:
        """End of the signal: returns the held-back tail and makes the resampler ready for a new signal."""
        tail = np.asarray(
            self._stream.resample_chunk(np.zeros(0, dtype=np.float32), last=True), dtype=np.float32
        )
        self._stream.clear()
        return tail
