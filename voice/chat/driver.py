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

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.devices import DeviceSpec, MicrophoneStream, SpeakerStream
from voice.audio.echo import EchoCanceller
from voice.audio.playback import PlaybackBuffer
from voice.conversation.session_log import SessionLog
from voice.engine.engine import Engine
from voice.engine.events import MicAudio
from voice.runtime import ActionRunner, Thinker, Work
from voice.sim.commands import SpeechModels

REFERENCE_SECONDS = 10  # how much speaker history the echo canceller can reach back into


@dataclass(frozen=True)
class DeviceSettings:
    input_device: DeviceSpec = None
    output_device: DeviceSpec = None


class SpeakerHistory:
    """What the speaker played, by output-clock sample: the echo canceller's reference signal."""

    def __init__(self, seconds: int = REFERENCE_SECONDS) -> None:
        self._ring = np.zeros(seconds * ENGINE_RATE, dtype=np.float32)
        self._end = 0
        self._lock = threading.Lock()

    def record(self, block: AudioBlock) -> None:
        """Called on the speaker's device thread for every block handed out."""
        with self._lock:
            self._ring[np.arange(block.start, block.end) % len(self._ring)] = block.samples
            self._end = max(self._end, block.end)

    def span(self, start: int, frames: int) -> AudioBlock:
        """The reference for clock samples [start, start + frames); silence where nothing was played."""
        out = np.zeros(frames, dtype=np.float32)
        with self._lock:
            lo, hi = max(start, self._end - len(self._ring)), min(start + frames, self._end)
            if hi > lo:
                out[lo - start : hi - start] = self._ring[np.arange(lo, hi) % len(self._ring)]
        return AudioBlock(out, ENGINE_RATE, start)


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
        self._stopping = asyncio.Event()

    def stop(self) -> None:
        self._stopping.set()

    async def run(self, seconds: float | None = None, on_block: Callable[[], None] | None = None) -> None:
        """Listen and talk until stopped, or for ``seconds`` of mic audio."""
        loop = asyncio.get_running_loop()
        blocks: asyncio.Queue[AudioBlock] = asyncio.Queue()

        def deliver(block: AudioBlock) -> None:
            loop.call_soon_threadsafe(blocks.put_nowait, block)

        speaker = SpeakerStream(self.buffer, self._devices.output_device, on_played=self._history.record)
        with speaker, MicrophoneStream(deliver, self._devices.input_device) as mic:
            limit = None if seconds is None else round(seconds * ENGINE_RATE)
            stopping = asyncio.ensure_future(self._stopping.wait())
            try:
                while not stopping.done():
                    getting = asyncio.ensure_future(blocks.get())
                    await asyncio.wait({getting, stopping}, return_when=asyncio.FIRST_COMPLETED)
                    if not getting.done():
                        getting.cancel()
                        break
                    block = getting.result()
                    mic.check()
                    speaker.check()
                    self._step(block, speaker.position - speaker.latency_samples)
                    if on_block is not None:
                        on_block()
                    if limit is not None and block.end >= limit:
                        break
            finally:
                stopping.cancel()

    def _step(self, block: AudioBlock, heard_by: int) -> None:
        self.runner.feed_finished_work()
        self.runner.report_progress(self.buffer.audio_played_at(heard_by), block.end)
        if self._echo_canceller is not None:
            block = self._echo_canceller.process(block, self._history.span(block.start, block.frames))
        if block.frames:
            self.runner.feed(MicAudio(block))
