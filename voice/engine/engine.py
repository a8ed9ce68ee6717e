"""The turn state machine: listening → user speaking → thinking → speaking, and barge-in.

Pure: it reads no clock (time is the mic's sample clock) and does no I/O. Drivers feed it events and
carry out the actions it returns. Speech heard while the assistant talks pauses playback at once (the
reaction users notice); the utterance's transcript then decides: real words from the user cut the
turn, keeping exactly what was heard, while a cough, a click or the assistant's own echo resumes it.

Its parts keep their own state: utterances and speculative ASR (utterances.py), the echo judgement
of a barge-in (barge_in.py), a turn's tools and the input held while they run (tool_runs.py), and the
reply's text and what of it was heard (the conversation's PlaybackLedger).
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeAlias

import numpy as np

from voice import client_events as stream
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.vad import VadEvent, VoiceEnded, VoicePaused, VoiceResumed, VoiceStarted
from voice.client_events import (
    Failure,
    InputTranscript,
    ResponseCreated,
    ResponseDone,
    ResponseHeard,
    ResponseInterrupted,
    ResponseResumed,
    StateChanged,
    StreamEvent,
    ToolCalled,
    ToolFinished,
)
from voice.conversation.continuation import Conversation, Request
from voice.conversation.ledger import PlaybackLedger, SampleSpan
from voice.engine.actions import (
    CancelTurn,
    EngineAction,
    JudgeTurnEnd,
    PausePlayback,
    Play,
    ResumePlayback,
    RunTool,
    SendRequest,
    SpeakNotice,
    StopPlayback,
    Synthesize,
)
from voice.engine.barge_in import EchoJudge
from voice.engine.early_end import EarlyInput
from voice.engine.hold import Hold
from voice.engine.inputs import (
    AudioPlayed,
    CancelReply,
    CloseSession,
    EndConversation,
    EngineInput,
    FailedOutsideTurn,
    LlmDone,
    LlmFailed,
    LlmText,
    LlmToolCall,
    MicAudio,
    MuteMicrophone,
    SynthesisFailed,
    SynthesisReady,
    TextInput,
    ToolDone,
    TranscriptFailed,
    TranscriptReady,
    TurnEndJudged,
)
from voice.engine.records import SpeechRecord, TurnRecord
from voice.engine.tool_runs import TOOL_WAIT_LIMIT_S, HeldInput, ToolRun
from voice.engine.utterances import Utterances
from voice.errors import ProtocolError
from voice.llm.errors import ErrorCode
from voice.llm.retry import RetryPolicy
from voice.tts.chunker import SpeechChunker

FAILURE_NOTICE = "Sorry, I could not reach the language model."
SPEECH_FAILURE_NOTICE = "Sorry, I could not make out what you said."
ASR_SERVER_NOTICE = "Sorry, I can't hear you right now: my speech server is not answering."
VOICE_FAILURE_NOTICE = "Sorry, I lost my voice for that answer."
RECORDS_KEPT = 500  # turn and utterance records kept for reports and benchmarks
# Heard progress goes to the session log at word ends, a line at most this often: a process killed
# mid-reply loses at most this and the word being heard.
HEARD_LOGGED_EVERY_MS = 500
__all__ = ["TOOL_WAIT_LIMIT_S", "Engine", "Phase", "Vad"]


class Phase(enum.Enum):
    LISTENING = "listening"
    USER_SPEAKING = "user_speaking"
    THINKING = "thinking"
    SPEAKING = "speaking"


class Vad(Protocol):
    """Voice activity detection with stricter settings while the assistant is audible."""

    def process(self, block: AudioBlock, assistant_speaking: bool) -> list[VadEvent]: ...

    @property
    def voiced_until(self) -> int:
        """End of the last frame voiced under the quiet settings, in or out of an utterance."""

    @property
    def start_window(self) -> int:
        """The quiet settings' start window in samples: voiced frames become speech within it, or never."""

    def end_utterance(self) -> None:
        """The turn was judged over at the last pause: voiced audio after it starts a new utterance."""


@dataclass
class _Turn:
    request: Request
    record: TurnRecord
    ledger: PlaybackLedger  # the conversation's reply in flight: its text, audio queued and played
    chunker: SpeechChunker = field(default_factory=SpeechChunker)
    attempt: int = 1
    first_chunk: int = 0  # chunks numbered below this belong to a failed earlier attempt
    chunks_asked: int = 0
    chunks_done: int = 0
    llm_done: bool = False
    paused: bool = False
    early: EarlyInput | None = None  # input taken at a short pause: playback waits for the hold
    tools: ToolRun = field(default_factory=ToolRun)
    trimmed: bool = False  # the request was trimmed once after a too-large refusal
    input_end: int | None = None  # where the spoken input this turn answers ended
    heard_words: int = 0  # words announced as heard so far
    logged_words: int = 0  # words the session log has as heard
    logged_at: int | None = None  # output clock sample of the last heard progress logged

    @property
    def number(self) -> int:
        return self.request.turn

    def all_audio_played(self) -> bool:
        return self.llm_done and self.chunks_done == self.chunks_asked and not self.ledger.playing


Handler = Callable[["Engine", Any], list[EngineAction]]
FROM_STATE = None  # the next phase follows from the turn's state (Engine._settle_phase)


class Engine:
    """Decides, event by event, what the assistant does next; the conversation core decides what it says."""

    def __init__(
        self,
        vad: Vad,
        conversation: Conversation | None = None,
        *,
        retry: RetryPolicy | None = None,
        rate: int = ENGINE_RATE,
        hold: Hold | None = None,
    ) -> None:
        self._vad = vad
        # A reply to a turn ended at a short pause plays only after the hold's silence: the end-of-turn
        # model cannot tell "What's the weather" from a whole question (eagerness sets and adapts it).
        self.hold = hold or Hold(rate=rate)
        self._paused_at: int | None = None  # voiced end of the pause in the quiet the user may go on from
        self.conversation = conversation or Conversation()
        self._retry_policy = retry or RetryPolicy()
        self.rate = rate
        self._phase = Phase.LISTENING
        self._told_state = Phase.LISTENING.value  # the state the stream last heard
        self._outbox: list[StreamEvent] = []
        self._input_end: int | None = None  # end of the utterance being taken as input
        self._early: EarlyInput | None = None  # input being taken at a short pause, until a turn holds it
        self._continuing: EarlyInput | None = None  # an early input the user went on from: one utterance
        self._turn: _Turn | None = None
        self.utterances = Utterances()
        self._echo = EchoJudge(rate)
        self.held = HeldInput()  # said while a turn's tools ran
        self._clock = 0  # end of the last mic block: how long held input has waited
        self._muted = False
        # the latest records only: a kiosk runs for weeks, and the session log keeps everything
        self.turns: deque[TurnRecord] = deque(maxlen=RECORDS_KEPT)
        self.speech: deque[SpeechRecord] = deque(maxlen=RECORDS_KEPT)

    @property
    def phase(self) -> Phase:
        return self._phase

    def _enter(self, phase: Phase) -> None:
        """The one place the phase changes (the stream hears of each change).

        A change made while input is taken early is told with that input, once the turn's end is certain:
        a user who goes on within the hold never saw the assistant start thinking, so going back to
        user_speaking tells nothing.
        """
        if phase is self._phase:
            return
        self._phase = phase
        if self._early is not None or phase.value != self._told_state:
            self._tell(StateChanged(phase.value, self._now()))

    def take_events(self) -> list[StreamEvent]:
        """What happened since the last call, for the event stream (docs/architecture.md §7)."""
        events, self._outbox = self._outbox, []
        return events

    def _emit(self, event: StreamEvent) -> None:
        if isinstance(event, StateChanged):
            self._told_state = event.state
        self._outbox.append(event)

    def _now(self, sample: int | None = None) -> float:
        return round((self._clock if sample is None else sample) / self.rate, 3)

    @property
    def voiced_until(self) -> int:
        """End of the last mic frame the VAD found voiced (a level meter's voice light)."""
        return self._vad.voiced_until

    @property
    def active_turn(self) -> int | None:
        return self._turn.number if self._turn else None

    def assistant_audible(self) -> bool:
        """True while reply audio is playing (the VAD then needs barge-in settings)."""
        turn = self._turn
        return turn is not None and not turn.paused and turn.ledger.playing

    def _require_turn(self) -> _Turn:
        if self._turn is None:
            raise ProtocolError(f"turn output while {self.phase.value} with no turn in flight")
        return self._turn

    # -- dispatch ---------------------------------------------------------------------------------

    def handle(self, event: EngineInput) -> list[EngineAction]:
        """Take one event; return the actions to carry out, in order."""
        turn_of_event = getattr(event, "turn", None)
        if turn_of_event is not None and turn_of_event != self.active_turn:
            return []  # a cancel is final: late output of a cancelled turn is dropped
        actions = self._dispatch(event)
        for change in self.hold.take_changes():
            self.conversation.note_hold(change.hold_ms, change.was_ms, change.why)
        return actions

    def _dispatch(self, event: EngineInput | VadEvent) -> list[EngineAction]:
        transition = _TRANSITIONS.get((self.phase, type(event)))
        if transition is None:
            raise ProtocolError(f"{type(event).__name__} is not expected while {self.phase.value}")
        handler, next_phase = transition
        actions = handler(self, event)
        if next_phase is not None:
            self._enter(next_phase)
        confirmed = self.utterances.take_confirmed()  # its words count once the phase says so
        return actions if confirmed is None else actions + self._dispatch(confirmed)

    # -- microphone and VAD -----------------------------------------------------------------------

    def _on_mic(self, event: MicAudio) -> list[EngineAction]:
        self._clock = event.block.end
        block = event.block
        if self._muted:  # silence, not no audio: speech under way ends as the VAD would end it
            block = replace(block, samples=np.zeros_like(block.samples))
        actions: list[EngineAction] = []
        for vad_event in self._vad.process(block, self.assistant_audible()):
            actions += self._dispatch(vad_event)
        return actions + self._release_hold() + self._abandon_overdue_tools()

    def _on_speech_started(self, event: VoiceStarted) -> list[EngineAction]:
        """Speech over the reply pauses it at once; its transcript decides whether the user cut in."""
        turn = self._turn
        if turn is not None and turn.early is not None:
            self.hold.went_on(event.sample)
            return self._went_on(turn, turn.early)
        self.hold.speech_started(event.sample)
        self.utterances.started(event.sample)
        self._emit(stream.SpeechStarted(self._now(event.sample)))
        if turn is None or turn.paused:
            return []
        if turn.ledger.playing and turn.record.barge_in is None:
            turn.record.barge_in = event.sample
        turn.paused = True
        return [PausePlayback(turn.number)]

    def _on_speech_paused(self, event: VoicePaused) -> list[EngineAction]:
        """Transcribe at the pause and judge whether the turn is over, over a reply as in the quiet.

        A cut-in such as "Thanks, ... that's all" read as finished at its first pause costs a request
        and no sound: the answer is held, and the rest of the sentence discards it and joins the utterance.
        """
        over_reply = self._over_reply()
        self._paused_at = None if over_reply else event.sample
        actions = self.utterances.paused(event.sample, self._whole(event.utterance), over_reply)
        if self.hold.ends_early:
            return actions
        return [action for action in actions if not isinstance(action, JudgeTurnEnd)]

    def _whole(self, utterance: AudioBlock) -> AudioBlock:
        """The utterance from its start, before any pause the user went on from."""
        return utterance if self._continuing is None else self._continuing.audio.followed_by(utterance)

    def _over_reply(self) -> bool:
        """The assistant's voice may be in the utterance: a turn is in flight, or was when it began."""
        return self._turn is not None or (self._continuing is not None and self._continuing.over_reply)

    def _went_on(self, turn: _Turn, early: EarlyInput) -> list[EngineAction]:
        """The user spoke again within the hold: the pause was mid-sentence. The request is discarded
        unheard, its input withdrawn, and the utterance goes on as one (no new speech started)."""
        actions = self._interrupt(turn, discarded=True)
        self.conversation.withdraw_input(early.pending_before)
        self.utterances.reopen(self.speech.pop())
        self._continuing = early
        return actions

    def _on_speech_resumed(self, event: VoiceResumed) -> list[EngineAction]:
        if self._paused_at is not None and not self._over_reply():  # a pause over a reply may be echo
            self.hold.paused_within_turn(self._paused_at, event.sample)
        self._paused_at = None
        return self.utterances.resumed()

    def _on_turn_end_judged(self, event: TurnEndJudged) -> list[EngineAction]:
        self.utterances.judged(event)
        return self._end_turn_at_pause()

    def _end_turn_at_pause(self) -> list[EngineAction]:
        """The turn was judged over at the pause: it ends there, as if the long silence had passed."""
        finished = self.utterances.finished_at_pause()
        if finished is None or self.phase is not Phase.USER_SPEAKING or not self.hold.ends_early:
            return []
        said, audio, text, probability = finished
        turn = self._turn
        if turn is not None and not self._echo.is_user(
            text, said, turn.ledger, turn.record.barge_in is not None
        ):
            return []  # a scrap or echo over the reply: the long silence decides, or it resumes in the pause
        self._vad.end_utterance()
        self.hold.ended_early(said.end, probability)
        early = self._early = EarlyInput(said.end, audio, self._over_reply())
        actions = self._dispatch(VoiceEnded(said.end, audio))
        self._early = None
        if self._turn is None or self._turn.early is not early:  # no turn waits on it: it is final
            self._tell_early(early)
        return actions + self._release_hold()  # no hold (high), or it passed already: play when ready

    def _tell(self, event: stream.StreamEvent) -> None:
        """Emit ``event``, or keep it with the input being taken early until its turn is certain."""
        if self._early is not None:
            self._early.untold.append(event)
        else:
            self._emit(event)

    def _tell_early(self, early: EarlyInput | None) -> None:
        """The early input's turn is certain (or failed, or was cut): the stream hears what it held back."""
        if early is None:
            return
        for event in early.untold:
            self._emit(event)
        early.untold.clear()
        early.told = True

    def _release_hold(self) -> list[EngineAction]:
        """A reply held after an early end plays once the user stayed silent long enough."""
        turn = self._turn
        if turn is None or turn.early is None or self.phase is Phase.USER_SPEAKING:
            return []
        silent = self._clock - max(self._vad.voiced_until, turn.early.voiced_end)
        hold = self.hold.samples
        # Voiced frames in the hold that never become speech (noise) delay the reply only so long: a user
        # who went on within the hold is declared speaking by then, and the reply never plays into them.
        noise_only = self._clock - turn.early.voiced_end >= hold + self._vad.start_window
        if silent < hold and not noise_only:
            return []
        self._tell_early(turn.early)
        turn.early = None
        turn.paused = False
        self._settle_phase()
        return [ResumePlayback(turn.number), *self._finish_if_done(turn)]

    def _on_speech_ended(self, event: VoiceEnded) -> list[EngineAction]:
        audio, over_reply = self._whole(event.utterance), self._over_reply()
        self._continuing = None
        self._paused_at = None
        record, actions = self.utterances.ended(event.sample, audio, over_reply=over_reply)
        self._tell(stream.SpeechStopped(self._now(event.sample)))
        self.speech.append(record)
        return actions

    def _on_transcript(self, event: TranscriptReady) -> list[EngineAction]:
        record = self.utterances.claim(event)
        if record is None:
            return self._end_turn_at_pause()  # an early transcript: with a judgement, the turn may be over
        record.transcript = event.text
        turn = self._turn
        reply = None if turn is None else turn.ledger
        barged_in = turn is not None and turn.record.barge_in is not None
        if not self._echo.is_user(event.text, record, reply, barged_in):
            return self._no_words()
        self._input_end = record.end
        self.hold.went_on(record.start)  # words this soon after a turn ended at a pause: it was a pause
        return self._take_input(event.text, self._fresh_id("speech"))

    def _on_transcript_failed(self, event: TranscriptFailed) -> list[EngineAction]:
        record = self.utterances.claim(event)
        if record is None:
            return []
        record.transcript = ""
        self.conversation.note_failure("asr", event.message)
        self._emit(Failure("asr", event.message, t=self._now()))
        quiet = self._turn is None
        actions = self._no_words()
        notice = ASR_SERVER_NOTICE if event.server_down else SPEECH_FAILURE_NOTICE
        return [*actions, SpeakNotice(notice)] if quiet else actions

    def _no_words(self) -> list[EngineAction]:
        """No words from the user: the reply goes on, or an open question is asked again."""
        if self._turn is not None:
            return self._resume(self._turn)
        if self.conversation.pending_input:  # a noise cancelled the question: ask it again
            request = self.conversation.start()
            if request is not None:
                return self._start_turn(request)
        self._settle_phase()
        return []

    def _on_text_input(self, event: TextInput) -> list[EngineAction]:
        """Typed input follows the rules of speech; a repeated id starts and cancels nothing."""
        input_id = event.input_id or self._fresh_id("text")
        if self.conversation.has_seen(input_id) or input_id in self.held:
            self.conversation.note_duplicate(input_id)
            self._emit(stream.InputDuplicate(input_id, self._now()))
            return []
        if not event.text.strip():
            return []
        return self._take_input(event.text, input_id)

    def _fresh_id(self, kind: str) -> str:
        """An id for input that came without one, unique over the session's whole log (resumes included)."""
        return f"{kind}-{self.conversation.inputs + len(self.held) + 1}"

    def _take_input(self, text: str, input_id: str) -> list[EngineAction]:
        """Real input from the user: it cuts the turn in flight and starts the next one."""
        turn = self._turn
        if turn is not None and turn.tools.waiting:  # a running tool's real result is awaited first
            turn.tools.note_cut(self._clock)
            self.held.hold(text, input_id)
            self._tell(InputTranscript(input_id, text.strip(), None, self._now()))
            self._settle_phase()
            return []
        actions: list[EngineAction] = self._interrupt(turn) if turn is not None else []
        if self._early is not None:
            self._early.pending_before = self.conversation.pending_input
        self._tell(InputTranscript(input_id, text.strip(), self.conversation.pending_input, self._now()))
        return actions + self._submit(text, input_id)

    def _on_mute(self, event: MuteMicrophone) -> list[EngineAction]:
        self._muted = event.muted
        return []

    def _on_cancel_reply(self, event: CancelReply) -> list[EngineAction]:
        """A stop button: a barge-in without words (a running tool's real result is still awaited)."""
        turn = self._turn
        if turn is None:
            return []
        if turn.tools.waiting:
            turn.tools.note_cut(self._clock)
            return []
        actions = self._interrupt(turn)
        self._settle_phase()
        return actions

    def _on_end_conversation(self, event: EndConversation | CloseSession) -> list[EngineAction]:
        """Cut the turn in flight for good and forget transcriptions still to come; input held while
        tools ran stays in this conversation, unanswered. A closing session ends the same way: nothing
        after it can wait for a running tool or a transcript."""
        actions = self.utterances.drop_all()
        turn = self._turn
        if turn is not None and turn.tools.started:  # heard whole: it ends as when the user moved on
            for result in turn.tools.abandon():
                self.conversation.add_tool_result(result)
            actions += self._end_whole(turn)
        elif turn is not None:
            actions += self._interrupt(turn)
        for text, input_id in self.held.take():
            self.conversation.receive(text, input_id)
        self._echo.forget()
        self._settle_phase()
        return actions

    def start_conversation(self, conversation: Conversation) -> None:
        """After EndConversation: what comes next belongs to ``conversation`` (logged by the caller)."""
        if self._turn is not None:
            raise ProtocolError(f"a new conversation during turn {self._turn.number}")
        self.conversation = conversation
        self.hold.reset()  # perhaps another person

    # -- turns ------------------------------------------------------------------------------------

    def _submit(self, text: str, input_id: str) -> list[EngineAction]:
        request = self.conversation.submit(text, input_id)
        if request is None:
            self._settle_phase()
            return []
        return self._start_turn(request)

    def _start_turn(self, request: Request) -> list[EngineAction]:
        turn = _Turn(request, TurnRecord(request.turn), self.conversation.reply, input_end=self._input_end)
        self._input_end = None
        turn.early = self._early
        self.turns.append(turn.record)
        self._turn = turn
        self._tell(ResponseCreated(turn.number, self._now()))
        actions: list[EngineAction] = [SendRequest(request)]
        if self.phase is Phase.USER_SPEAKING or turn.early is not None:  # hold the reply until we know
            turn.paused = True
            actions.append(PausePlayback(turn.number))
        else:
            self._settle_phase()
        return actions

    def _resume(self, turn: _Turn) -> list[EngineAction]:
        """The overlap was not the user talking: carry on with the reply."""
        if turn.record.barge_in is not None:
            turn.record.false_barge_ins += 1
            turn.record.barge_in = None
        if self.phase is Phase.USER_SPEAKING:
            return []  # more speech is under way; its transcript decides
        if turn.early is not None:  # nothing was heard yet: the hold still decides when it plays
            self._settle_phase()
            return []
        if turn.paused:
            self._emit(ResponseResumed(turn.number, self._now()))
        turn.paused = False
        self._settle_phase()
        return [ResumePlayback(turn.number), *self._finish_if_done(turn)]

    def _interrupt(self, turn: _Turn, discarded: bool = False) -> list[EngineAction]:
        """The user cut in: stop for good and keep exactly what they heard (``discarded``: a request
        sent at a pause the user went on from; its input is not final, so the stream never hears it)."""
        if not discarded:
            self._tell_early(turn.early)
        unknown = turn.early is not None and not turn.early.told  # the stream never heard of the turn
        heard = turn.ledger.heard()
        turn.record.interrupted = True
        turn.record.spoken = heard
        turn.record.reply = turn.ledger.text.strip()
        cut = turn.record.audio_end if turn.record.audio_start is not None else None
        unheard = turn.ledger.text.strip()[len(heard.strip()) :].strip()
        audio_end_ms = None if cut is None else round(cut * 1000 / self.rate, 1)
        if not unknown:
            self._emit(ResponseInterrupted(turn.number, heard.strip(), unheard, audio_end_ms, self._now()))
        self.conversation.cut_in(heard, None if cut is None else cut / self.rate)
        self._turn = None
        turn.record.discarded = discarded
        return [CancelTurn(turn.number, discarded), StopPlayback(turn.number)]

    def _settle_phase(self) -> None:
        """The phase that follows from the state: while the user speaks, it stays."""
        turn = self._turn
        if self.phase is Phase.USER_SPEAKING:
            return
        if turn is None:
            self._enter(Phase.THINKING if self.utterances.transcribing else Phase.LISTENING)
        elif turn.ledger.playing and not turn.paused:
            self._enter(Phase.SPEAKING)
        else:
            self._enter(Phase.THINKING)

    # -- LLM output -------------------------------------------------------------------------------

    def _on_llm_text(self, event: LlmText) -> list[EngineAction]:
        turn = self._require_turn()
        self.conversation.add_text(event.text)
        return self._ask_synthesis(turn, turn.chunker.feed(event.text))

    def _on_llm_tool_call(self, event: LlmToolCall) -> list[EngineAction]:
        turn = self._require_turn()
        self.conversation.add_tool_call(event.call)
        turn.record.tool_calls.append(event.call.name)
        return []

    def _on_llm_done(self, event: LlmDone) -> list[EngineAction]:
        turn = self._require_turn()
        turn.llm_done = True
        turn.ledger.close_text()
        turn.record.reply = turn.ledger.text.strip()
        return self._ask_synthesis(turn, turn.chunker.flush()) + self._finish_if_done(turn)

    def _on_synthesis_failed(self, event: SynthesisFailed) -> list[EngineAction]:
        """A reply that cannot be spoken fails its turn (a failure, not an interruption)."""
        turn = self._require_turn()
        if event.chunk < turn.first_chunk:
            return []
        self.conversation.note_failure("tts", event.message)
        self._emit(Failure("tts", event.message, t=self._now()))
        return [CancelTurn(turn.number), *self._fail(turn, "synthesis", None, VOICE_FAILURE_NOTICE)]

    def _on_part_failed(self, event: FailedOutsideTurn) -> list[EngineAction]:
        self.conversation.note_failure(event.part, event.message)
        self._emit(Failure(event.part, event.message, t=self._now()))
        return []

    def _fail(self, turn: _Turn, reason: str, dispatch: str | None, notice: str) -> list[EngineAction]:
        """End the turn as failed: its words stay out of the history and the user's input stays pending."""
        self._tell_early(turn.early)
        heard = turn.ledger.heard()
        turn.record.error = reason
        turn.record.reply = turn.ledger.text.strip()
        turn.record.spoken = heard
        self.conversation.fail(reason, heard, dispatch)
        self._turn = None
        self._settle_phase()
        return [StopPlayback(turn.number), SpeakNotice(notice)]

    def _on_llm_failed(self, event: LlmFailed) -> list[EngineAction]:
        turn = self._require_turn()
        self._tell_early(turn.early)  # the failure is told, so the turn it belongs to is too
        heard = turn.ledger.heard()
        error = event.error
        self._emit(Failure(error.code.value, str(error), error.dispatch.value, error.retriable, self._now()))
        if event.error.code is ErrorCode.TOO_LARGE and not turn.trimmed and not heard:
            turn.trimmed = True  # the context overflowed: trim the history and try once more
            return self._retry(turn, self.conversation.trim_after_refusal(), 0.0)
        delay = self._retry_policy.delay_before_retry(event.error, turn.attempt, bool(heard))
        if delay is not None:
            return self._retry(turn, turn.request, delay)
        return self._fail(turn, event.error.code.value, event.error.dispatch.value, FAILURE_NOTICE)

    def _retry(self, turn: _Turn, request: Request, delay_s: float) -> list[EngineAction]:
        """Send the turn's request again; what the failed attempt streamed and queued is forgotten."""
        self.conversation.discard_reply()
        turn.request = request
        turn.attempt += 1
        turn.first_chunk = turn.chunks_done = turn.chunks_asked
        turn.ledger, turn.chunker = self.conversation.reply, SpeechChunker()
        return [StopPlayback(turn.number), SendRequest(request, delay_s)]

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
        audio = event.synthesis.audio
        words = tuple(SampleSpan(word.start, word.end) for word in event.synthesis.words)
        at = turn.ledger.queue_audio(audio.frames, list(words))
        self._settle_phase()
        return [Play(turn.number, audio, at, words)]

    def _on_audio_played(self, event: AudioPlayed) -> list[EngineAction]:
        turn = self._require_turn()
        if event.played > 0 and turn.record.audio_start is None:
            turn.record.audio_start = event.clock - event.played
        if event.played > turn.ledger.played:
            turn.record.audio_end = event.clock
            turn.record.spoken = turn.ledger.heard(event.played)
            words = turn.ledger.heard_word_count(event.played)
            if words > turn.heard_words:
                turn.heard_words = words
                text = turn.record.spoken.strip()
                self._emit(ResponseHeard(turn.number, text, words, self._now(event.clock)))
        self._log_heard(turn, event.clock)
        turn.ledger.note_played(event.played)
        return self._finish_if_done(turn)

    def _log_heard(self, turn: _Turn, clock: int) -> None:
        """Words heard since the last progress line reach the log, at most every HEARD_LOGGED_EVERY_MS."""
        every = HEARD_LOGGED_EVERY_MS * self.rate // 1000
        due = turn.logged_at is None or clock - turn.logged_at >= every
        if turn.heard_words > turn.logged_words and due:
            turn.logged_words, turn.logged_at = turn.heard_words, clock
            self.conversation.note_heard(turn.record.spoken, self._now(clock))

    def _finish_if_done(self, turn: _Turn) -> list[EngineAction]:
        """Once every word has played: run the proposed tools, then complete and maybe follow up."""
        if turn.paused or not turn.all_audio_played():
            self._settle_phase()
            return []
        calls = self.conversation.tool_calls
        if calls and not turn.tools.started:
            turn.tools.start(calls)
            self._settle_phase()
            for call in calls:
                self._emit(ToolCalled(turn.number, call.id, call.name, call.arguments, self._now()))
            return [RunTool(turn.number, call) for call in calls]
        if turn.tools.waiting:
            return []
        self.conversation.complete()
        turn.record.spoken = turn.ledger.text.strip()
        self._emit_done(turn)
        if turn.record.audio_end is not None:
            self._echo.reply_ended(turn.ledger, turn.record.audio_end)
        self._turn = None
        if self.conversation.awaits_follow_up:
            return self._start_turn(self.conversation.follow_up())
        self._settle_phase()
        return []

    def _emit_done(self, turn: _Turn) -> None:
        """The reply played in full: say so, with what was measured about the turn."""
        metrics: dict[str, float] = {}
        start = turn.record.audio_start
        if turn.input_end is not None and start is not None:
            metrics["voice_to_voice_ms"] = round((start - turn.input_end) * 1000 / self.rate, 1)
        if turn.record.false_barge_ins:
            metrics["false_barge_ins"] = turn.record.false_barge_ins
        self._emit(ResponseDone(turn.number, turn.record.spoken, metrics, self._now()))

    def _on_tool_done(self, event: ToolDone) -> list[EngineAction]:
        turn = self._require_turn()
        self.conversation.add_tool_result(event.result)
        result = event.result
        self._emit(ToolFinished(turn.number, result.id, result.output, result.failed, self._now()))
        turn.tools.finished(event.result.id)
        if turn.tools.cut_at is not None and not turn.tools.waiting:
            return self._answer_held(turn)
        return self._finish_if_done(turn)

    def _abandon_overdue_tools(self) -> list[EngineAction]:
        """The user moved on and a tool still runs past the limit: it gets a failed result that says so."""
        turn = self._turn
        if turn is None or not turn.tools.overdue(self._clock, self.rate):
            return []
        for result in turn.tools.abandon():
            self.conversation.add_tool_result(result)
        return self._answer_held(turn)

    def _answer_held(self, turn: _Turn) -> list[EngineAction]:
        """The tools the user talked over are done: the turn ends whole, then the user is answered."""
        actions = self._end_whole(turn)
        for text, input_id in self.held.take():
            self.conversation.receive(text, input_id)
        request = self.conversation.start()
        if request is None:
            self._settle_phase()
            return actions
        return actions + self._start_turn(request)

    def _end_whole(self, turn: _Turn) -> list[EngineAction]:
        """A reply heard in full ends while the user moves on (its tools done or abandoned)."""
        self.conversation.cut_in(turn.ledger.heard(), reply_finished=True)
        turn.record.spoken = turn.ledger.text.strip()
        self._emit_done(turn)
        self._turn = None
        return [CancelTurn(turn.number), StopPlayback(turn.number)]


_E = Engine
Transition: TypeAlias = tuple[Handler, Phase | None]  # the handler, and the phase entered after it
_TURN_OUTPUT: dict[type, Handler] = {
    LlmText: _E._on_llm_text,
    LlmToolCall: _E._on_llm_tool_call,
    LlmDone: _E._on_llm_done,
    LlmFailed: _E._on_llm_failed,
    SynthesisReady: _E._on_synthesis,
    SynthesisFailed: _E._on_synthesis_failed,
    AudioPlayed: _E._on_audio_played,
}
# What every phase accepts: user input, transcripts and failures outside any turn.
_ANY_PHASE: dict[type, Handler] = {
    TranscriptReady: _E._on_transcript,
    TranscriptFailed: _E._on_transcript_failed,
    TurnEndJudged: _E._on_turn_end_judged,
    TextInput: _E._on_text_input,
    CancelReply: _E._on_cancel_reply,
    MuteMicrophone: _E._on_mute,
    EndConversation: _E._on_end_conversation,
    CloseSession: _E._on_end_conversation,
    FailedOutsideTurn: _E._on_part_failed,
    MicAudio: _E._on_mic,
}
_IN_A_TURN = (Phase.USER_SPEAKING, Phase.THINKING, Phase.SPEAKING)

# The transition table: (phase, event) → (handler, next phase). FROM_STATE: the handler settles the
# phase from the turn's state (listening, thinking or speaking; it stays while the user speaks).
# Anything not in the table is a driver bug and raises, naming both.
_TRANSITIONS: dict[tuple[Phase, type], Transition] = {
    **{(phase, kind): (handler, FROM_STATE) for phase in Phase for kind, handler in _ANY_PHASE.items()},
    **{
        (phase, kind): (handler, FROM_STATE) for phase in _IN_A_TURN for kind, handler in _TURN_OUTPUT.items()
    },
    (Phase.USER_SPEAKING, ToolDone): (_E._on_tool_done, FROM_STATE),
    (Phase.THINKING, ToolDone): (_E._on_tool_done, FROM_STATE),
    (Phase.LISTENING, VoiceStarted): (_E._on_speech_started, Phase.USER_SPEAKING),
    (Phase.THINKING, VoiceStarted): (_E._on_speech_started, Phase.USER_SPEAKING),
    (Phase.SPEAKING, VoiceStarted): (_E._on_speech_started, Phase.USER_SPEAKING),
    (Phase.USER_SPEAKING, VoicePaused): (_E._on_speech_paused, Phase.USER_SPEAKING),
    (Phase.USER_SPEAKING, VoiceResumed): (_E._on_speech_resumed, Phase.USER_SPEAKING),
    (Phase.USER_SPEAKING, VoiceEnded): (_E._on_speech_ended, Phase.THINKING),
}
