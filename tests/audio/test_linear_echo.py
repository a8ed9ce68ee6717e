"""The linear canceller ASR hears through: echo subtracted, the user's voice through double talk intact."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.espeak import Speak
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.linear_echo import SpeexEchoCanceller
from voice.errors import AudioError, ProtocolError

RATE = ENGINE_RATE
BLOCK = 640  # 40 ms, as voice chat's mic blocks


def db(samples: np.ndarray) -> float:
    return 10 * np.log10(float(np.mean(samples.astype(np.float64) ** 2)) + 1e-20)


def cancel(mic: np.ndarray, reference: np.ndarray) -> np.ndarray:
    canceller = SpeexEchoCanceller()
    out = np.zeros_like(mic)
    for start in range(0, len(mic) - BLOCK + 1, BLOCK):
        span = slice(start, start + BLOCK)
        cleaned = canceller.process(
            AudioBlock(mic[span], RATE, start), AudioBlock(reference[span], RATE, start)
        )
        assert (cleaned.start, cleaned.frames) == (start, BLOCK)  # no delay: the same clock span
        out[span] = cleaned.samples
    return out


def test_loud_late_echo_drops_by_more_than_15_db_and_the_user_over_it_is_kept(speak: Speak) -> None:
    reply = speak(
        "Once upon a time, an old grey fox lived alone on a snowy hill. Each winter night he listened to "
        "the owls and counted the stars. When spring came, he went down to the valley to find a friend."
    )
    user = speak("Sorry, I meant on Sunday.", voice="en+f3")
    delay = 150 * RATE // 1000  # as loud as the speaker (0 dB) and 150 ms late
    echo = np.concatenate((np.zeros(delay, np.float32), reply))[: len(reply)]
    near = np.zeros(len(reply), np.float32)
    user_at = len(reply) - len(user) - RATE // 2
    near[user_at : user_at + len(user)] = user
    mic = echo + near

    out = cancel(mic, reply)

    settled = slice(6 * RATE, user_at)  # the filter converges over the first seconds of speech
    assert db(echo[settled]) - db(out[settled]) > 15
    spoken = slice(user_at, user_at + len(user))
    # what is left besides the user is far below the user: the words come through whole
    assert db(near[spoken]) - db(out[spoken] - near[spoken]) > 10


def test_with_the_speaker_silent_the_mic_passes_but_for_its_hum(speak: Speak) -> None:
    user = speak("Hello there.")[: 20 * BLOCK]
    mic = np.zeros(20 * BLOCK, np.float32)
    mic[: len(user)] = user

    out = cancel(mic, np.zeros_like(mic))

    assert abs(db(out) - db(mic)) < 1
    assert np.corrcoef(out, mic)[0, 1] > 0.95  # Speex takes out DC and hum below speech, nothing else


def test_blocks_go_forward_in_whole_10_ms_frames() -> None:
    canceller = SpeexEchoCanceller()
    silence = np.zeros(BLOCK, np.float32)
    canceller.process(AudioBlock(silence, RATE, 0), AudioBlock(silence, RATE, 0))

    with pytest.raises(ProtocolError, match="does not follow"):
        canceller.process(AudioBlock(silence, RATE, BLOCK // 2), AudioBlock(silence, RATE, BLOCK // 2))
    after_a_gap = AudioBlock(silence, RATE, 3 * BLOCK)  # audio the driver dropped before it
    cleaned = canceller.process(after_a_gap, after_a_gap)
    assert (cleaned.start, cleaned.end) == (3 * BLOCK, 4 * BLOCK)
    with pytest.raises(ProtocolError, match="reference spans"):
        canceller.process(AudioBlock(silence, RATE, BLOCK), AudioBlock(silence, RATE, 0))
    with pytest.raises(AudioError, match="whole 10 ms frames"):
        canceller.process(AudioBlock(silence[:100], RATE, BLOCK), AudioBlock(silence[:100], RATE, BLOCK))
