"""The turn state machine: listening → user speaking → thinking → speaking, and barge-in.

Pure: it reads no clock (time is the mic's sample clock) and does no I/O. Drivers feed it events and
carry out the actions it returns. Speech heard while the assistant talks pauses playback at once (the
reaction users notice); the utterance's transcript then decides: real words from the user cancel the
turn, keeping exactly what was heard, while a cough, a click or the assistant's own echo resumes it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.vad import SpeechEnded, SpeechPaused, SpeechStarted, VadEvent
from voice.conversation.continuation import Conversation, Request
from voice.conversation.items import ToolCall
from voice.conversation.ledger import PlaybackLedger, SampleSpan
from voice.engine.actions import (
    CancelTurn,
    EngineAction,
    PausePlayback,
    Play,
    ResumePlayback,
    RunTool,
    SendRequest,
    SpeakNotice,
    StopPlayback,
    Synthesize,
    Transcribe,
)
from voice.engine.events import (
    EngineEvent,
    LlmDone,
    LlmFailed,
    LlmText,
    LlmToolCall,
    MicAudio,
    PlaybackProgress,
    SynthesisReady,
    ToolDone,
    TranscriptReady,
)
from voice.engine.records import SpeechRecord, TurnRecord
from voice.engine.transcripts import is_fragment, is_meaningful, sounds_like_echo
from voice.errors import ProtocolError
from voice.llm.retry import RetryPolicy
from voice.tts.chunker import SpeechChunker

FAILURE_NOTICE = "Sorry, I could not reach the language model."
ECHO_TAIL_S = 0.5  # a reply's last words can still come back through the mic this long after it ended


class Phase(enum.Enum):
    LISTENING = "listening"
    USER_SPEAKING = "user speaking"
    THINKING = "thinking"
    SPEAKING = "speaking"


class Vad(Protocol):
    """Voice activity detection with stricter settings while the assistant is audible."""

    def process(self, block: AudioBlock, assistant_speaking: bool) -> list[VadEvent]: ...


@dataclass
class _Turn:
    request: Request
    record: TurnRecord
    ledger: PlaybackLedger = field(default_factory=PlaybackLedger)
    chunker: SpeechChunker = field(default_factory=SpeechChunker)
    attempt: int = 1
    first_chunk: int = 0  # chunks numbered below this belong to a failed earlier attempt
    chunks_asked: int = 0
    chunks_done: int = 0
    enqueued: int = 0
    played: int = 0
    llm_done: bool = False
    paused: bool = False
    calls: list[ToolCall] = field(default_factory=list)
    tools_waiting: set[str] = field(default_factory=set)
    tools_started: bool = False

    @property
    def number(self) -> int:
        return self.request.turn

    def all_audio_played(self) -> bool:
        return self.llm_done and self.chunks_done == self.chunks_asked and self.played >= self.enqueued


Handler = Callable[["Engine", Any], list[EngineAction]]


class Engine:
    """Decides, event by event, what the assistant does next; the conversation core decides what it says."""

    def __init__(
        self,
        vad: Vad,
        conversation: Conversation | None = None,
        *,
        retry: RetryPolicy | None = None,
        rate: int = ENGINE_RATE,
    ) -> None:
        self._vad = vad
        self.conversation = conversation or Conversation()
        self._retry = retry or RetryPolicy()
        self.rate = rate
        self.phase = Phase.LISTENING
        self._turn: _Turn | None = None
        self._transcriptions = 0
        self._transcribing = 0  # final transcripts still to come
        self._utterance_of: dict[int, SpeechRecord] = {}
        self._speculation: tuple[int, int] | None = None  # (transcription, voiced end) offered early
        self._early_transcripts: dict[int, str] = {}
        self._open_speech: SpeechRecord | None = None
        self._last_reply: tuple[str, int, int] | None = None  # its last words, how many, when it ended
        self.turns: list[TurnRecord] = []
        self.speech: list[SpeechRecord] = []

    @property
    def active_turn(self) -> int | None:
        return self._turn.number if self._turn else None

    def assistant_audible(self) -> bool:
        """True while reply audio is playing (the VAD then needs barge-in settings)."""
        turn = self._turn
        return turn is not None and not turn.paused and turn.played < turn.enqueued

    def _require_turn(self) -> _Turn:
        if self._turn is None:
            raise ProtocolError(f"turn output while {self.phase.value} with no turn in flight")
        return self._turn

    # -- dispatch ---------------------------------------------------------------------------------

    def handle(self, event: EngineEvent) -> list[EngineAction]:
        """Take one event; return the actions to carry out, in order."""
        turn_of_event = getattr(event, "turn", None)
        if turn_of_event is not None and turn_of_event != self.active_turn:
            return []  # a cancel is final: late output of a cancelled turn is dropped
        return self._dispatch(event)

    def _dispatch(self, event: EngineEvent | VadEvent) -> list[EngineAction]:
        handler = _TRANSITIONS.get((self.phase, type(event)))
        if handler is None:
            raise ProtocolError(f"{type(event).__name__} is not expected while {self.phase.value}")
        return handler(self, event)

    # -- microphone and VAD -----------------------------------------------------------------------

    def _on_mic(self, event: MicAudio) -> list[EngineAction]:
        actions: list[EngineAction] = []
        for vad_event in self._vad.process(event.block, self.assistant_audible()):
            actions += self._dispatch(vad_event)
        return actions

    def _on_speech_started(self, event: SpeechStarted) -> list[EngineAction]:
        self._open_speech = SpeechRecord(event.sample, event.sample)
        self.phase = Phase.USER_SPEAKING
        turn = self._turn
        if turn is None or turn.paused:
            return []
        if turn.played < turn.enqueued and turn.record.barge_in is None:
            turn.record.barge_in = event.sample
        turn.paused = True
        return [PausePlayback(turn.number)]

    def _on_speech_paused(self, event: SpeechPaused) -> list[EngineAction]:
        """The user may have finished: transcribe now, while endpointing still waits to be sure."""
        self._transcriptions += 1
        self._speculation = (self._transcriptions, event.sample)
        return [Transcribe(self._transcriptions, event.utterance)]

    def _on_speech_ended(self, event: SpeechEnded) -> list[EngineAction]:
        record = self._open_speech
        if record is None:  # the table admits SpeechEnded only while the user speaks
            raise ProtocolError("speech ended that never started")
        record.end = event.sample
        self.speech.append(record)
        self._open_speech = None
        self._transcribing += 1
        self.phase = Phase.THINKING
        speculation, self._speculation = self._speculation, None
        if speculation is not None and speculation[1] == event.sample:  # nothing was said since the offer
            self._utterance_of[speculation[0]] = record
            early = self._early_transcripts.pop(speculation[0], None)
            return [] if early is None else self._on_transcript(TranscriptReady(speculation[0], early))
        self._early_transcripts.clear()
        self._transcriptions += 1
        self._utterance_of[self._transcriptions] = record
        return [Transcribe(self._transcriptions, event.utterance)]

    def _on_transcript(self, event: TranscriptReady) -> list[EngineAction]:
        record = self._utterance_of.pop(event.utterance, None)
        if record is None:
            if self._speculation is not None and self._speculation[0] == event.utterance:
                self._early_transcripts[event.utterance] = event.text  # kept until endpointing confirms
            return []  # or a speculation the user talked past: dropped
        record.transcript = event.text
        self._transcribing -= 1
        turn = self._turn
        genuine = is_meaningful(event.text)
        if genuine and turn is not None and turn.record.barge_in is not None:
            voiced_s = (record.end - record.start) / self.rate
            genuine = not sounds_like_echo(event.text, *self._recently_played(turn))
            genuine = genuine and not is_fragment(event.text, voiced_s)
        elif genuine and turn is None and self._last_reply is not None:
            words, count, ended = self._last_reply
            tail = record.start - ended < ECHO_TAIL_S * self.rate
            genuine = not (tail and sounds_like_echo(event.text, words, count))
        if not genuine:
            if turn is not None:
                return self._resume(turn)
            if self.conversation.pending_input:  # a noise cancelled the question: ask it again
                return self._submit("")
            self._settle_phase()
            return []
        actions: list[EngineAction] = self._cancel(turn) if turn is not None else []
        return actions + self._submit(event.text)

    @staticmethod
    def _recently_played(turn: _Turn, before: int = 12, after: int = 2) -> tuple[str, int]:
        """The words around the pause (what an echo of the assistant's own voice would repeat), and
        how many of them had been heard at the pause."""
        words = [word.text for word in turn.ledger.words()]
        heard = turn.ledger.heard_word_count(turn.played)
        first = max(0, heard - before)
        return " ".join(words[first : heard + after]), heard - first

    # -- turns ------------------------------------------------------------------------------------

    def _submit(self, text: str) -> list[EngineAction]:
        request = self.conversation.submit(text)
        if request is None:
            self._settle_phase()
            return []
        return self._start_turn(request)

    def _start_turn(self, request: Request) -> list[EngineAction]:
        turn = _Turn(request, TurnRecord(request.turn, request.items))
        self.turns.append(turn.record)
        self._turn = turn
        actions: list[EngineAction] = [SendRequest(request)]
        if self.phase is Phase.USER_SPEAKING:  # the user is talking again: hold the reply until we know
            turn.paused = True
            actions.append(PausePlayback(turn.number))
        else:
            self.phase = Phase.THINKING
        return actions

    def _resume(self, turn: _Turn) -> list[EngineAction]:
        """The overlap was not the user talking: carry on with the reply."""
        if turn.record.barge_in is not None:
            turn.record.false_barge_ins += 1
            turn.record.barge_in = None
        if self.phase is Phase.USER_SPEAKING:
            return []  # more speech is under way; its transcript decides
        turn.paused = False
        self._settle_phase()
        return [ResumePlayback(turn.number), *self._finish_if_done(turn)]

    def _cancel(self, turn: _Turn) -> list[EngineAction]:
        """The user cut in: stop for good and keep exactly what they heard."""
        heard = turn.ledger.heard(turn.played)
        turn.record.interrupted = True
        turn.record.spoken = heard
        turn.record.reply = turn.ledger.text.strip()
        cut = turn.record.audio_end if turn.record.audio_start is not None else None
        self.conversation.cancel(heard, None if cut is None else cut / self.rate)
        self._turn = None
        return [CancelTurn(turn.number), StopPlayback(turn.number)]

    def _settle_phase(self) -> None:
        turn = self._turn
        if self.phase is Phase.USER_SPEAKING:
            return
        if turn is None:
            self.phase = Phase.THINKING if self._transcribing else Phase.LISTENING
        elif turn.enqueued > turn.played and not turn.paused:
            self.phase = Phase.SPEAKING
        else:
            self.phase = Phase.THINKING

    # -- LLM output -------------------------------------------------------------------------------

    def _on_llm_text(self, event: LlmText) -> list[EngineAction]:
        turn = self._require_turn()
        self.conversation.add_text(event.text)
        turn.ledger.add_text(event.text)
        return self._ask_synthesis(turn, turn.chunker.feed(event.text))

    def _on_llm_tool_call(self, event: LlmToolCall) -> list[EngineAction]:
        turn = self._require_turn()
        self.conversation.add_tool_call(event.call)
        turn.calls.append(event.call)
        turn.record.tool_calls.append(event.call.name)
        return []

    def _on_llm_done(self, event: LlmDone) -> list[EngineAction]:
        turn = self._require_turn()
        turn.llm_done = True
        turn.ledger.close_text()
        turn.record.reply = turn.ledger.text.strip()
        return self._ask_synthesis(turn, turn.chunker.flush()) + self._finish_if_done(turn)

    def _on_llm_failed(self, event: LlmFailed) -> list[EngineAction]:
        turn = self._require_turn()
        heard = turn.ledger.heard(turn.played)
        delay = self._retry.delay_before_retry(event.error, turn.attempt, bool(heard))
        if delay is not None:
            self.conversation.discard_reply()
            turn.attempt += 1
            turn.first_chunk = turn.chunks_done = turn.chunks_asked
            turn.ledger, turn.chunker, turn.calls = PlaybackLedger(), SpeechChunker(), []
            turn.enqueued = turn.played = 0
            return [StopPlayback(turn.number), SendRequest(turn.request, delay)]
        turn.record.error = event.error.code.value
        turn.record.reply = turn.ledger.text.strip()
        turn.record.spoken = heard
        self.conversation.cancel(heard)
        self._turn = None
        self._settle_phase()
        return [StopPlayback(turn.number), SpeakNotice(FAILURE_NOTICE)]

    def _ask_synthesis(self, turn: _Turn, chunks: list[str]) -> list[EngineAction]:
        actions: list[EngineAction] = []
        for text in chunks:
            actions.append(Synthesize(turn.number, turn.chunks_asked, text))
            turn.chunks_asked += 1
        return actions

    # -- audio out --------------------------------------------------------------------------------

    def _on_synthesis(self, event: SynthesisReady) -> list[EngineAction]:
        turn = self._require_turn()
        if event.chunk < turn.first_chunk:
            return []
        if event.chunk != turn.chunks_done:
            raise ProtocolError(f"chunk {event.chunk} synthesized before chunk {turn.chunks_done}")
        turn.chunks_done += 1
        offset = turn.enqueued
        turn.ledger.place([SampleSpan(offset + w.start, offset + w.end) for w in event.synthesis.words])
        turn.enqueued += event.synthesis.audio.frames
        self._settle_phase()
        return [Play(turn.number, event.synthesis.audio)]

    def _on_progress(self, event: PlaybackProgress) -> list[EngineAction]:
        turn = self._require_turn()
        if event.played > 0 and turn.record.audio_start is None:
            turn.record.audio_start = event.clock - event.played
        if event.played > turn.played:
            turn.record.audio_end = event.clock
            turn.record.spoken = turn.ledger.heard(event.played)
        turn.played = event.played
        return self._finish_if_done(turn)

    def _finish_if_done(self, turn: _Turn) -> list[EngineAction]:
        """Once every word has played: run the proposed tools, then complete and maybe follow up."""
        if turn.paused or not turn.all_audio_played():
            self._settle_phase()
            return []
        if turn.calls and not turn.tools_started:
            turn.tools_started = True
            turn.tools_waiting = {call.id for call in turn.calls}
            self._settle_phase()
            return [RunTool(turn.number, call) for call in turn.calls]
        if turn.tools_waiting:
            return []
        self.conversation.complete()
        turn.record.spoken = turn.ledger.text.strip()
        if turn.record.audio_end is not None:
            self._last_reply = (*self._recently_played(turn), turn.record.audio_end)
        self._turn = None
        if self.conversation.awaits_follow_up:
            return self._start_turn(self.conversation.follow_up())
        self._settle_phase()
        return []

    def _on_tool_done(self, event: ToolDone) -> list[EngineAction]:
        turn = self._require_turn()
        self.conversation.add_tool_result(event.result)
        turn.tools_waiting.discard(event.result.id)
        return self._finish_if_done(turn)


_E = Engine
_LLM_EVENTS: dict[type, Handler] = {
    LlmText: _E._on_llm_text,
    LlmToolCall: _E._on_llm_tool_call,
    LlmDone: _E._on_llm_done,
    LlmFailed: _E._on_llm_failed,
    SynthesisReady: _E._on_synthesis,
    PlaybackProgress: _E._on_progress,
}

# The transition table: what each phase accepts. Anything else is a driver bug and raises.
_TRANSITIONS: dict[tuple[Phase, type], Handler] = {
    (Phase.LISTENING, MicAudio): _E._on_mic,
    (Phase.LISTENING, SpeechStarted): _E._on_speech_started,
    (Phase.LISTENING, TranscriptReady): _E._on_transcript,
    (Phase.USER_SPEAKING, MicAudio): _E._on_mic,
    (Phase.USER_SPEAKING, SpeechPaused): _E._on_speech_paused,
    (Phase.USER_SPEAKING, SpeechEnded): _E._on_speech_ended,
    (Phase.USER_SPEAKING, TranscriptReady): _E._on_transcript,
    (Phase.USER_SPEAKING, ToolDone): _E._on_tool_done,
    **{(Phase.USER_SPEAKING, kind): handler for kind, handler in _LLM_EVENTS.items()},
    (Phase.THINKING, MicAudio): _E._on_mic,
    (Phase.THINKING, SpeechStarted): _E._on_speech_started,
    (Phase.THINKING, TranscriptReady): _E._on_transcript,
    (Phase.THINKING, ToolDone): _E._on_tool_done,
    **{(Phase.THINKING, kind): handler for kind, handler in _LLM_EVENTS.items()},
    (Phase.SPEAKING, MicAudio): _E._on_mic,
    (Phase.SPEAKING, SpeechStarted): _E._on_speech_started,
    (Phase.SPEAKING, TranscriptReady): _E._on_transcript,
    **{(Phase.SPEAKING, kind): handler for kind, handler in _LLM_EVENTS.items()},
}
