"""`--audio none`: no sound at all, yet replies are "heard" word by word at a reading pace.

A reply's words are laid out on silent audio at about the pace a visitor reads captions, and a silent
speaker "plays" that audio on the wall clock, so ``response.heard`` events flow as text appears and a
stop keeps exactly the words shown so far. A silent microphone keeps the session clock running.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np

from voice.asr.port import Transcript
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.playback import PlaybackBuffer
from voice.cancel import CancelToken
from voice.chat.driver import OpenInput, OpenOutput
from voice.duplex import AudioInput, AudioOutput
from voice.errors import DeviceError
from voice.tts.estimate import pause_after, spoken_weight
from voice.tts.port import Synthesis, WordTiming

SYLLABLE_S = 0.2  # about 180 words a minute: a comfortable pace for reading captions


class ReadingPace:
    """A synthesizer of silence: each word gets the time it takes to read, pauses after punctuation."""

    def __init__(self, syllable_s: float = SYLLABLE_S) -> None:
        self._syllable = syllable_s * ENGINE_RATE

    def synthesize(self, text: str, *, cancel: CancelToken | None = None) -> Synthesis:
        words = text.split()
        timings: list[WordTiming] = []
        cursor = 0.0
        for index, word in enumerate(words):
            if index:
                cursor += pause_after(words[index - 1]) * self._syllable
            end = cursor + spoken_weight(word) * self._syllable
            timings.append(WordTiming(word, round(cursor), round(end)))
            cursor = end
        audio = AudioBlock(np.zeros(round(cursor), np.float32), ENGINE_RATE)
        return Synthesis(audio, tuple(timings), estimated=True)


class NoMicrophone:
    """The transcriber of a kiosk without a microphone: the silent mic never gives it speech."""

    def transcribe(
        self,
        audio: AudioBlock,
        *,
        word_timings: bool = False,
        over_reply: bool = False,
        cancel: CancelToken | None = None,
        context: str = "",
    ) -> Transcript:
        raise DeviceError("--audio none has no microphone to transcribe")


class SilentSpeaker:
    """Hands the playback buffer's audio to nobody; the silent microphone's thread pulls it."""

    def __init__(self, buffer: PlaybackBuffer) -> None:
        self.buffer = buffer
        self.underflows = 0

    @property
    def position(self) -> int:
        return self.buffer.position

    @property
    def latency_samples(self) -> int:
        return 0

    def check(self) -> None:
        pass

    def close(self) -> None:
        pass


class SilentMicrophone:
    """Delivers silent blocks on the wall clock from its own thread, the speaker's block pulled first."""

    def __init__(
        self, deliver: Callable[[AudioBlock], None], speaker: SilentSpeaker | None, frames: int
    ) -> None:
        self.overflows = 0
        self._deliver = deliver
        self._speaker = speaker
        self._frames = frames
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._run, name="voice-silent-mic", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        block_s = self._frames / ENGINE_RATE
        due = time.monotonic()
        count = 0
        while not self._closed.wait(max(0.0, due - time.monotonic())):
            if self._speaker is not None:
                self._speaker.buffer.pull(self._frames)  # played: the words are on screen now
            self._deliver(AudioBlock(np.zeros(self._frames, np.float32), ENGINE_RATE, count * self._frames))
            count += 1
            due += block_s

    def check(self) -> None:
        pass

    def close(self) -> None:
        self._closed.set()
        if threading.current_thread() is not self._thread:
            self._thread.join()


def silent_openers(block_ms: int) -> tuple[OpenInput, OpenOutput]:
    """The openers DeviceConversation takes, for a kiosk with no sound."""
    frames = block_ms * ENGINE_RATE // 1000
    speakers: list[SilentSpeaker] = []

    def open_output(buffer: PlaybackBuffer, on_played: Callable[[AudioBlock], None]) -> AudioOutput:
        speakers[:] = [SilentSpeaker(buffer)]
        return speakers[0]

    def open_input(deliver: Callable[[AudioBlock], None]) -> AudioInput:
        return SilentMicrophone(deliver, speakers[0] if speakers else None, frames)

    return open_input, open_output
