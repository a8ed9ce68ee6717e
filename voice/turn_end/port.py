"""The end-of-turn port: what the runtime needs from any model that judges whether a turn is over."""

from __future__ import annotations

from typing import Protocol

from voice.audio.block import AudioBlock


class EndOfTurn(Protocol):
    """Reads the user's speech so far and says how likely it is that they have finished.

    Called from a worker thread, one call at a time, on mono float32 audio at ENGINE_RATE that ends in the
    short silence after the last voiced frame.
    """

    def probability_complete(self, audio: AudioBlock) -> float: ...
