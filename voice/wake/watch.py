"""Asleep or awake by the wake word, on the mic's sample clock (pure: blocks and states in, verdicts out).

Asleep, the engine hears silence in place of the mic, so nothing it does (VAD, whisper) runs on what
is said near it; the wake word's detection lets the audio after it through, so the words said in the
same breath are the first input. Awake, it sleeps again once the engine has been listening, with
nothing said or played, for ``awake_for`` samples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from voice.audio.block import AudioBlock
from voice.wake.port import WakeDetection, WakeDetector

IDLE_STATE = "listening"  # the engine's state with nobody speaking and nothing due


@dataclass(frozen=True)
class WakeHeard:
    """What one mic block came to: the block the engine should hear, and what changed."""

    block: AudioBlock
    detection: WakeDetection | None = None  # the wake word was heard in this block
    woke: bool = False  # it was asleep and the detection woke it
    slept: bool = False  # the quiet time ran out at this block


class WakeWatch:
    """The wake detector on every mic block, and whether the assistant sleeps."""

    def __init__(self, detector: WakeDetector, awake_for: int, *, asleep: bool = True) -> None:
        self.detector = detector
        self.asleep = asleep
        self._awake_for = awake_for
        self._idle_since: int | None = 0  # mic sample from which the engine has been idle while awake

    def hear(self, block: AudioBlock) -> WakeHeard:
        detection = self.detector.hear(block)
        if self.asleep:
            if detection is None:
                return WakeHeard(_silent(block))
            self.asleep = False
            self._idle_since = block.end  # the quiet time counts from the wake word
            return WakeHeard(_from(block, detection.sample), detection, woke=True)
        if detection is not None and self._idle_since is not None:
            self._idle_since = block.end
        if self._idle_since is not None and block.end - self._idle_since >= self._awake_for:
            self.asleep = True
            return WakeHeard(_silent(block), detection, slept=True)
        return WakeHeard(block, detection)

    def engine_state(self, state: str, sample: int) -> None:
        """The engine's state from ``sample`` on: any other than idle wakes it (typed input is as
        deliberate as the wake word) and holds the quiet time off until the engine is idle again."""
        if state == IDLE_STATE:
            self._idle_since = sample
            return
        self._idle_since = None
        self.asleep = False


def _silent(block: AudioBlock) -> AudioBlock:
    return AudioBlock(np.zeros_like(block.samples), block.rate, block.start, block.device_time)


def _from(block: AudioBlock, sample: int) -> AudioBlock:
    """``block`` silent before mic sample ``sample``."""
    samples = block.samples.copy()
    samples[: max(0, min(sample - block.start, block.frames))] = 0.0
    return AudioBlock(samples, block.rate, block.start, block.device_time)
