"""Every failure of docs/architecture.md §1 against a real loopback server: code, dispatch, retry class."""

from __future__ import annotations

import contextlib
import socket
import time
import traceback
from dataclasses import dataclass

import httpx
import pytest

from tests.support.fault_llm import Exchange, FaultServer, Script, delta_chunk, finish_chunk, replying
from voice.cancel import CancelToken
from voice.conversation.items import UserText
from voice.llm.errors import Dispatch, ErrorCode, LLMError
from voice.llm.openai_client import OpenAIChatModel
from voice.llm.port import ChatEvent, ChatRequest, TextDelta
from voice.llm.retry import RetryPolicy

API_KEY = "sk-test-5ecret-key-never-shown"
QUESTION = "Is it going to rain? my-private-question"
REQUEST = ChatRequest((UserText(QUESTION),))
EXHAUSTED_QUOTA = ["insufficient_quota", "billing_hard_limit_reached", "billing_not_active", "quota_exceeded"]


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


def answer_status(status: int, headers: dict[str, str] | None = None, code: str | None = None) -> Script:
    def script(exchange: Exchange) -> None:
        # Servers quote the key and the request in free-text messages; none of it may surface.
        message = f"bad key {API_KEY} for request {exchange.request.body.decode()}"
        error = {"message": message, "type": "scripted_error", **({"code": code} if code else {})}
        exchange.respond(status, {"error": error}, headers)

    return script


def reset_mid_stream(exchange: Exchange) -> None:
    exchange.send_head()
    exchange.send_event(delta_chunk("It might"))
    time.sleep(0.05)  # lets the delta reach the client before the reset discards unread data
    exchange.reset()


def end_inside_an_event(exchange: Exchange) -> None:
    exchange.send_head()
    exchange.send_event(delta_chunk("Sunny"))
    exchange.send_chunk('data: {"choices": [{"index": 0, "delta": {"content": " and')
    exchange.end_chunks()


@dataclass(frozen=True)
class Row:
    """One row of the failure table in voice/llm/failures.py; ``script`` None: nothing listens at the URL."""

    script: Script | None
    code: ErrorCode
    dispatch: Dispatch
    retriable: bool
    retry_after_s: float | None = None
    delivered: tuple[ChatEvent, ...] = ()


FAILURE_TABLE = {
    "400": Row(answer_status(400), ErrorCode.INVALID, Dispatch.REJECTED, False),
    "400 context_length_exceeded": Row(
        answer_status(400, code="context_length_exceeded"), ErrorCode.TOO_LARGE, Dispatch.REJECTED, False
    ),
    "401": Row(answer_status(401), ErrorCode.UNAUTHORIZED, Dispatch.REJECTED, False),
    "403": Row(answer_status(403), ErrorCode.UNAUTHORIZED, Dispatch.REJECTED, False),
    "408": Row(answer_status(408), ErrorCode.DEADLINE, Dispatch.UNKNOWN, True),
    "413": Row(answer_status(413), ErrorCode.TOO_LARGE, Dispatch.REJECTED, False),
    "429 Retry-After": Row(
        answer_status(429, {"retry-after": "2"}), ErrorCode.RATE_LIMITED, Dispatch.REJECTED, True, 2.0
    ),
    "429 insufficient_quota": Row(
        answer_status(429, code="insufficient_quota"), ErrorCode.REFUSED, Dispatch.REJECTED, False
    ),
    "429 billing_hard_limit_reached": Row(
        answer_status(429, code="billing_hard_limit_reached"), ErrorCode.REFUSED, Dispatch.REJECTED, False
    ),
    "500": Row(answer_status(500), ErrorCode.UNAVAILABLE, Dispatch.UNKNOWN, True),
    "501": Row(answer_status(501), ErrorCode.UNSUPPORTED, Dispatch.REJECTED, False),
    "502": Row(answer_status(502), ErrorCode.UNAVAILABLE, Dispatch.UNKNOWN, True),
    "503": Row(answer_status(503), ErrorCode.UNAVAILABLE, Dispatch.UNKNOWN, True),
    "503 x-should-retry false": Row(
        answer_status(503, {"x-should-retry": "false"}), ErrorCode.UNAVAILABLE, Dispatch.UNKNOWN, False
    ),
    "504": Row(answer_status(504), ErrorCode.DEADLINE, Dispatch.UNKNOWN, True),
    "connect refused": Row(None, ErrorCode.TRANSPORT, Dispatch.NOT_SENT, True),
    "reset mid-stream": Row(
        reset_mid_stream, ErrorCode.TRANSPORT, Dispatch.ACCEPTED, True, delivered=(TextDelta("It might"),)
    ),
    "ends inside an event": Row(
        end_inside_an_event, ErrorCode.PROTOCOL, Dispatch.UNKNOWN, True, delivered=(TextDelta("Sunny"),)
    ),
}


def unused_url() -> str:
    with socket.create_server(("127.0.0.1", 0)) as placeholder:
        port = placeholder.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def fail_with(script: Script | None) -> tuple[LLMError, list[ChatEvent]]:
    if script is None:
        return fail(unused_url())
    with FaultServer(script) as server:
        return fail(server.url)


@pytest.mark.parametrize("row", FAILURE_TABLE.values(), ids=FAILURE_TABLE.keys())
def test_every_failure_has_its_code_dispatch_and_retry_class(row: Row) -> None:
    error, events = fail_with(row.script)
    assert (error.code, error.dispatch, error.retriable, error.retry_after_s) == (
        row.code,
        row.dispatch,
        row.retriable,
        row.retry_after_s,
    )
    assert events == list(row.delivered)
    delay = RetryPolicy().delay_before_retry(error, 1, heard_anything=False)
    assert (delay is not None) is row.retriable
    if row.retry_after_s is not None:
        assert delay == row.retry_after_s


@pytest.mark.parametrize("status", [400, 401, 403, 408, 413, 429, 500, 501, 502, 503, 504])
def test_an_http_failure_names_its_status_and_the_servers_code(status: int) -> None:
    with FaultServer(answer_status(status)) as server:
        error, _ = fail(server.url)
    assert f"HTTP {status}" in str(error)
    assert "[scripted_error]" in str(error)


@pytest.mark.parametrize(
    ("status", "code"),
    [(400, None), (400, "context_length_exceeded"), (401, None), (403, None), (413, None)]
    + [(429, quota) for quota in EXHAUSTED_QUOTA],
)
def test_the_servers_retry_mark_cannot_make_a_final_answer_retriable(status: int, code: str | None) -> None:
    with FaultServer(answer_status(status, {"x-should-retry": "true"}, code)) as server:
        error, _ = fail(server.url)
    assert not error.retriable
    assert RetryPolicy().delay_before_retry(error, 1, heard_anything=False) is None


def test_the_servers_retry_mark_is_honoured_where_asking_again_can_help() -> None:
    with FaultServer(answer_status(501, {"x-should-retry": "true"})) as server:
        error, _ = fail(server.url)
    assert (error.code, error.retriable) == (ErrorCode.UNSUPPORTED, True)


def test_an_exhausted_quota_says_so() -> None:
    with FaultServer(answer_status(429, code="insufficient_quota")) as server:
        error, _ = fail(server.url)
    assert "quota" in str(error)


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
        error, events = fail(server.url, idle_timeout_s=0.3)
        assert server.disconnected.wait(timeout=5)
    assert (error.code, error.dispatch, error.retriable) == (ErrorCode.DEADLINE, Dispatch.ACCEPTED, True)
    assert "went silent for 0.3 s" in str(error)
    assert events == [TextDelta("Let me")]


def test_no_first_byte_within_the_idle_limit_fails() -> None:
    def thinking_in_silence(exchange: Exchange) -> None:
        exchange.wait_for_disconnect()

    with FaultServer(thinking_in_silence) as server:
        error, events = fail(server.url, idle_timeout_s=0.3)
        assert server.disconnected.wait(timeout=5)
    assert (error.code, error.dispatch, error.retriable) == (ErrorCode.DEADLINE, Dispatch.UNKNOWN, True)
    assert "no response for 0.3 s" in str(error)
    assert events == []


def test_no_connection_within_the_connect_limit_was_never_sent() -> None:
    with socket.create_server(("127.0.0.1", 0), backlog=0) as listener:
        port = listener.getsockname()[1]
        queued = []  # never accepted: once the accept queue is full, Linux ignores further handshakes
        for _ in range(3):
            waiting = socket.socket()
            waiting.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                waiting.connect(("127.0.0.1", port))
            queued.append(waiting)
        with (
            OpenAIChatModel(f"http://127.0.0.1:{port}/v1", "test-model", connect_timeout_s=0.3) as model,
            pytest.raises(LLMError) as raised,
        ):
            list(model.stream(REQUEST, CancelToken()))
        for waiting in queued:
            waiting.close()
    error = raised.value
    assert (error.code, error.dispatch, error.retriable) == (ErrorCode.DEADLINE, Dispatch.NOT_SENT, True)
    assert "no connection" in str(error)


def test_by_default_a_request_may_take_15_s_to_connect_and_180_s_between_bytes() -> None:
    sent: list[httpx.Request] = []
    with (
        FaultServer(replying(delta_chunk("Hi."), finish_chunk())) as server,
        httpx.Client(event_hooks={"request": [sent.append]}) as http,
        OpenAIChatModel(server.url, "test-model", http_client=http) as model,
    ):
        list(model.stream(REQUEST, CancelToken()))
    (request,) = sent
    assert request.extensions["timeout"] == {"connect": 15.0, "read": 180.0, "write": 180.0, "pool": 180.0}


def test_a_reply_that_is_not_an_event_stream_is_a_protocol_error() -> None:
    def script(exchange: Exchange) -> None:
        exchange.respond(200, {"choices": [{"message": {"content": "Hello"}}]})

    with FaultServer(script) as server:
        error, _ = fail(server.url)
    assert (error.code, error.dispatch, error.retriable) == (ErrorCode.PROTOCOL, Dispatch.ACCEPTED, False)
    assert "application/json" in str(error)
