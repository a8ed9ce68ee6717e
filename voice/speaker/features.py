"""What the GE2E voice encoder reads: Resemblyzer's preprocessing and mel frames, in numpy alone.

Resemblyzer (``audio.py``, ``hparams.py``) raises quiet audio to -30 dBFS, drops silences longer than a few
30 ms frames (webrtcvad, mode 3) and takes librosa's mel power spectrogram (not log): 25 ms Hann windows every
10 ms, centred, 40 Slaney mel bands. librosa is not a dependency, so its filterbank is computed here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import webrtcvad

from voice.audio.block import ENGINE_RATE, Samples
from voice.speaker.weights import MELS, Tensor

RATE = ENGINE_RATE  # the encoder was trained at 16 kHz, the engine's rate
WINDOW = RATE * 25 // 1000  # 400 samples: the FFT size and the window
HOP = RATE * 10 // 1000  # 160 samples: one mel frame every 10 ms
PARTIAL_FRAMES = 160  # one partial utterance: 1.6 s of frames, as the encoder was trained
TARGET_DBFS = -30.0  # quieter audio is raised to this level (never lowered)
_INT16_MAX = 2**15 - 1
_VAD_FRAME = RATE * 30 // 1000  # webrtcvad's 30 ms frames
_VAD_SMOOTHING = 8  # frames in the moving average of the speech flags
_VAD_MAX_SILENCE = 6  # the dilation is this + 1 frames wide


def slaney_mel_filterbank(rate: int = RATE, n_fft: int = WINDOW, mels: int = MELS) -> Tensor:
    """librosa.filters.mel(sr=rate, n_fft=n_fft, n_mels=mels) with its defaults (Slaney scale and area)."""
    edges = _mel_to_hz(np.linspace(_hz_to_mel(0.0), _hz_to_mel(rate / 2), mels + 2))
    bins = np.fft.rfftfreq(n_fft, d=1.0 / rate)
    widths = np.diff(edges)
    ramps = edges[:, np.newaxis] - bins[np.newaxis, :]
    rising = -ramps[:-2] / widths[:-1, np.newaxis]
    falling = ramps[2:] / widths[1:, np.newaxis]
    weights = np.maximum(0.0, np.minimum(rising, falling))
    weights *= (2.0 / (edges[2:] - edges[:-2]))[:, np.newaxis]  # each band's area is the same
    return weights.astype(np.float32)


_F_SP = 200.0 / 3  # Slaney: linear below 1 kHz at 3 mels per 200 Hz
_MIN_LOG_HZ = 1000.0
_MIN_LOG_MEL = _MIN_LOG_HZ / _F_SP
_LOG_STEP = np.log(6.4) / 27.0  # then logarithmic


def _hz_to_mel(hz: float) -> float:
    if hz < _MIN_LOG_HZ:
        return hz / _F_SP
    return float(_MIN_LOG_MEL + np.log(hz / _MIN_LOG_HZ) / _LOG_STEP)


def _mel_to_hz(mel: np.ndarray[Any, np.dtype[np.float64]]) -> np.ndarray[Any, np.dtype[np.float64]]:
    return np.where(mel >= _MIN_LOG_MEL, _MIN_LOG_HZ * np.exp(_LOG_STEP * (mel - _MIN_LOG_MEL)), _F_SP * mel)


_FILTERBANK = slaney_mel_filterbank()
_HANN = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(WINDOW) / WINDOW)).astype(np.float32)  # periodic


def mel_frames(samples: Samples) -> Tensor:
    """Mel power frames (frames, 40) as librosa.feature.melspectrogram(y, sr=16000, n_fft=400,
    hop_length=160, n_mels=40) gives them, transposed; ``1 + len(samples) // 160`` frames.

    The edges are padded with zeros, librosa's default since 0.10 (Resemblyzer 0.1.4 asks for >= 0.9.1).
    """
    padded = np.pad(np.asarray(samples, dtype=np.float32), WINDOW // 2)
    count = 1 + (len(padded) - WINDOW) // HOP
    windows = np.lib.stride_tricks.sliding_window_view(padded, WINDOW)[::HOP][:count]
    power = np.abs(np.fft.rfft(windows * _HANN, axis=1)) ** 2
    return np.asarray(power.astype(np.float32) @ _FILTERBANK.T, dtype=np.float32)


def raise_volume(samples: Samples, target_dbfs: float = TARGET_DBFS) -> Samples:
    """``samples`` raised to ``target_dbfs`` RMS if quieter; louder audio is left as it is."""
    rms = float(np.sqrt(np.mean(np.square(samples, dtype=np.float64)))) if len(samples) else 0.0
    if rms <= 0.0:
        return samples
    gain_db = target_dbfs - 20 * np.log10(rms)
    return samples if gain_db < 0 else (samples * 10 ** (gain_db / 20)).astype(np.float32)


def trim_long_silences(samples: Samples) -> Samples:
    """``samples`` without silences longer than ~200 ms, as Resemblyzer's preprocessing cuts them.

    webrtcvad (mode 3) flags each 30 ms frame, a moving average of 8 smooths the flags, and each voiced
    frame keeps 3 frames either side; the rest is dropped. The tail short of a whole frame is dropped too.
    """
    count = len(samples) // _VAD_FRAME
    if count == 0:
        return samples[:0]
    pcm = (np.round(np.clip(samples[: count * _VAD_FRAME], -1.0, 1.0) * _INT16_MAX)).astype("<i2")
    vad = webrtcvad.Vad(3)
    flags = np.array(
        [vad.is_speech(frame.tobytes(), RATE) for frame in pcm.reshape(count, _VAD_FRAME)], dtype=np.float64
    )
    width = _VAD_SMOOTHING
    padded = np.concatenate((np.zeros((width - 1) // 2), flags, np.zeros(width // 2)))
    sums = np.cumsum(padded)
    sums[width:] = sums[width:] - sums[:-width]
    voiced = np.round(sums[width - 1 :] / width).astype(bool)
    reach = (_VAD_MAX_SILENCE + 1) // 2  # a binary dilation by 7 frames, centred: 3 either side
    kept = np.zeros(count, dtype=bool)
    for shift in range(-reach, reach + 1):
        lo, hi = max(0, shift), min(count, count + shift)
        kept[lo:hi] |= voiced[lo - shift : hi - shift]
    return np.asarray(samples[: count * _VAD_FRAME][np.repeat(kept, _VAD_FRAME)], dtype=np.float32)


def partial_slices(samples: int, rate: float = 1.3, min_coverage: float = 0.75) -> list[slice]:
    """Frame ranges of the 1.6 s partial utterances Resemblyzer averages (its compute_partial_slices).

    ``rate`` partials a second; the last is kept if at least ``min_coverage`` of it is audio, and there
    is always one. The ranges may run past the frames: the audio is zero-padded to the last one's end.
    """
    frames = int(np.ceil((samples + 1) / HOP))
    step = int(np.round((RATE / rate) / HOP))
    if not 0 < step <= PARTIAL_FRAMES:
        raise ValueError(f"{rate} partials a second leaves gaps or none (0.625 to {RATE / HOP:g})")
    starts = range(0, max(1, frames - PARTIAL_FRAMES + step + 1), step)
    slices = [slice(start, start + PARTIAL_FRAMES) for start in starts]
    last = slices[-1]
    coverage = (samples - last.start * HOP) / (PARTIAL_FRAMES * HOP)
    if coverage < min_coverage and len(slices) > 1:
        slices.pop()
    return slices
