"""The ``ChatModel`` port: one streamed LLM attempt, as the engine sees it.

A call is a synchronous iterator meant to run in a worker thread; the cancel token, fired from any
thread, makes it end promptly with ``Finished(reason="cancelled")``. Failures raise
:class:`voice.llm.errors.LLMError`. One call is one attempt: retrying is the caller's decision.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias

from voice.cancel import CancelToken
from voice.conversation.items import Item, ToolCall
from voice.llm.prompt import SPEECH_SYSTEM_PROMPT

CANCELLED = "cancelled"


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model may call; ``parameters`` is its JSON Schema."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})


@dataclass(frozen=True)
class ChatSettings:
    """Per-request generation settings; ``None`` leaves the server's default."""

    system_prompt: str = SPEECH_SYSTEM_PROMPT
    temperature: float | None = None
    max_tokens: int | None = None


@dataclass(frozen=True)
class ChatRequest:
    """One request: the conversation so far (system prompt left out), tools and settings.

    ``turn`` is the engine's number for the turn it answers; servers never see it (a script does).
    """

    items: tuple[Item, ...]
    tools: tuple[ToolSpec, ...] = ()
    settings: ChatSettings = ChatSettings()
    turn: int = 0


@dataclass(frozen=True)
class Usage:
    """Token counts, when the server reports them."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ToolCallStarted:
    """The model began a tool call; its arguments follow as fragments."""

    index: int
    id: str
    name: str


@dataclass(frozen=True)
class ToolCallArguments:
    index: int
    fragment: str


@dataclass(frozen=True)
class ToolCallReady:
    """A tool call fully assembled, with arguments that parsed as a JSON object."""

    call: ToolCall


@dataclass(frozen=True)
class Finished:
    """The last event of every call: the server's stop reason, or ``"cancelled"``."""

    reason: str
    usage: Usage | None = None


ChatEvent: TypeAlias = TextDelta | ToolCallStarted | ToolCallArguments | ToolCallReady | Finished


class ChatModel(Protocol):
    def stream(self, request: ChatRequest, cancel: CancelToken) -> Iterator[ChatEvent]:
        """Stream one attempt; ends with ``Finished`` or raises ``LLMError``."""
        ...


class TokenCounter(Protocol):
    def count(self, request: ChatRequest) -> int:
        """Prompt tokens ``request`` takes: system prompt, messages, tools and the reply's primer."""
        ...


class SizedChatModel(ChatModel, Protocol):
    """A chat model that says how much fits: its context window and a way to count a request."""

    @property
    def context_tokens(self) -> int | None:
        """The context window in tokens (prompt and reply together), or None when unknown."""
        ...

    @property
    def token_counter(self) -> TokenCounter: ...
