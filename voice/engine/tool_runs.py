"""Running a reply's tools once it has played, and the user input that waits for them.

A tool that already runs is never reported as not run (docs/architecture.md §1.3): input the user
gives meanwhile is held until its real result comes, or until it has run too long and is abandoned
with a result that says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from voice.client_events import StreamEvent, ToolCalled
from voice.conversation.continuation import Conversation
from voice.conversation.items import ABANDONED_RUNNING, ToolCall, ToolResult
from voice.engine.actions import EngineAction, RunTool

TOOL_WAIT_LIMIT_S = 10.0  # how long a running tool's real result is awaited after the user moved on


@dataclass
class ToolRun:
    """One reply's tools: whether they started, which still run, and when the user moved on."""

    started: bool = False
    waiting: set[str] = field(default_factory=set)
    cut_at: int | None = None  # the user moved on at this sample while the tools ran

    def start(
        self, turn: int, calls: tuple[ToolCall, ...], t: float
    ) -> tuple[list[StreamEvent], list[EngineAction]]:
        """Run the calls the reply ``turn`` proposed: what the stream hears, and the runs to start."""
        self.started = True
        self.waiting = {call.id for call in calls}
        told: list[StreamEvent] = [ToolCalled(turn, call.id, call.name, call.arguments, t) for call in calls]
        return told, [RunTool(turn, call) for call in calls]

    def finished(self, call_id: str) -> None:
        self.waiting.discard(call_id)

    def note_cut(self, sample: int) -> None:
        """The user moved on at ``sample`` (the first time counts)."""
        self.cut_at = self.cut_at if self.cut_at is not None else sample

    def overdue(self, sample: int, rate: int) -> bool:
        """The user moved on and the tools ran past the limit since."""
        return self.cut_at is not None and sample - self.cut_at >= TOOL_WAIT_LIMIT_S * rate

    def abandon(self) -> list[ToolResult]:
        """Failed results, saying so, for the tools still running; none waits any more."""
        results = [ToolResult(call_id, ABANDONED_RUNNING, failed=True) for call_id in sorted(self.waiting)]
        self.waiting.clear()
        return results


class HeldInput:
    """What the user said (or typed) while a turn's tools ran: (text, input id, whether it was a stop
    phrase), oldest first."""

    def __init__(self) -> None:
        self._items: list[tuple[str, str, bool]] = []

    def hold(self, text: str, input_id: str, *, stop: bool = False) -> None:
        self._items.append((text, input_id, stop))

    def __contains__(self, input_id: object) -> bool:
        return any(input_id == held for _, held, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def deliver(self, conversation: Conversation) -> bool:
        """Hand what was held to ``conversation``, oldest first; True if the last of it was a stop phrase
        (then nothing is asked until the user speaks again)."""
        items, self._items = self._items, []
        for index, (text, input_id, stop) in enumerate(items):
            if stop and index == len(items) - 1:
                conversation.stop(text, input_id)
                return True
            conversation.receive(text, input_id)
        return False
