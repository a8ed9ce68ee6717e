"""A scripted OpenAI-compatible chat server on loopback, for benchmarks whose subject is not the model.

It streams a fixed reply per question (chosen by the question's text, so both runs of a before/after
get the same words), word by word with ``delta_s`` between deltas, over real HTTP with server-sent
events, as llama.cpp's server does. The kiosk soak uses it so that 2,000 turns take minutes of
reply playback, not hours of SmolLM2 on a shared CPU.
"""

from __future__ import annotations

import json
import re
import threading
import time
import zlib
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

SHORT_REPLIES = (
    "Foxes are small wild dogs.",
    "Red, green and blue.",
    "Cats mostly eat meat.",
    "Spring is mild and wet.",
    "A boat sailed home at dusk.",
    "Sunlight scatters off the air.",
)


def short_reply(question: str) -> str:
    """The same short reply for the same question in every run (``hash`` is salted per process)."""
    return SHORT_REPLIES[zlib.crc32(question.encode()) % len(SHORT_REPLIES)]


class StandInLlm:
    """``with StandInLlm(reply) as llm:`` serves ``llm.url`` until the block ends; counts requests.

    ``reply`` answers the latest user message; the first delta comes ``first_delta_s`` after the request.
    """

    def __init__(
        self, reply: Callable[[str], str] = short_reply, first_delta_s: float = 0.0, delta_s: float = 0.01
    ) -> None:
        self.requests = 0
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stand_in.requests += 1
                question = next(
                    (str(m.get("content")) for m in reversed(body["messages"]) if m["role"] == "user"), ""
                )
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                time.sleep(first_delta_s)
                try:
                    for piece in _chunks(reply(question)):
                        self.wfile.write(f"data: {json.dumps(piece)}\n\n".encode())
                        self.wfile.flush()
                        time.sleep(delta_s)
                    self.wfile.write(b"data: [DONE]\n\n")
                except OSError:
                    pass  # the client cut the stream (a stop): nothing more to send

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


def _chunks(text: str) -> list[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "stand-in",
            "object": "chat.completion.chunk",
            "model": "stand-in",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    return [
        chunk({"role": "assistant"}),
        *(chunk({"content": word}) for word in re.findall(r"\s*\S+", text)),
        chunk({}, "stop"),
    ]
