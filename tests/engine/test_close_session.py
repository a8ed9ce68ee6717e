"""A closing session (Ctrl-C, SIGTERM, a view's quit) keeps what was heard; heard progress is recorded."""

from __future__ import annotations

from tests.support.room import REPLY, Room, ask, reply_with_a_tool_call
from voice.conversation.continuation import Conversation
from voice.conversation.items import ABANDONED_RUNNING, AssistantText, ToolResult, UserText
from voice.conversation.log_records import ReplyHeard, TurnEnded
from voice.engine.actions import CancelTurn, StopPlayback
from voice.engine.inputs import AudioPlayed, CloseSession
from voice.engine.phases import Phase
from voice.engine.reply_report import HEARD_LOGGED_EVERY_MS
from voice.testing.stand_ins import QUESTION, WORD

EVERY = HEARD_LOGGED_EVERY_MS * 16  # samples at 16 kHz


def test_closing_mid_reply_keeps_exactly_the_heard_prefix_as_interrupted() -> None:
    room = Room()
    ask(room)
    room.synthesize(room.stream(1, REPLY))
    room.play(1, 3 * WORD + WORD // 2)  # "Tomorrow starts dry," and half of "then"

    actions = room.engine.handle(CloseSession())

    assert actions == [CancelTurn(1), StopPlayback(1)]
    assert room.engine.phase is Phase.LISTENING
    history = (UserText(QUESTION), AssistantText("Tomorrow starts dry,", interrupted=True))
    assert room.engine.conversation.history == history
    ended = [e for e in room.engine.conversation.take_events() if isinstance(e, TurnEnded)]
    assert [(e.cancelled, e.heard) for e in ended] == [(True, "Tomorrow starts dry,")]


def test_closing_before_anything_was_heard_writes_no_reply_and_keeps_the_question_pending() -> None:
    room = Room()
    ask(room)
    room.stream(1, REPLY[:3], done=False)  # text streamed, nothing played

    room.engine.handle(CloseSession())

    events = room.engine.conversation.take_events()
    assert room.engine.conversation.history == ()
    resumed = Conversation.from_events(events)
    assert resumed.pending_input == QUESTION
    request = resumed.submit("in Paris")
    assert request is not None
    assert request.items == (UserText(f"{QUESTION} in Paris"),)


def test_closing_while_a_tool_runs_does_not_wait_for_it() -> None:
    room = Room()
    call, _ = reply_with_a_tool_call(room, 3)

    assert room.engine.handle(CloseSession()) == [CancelTurn(1), StopPlayback(1)]

    assert room.engine.active_turn is None
    assert room.engine.conversation.history[-2:] == (call, ToolResult("c1", ABANDONED_RUNNING, failed=True))


def test_closing_with_nothing_in_flight_does_nothing() -> None:
    room = Room()
    assert room.engine.handle(CloseSession()) == []
    assert room.engine.conversation.take_events() == []


def heard_progress(room: Room) -> list[ReplyHeard]:
    return [e for e in room.engine.conversation.take_events() if isinstance(e, ReplyHeard)]


def test_heard_progress_is_recorded_at_word_ends_at_most_every_half_second() -> None:
    room = Room()
    ask(room)
    room.synthesize(room.stream(1, REPLY[:6]))  # "Tomorrow starts dry, then rain moves"
    room.engine.conversation.take_events()
    start = room.clock

    for _ in range(5):  # five words, a quarter of a second each; "moves" stays unplayed
        room.clock += WORD
        room.play(1, WORD)

    progress = heard_progress(room)
    assert [p.heard for p in progress] == [
        "Tomorrow",
        "Tomorrow starts dry,",
        "Tomorrow starts dry, then rain",
    ]
    assert [p.heard_s for p in progress] == [round((start + k * WORD) / 16000, 3) for k in (1, 3, 5)]


def test_a_word_heard_just_after_a_progress_line_is_recorded_once_the_interval_passed() -> None:
    room = Room()
    ask(room)
    room.synthesize(room.stream(1, REPLY[:4]))
    room.play(1, WORD)  # "Tomorrow": recorded at once
    room.play(1, WORD)  # "starts": too soon after
    assert [p.heard for p in heard_progress(room)] == ["Tomorrow"]

    # playback stalls (the next chunk is still being synthesized): no new word, but time passes
    room.engine.handle(AudioPlayed(1, 2 * WORD, room.clock + EVERY))

    assert [p.heard for p in heard_progress(room)] == ["Tomorrow starts"]
