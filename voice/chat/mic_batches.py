"""Mic blocks gathered into fewer wake-ups of the loop while nobody speaks and the assistant is silent.

Idle listening costs mostly the loop waking for every 40 ms block and the fixed cost of handling one.
While the conversation is idle the loop takes ``idle_ms`` of audio at once; as soon as it is not (the
user began speaking, a reply is coming or playing), every block goes on by itself, so barge-in and
the end of the user's turn are judged as soon as each block arrives.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from voice.audio.block import AudioBlock


class MicBatches:
    """Called with each mic block on the device's thread; hands ``send`` one block per wake-up.

    ``idle`` is set from the loop's thread (a plain attribute: a stale read costs one batch).
    """

    def __init__(self, send: Callable[[AudioBlock], object], idle_frames: int) -> None:
        self.idle = False
        self._send = send
        self._idle_frames = idle_frames
        self._held: list[AudioBlock] = []
        self._held_frames = 0

    def add(self, block: AudioBlock) -> None:
        self._held.append(block)
        self._held_frames += block.frames
        if self.idle and self._held_frames < self._idle_frames:
            return
        held, self._held, self._held_frames = self._held, [], 0
        self._send(held[0] if len(held) == 1 else joined(held))


def joined(blocks: list[AudioBlock]) -> AudioBlock:
    """Blocks that follow each other on the clock as one, stamped with the first one's device time."""
    first = blocks[0]
    samples = np.concatenate([block.samples for block in blocks])
    return AudioBlock(samples, first.rate, first.start, first.device_time)
