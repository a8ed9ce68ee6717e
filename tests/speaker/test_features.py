"""The encoder's input is Resemblyzer's: librosa's Slaney mels, its silence cut and its partials."""

from __future__ import annotations

import numpy as np
import pytest
from faster_whisper.feature_extractor import FeatureExtractor

from tests.support.paths import AUDIO
from voice.audio.wav import read_wav
from voice.speaker.features import (
    HOP,
    RATE,
    WINDOW,
    mel_frames,
    partial_slices,
    raise_volume,
    slaney_mel_filterbank,
    trim_long_silences,
)


@pytest.mark.parametrize("mels", [40, 80])
def test_the_filterbank_is_librosa_s_slaney_mel_as_faster_whisper_ports_it(mels: int) -> None:
    theirs = FeatureExtractor.get_mel_filters(RATE, WINDOW, n_mels=mels)
    np.testing.assert_allclose(slaney_mel_filterbank(mels=mels), theirs, rtol=1e-5, atol=1e-8)


def test_a_frame_is_the_mel_power_of_a_centred_hann_window() -> None:
    rng = np.random.default_rng(1)
    samples = rng.standard_normal(RATE // 2).astype(np.float32) * 0.1
    frames = mel_frames(samples)
    assert frames.shape == (1 + len(samples) // HOP, 40)
    # frame 10 by a plain DFT sum: samples 10*160-200 .. +400, periodic Hann, |X_k|^2 through the bank
    start = 10 * HOP - WINDOW // 2
    n = np.arange(WINDOW)
    windowed = samples[start : start + WINDOW] * (0.5 - 0.5 * np.cos(2 * np.pi * n / WINDOW))
    k = np.arange(WINDOW // 2 + 1)[:, np.newaxis]
    spectrum = np.exp(-2j * np.pi * k * n / WINDOW) @ windowed.astype(np.float64)
    expected = slaney_mel_filterbank().astype(np.float64) @ np.abs(spectrum) ** 2
    np.testing.assert_allclose(frames[10], expected, rtol=1e-4)
    # a 1 kHz tone lands in the band whose peak is nearest 1 kHz
    tone = mel_frames(np.sin(2 * np.pi * 1000 * np.arange(RATE) / RATE).astype(np.float32))
    assert int(np.argmax(tone[50])) == int(np.argmax(slaney_mel_filterbank()[:, 1000 * WINDOW // RATE]))


@pytest.mark.parametrize(
    ("seconds", "starts"),
    [(1.0, [0]), (1.875, [0]), (2.3, [0, 77]), (3.0, [0, 77, 154])],
    ids=["shorter-than-a-partial", "last-too-short-dropped", "two", "three"],
)
def test_partials_are_resemblyzer_s(seconds: float, starts: list[int]) -> None:
    slices = partial_slices(round(seconds * RATE))
    assert [s.start for s in slices] == starts
    assert all(s.stop - s.start == 160 for s in slices)


def test_quiet_speech_is_raised_and_loud_speech_left_alone() -> None:
    speech = read_wav(AUDIO / "real" / "cards_2.wav").samples
    quiet = speech / np.sqrt(np.mean(speech**2)) * 10 ** (-50 / 20)
    raised = raise_volume(quiet.astype(np.float32))
    assert 20 * np.log10(np.sqrt(np.mean(raised.astype(np.float64) ** 2))) == pytest.approx(-30, abs=0.01)
    loud = (speech / np.abs(speech).max() * 0.9).astype(np.float32)
    assert raise_volume(loud) is loud


def test_a_long_silence_inside_speech_is_cut_and_speech_kept() -> None:
    speech = read_wav(AUDIO / "real" / "goforward.wav").samples
    gap = np.zeros(2 * RATE, dtype=np.float32)
    alone = len(trim_long_silences(speech))
    assert alone > 0.5 * len(speech)  # the recording's own lead-in and tail go, the words stay
    joined = len(trim_long_silences(np.concatenate((speech, gap, speech))))
    # of the 2 s gap at most the 90 ms kept beside voice on each side, with each copy's own tail and lead-in
    assert 2 * alone - 0.1 * RATE <= joined <= 2 * alone + 0.5 * RATE
    assert len(trim_long_silences(gap)) == 0
