"""The cancel-then-continue rules of docs/architecture.md §1.3-1.6, driven through the ledger."""

from __future__ import annotations

import pytest

from voice.conversation.continuation import PENDING_INPUT_CHARS, SEEN_IDS_KEPT, Conversation, Request
from voice.conversation.items import (
    NOT_RUN_INTERRUPTED,
    AssistantText,
    ToolCall,
    ToolResult,
    UserText,
)
from voice.conversation.ledger import PlaybackLedger, SampleSpan
from voice.conversation.log_records import InputRepeated, TurnEnded
from voice.errors import ProtocolError

QUESTION = "What will the weather be like tomorrow?"
DELTAS = ["Tomorrow", " starts", " dry,", " then", " rain", " moves", " in", " from", " the", " west."]
NEW_INPUT = "Sorry, I meant on Sunday."
WORD_SAMPLES = 8_000  # each word plays for half a second at 16 kHz


def stream_reply(conversation: Conversation, ledger: PlaybackLedger, deltas: list[str]) -> None:
    """Stream deltas into the turn and the ledger, and place every complete word back to back."""
    for delta in deltas:
        conversation.add_text(delta)
        ledger.add_text(delta)
    ledger.close_text()
    waiting = len(ledger.words()) - ledger.placed_words
    start = ledger.audio_end or 0
    ledger.place(
        [SampleSpan(start + i * WORD_SAMPLES, start + (i + 1) * WORD_SAMPLES) for i in range(waiting)]
    )


def ask(conversation: Conversation) -> Request:
    request = conversation.submit(QUESTION)
    assert request is not None
    return request


def test_interrupted_after_third_word_carries_exactly_the_heard_text() -> None:
    conversation, ledger = Conversation(), PlaybackLedger()
    ask(conversation)
    stream_reply(conversation, ledger, DELTAS[:6])  # the model is still streaming when the user cuts in
    conversation.cut_in(ledger.heard(3 * WORD_SAMPLES + WORD_SAMPLES // 2))

    request = conversation.submit(NEW_INPUT)

    assert request is not None
    assert request.items == (
        UserText(QUESTION),
        AssistantText("Tomorrow starts dry,", interrupted=True),
        UserText(NEW_INPUT),
    )


def test_finished_reply_cut_in_playback_carries_only_the_heard_text() -> None:
    conversation, ledger = Conversation(), PlaybackLedger()
    ask(conversation)
    stream_reply(conversation, ledger, DELTAS)  # the whole reply arrived before the cancel
    conversation.cut_in(ledger.heard(3 * WORD_SAMPLES + 10))

    request = conversation.submit(NEW_INPUT)

    assert request is not None
    assert request.items == (
        UserText(QUESTION),
        AssistantText("Tomorrow starts dry,", interrupted=True),
        UserText(NEW_INPUT),
    )


@pytest.mark.parametrize("call_count", [1, 2])
def test_interrupted_tool_calls_get_one_failed_result_each(call_count: int) -> None:
    conversation, ledger = Conversation(), PlaybackLedger()
    ask(conversation)
    stream_reply(conversation, ledger, ["Let me", " check."])
    calls = [ToolCall(f"call_{i}", "forecast", {"day": "tomorrow", "n": i}) for i in range(call_count)]
    for call in calls:
        conversation.add_tool_call(call)
    conversation.cut_in(ledger.heard(ledger.audio_end or 0))

    request = conversation.submit(NEW_INPUT)

    assert request is not None
    assert request.items == (
        UserText(QUESTION),
        AssistantText("Let me check.", interrupted=True),
        *calls,
        *(ToolResult(call.id, NOT_RUN_INTERRUPTED, failed=True) for call in calls),
        UserText(NEW_INPUT),
    )


def test_tool_call_that_ran_keeps_its_real_result_when_interrupted() -> None:
    conversation = Conversation()
    ask(conversation)
    ran, not_ran = ToolCall("a", "forecast", {}), ToolCall("b", "clock", {})
    conversation.add_tool_call(ran)
    conversation.add_tool_call(not_ran)
    conversation.add_tool_result(ToolResult("a", "Dry, fourteen degrees."))
    conversation.cut_in("")

    request = conversation.submit(NEW_INPUT)

    assert request is not None
    assert request.items[1:] == (
        ran,
        not_ran,
        ToolResult("a", "Dry, fourteen degrees."),
        ToolResult("b", NOT_RUN_INTERRUPTED, failed=True),
        UserText(NEW_INPUT),
    )


def test_cancelled_before_anything_was_heard_merges_the_inputs() -> None:
    conversation, ledger = Conversation(), PlaybackLedger()
    ask(conversation)
    stream_reply(conversation, ledger, DELTAS[:2])
    conversation.cut_in(ledger.heard(WORD_SAMPLES - 1))  # the first word was still playing

    request = conversation.submit(NEW_INPUT)

    assert request is not None
    assert request.items == (UserText("What will the weather be like tomorrow? Sorry, I meant on Sunday."),)


def test_cancelled_while_thinking_merges_and_keeps_the_earlier_history() -> None:
    conversation, ledger = Conversation(), PlaybackLedger()
    ask(conversation)
    stream_reply(conversation, ledger, DELTAS)
    conversation.complete()
    assert conversation.submit("And on Saturday?") is not None
    conversation.cut_in("")  # no delta had arrived yet

    request = conversation.submit("I mean in the morning.")

    assert request is not None
    assert request.items == (
        UserText(QUESTION),
        AssistantText("Tomorrow starts dry, then rain moves in from the west."),
        UserText("And on Saturday? I mean in the morning."),
    )


def test_input_lost_by_a_cancel_is_asked_again_when_the_barge_in_had_no_words() -> None:
    conversation = Conversation()
    ask(conversation)
    conversation.cut_in("")

    request = conversation.submit("")  # the interruption was a cough: the transcript is empty

    assert request is not None
    assert request.items == (UserText(QUESTION),)


def test_completed_reply_enters_history_as_generated() -> None:
    conversation, ledger = Conversation(), PlaybackLedger()
    ask(conversation)
    stream_reply(conversation, ledger, DELTAS)
    conversation.complete()

    assert conversation.history == (
        UserText(QUESTION),
        AssistantText("Tomorrow starts dry, then rain moves in from the west."),
    )


def test_completed_tool_calls_lead_to_a_follow_up_with_their_results() -> None:
    conversation = Conversation()
    ask(conversation)
    conversation.add_text("Let me check.")
    call = ToolCall("c1", "forecast", {"day": "sunday"})
    conversation.add_tool_call(call)
    conversation.add_tool_result(ToolResult("c1", "Dry, fourteen degrees."))
    conversation.complete()

    assert conversation.awaits_follow_up
    request = conversation.follow_up()

    assert request.turn == 2
    assert request.items == (
        UserText(QUESTION),
        AssistantText("Let me check."),
        call,
        ToolResult("c1", "Dry, fourteen degrees."),
    )


def test_half_streamed_text_that_was_not_heard_never_crosses() -> None:
    conversation, ledger = Conversation(), PlaybackLedger()
    ask(conversation)
    stream_reply(conversation, ledger, DELTAS[:3])
    conversation.add_text(" then rai")  # generated, never synthesized
    conversation.cut_in(ledger.heard(2 * WORD_SAMPLES))

    request = conversation.submit(NEW_INPUT)

    assert request is not None
    assert AssistantText("Tomorrow starts", interrupted=True) in request.items
    assert all("rai" not in getattr(item, "text", "") for item in request.items)


def test_an_input_id_seen_before_starts_nothing() -> None:
    conversation = Conversation()
    assert conversation.submit(QUESTION, input_id="msg-1") is not None
    conversation.complete()

    assert conversation.submit(QUESTION, input_id="msg-1") is None
    assert conversation.turns == 1
    assert conversation.take_events()[-2:] == [TurnEnded(1, False, "", ""), InputRepeated("msg-1")]


def test_a_retry_is_dropped_after_a_thousand_other_inputs_and_old_ids_are_forgotten() -> None:
    """A kiosk's clients may send a thousand inputs before one of them retries; the ids remembered stay
    bounded, so a session of weeks does not keep every id it ever saw."""
    conversation = Conversation()
    assert conversation.submit(QUESTION, input_id="first") is not None
    conversation.complete()
    for number in range(1_000):
        assert conversation.receive("", input_id=f"busy-{number}")

    assert not conversation.receive(QUESTION, input_id="first")
    for number in range(1_000, SEEN_IDS_KEPT + 1):
        conversation.receive("", input_id=f"busy-{number}")
    assert conversation.receive(QUESTION, input_id="first")  # long forgotten: taken as new


def test_heard_text_must_be_what_the_model_said() -> None:
    conversation = Conversation()
    ask(conversation)
    conversation.add_text("Tomorrow starts dry,")

    with pytest.raises(ProtocolError, match="not a prefix"):
        conversation.cut_in("Yesterday")


def test_input_during_a_turn_must_cancel_it_first() -> None:
    conversation = Conversation()
    ask(conversation)

    with pytest.raises(ProtocolError, match="cancel the turn first"):
        conversation.submit(NEW_INPUT)


def test_replaying_recorded_events_rebuilds_the_same_conversation() -> None:
    conversation, ledger = Conversation(), PlaybackLedger()
    ask(conversation)
    stream_reply(conversation, ledger, DELTAS)
    conversation.cut_in(ledger.heard(2 * WORD_SAMPLES))
    conversation.submit(NEW_INPUT, input_id="retry-me")
    conversation.cut_in("")  # nothing heard: NEW_INPUT stays pending

    rebuilt = Conversation.from_events(conversation.take_events())

    assert rebuilt.history == conversation.history
    assert rebuilt.pending_input == NEW_INPUT
    assert rebuilt.submit(NEW_INPUT, input_id="retry-me") is None
    assert rebuilt.turns == 2


def test_an_input_withdrawn_for_the_whole_utterance_is_not_merged_with_it() -> None:
    """The user went on after a pause taken for their turn's end: the whole utterance replaces its start,
    and an earlier question left pending still joins it, in the log's replay too."""
    conversation = Conversation()
    ask(conversation)
    conversation.cut_in("")  # the first question stays pending
    before = conversation.pending_input
    conversation.submit("What's the weather?")
    conversation.cut_in("")
    conversation.withdraw_input(before)

    request = conversation.submit("What's the weather in Paris on Friday?")

    assert request is not None
    assert request.items[-1] == UserText(f"{before} What's the weather in Paris on Friday?")
    rebuilt = Conversation.from_events(conversation.take_events())
    assert rebuilt.turns == 3
    assert rebuilt.pending_input == request.items[-1].text


def test_an_input_is_withdrawn_only_between_turns() -> None:
    conversation = Conversation()
    ask(conversation)

    with pytest.raises(ProtocolError, match="withdrawn during turn 1"):
        conversation.withdraw_input(None)


def test_input_nobody_answers_keeps_only_its_latest_words() -> None:
    conversation = Conversation()
    for number in range(1000):  # an hour of a television the assistant hears, while every reply is cut
        conversation.submit(f"and then number {number} said something")
        stream_reply(conversation, PlaybackLedger(), DELTAS[:1])
        conversation.cut_in("")

    pending = conversation.pending_input
    assert pending is not None
    assert PENDING_INPUT_CHARS - 40 < len(pending) <= PENDING_INPUT_CHARS
    assert pending.startswith("and then number ")  # cut at a word's start, not inside one
    assert pending.endswith("and then number 999 said something")


def test_a_long_input_is_kept_whole_however_long_the_merge() -> None:
    conversation = Conversation()
    conversation.receive("What about tomorrow?")
    typed = " ".join(["word"] * PENDING_INPUT_CHARS)

    conversation.receive(typed)

    assert conversation.pending_input == typed
