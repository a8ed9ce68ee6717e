"""The reply in flight, from its request to its end: the model's text, its voice, its playback and its tools.

The engine owns one ``Replies``. The reply's own news (the model's text, a failure, a voice ready, audio
played, a tool done, the hold passed) is its to take: the engine's transition table names its handlers.
It never changes the phase itself: it asks the engine (its ``Stage``) to enter one, and the table checks
the move. One ``close`` ends every reply, and keeps its bookkeeping: the conversation and the stream.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from voice import client_events as stream
from voice.conversation.continuation import Conversation, Request
from voice.conversation.ledger import PlaybackLedger
from voice.engine import notices
from voice.engine.actions import (
    CancelTurn,
    EngineAction,
    PausePlayback,
    ResumePlayback,
    SendRequest,
    SpeakNotice,
    StopPlayback,
)
from voice.engine.clock_events import HoldPassed, ToolsOverdue
from voice.engine.early_end import EarlyEnds
from voice.engine.inputs import (
    AudioPlayed,
    LlmDone,
    LlmFailed,
    LlmText,
    LlmToolCall,
    SynthesisFailed,
    SynthesisReady,
    ToolDone,
)
from voice.engine.llm_failures import after_failure
from voice.engine.phases import REPLY_WAITS, USER_TALKING, Phase, ReplyOutcome, with_reply
from voice.engine.reply import Reply
from voice.engine.reply_report import ReplyReport
from voice.engine.tool_runs import HeldInput
from voice.engine.user_input import told_input
from voice.engine.words_judge import WordsJudge
from voice.errors import ProtocolError
from voice.llm.retry import RetryPolicy


class Stage(Protocol):
    """What of the engine the reply in flight sees: the conversation, the phase, and the clock."""

    conversation: Conversation

    @property
    def phase(self) -> Phase: ...

    def enter(self, phase: Phase) -> None:
        """Move to ``phase``, if the table's entry being handled names it."""

    def enter_without_reply(self) -> None:
        """Move to the phase for no reply in flight."""

    def now(self, sample: int | None = None) -> float:
        """Seconds on the mic's clock, at ``sample`` or at the last block's end."""


class Replies:
    """The reply in flight (``in_flight``; None: none) and all that starts, plays, resumes and ends it."""

    def __init__(
        self,
        stage: Stage,
        *,
        emit: Callable[[stream.StreamEvent], None],
        early: EarlyEnds,
        judge: WordsJudge,
        retry: RetryPolicy,
        rate: int,
    ) -> None:
        self._stage = stage
        self._emit = emit
        self._early = early
        self._judge = judge
        self.held = HeldInput()  # the user's words while its tools ran, answered once they are done
        self._retry_policy = retry
        self._rate = rate
        self.in_flight: Reply | None = None
        self.input_end: int | None = None  # end of the utterance the next request answers
        self._told_last: list[stream.StreamEvent] = []  # where closed replies' audio stopped

    def require(self) -> Reply:
        if self.in_flight is None:
            raise ProtocolError(f"reply output while {self._stage.phase.value} with no reply in flight")
        return self.in_flight

    def overlapped(self) -> tuple[PlaybackLedger | None, bool]:
        """The reply in flight's ledger (None: none), and whether speech over its audio paused it."""
        reply = self.in_flight
        return (None, False) if reply is None else (reply.ledger, reply.report.barge_in is not None)

    def tools_overdue(self, sample: int) -> bool:
        """The user moved on from the reply's tools, which still ran past the limit at ``sample``."""
        reply = self.in_flight
        return reply is not None and reply.tools.overdue(sample, self._rate)

    def tell_last(self) -> None:
        """Tell where closed replies' audio stopped, after all else the event brought."""
        for told in self._told_last:
            self._emit(told)
        self._told_last.clear()

    def _enter_reply_phase(self, reply: Reply) -> None:
        self._stage.enter(with_reply(self._stage.phase, reply.audible))

    # -- start, resume and end --------------------------------------------------------------------

    def next(self, request: Request | None) -> list[EngineAction]:
        """Start the reply that answers ``request``; with none to send, no reply is in flight."""
        if request is None:
            self._stage.enter_without_reply()
            return []
        return self.start(request)

    def start(self, request: Request) -> list[EngineAction]:
        stage = self._stage
        report = ReplyReport(request.turn, self._rate, self.input_end)
        reply = self.in_flight = Reply(request, stage.conversation.reply, report, early=self._early.taking)
        self.input_end = None
        self._early.tell(stream.ResponseCreated(reply.number, stage.now()))
        actions: list[EngineAction] = [SendRequest(request)]
        talking = stage.phase in USER_TALKING
        if talking or reply.early is not None:  # hold the reply until we know
            reply.paused = True
            actions.append(PausePlayback(reply.number))
        stage.enter(Phase.PAUSED if talking else Phase.THINKING if reply.early is None else Phase.HOLDING)
        return actions

    def resume(self, reply: Reply, *, listener: bool = False) -> list[EngineAction]:
        """The overlap was not the user cutting in: carry on with the reply (after a ``listener``'s word,
        from the start of the word the pause cut)."""
        reply.report.not_cut(listener=listener)
        if self._stage.phase in REPLY_WAITS:
            return []  # more speech is under way, its transcript decides; or the hold decides when it plays
        replay_from = None
        if reply.paused:
            self._emit(stream.ResponseResumed(reply.number, self._stage.now()))
            start = reply.ledger.word_start_at()
            replay_from = start if listener and start < reply.ledger.played else None
        reply.paused = False
        self._enter_reply_phase(reply)
        return [ResumePlayback(reply.number, replay_from), *self._finish_if_done(reply)]

    def close(
        self, reply: Reply, outcome: ReplyOutcome, failure: tuple[str, str | None] = ("", None)
    ) -> list[EngineAction]:
        """The one place a reply ends: the conversation and the stream hear how.

        ``failure`` is a failed reply's reason and dispatch evidence. The phase is the caller's to move:
        the next reply may start at once.
        """
        if outcome is not ReplyOutcome.DISCARDED:
            self._early.told(reply.early)  # the reply's end is told, so its start is too
        ledger, number, now, conversation = (
            reply.ledger,
            reply.number,
            self._stage.now(),
            self._stage.conversation,
        )
        if ledger.heard_at is not None:
            self._told_last.append(stream.OutputAudioStopped(number, self._stage.now(ledger.heard_at)))
        self.in_flight = None
        match outcome:
            case ReplyOutcome.COMPLETED:
                conversation.complete()
                self._emit(reply.report.done(ledger, now))
                self._judge.reply_ended(ledger)
                return []
            case ReplyOutcome.MOVED_ON:
                conversation.cut_in(ledger.heard(), reply_finished=True)
                self._emit(reply.report.done(ledger, now))
                return [CancelTurn(number), StopPlayback(number)]
            case ReplyOutcome.FAILED:
                conversation.fail(failure[0], ledger.heard(), failure[1])
                return [StopPlayback(number)]
        if reply.early is None or reply.early.told:  # a discarded request's input is not final: never told
            self._emit(reply.report.interrupted(ledger, now))
        cut = ledger.heard_at
        conversation.cut_in(ledger.heard(), None if cut is None else cut / self._rate)
        return [CancelTurn(number, outcome is ReplyOutcome.DISCARDED), StopPlayback(number)]

    def pause_under_speech(self, sample: int) -> list[EngineAction]:
        """Speech began over the reply at ``sample``: it pauses at once, and if its audio played, the
        report notes where the speech came in."""
        reply = self.in_flight
        if reply is None or reply.paused:
            return []
        if reply.ledger.playing:
            reply.report.speech_over(sample)
        reply.paused = True
        return [PausePlayback(reply.number)]

    def cut(self) -> list[EngineAction]:
        """The user cut in: the reply in flight, if any, ends interrupted, keeping what they heard."""
        return [] if self.in_flight is None else self.close(self.in_flight, ReplyOutcome.INTERRUPTED)

    def cancel(self, sample: int) -> list[EngineAction]:
        """A stop pressed at ``sample`` cuts the reply, unless its tools run: their real results are
        awaited first, and it ends once they are in."""
        reply = self.in_flight
        if reply is None:
            return []
        if reply.tools.waiting:
            reply.tools.note_cut(sample)
            return []
        actions = self.cut()
        self._stage.enter_without_reply()
        return actions

    def on_hold_passed(self, event: HoldPassed) -> list[EngineAction]:
        """The early end is certain: the stream hears of it, and the held reply plays."""
        reply = self.require()
        self._early.told(reply.early)
        reply.early = None
        reply.paused = False
        self._stage.enter(Phase.SPEAKING if reply.audible else Phase.THINKING)
        return [ResumePlayback(reply.number), *self._finish_if_done(reply)]

    # -- the model's text, its voice and its playback ---------------------------------------------

    def on_llm_text(self, event: LlmText) -> list[EngineAction]:
        reply = self.require()
        self._stage.conversation.add_text(event.text)
        return reply.speak(reply.chunker.feed(event.text))

    def on_llm_tool_call(self, event: LlmToolCall) -> list[EngineAction]:
        self.require()
        self._stage.conversation.add_tool_call(event.call)
        return []

    def on_llm_done(self, event: LlmDone) -> list[EngineAction]:
        reply = self.require()
        reply.llm_done = True
        reply.ledger.close_text()
        return reply.speak(reply.chunker.flush()) + self._finish_if_done(reply)

    def on_llm_failed(self, event: LlmFailed) -> list[EngineAction]:
        """Try the request again (trimmed, after a too-large refusal) or fail the reply (llm_failures.py)."""
        reply, error = self.require(), event.error
        self._early.told(reply.early)  # the failure is told, so the reply it belongs to is too
        now = self._stage.now()
        self._emit(stream.Failure(error.code.value, str(error), error.dispatch.value, error.retriable, now))
        heard = bool(reply.ledger.heard())
        again = after_failure(
            error, attempt=reply.attempt, trimmed=reply.trimmed, heard=heard, policy=self._retry_policy
        )
        if again is None:
            return self._fail(reply, error.code.value, error.dispatch.value, notices.FAILURE_NOTICE)
        conversation = self._stage.conversation
        reply.trimmed = reply.trimmed or again.trim
        request = conversation.trim_after_refusal() if again.trim else reply.request
        conversation.discard_reply()  # what the failed attempt streamed and queued is forgotten
        reply.retry(request, conversation.reply)
        return [StopPlayback(reply.number), SendRequest(request, again.delay_s)]

    def on_synthesis(self, event: SynthesisReady) -> list[EngineAction]:
        reply = self.require()
        if reply.stale(event.chunk):
            return []
        play = reply.voiced(event)
        self._enter_reply_phase(reply)
        return [play]

    def on_synthesis_failed(self, event: SynthesisFailed) -> list[EngineAction]:
        """A reply that cannot be spoken fails (a failure, not an interruption)."""
        reply = self.require()
        if reply.stale(event.chunk):
            return []
        self._stage.conversation.note_failure("tts", event.message)
        self._emit(stream.Failure("tts", event.message, t=self._stage.now()))
        return [CancelTurn(reply.number), *self._fail(reply, "synthesis", None, notices.VOICE_FAILURE_NOTICE)]

    def _fail(self, reply: Reply, reason: str, dispatch: str | None, notice: str) -> list[EngineAction]:
        """End the reply as failed: its words stay out of the history and the user's input stays pending."""
        actions = self.close(reply, ReplyOutcome.FAILED, (reason, dispatch))
        self._stage.enter_without_reply()
        return [*actions, SpeakNotice(notice)]

    def on_audio_played(self, event: AudioPlayed) -> list[EngineAction]:
        reply = self.require()
        note_heard = self._stage.conversation.note_heard
        for told in reply.report.played(reply.ledger, event.played, event.clock, note_heard):
            self._emit(told)
        return self._finish_if_done(reply)

    def _finish_if_done(self, reply: Reply) -> list[EngineAction]:
        """Once every word has played: run the proposed tools, then complete and maybe follow up."""
        if reply.paused or not reply.all_audio_played():
            self._enter_reply_phase(reply)
            return []
        conversation = self._stage.conversation
        if conversation.tool_calls and not reply.tools.started:
            told, runs = reply.tools.start(reply.number, conversation.tool_calls, self._stage.now())
            self._stage.enter(Phase.THINKING)
            for event in told:
                self._emit(event)
            return runs
        if reply.tools.waiting:
            return []
        actions = self.close(reply, ReplyOutcome.COMPLETED)
        follow_up = conversation.follow_up() if conversation.awaits_follow_up else None
        return actions + self.next(follow_up)

    # -- its tools, and what the user says while they run ----------------------------------------

    def wait_for_tools(self, text: str, input_id: str, sample: int, *, stop: bool = False) -> bool:
        """While the reply's tools run, the user's words (said at ``sample``) wait for their real results
        (True), told now."""
        reply = self.in_flight
        if reply is None or not reply.tools.waiting:
            return False
        reply.tools.note_cut(sample)
        self.held.hold(text, input_id, stop=stop)
        for told in told_input(input_id, text, None, self._stage.now(), stop=stop):
            self._early.tell(told)
        self._enter_reply_phase(reply)
        return True

    def on_tool_done(self, event: ToolDone) -> list[EngineAction]:
        reply, result = self.require(), event.result
        self._stage.conversation.add_tool_result(result)
        self._emit(
            stream.ToolFinished(reply.number, result.id, result.output, result.failed, self._stage.now())
        )
        reply.tools.finished(result.id)
        if reply.tools.cut_at is not None and not reply.tools.waiting:
            return self._answer_held(reply)
        return self._finish_if_done(reply)

    def on_tools_overdue(self, event: ToolsOverdue) -> list[EngineAction]:
        """A tool the user moved on from still runs past the limit: it gets a failed result that says so."""
        reply = self.require()
        for result in reply.tools.abandon():
            self._stage.conversation.add_tool_result(result)
        return self._answer_held(reply)

    def _answer_held(self, reply: Reply) -> list[EngineAction]:
        """The tools the user talked over are done: the reply ends whole, then the user is answered, unless
        the last thing they said was a stop."""
        actions = self.close(reply, ReplyOutcome.MOVED_ON)
        if self.held.deliver(self._stage.conversation):
            self._stage.enter_without_reply()
            return actions
        return actions + self.next(self._stage.conversation.start())

    def end_for_good(self) -> list[EngineAction]:
        """The conversation ends: the reply in flight is cut for good. One whose tools started was heard
        whole: it ends as when the user moved on, the tools' results abandoned."""
        reply = self.in_flight
        if reply is None:
            return []
        if not reply.tools.started:
            return self.close(reply, ReplyOutcome.INTERRUPTED)
        for result in reply.tools.abandon():
            self._stage.conversation.add_tool_result(result)
        return self.close(reply, ReplyOutcome.MOVED_ON)
