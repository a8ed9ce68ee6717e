"""Counting a request's prompt tokens: the server's tokenizer over ChatML, or a stated estimate."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support.fault_llm import Exchange, FaultServer
from voice.components import open_chat_model
from voice.config.llm import LlmConfig
from voice.conversation.items import AssistantText, ToolCall, ToolResult, UserText
from voice.llm.port import ChatRequest, ChatSettings, ToolSpec
from voice.llm.tokens import EstimatedTokenCounter, ServerTokenCounter

REQUEST = ChatRequest(
    (UserText("Will it rain?"), AssistantText("Let me look.", interrupted=True), UserText("On Sunday.")),
    settings=ChatSettings(system_prompt="Be brief."),
)


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client() as client:
        yield client


def test_the_estimate_is_a_quarter_token_per_character_plus_five_per_message_and_three_for_the_reply() -> (
    None
):
    # "Be brief." 9 chars → 3; "Will it rain?" 13 → 4; "Let me look." 12 → 3; "On Sunday." 10 → 3
    assert EstimatedTokenCounter().count(REQUEST) == (3 + 4 + 3 + 3) + 4 * 5 + 3


def test_the_estimate_counts_tool_calls_results_and_the_tool_list() -> None:
    bare = ChatRequest((UserText("Forecast?"),), settings=ChatSettings(system_prompt=""))
    with_tools = ChatRequest(
        (
            UserText("Forecast?"),
            ToolCall("call-1", "forecast", {"day": "sunday"}),
            ToolResult("call-1", "Dry, fourteen degrees."),
        ),
        tools=(ToolSpec("forecast", "The forecast for a day."),),
        settings=ChatSettings(system_prompt=""),
    )
    counter = EstimatedTokenCounter()
    assert counter.count(with_tools) > counter.count(bare) + 3 * 5


def test_the_server_counts_the_request_rendered_as_chatml(http: httpx.Client) -> None:
    def tokenizer(exchange: Exchange) -> None:
        exchange.respond(200, {"count": 42})

    with FaultServer(tokenizer) as server:
        root = server.url.removesuffix("/v1")
        assert ServerTokenCounter(lambda: root, http).count(REQUEST) == 42
    (asked,) = server.requests
    assert (asked.method, asked.path) == ("POST", "/extras/tokenize/count")
    assert asked.json() == {
        "input": "<|im_start|>system\nBe brief.<|im_end|>\n"
        "<|im_start|>user\nWill it rain?<|im_end|>\n"
        "<|im_start|>assistant\nLet me look.<|im_end|>\n"
        "<|im_start|>user\nOn Sunday.<|im_end|>\n"
        "<|im_start|>assistant\n"
    }


def test_a_server_without_a_tokenizer_gets_the_estimate(http: httpx.Client) -> None:
    def no_such_endpoint(exchange: Exchange) -> None:
        exchange.respond(404, {"detail": "Not Found"})

    with FaultServer(no_such_endpoint) as server:
        root = server.url.removesuffix("/v1")
        assert ServerTokenCounter(lambda: root, http).count(REQUEST) == EstimatedTokenCounter().count(REQUEST)


def test_a_remote_model_has_its_configured_window_and_the_estimate() -> None:
    config = LlmConfig(url="http://127.0.0.1:9/v1", model="remote", context_tokens=8192)
    with open_chat_model(config) as model:
        assert model.context_tokens == 8192
        assert model.token_counter.count(REQUEST) == EstimatedTokenCounter().count(REQUEST)
