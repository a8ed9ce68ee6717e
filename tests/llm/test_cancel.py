"""A cancel from another thread cuts the stream wherever it waits; the server sees the connection close."""

from __future__ import annotations

import threading

from tests.support.fault_llm import Exchange, FaultServer, delta_chunk, finish_chunk, replying
from voice.cancel import CancelToken
from voice.conversation.items import UserText
from voice.llm.openai_client import OpenAIChatModel
from voice.llm.port import CANCELLED, ChatEvent, ChatRequest, Finished, TextDelta

REQUEST = ChatRequest((UserText("Tell me a long story."),))


class StreamInThread:
    """Runs one stream in a worker thread, as the drivers do."""

    def __init__(self, model: OpenAIChatModel, cancel: CancelToken) -> None:
        self.events: list[ChatEvent] = []
        self.first_event = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(model, cancel))
        self._thread.start()

    def _run(self, model: OpenAIChatModel, cancel: CancelToken) -> None:
        for event in model.stream(REQUEST, cancel):
            self.events.append(event)
            self.first_event.set()

    def ended(self) -> bool:
        """Whether the stream returned (a guard against hanging; the servers below never end it)."""
        self._thread.join(timeout=10)
        return not self._thread.is_alive()


# The servers below never send another byte, and the idle limit (180 s) is far away: only the cancel can
# end these streams. How fast it does is measured in benchmarks/llm_latency.py.


def test_cancel_mid_stream_ends_the_stream_and_closes_the_connection() -> None:
    def story_that_stalls(exchange: Exchange) -> None:
        exchange.send_head()
        exchange.send_event(delta_chunk("Once"))
        exchange.wait_for_disconnect(timeout=60)

    with FaultServer(story_that_stalls) as server, OpenAIChatModel(server.url, "test-model") as model:
        cancel = CancelToken()
        stream = StreamInThread(model, cancel)
        assert stream.first_event.wait(timeout=10)
        cancel.cancel("user spoke")
        assert stream.ended()
        assert server.disconnected.wait(timeout=5)
    assert stream.events == [TextDelta("Once"), Finished(CANCELLED)]


def test_cancel_before_the_response_head_ends_the_stream_and_closes_the_connection() -> None:
    received = threading.Event()

    def thinking_forever(exchange: Exchange) -> None:
        received.set()
        exchange.wait_for_disconnect(timeout=60)

    with FaultServer(thinking_forever) as server, OpenAIChatModel(server.url, "test-model") as model:
        cancel = CancelToken()
        stream = StreamInThread(model, cancel)
        assert received.wait(timeout=10)
        cancel.cancel()
        assert stream.ended()
        assert server.disconnected.wait(timeout=5)
    assert stream.events == [Finished(CANCELLED)]


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
