"""The turn state machine, driven event by event with a scripted VAD: no models, no clock, no I/O."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.room import BLOCK, REPLY, Room, ask, reply_with_a_tool_call
from voice import client_events as stream
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.vad import VoiceEnded, VoicePaused, VoiceStarted
from voice.conversation.items import NOT_RUN_INTERRUPTED, AssistantText, ToolCall, ToolResult, UserText
from voice.conversation.log_records import SpeechIgnored
from voice.engine.actions import (
    CancelTurn,
    DropTranscription,
    JudgeTurnEnd,
    PausePlayback,
    ResumePlayback,
    RunTool,
    SendRequest,
    SpeakNotice,
    StopPlayback,
    Transcribe,
)
from voice.engine.engine import Phase
from voice.engine.inputs import (
    LlmDone,
    LlmFailed,
    LlmToolCall,
    ToolDone,
    TranscriptReady,
)
from voice.errors import ProtocolError
from voice.llm.errors import Dispatch, ErrorCode, LLMError
from voice.testing.stand_ins import QUESTION, WORD


def test_a_plain_turn_goes_listening_thinking_speaking_listening() -> None:
    room = Room()
    assert room.engine.phase is Phase.LISTENING
    request = ask(room).request
    assert request.items == (UserText(QUESTION),)
    assert room.engine.phase is Phase.THINKING

    room.synthesize(room.stream(1, REPLY))
    assert room.engine.phase is Phase.SPEAKING
    room.play(1, len(REPLY) * WORD)

    assert room.engine.phase is Phase.LISTENING
    assert room.engine.conversation.history[-1] == AssistantText(" ".join(w.strip() for w in REPLY))
    assert room.recorded().turns[1].spoken == "Tomorrow starts dry, then rain moves in from the west."


def test_speech_over_the_reply_pauses_at_once_then_cancels_keeping_what_was_heard() -> None:
    room = Room()
    ask(room)
    room.synthesize(room.stream(1, REPLY))
    room.play(1, 3 * WORD + WORD // 2)

    onset = room.tick(VoiceStarted(room.clock))
    assert onset == [PausePlayback(1)]
    assert room.vad.assistant_speaking is True  # the onset was judged with barge-in settings
    room.play(1, 0)
    room.clock += ENGINE_RATE * 3 // 2  # a second and a half of speech
    room.tick(VoiceEnded(room.clock, AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, room.clock)))
    actions = room.engine.handle(TranscriptReady(2, "Sorry, I meant on Sunday."))

    assert actions[:2] == [CancelTurn(1), StopPlayback(1)]
    assert isinstance(actions[2], SendRequest)
    assert actions[2].request.items == (
        UserText(QUESTION),
        AssistantText("Tomorrow starts dry,", interrupted=True),
        UserText("Sorry, I meant on Sunday."),
    )
    record = room.recorded().turns[1]
    assert record.interrupted
    assert record.spoken == "Tomorrow starts dry,"
    assert record.barge_in_s is not None


def test_a_cough_over_the_reply_resumes_it() -> None:
    room = Room()
    ask(room)
    room.synthesize(room.stream(1, REPLY))
    room.play(1, WORD)
    room.tick(VoiceStarted(room.clock))
    room.tick(VoiceEnded(room.clock, AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, room.clock)))

    room.engine.take_events()
    actions = room.engine.handle(TranscriptReady(2, "[coughing]"))

    assert actions == [ResumePlayback(1)]
    assert room.engine.phase is Phase.SPEAKING
    (told,) = [e for e in room.engine.take_events() if isinstance(e, stream.InputIgnored)]
    assert (told.text, told.why, told.turn) == ("[coughing]", "no words", 1)  # nothing said disappears unsaid
    assert SpeechIgnored("[coughing]", "no words", told.t) in room.engine.conversation.take_events()
    room.play(1, len(REPLY) * WORD)
    record = room.recorded().turns[1]
    assert not record.interrupted
    assert record.false_barge_ins == 1
    assert room.engine.phase is Phase.LISTENING


def test_the_assistants_own_echo_does_not_interrupt_it() -> None:
    room = Room()
    ask(room)
    room.synthesize(room.stream(1, REPLY))
    room.play(1, 4 * WORD)
    room.tick(VoiceStarted(room.clock))
    room.tick(VoiceEnded(room.clock, AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, room.clock)))

    actions = room.engine.handle(TranscriptReady(2, "then rain moves"))

    assert actions == [ResumePlayback(1)]
    assert [(e.text, e.why) for e in room.engine.take_events() if isinstance(e, stream.InputIgnored)] == [
        ("then rain moves", "echo")
    ]


def test_speaking_while_the_model_thinks_merges_the_inputs() -> None:
    room = Room()
    ask(room)
    room.stream(1, [], done=False)  # no delta yet
    room.tick(VoiceStarted(room.clock))
    room.tick(VoiceEnded(room.clock, AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, room.clock)))

    actions = room.engine.handle(TranscriptReady(2, "Sorry, I meant on Sunday."))

    assert actions[0] == CancelTurn(1)
    request = next(a for a in actions if isinstance(a, SendRequest)).request
    assert request.items == (UserText("What will the weather be like tomorrow? Sorry, I meant on Sunday."),)
    record = room.recorded().turns[1]
    assert record.interrupted
    assert record.spoken == ""  # none of it was heard


def test_output_of_a_cancelled_turn_is_dropped() -> None:
    room = Room()
    ask(room)
    room.tick(VoiceStarted(room.clock))
    room.tick(VoiceEnded(room.clock, AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, room.clock)))
    room.engine.handle(TranscriptReady(2, "Actually, in Paris."))

    assert room.stream(1, ["Late", " words."]) == []
    assert room.engine.active_turn == 2


def test_tools_run_after_the_reply_played_then_the_model_sees_their_results() -> None:
    room = Room()
    ask(room)
    call = ToolCall("c1", "forecast", {"day": "sunday"})
    actions = room.stream(1, ["Let", " me", " check."], done=False)
    actions += room.engine.handle(LlmToolCall(1, call))
    actions += room.engine.handle(LlmDone(1))
    room.synthesize(actions)

    assert room.play(1, WORD) == []  # tools wait until the words are heard
    assert room.play(1, 2 * WORD) == [RunTool(1, call)]
    follow_up = room.engine.handle(ToolDone(1, ToolResult("c1", "Dry, fourteen degrees.")))

    assert isinstance(follow_up[0], SendRequest)
    assert follow_up[0].request.turn == 2
    assert follow_up[0].request.items[-2:] == (call, ToolResult("c1", "Dry, fourteen degrees."))


def test_interrupting_a_reply_with_a_tool_call_fails_the_call() -> None:
    room = Room()
    call, _ = reply_with_a_tool_call(room, 2)
    room.tick(VoiceStarted(room.clock))
    room.clock += ENGINE_RATE * 3 // 2  # a second and a half of speech
    room.tick(VoiceEnded(room.clock, AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, room.clock)))

    actions = room.engine.handle(TranscriptReady(2, "No, the weekend."))

    request = next(a for a in actions if isinstance(a, SendRequest)).request
    assert request.items[1:] == (
        AssistantText("Let me", interrupted=True),
        call,
        ToolResult("c1", NOT_RUN_INTERRUPTED, failed=True),
        UserText("No, the weekend."),
    )


def test_a_retriable_failure_before_anything_was_heard_is_retried() -> None:
    room = Room()
    ask(room)
    error = LLMError(ErrorCode.UNAVAILABLE, Dispatch.UNKNOWN, "HTTP 503", retriable=True)

    actions = room.engine.handle(LlmFailed(1, error))

    assert actions[0] == StopPlayback(1)
    assert isinstance(actions[1], SendRequest)
    assert actions[1].request.turn == 1
    assert actions[1].delay_s > 0


def test_a_failure_after_words_were_heard_is_told_not_retried() -> None:
    room = Room()
    ask(room)
    room.synthesize(room.stream(1, REPLY[:4], done=False))
    room.play(1, 2 * WORD)
    error = LLMError(ErrorCode.TRANSPORT, Dispatch.ACCEPTED, "connection reset", retriable=True)

    actions = room.engine.handle(LlmFailed(1, error))

    assert isinstance(actions[-1], SpeakNotice)
    assert room.engine.conversation.history == ()  # a failure is not an interruption
    assert room.engine.conversation.pending_input == QUESTION
    assert room.recorded().turns[1].error == "transport"
    assert room.engine.phase is Phase.LISTENING


def test_an_event_the_phase_does_not_expect_names_both() -> None:
    room = Room()

    with pytest.raises(ProtocolError, match="VoiceEnded is not expected while listening"):
        room.tick(VoiceEnded(room.clock, AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, 0)))


def test_a_transcript_ready_before_endpointing_answers_as_soon_as_it_confirms() -> None:
    room = Room()
    utterance = AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, 0)
    room.tick(VoiceStarted(0))
    assert room.tick(VoicePaused(BLOCK, utterance)) == [Transcribe(1, utterance), JudgeTurnEnd(1, utterance)]
    assert room.engine.handle(TranscriptReady(1, QUESTION)) == []  # the user may still go on

    actions = room.tick(VoiceEnded(BLOCK, utterance))

    assert [type(a) for a in actions] == [SendRequest]
    assert room.recorded().utterances()[0].transcript == QUESTION


def test_speech_after_an_early_transcript_makes_it_stale() -> None:
    room = Room()
    first = AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, 0)
    whole = AudioBlock(np.zeros(3 * BLOCK, np.float32), ENGINE_RATE, 0)
    room.tick(VoiceStarted(0))
    room.tick(VoicePaused(BLOCK, first))
    assert room.engine.handle(TranscriptReady(1, "I was wondering")) == []

    assert room.tick(VoiceEnded(3 * BLOCK, whole)) == [DropTranscription(1), Transcribe(2, whole)]
    actions = room.engine.handle(TranscriptReady(2, "I was wondering what time it is."))

    assert isinstance(actions[0], SendRequest)
    assert actions[0].request.items == (UserText("I was wondering what time it is."),)
