"""How much history fits in one request: the model's context minus the system prompt and the reply's room.

Pure. Token counts are a stated estimate (characters per token, plus a chat-template overhead per
message), kept on the safe side for English with the BPE tokenizers of small local models; a server
that still refuses a request as too large teaches the budget to shrink. The oldest exchanges go first
and go whole: an exchange is a user item with everything that answered it (assistant text, tool calls
and their results), so no tool result is ever sent without its call.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from voice.conversation.items import AssistantText, Item, ToolCall, ToolResult, UserText

CHARS_PER_TOKEN = 3.0  # English runs near 4 characters a token in BPE vocabularies; 3 leaves a margin
TOKENS_PER_ITEM = 8  # role markers and separators a chat template adds around each message
REFILL = 0.6  # after trimming, fill at most this share of the budget, so later requests share a prefix


@dataclass(frozen=True)
class ContextBudget:
    """Tokens the conversation (history and pending input) may take in one request."""

    tokens: int

    @classmethod
    def for_model(cls, context_tokens: int, reply_tokens: int, system_prompt: str) -> ContextBudget:
        """What is left of the model's context once the system prompt and the reply are provided for."""
        left = context_tokens - reply_tokens - estimate_tokens((UserText(system_prompt),))
        if left <= 0:
            raise ValueError(
                f"a context of {context_tokens} tokens leaves no room for a conversation after the system "
                f"prompt and {reply_tokens} reply tokens"
            )
        return cls(left)

    def shrunk(self, refused_tokens: int) -> ContextBudget:
        """The budget after the server refused a request estimated at ``refused_tokens`` as too large."""
        return replace(self, tokens=max(1, min(self.tokens, refused_tokens) * 3 // 4))


def estimate_tokens(items: Sequence[Item]) -> int:
    """The stated estimate of how many tokens ``items`` take in a chat request."""
    return sum(math.ceil(len(_text_of(item)) / CHARS_PER_TOKEN) + TOKENS_PER_ITEM for item in items)


def _text_of(item: Item) -> str:
    match item:
        case UserText(text=text) | AssistantText(text=text):
            return text
        case ToolCall(name=name, arguments=arguments):
            return f"{name}{arguments}"
        case ToolResult(output=output):
            return output


def first_kept(history: Sequence[Item], pending: Sequence[Item], budget: ContextBudget, start: int) -> int:
    """Where the request's history should begin, at or after ``start``, so that it fits ``budget``.

    Nothing moves while the request fits. Once it does not, whole exchanges are dropped from the front
    until it fills at most ``REFILL`` of the budget (the latest exchange may fill all of it); if even
    that does not fit, the request carries no history, so an overflow never fails every turn after it.
    """
    room = budget.tokens - estimate_tokens(pending)
    if estimate_tokens(history[start:]) <= room:
        return start
    starts = [i for i in range(start + 1, len(history)) if isinstance(history[i], UserText)]
    for candidate in starts:
        if estimate_tokens(history[candidate:]) <= room - budget.tokens * (1 - REFILL):
            return candidate
    if starts and estimate_tokens(history[starts[-1] :]) <= room:
        return starts[-1]
    return len(history)
