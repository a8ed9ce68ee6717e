"""A cancel cuts the stream at once, from another thread, and the server sees the connection close."""

from __future__ import annotations

import threading
import time

from tests.llm.fault_server import Exchange, FaultServer, delta_chunk, finish_chunk, replying
from voice.cancel import CancelToken
from voice.conversation.items import UserText
from voice.llm.openai_client import OpenAIChatModel
from voice.llm.port import CANCELLED, ChatEvent, ChatRequest, Finished, TextDelta

REQUEST = ChatRequest((UserText("Tell me a long story."),))


class StreamInThread:
    """Runs one stream in a worker thread, as the drivers do, noting when each event arrived."""

    def __init__(self, model: OpenAIChatModel, cancel: CancelToken) -> None:
        self.events: list[ChatEvent] = []
        self.ended_at: float | None = None
        self.first_event = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(model, cancel))
        self._thread.start()

    def _run(self, model: OpenAIChatModel, cancel: CancelToken) -> None:
        for event in model.stream(REQUEST, cancel):
            self.events.append(event)
            self.first_event.set()
        self.ended_at = time.monotonic()

    def join(self) -> None:
        self._thread.join(timeout=10)


def test_cancel_mid_stream_returns_promptly_and_closes_the_connection() -> None:
    def slow_story(exchange: Exchange) -> None:
        exchange.send_head()
        for word in ["Once", " upon", " a", " time"]:
            exchange.send_event(delta_chunk(word))
            if exchange.wait_for_disconnect(timeout=2.0):  # far slower than the test would wait
                return

    with FaultServer(slow_story) as server, OpenAIChatModel(server.url, "test-model") as model:
        cancel = CancelToken()
        stream = StreamInThread(model, cancel)
        assert stream.first_event.wait(timeout=10)
        cancelled_at = time.monotonic()
        cancel.cancel("user spoke")
        stream.join()
        assert server.disconnected.wait(timeout=5)
    assert stream.events == [TextDelta("Once"), Finished(CANCELLED)]
    assert stream.ended_at is not None
    assert stream.ended_at - cancelled_at < 0.5  # the benchmark measures it precisely; the target is 50 ms
    assert server.disconnected_at is not None
    assert server.disconnected_at - cancelled_at < 1.0


def test_cancel_before_the_response_head_returns_promptly_and_closes_the_connection() -> None:
    received = threading.Event()

    def thinking_forever(exchange: Exchange) -> None:
        received.set()
        exchange.wait_for_disconnect()

    with FaultServer(thinking_forever) as server, OpenAIChatModel(server.url, "test-model") as model:
        cancel = CancelToken()
        stream = StreamInThread(model, cancel)
        assert received.wait(timeout=10)
        cancelled_at = time.monotonic()
        cancel.cancel()
        stream.join()
        assert server.disconnected.wait(timeout=5)
    assert stream.events == [Finished(CANCELLED)]
    assert stream.ended_at is not None
    assert stream.ended_at - cancelled_at < 0.5


def test_cancel_wins_a_tie_with_completion() -> None:
    whole_reply_at_once = replying(delta_chunk("Yes."), finish_chunk())
    cancel = CancelToken()
    events: list[ChatEvent] = []
    with FaultServer(whole_reply_at_once) as server, OpenAIChatModel(server.url, "test-model") as model:
        for event in model.stream(REQUEST, cancel):
            events.append(event)
            cancel.cancel()  # the user cut in while the reply's end was already on its way
    assert events == [TextDelta("Yes."), Finished(CANCELLED)]


def test_an_already_cancelled_token_sends_nothing() -> None:
    def unexpected(exchange: Exchange) -> None:
        exchange.respond(500, {})

    cancel = CancelToken()
    cancel.cancel()
    with FaultServer(unexpected) as server, OpenAIChatModel(server.url, "test-model") as model:
        events = list(model.stream(REQUEST, cancel))
    assert events == [Finished(CANCELLED)]
    assert server.requests == []
