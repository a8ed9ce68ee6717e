"""Stand-in sound devices for driving `DeviceConversation` without a sound server: a microphone that
delivers blocks from its own thread, as a sound card's callback does, and a speaker that plays nothing."""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.playback import PlaybackBuffer

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
