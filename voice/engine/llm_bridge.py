"""Turns one streamed LLM attempt into engine events (drivers run this in a worker thread)."""

from __future__ import annotations

from collections.abc import Iterator

from voice.cancel import CancelToken
from voice.conversation.continuation import Request
from voice.engine.inputs import EngineInput, LlmDone, LlmFailed, LlmText, LlmToolCall
from voice.llm.errors import LLMError
from voice.llm.port import (
    CANCELLED,
    ChatModel,
    ChatRequest,
    ChatSettings,
    Finished,
    TextDelta,
    ToolCallReady,
    ToolSpec,
)


def stream_turn(
    model: ChatModel,
    request: Request,
    cancel: CancelToken,
    settings: ChatSettings,
    tools: tuple[ToolSpec, ...] = (),
) -> Iterator[EngineInput]:
    """Engine events for one attempt at ``request``, offering ``tools``; none once the turn is cancelled."""
    try:
        chat_request = ChatRequest(request.items, tools, settings, request.turn)
        for event in model.stream(chat_request, cancel):
            if cancel.cancelled:
                return
            match event:
                case TextDelta(text=text) if text:
                    yield LlmText(request.turn, text)
                case ToolCallReady(call=call):
                    yield LlmToolCall(request.turn, call)
                case Finished(reason=reason) if reason != CANCELLED:
                    yield LlmDone(request.turn)
    except LLMError as error:
        if not cancel.cancelled:
            yield LlmFailed(request.turn, error)
