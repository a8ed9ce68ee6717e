"""Stand-in sound devices for driving `DeviceConversation` without a sound server: a microphone that
delivers blocks from its own thread, as a sound card's callback does, a speaker that plays nothing, and
a conversation on them with stand-in models."""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from tests.support.stand_ins import RecordingThinker
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.echo import EchoCanceller
from voice.audio.playback import PlaybackBuffer
from voice.chat.driver import STALL_S, DeviceConversation, DeviceSettings, OpenInput, OpenOutput
from voice.components import SpeechModels, make_engine
from voice.conversation.session_log import SessionLog
from voice.runtime import Thinker, Work
from voice.testing.stand_ins import EvenSynthesizer, Hears

BLOCK = 640  # 40 ms


class ThreadedMicrophone:
    """Delivers ``blocks`` blocks of a steady ``level`` every ``every_s`` from its own thread, then
    nothing more (a device that died, when fewer than the test runs for)."""

    def __init__(
        self, deliver: Callable[[AudioBlock], None], *, blocks: int, level: float, every_s: float
    ) -> None:
        self.overflows = 0
        self.closed = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(deliver, blocks, level, every_s), daemon=True)
        self._thread.start()

    def _run(self, deliver: Callable[[AudioBlock], None], blocks: int, level: float, every_s: float) -> None:
        for index in range(blocks):
            if self.closed.wait(every_s):
                return
            deliver(AudioBlock(np.full(BLOCK, level, np.float32), ENGINE_RATE, index * BLOCK))

    def check(self) -> None:
        pass

    def close(self) -> None:
        self.closed.set()
        self._thread.join()


class RecordedMicrophone:
    """Delivers ``samples`` and then silence, a 40 ms block every 40 ms from its own thread, as a sound
    card's callback would, until closed."""

    def __init__(self, deliver: Callable[[AudioBlock], None], samples: np.ndarray) -> None:
        self.overflows = 0
        self.closed = threading.Event()
        self._samples = samples
        self._thread = threading.Thread(target=self._run, args=(deliver,), daemon=True)
        self._thread.start()

    def _run(self, deliver: Callable[[AudioBlock], None]) -> None:
        index = 0
        while not self.closed.wait(BLOCK / ENGINE_RATE):
            block = np.zeros(BLOCK, np.float32)
            piece = self._samples[index * BLOCK : (index + 1) * BLOCK]
            block[: len(piece)] = piece
            deliver(AudioBlock(block, ENGINE_RATE, index * BLOCK))
            index += 1

    def check(self) -> None:
        pass

    def close(self) -> None:
        self.closed.set()
        self._thread.join()


class SilentSpeaker:
    """A speaker that plays nothing and never moves on."""

    def __init__(self, buffer: PlaybackBuffer) -> None:
        self.underflows = 0
        self.position = buffer.position
        self.latency_samples = 0

    def check(self) -> None:
        pass

    def close(self) -> None:
        pass


def stand_in_conversation(
    open_input: OpenInput,
    *,
    thinker: Thinker | None = None,
    echo_canceller: EchoCanceller | None = None,
    devices: DeviceSettings | None = None,
    session_log: SessionLog | None = None,
    say: Callable[[str], None] | None = None,
    input_levels: bool = False,
    idle_batches: bool | None = None,
    open_output: OpenOutput | None = None,
    stall_s: float = STALL_S,
) -> DeviceConversation:
    """The real driver on ``open_input``'s microphone and a silent speaker (unless ``open_output`` opens
    another), with stand-in ASR, TTS and LLM (a ``RecordingThinker`` unless given), the work done inline."""
    return DeviceConversation(
        make_engine(),
        SpeechModels(Hears(), EvenSynthesizer()),
        thinker or RecordingThinker(),
        Work(threaded=False),
        echo_canceller,
        devices or DeviceSettings(),
        session_log,
        open_input=open_input,
        open_output=open_output or (lambda buffer, on_played: SilentSpeaker(buffer)),
        say=say,
        input_levels=input_levels,
        idle_batches=idle_batches,
        stall_s=stall_s,
    )
