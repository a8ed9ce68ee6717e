"""The reply in flight, on its own: it is voiced and played to its end, a failed request is tried again
without the failed attempt's late voice, a stop waits for running tools, and where a cut reply's audio
stopped is told after all else. The engine is stood in for by a stage that records the phases asked."""

from __future__ import annotations

from tests.support.room import voiced_evenly
from voice.client_events import OutputAudioStopped, ResponseDone, StreamEvent
from voice.conversation.continuation import Conversation
from voice.conversation.items import ToolCall, ToolResult
from voice.engine import notices
from voice.engine.actions import (
    CancelTurn,
    EngineAction,
    PausePlayback,
    Play,
    RunTool,
    SendRequest,
    SpeakNotice,
    StopPlayback,
    Synthesize,
)
from voice.engine.early_end import EarlyEnds
from voice.engine.inputs import (
    AudioPlayed,
    LlmDone,
    LlmFailed,
    LlmText,
    LlmToolCall,
    ToolDone,
)
from voice.engine.overlap import OverlapPhrases
from voice.engine.phases import Phase, ReplyOutcome, without_reply
from voice.engine.replies import Replies
from voice.engine.tool_runs import HeldInput
from voice.engine.words_judge import WordsJudge
from voice.llm.errors import Dispatch, ErrorCode, LLMError
from voice.llm.retry import RetryPolicy

RATE = 16_000
WORD = 4_000


class Stage:
    """The engine as the reply sees it: a conversation, the phase it was asked to enter, and a clock."""

    def __init__(self) -> None:
        self.conversation = Conversation()
        self.phase = Phase.LISTENING
        self.entered: list[Phase] = []

    def enter(self, phase: Phase) -> None:
        if phase is not self.phase:
            self.entered.append(phase)
        self.phase = phase

    def enter_without_reply(self) -> None:
        self.enter(without_reply(self.phase, transcribing=False))

    def now(self, sample: int | None = None) -> float:
        return 0.0 if sample is None else sample / RATE


def replies_of(stage: Stage) -> tuple[Replies, list[StreamEvent], HeldInput]:
    told: list[StreamEvent] = []
    replies = Replies(
        stage,
        emit=told.append,
        early=EarlyEnds(told.append),
        judge=WordsJudge(OverlapPhrases(), RATE),
        retry=RetryPolicy(),
        rate=RATE,
    )
    return replies, told, replies.held


def asked(stage: Stage, replies: Replies, text: str = "What's the weather?") -> list[EngineAction]:
    request = stage.conversation.submit(text, "text-1")
    return replies.next(request)


def voiced(replies: Replies, actions: list[EngineAction]) -> list[EngineAction]:
    """The voice of each piece asked for, handed back in order."""
    played: list[EngineAction] = []
    for action in actions:
        if isinstance(action, Synthesize):
            played += replies.on_synthesis(voiced_evenly(action, WORD))
    return played


def test_a_reply_is_voiced_played_to_its_end_and_completes() -> None:
    stage = Stage()
    replies, told, _ = replies_of(stage)

    (send,) = asked(stage, replies)
    assert isinstance(send, SendRequest)
    assert send.request.turn == 1
    pieces = replies.on_llm_text(LlmText(1, "Dry, then rain.")) + replies.on_llm_done(LlmDone(1))
    plays = voiced(replies, pieces)
    audio = sum(play.audio.frames for play in plays if isinstance(play, Play))
    finished = replies.on_audio_played(AudioPlayed(1, audio, audio))

    assert finished == []
    assert replies.in_flight is None
    assert stage.entered == [Phase.THINKING, Phase.SPEAKING, Phase.LISTENING]
    assert stage.conversation.last_said == "Dry, then rain."
    assert isinstance(told[-1], ResponseDone)


def test_a_failed_request_is_sent_again_and_the_failed_attempts_late_voice_is_dropped() -> None:
    stage = Stage()
    replies, _, _ = replies_of(stage)
    (send,) = asked(stage, replies)
    late = replies.on_llm_text(LlmText(1, "Tomorrow starts dry, then rain moves in."))
    reset = LLMError(ErrorCode.TRANSPORT, Dispatch.UNKNOWN, "connection reset", retriable=True)

    again = replies.on_llm_failed(LlmFailed(1, reset))

    assert again == [StopPlayback(1), SendRequest(replies.require().request, 0.25)]
    assert isinstance(send, SendRequest)
    assert again[1] == SendRequest(send.request, 0.25)  # the same request, after a short wait
    assert voiced(replies, late) == []  # the failed attempt's voice came back late: dropped
    assert replies.require().attempt == 2


def test_a_context_too_large_is_trimmed_once_then_the_reply_fails_with_a_notice() -> None:
    stage = Stage()
    replies, _, _ = replies_of(stage)
    asked(stage, replies)
    too_large = LLMError(ErrorCode.TOO_LARGE, Dispatch.REJECTED, "context_length_exceeded", retriable=False)

    first = replies.on_llm_failed(LlmFailed(1, too_large))
    second = replies.on_llm_failed(LlmFailed(1, too_large))

    assert first[0] == StopPlayback(1)
    assert isinstance(first[1], SendRequest)
    assert first[1].delay_s == 0.0  # at once
    assert second == [StopPlayback(1), SpeakNotice(notices.FAILURE_NOTICE)]
    assert replies.in_flight is None
    assert stage.conversation.pending_input == "What's the weather?"  # the user's words wait for an answer


def test_a_stop_while_tools_run_waits_for_them_then_answers_what_was_said_meanwhile() -> None:
    stage = Stage()
    replies, _, held = replies_of(stage)
    asked(stage, replies)
    call = ToolCall("a", "weather", {"city": "Paris"})
    replies.on_llm_tool_call(LlmToolCall(1, call))
    runs = replies.on_llm_done(LlmDone(1))
    assert runs == [RunTool(1, call)]

    assert replies.wait_for_tools("And in Rome?", "speech-2", 3 * RATE)
    assert replies.cancel(4 * RATE) == []  # the tool runs: its real result is awaited
    assert len(held) == 1
    after = replies.on_tool_done(ToolDone(1, ToolResult("a", "Sunny")))

    assert after[:2] == [CancelTurn(1), StopPlayback(1)]  # the reply ends whole, the user moved on
    assert isinstance(after[2], SendRequest)  # then what they said meanwhile is answered
    assert replies.require().number == 2
    assert stage.conversation.pending_input == "And in Rome?"


def test_speech_over_the_reply_pauses_it_once() -> None:
    stage = Stage()
    replies, _, _ = replies_of(stage)
    asked(stage, replies)

    assert replies.pause_under_speech(100) == [PausePlayback(1)]
    assert replies.pause_under_speech(200) == []


def test_where_a_cut_reply_stopped_is_told_after_all_else() -> None:
    stage = Stage()
    replies, told, _ = replies_of(stage)
    asked(stage, replies)
    plays = voiced(replies, replies.on_llm_text(LlmText(1, "Tomorrow starts dry, then rain.")))
    assert plays
    replies.on_audio_played(AudioPlayed(1, 2 * WORD, 2 * WORD))

    cut = replies.close(replies.require(), ReplyOutcome.INTERRUPTED)

    assert cut == [CancelTurn(1), StopPlayback(1)]
    assert not any(isinstance(event, OutputAudioStopped) for event in told)
    replies.tell_last()
    assert told[-1] == OutputAudioStopped(1, 2 * WORD / RATE)
