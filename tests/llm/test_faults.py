"""Every failure of design §1 against a real loopback server: code, dispatch evidence, retry class."""

from __future__ import annotations

import socket
import time
import traceback

import pytest

from tests.llm.fault_server import Exchange, FaultServer, Script, delta_chunk, finish_chunk, replying
from voice.cancel import CancelToken
from voice.conversation.items import UserText
from voice.llm.errors import Dispatch, ErrorCode, LLMError
from voice.llm.openai_client import OpenAIChatModel
from voice.llm.port import ChatEvent, ChatRequest, TextDelta

API_KEY = "sk-test-5ecret-key-never-shown"
QUESTION = "Is it going to rain? my-private-question"
REQUEST = ChatRequest((UserText(QUESTION),))


def collect(model: OpenAIChatModel, events: list[ChatEvent]) -> None:
    """Stream into ``events`` (kept when the call raises, to see what arrived before the failure)."""
    events.extend(model.stream(REQUEST, CancelToken()))


def fail(url: str, *, idle_timeout_s: float = 10.0) -> tuple[LLMError, list[ChatEvent]]:
    events: list[ChatEvent] = []
    with (
        OpenAIChatModel(url, "test-model", api_key=API_KEY, idle_timeout_s=idle_timeout_s) as model,
        pytest.raises(LLMError) as raised,
    ):
        collect(model, events)
    error = raised.value
    everything = "".join(traceback.format_exception(error))
    assert API_KEY not in everything
    assert "my-private-question" not in everything
    return error, events


def answer_status(status: int, headers: dict[str, str] | None = None) -> Script:
    def script(exchange: Exchange) -> None:
        # Servers quote the key and the request in free-text messages; none of it may surface.
        message = f"bad key {API_KEY} for request {exchange.request.body.decode()}"
        exchange.respond(status, {"error": {"message": message, "type": "scripted_error"}}, headers)

    return script


@pytest.mark.parametrize(
    ("status", "headers", "code", "dispatch", "retriable", "retry_after_s"),
    [
        (401, {}, ErrorCode.UNAUTHORIZED, Dispatch.REJECTED, False, None),
        (400, {}, ErrorCode.INVALID, Dispatch.REJECTED, False, None),
        (429, {"retry-after": "2"}, ErrorCode.RATE_LIMITED, Dispatch.REJECTED, True, 2.0),
        (500, {}, ErrorCode.UNAVAILABLE, Dispatch.UNKNOWN, True, None),
        (503, {"x-should-retry": "false"}, ErrorCode.UNAVAILABLE, Dispatch.UNKNOWN, False, None),
    ],
)
def test_http_status_maps_to_code_dispatch_and_retry_class(
    status: int,
    headers: dict[str, str],
    code: ErrorCode,
    dispatch: Dispatch,
    retriable: bool,
    retry_after_s: float | None,
) -> None:
    with FaultServer(answer_status(status, headers)) as server:
        error, events = fail(server.url)
    assert (error.code, error.dispatch, error.retriable, error.retry_after_s) == (
        code,
        dispatch,
        retriable,
        retry_after_s,
    )
    assert f"HTTP {status}" in str(error)
    assert "[scripted_error]" in str(error)
    assert events == []


def test_request_carries_key_model_and_stream_flag() -> None:
    script = replying(delta_chunk("Hi."), finish_chunk())
    with FaultServer(script) as server, OpenAIChatModel(server.url, "test-model", api_key=API_KEY) as model:
        list(model.stream(REQUEST, CancelToken()))
    (request,) = server.requests
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    body = request.json()
    assert body["model"] == "test-model"
    assert body["stream"] is True
    assert body["messages"][-1] == {"role": "user", "content": QUESTION}


def test_connection_refused_was_never_sent() -> None:
    with socket.create_server(("127.0.0.1", 0)) as placeholder:
        port = placeholder.getsockname()[1]
    error, _ = fail(f"http://127.0.0.1:{port}/v1")
    assert (error.code, error.dispatch, error.retriable) == (ErrorCode.TRANSPORT, Dispatch.NOT_SENT, True)


def test_connection_reset_mid_stream_was_accepted() -> None:
    def script(exchange: Exchange) -> None:
        exchange.send_head()
        exchange.send_event(delta_chunk("It might"))
        time.sleep(0.05)
        exchange.reset()

    with FaultServer(script) as server:
        error, events = fail(server.url)
    assert (error.code, error.dispatch, error.retriable) == (ErrorCode.TRANSPORT, Dispatch.ACCEPTED, True)
    assert events == [TextDelta("It might")]


def test_malformed_event_data_is_a_protocol_error() -> None:
    def script(exchange: Exchange) -> None:
        exchange.send_head()
        exchange.send_event("{this is not json")
        exchange.wait_for_disconnect()

    with FaultServer(script) as server:
        error, _ = fail(server.url)
    assert (error.code, error.dispatch, error.retriable) == (ErrorCode.PROTOCOL, Dispatch.ACCEPTED, False)


def test_stream_silent_past_the_idle_limit_fails() -> None:
    def script(exchange: Exchange) -> None:
        exchange.send_head()
        exchange.send_event(delta_chunk("Let me"))
        exchange.wait_for_disconnect()

    with FaultServer(script) as server:
        started = time.monotonic()
        error, events = fail(server.url, idle_timeout_s=0.3)
        waited = time.monotonic() - started
    assert (error.code, error.dispatch, error.retriable) == (ErrorCode.DEADLINE, Dispatch.ACCEPTED, True)
    assert events == [TextDelta("Let me")]
    assert waited < 5


def test_stream_ending_inside_an_event_is_unknown_and_retriable() -> None:
    def script(exchange: Exchange) -> None:
        exchange.send_head()
        exchange.send_event(delta_chunk("Sunny"))
        exchange.send_chunk('data: {"choices": [{"index": 0, "delta": {"content": " and')
        exchange.end_chunks()

    with FaultServer(script) as server:
        error, events = fail(server.url)
    assert (error.code, error.dispatch, error.retriable) == (ErrorCode.PROTOCOL, Dispatch.UNKNOWN, True)
    assert events == [TextDelta("Sunny")]


def test_a_reply_that_is_not_an_event_stream_is_a_protocol_error() -> None:
    def script(exchange: Exchange) -> None:
        exchange.respond(200, {"choices": [{"message": {"content": "Hello"}}]})

    with FaultServer(script) as server:
        error, _ = fail(server.url)
    assert (error.code, error.dispatch, error.retriable) == (ErrorCode.PROTOCOL, Dispatch.ACCEPTED, False)
    assert "application/json" in str(error)
