"""Echo cancellation: remove the assistant's own voice, played by the speaker, from the mic signal.

Without it the assistant hears itself through the speakers and barges in on its own reply.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import pywebrtc_audio

from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.errors import AudioError, ProtocolError

# AEC3 at 16 kHz hands back each sample 128 samples (8 ms) after it went in (measured; pinned by a test).
AEC3_DELAY_SAMPLES = 128


class EchoCanceller(Protocol):
    """``reference`` is the speaker signal for the same clock span as ``mic``; returns the cleaned mic.

    ``rest`` is for a span where the speaker has long been silent and nobody speaks: the mic as the
    canceller would hand it back with no echo to remove, without running it.
    """

    def process(self, mic: AudioBlock, reference: AudioBlock) -> AudioBlock: ...

    def rest(self, mic: AudioBlock) -> AudioBlock: ...


class WebRtcEchoCanceller:
    """WebRTC AEC3 (pywebrtc-audio) at ENGINE_RATE; it adapts to the room and finds the echo delay itself.

    AEC3 works in 10 ms frames and its output lags its input by ``AEC3_DELAY_SAMPLES``. Returned
    blocks are placed on the clock where their audio belongs: each covers the whole frames processed
    so far minus that lag, so the first comes back 128 samples short and a remainder shorter than
    10 ms waits for the next block. With blocks of whole 10 ms frames, every later block comes back
    as long as it went in. A block may start after a gap (audio the driver dropped), never before the
    previous one ends. ``delay_hint_ms`` is the expected speaker-to-mic delay; 0 lets AEC3
    estimate it. Not thread-safe: one instance per mic stream.
    """

    def __init__(self, delay_hint_ms: int = 0) -> None:
        self.rate = ENGINE_RATE
        self._frame = ENGINE_RATE // 100
        self._aec = pywebrtc_audio.EchoCanceller(
            sample_rate=ENGINE_RATE, num_channels=1, stream_delay_ms=delay_hint_ms
        )
        self._mic = np.zeros(0, dtype=np.float32)
        self._reference = np.zeros(0, dtype=np.float32)
        self._pending_start: int | None = None
        self._lag_to_drop = AEC3_DELAY_SAMPLES
        self._last_in = np.zeros(AEC3_DELAY_SAMPLES, dtype=np.float32)  # the mic AEC3 still holds back
        self._rested = False

    def process(self, mic: AudioBlock, reference: AudioBlock) -> AudioBlock:
        self._check(mic, reference)
        return self._hand_back(mic, reference, run=True)

    def rest(self, mic: AudioBlock) -> AudioBlock:
        """The mic at AEC3's lag without running it (about 60 us per 10 ms frame): with the speaker
        long silent it has nothing to remove, and it learns nothing from a silent reference."""
        silent = AudioBlock(np.zeros(mic.frames, dtype=np.float32), mic.rate, mic.start)
        self._check(mic, silent)
        return self._hand_back(mic, silent, run=False)

    def _check(self, mic: AudioBlock, reference: AudioBlock) -> None:
        for block in (mic, reference):
            if block.rate != self.rate or block.channels != 1:
                raise AudioError(
                    f"echo canceller needs mono {self.rate} Hz blocks, "
                    f"got {block.channels} ch at {block.rate} Hz"
                )
        if (mic.start, mic.frames) != (reference.start, reference.frames):
            raise ProtocolError(
                f"echo reference spans samples {reference.start}-{reference.end}, "
                f"the mic {mic.start}-{mic.end}"
            )

    def _hand_back(self, mic: AudioBlock, reference: AudioBlock, *, run: bool) -> AudioBlock:
        if self._pending_start is None:
            self._pending_start = mic.start
        elif mic.start < self._pending_start + len(self._mic):
            raise ProtocolError(f"mic block at sample {mic.start} does not follow the previous one")
        elif mic.start > self._pending_start + len(self._mic):
            self._skip_to(mic.start)
        self._mic = np.concatenate((self._mic, mic.samples.astype(np.float32, copy=False)))
        self._reference = np.concatenate((self._reference, reference.samples.astype(np.float32, copy=False)))
        whole = len(self._mic) // self._frame * self._frame
        held = np.concatenate((self._last_in, self._mic[:whole]))
        self._last_in = held[len(held) - AEC3_DELAY_SAMPLES :]
        cleaned: Samples
        if not whole:
            cleaned = self._mic[:0]
        elif run:
            cleaned = self._aec.process(self._mic[:whole], self._reference[:whole])
            if self._rested:  # AEC3 still held the mic from before the rest: hand back what came since
                count = min(AEC3_DELAY_SAMPLES, whole)
                cleaned = np.concatenate((held[:count], np.asarray(cleaned, dtype=np.float32)[count:]))
                self._rested = False
        else:  # what AEC3 would hand back with nothing to remove: its input, AEC3_DELAY_SAMPLES late
            cleaned = held[:whole]
            self._rested = True
        # AEC3's first output is its start-up lag, audio from before the stream began: drop it.
        dropped = min(self._lag_to_drop, len(cleaned))
        self._lag_to_drop -= dropped
        # Output sample k belongs D samples before input sample k; start-up lag not yet dropped shifts it on.
        out_start = self._pending_start + dropped - AEC3_DELAY_SAMPLES + self._lag_to_drop
        self._mic, self._reference = self._mic[whole:], self._reference[whole:]
        self._pending_start += whole
        return AudioBlock(np.asarray(cleaned[dropped:], dtype=np.float32), self.rate, out_start)

    def _skip_to(self, start: int) -> None:
        """Audio before ``start`` was lost (a driver that fell behind dropped it): what is held back and
        what is still inside AEC3's lag belongs before the gap and is dropped; the learned echo path stays."""
        self._mic = self._mic[:0]
        self._reference = self._reference[:0]
        self._pending_start = start
        self._lag_to_drop = AEC3_DELAY_SAMPLES

    def reset(self) -> None:
        """Forget the learned echo path and any held-back samples (a new device or room)."""
        self._aec.reset()
        self._mic = np.zeros(0, dtype=np.float32)
        self._reference = np.zeros(0, dtype=np.float32)
        self._pending_start = None
        self._lag_to_drop = AEC3_DELAY_SAMPLES
        self._last_in = np.zeros(AEC3_DELAY_SAMPLES, dtype=np.float32)
        self._rested = False
