"""The echo's lag behind its reference is measured, and the linear canceller's reference moved to it."""

from __future__ import annotations

import numpy as np

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.echo_delay import EVERY_MS, MARGIN_MS, EchoDelay, echo_lag

RATE = ENGINE_RATE
BLOCK = 640


def speaker(seconds: float, seed: int = 5) -> np.ndarray:
    """Noise shaped like speech: bursts with pauses, so a lag is not found by level alone."""
    rng = np.random.default_rng(seed)
    frames = round(seconds * RATE)
    bursts = np.repeat(rng.random(frames // 1600 + 1) > 0.3, 1600)[:frames]
    return (rng.standard_normal(frames) * 0.1 * bursts).astype(np.float32)


def late(signal: np.ndarray, ms: int) -> np.ndarray:
    shift = ms * RATE // 1000
    return np.concatenate((np.zeros(shift, np.float32), signal[: len(signal) - shift]))


def test_the_lag_of_an_echo_is_found_to_the_sample() -> None:
    reference = speaker(2.0)
    mic = late(reference, 180)[-RATE:] * 0.5
    reach = 400 * RATE // 1000

    assert echo_lag(reference[-(RATE + reach) :], mic, reach) == 180 * RATE // 1000


def test_no_lag_is_claimed_without_echo() -> None:
    reference = speaker(2.0)
    reach = 400 * RATE // 1000

    assert echo_lag(reference[-(RATE + reach) :], speaker(1.0, seed=9), reach) is None
    assert echo_lag(reference[-(RATE + reach) :], np.zeros(RATE, np.float32), reach) is None
    silent_speaker = np.zeros(RATE + reach, np.float32)  # the assistant listening: the user alone
    assert echo_lag(silent_speaker, speaker(1.0, seed=9), reach) is None


def test_the_reference_is_moved_to_just_before_its_echo() -> None:
    reference = speaker(4.0)
    mic = late(reference, 250) * 0.7
    delay = EchoDelay()
    aligned = []
    for start in range(0, len(mic), BLOCK):
        span = slice(start, start + BLOCK)
        block = delay.align(AudioBlock(mic[span], RATE, start), AudioBlock(reference[span], RATE, start))
        assert (block.start, block.frames) == (start, BLOCK)
        aligned.append(block.samples)

    assert delay.delay == (250 - MARGIN_MS) * RATE // 1000
    assert delay.moves == 1
    tail = slice(-RATE, None)  # the last second: the reference now leads its echo by the margin alone
    assert echo_lag(np.concatenate(aligned)[-(RATE + 800) :], mic[tail], 800) == MARGIN_MS * RATE // 1000


def test_half_a_second_of_echo_from_elsewhere_does_not_move_the_reference() -> None:
    """Someone walks past the speaker: for one look the echo seems 350 ms late, not 250 ms. A lag seen
    once is not acted on, so the canceller keeps what it learned of the room."""
    half = RATE // 2
    reference = speaker(8.0)
    direct, passing = np.ones(16, np.float32), np.zeros(16, np.float32)
    direct[5:8] = 0.1  # the echo fades for a while, so the other path stands out in one look
    direct[8], passing[8] = 0.0, 1.0
    direct[9:11] = 2.0
    mic = late(reference, 250) * np.repeat(direct, half) + late(reference, 350) * np.repeat(passing, half)
    delay = EchoDelay()
    delays = []
    for start in range(0, len(mic), BLOCK):
        span = slice(start, start + BLOCK)
        delay.align(AudioBlock(mic[span], RATE, start), AudioBlock(reference[span], RATE, start))
        delays.append(delay.delay)

    every = -(-EVERY_MS * RATE // 1000 // BLOCK) * BLOCK  # a look at the end of the block that passes 500 ms
    reach, window = 400 * RATE // 1000, 1500 * RATE // 1000
    looks = [
        echo_lag(reference[end - window - reach : end], mic[end - window : end], reach)
        for end in range(every, len(mic) + 1, every)
        if end >= window
    ]
    assert looks.count(350 * RATE // 1000) == 1  # the passing echo wins exactly one look
    settled = delays.index((250 - MARGIN_MS) * RATE // 1000)
    assert set(delays[settled:]) == {(250 - MARGIN_MS) * RATE // 1000}
    assert delay.moves == 1
