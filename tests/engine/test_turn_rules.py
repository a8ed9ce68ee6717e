"""The turn rules that bend most easily (docs/architecture.md §1): duplicates, running tools, and failures.

Driven like tests/engine/test_engine.py: a scripted VAD, fake synthesis, an instant playback device.
"""

from __future__ import annotations

import numpy as np

from tests.support.room import BLOCK, REPLY, Room, ask
from voice import client_events as stream
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.vad import VoiceEnded, VoicePaused, VoiceResumed, VoiceStarted
from voice.conversation.continuation import Conversation
from voice.conversation.items import ABANDONED_RUNNING, AssistantText, ToolCall, ToolResult, UserText
from voice.conversation.log_records import (
    BackchannelHeard,
    InputReceived,
    InputRepeated,
    InputStopped,
    TurnFailed,
)
from voice.engine.actions import (
    CancelTurn,
    DropTranscription,
    EngineAction,
    ResumePlayback,
    RunTool,
    SendRequest,
    SpeakNotice,
    StopPlayback,
    Transcribe,
)
from voice.engine.engine import Engine
from voice.engine.inputs import (
    LlmDone,
    LlmFailed,
    LlmToolCall,
    SynthesisFailed,
    TextInput,
    ToolDone,
    TranscriptFailed,
    TranscriptReady,
)
from voice.engine.overlap import OverlapPhrases
from voice.engine.phases import Phase
from voice.engine.tool_runs import TOOL_WAIT_LIMIT_S
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


# -- words over a reply that take no turn: backchannels and stops ----------------------------------------


def say_over(room: Room, text: str, utterance: int, seconds: float = 0.6) -> list[EngineAction]:
    """The user speaks ``seconds`` (long enough not to be a scrap of echo) and its transcript comes back."""
    onset = room.clock
    room.tick(VoiceStarted(onset))
    room.clock += round(seconds * ENGINE_RATE)
    room.tick(VoiceEnded(room.clock, AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, onset)))
    return room.engine.handle(TranscriptReady(utterance, text))


def test_a_backchannel_over_the_reply_resumes_it_asking_nothing_and_keeping_nothing() -> None:
    room = speaking_room()
    room.play(1, WORD // 2)  # half-way through the third word when the user speaks
    room.engine.take_events()

    actions = say_over(room, "Right, right.", 2)

    assert actions == [ResumePlayback(1, replay_from=2 * WORD)]  # the cut word again, from its start
    assert room.engine.active_turn == 1
    assert room.engine.phase is Phase.SPEAKING
    events = room.engine.take_events()
    told = [event for event in events if isinstance(event, stream.InputBackchannel)]
    assert [(event.text, event.turn) for event in told] == [("Right, right.", 1)]
    assert not any(isinstance(event, stream.InputTranscript) for event in events)
    assert BackchannelHeard("Right, right.", told[0].t) in room.engine.conversation.take_events()
    room.play(1, len(REPLY) * WORD)
    assert room.engine.conversation.history == (
        UserText(QUESTION),
        AssistantText(" ".join(word.strip() for word in REPLY)),
    )  # no item for the backchannel, and the reply whole


def test_a_backchannel_between_words_resumes_where_the_reply_paused() -> None:
    room = speaking_room()  # two whole words played

    assert say_over(room, "Yeah.", 2) == [ResumePlayback(1)]


def test_a_backchannel_is_not_a_false_alarm_nor_a_barge_in() -> None:
    room = speaking_room()
    say_over(room, "Okay.", 2)
    room.play(1, len(REPLY) * WORD)

    recorded = room.recorded()
    assert not recorded.turns[1].interrupted
    assert recorded.turns[1].barge_in_s is None
    assert recorded.turns[1].false_barge_ins == 0
    assert [(overlap.text, overlap.turn) for overlap in recorded.backchannels] == [("Okay.", 1)]


def test_after_a_reply_that_asked_a_question_yes_is_an_answer() -> None:
    room = Room()
    ask(room)
    room.synthesize(room.stream(1, ["Shall", " I", " go", " on?", " It", " rains", " later."]))
    room.play(1, 4 * WORD + WORD // 2)  # "Shall I go on?" heard

    actions = say_over(room, "Yes.", 2)

    assert actions[:2] == [CancelTurn(1), StopPlayback(1)]
    assert isinstance(actions[2], SendRequest)
    assert actions[2].request.items[-2:] == (AssistantText("Shall I go on?", True), UserText("Yes."))


def test_a_backchannel_before_the_reply_plays_is_more_input() -> None:
    room = Room()
    ask(room)  # the model thinks; nothing plays yet

    actions = say_over(room, "Okay.", 2)

    assert actions[0] == CancelTurn(1)
    sent = [action for action in actions if isinstance(action, SendRequest)]
    assert [action.request.items for action in sent] == [(UserText(f"{QUESTION} Okay."),)]


def test_just_after_a_statement_a_backchannel_is_heard_but_after_a_question_it_answers() -> None:
    statement = Room()
    ask(statement)
    statement.synthesize(statement.stream(1, REPLY))
    statement.play(1, len(REPLY) * WORD)  # played in full
    assert say_over(statement, "Wow.", 2) == []  # in its echo tail: a listener's word, no turn
    assert [e.text for e in statement.engine.take_events() if isinstance(e, stream.InputBackchannel)] == [
        "Wow."
    ]
    statement.clock += ENGINE_RATE
    assert isinstance(say_over(statement, "Wow.", 3)[0], SendRequest)  # a second later, in the quiet: input

    question = Room()
    ask(question)
    question.synthesize(question.stream(1, ["Shall", " I", " go", " on?"]))
    question.play(1, 4 * WORD)
    assert isinstance(say_over(question, "Yeah.", 2)[0], SendRequest)


def test_a_stop_cuts_the_reply_keeping_what_was_heard_and_asks_nothing() -> None:
    room = speaking_room()

    actions = say_over(room, "Stop.", 2)

    assert actions == [CancelTurn(1), StopPlayback(1)]  # cut as a barge-in cuts; no request
    assert room.engine.active_turn is None
    assert room.engine.phase is Phase.LISTENING
    assert room.engine.conversation.history == (
        UserText(QUESTION),
        AssistantText("Tomorrow starts", interrupted=True),
        UserText("Stop."),  # the model will know
    )
    records = room.engine.conversation.take_events()
    assert InputStopped("speech-2", "Stop.") in records
    assert room.recorded().turns[1].interrupted
    sent = say_over(room, "What about Sunday?", 3)[0]  # the user speaks again: answered, with the stop
    assert isinstance(sent, SendRequest)
    assert sent.request.items[-2:] == (UserText("Stop."), UserText("What about Sunday?"))


def test_a_stop_is_told_after_the_cut_and_the_users_words() -> None:
    room = speaking_room()
    room.engine.take_events()
    say_over(room, "Wait, stop.", 2)

    kinds = [event.type for event in room.engine.take_events()]

    assert kinds[-5:] == [
        "response.interrupted",
        "input.transcript",
        "input.stop",
        "state",
        "output_audio.stopped",
    ]
    assert "response.created" not in kinds


def test_a_stop_while_the_reply_is_prepared_keeps_the_question_and_asks_nothing() -> None:
    room = Room()
    ask(room)

    actions = say_over(room, "Never mind.", 2)

    assert actions[:1] == [CancelTurn(1)]
    assert not any(isinstance(action, SendRequest) for action in actions)
    assert room.engine.conversation.history == (UserText(f"{QUESTION} Never mind."),)
    assert room.engine.conversation.pending_input is None


def test_a_stop_phrase_followed_by_more_words_is_answered() -> None:
    room = speaking_room()

    actions = say_over(room, "Wait, make it shorter.", 2, seconds=1.2)

    assert isinstance(actions[2], SendRequest)
    assert actions[2].request.items[-1] == UserText("Wait, make it shorter.")


def test_more_than_a_backchannel_cuts_in() -> None:
    room = speaking_room()

    actions = say_over(room, "Yeah, but what about Sunday?", 2, seconds=1.5)

    assert actions[:2] == [CancelTurn(1), StopPlayback(1)]
    assert isinstance(actions[2], SendRequest)


def test_a_stop_while_a_tool_runs_awaits_its_result_then_asks_nothing() -> None:
    room = running_tool_room()

    assert room.say("Stop.", 2) == []
    actions = room.engine.handle(ToolDone(1, FORECAST))

    assert not any(isinstance(action, SendRequest) for action in actions)
    assert room.engine.active_turn is None
    assert room.engine.conversation.history[-3:] == (CALL, FORECAST, UserText("Stop."))


def test_a_resumed_session_has_the_stop_in_its_history_and_no_backchannel() -> None:
    room = speaking_room()
    say_over(room, "Uh-huh.", 2)
    say_over(room, "Hold on.", 3)
    records = room.engine.conversation.take_events()

    resumed = Conversation.from_events(records)

    assert resumed.history == room.engine.conversation.history
    assert resumed.history[-1] == UserText("Hold on.")
    assert resumed.pending_input is None


def test_the_lists_come_from_the_engines_constructor() -> None:
    room = Room()
    room.engine = Engine(room.vad, overlap=OverlapPhrases(backchannels=(), stop_phrases=("enough",)))
    ask(room)
    room.synthesize(room.stream(1, REPLY))
    room.play(1, 2 * WORD)

    assert isinstance(say_over(room, "Yeah.", 2)[2], SendRequest)  # not a backchannel here
    room.synthesize(room.stream(2, REPLY))
    room.play(2, 2 * WORD)
    assert say_over(room, "Enough!", 3) == [CancelTurn(2), StopPlayback(2)]


def pause_over(room: Room, voiced_s: float = 0.3) -> tuple[int, int, Transcribe]:
    """The user says a word over the reply and pauses: (onset, voiced end, the pause's transcription)."""
    onset = room.clock
    room.tick(VoiceStarted(onset))
    room.clock += round(voiced_s * ENGINE_RATE)
    end = room.clock
    offered = room.tick(VoicePaused(end, AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, onset)))
    (early,) = [action for action in offered if isinstance(action, Transcribe)]
    return onset, end, early


def test_a_listeners_word_keeps_the_reply_paused_until_the_user_has_stopped() -> None:
    room = speaking_room()
    onset, end, early = pause_over(room)

    assert room.engine.handle(TranscriptReady(early.utterance, "Yeah.")) == []
    assert not any(room.tick() for _ in range(30))  # 600 ms of quiet: a breath, and more may follow
    assert room.engine.phase is Phase.PAUSED
    actions = room.tick(VoiceEnded(end, AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, onset)))

    assert [type(action) for action in actions] == [ResumePlayback]  # the early transcript is the word's
    assert room.engine.phase is Phase.SPEAKING
    told = [e.text for e in room.engine.take_events() if isinstance(e, stream.InputBackchannel)]
    assert told == ["Yeah."]


def test_a_cut_in_opening_with_a_listeners_word_and_a_breath_is_one_utterance_and_never_resumes() -> None:
    room = speaking_room()
    onset, _, early = pause_over(room)
    room.engine.handle(TranscriptReady(early.utterance, "Yeah."))
    breath = [room.tick() for _ in range(20)]  # 400 ms

    assert room.tick(VoiceResumed(room.clock)) == [DropTranscription(early.utterance)]
    room.clock += round(1.2 * ENGINE_RATE)
    ended = room.tick(VoiceEnded(room.clock, AudioBlock(np.zeros(BLOCK, np.float32), ENGINE_RATE, onset)))
    (whole,) = [action for action in ended if isinstance(action, Transcribe)]
    actions = room.engine.handle(TranscriptReady(whole.utterance, "Yeah, but what about Monday?"))

    assert breath == [[]] * 20
    assert actions[:2] == [CancelTurn(1), StopPlayback(1)]
    assert isinstance(actions[2], SendRequest)
    assert actions[2].request.items[-1] == UserText("Yeah, but what about Monday?")
    events = room.engine.take_events()
    assert not any(isinstance(e, stream.ResponseResumed | stream.InputBackchannel) for e in events)


def test_a_no_heard_over_a_reply_is_never_a_listeners_word() -> None:
    room = speaking_room()

    actions = say_over(room, "No.", 2)

    assert actions[:2] == [CancelTurn(1), StopPlayback(1)]
    assert isinstance(actions[2], SendRequest)
    assert actions[2].request.items[-1] == UserText("No.")
