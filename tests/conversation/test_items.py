"""Items round-trip through JSON and become chat-completions messages."""

from __future__ import annotations

import json

import pytest

from voice.conversation.items import (
    AssistantText,
    Item,
    ToolCall,
    ToolResult,
    UserText,
    item_from_json,
    item_to_json,
    to_openai_messages,
)
from voice.errors import ConfigError

ITEMS: list[Item] = [
    UserText("What's the weather?"),
    AssistantText("Let me check.", interrupted=True),
    ToolCall("c1", "forecast", {"day": "sunday"}),
    ToolResult("c1", "Not run: the user interrupted.", failed=True),
    AssistantText("Dry all day."),
]


@pytest.mark.parametrize("item", ITEMS)
def test_items_survive_a_json_round_trip(item: Item) -> None:
    assert item_from_json(json.loads(json.dumps(item_to_json(item)))) == item


def test_report_shape_marks_only_interrupted_and_failed_items() -> None:
    assert item_to_json(AssistantText("Hi.")) == {"role": "assistant", "text": "Hi."}
    assert item_to_json(AssistantText("Hi", interrupted=True))["interrupted"] is True
    assert "failed" not in item_to_json(ToolResult("c1", "ok"))


def test_tool_calls_join_the_assistant_message_before_them() -> None:
    messages = to_openai_messages(ITEMS, system_prompt="Be brief.")

    assert messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What's the weather?"},
        {
            "role": "assistant",
            "content": "Let me check.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "forecast", "arguments": '{"day": "sunday"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "Not run: the user interrupted."},
        {"role": "assistant", "content": "Dry all day."},
    ]


def test_a_tool_call_without_text_gets_its_own_assistant_message() -> None:
    messages = to_openai_messages([UserText("hi"), ToolCall("c1", "clock", {})])

    assert messages[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "clock", "arguments": "{}"}}],
    }


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"role": "user"}, "malformed"),
        ({"role": "narrator", "text": "x"}, "unknown conversation item role"),
        ({"role": "tool_call", "id": "c", "name": "n", "arguments": []}, "arguments must be an object"),
        ({"role": "user", "text": 3}, "expected a string"),
    ],
)
def test_malformed_items_are_one_line_errors(data: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        item_from_json(data)
