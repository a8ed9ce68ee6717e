"""The user's input as the session knows it: its id, whether it came before, and what the stream hears of it.

Spoken input gets an id from the engine, typed input may bring its own; an id seen before (in the
conversation, or held while a reply's tools run) is a duplicate that starts and cancels nothing
(docs/architecture.md §1).
"""

from __future__ import annotations

from voice.client_events import InputStop, InputTranscript, StreamEvent
from voice.conversation.continuation import Conversation
from voice.engine.tool_runs import HeldInput


def fresh_id(prefix: str, conversation: Conversation, held: HeldInput) -> str:
    """An id for input that came without one, unique over the session's whole log (resumes included)."""
    return f"{prefix}{conversation.inputs + len(held) + 1}"


def seen(input_id: str, conversation: Conversation, held: HeldInput) -> bool:
    """The input came before: the conversation has it, or holds it while a reply's tools run."""
    return conversation.has_seen(input_id) or input_id in held


def told_input(
    input_id: str, text: str, pending: str | None, t: float, *, stop: bool = False
) -> list[StreamEvent]:
    """What the stream hears of the user's words: their transcript after the input still ``pending``
    before them, and, for a stop phrase, that they stopped the reply."""
    words = text.strip()
    told: list[StreamEvent] = [InputTranscript(input_id, words, pending, t)]
    if stop:
        told.append(InputStop(input_id, words, t))
    return told
