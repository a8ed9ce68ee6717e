"""The playback buffer: exact counts, click-free stop and pause, and which enqueued audio was played when."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from voice.audio.playback import PlaybackBuffer
from voice.errors import AudioError, ProtocolError

BLOCK = 320
FADE = 80  # 5 ms at 16 kHz


def tone(frames: int, amplitude: float = 0.5) -> np.ndarray:
    return (amplitude * np.sin(2 * np.pi * 440 * np.arange(frames) / 16000)).astype(np.float32)


def test_pulls_are_exactly_as_long_as_asked_and_zero_padded() -> None:
    buffer = PlaybackBuffer()
    audio = tone(500)
    buffer.enqueue(audio)

    first, second = buffer.pull(BLOCK), buffer.pull(BLOCK)

    assert len(first) == len(second) == BLOCK
    np.testing.assert_array_equal(np.concatenate((first, second))[:500], audio)
    assert not second[180:].any()
    assert (buffer.handed_out, buffer.position, buffer.audio_played_to, buffer.queued_frames) == (
        640,
        640,
        500,
        0,
    )


def test_counts_include_silence_and_follow_the_clock_start() -> None:
    buffer = PlaybackBuffer(start=48_000)
    buffer.pull(BLOCK)
    assert buffer.enqueue(tone(100)) == 0
    assert buffer.enqueue(tone(100)) == 100
    buffer.pull(BLOCK)

    progress = buffer.counters()
    assert (progress.position, progress.handed_out, progress.audio_played_to, progress.queued_frames) == (
        48_640, 640, 200, 0,
    )  # fmt: skip
    assert buffer.audio_played_at(48_000 + BLOCK) == 0
    assert buffer.audio_played_at(48_000 + BLOCK + 150) == 150
    assert buffer.audio_played_at(10**9) == 200


def test_stop_fades_out_and_is_silent_within_one_block() -> None:
    buffer = PlaybackBuffer()
    buffer.enqueue(np.full(16000, 0.8, dtype=np.float32))
    before = buffer.pull(BLOCK)

    buffer.stop()
    after = buffer.pull(BLOCK)

    assert buffer.queued_frames == 0
    assert not buffer.is_playing
    assert not after[FADE:].any()
    steps = np.abs(np.diff(np.concatenate((before[-1:], after))))
    assert steps.max() <= 0.8 / FADE + 1e-6  # a ramp, never a step
    assert buffer.pull(BLOCK).max() == 0
    assert buffer.audio_played_to == BLOCK + FADE


def test_stopped_audio_is_never_played_and_new_audio_follows() -> None:
    buffer = PlaybackBuffer()
    buffer.enqueue(tone(4000))
    buffer.pull(BLOCK)
    buffer.stop()
    buffer.pull(BLOCK)

    index = buffer.enqueue(np.full(100, 0.25, dtype=np.float32))
    out = buffer.pull(BLOCK)

    assert index == 4000
    np.testing.assert_array_equal(out[:100], np.full(100, 0.25, dtype=np.float32))
    assert buffer.audio_played_to == 4100
    assert buffer.audio_played_at(2 * BLOCK) == BLOCK + FADE
    assert buffer.audio_played_at(2 * BLOCK + 50) == 4050


def test_pause_and_resume_continue_where_playback_left_off() -> None:
    audio = np.linspace(0.1, 0.9, 3000, dtype=np.float32)
    buffer = PlaybackBuffer()
    buffer.enqueue(audio)
    played = [buffer.pull(BLOCK)]

    buffer.pause()
    played += [buffer.pull(BLOCK), buffer.pull(BLOCK)]
    assert buffer.is_paused
    assert not buffer.is_playing
    assert not played[1][FADE:].any()
    assert not played[2].any()
    assert buffer.queued_frames == 3000 - BLOCK - FADE

    buffer.resume()
    while buffer.queued_frames:
        played.append(buffer.pull(BLOCK))

    out = np.concatenate(played)
    resumed_at = 3 * BLOCK
    # After the fade-in the rest of the audio comes out unchanged, sample for sample.
    np.testing.assert_array_equal(
        out[resumed_at + FADE : resumed_at + 3000 - BLOCK - FADE], audio[BLOCK + 2 * FADE :]
    )
    assert np.abs(np.diff(out[resumed_at - 1 : resumed_at + FADE + 1])).max() < 0.9 / FADE + 0.01
    assert buffer.audio_played_to == 3000
    assert buffer.handed_out == len(out)
    assert buffer.audio_played_at(resumed_at) == BLOCK + FADE
    assert buffer.audio_played_at(resumed_at + 10) == BLOCK + FADE + 10


def test_stop_while_paused_discards_the_queue_and_lifts_the_pause() -> None:
    buffer = PlaybackBuffer()
    buffer.enqueue(tone(2000))
    buffer.pause()
    buffer.pull(BLOCK)

    buffer.stop()
    buffer.enqueue(np.full(10, 0.5, dtype=np.float32))

    assert not buffer.is_paused
    assert buffer.pull(BLOCK)[:10].tolist() == [0.5] * 10


def test_pull_from_another_thread_loses_and_repeats_nothing() -> None:
    buffer = PlaybackBuffer()
    chunks = [np.full(97, i, dtype=np.float32) for i in range(1, 301)]
    pulled: list[np.ndarray] = []
    done = threading.Event()

    def device() -> None:
        while not done.is_set() or buffer.queued_frames:
            pulled.append(buffer.pull(64))

    thread = threading.Thread(target=device)
    thread.start()
    for chunk in chunks:
        buffer.enqueue(chunk)
    done.set()
    thread.join(timeout=10)

    out = np.concatenate(pulled)
    audio = out[out != 0]
    np.testing.assert_array_equal(audio, np.concatenate(chunks))
    assert buffer.handed_out == len(out)
    assert buffer.audio_played_to == 97 * 300


def test_stereo_audio_is_refused() -> None:
    with pytest.raises(AudioError, match="mono"):
        PlaybackBuffer().enqueue(np.zeros((10, 2), dtype=np.float32))


def test_the_clock_a_played_sample_went_out_at_is_found_again_after_a_pause() -> None:
    buffer = PlaybackBuffer(start=1000)
    buffer.enqueue(np.full(3 * BLOCK, 0.5, np.float32))
    buffer.pull(BLOCK)
    buffer.pause()
    buffer.pull(BLOCK)  # the fade, then silence
    buffer.pull(BLOCK)
    buffer.resume()
    buffer.pull(BLOCK)

    assert buffer.clock_of(0) is None  # nothing before the first sample
    assert buffer.clock_of(BLOCK) == 1000 + BLOCK
    played = buffer.audio_played_to
    assert buffer.clock_of(played) == 1000 + 4 * BLOCK
    assert buffer.audio_played_at(buffer.clock_of(played) or 0) == played


def test_the_buffer_counts_what_played_of_the_turn_queued_last() -> None:
    buffer = PlaybackBuffer()
    buffer.enqueue(np.ones(100, dtype=np.float32))  # a notice belongs to no turn
    buffer.enqueue(np.ones(300, dtype=np.float32), turn=4, at=0)
    buffer.enqueue(np.ones(200, dtype=np.float32), turn=4, at=300)
    buffer.pull(250)

    assert buffer.reply_played(buffer.audio_played_to) == (4, 150)
    buffer.stop()  # a retry: the turn's audio counts afresh from its next piece
    assert buffer.reply_played(buffer.audio_played_to) is None
    buffer.enqueue(np.ones(50, dtype=np.float32), turn=4, at=0)
    assert buffer.reply_played(buffer.audio_played_to) == (4, 0)
    buffer.pull(200)  # the stop's fade, then the retried piece whole
    buffer.enqueue(np.ones(80, dtype=np.float32), turn=5, at=0)  # the next turn's reply, after a whole one
    buffer.pull(30)
    assert buffer.reply_played(buffer.audio_played_to) == (5, 30)


def test_turn_audio_queued_out_of_step_is_refused() -> None:
    buffer = PlaybackBuffer()
    buffer.enqueue(np.ones(300, dtype=np.float32), turn=1, at=0)

    with pytest.raises(ProtocolError, match="queued at 200, but 300"):
        buffer.enqueue(np.ones(10, dtype=np.float32), turn=1, at=200)


def test_audio_a_device_silenced_counts_unplayed_and_a_resume_plays_it_from_there() -> None:
    buffer = PlaybackBuffer()
    audio = np.arange(1, 4001, dtype=np.float32) / 4000
    buffer.enqueue(audio, turn=1)
    handed = np.concatenate([buffer.pull(BLOCK) for _ in range(4)])  # 1280 samples handed to the device
    buffer.pause()
    assert buffer.cuts == 1

    assert buffer.holds_sound_from(700)
    assert buffer.take_back(700) == 1280 - 700  # the device had played 700 when it was silenced
    assert buffer.audio_played_to == 700
    assert buffer.audio_played_at(10**9) == 700
    assert buffer.reply_played(buffer.audio_played_to) == (1, 700)
    assert not buffer.holds_sound_from(700)

    buffer.resume()
    resumed = np.concatenate([buffer.pull(BLOCK) for _ in range(3)])
    np.testing.assert_array_equal(handed[:700], audio[:700])
    np.testing.assert_allclose(resumed[FADE:], audio[700 + FADE : 700 + 3 * BLOCK], rtol=1e-6)
    assert np.all(resumed[:FADE] <= audio[700 : 700 + FADE])  # faded back in, never a step
    assert buffer.audio_played_to == 700 + 3 * BLOCK
    assert buffer.clock_of(buffer.audio_played_to) == 7 * BLOCK  # the clock ran on over the silence


def test_after_a_stop_the_silenced_audio_is_gone_and_new_audio_plays() -> None:
    buffer = PlaybackBuffer()
    buffer.enqueue(tone(4000))
    buffer.pull(BLOCK)
    buffer.pull(BLOCK)
    buffer.stop()

    buffer.take_back(BLOCK)

    assert buffer.audio_played_to == BLOCK
    assert buffer.queued_frames == 0
    assert not buffer.is_playing
    new = tone(BLOCK, 0.3)
    at = buffer.enqueue(new)
    np.testing.assert_array_equal(buffer.pull(BLOCK), new)
    assert buffer.audio_played_to == at + BLOCK


def test_a_held_buffer_hands_out_silence_until_released_and_loses_nothing() -> None:
    buffer = PlaybackBuffer()
    audio = tone(2 * BLOCK)
    buffer.enqueue(audio)

    buffer.hold()
    assert not buffer.pull(BLOCK).any()
    assert buffer.queued_frames == 2 * BLOCK
    buffer.release()

    np.testing.assert_array_equal(np.concatenate((buffer.pull(BLOCK), buffer.pull(BLOCK))), audio)


def test_a_word_cut_by_a_long_pause_plays_again_from_its_start() -> None:
    buffer = PlaybackBuffer()
    audio = np.arange(1, 16_001, dtype=np.float32) / 16_000
    buffer.enqueue(audio[:8000], turn=3)
    buffer.enqueue(audio[8000:], turn=3, at=8000)
    for _ in range(30):  # 9600 samples handed out: the word from 8000 is cut at 9600
        buffer.pull(BLOCK)
    buffer.pause()
    for _ in range(200):  # four seconds of silence while the user's words are judged
        assert not buffer.pull(BLOCK)[FADE:].any()

    assert buffer.replay_from(3, 8000) == 9600 + FADE - 8000  # what was handed out of it, fade included
    assert buffer.reply_played(buffer.audio_played_to) == (3, 8000)
    buffer.resume()
    resumed = np.concatenate([buffer.pull(BLOCK) for _ in range(10)])
    np.testing.assert_allclose(resumed[FADE:], audio[8000 + FADE : 8000 + 10 * BLOCK], rtol=1e-6)
    assert buffer.reply_played(buffer.audio_played_to) == (3, 8000 + 10 * BLOCK)


def test_audio_never_handed_out_or_of_another_turn_is_not_replayed() -> None:
    buffer = PlaybackBuffer()
    buffer.enqueue(tone(4000), turn=1)
    buffer.pull(BLOCK)
    buffer.pause()

    assert buffer.replay_from(1, 2000) == 0  # not handed out yet: it plays on resume anyway
    assert buffer.replay_from(2, 0) == 0
    assert buffer.audio_played_to == BLOCK
