"""An audio block: samples that know their rate, channel count and where they start on the sample clock."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

# The engine's one clock: mic, speaker, VAD, AEC and ASR all run at this rate.
ENGINE_RATE = 16_000

Samples = npt.NDArray[np.float32]


@dataclass(frozen=True)
class AudioBlock:
    """``samples`` is float32 in [-1, 1], shaped (frames,) for mono or (frames, channels).

    ``device_time``: for a block a sound device captured or will play, the device's own time (PortAudio
    stream time, in seconds) of its first sample; the mic and speaker streams line up by it.
    """

    samples: Samples
    rate: int
    start: int = 0
    device_time: float | None = None

    @property
    def channels(self) -> int:
        return 1 if self.samples.ndim == 1 else int(self.samples.shape[1])

    @property
    def frames(self) -> int:
        return int(self.samples.shape[0])

    @property
    def end(self) -> int:
        """The sample just after this block on the clock."""
        return self.start + self.frames

    @property
    def start_s(self) -> float:
        return self.start / self.rate

    @property
    def duration_s(self) -> float:
        return self.frames / self.rate

    def followed_by(self, later: AudioBlock) -> AudioBlock:
        """This block, then ``later`` from where this one ends on the clock (a gap between is silence)."""
        if later.rate != self.rate or later.channels != self.channels or later.start < self.start:
            raise ValueError("only a later block of the same rate and channels can follow")
        gap = np.zeros((max(0, later.start - self.end), *self.samples.shape[1:]), dtype=np.float32)
        rest = later.samples[max(0, self.end - later.start) :]
        return AudioBlock(np.concatenate((self.samples, gap, rest)), self.rate, self.start, self.device_time)
