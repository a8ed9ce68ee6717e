"""The virtual room's acoustics: user audio placed on the mic track, speaker echo, a looped noise bed, and a
voice heard from across the room (reverberated) at a level set against another's."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from voice.audio.block import Samples


def gain(db: float) -> float:
    return float(10.0 ** (db / 20.0))


class MicTrack:
    """Everything the microphone will pick up, written ahead of time or as the conversation unfolds."""

    def __init__(self, frames: int) -> None:
        self.samples: Samples = np.zeros(frames, dtype=np.float32)

    def place(self, audio: Samples, at: int) -> None:
        """Add ``audio`` starting at clock sample ``at`` (clipped to the track)."""
        if at >= len(self.samples):
            return
        end = min(len(self.samples), at + len(audio))
        self.samples[at:end] += audio[: end - at]

    def loop(self, audio: Samples, db: float) -> None:
        """Add ``audio`` repeated over the whole track at ``db`` (a noise bed)."""
        if len(audio) == 0:
            return
        repeats = -(-len(self.samples) // len(audio))
        self.samples += np.tile(audio, repeats)[: len(self.samples)] * gain(db)

    def block(self, start: int, frames: int) -> Samples:
        return np.clip(self.samples[start : start + frames], -1.0, 1.0)


def echo_of(speaker: Samples, start: int, frames: int, delay: int, db: float) -> Samples:
    """The speaker signal that reaches the mic in [start, start + frames), delayed and attenuated."""
    out = np.zeros(frames, dtype=np.float32)
    source_start = start - delay
    lo = max(0, source_start)
    hi = max(lo, min(len(speaker), source_start + frames))
    if hi > lo:
        out[lo - source_start : hi - source_start] = speaker[lo:hi] * gain(db)
    return out


def speech_level_db(samples: Samples, rate: int = 16_000) -> float:
    """The level of the voiced 20 ms frames (those within 30 dB of the loudest), in dBFS."""
    frame = rate // 50
    frames = samples[: len(samples) // frame * frame].reshape(-1, frame).astype(np.float64)
    power = np.mean(frames**2, axis=1) + 1e-12
    voiced = power[power > power.max() / 1000]
    return float(10 * np.log10(np.mean(voiced)))


def reverberated(samples: Samples, rt60_s: float = 0.6, rate: int = 16_000, seed: int = 47) -> Samples:
    """``samples`` heard across a room: the direct sound and as much again decaying by 60 dB in ``rt60_s``
    (a living room's 0.6 s by default; the tail is seeded noise, so a run is repeatable)."""
    length = round(rt60_s * rate)
    tail = np.random.default_rng(seed).standard_normal(length) * np.exp(-6.9 * np.arange(length) / length)
    tail[: rate // 200] = 0.0  # the first reflections arrive a few ms after the direct sound
    tail /= np.sqrt(np.sum(tail**2))
    tail[0] = 1.0
    size = len(samples) + length - 1
    wet = np.fft.irfft(np.fft.rfft(samples, size) * np.fft.rfft(tail, size), size)[: len(samples)]
    return wet.astype(np.float32)


def under(samples: Samples, voice: Samples, db: float) -> Samples:
    """``samples`` scaled so their speech level is ``db`` under ``voice``'s."""
    return samples * gain(speech_level_db(voice) - db - speech_level_db(samples))


@dataclass(frozen=True)
class ClockSlip:
    """How far the mic's sample count falls behind the speaker's, as on real devices.

    ``drift_ppm``: the two devices' clocks differ by this much; every ``drop_every`` mic samples the
    mic loses ``drop`` samples (an input overflow). The speaker's count is the room's true time.
    """

    drift_ppm: float = 0.0
    drop_every: int = 0
    drop: int = 0

    def behind(self, mic_sample: int) -> int:
        return round(mic_sample * self.drift_ppm / 1e6) + self._drops(mic_sample) * self.drop

    def drops_in(self, start: int, frames: int) -> bool:
        """Did the mic drop input between these two of its samples?"""
        return self._drops(start + frames) > self._drops(start)

    def _drops(self, mic_sample: int) -> int:
        return mic_sample // self.drop_every if self.drop_every else 0
