"""The microphone's level for a live meter: mic blocks summed into one ``input.level`` per ~100 ms."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from voice.audio.block import AudioBlock
from voice.client_events import InputLevel

LEVEL_EVERY_S = 0.1  # a meter needs no more than ten readings a second
SILENCE_DBFS = -100.0  # digital silence has no logarithm; this reads as "nothing"


class LevelMeter:
    """Sums the energy of mic blocks and publishes their RMS level once per ``LEVEL_EVERY_S`` of audio.

    ``voiced_until`` says where the VAD's last voiced frame ended: the light is on when one fell in
    the period measured.
    """

    def __init__(self, publish: Callable[[InputLevel], None], voiced_until: Callable[[], int]) -> None:
        self._publish = publish
        self._voiced_until = voiced_until
        self._energy = 0.0
        self._frames = 0
        self._since: int | None = None  # clock sample where the period being measured began

    def add(self, block: AudioBlock) -> None:
        if self._since is None:
            self._since = block.start
        self._energy += float(np.dot(block.samples.ravel(), block.samples.ravel()))
        self._frames += block.samples.size
        if block.end - self._since < LEVEL_EVERY_S * block.rate:
            return
        mean = self._energy / max(1, self._frames)
        dbfs = max(SILENCE_DBFS, 10 * math.log10(mean)) if mean > 0 else SILENCE_DBFS
        voice = self._voiced_until() > self._since
        self._publish(InputLevel(round(dbfs, 1), voice, round(block.end / block.rate, 3)))
        self._energy, self._frames, self._since = 0.0, 0, None
