"""Resampling whole signals and streams on soxr."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from voice.audio.resample import StreamResampler, resample
from voice.errors import AudioError


def tone(rate: int, seconds: float, hz: float) -> np.ndarray:
    return (0.5 * np.sin(2 * np.pi * hz * np.arange(int(rate * seconds)) / rate)).astype(np.float32)


def peak_hz(samples: np.ndarray, rate: int) -> float:
    return float(np.argmax(np.abs(np.fft.rfft(samples))) * rate / len(samples))


def test_piper_rate_speech_band_tone_keeps_pitch_and_duration() -> None:
    out = resample(tone(22050, 1.0, 1000), 22050, 16000)

    assert out.dtype == np.float32
    assert len(out) == 16000
    assert peak_hz(out, 16000) == pytest.approx(1000, abs=1)


def test_same_rate_is_left_alone() -> None:
    samples = tone(16000, 0.1, 300)
    np.testing.assert_array_equal(resample(samples, 16000, 16000), samples)


def test_stream_in_uneven_chunks_matches_the_whole_signal() -> None:
    signal = tone(22050, 1.0, 440)
    stream = StreamResampler(22050, 16000)
    cuts = [0, 1, 500, 2205, 9000, 15000, len(signal)]

    pieces = [stream.process(signal[a:b]) for a, b in itertools.pairwise(cuts)] + [stream.flush()]
    streamed = np.concatenate(pieces)

    whole = resample(signal, 22050, 16000)
    assert len(streamed) == pytest.approx(len(whole), abs=2)
    np.testing.assert_allclose(streamed[200:15000], whole[200:15000], atol=1e-3)


def test_stream_after_flush_starts_a_fresh_signal() -> None:
    stream = StreamResampler(48000, 16000)
    first = np.concatenate([stream.process(tone(48000, 0.5, 440)), stream.flush()])
    second = np.concatenate([stream.process(tone(48000, 0.5, 440)), stream.flush()])

    np.testing.assert_allclose(first, second, atol=1e-6)


@pytest.mark.parametrize(("source", "target"), [(0, 16000), (16000, -1)])
def test_impossible_rates_are_refused(source: int, target: int) -> None:
    with pytest.raises(AudioError, match="rates must be positive"):
        resample(tone(16000, 0.01, 100), source, target)
    with pytest.raises(AudioError, match="rates must be positive"):
        StreamResampler(source, target)
