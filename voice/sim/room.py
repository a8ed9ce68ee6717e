"""The virtual room's acoustics: user audio placed on the mic track, speaker echo, a looped noise bed."""

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
