"""The device driver: the engine on a real microphone and speaker, paced by the sound card.

An asyncio loop takes mic blocks as PortAudio delivers them, cancels the speaker's echo out of them
(the reference lined up by the streams' own timestamps), tells the engine how much reply audio has
been heard (the device's output latency subtracted) and feeds it the block; ASR, TTS and the LLM run
in worker threads and report back between blocks. A microphone that stops delivering is noticed
within ``STALL_S``, said in one line, and both devices are reopened with backoff.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from voice.asr.partials import PartialDecoder
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.devices import DeviceSpec, MicrophoneStream, SpeakerStream, rescan_devices
from voice.audio.echo import EchoCanceller, WebRtcEchoCanceller
from voice.audio.echo_reference import EchoReference
from voice.audio.playback import PlaybackBuffer
from voice.audio.sink_input import sink_input_control
from voice.chat.input_level import LevelMeter
from voice.chat.mic_batches import MicBatches
from voice.client_events import StateChanged, StreamEvent
from voice.components import SpeechModels
from voice.conversation.session_log import SessionLog
from voice.duplex import AudioInput, AudioOutput, Duplex, EchoPath
from voice.engine.engine import Engine
from voice.engine.inputs import CloseSession
from voice.errors import DeviceError
from voice.runtime import ActionRunner, Thinker, Work
from voice.waking import ASLEEP, WakeWordGate

STALL_S = 1.0  # a mic delivers a block every few tens of ms; a second without one means it died
WATCH_S = 0.5  # the mic watchdog looks this often (longer than an idle batch: no extra wake-ups)
STARTING_S = 5.0  # a stream just opened may take seconds to deliver its first block (PulseAudio does)
BACKLOG_S = 2.0  # mic audio the loop may fall behind by before the oldest blocks are dropped
FIRST_RETRY_S = 0.5
LAST_RETRY_S = 8.0


def default_echo_canceller() -> EchoCanceller:
    """What `voice chat` cancels the speaker's echo with, unless told the room has none."""
    return WebRtcEchoCanceller()


@dataclass(frozen=True)
class DeviceSettings:
    """Which devices, and how much audio each wake-up of the loop handles.

    40 ms blocks halve the per-block cost of 20 ms ones (idle CPU is mostly waking up to move blocks)
    and add at most 20 ms to the barge-in reaction; VAD and AEC still work in 20 and 10 ms frames.
    While nobody speaks and the assistant is silent, the loop takes ``idle_batch_ms`` of them at once:
    only the VAD's first sight of speech from silence waits for it, never a barge-in or a turn's end.
    """

    input_device: DeviceSpec = None
    output_device: DeviceSpec = None
    block_ms: int = 40
    idle_batch_ms: int = 400


@runtime_checkable
class SilencingOutput(Protocol):
    """An output that can silence the audio its device holds but has not played (voice/audio/devices.py)."""

    def silence_unplayed(self) -> int | None:
        """Silence it; the output-clock sample from which nothing was heard, or None if nothing was."""

    def unmute_when_played(self) -> None: ...


@runtime_checkable
class RestingOutput(Protocol):
    """An output that stops its device while the conversation is idle (voice/audio/devices.py)."""

    def rest_when_idle(self, idle: bool) -> None: ...


OpenInput = Callable[[Callable[[AudioBlock], None]], AudioInput]
OpenOutput = Callable[[PlaybackBuffer, Callable[[AudioBlock], None]], AudioOutput]


def device_openers(devices: DeviceSettings) -> tuple[OpenInput, OpenOutput]:
    """Open and start the real streams that ``devices`` names, with blocks of ``block_ms``."""
    frames = devices.block_ms * ENGINE_RATE // 1000

    def open_input(deliver: Callable[[AudioBlock], None]) -> AudioInput:
        mic = MicrophoneStream(deliver, devices.input_device, frames)
        mic.start()
        return mic

    def open_output(buffer: PlaybackBuffer, on_played: Callable[[AudioBlock], None]) -> AudioOutput:
        muter = sink_input_control()
        try:
            speaker = SpeakerStream(buffer, devices.output_device, frames, on_played=on_played, muter=muter)
        except DeviceError:
            if muter is not None:
                muter.close()  # its connection to the sound server goes with the speaker it was for
            raise
        speaker.start()
        return speaker

    return open_input, open_output


class DeviceConversation:
    """One conversation on real devices until ``stop()`` (Ctrl-C, SIGTERM).

    ``open_input`` / ``open_output`` default to the devices ``devices`` names; tests hand in their own.
    ``say`` prints the one-line notices about devices (stderr by default). With ``input_levels`` the
    stream also carries the mic's level (``input.level``, ten a second) for a live meter. With
    ``partials`` (the loader of their decoder) it carries the user's words as they speak
    (``input.partial``) while ``show_partials`` asks for them. Real devices hand the loop their blocks
    in batches while the conversation is idle (``devices.idle_batch_ms``); handed-in inputs do too with
    ``idle_batches``. ``stall_s`` is how long a mic that has delivered may go quiet before the devices
    are reopened (tests shorten it). With ``wake`` it sleeps until the wake word (voice/waking.py).
    """

    def __init__(
        self,
        engine: Engine,
        models: SpeechModels,
        thinker: Thinker,
        work: Work,
        echo_canceller: EchoCanceller | None,
        devices: DeviceSettings,
        session_log: SessionLog | None = None,
        *,
        open_input: OpenInput | None = None,
        open_output: OpenOutput | None = None,
        say: Callable[[str], None] | None = None,
        input_levels: bool = False,
        partials: Callable[[], PartialDecoder] | None = None,
        idle_batches: bool | None = None,
        stall_s: float = STALL_S,
        wake: WakeWordGate | None = None,
    ) -> None:
        self.buffer = PlaybackBuffer(ENGINE_RATE)
        self._echo = EchoPath(echo_canceller, EchoReference())
        heard_by = models.transcriber if wake is None else wake.transcriber(models.transcriber)
        transcriber = self._echo.transcriber(heard_by)
        self.runner = ActionRunner(
            engine,
            transcriber,
            models.synthesizer,
            thinker,
            work,
            self.buffer,
            session_log,
            models.end_of_turn,
            models.speaker_embed,
        )
        self._duplex = Duplex(self.runner, self._echo, self._on_mic_clock, wake)
        real_input, real_output = device_openers(devices)
        self._open_input = open_input or real_input
        self._open_output = open_output or real_output
        # PortAudio only sees a restarted sound server after a rescan; streams handed in need none.
        self._rescan = rescan_devices if open_input is None else (lambda: None)
        self._say = say or (lambda line: print(f"voice: {line}", file=sys.stderr, flush=True))
        self._blocks: asyncio.Queue[AudioBlock | None] = asyncio.Queue()  # bounded by _enqueue
        self._backlog = max(1, round(BACKLOG_S * 1000 / devices.block_ms))
        self._stopped = asyncio.Event()
        self._started = False  # has the mic opened last delivered a block yet?
        self._stall_s = stall_s
        self._watch_s = min(WATCH_S, stall_s / 2)  # a shorter stall is still seen in two looks
        self._mic: AudioInput | None = None
        self._speaker: AudioOutput | None = None
        self._silencing: SilencingOutput | None = None  # the speaker, when it can silence what it holds
        self._resting: RestingOutput | None = None  # the speaker, when it can stop while idle
        self._next_start = 0  # mic clock: a reopened mic carries on where the last one stopped
        self._stream = 0  # which opening of the mic is current: a closed one's late blocks are dropped
        self._counters = {"reopened": 0, "dropped_blocks": 0, "loop_stalls": 0}
        batching = open_input is None if idle_batches is None else idle_batches
        self._idle_frames = devices.idle_batch_ms * ENGINE_RATE // 1000 if batching else 0
        self._batches: MicBatches | None = None
        self._listening = True  # the engine starts listening; StateChanged says when that changes
        self._cuts_seen = 0  # the playback buffer's cuts already silenced in the device
        self.last_step_s = 0.0  # wall seconds the last mic block took to handle, for soaks to watch
        self.on_step: Callable[[], None] | None = None  # after each block handled (telemetry's heartbeat)
        self.on_heard: Callable[[AudioBlock], None] | None = None  # each block as the engine heard it
        self.runner.events.subscribe(self._follow_state)
        engine = self.runner.engine
        self._meter = (
            LevelMeter(self.runner.events.publish, lambda: engine.voiced_until) if input_levels else None
        )
        self._partials = None if partials is None else self.runner.live_partials(partials)

    def show_partials(self, enabled: bool) -> None:
        """Publish the user's words as they speak (``input.partial``), or stop; any thread may ask.
        Without a partials decoder nothing is ever decoded."""
        if self._partials is not None:
            self._partials.show(enabled)

    def words_heard(self, onset: int, end: int) -> AudioBlock | None:
        """What ASR heard of the utterance whose voice began at about ``onset`` (mic clock), up to ``end``;
        None where ASR heard the engine's own audio (no canceller)."""
        return self._echo.words_heard(onset, end)

    @property
    def clock(self) -> int:
        """Mic clock sample after the last block handled."""
        return self._duplex.clock

    def device_counters(self) -> dict[str, int]:
        """Glitches so far: overflows, underflows, echo reference re-alignments, device reopens, and
        loop stalls the mic watchdog woke late from (not counted as the mic's silence)."""
        return {**self._duplex.glitches, **self._counters, "realignments": self._echo.reference.realignments}

    def stop(self) -> None:
        """End :meth:`run` after the block in hand (call it on the loop, e.g. from a signal handler);
        the turn in flight ends as interrupted, with what was heard, before run returns."""
        self._stopped.set()
        self._blocks.put_nowait(None)

    def end_session(self) -> None:
        """The turn in flight ends as a stop would end it, with the words heard by now, and the session
        log has it (flushed). :meth:`run` does this as it ends; more calls find nothing to end."""
        mic, speaker = self._mic, self._speaker
        if mic is not None and speaker is not None:
            self._duplex.catch_up(mic, speaker)  # the words played since the last block count
        self.runner.feed(CloseSession())
        if self.runner.session_log is not None:
            self.runner.session_log.flush()

    def new_conversation(self, session_log: SessionLog) -> None:
        """End the conversation (the turn in flight is cut, heard words kept in its log) and start a
        fresh one in ``session_log``; its turns number on, so late output of old turns is dropped.
        Call on the loop that runs."""
        self.runner.new_conversation(session_log)

    def open(self) -> None:
        """Open and start both devices; raises DeviceError saying why not. Call on the loop that runs."""
        loop = asyncio.get_running_loop()
        start_at, stream = self._next_start, self._stream

        batches = self._batches = MicBatches(
            lambda block: loop.call_soon_threadsafe(self._enqueue, block, stream), self._idle_frames
        )
        self._note_idle()

        def deliver(block: AudioBlock) -> None:
            # a reopened stream counts from 0: place its blocks after everything heard so far
            batches.add(AudioBlock(block.samples, block.rate, block.start + start_at, block.device_time))

        self._duplex.streams_opened()
        self._started = False
        self._speaker = self._open_output(self.buffer, self._echo.played)
        # asked once here: a runtime Protocol check costs attribute lookups on every mic block
        self._silencing = self._speaker if isinstance(self._speaker, SilencingOutput) else None
        self._resting = self._speaker if isinstance(self._speaker, RestingOutput) else None
        try:
            self._mic = self._open_input(deliver)
        except DeviceError:
            self._close()
            raise

    async def run(self, seconds: float | None = None, on_block: Callable[[], None] | None = None) -> None:
        """Listen and talk until stopped, or for ``seconds`` of mic audio; opens the devices if not open."""
        if self._mic is None:
            self.open()
        limit = None if seconds is None else round(seconds * ENGINE_RATE)
        retry = FIRST_RETRY_S
        try:
            while not self._stopped.is_set():
                try:
                    block = await self._next_block()
                except DeviceError as exc:
                    self._say(f"{exc}; reopening the audio devices")
                    retry = await self._reopen(retry)
                    continue
                if block is None:
                    return
                retry, self._started = FIRST_RETRY_S, True
                started = time.perf_counter()
                self._step(block)
                self.last_step_s = time.perf_counter() - started
                if on_block is not None:
                    on_block()
                if limit is not None and block.end >= limit:
                    return
        finally:  # also when cancelled (Ctrl-C under asyncio.run)
            try:
                self.end_session()
            finally:
                self._close()
                if self._partials is not None:
                    self._partials.close()

    async def _next_block(self) -> AudioBlock | None:
        """The next mic block, or DeviceError if a stream failed or the mic went quiet for ``stall_s``.

        Only looks that woke on time count towards ``stall_s``: a loop that stalled (under load) wakes
        past its deadline before it has read what the mic delivered meanwhile, and reopening then
        would drop the user's words.
        """
        mic, speaker = self._mic, self._speaker
        if mic is None or speaker is None:
            raise DeviceError("audio devices are not open")
        loop = asyncio.get_running_loop()
        patience = self._stall_s if self._started else STARTING_S
        quiet = 0.0  # how long the loop looked, on time, and found no block
        while True:
            looked_at = loop.time()
            try:
                block = await asyncio.wait_for(self._blocks.get(), self._watch_s)
                break
            except TimeoutError:
                mic.check()
                if loop.time() - looked_at < 2 * self._watch_s:
                    quiet += self._watch_s
                else:
                    self._counters["loop_stalls"] += 1
                if quiet >= patience:
                    raise DeviceError(f"the microphone delivered nothing for {patience:g} s") from None
        mic.check()
        speaker.check()
        return block

    async def _reopen(self, retry: float) -> float:
        """Close both devices and open them again, waiting longer after each failure; the next wait.

        A stop meanwhile ends the wait: the next block read is then the stop itself.
        """
        self._close()
        while True:
            try:
                await asyncio.wait_for(self._stopped.wait(), retry)
            except TimeoutError:
                pass
            else:
                return retry
            retry = min(retry * 2, LAST_RETRY_S)
            try:
                self._rescan()
                self.open()
            except DeviceError as exc:
                self._say(f"{exc}; trying again in {retry:g} s")
                continue
            self._counters["reopened"] += 1
            self._say("audio devices reopened; listening")
            return retry

    def _close(self) -> None:
        for stream in (self._mic, self._speaker):
            if stream is not None:
                try:
                    stream.close()
                except DeviceError as exc:
                    self._say(str(exc))
        self._mic = self._speaker = None
        self._silencing = self._resting = None
        self._duplex.streams_closed()
        self._next_start = self.clock
        # A mic that stalled may still deliver its overdue blocks, and some may be queued: they would
        # overlap the reopened mic's, which carry on from the last block handled.
        self._stream += 1
        stopping = False
        while not self._blocks.empty():
            stopping |= self._blocks.get_nowait() is None
        if stopping:
            self._blocks.put_nowait(None)

    def _on_mic_clock(self, heard: int) -> int:
        """When the engine heard speaker sample ``heard``: the two streams count apart (and a reopened
        speaker counts from 0), so its stamps place it on the mic's clock; until they settle, the mic's
        last block end is the best known time."""
        speaker = self._speaker
        played = heard - (speaker.latency_samples if speaker is not None else 0)
        mapped = self._echo.reference.mic_sample_of(played)
        return self._duplex.clock if mapped is None else mapped

    def _step(self, block: AudioBlock) -> None:
        mic, speaker = self._mic, self._speaker
        if mic is None or speaker is None:
            raise DeviceError("audio devices are not open")
        heard = self._duplex.step(block, mic, speaker)
        self._silence_cut_audio()
        if self.on_heard is not None:
            self.on_heard(heard)
        if self._meter is not None:
            self._meter.add(block)
        if self._partials is not None:
            self._partials.hear(heard)
        self._note_idle()
        if self.on_step is not None:
            self.on_step()

    def _silence_cut_audio(self) -> None:
        """A pause or stop of the playback silences what the device still holds of the cut audio at once,
        not after the device's latency; the echo reference then expects no echo of it."""
        speaker = self._silencing
        if speaker is None:
            return
        if self.buffer.cuts != self._cuts_seen:
            self._cuts_seen = self.buffer.cuts
            silenced_from = speaker.silence_unplayed()
            if silenced_from is not None:
                self._echo.reference.unplayed_from(silenced_from)
        speaker.unmute_when_played()

    def _note_idle(self) -> None:
        """While nobody speaks and nothing plays, the mic's blocks gather, the echo canceller rests and
        so, after a while, does the speaker."""
        if self._batches is not None:
            idle = self._listening and not self.buffer.is_playing
            self._batches.idle = self._echo.resting = idle
            if self._resting is not None:
                self._resting.rest_when_idle(idle)

    def _follow_state(self, event: StreamEvent) -> None:
        if isinstance(event, StateChanged):
            self._listening = event.state in ("listening", ASLEEP)
            self._note_idle()  # a speaker that rests starts warming up now, long before a reply's audio

    def _enqueue(self, block: AudioBlock, stream: int) -> None:
        """Queue a mic block of the mic open now; a loop that fell BACKLOG_S behind loses its oldest
        audio, and says so."""
        if stream != self._stream:
            return
        if self._blocks.qsize() >= self._backlog:
            self._blocks.get_nowait()
            if self._counters["dropped_blocks"] % self._backlog == 0:  # one line per backlog's worth
                self._say(f"fell {BACKLOG_S:g} s behind the microphone; dropping the oldest audio")
            self._counters["dropped_blocks"] += 1
        self._blocks.put_nowait(block)
