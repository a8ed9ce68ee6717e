"""Echo cancellation: the assistant's voice leaking from speaker to mic is removed, the user's voice kept."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pytest

from tests.support.espeak import Speak
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.echo import WebRtcEchoCanceller
from voice.errors import AudioError, ProtocolError

RATE = ENGINE_RATE


def db(samples: np.ndarray) -> float:
    return 10 * np.log10(float(np.mean(samples.astype(np.float64) ** 2)) + 1e-20)


def cancel(mic: np.ndarray, reference: np.ndarray, block: int = 320) -> np.ndarray:
    """Run the canceller block by block; returns the cleaned signal placed on the mic's clock."""
    canceller = WebRtcEchoCanceller()
    out = np.zeros_like(mic)
    for offset in range(0, len(mic), block):
        span = slice(offset, offset + block)
        cleaned = canceller.process(
            AudioBlock(mic[span], RATE, offset), AudioBlock(reference[span], RATE, offset)
        )
        out[cleaned.start : cleaned.end] = cleaned.samples
    return out


@dataclass(frozen=True)
class Room:
    reference: np.ndarray  # what the speaker played
    near: np.ndarray  # the user's voice as it reaches the mic
    mic: np.ndarray  # echo + user + noise
    user_at: int


@pytest.fixture(scope="module")
def room(speak: Speak) -> Room:
    """The assistant talks (its echo 40 ms late, 12 dB down); the user talks over the end of it."""
    reply = speak(
        "Tomorrow starts dry, then rain moves in from the west. By the afternoon it will be windy, "
        "with showers on the coast. On Sunday it stays dry all day."
    )
    user = 0.5 * speak("Sorry, I meant Sunday in Paris.", voice="en+f3")
    total = len(reply) + 3 * RATE
    reference = np.zeros(total, dtype=np.float32)
    reference[: len(reply)] = reply
    delay = 40 * RATE // 1000
    echo = np.zeros(total, dtype=np.float32)
    echo[delay : delay + len(reply)] = 0.25 * reply
    echo[delay + 80 : delay + 80 + len(reply)] += 0.08 * reply  # a wall reflection
    near = np.zeros(total, dtype=np.float32)
    user_at = len(reply) - RATE  # the last second of the reply is double talk
    near[user_at : user_at + len(user)] = user
    noise = 0.001 * np.random.default_rng(0).standard_normal(total).astype(np.float32)
    return Room(reference, near, echo + near + noise, user_at)


def test_echo_is_attenuated_by_more_than_10_db(room: Room) -> None:
    out = cancel(room.mic, room.reference)

    settled = slice(2 * RATE, room.user_at)  # AEC3 adapts within the first seconds
    erle = db(room.mic[settled]) - db(out[settled])
    assert erle > 10


def test_the_users_voice_survives_double_talk(room: Room) -> None:
    out = cancel(room.mic, room.reference)

    user_at = room.user_at
    spoken = slice(user_at, user_at + int(np.flatnonzero(room.near[user_at:])[-1]))
    assert db(room.near[spoken]) - db(out[spoken]) < 3
    assert np.corrcoef(out[spoken], room.near[spoken])[0, 1] > 0.7


@pytest.mark.parametrize("block", [160, 320, 333, 1000])
def test_cleaned_blocks_follow_each_other_and_sit_where_their_audio_belongs(block: int) -> None:
    user = (0.1 * np.random.default_rng(1).standard_normal(RATE)).astype(np.float32)
    canceller = WebRtcEchoCanceller()
    pieces = []
    for offset in range(0, RATE, block):
        span = slice(offset, offset + block)
        silent = np.zeros_like(user[span])
        pieces.append(
            canceller.process(
                AudioBlock(user[span], RATE, 5000 + offset), AudioBlock(silent, RATE, 5000 + offset)
            )
        )

    assert pieces[0].start == 5000
    assert all(a.end == b.start for a, b in itertools.pairwise(pieces))
    out = np.concatenate([p.samples for p in pieces])
    assert RATE - len(out) < 128 + 160
    # With nothing to cancel, the output is the input (high-passed) at the same clock positions.
    assert np.corrcoef(out[2000:], user[2000 : len(out)])[0, 1] > 0.9


def test_reference_must_cover_the_same_span_as_the_mic() -> None:
    canceller = WebRtcEchoCanceller()
    samples = np.zeros(320, dtype=np.float32)
    with pytest.raises(ProtocolError, match="echo reference spans"):
        canceller.process(AudioBlock(samples, RATE, 0), AudioBlock(samples, RATE, 160))


def test_mic_blocks_must_not_go_back() -> None:
    canceller = WebRtcEchoCanceller()
    samples = np.zeros(320, dtype=np.float32)
    canceller.process(AudioBlock(samples, RATE, 0), AudioBlock(samples, RATE, 0))
    with pytest.raises(ProtocolError, match="does not follow"):
        canceller.process(AudioBlock(samples, RATE, 160), AudioBlock(samples, RATE, 160))


@pytest.mark.parametrize("block", [320, 333])
def test_after_audio_the_driver_dropped_the_stream_goes_on_where_the_audio_belongs(block: int) -> None:
    """A loop that fell behind drops its oldest mic blocks (voice/chat/driver.py); the kiosk died of
    the gap. The blocks after it come back on the clock past the gap, never overlapping what came back."""
    user = (0.1 * np.random.default_rng(2).standard_normal(2 * RATE)).astype(np.float32)
    canceller = WebRtcEchoCanceller()
    pieces = []
    starts = [*range(0, RATE // 2, block), *range(RATE, 2 * RATE - block, block)]  # half a second lost
    for start in starts:
        span = slice(start, start + block)
        silent = np.zeros(block, dtype=np.float32)
        pieces.append(canceller.process(AudioBlock(user[span], RATE, start), AudioBlock(silent, RATE, start)))

    assert all(a.end <= b.start for a, b in itertools.pairwise(pieces))
    after = [piece for piece in pieces if piece.start >= RATE]
    assert after[0].start == RATE
    assert all(a.end == b.start for a, b in itertools.pairwise(after))
    out = np.concatenate([piece.samples for piece in after])
    # the user's voice after the gap is where it was said, not shifted by what was lost
    assert np.corrcoef(out[2000:], user[RATE + 2000 : RATE + len(out)])[0, 1] > 0.9


def test_blocks_at_another_rate_are_refused() -> None:
    samples = np.zeros(480, dtype=np.float32)
    with pytest.raises(AudioError, match="16000 Hz"):
        WebRtcEchoCanceller().process(AudioBlock(samples, 48000), AudioBlock(samples, 48000))


def test_a_rest_hands_back_the_mic_in_place_and_the_echo_is_removed_after_it(room: Room) -> None:
    """Idle listening rests AEC3: the mic comes back where it belongs, and the next reply's echo is
    removed at once with what AEC3 had learned before the rest."""
    canceller = WebRtcEchoCanceller()
    total = len(room.mic) // 320 * 320  # whole blocks: no remainder of the reply waits in AEC3
    quiet = (0.001 * np.random.default_rng(2).standard_normal(2 * RATE)).astype(np.float32)
    pieces: list[AudioBlock] = []
    for offset in range(0, total, 320):
        span = slice(offset, offset + 320)
        pieces.append(
            canceller.process(
                AudioBlock(room.mic[span], RATE, offset), AudioBlock(room.reference[span], RATE, offset)
            )
        )
    for offset in range(0, len(quiet), 2560):
        pieces.append(canceller.rest(AudioBlock(quiet[offset : offset + 2560], RATE, total + offset)))
    again = total + len(quiet)
    for offset in range(0, total, 320):
        span = slice(offset, offset + 320)
        pieces.append(
            canceller.process(
                AudioBlock(room.mic[span], RATE, again + offset),
                AudioBlock(room.reference[span], RATE, again + offset),
            )
        )

    assert all(a.end == b.start for a, b in itertools.pairwise(pieces))
    out = np.concatenate([p.samples for p in pieces])
    start = pieces[0].start
    rested = slice(total + 128 - start, again - start)
    assert np.array_equal(out[rested], quiet[128:])  # the mic itself, in place
    settled = slice(again + RATE // 2 - start, again + room.user_at - start)
    assert db(room.mic[RATE // 2 : room.user_at]) - db(out[settled]) > 10
