"""A well-formed stream over real sockets: text deltas, tool calls assembled from fragments, usage."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.fault_llm import FaultServer, Script, delta_chunk, finish_chunk, replying
from voice.cancel import CancelToken
from voice.conversation.items import ToolCall, UserText
from voice.llm.errors import Dispatch, ErrorCode, LLMError
from voice.llm.openai_client import OpenAIChatModel
from voice.llm.port import (
    ChatEvent,
    ChatRequest,
    ChatSettings,
    Finished,
    TextDelta,
    ToolCallArguments,
    ToolCallReady,
    ToolCallStarted,
    ToolSpec,
    Usage,
)

FORECAST = ToolSpec(
    "forecast",
    "The weather forecast for a day.",
    {"type": "object", "properties": {"day": {"type": "string"}}, "required": ["day"]},
)
REQUEST = ChatRequest(
    (UserText("And on Sunday?"),),
    tools=(FORECAST,),
    settings=ChatSettings(system_prompt="Be brief.", temperature=0.2, max_tokens=40),
)


def tool_fragment(index: int, *, call_id: str = "", name: str = "", arguments: str = "") -> dict[str, Any]:
    function = {key: value for key, value in (("name", name), ("arguments", arguments)) if value}
    fragment: dict[str, Any] = {"index": index, "function": function}
    if call_id:
        fragment.update(id=call_id, type="function")
    return {"choices": [{"index": 0, "delta": {"tool_calls": [fragment]}, "finish_reason": None}]}


def stream(script: Script) -> tuple[list[ChatEvent], dict[str, Any]]:
    with FaultServer(script) as server, OpenAIChatModel(server.url, "test-model") as model:
        events = list(model.stream(REQUEST, CancelToken()))
    return events, server.requests[0].json()


def test_text_deltas_stream_in_order_and_finish_with_usage() -> None:
    usage = {"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}}
    events, _ = stream(
        replying(delta_chunk("Dry"), delta_chunk(" and"), delta_chunk(" mild."), finish_chunk(), usage)
    )
    assert events == [
        TextDelta("Dry"),
        TextDelta(" and"),
        TextDelta(" mild."),
        Finished("stop", Usage(12, 3, 15)),
    ]


def test_request_carries_system_prompt_tools_and_settings() -> None:
    _, body = stream(replying(finish_chunk()))
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "And on Sunday?"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "forecast",
                "description": FORECAST.description,
                "parameters": FORECAST.parameters,
            },
        }
    ]
    assert (body["temperature"], body["max_tokens"]) == (0.2, 40)


def test_tool_call_fragments_are_assembled_into_a_ready_call() -> None:
    events, _ = stream(
        replying(
            delta_chunk("Let me check."),
            tool_fragment(0, call_id="call_1", name="forecast"),
            tool_fragment(0, arguments='{"day": '),
            tool_fragment(0, arguments='"sunday"}'),
            finish_chunk("tool_calls"),
        )
    )
    assert events == [
        TextDelta("Let me check."),
        ToolCallStarted(0, "call_1", "forecast"),
        ToolCallArguments(0, '{"day": '),
        ToolCallArguments(0, '"sunday"}'),
        ToolCallReady(ToolCall("call_1", "forecast", {"day": "sunday"})),
        Finished("tool_calls"),
    ]


def test_a_call_sent_whole_without_an_id_gets_one() -> None:
    events, _ = stream(
        replying(tool_fragment(0, name="forecast", arguments='{"day": "monday"}'), finish_chunk())
    )
    started, arguments, ready, finished = events
    assert isinstance(started, ToolCallStarted)
    assert started.id
    assert arguments == ToolCallArguments(0, '{"day": "monday"}')
    assert ready == ToolCallReady(ToolCall(started.id, "forecast", {"day": "monday"}))
    assert finished == Finished("stop")


def test_two_calls_are_ready_in_index_order() -> None:
    events, _ = stream(
        replying(
            tool_fragment(0, call_id="a", name="forecast", arguments='{"day": "saturday"}'),
            tool_fragment(1, call_id="b", name="forecast", arguments='{"day": "sunday"}'),
            finish_chunk("tool_calls"),
        )
    )
    ready = [event.call.id for event in events if isinstance(event, ToolCallReady)]
    assert ready == ["a", "b"]


def test_tool_arguments_that_are_not_json_fail_the_attempt() -> None:
    with pytest.raises(LLMError) as raised:
        stream(
            replying(tool_fragment(0, call_id="a", name="forecast", arguments='{"day": sun'), finish_chunk())
        )
    assert (raised.value.code, raised.value.dispatch) == (ErrorCode.PROTOCOL, Dispatch.ACCEPTED)


def test_a_clean_close_after_the_stop_reason_counts_as_complete() -> None:
    events, _ = stream(replying(delta_chunk("Hi."), finish_chunk(), done=False))
    assert events == [TextDelta("Hi."), Finished("stop")]


def test_an_error_object_mid_stream_fails_the_attempt() -> None:
    with pytest.raises(LLMError) as raised:
        stream(replying(delta_chunk("Well"), {"error": {"message": "out of memory", "code": "server_oom"}}))
    assert (raised.value.code, raised.value.dispatch, raised.value.retriable) == (
        ErrorCode.UNAVAILABLE,
        Dispatch.ACCEPTED,
        True,
    )
    assert "[server_oom]" in str(raised.value)
    assert "out of memory" not in str(raised.value)
