"""The tools every request offers take their share of the model's context, as the system prompt does."""

from __future__ import annotations

import pytest

from voice.components import context_budget
from voice.errors import ConfigError
from voice.llm.openai_client import OpenAIChatModel
from voice.llm.port import ChatSettings, ToolSpec

SETTINGS = ChatSettings(max_tokens=50)
LOOKUP = ToolSpec(
    "lookup_order",
    "Look up an order by its number: what it holds and where it is.",
    {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
)


def model(context_tokens: int) -> OpenAIChatModel:
    """A model whose context is known (never asked anything here)."""
    return OpenAIChatModel("http://127.0.0.1:9/v1", "small", context_tokens=context_tokens)


def test_offered_tools_leave_less_room_for_the_conversation() -> None:
    with model(2048) as small:
        without = context_budget(small, SETTINGS)
        with_tools = context_budget(small, SETTINGS, (LOOKUP,))

    assert without is not None
    assert with_tools is not None
    assert with_tools.tokens < without.tokens - 30


def test_tools_that_leave_no_room_are_one_line_saying_to_offer_fewer() -> None:
    many = tuple(ToolSpec(f"{LOOKUP.name}_{i}", LOOKUP.description, LOOKUP.parameters) for i in range(12))

    with model(600) as small, pytest.raises(ConfigError, match=r"the 12 tools offered; offer fewer"):
        context_budget(small, SETTINGS, many)
