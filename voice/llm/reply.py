"""Turn the chunks of a streamed chat completion into ``ChatEvent``s, assembling tool calls.

Pure: it is fed decoded JSON chunks and knows nothing of HTTP. Reasoning fields are ignored on purpose:
only text and complete tool calls may cross into a conversation (docs/architecture.md §1.4).
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from voice.conversation.items import ToolCall
from voice.llm.errors import Dispatch, ErrorCode, LLMError
from voice.llm.port import (
    ChatEvent,
    Finished,
    TextDelta,
    ToolCallArguments,
    ToolCallReady,
    ToolCallStarted,
    Usage,
)

_IDENTIFIER = re.compile(r"[A-Za-z0-9_.\-]{1,64}")


def server_error_code(payload: Any) -> str | None:
    """The short machine code of an OpenAI-style error object, if it is a plain identifier.

    Free-text error messages are never shown: servers echo request fields (even the whole body)
    in them, and some quote part of the API key.
    """
    error = payload.get("error") if isinstance(payload, dict) else None
    if not isinstance(error, dict):
        return None
    for key in ("code", "type"):
        value = error.get(key)
        if isinstance(value, str) and _IDENTIFIER.fullmatch(value):
            return value
    return None


def _protocol_error(detail: str, *, retriable: bool = False) -> LLMError:
    return LLMError(ErrorCode.PROTOCOL, Dispatch.ACCEPTED, detail, retriable=retriable)


@dataclass
class _PendingCall:
    index: int
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)

    @property
    def started(self) -> bool:
        """A call is announced as soon as its name is known."""
        return bool(self.name)


class ReplyAssembler:
    """Feed it each decoded chunk; it returns the events that chunk completes."""

    def __init__(self) -> None:
        self._calls: dict[int, _PendingCall] = {}
        self._finish_reason: str | None = None
        self._usage: Usage | None = None

    @property
    def finish_reason(self) -> str | None:
        """The stop reason the server gave so far (None until it sends one)."""
        return self._finish_reason

    def feed(self, chunk: Any) -> list[ChatEvent]:
        if not isinstance(chunk, dict):
            raise _protocol_error("a stream event is not a JSON object")
        if "error" in chunk:
            code = server_error_code(chunk)
            suffix = f" [{code}]" if code else ""
            raise LLMError(
                ErrorCode.UNAVAILABLE,
                Dispatch.ACCEPTED,
                f"the server reported an error in the middle of the reply{suffix}",
                retriable=True,
            )
        usage = chunk.get("usage")
        if usage is not None:
            self._usage = _parse_usage(usage)
        choices = chunk.get("choices", [])
        if not isinstance(choices, list):
            raise _protocol_error("a stream event has 'choices' that is not a list")
        events: list[ChatEvent] = []
        for choice in choices:
            if not isinstance(choice, dict):
                raise _protocol_error("a stream event has a choice that is not an object")
            if choice.get("index", 0) != 0:
                continue  # only one completion is ever asked for
            events.extend(self._feed_choice(choice))
        return events

    def finish(self) -> list[ChatEvent]:
        """The stream's end marker arrived: complete every tool call, then ``Finished``."""
        events: list[ChatEvent] = [ToolCallReady(self._complete(call)) for call in self._ordered_calls()]
        events.append(Finished(self._finish_reason or "stop", self._usage))
        return events

    def _feed_choice(self, choice: dict[str, Any]) -> list[ChatEvent]:
        events: list[ChatEvent] = []
        delta = choice.get("delta") or {}
        if not isinstance(delta, dict):
            raise _protocol_error("a stream event has a 'delta' that is not an object")
        content = delta.get("content")
        if content is not None and not isinstance(content, str):
            raise _protocol_error("a stream event has 'content' that is not text")
        if content:
            events.append(TextDelta(content))
        fragments = delta.get("tool_calls") or []
        if not isinstance(fragments, list):
            raise _protocol_error("a stream event has 'tool_calls' that is not a list")
        for position, fragment in enumerate(fragments):
            events.extend(self._feed_tool_fragment(position, fragment))
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            self._finish_reason = reason
        return events

    def _feed_tool_fragment(self, position: int, fragment: Any) -> list[ChatEvent]:
        if not isinstance(fragment, dict):
            raise _protocol_error("a tool call fragment is not an object")
        index = fragment.get("index", position)
        function = fragment.get("function") or {}
        if not isinstance(index, int) or not isinstance(function, dict):
            raise _protocol_error("a tool call fragment has no usable index or function")
        call = self._calls.setdefault(index, _PendingCall(index))
        call_id, name, arguments = fragment.get("id"), function.get("name"), function.get("arguments")
        if arguments is not None and not isinstance(arguments, str):
            raise _protocol_error("a tool call fragment has arguments that are not text")
        was_started = call.started
        if isinstance(call_id, str) and call_id and not call.id:
            call.id = call_id
        if isinstance(name, str) and name and not call.name:
            call.name = name
        events: list[ChatEvent] = []
        if arguments:
            call.arguments.append(arguments)
            if was_started:
                events.append(ToolCallArguments(index, arguments))
        if call.started and not was_started:
            call.id = call.id or f"call_{uuid.uuid4().hex[:24]}"
            events.append(ToolCallStarted(index, call.id, call.name))
            if call.arguments:
                events.append(ToolCallArguments(index, "".join(call.arguments)))
        return events

    def _ordered_calls(self) -> list[_PendingCall]:
        return [self._calls[index] for index in sorted(self._calls)]

    @staticmethod
    def _complete(call: _PendingCall) -> ToolCall:
        if not call.started:
            raise _protocol_error(f"tool call {call.index} ended without a name")
        text = "".join(call.arguments).strip() or "{}"
        try:
            arguments = json.loads(text)
        except json.JSONDecodeError:
            arguments = None
        if not isinstance(arguments, dict):
            # The model wrote the arguments; another sample may get them right.
            raise _protocol_error(
                f"tool call {call.name!r} has arguments that are not a JSON object", retriable=True
            )
        return ToolCall(call.id, call.name, arguments)


def _parse_usage(usage: Any) -> Usage:
    if not isinstance(usage, dict):
        raise _protocol_error("a stream event has 'usage' that is not an object")
    prompt, completion = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
    total = usage.get("total_tokens", None)
    if not isinstance(prompt, int) or not isinstance(completion, int) or not isinstance(total, int | None):
        raise _protocol_error("a stream event has token counts that are not integers")
    return Usage(prompt, completion, prompt + completion if total is None else total)
