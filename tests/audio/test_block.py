"""Audio blocks joined on the clock: an utterance and what the user said after a pause in it."""

from __future__ import annotations

import numpy as np
import pytest

from voice.audio.block import AudioBlock


def block(start: int, value: float, frames: int) -> AudioBlock:
    return AudioBlock(np.full(frames, value, np.float32), 16_000, start)


def test_a_later_block_overlapping_the_first_continues_from_its_end() -> None:
    joined = block(100, 1.0, 50).followed_by(block(130, 2.0, 40))

    assert (joined.start, joined.end) == (100, 170)
    assert joined.samples[:50].tolist() == [1.0] * 50
    assert joined.samples[50:].tolist() == [2.0] * 20


def test_a_gap_between_the_blocks_is_silence() -> None:
    joined = block(0, 1.0, 10).followed_by(block(15, 2.0, 5))

    assert joined.samples.tolist() == [1.0] * 10 + [0.0] * 5 + [2.0] * 5


def test_only_a_later_block_at_the_same_rate_can_follow() -> None:
    with pytest.raises(ValueError, match="later block"):
        block(10, 1.0, 5).followed_by(block(0, 1.0, 5))
    with pytest.raises(ValueError, match="same rate"):
        block(0, 1.0, 5).followed_by(AudioBlock(np.zeros(5, np.float32), 8_000, 5))
