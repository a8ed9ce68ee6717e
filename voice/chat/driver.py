"""The device driver: the engine on a real microphone and speaker, paced by the sound card.

An asyncio loop takes mic blocks as PortAudio delivers them, cancels the speaker's echo out of them,
tells the engine how much reply audio has been heard (the device's output latency subtracted) and
feeds it the block; ASR, TTS and the LLM run in worker threads and report back between blocks.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.audio.devices import DeviceSpec, MicrophoneStream, SpeakerStream
from voice.audio.echo import EchoCanceller
from voice.audio.playback import PlaybackBuffer
from voice.components import SpeechModels
from voice.conversation.session_log import SessionLog
from voice.engine.engine import Engine
from voice.engine.events import MicAudio
from voice.runtime import ActionRunner, Thinker, Work

REFERENCE_SECONDS = 10  # how much speaker history the echo canceller can reach back into


@dataclass(frozen=True)
class DeviceSettings:
    """Which devices, and how much audio each wake-up of the loop handles.

    40 ms blocks halve the per-block cost of 20 ms ones (idle CPU is mostly waking up to move blocks)
    and add at most 20 ms to the barge-in reaction; VAD and AEC still work in 20 and 10 ms frames.
    """

    input_device: DeviceSpec = None
    output_device: DeviceSpec = None
    block_ms: int = 40


class SpeakerHistory:
    """What the speaker played, by output-clock sample: the echo canceller's reference signal."""

    def __init__(self, seconds: int = REFERENCE_SECONDS) -> None:
        self._ring = np.zeros(seconds * ENGINE_RATE, dtype=np.float32)
        self._end = 0
        self._lock = threading.Lock()

    def record(self, block: AudioBlock) -> None:
        """Called on the speaker's device thread for every block handed out."""
        with self._lock:
            self._copy(block.start, block.samples, into_ring=True)
            self._end = max(self._end, block.end)

    def span(self, start: int, frames: int) -> AudioBlock:
        """The reference for clock samples [start, start + frames); silence where nothing was played."""
        out = np.zeros(frames, dtype=np.float32)
        with self._lock:
            lo, hi = max(start, self._end - len(self._ring)), min(start + frames, self._end)
            if hi > lo:
                self._copy(lo, out[lo - start : hi - start], into_ring=False)
        return AudioBlock(out, ENGINE_RATE, start)

    def _copy(self, clock: int, samples: Samples, *, into_ring: bool) -> None:
        """Move ``samples`` to or from the ring at ``clock``, in at most two slices (it wraps once)."""
        at, done = clock % len(self._ring), 0
        while done < len(samples):
            length = min(len(samples) - done, len(self._ring) - at)
            if into_ring:
                self._ring[at : at + length] = samples[done : done + length]
            else:
                samples[done : done + length] = self._ring[at : at + length]
            done, at = done + length, 0


class DeviceConversation:
    """One conversation on real devices until ``stop()`` (Ctrl-C, SIGTERM) or a device fails."""

    def __init__(
        self,
        engine: Engine,
        models: SpeechModels,
        thinker: Thinker,
        work: Work,
        echo_canceller: EchoCanceller | None,
        devices: DeviceSettings,
        session_log: SessionLog | None = None,
    ) -> None:
        self.buffer = PlaybackBuffer(ENGINE_RATE)
        self.runner = ActionRunner(
            engine, models.transcriber, models.synthesizer, thinker, work, self.buffer, session_log
        )
        self._echo_canceller = echo_canceller
        self._devices = devices
        self._history = SpeakerHistory()
        self._blocks: asyncio.Queue[AudioBlock | None] = asyncio.Queue()

    def stop(self) -> None:
        """End :meth:`run` after the block in hand (call it on the loop, e.g. from a signal handler)."""
        self._blocks.put_nowait(None)

    async def run(self, seconds: float | None = None, on_block: Callable[[], None] | None = None) -> None:
        """Listen and talk until stopped, or for ``seconds`` of mic audio."""
        loop = asyncio.get_running_loop()

        def deliver(block: AudioBlock) -> None:
            loop.call_soon_threadsafe(self._blocks.put_nowait, block)

        frames = self._devices.block_ms * ENGINE_RATE // 1000
        speaker = SpeakerStream(
            self.buffer, self._devices.output_device, frames, on_played=self._history.record
        )
        with speaker, MicrophoneStream(deliver, self._devices.input_device, frames) as mic:
            limit = None if seconds is None else round(seconds * ENGINE_RATE)
            while (block := await self._blocks.get()) is not None:
                mic.check()
                speaker.check()
                self._step(block, speaker.position - speaker.latency_samples)
                if on_block is not None:
                    on_block()
                if limit is not None and block.end >= limit:
                    break

    def _step(self, block: AudioBlock, heard_by: int) -> None:
        self.runner.feed_finished_work()
        self.runner.report_progress(self.buffer.audio_played_at(heard_by), block.end)
        if self._echo_canceller is not None:
            block = self._echo_canceller.process(block, self._history.span(block.start, block.frames))
        if block.frames:
            self.runner.feed(MicAudio(block))
