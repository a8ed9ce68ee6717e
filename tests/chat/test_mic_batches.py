"""Idle listening wakes the loop for a batch of mic blocks; once the user speaks, for every block.

The microphone is a stand-in delivering a recorded question between stretches of silence from its own
thread, as a sound card's callback does; the engine, VAD, runner and playback buffer are real.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import numpy as np

from tests.support.devices import BLOCK, stand_in_conversation
from tests.support.paths import AUDIO
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav
from voice.chat.driver import AudioInput, DeviceSettings
from voice.chat.mic_batches import MicBatches
from voice.client_events import SpeechStarted, StreamEvent


class RecordedMicrophone:
    """Delivers ``samples`` in 40 ms blocks, one every ``every_s``, from its own thread."""

    def __init__(self, deliver: Callable[[AudioBlock], None], samples: np.ndarray, every_s: float) -> None:
        self.overflows = 0
        self.delivered = 0  # the end of the block delivered last, or being delivered
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(deliver, samples, every_s), daemon=True)
        self._thread.start()

    def _run(self, deliver: Callable[[AudioBlock], None], samples: np.ndarray, every_s: float) -> None:
        for start in range(0, len(samples) - BLOCK + 1, BLOCK):
            if self._closed.wait(every_s):
                return
            self.delivered = start + BLOCK
            deliver(AudioBlock(samples[start : start + BLOCK].copy(), ENGINE_RATE, start))

    def check(self) -> None:
        pass

    def close(self) -> None:
        self._closed.set()
        self._thread.join()


def test_the_loop_takes_silence_in_batches_and_speech_block_by_block() -> None:
    question = read_wav(AUDIO / "what-weather.wav").samples.astype(np.float32)
    silence = np.zeros(ENGINE_RATE, dtype=np.float32)
    samples = np.concatenate((silence, question))

    mics: list[RecordedMicrophone] = []

    def open_input(deliver: Callable[[AudioBlock], None]) -> AudioInput:
        mics.append(RecordedMicrophone(deliver, samples, every_s=0.02))
        return mics[-1]

    talk = stand_in_conversation(open_input, devices=DeviceSettings(idle_batch_ms=160), idle_batches=True)
    handled: list[tuple[int, int]] = []  # (start, end) of each block the loop woke for
    speech_at: list[int] = []
    delivered_when_heard: list[int] = []  # where the mic was once the loop had handled the speech's start

    def note(event: StreamEvent) -> None:
        if isinstance(event, SpeechStarted):
            speech_at.append(talk.clock)

    talk.runner.events.subscribe(note)

    def after_block() -> None:
        start = handled[-1][1] if handled else 0
        handled.append((start, talk.clock))
        if speech_at and not delivered_when_heard:
            delivered_when_heard.append(mics[-1].delivered)
        if talk.clock >= len(samples) - 2 * BLOCK:
            talk.stop()

    asyncio.run(talk.run(on_block=after_block))

    assert speech_at, "the question was heard"
    in_silence = [end - start for start, end in handled if end <= ENGINE_RATE]
    assert min(in_silence) == max(in_silence) == 4 * BLOCK  # one wake-up per 160 ms while nobody speaks
    # anchored to the mic, not the loop's clock: a loop running late has batches queued from before
    speaking = [end - start for start, end in handled if start >= delivered_when_heard[0]]
    assert speaking
    assert set(speaking) == {BLOCK}  # the user's speech is judged as each block arrives


def test_batches_hold_blocks_only_while_idle_and_keep_them_in_order() -> None:
    sent: list[AudioBlock] = []
    batches = MicBatches(sent.append, idle_frames=3 * BLOCK)
    blocks = [AudioBlock(np.full(BLOCK, i, np.float32), ENGINE_RATE, i * BLOCK, 1.0 + i) for i in range(7)]
    batches.idle = True
    for block in blocks[:4]:
        batches.add(block)
    batches.idle = False
    for block in blocks[4:]:
        batches.add(block)

    assert [(b.start, b.frames, b.device_time) for b in sent] == [
        (0, 3 * BLOCK, 1.0),  # three blocks, stamped as the first was
        (3 * BLOCK, 2 * BLOCK, 4.0),  # the one held back goes with the first block after idle ends
        (5 * BLOCK, BLOCK, 6.0),
        (6 * BLOCK, BLOCK, 7.0),
    ]
    assert np.array_equal(np.concatenate([b.samples for b in sent]), np.repeat(np.arange(7), BLOCK))
