"""An MCP tool result as the text the conversation keeps: what a voice assistant can read back.

Text content goes in as it is; structured content as JSON text (unless a text block already carries
it); images, audio and binary resources cannot be spoken, so they are left out with a short note.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.types import (
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)


def result_text(result: CallToolResult) -> str:
    """The result's readable content, one block a line; a failed result is the server's message only."""
    parts: list[str] = []
    left_out: list[str] = []
    for block in result.content:
        match block:
            case TextContent(text=text):
                parts.append(text)
            case EmbeddedResource(resource=TextResourceContents(text=text)):
                parts.append(text)
            case ResourceLink(uri=uri, name=name):
                parts.append(f"{name}: {uri}")
            case ImageContent():
                left_out.append("an image")
            case AudioContent():
                left_out.append("audio")
            case _:
                left_out.append("a binary resource")
    structured = result.structured_content
    if structured is not None and not result.is_error and not _carried(structured, parts):
        parts.append(json.dumps(structured, ensure_ascii=False))
    if left_out:
        parts.append(f"({' and '.join(dict.fromkeys(left_out))} left out: it cannot be read aloud)")
    return "\n".join(parts)


def _carried(structured: Any, parts: list[str]) -> bool:
    """Whether a text block already carries the structured content: servers send both for older
    clients, and wrap a plain return value as ``{"result": value}``."""
    if isinstance(structured, dict) and set(structured) == {"result"} and structured["result"] in parts:
        return True
    for text in parts:
        try:
            if json.loads(text) == structured:
                return True
        except ValueError:
            continue
    return False
