"""A voice rising well above the one going on is found within a tenth of a second of its start; the voice
going on, at its own ups and downs, is not."""

from __future__ import annotations

import numpy as np

from tests.support.paths import AUDIO
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.level_rise import LevelRise
from voice.audio.wav import read_wav
from voice.sim.room import reverberated, under

RATE = ENGINE_RATE


def heard_in_blocks(samples: np.ndarray, block: int = 480) -> list[tuple[int, int]]:
    """(where each rise began, the end of the block that told it)."""
    level = LevelRise(RATE)
    return [
        (rise, start + block)
        for start in range(0, len(samples), block)
        if (rise := level.hear(AudioBlock(samples[start : start + block], RATE, start))) is not None
    ]


def noise(seconds: float, gain: float, seed: int) -> np.ndarray:
    return (gain * np.random.default_rng(seed).standard_normal(round(seconds * RATE))).astype(np.float32)


def test_a_voice_ten_db_louder_is_found_where_it_starts_whatever_the_blocks() -> None:
    samples = np.concatenate([noise(3.0, 0.01, 1), noise(1.0, 0.0316, 2)])

    for block in (160, 480, 512, 1333):
        rises = heard_in_blocks(samples, block)
        assert rises, block
        began, told = rises[0]
        assert 3 * RATE - RATE // 10 <= began <= 3 * RATE, (block, began)  # its start, at most 0.1 s early
        assert told <= 3 * RATE + RATE // 10 + block, (block, told)  # told within a tenth of a second


def test_nothing_rises_before_a_second_of_the_voice_is_known() -> None:
    samples = np.concatenate([noise(0.5, 0.001, 1), noise(1.0, 0.05, 2)])

    assert heard_in_blocks(samples) == []


def test_a_real_reader_across_the_room_does_not_rise_above_itself_and_a_user_over_it_does() -> None:
    reader = np.concatenate([read_wav(AUDIO / "real" / f"austen_{n}.wav").samples for n in (870, 880, 890)])
    television = reverberated(reader)
    assert heard_in_blocks(television) == []  # fifteen seconds of reading, with its loud words

    user = read_wav(AUDIO / "real" / "cards_5.wav").samples
    television = under(television, user, 12.0)
    at = 6 * RATE
    mixed = television[: at + len(user)].copy()
    mixed[at : at + len(user)] += user
    voiced = np.flatnonzero(np.abs(user) > 0.05 * np.abs(user).max())
    onset = at + int(voiced[0])

    rises = heard_in_blocks(mixed)
    assert rises, "the user over the television"
    began, told = rises[0]
    assert began >= onset - RATE // 10, (began - onset) / RATE
    assert told <= onset + 3 * RATE // 10, (told - onset) / RATE  # within the room's 300 ms


def test_across_a_pause_of_the_voice_its_level_holds() -> None:
    level = LevelRise(RATE)
    quiet = noise(1.5, 0.01, 1)
    assert level.hear(AudioBlock(quiet, RATE, 0)) is None
    louder = noise(0.3, 0.0316, 2)
    rise = level.hear(AudioBlock(louder, RATE, 3 * RATE))  # given again after a gap of 1.5 s
    assert rise is not None
    assert 3 * RATE - RATE // 10 <= rise <= 3 * RATE + RATE // 10
