"""The virtual room of the engine's tests: an engine driven block by block with a scripted VAD, fake
synthesis and an instant playback device; no models, no clock, no I/O."""

from __future__ import annotations

import numpy as np

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.vad import VadEvent, VoiceEnded, VoicePaused, VoiceStarted
from voice.conversation.items import ToolCall
from voice.engine.actions import EngineAction, JudgeTurnEnd, Play, SendRequest, Synthesize, Transcribe
from voice.engine.engine import Engine
from voice.engine.inputs import (
    AudioPlayed,
    LlmDone,
    LlmText,
    LlmToolCall,
    MicAudio,
    SynthesisReady,
    TranscriptReady,
    TurnEndJudged,
)
from voice.recorder import Recorder
from voice.testing.stand_ins import QUESTION, WORD, ScriptedVad
from voice.tts.port import Synthesis, WordTiming

BLOCK = 320
COMPLETE, NOT_YET = 0.9, 0.1  # the end-of-turn model's judgements of a pause
LEAD_IN = "Set a timer."  # sounds finished, and is often said before a pause: the model decides
REPLY = ["Tomorrow", " starts", " dry,", " then", " rain", " moves", " in", " from", " the", " west."]


class Room:
    """Drives an engine like a driver would, with fake synthesis and an instant playback device."""

    def __init__(self) -> None:
        self.vad = ScriptedVad()
        self.engine = Engine(self.vad)
        self.clock = 0
        self.played = 0
        self.queued = 0

    def tick(self, *vad_events: VadEvent) -> list[EngineAction]:
        self.vad.next_events = list(vad_events)
        block = AudioBlock(np.zeros(BLOCK, dtype=np.float32), ENGINE_RATE, self.clock)
        self.clock += BLOCK
        return self.engine.handle(MicAudio(block))

    def say(self, text: str, utterance: int) -> list[EngineAction]:
        """The user speaks one utterance and its transcript comes back."""
        start = self.clock
        self.tick(VoiceStarted(start))
        actions = self.tick(
            VoiceEnded(self.clock, AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, start))
        )
        assert isinstance(actions[-1], Transcribe)
        return self.engine.handle(TranscriptReady(utterance, text))

    def stream(self, turn: int, deltas: list[str], done: bool = True) -> list[EngineAction]:
        actions: list[EngineAction] = []
        for delta in deltas:
            actions += self.engine.handle(LlmText(turn, delta))
        if done:
            actions += self.engine.handle(LlmDone(turn))
        return actions

    def synthesize(self, actions: list[EngineAction]) -> list[EngineAction]:
        played: list[EngineAction] = []
        for action in actions:
            if isinstance(action, Synthesize):
                played += self.engine.handle(voiced_evenly(action))
        self.queued += sum(a.audio.frames for a in played if isinstance(a, Play))
        return played

    def play(self, turn: int, samples: int) -> list[EngineAction]:
        self.played = min(self.queued, self.played + samples)
        return self.engine.handle(AudioPlayed(turn, self.played, self.clock))

    def recorded(self) -> Recorder:
        """What a client and the session log were told so far, as reports read it (takes both)."""
        recorder = Recorder()
        for record in self.engine.conversation.take_events():
            recorder.note(record)
        for event in self.engine.take_events():
            recorder.see_event(event)
        return recorder


def ask(room: Room) -> SendRequest:
    actions = room.say(QUESTION, 1)
    assert isinstance(actions[0], SendRequest)
    return actions[0]


def reply_with_a_tool_call(room: Room, words_played: int) -> tuple[ToolCall, list[EngineAction]]:
    """Turn 1 answers "Let me check." with a forecast call, and ``words_played`` words of it play.

    Returns the call and what the playing set off.
    """
    ask(room)
    call = ToolCall("c1", "forecast", {})
    actions = room.stream(1, ["Let", " me", " check."], done=False)
    room.engine.handle(LlmToolCall(1, call))
    room.synthesize(actions + room.engine.handle(LlmDone(1)))
    return call, room.play(1, words_played * WORD)


def paused(room: Room) -> AudioBlock:
    """The user speaks, then pauses: the engine asks for a transcript and a judgement of the pause."""
    utterance = AudioBlock(np.zeros(2 * BLOCK, np.float32), ENGINE_RATE, 0)
    room.tick(VoiceStarted(0))
    actions = room.tick(VoicePaused(BLOCK, utterance))
    assert actions == [Transcribe(1, utterance), JudgeTurnEnd(1, utterance)]
    return utterance


def ended_early_and_answered(room: Room) -> list[EngineAction]:
    """The turn ends at the short pause and the reply's first words are synthesized: what that asks for."""
    paused(room)
    room.engine.handle(TranscriptReady(1, QUESTION))
    room.engine.handle(TurnEndJudged(1, COMPLETE))
    return room.synthesize(room.stream(1, REPLY))


def voiced_evenly(action: Synthesize, word: int = WORD) -> SynthesisReady:
    """The voice asked for by ``action``: silence ``word`` samples a word, each word's span exact."""
    words = action.text.split()
    timings = tuple(WordTiming(w, i * word, (i + 1) * word) for i, w in enumerate(words))
    audio = AudioBlock(np.zeros(len(words) * word, np.float32), ENGINE_RATE)
    return SynthesisReady(action.turn, action.chunk, Synthesis(audio, timings))
