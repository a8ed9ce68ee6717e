"""A pause or stop of the playback silences, at once, what the speaker's device still holds of the cut
audio, and only then (voice/chat/driver.py with a stand-in speaker; the real one is tested on
PulseAudio in tests/audio/test_devices.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import numpy as np

from tests.support.devices import BLOCK, SilentSpeaker, ThreadedMicrophone, stand_in_conversation
from voice.audio.block import AudioBlock
from voice.audio.playback import PlaybackBuffer
from voice.chat.driver import AudioInput, AudioOutput


class SilencingSpeaker(SilentSpeaker):
    """Counts the driver's requests to silence what it holds, and its checks for when to unmute."""

    def __init__(self, buffer: PlaybackBuffer) -> None:
        super().__init__(buffer)
        self.silenced = 0
        self.unmute_checks = 0

    def silence_unplayed(self) -> int | None:
        self.silenced += 1
        return 0

    def unmute_when_played(self) -> None:
        self.unmute_checks += 1


def test_a_cut_in_the_buffer_silences_the_device_once_and_unmuting_is_checked_every_block() -> None:
    speakers: list[SilencingSpeaker] = []

    def open_input(deliver: Callable[[AudioBlock], None]) -> AudioInput:
        return ThreadedMicrophone(deliver, blocks=6, level=0.0, every_s=0.01)

    def open_output(buffer: PlaybackBuffer, on_played: Callable[[AudioBlock], None]) -> AudioOutput:
        speakers.append(SilencingSpeaker(buffer))
        return speakers[-1]

    talk = stand_in_conversation(open_input, open_output=open_output, idle_batches=False)
    talk.buffer.enqueue(np.full(16000, 0.5, np.float32))
    silenced_by_block: list[int] = []

    def after_block() -> None:
        silenced_by_block.append(speakers[0].silenced)
        if len(silenced_by_block) == 2:
            talk.buffer.pause()  # as the engine pauses a reply for speech over it
        if len(silenced_by_block) == 5:
            talk.buffer.resume()
            talk.buffer.stop()

    asyncio.run(talk.run(seconds=6 * BLOCK / 16000, on_block=after_block))

    assert silenced_by_block == [0, 0, 1, 1, 1, 2]
    assert speakers[0].unmute_checks == 6
