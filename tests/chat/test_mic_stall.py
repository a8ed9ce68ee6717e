"""A microphone that stops delivering is noticed, said in one line, and reopened; the clock carries on.

The streams are stand-ins handed to the driver (the real ones, on PulseAudio, are in
tests/chat/test_chat_device.py); the engine, VAD, runner and playback buffer are real.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import numpy as np

from tests.test_runtime import EvenSynthesizer, OneAnswerTranscriber, RecordingThinker
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.playback import PlaybackBuffer
from voice.chat.driver import AudioInput, AudioOutput, DeviceConversation, DeviceSettings
from voice.components import SpeechModels, make_engine
from voice.runtime import Work

BLOCK = 640


class DyingMicrophone:
    """Delivers ``blocks`` blocks of silence from its own thread, then nothing more, as a dead device."""

    def __init__(self, deliver: Callable[[AudioBlock], None], blocks: int) -> None:
        self.overflows = 0
        self.closed = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(deliver, blocks), daemon=True)
        self._thread.start()

    def _run(self, deliver: Callable[[AudioBlock], None], blocks: int) -> None:
        for index in range(blocks):
            if self.closed.wait(0.01):
                return
            deliver(AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, index * BLOCK))

    def check(self) -> None:
        pass

    def close(self) -> None:
        self.closed.set()
        self._thread.join()


class SilentSpeaker:
    def __init__(self, buffer: PlaybackBuffer) -> None:
        self.underflows = 0
        self.position = buffer.position
        self.latency_samples = 0

    def check(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_a_microphone_that_stops_delivering_is_said_and_reopened() -> None:
    opened: list[DyingMicrophone] = []
    said: list[str] = []

    def open_input(deliver: Callable[[AudioBlock], None]) -> AudioInput:
        opened.append(DyingMicrophone(deliver, blocks=10))
        return opened[-1]

    def open_output(buffer: PlaybackBuffer, on_played: Callable[[AudioBlock], None]) -> AudioOutput:
        return SilentSpeaker(buffer)

    work = Work(threaded=False)
    talk = DeviceConversation(
        make_engine(),
        SpeechModels(OneAnswerTranscriber(), EvenSynthesizer()),
        RecordingThinker(),
        work,
        None,
        DeviceSettings(),
        open_input=open_input,
        open_output=open_output,
        say=said.append,
    )

    def after_block() -> None:
        if talk.clock == 15 * BLOCK:  # halfway through the reopened microphone's blocks
            talk.stop()

    asyncio.run(talk.run(on_block=after_block))

    assert len(opened) == 2
    assert opened[0].closed.is_set()
    assert said[0] == "the microphone delivered nothing for 1 s; reopening the audio devices"
    assert said[1:] == ["audio devices reopened; listening"]
    assert talk.device_counters()["reopened"] == 1
    assert talk.clock == 15 * BLOCK  # the reopened mic's blocks follow the dead one's on the clock
