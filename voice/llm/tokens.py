"""How many prompt tokens a chat request takes, so a conversation can be trimmed to the model's context.

``ServerTokenCounter`` asks llama-cpp-python's server (``POST /extras/tokenize/count``, the model's own
tokenizer with special tokens parsed) to count the request rendered in ChatML, the template of SmolLM2
and of many other instruct models: ``<|im_start|>ROLE\\nCONTENT<|im_end|>\\n`` per message, then
``<|im_start|>assistant\\n`` for the reply. For a ChatML model this is exactly the ``prompt_tokens`` the
server reports; other templates differ by a few tokens per message. ``EstimatedTokenCounter`` is for
servers without a tokenizer: characters / 4 rounded up per message, plus ``MESSAGE_OVERHEAD_TOKENS``.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable
from typing import Any

import httpx

from voice.conversation.items import to_openai_messages
from voice.llm.port import ChatRequest

MESSAGE_OVERHEAD_TOKENS = 5  # ChatML's <|im_start|>, the role, "\n", <|im_end|>, "\n"
REPLY_PRIMER_TOKENS = 3  # <|im_start|>assistant\n, which the reply follows
CHARS_PER_TOKEN = 4  # English text with a BPE vocabulary of 30-100k tokens
_TOKENIZE_TIMEOUT_S = 10.0

log = logging.getLogger(__name__)


def _request_messages(request: ChatRequest) -> list[tuple[str, str]]:
    """(role, text) of every message the request sends; tool calls and the tool list count as text."""
    messages = [
        (message["role"], _message_text(message))
        for message in to_openai_messages(request.items, request.settings.system_prompt)
    ]
    if request.tools:
        tools = [
            {"name": t.name, "description": t.description, "parameters": t.parameters} for t in request.tools
        ]
        messages.insert(0, ("system", json.dumps(tools)))
    return messages


def _message_text(message: dict[str, Any]) -> str:
    calls = [json.dumps(call["function"]) for call in message.get("tool_calls", ())]
    return "\n".join(filter(None, [message.get("content") or "", *calls]))


class EstimatedTokenCounter:
    """A stated estimate for servers without a tokenizer: ceil(characters / 4) + 5 per message + 3."""

    def count(self, request: ChatRequest) -> int:
        return REPLY_PRIMER_TOKENS + sum(
            math.ceil(len(text) / CHARS_PER_TOKEN) + MESSAGE_OVERHEAD_TOKENS
            for _, text in _request_messages(request)
        )


class ServerTokenCounter:
    """Counts with the tokenizer of a llama-cpp-python server whose root URL ``server_root()`` gives.

    A callable, because the embedded server may come back on another port after a restart. When the
    server cannot answer, the count is the estimate: a budget must never stop a turn.
    """

    def __init__(self, server_root: Callable[[], str], http_client: httpx.Client) -> None:
        self._server_root = server_root
        self._http = http_client
        self._estimate = EstimatedTokenCounter()

    def count(self, request: ChatRequest) -> int:
        prompt = "".join(
            f"<|im_start|>{role}\n{text}<|im_end|>\n" for role, text in _request_messages(request)
        )
        prompt += "<|im_start|>assistant\n"
        try:
            response = self._http.post(
                f"{self._server_root()}/extras/tokenize/count",
                json={"input": prompt},
                timeout=_TOKENIZE_TIMEOUT_S,
            )
            response.raise_for_status()
            count = response.json()["count"]
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
            log.warning(
                "the LLM server's tokenizer did not answer (%s); estimating instead", type(exc).__name__
            )
            return self._estimate.count(request)
        if not isinstance(count, int):
            return self._estimate.count(request)
        return count
