"""Conversation items: what was said and done, in the shape the report, the log and the LLM all use."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from voice.errors import ConfigError


@dataclass(frozen=True)
class UserText:
    """Something the user said (the transcript, possibly merged from several utterances)."""

    text: str


@dataclass(frozen=True)
class AssistantText:
    """Assistant speech; when ``interrupted``, ``text`` is exactly what the user heard."""

    text: str
    interrupted: bool = False


@dataclass(frozen=True)
class ToolCall:
    """A complete tool call the model proposed."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolResult:
    """The outcome of one tool call; ``failed`` results say why in ``output``."""

    id: str
    output: str
    failed: bool = False


Item: TypeAlias = UserText | AssistantText | ToolCall | ToolResult

NOT_RUN_INTERRUPTED = "Not run: the user interrupted."
ABANDONED_RUNNING = "Abandoned: the user moved on while it ran, so it may have taken effect."


def item_to_json(item: Item) -> dict[str, Any]:
    """The item as a JSON object (the shape of report.json's ``request`` entries)."""
    match item:
        case UserText(text=text):
            return {"role": "user", "text": text}
        case AssistantText(text=text, interrupted=interrupted):
            data: dict[str, Any] = {"role": "assistant", "text": text}
            if interrupted:
                data["interrupted"] = True
            return data
        case ToolCall(id=call_id, name=name, arguments=arguments):
            return {"role": "tool_call", "id": call_id, "name": name, "arguments": arguments}
        case ToolResult(id=call_id, output=output, failed=failed):
            data = {"role": "tool_result", "id": call_id, "output": output}
            if failed:
                data["failed"] = True
            return data


def item_from_json(data: Any) -> Item:
    """Parse one item written by :func:`item_to_json`; a malformed one is a one-line ConfigError."""
    try:
        role = data["role"]
        if role == "user":
            return UserText(_str(data["text"]))
        if role == "assistant":
            return AssistantText(_str(data["text"]), bool(data.get("interrupted", False)))
        if role == "tool_call":
            arguments = data.get("arguments", {})
            if not isinstance(arguments, dict):
                raise TypeError("arguments must be an object")
            return ToolCall(_str(data["id"]), _str(data["name"]), arguments)
        if role == "tool_result":
            return ToolResult(_str(data["id"]), _str(data["output"]), bool(data.get("failed", False)))
    except (KeyError, TypeError) as exc:
        raise ConfigError(f"malformed conversation item {json.dumps(data)[:120]}: {exc}") from exc
    raise ConfigError(f"unknown conversation item role {role!r}")


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def to_openai_messages(
    items: list[Item] | tuple[Item, ...], system_prompt: str | None = None
) -> list[dict[str, Any]]:
    """Chat-completions messages: assistant text and the tool calls after it share one assistant message."""
    messages: list[dict[str, Any]] = []
    if system_prompt:
        messages.append({"role": "system", "content": system_prompt})
    for item in items:
        match item:
            case UserText(text=text):
                messages.append({"role": "user", "content": text})
            case AssistantText(text=text):
                messages.append({"role": "assistant", "content": text})
            case ToolCall():
                call = {
                    "id": item.id,
                    "type": "function",
                    "function": {"name": item.name, "arguments": json.dumps(item.arguments)},
                }
                last = messages[-1] if messages else None
                if last is not None and last["role"] == "assistant":
                    last.setdefault("tool_calls", []).append(call)
                else:
                    messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            case ToolResult(id=call_id, output=output):
                messages.append({"role": "tool", "tool_call_id": call_id, "content": output})
    return messages
