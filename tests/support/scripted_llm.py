"""An OpenAI-compatible LLM on loopback that streams a scripted reply chosen by the user's last words.

It answers ``GET /v1/models`` as real servers do (health checks ask it) and streams each reply word by
word over server-sent events, ``delta_s`` apart, so a reply takes long enough to be talked over.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from tests.support.fault_llm import Exchange, FaultServer, delta_chunk, finish_chunk

MODELS = {"object": "list", "data": [{"id": "scripted", "object": "model"}]}


def scripted_llm(reply: Callable[[str], str], delta_s: float = 0.04) -> FaultServer:
    """``reply(last user message)`` is the text streamed back; use as a context manager."""

    def script(exchange: Exchange) -> None:
        request = exchange.request
        if request.method == "GET":
            exchange.respond(200, MODELS)
            return
        messages = request.json()["messages"]
        question = next((str(m.get("content")) for m in reversed(messages) if m["role"] == "user"), "")
        exchange.send_head()
        for word in reply(question).split():
            exchange.send_event(delta_chunk(word + " "))
            time.sleep(delta_s)
        exchange.send_event(finish_chunk())
        exchange.send_event("[DONE]")
        exchange.end_chunks()

    return FaultServer(script)
