"""The simulation driver: runs the engine in the virtual room, block by block on one sample clock.

Deterministic by default: each action is carried out to completion before the next block, so a run
gives the same report and byte-identical WAVs every time. With ``realtime``, blocks are paced by the
wall clock and ASR, TTS and the LLM run in worker threads, so their latencies are real.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from voice.asr.partials import PartialDecoder
from voice.asr.port import Transcriber
from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.audio.echo import EchoCanceller
from voice.audio.echo_reference import EchoReference
from voice.audio.playback import PlaybackBuffer
from voice.audio.wav import read_wav
from voice.cancel import DISCARDED, INTERRUPTED
from voice.client_events import Failure, StreamEvent, event_json
from voice.components import open_wake_gate
from voice.conversation.continuation import Request
from voice.conversation.items import ToolCall
from voice.conversation.session_log import SessionLog
from voice.duplex import Duplex, EchoPath
from voice.engine.engine import Engine
from voice.engine.inputs import TextInput
from voice.llm.port import ChatModel, ChatSettings, ToolSpec
from voice.recorder import Recorder
from voice.runtime import ActionRunner, ChatModelThinker, Thinker, Tools, Work
from voice.sim.room import ClockSlip, MicTrack, echo_of
from voice.sim.scenario import Scenario, ScriptedLlm, UserCue
from voice.sim.scripted_llm import ScriptedChatModel, ScriptedTools
from voice.sim.virtual_clock import VirtualClock
from voice.speaker.voiceprint import Embed
from voice.tts.port import Synthesizer
from voice.turn_end.port import EndOfTurn

BLOCK = ENGINE_RATE // 50  # 20 ms: one VAD frame per block


@dataclass
class Pipeline:
    """The real components the room drives; ``chat_model`` serves scenarios with a real LLM.

    ``tools`` (MCP servers) run the calls a script does not answer itself; ``tool_specs`` are offered.
    """

    transcriber: Transcriber
    synthesizer: Synthesizer
    make_engine: Callable[[], Engine]
    echo_canceller: EchoCanceller | None = None
    chat_model: ChatModel | None = None
    chat_settings: ChatSettings = field(default_factory=ChatSettings)
    end_of_turn: EndOfTurn | None = None
    tools: Tools | None = None
    tool_specs: tuple[ToolSpec, ...] = ()
    speaker_embed: Embed | None = None  # whose voice a stretch is, when only the speaker takes turns


@dataclass(frozen=True)
class CuePlacement:
    """Where a user cue landed: ``wav`` names its audio; typed cues carry ``text`` instead."""

    cue: int
    wav: str | None
    at: int | None
    reason: str = ""
    text: str | None = None


@dataclass
class SimulationResult:
    """What a run gives: the room's tracks and cues, and the stream and log as the recorder kept them."""

    recorder: Recorder
    mic: Samples
    speaker: Samples
    cues: list[CuePlacement]
    events: list[dict[str, Any]] = field(default_factory=list)  # the §7 stream, as a client receives it


class DiscardTeller:
    """A thinker that tells the script of requests discarded unheard: they consume no scripted reply."""

    def __init__(self, thinker: Thinker, script: ScriptedChatModel | None) -> None:
        self._thinker = thinker
        self._script = script

    def send(self, request: Request, delay_s: float) -> None:
        self._thinker.send(request, delay_s)

    def stop_turn(self, turn: int, reason: str = INTERRUPTED) -> None:
        self._thinker.stop_turn(turn, reason)
        if reason == DISCARDED and self._script is not None:
            self._script.discard(turn)

    def run_tool(self, turn: int, call: ToolCall) -> None:
        self._thinker.run_tool(turn, call)


class RoomSimulation:
    """One scenario, one run: mic and speaker tracks, the client stream and the session log (recorded)."""

    def __init__(
        self,
        scenario: Scenario,
        pipeline: Pipeline,
        *,
        realtime: bool = False,
        session_log: SessionLog | None = None,
        partials: PartialDecoder | None = None,
    ) -> None:
        self.scenario = scenario
        self._time = VirtualClock(ENGINE_RATE, realtime=realtime)
        self._work = Work(threaded=realtime, clock=self._time)
        self._frames = round(scenario.end_s * ENGINE_RATE)
        self._mic = MicTrack(self._frames)
        room = scenario.room
        dropped_every = round((room.dropped_every_s or 0) * ENGINE_RATE)
        self._slip = ClockSlip(room.drift_ppm, dropped_every, round(room.dropped_ms * ENGINE_RATE / 1000))
        # the speaker's track runs on true time, ahead of the mic's count by the slip
        self._speaker: Samples = np.zeros(self._frames + self._slip.behind(self._frames), dtype=np.float32)
        # the room's stamps are exact: no lead needed
        self._echo = EchoPath(pipeline.echo_canceller, EchoReference(lead_ms=0))
        wake = None if scenario.wake is None else open_wake_gate(scenario.wake.word, scenario.wake.awake_s)
        self.wake = wake
        heard_by = pipeline.transcriber if wake is None else wake.transcriber(pipeline.transcriber)
        transcriber = self._echo.transcriber(heard_by)  # as on devices
        self._clock = 0
        self._script: ScriptedChatModel | None = None
        if isinstance(scenario.llm, ScriptedLlm):
            self._script = ScriptedChatModel(scenario.llm, self._time)
            model: ChatModel = self._script
            tools: Tools | None = ScriptedTools(scenario.llm, self._time, pipeline.tools)
        elif pipeline.chat_model is not None:
            model, tools = pipeline.chat_model, pipeline.tools
        else:
            raise ValueError("a scenario with a real LLM needs a chat model in the pipeline")
        self._model = ChatModelThinker(model, pipeline.chat_settings, self._work, tools, pipeline.tool_specs)
        self._runner = ActionRunner(
            pipeline.make_engine(),
            transcriber,
            pipeline.synthesizer,
            DiscardTeller(self._model, self._script),
            self._work,
            PlaybackBuffer(ENGINE_RATE),
            session_log,
            pipeline.end_of_turn,
            pipeline.speaker_embed,
        )
        self._duplex = Duplex(self._runner, self._echo, self._on_mic_clock, wake)
        # the user's words as they speak, when asked: decoded inline in virtual time, on a thread in real time
        self.partials = None if partials is None else self._runner.live_partials(lambda: partials)
        if self.partials is not None:
            self.partials.show(True)
        self._room_mic = RoomMicrophone()
        self._room_speaker = RoomSpeaker()
        self._events: list[dict[str, Any]] = []
        self._recorder = Recorder()
        self._runner.events.subscribe(self._record)
        self._runner.on_log_record(self._recorder.note)
        self._turn_playing: int | None = None
        self._replies_started = 0
        self._typed: list[tuple[int, UserCue]] = []  # (sample, cue): typed input still to arrive
        self._cues: list[CuePlacement | None] = [None] * len(scenario.user)
        self._prepare_room()

    def _record(self, event: StreamEvent) -> None:
        data = event_json(event)
        self._events.append(data)
        self._recorder.see(data)

    # -- the room ---------------------------------------------------------------------------------

    def _prepare_room(self) -> None:
        noise = self.scenario.room.noise
        if noise is not None:
            self._mic.loop(read_wav(noise.wav).samples, noise.gain_db)
        for index, cue in enumerate(self.scenario.user):
            if cue.at_s is not None:
                self._place(index, cue, round(cue.at_s * ENGINE_RATE))

    def _place(self, index: int, cue: UserCue, at: int) -> None:
        if cue.wav is None:
            self._typed.append((at, cue))
        else:
            self._mic.place(read_wav(cue.wav).samples, at)
        self._cues[index] = CuePlacement(index + 1, _wav_name(cue), at, text=cue.text)

    def _note_reply_start(self, turn: int, played: int) -> None:
        """Reply k "starts playing" at its first played sample: cues waiting on it are placed."""
        if played == 0 or self._turn_playing == turn:
            return
        self._turn_playing = turn
        self._replies_started += 1
        for index, cue in enumerate(self.scenario.user):
            if cue.during_reply == self._replies_started:
                self._place(index, cue, self._clock + round(cue.after_ms * ENGINE_RATE / 1000))

    # -- the loop ---------------------------------------------------------------------------------

    def say_failures(self, lines: Iterable[str]) -> None:
        """Parts that did not start (an MCP server), as ``error`` events before the room begins."""
        for line in lines:
            self._runner.events.publish(Failure("tools", line, t=0.0))

    def run(self) -> SimulationResult:
        started = time.monotonic()
        try:
            for clock in range(0, self._frames - BLOCK + 1, BLOCK):
                self._clock = clock
                if self._work.threaded:
                    time.sleep(max(0.0, started + clock / ENGINE_RATE - time.monotonic()))
                self._tick()
            self._check_script()
        finally:
            self._model.stop_all()
            self._work.close()
            if self.partials is not None:
                self.partials.close()
        cues = [
            placed
            or CuePlacement(
                i + 1, _wav_name(cue), None, f"reply {cue.during_reply} never started playing", cue.text
            )
            for i, (placed, cue) in enumerate(zip(self._cues, self.scenario.user, strict=True))
        ]
        return SimulationResult(self._recorder, self._mic.samples, self._speaker, cues, self._events)

    def _tick(self) -> None:
        t = self._clock
        # what the model and tools said by now reaches the engine, one waiting job at a time;
        # requests sent during this block start their delays from its end
        self._time.advance(t, t + BLOCK, self._runner.feed_finished_work)
        self._check_script()
        for at, cue in [typed for typed in self._typed if typed[0] <= t]:
            self._typed.remove((at, cue))
            self._runner.feed(TextInput(cue.text or "", cue.input_id))
        if self._slip.drops_in(t - BLOCK, BLOCK):
            self._room_mic.overflows += 1  # the mic dropped input here, as a device's would
        self._duplex.note_glitches(self._room_mic, self._room_speaker)
        self._play(t)
        progress = self._duplex.catch_up(self._room_mic, self._room_speaker)
        if progress is not None:
            self._note_reply_start(*progress)
        slip = self._slip.behind(t)
        mic = self._mic.block(t, BLOCK)
        echo = self.scenario.room.echo_gain_db
        if echo is not None:
            delay = round(self.scenario.room.echo_delay_ms * ENGINE_RATE / 1000)
            mic = np.clip(mic + echo_of(self._speaker, t + slip, BLOCK, delay, echo), -1.0, 1.0)
        self._mic.samples[t : t + BLOCK] = mic
        heard = self._duplex.hear(
            AudioBlock(mic.astype(np.float32), ENGINE_RATE, t, (t + slip) / ENGINE_RATE)
        )
        if self.partials is not None:
            self.partials.hear(heard)

    def _check_script(self) -> None:
        """A script that ran out of replies is the scenario's error, not a failure of the model."""
        if self._script is not None and self._script.error is not None:
            raise self._script.error

    def _play(self, t: int) -> None:
        """The speaker plays on true time, up to where the mic's block ends on it."""
        start = self._room_speaker.position
        speaker_to = t + BLOCK + self._slip.behind(t + BLOCK)
        sound = self._runner.buffer.pull(speaker_to - start)
        self._speaker[start:speaker_to] = sound
        self._echo.played(AudioBlock(sound, ENGINE_RATE, start, start / ENGINE_RATE))
        self._room_speaker.position = speaker_to

    def _on_mic_clock(self, speaker_sample: int) -> int:
        """A speaker sample of this block on the mic's clock: the block's start lines up with the mic's."""
        return speaker_sample - self._slip.behind(self._clock)


class RoomMicrophone:
    """The room's mic as an AudioInput: the room hands its blocks over itself, and counts its drops."""

    def __init__(self) -> None:
        self.overflows = 0

    def check(self) -> None:
        pass

    def close(self) -> None:
        pass


class RoomSpeaker:
    """The room's speaker as an AudioOutput: heard the instant it plays, no latency, no underflows."""

    def __init__(self) -> None:
        self.underflows = 0
        self.position = 0
        self.latency_samples = 0

    def check(self) -> None:
        pass

    def close(self) -> None:
        pass


def _wav_name(cue: UserCue) -> str | None:
    return None if cue.wav is None else cue.wav.name
