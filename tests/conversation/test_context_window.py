"""The context budget: requests fit the model, the oldest exchanges go whole, and a resume sends the same."""

from __future__ import annotations

from voice.conversation.context_window import ContextBudget, estimate_tokens, first_kept
from voice.conversation.continuation import Conversation, Request
from voice.conversation.items import AssistantText, ToolCall, ToolResult, UserText
from voice.conversation.log_records import BudgetShrunk, HistoryTrimmed, LogRecord

BUDGET = ContextBudget(400)


def exchange(conversation: Conversation, number: int, events: list[LogRecord]) -> Request:
    """One question and answer; every fifth answer calls a tool, every seventh is cut by the user."""
    request = conversation.submit(f"Question number {number}: what about the weather on day {number}?")
    assert request is not None
    conversation.add_text(
        f"On day {number} it stays dry, with a light breeze from the west in the afternoon."
    )
    if number % 5 == 0:
        call = ToolCall(f"c{number}", "forecast", {"day": number})
        conversation.add_tool_call(call)
        conversation.add_tool_result(ToolResult(call.id, "Dry."))
    if number % 7 == 0:
        conversation.cut_in(f"On day {number} it stays dry,")
    else:
        conversation.complete()
        if conversation.awaits_follow_up:
            conversation.follow_up()
            conversation.add_text("So no umbrella.")
            conversation.complete()
    events += conversation.take_events()
    return request


def test_every_request_fits_and_the_oldest_exchanges_are_dropped_whole() -> None:
    conversation = Conversation(BUDGET)
    events: list[LogRecord] = []

    requests = [exchange(conversation, n, events) for n in range(1, 60)]

    assert all(estimate_tokens(r.items) <= BUDGET.tokens for r in requests)
    assert all(isinstance(r.items[0], UserText) for r in requests)  # whole exchanges, from a question
    assert "number 1:" not in requests[-1].items[0].text  # type: ignore[union-attr]
    for request in requests:
        calls = {item.id for item in request.items if isinstance(item, ToolCall)}
        results = {item.id for item in request.items if isinstance(item, ToolResult)}
        assert calls == results  # a result never travels without its call, nor a call without its result
    assert any(isinstance(e, HistoryTrimmed) for e in events)
    assert len(conversation.history) < 40  # what no request carries is not kept in memory either


def test_trimming_keeps_a_shared_prefix_for_several_requests() -> None:
    conversation = Conversation(BUDGET)
    events: list[LogRecord] = []
    for n in range(1, 60):
        exchange(conversation, n, events)

    trims = [e for e in events if isinstance(e, HistoryTrimmed)]
    assert 1 < len(trims) < 59 // 3  # it trims in steps, not at every request (the server's cache stays warm)


def test_a_resumed_session_sends_identical_requests() -> None:
    live = Conversation(BUDGET)
    events: list[LogRecord] = []
    for n in range(1, 40):
        exchange(live, n, events)
    resumed = Conversation.from_events(events, BUDGET)

    assert exchange(resumed, 40, []) == exchange(live, 40, [])


def test_a_refusal_as_too_large_shrinks_the_budget_and_a_resume_remembers_it() -> None:
    live = Conversation(ContextBudget(2_000))
    events: list[LogRecord] = []
    for n in range(1, 20):
        exchange(live, n, events)
    request = live.submit("And tomorrow?")
    assert request is not None

    smaller = live.trim_after_refusal()
    events += live.take_events()

    assert smaller.turn == request.turn
    assert estimate_tokens(smaller.items) <= estimate_tokens(request.items) * 3 // 4
    assert smaller.items[-1] == UserText("And tomorrow?")
    assert any(isinstance(e, BudgetShrunk) for e in events)
    live.complete()
    resumed = Conversation.from_events([*events, *live.take_events()], ContextBudget(2_000))
    assert resumed.budget == live.budget


def test_history_too_long_for_any_budget_is_left_out_rather_than_failing_every_turn() -> None:
    history = (UserText("tell me a story"), AssistantText("Once upon a time " * 400))
    pending = [UserText("go on")]

    assert first_kept(history, pending, ContextBudget(100), 0) == len(history)
