"""Voices in the virtual room that are not the user's: a television across the room, people chatting."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.support.paths import AUDIO
from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.audio.wav import read_wav, write_wav

REAL = AUDIO / "real"
TELEVISION_READER = ("austen_870", "austen_880", "austen_890", "austen_920", "austen_930")  # a real reader
RT60_S = 0.6  # a living room's reverberation


def speech_level_db(samples: Samples) -> float:
    """The level of the voiced 20 ms frames (those within 30 dB of the loudest), in dBFS."""
    frames = samples[: len(samples) // 320 * 320].reshape(-1, 320).astype(np.float64)
    power = np.mean(frames**2, axis=1) + 1e-12
    voiced = power[power > power.max() / 1000]
    return float(10 * np.log10(np.mean(voiced)))


def reverberated(samples: Samples, seed: int = 47) -> Samples:
    """``samples`` heard across a room: the direct sound and as much again decaying by 60 dB in RT60_S."""
    length = round(RT60_S * ENGINE_RATE)
    tail = np.random.default_rng(seed).standard_normal(length) * np.exp(-6.9 * np.arange(length) / length)
    tail[: ENGINE_RATE // 200] = 0.0  # the first reflections arrive a few ms after the direct sound
    tail /= np.sqrt(np.sum(tail**2))
    tail[0] = 1.0
    size = len(samples) + length - 1
    wet = np.fft.irfft(np.fft.rfft(samples, size) * np.fft.rfft(tail, size), size)[: len(samples)]
    return wet.astype(np.float32)


def television(folder: Path, under: Path, under_db: float = 12.0) -> Path:
    """A WAV of the television: a real reader's recording, reverberated and talking on without a pause
    between clips, ``under_db`` under the speech level of the user's ``under`` WAV."""
    reading = np.concatenate([read_wav(REAL / f"{name}.wav").samples for name in TELEVISION_READER])
    wet = reverberated(reading)
    user_db = speech_level_db(read_wav(under).samples)
    gain = 10 ** ((user_db - under_db - speech_level_db(wet)) / 20)
    path = folder / "television.wav"
    write_wav(path, AudioBlock(wet * gain, ENGINE_RATE))
    return path


def chat(folder: Path, level_of: Path, gap_s: float = 0.3) -> Path:
    """A WAV of two people chatting near the mic (real voices, neither the user's), taking turns
    ``gap_s`` apart, at the speech level of ``level_of``'s WAV."""
    turns = ["beckett-01", "goforward", "beckett-02", "cards_5", "beckett-03"]
    gap = np.zeros(round(gap_s * ENGINE_RATE), np.float32)
    spoken = np.concatenate(
        [part for name in turns for part in (read_wav(REAL / f"{name}.wav").samples, gap)]
    )
    gain = 10 ** ((speech_level_db(read_wav(level_of).samples) - speech_level_db(spoken)) / 20)
    path = folder / "chat.wav"
    write_wav(path, AudioBlock(spoken * gain, ENGINE_RATE))
    return path
