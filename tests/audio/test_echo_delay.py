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


def no_echo_over_time(mic: np.ndarray, reference: np.ndarray) -> list[bool]:
    """``EchoDelay.no_echo`` after each block of ``mic`` heard while ``reference`` played."""
    delay = EchoDelay()
    seen = []
    for start in range(0, len(mic), BLOCK):
        span = slice(start, start + BLOCK)
        delay.align(AudioBlock(mic[span], RATE, start), AudioBlock(reference[span], RATE, start))
        seen.append(delay.no_echo)
    return seen


def at(seconds: float) -> int:
    """The index of the block ending at ``seconds``."""
    return round(seconds * RATE) // BLOCK - 1


def room_noise(seconds: float) -> np.ndarray:
    return (np.random.default_rng(11).standard_normal(round(seconds * RATE)) * 0.03).astype(np.float32)


def test_a_mic_that_hears_nothing_of_the_speaker_is_found_to_carry_no_echo() -> None:
    reference = speaker(6.0)

    seen = no_echo_over_time(room_noise(6.0), reference)  # a headset: the mic hears the room alone

    assert not seen[at(1.0)]  # not before a few looks agree
    assert all(seen[at(3.5) :])


def test_an_echo_too_faint_to_hear_in_a_silent_room_is_no_echo() -> None:
    reference = speaker(6.0)

    seen = no_echo_over_time(late(reference, 100) * 0.001, reference)  # -60 dB: it matches, at -83 dBFS

    assert all(seen[at(3.5) :])


def test_an_echo_fainter_than_the_room_is_still_echo() -> None:
    reference = speaker(6.0)

    echo = late(reference, 100) * 0.15  # 6 dB under the room's noise, at -38 dBFS

    seen = no_echo_over_time(room_noise(6.0) + echo, reference)

    assert not any(seen)


def test_echo_that_comes_back_is_found_again() -> None:
    reference = speaker(8.0)
    echo = late(reference, 100) * 0.5
    echo[: 4 * RATE] = 0.0  # the speaker turned up after 4 s

    seen = no_echo_over_time(room_noise(8.0) + echo, reference)

    assert seen[at(4.0)]
    assert not any(seen[at(5.5) :])


def test_a_user_talking_over_the_echo_until_the_reply_pauses_does_not_make_it_no_echo() -> None:
    reference = speaker(8.0)
    reference[round(4.5 * RATE) :] = 0.0  # the barge-in paused the reply half a second into the user
    user = speaker(8.0, seed=9) * 10.0  # 20 dB louder than the echo, for 3 s
    user[: 4 * RATE] = 0.0
    user[7 * RATE :] = 0.0

    seen = no_echo_over_time(late(reference, 100) + user, reference)

    assert not any(seen)
