"""A stand-in OpenAI-compatible LLM on loopback that calls tools: ``tool_calling_llm.py PORT``.

The bundled SmolLM2-135M cannot call tools through llama.cpp's streaming API, so tests and demos of
MCP tools use this. Asked about an order with a number while ``lookup_order`` (or any offered tool
ending in ``lookup_order``) is offered, it streams that call (``slow_lookup`` for an order in the
archive); given a tool result, it streams an answer built from the result. Otherwise it says what it
can do.
"""

from __future__ import annotations

import json
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def reply_to(body: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """(text, tool call) answering the request's messages."""
    messages = body["messages"]
    last = messages[-1]
    if last["role"] == "tool":
        return f"I looked it up. {last['content']}", None
    offered = [tool["function"]["name"] for tool in body.get("tools", [])]
    asked = str(last.get("content", ""))
    wanted = "slow_lookup" if "archive" in asked else "lookup_order"
    lookup = next((name for name in offered if name.endswith(wanted)), None)
    number = re.search(r"\d+", asked)
    if last["role"] == "user" and lookup and number:
        arguments: dict[str, Any] = {"order_id": number.group()}
        if wanted == "slow_lookup":
            arguments["seconds"] = 60
        return "Let me look that up.", {"name": lookup, "arguments": json.dumps(arguments)}
    return "I can look up an order if you tell me its number.", None


def chunks(model: str, text: str, call: dict[str, Any] | None) -> list[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "stand-in",
            "object": "chat.completion.chunk",
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    out = [chunk({"role": "assistant"})]
    out += [chunk({"content": word}) for word in re.findall(r"\s*\S+", text)]
    if call is not None:
        tool_call = {"index": 0, "id": "call_1", "type": "function", "function": call}
        out.append(chunk({"tool_calls": [tool_call]}))
    out.append(chunk({}, "tool_calls" if call else "stop"))
    return out


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text, call = reply_to(body)
        said = call or text
        print(f"stand-in LLM: {len(body['messages'])} messages -> {said!r}", file=sys.stderr, flush=True)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for piece in chunks(body.get("model", "stand-in"), text, call):
            self.wfile.write(f"data: {json.dumps(piece)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")

    def log_message(self, format: str, *args: Any) -> None:
        pass


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
