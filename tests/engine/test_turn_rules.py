"""The turn rules that bend most easily (docs/architecture.md §1): duplicates, running tools, and failures.

Driven like tests/engine/test_engine.py: a scripted VAD, fake synthesis, an instant playback device.
"""

from __future__ import annotations

import numpy as np

from tests.support.room import BLOCK, REPLY, Room, ask
from voice import client_events as stream
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.vad import VoiceEnded, VoiceStarted
from voice.conversation.continuation import Conversation
from voice.conversation.items import ABANDONED_RUNNING, AssistantText, ToolCall, ToolResult, UserText
from voice.conversation.log_records import InputReceived, InputRepeated, TurnFailed
from voice.engine.actions import CancelTurn, RunTool, SendRequest, SpeakNotice, StopPlayback
from voice.engine.engine import TOOL_WAIT_LIMIT_S, Engine, Phase
from voice.engine.inputs import (
    LlmDone,
    LlmFailed,
    LlmToolCall,
    SynthesisFailed,
    TextInput,
    ToolDone,
    TranscriptFailed,
)
from voice.llm.errors import Dispatch, ErrorCode, LLMError
from voice.testing.stand_ins import QUESTION, WORD

CALL = ToolCall("c1", "forecast", {"day": "sunday"})
FORECAST = ToolResult("c1", "Dry, fourteen degrees.")


def speaking_room() -> Room:
    """A room two words into the reply to the question."""
    room = Room()
    ask(room)
    room.synthesize(room.stream(1, REPLY))
    room.play(1, 2 * WORD)
    return room


def test_a_typed_duplicate_during_a_reply_neither_cancels_nor_starts_anything() -> None:
    room = Room()
    first = room.engine.handle(TextInput(QUESTION, "in-7"))
    assert isinstance(first[0], SendRequest)
    room.synthesize(room.stream(1, REPLY))
    room.play(1, 2 * WORD)

    assert room.engine.handle(TextInput(QUESTION, "in-7")) == []

    assert room.engine.active_turn == 1
    assert room.engine.phase is Phase.SPEAKING
    assert [e.id for e in room.engine.take_events() if isinstance(e, stream.InputDuplicate)] == ["in-7"]
    room.play(1, len(REPLY) * WORD)
    assert room.engine.conversation.history[-1] == AssistantText(" ".join(w.strip() for w in REPLY))
    assert InputRepeated("in-7") in room.engine.conversation.take_events()


def test_typed_input_cuts_in_like_speech_keeping_what_was_heard() -> None:
    room = speaking_room()

    actions = room.engine.handle(TextInput("Sorry, I meant on Sunday.", "in-8"))

    assert actions[:2] == [CancelTurn(1), StopPlayback(1)]
    assert isinstance(actions[2], SendRequest)
    assert actions[2].request.items == (
        UserText(QUESTION),
        AssistantText("Tomorrow starts", interrupted=True),
        UserText("Sorry, I meant on Sunday."),
    )


def test_every_spoken_input_gets_an_id_and_a_resumed_session_still_knows_typed_ones() -> None:
    room = Room()
    ask(room)
    room.engine.handle(TextInput("And on Sunday?", "in-9"))
    events = room.engine.conversation.take_events()

    ids = [event.input_id for event in events if isinstance(event, InputReceived)]
    assert ids == ["speech-1", "in-9"]
    resumed = Engine(room.vad, Conversation.from_events(events))
    assert resumed.handle(TextInput("And on Sunday?", "in-9")) == []
    assert [e.id for e in resumed.take_events() if isinstance(e, stream.InputDuplicate)] == ["in-9"]
    fresh = resumed.handle(TextInput("And on Monday?"))
    assert isinstance(fresh[0], SendRequest)


def running_tool_room() -> Room:
    """The reply 'Let me check.' played in full and its forecast call is running."""
    room = Room()
    ask(room)
    actions = room.stream(1, ["Let", " me", " check."], done=False)
    actions += room.engine.handle(LlmToolCall(1, CALL))
    room.synthesize(actions + room.engine.handle(LlmDone(1)))
    assert room.play(1, 3 * WORD) == [RunTool(1, CALL)]
    return room


def test_a_tool_already_running_keeps_its_real_result_when_the_user_cuts_in() -> None:
    room = running_tool_room()

    assert room.say("And what about Saturday?", 2) == []  # the running tool is awaited, not abandoned
    actions = room.engine.handle(ToolDone(1, FORECAST))

    assert actions[:2] == [CancelTurn(1), StopPlayback(1)]
    assert isinstance(actions[2], SendRequest)
    assert actions[2].request.items == (
        UserText(QUESTION),
        AssistantText("Let me check."),  # heard in full: carried whole, not marked interrupted
        CALL,
        FORECAST,
        UserText("And what about Saturday?"),
    )
    assert not room.recorded().turns[1].interrupted


def test_a_tool_that_runs_past_the_limit_is_reported_abandoned_never_not_run() -> None:
    room = running_tool_room()
    room.engine.handle(TextInput("Never mind, thanks.", "in-1"))

    actions = []
    for _ in range(round(TOOL_WAIT_LIMIT_S * ENGINE_RATE) // BLOCK + 1):
        actions += room.tick()

    request = next(a for a in actions if isinstance(a, SendRequest)).request
    assert request.items[2:] == (
        CALL,
        ToolResult("c1", ABANDONED_RUNNING, failed=True),
        UserText("Never mind, thanks."),
    )
    assert room.engine.handle(ToolDone(1, FORECAST)) == []  # the late result has nowhere to go


def test_a_failure_after_words_were_heard_keeps_them_out_and_the_question_pending() -> None:
    room = speaking_room()
    error = LLMError(ErrorCode.UNAVAILABLE, Dispatch.ACCEPTED, "stream reset", retriable=True)

    actions = room.engine.handle(LlmFailed(1, error))

    assert actions == [StopPlayback(1), SpeakNotice("Sorry, I could not reach the language model.")]
    failed = [e for e in room.engine.conversation.take_events() if isinstance(e, TurnFailed)]
    assert failed == [
        TurnFailed(1, "unavailable", "accepted", " ".join(w.strip() for w in REPLY), "Tomorrow starts")
    ]
    follow = room.say("In Paris.", 2)
    assert isinstance(follow[0], SendRequest)
    assert follow[0].request.items == (UserText(f"{QUESTION} In Paris."),)


def test_a_transcriber_that_fails_is_told_and_the_assistant_keeps_listening() -> None:
    room = Room()
    room.tick(VoiceStarted(room.clock))
    room.tick(VoiceEnded(room.clock, AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, room.clock)))

    actions = room.engine.handle(TranscriptFailed(1, "RuntimeError: model gone"))

    assert actions == [SpeakNotice("Sorry, I could not make out what you said.")]
    assert room.engine.phase is Phase.LISTENING
    assert isinstance(room.say(QUESTION, 2)[0], SendRequest)


def test_a_speech_server_that_does_not_answer_is_said_as_not_hearing_right_now() -> None:
    room = Room()
    room.tick(VoiceStarted(room.clock))
    room.tick(VoiceEnded(room.clock, AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, room.clock)))

    actions = room.engine.handle(TranscriptFailed(1, "ASR server transport: refused", server_down=True))

    assert actions == [SpeakNotice("Sorry, I can't hear you right now: my speech server is not answering.")]
    assert room.engine.phase is Phase.LISTENING
    assert isinstance(room.say(QUESTION, 2)[0], SendRequest)  # and it hears the next words once it can


def test_a_reply_that_cannot_be_synthesized_fails_its_turn() -> None:
    room = Room()
    ask(room)
    room.stream(1, REPLY)

    actions = room.engine.handle(SynthesisFailed(1, 0, "RuntimeError: onnx"))

    assert actions[:2] == [CancelTurn(1), StopPlayback(1)]
    assert isinstance(actions[-1], SpeakNotice)
    assert room.engine.active_turn is None
    assert room.engine.conversation.pending_input == QUESTION
    assert room.recorded().turns[1].error == "synthesis"


def test_a_context_overflow_trims_and_retries_once_then_later_turns_still_work() -> None:
    room = Room()
    for number in range(3):  # some history to trim
        request = room.engine.handle(TextInput(f"Question {number}?", f"q{number}"))[0]
        assert isinstance(request, SendRequest)
        turn = request.request.turn
        room.synthesize(room.stream(turn, ["Fine."]))
        room.play(turn, 10 * WORD)
    sent = room.engine.handle(TextInput("And now?", "q3"))[0]
    assert isinstance(sent, SendRequest)
    too_large = LLMError(ErrorCode.TOO_LARGE, Dispatch.REJECTED, "context_length_exceeded", retriable=False)

    retry = room.engine.handle(LlmFailed(sent.request.turn, too_large))

    assert isinstance(retry[-1], SendRequest)
    assert retry[-1].request.turn == sent.request.turn
    assert len(retry[-1].request.items) < len(sent.request.items)
    assert retry[-1].request.items[-1] == UserText("And now?")
    again = room.engine.handle(LlmFailed(sent.request.turn, too_large))
    assert isinstance(again[-1], SpeakNotice)  # trimmed once; a second refusal is told, not looped
    follow = room.engine.handle(TextInput("Hello?", "q4"))
    assert isinstance(follow[0], SendRequest)
