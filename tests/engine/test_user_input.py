"""The user's input as the session knows it: ids that never repeat across the log, a repeated id seen
as a duplicate even while it waits for a tool, and what the stream hears of their words."""

from __future__ import annotations

from voice.client_events import InputStop, InputTranscript
from voice.conversation.continuation import Conversation
from voice.engine.tool_runs import HeldInput
from voice.engine.user_input import fresh_id, seen, told_input


def test_fresh_ids_count_the_input_taken_and_the_input_held_for_tools() -> None:
    conversation, held = Conversation(), HeldInput()
    assert fresh_id("speech-", conversation, held) == "speech-1"
    conversation.receive("What's the weather?", "speech-1")
    held.hold("in Paris", "text-2")

    assert fresh_id("speech-", conversation, held) == "speech-3"


def test_an_id_is_seen_once_the_conversation_has_it_or_while_it_is_held() -> None:
    conversation, held = Conversation(), HeldInput()
    conversation.receive("Hello", "text-1")
    held.hold("Never mind.", "speech-2", stop=True)

    assert seen("text-1", conversation, held)
    assert seen("speech-2", conversation, held)
    assert not seen("text-3", conversation, held)


def test_words_are_told_trimmed_with_the_input_they_join() -> None:
    told = told_input("speech-2", "  on Sunday? ", "What about", 1.5)

    assert told == [InputTranscript("speech-2", "on Sunday?", "What about", 1.5)]


def test_a_stop_phrase_is_told_as_a_transcript_then_a_stop() -> None:
    told = told_input("speech-3", "Stop. ", None, 2.0, stop=True)

    assert told == [InputTranscript("speech-3", "Stop.", None, 2.0), InputStop("speech-3", "Stop.", 2.0)]
