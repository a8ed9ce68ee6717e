"""Seeded random conversations driven the way a well-behaved driver would: every phase change the engine
makes is one its transition table names (the diagram in the docs is complete), and each phase keeps
what it promises about the turn in flight."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np
import pytest

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.vad import VadEvent, VoiceEnded, VoicePaused, VoiceResumed, VoiceStarted
from voice.conversation.continuation import Conversation
from voice.conversation.items import ToolCall, ToolResult
from voice.engine.actions import (
    CancelTurn,
    DropTranscription,
    EngineAction,
    JudgeSpeaker,
    JudgeTurnEnd,
    PausePlayback,
    Play,
    ResumePlayback,
    RunTool,
    SendRequest,
    StopPlayback,
    Synthesize,
    Transcribe,
)
from voice.engine.engine import Engine
from voice.engine.inputs import (
    AudioPlayed,
    CancelReply,
    EndConversation,
    EngineInput,
    LlmDone,
    LlmFailed,
    LlmText,
    LlmToolCall,
    MicAudio,
    MuteMicrophone,
    SpeakerJudged,
    SynthesisFailed,
    SynthesisReady,
    TextInput,
    ToolDone,
    TranscriptFailed,
    TranscriptReady,
    TurnEndJudged,
)
from voice.engine.phases import Phase
from voice.llm.errors import Dispatch, ErrorCode, LLMError
from voice.tts.port import Synthesis, WordTiming

BLOCK = 320
WORD = 3_200
SAID = ["What will the weather be like tomorrow?", "Sorry, I meant on Sunday.", "[coughing]", "", "Thanks."]
REPLY = ["It", " will", " rain.", " Take", " a", " coat."]
TURN_PHASES = {Phase.PAUSED, Phase.THINKING, Phase.SPEAKING, Phase.HOLDING}


class DiceVad:
    """Speech starts, pauses, resumes and ends as the dice say; the engine may end it at a pause."""

    def __init__(self, dice: random.Random) -> None:
        self.dice = dice
        self.start: int | None = None  # the utterance under way
        self.paused_at: int | None = None
        self.voiced_until = 0
        self.start_window = 200 * ENGINE_RATE // 1000
        self.heard_until = 0  # the end of the last block

    def process(self, block: AudioBlock, assistant_speaking: bool) -> list[VadEvent]:
        self.heard_until = block.end
        roll = self.dice.random()
        if self.start is None:
            if roll < 0.06:
                self.start = block.start
                return [VoiceStarted(block.start)]
            return []
        self.voiced_until = block.end
        audio = AudioBlock(np.zeros(block.end - self.start, np.float32), ENGINE_RATE, self.start)
        if self.paused_at is not None:
            if roll < 0.1:
                self.paused_at = None
                return [VoiceResumed(block.start)]
            if roll < 0.2:
                end, self.start, self.paused_at = self.paused_at, None, None
                return [VoiceEnded(end, audio)]
            return []
        if roll < 0.08:
            self.paused_at = block.start
            return [VoicePaused(block.start, audio)]
        return []

    def end_utterance(self) -> None:
        self.start = self.paused_at = None

    def utterance_so_far(self) -> AudioBlock | None:
        if self.start is None:
            return None
        return AudioBlock(np.zeros(self.heard_until - self.start, np.float32), ENGINE_RATE, self.start)


@dataclass
class Driver:
    """Carries out the engine's actions later, in an order the dice pick, as the runtime's workers would."""

    dice: random.Random
    engine: Engine
    clock: int = 0
    transcriptions: list[int] = field(default_factory=list)
    judgements: list[int] = field(default_factory=list)
    replies: dict[int, list[EngineInput]] = field(default_factory=dict)
    syntheses: list[Synthesize] = field(default_factory=list)
    queued: dict[int, int] = field(default_factory=dict)
    played: dict[int, int] = field(default_factory=dict)
    paused: set[int] = field(default_factory=set)
    tools: list[RunTool] = field(default_factory=list)
    voices: list[JudgeSpeaker] = field(default_factory=list)  # whose voice, asked and not yet answered

    def feed(self, event: EngineInput) -> None:
        self.carry_out(self.engine.handle(event))
        phase, turn = self.engine.phase, self.engine.active_turn
        assert (turn is not None) == (phase in TURN_PHASES) or phase is Phase.THINKING, (phase, turn)

    def carry_out(self, actions: list[EngineAction]) -> None:
        for action in actions:
            match action:
                case Transcribe(utterance=n):
                    self.transcriptions.append(n)
                case JudgeTurnEnd(utterance=n):
                    self.judgements.append(n)
                case DropTranscription(utterance=n):
                    self.transcriptions = [t for t in self.transcriptions if t != n]
                    self.judgements = [j for j in self.judgements if j != n]
                case SendRequest(request=request):
                    self.replies[request.turn] = self.script(request.turn)
                case CancelTurn(turn=n) | StopPlayback(turn=n):
                    self.replies.pop(n, None)
                    self.syntheses = [s for s in self.syntheses if s.turn != n]
                    self.tools = [t for t in self.tools if t.turn != n]
                    self.queued[n] = self.played.get(n, 0)
                case Synthesize():
                    self.syntheses.append(action)
                case Play(turn=n, audio=audio):
                    self.queued[n] = self.queued.get(n, 0) + audio.frames
                case PausePlayback(turn=n):
                    self.paused.add(n)
                case ResumePlayback(turn=n):
                    self.paused.discard(n)
                case RunTool():
                    self.tools.append(action)
                case JudgeSpeaker():
                    self.voices.append(action)

    def script(self, turn: int) -> list[EngineInput]:
        words = REPLY[: self.dice.randint(0, len(REPLY))]
        events: list[EngineInput] = [LlmText(turn, word) for word in words]
        if self.dice.random() < 0.25:
            events.append(LlmToolCall(turn, ToolCall(f"call-{turn}", "forecast", {})))
        if self.dice.random() < 0.15:
            code = self.dice.choice([ErrorCode.UNAVAILABLE, ErrorCode.TOO_LARGE, ErrorCode.INVALID])
            events.append(LlmFailed(turn, LLMError(code, Dispatch.UNKNOWN, "down", retriable=True)))
        else:
            events.append(LlmDone(turn))
        return events

    def step(self) -> None:
        choices = [self.tick, self.tick, self.tick, self.tick]
        if self.transcriptions:
            choices.append(self.transcribe)
        if self.judgements:
            choices.append(self.judge)
        if self.replies:
            choices += [self.stream, self.stream]
        if self.syntheses:
            choices.append(self.synthesize)
        if self.tools:
            choices.append(self.finish_tool)
        if self.voices:
            choices.append(self.judge_voice)
        if self.dice.random() < 0.03:
            choices.append(self.press)
        self.dice.choice(choices)()

    def tick(self) -> None:
        turn = self.engine.active_turn
        played = 0 if turn is None else self.played.get(turn, 0)
        if turn is not None and turn not in self.paused and played < self.queued.get(turn, 0):
            self.played[turn] = min(self.queued[turn], played + 3 * BLOCK)
            self.feed(AudioPlayed(turn, self.played[turn], self.clock))
        block = AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, self.clock)
        self.clock += BLOCK
        self.feed(MicAudio(block))

    def transcribe(self) -> None:
        n = self.transcriptions.pop(self.dice.randrange(len(self.transcriptions)))
        if self.dice.random() < 0.1:
            self.feed(TranscriptFailed(n, "whisper fell over", server_down=self.dice.random() < 0.5))
        else:
            self.feed(TranscriptReady(n, self.dice.choice(SAID)))

    def judge(self) -> None:
        n = self.judgements.pop(self.dice.randrange(len(self.judgements)))
        self.feed(TurnEndJudged(n, self.dice.choice([0.1, 0.45, 0.55, 0.9])))

    def stream(self) -> None:
        turn = self.dice.choice(sorted(self.replies))
        event = self.replies[turn].pop(0)
        if not self.replies[turn]:
            del self.replies[turn]
        self.feed(event)

    def synthesize(self) -> None:
        chunk = self.syntheses.pop(0)  # the worker speaks chunks in order
        if self.dice.random() < 0.05:
            self.feed(SynthesisFailed(chunk.turn, chunk.chunk, "piper fell over"))
            return
        words = chunk.text.split()
        timings = tuple(WordTiming(w, i * WORD, (i + 1) * WORD) for i, w in enumerate(words))
        audio = AudioBlock(np.zeros(len(words) * WORD, np.float32), ENGINE_RATE)
        self.feed(SynthesisReady(chunk.turn, chunk.chunk, Synthesis(audio, timings)))

    def judge_voice(self) -> None:
        asked = self.voices.pop(self.dice.randrange(len(self.voices)))
        similarity = self.dice.choice([None, 0.3, 0.5, 0.6, 0.7, 0.9])
        self.feed(SpeakerJudged(asked.stretch, similarity, asked.audio.duration_s))

    def finish_tool(self) -> None:
        run = self.tools.pop(0)
        self.feed(ToolDone(run.turn, ToolResult(run.call.id, "rain")))

    def press(self) -> None:
        roll = self.dice.random()
        if roll < 0.35:
            self.feed(TextInput(self.dice.choice(SAID[:2]), self.dice.choice([None, "typed-1"])))
        elif roll < 0.65:
            self.feed(CancelReply())
        elif roll < 0.8:
            self.feed(MuteMicrophone(self.dice.random() < 0.5))
        else:
            self.feed(EndConversation())
            self.engine.start_conversation(Conversation())


@pytest.mark.parametrize("speaker", [False, True], ids=["anyone", "conversation"])
@pytest.mark.parametrize("seed", range(16))
def test_random_conversations_move_only_as_the_table_says(seed: int, speaker: bool) -> None:
    dice = random.Random(seed)
    driver = Driver(dice, Engine(DiceVad(dice), speaker=speaker))
    seen = {Phase.LISTENING}
    for _ in range(3_000):
        driver.step()
        seen.add(driver.engine.phase)
        if driver.engine.phase is Phase.USER_SPEAKING:
            assert driver.engine.active_turn is None
        if driver.engine.phase in (Phase.PAUSED, Phase.HOLDING, Phase.SPEAKING):
            assert driver.engine.active_turn is not None
    assert {Phase.USER_SPEAKING, Phase.THINKING} <= seen, seen
