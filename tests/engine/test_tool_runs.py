"""A reply's tools: what the stream hears when they start, and what the user said meanwhile reaching
the conversation once they are done (a last stop phrase asks nothing)."""

from __future__ import annotations

from voice.client_events import ToolCalled
from voice.conversation.continuation import Conversation
from voice.conversation.items import ToolCall
from voice.engine.actions import RunTool
from voice.engine.tool_runs import HeldInput, ToolRun

RATE = 16_000


def test_starting_tools_tells_each_call_and_runs_each_once() -> None:
    calls = (ToolCall("a", "weather", {"city": "Paris"}), ToolCall("b", "time"))
    run = ToolRun()

    told, runs = run.start(2, calls, 3.5)

    assert told == [
        ToolCalled(2, "a", "weather", {"city": "Paris"}, 3.5),
        ToolCalled(2, "b", "time", {}, 3.5),
    ]
    assert runs == [RunTool(2, calls[0]), RunTool(2, calls[1])]
    run.finished("a")
    assert run.waiting == {"b"}


def test_a_tool_the_user_moved_on_from_is_abandoned_after_ten_seconds() -> None:
    run = ToolRun()
    run.start(1, (ToolCall("a", "slow"),), 0.0)
    run.note_cut(RATE)
    run.note_cut(5 * RATE)  # the first time the user moved on counts

    assert not run.overdue(11 * RATE - 1, RATE)
    assert run.overdue(11 * RATE, RATE)
    (result,) = run.abandon()
    assert (result.id, result.failed) == ("a", True)
    assert not run.waiting


def test_what_was_said_while_tools_ran_is_asked_once_they_are_done() -> None:
    conversation = Conversation()
    held = HeldInput()
    held.hold("What about", "spoken-1")
    held.hold("Sunday?", "typed-2")

    assert not held.deliver(conversation)  # not a stop: the user is answered

    assert conversation.pending_input == "What about Sunday?"
    assert "spoken-1" not in held
    assert conversation.has_seen("typed-2")


def test_a_stop_said_last_while_tools_ran_asks_nothing() -> None:
    conversation = Conversation()
    held = HeldInput()
    held.hold("What about Sunday?", "spoken-1")
    held.hold("Never mind.", "spoken-2", stop=True)

    assert held.deliver(conversation)

    assert conversation.pending_input is None
    assert len(held) == 0
