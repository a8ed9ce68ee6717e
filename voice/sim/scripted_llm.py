"""The scenario's scripted model: one reply per request, streamed word by word in virtual time."""

from __future__ import annotations

import heapq
import itertools
import re
from dataclasses import dataclass

from voice.conversation.continuation import Request
from voice.conversation.items import ToolCall, ToolResult
from voice.engine.events import EngineEvent, LlmDone, LlmText, LlmToolCall
from voice.errors import ConfigError
from voice.sim.scenario import ScriptedLlm, ScriptedToolCall

_DELTA = re.compile(r"\s*\S+")


@dataclass(frozen=True)
class TimedEvent:
    """An engine event due ``delay_ms`` after the request went out."""

    delay_ms: float
    event: EngineEvent


class ScriptedThinker:
    """Hands out the scenario's replies in request order, as timed deltas, tool calls and a finish.

    The driver collects what is due with :meth:`due`; a cancelled turn's events are withdrawn.
    """

    def __init__(self, script: ScriptedLlm, rate: int) -> None:
        self._script = script
        self._rate = rate
        self._requests = 0
        self._order = itertools.count()
        self._timed: list[tuple[int, int, EngineEvent]] = []  # (due sample, order, event)
        self.now = 0

    def send(self, request: Request, delay_s: float) -> None:
        if self._requests >= len(self._script.replies):
            raise ConfigError(
                f"the scenario scripts {len(self._script.replies)} replies but the assistant made "
                f"request {self._requests + 1}"
            )
        reply = self._script.replies[self._requests]
        self._requests += 1
        start = self.now + round(delay_s * self._rate)
        for timed in self._reply_events(request.turn, reply.text, reply.tool_calls):
            heapq.heappush(
                self._timed,
                (start + round(timed.delay_ms * self._rate / 1000), next(self._order), timed.event),
            )

    def _reply_events(self, turn: int, text: str, calls: tuple[ScriptedToolCall, ...]) -> list[TimedEvent]:
        at = self._script.first_delta_ms
        events: list[TimedEvent] = []
        for delta in _DELTA.findall(text):
            events.append(TimedEvent(at, LlmText(turn, delta)))
            at += self._script.delta_ms
        for index, call in enumerate(calls):
            events.append(
                TimedEvent(at, LlmToolCall(turn, ToolCall(f"call_{turn}_{index}", call.name, call.arguments)))
            )
        events.append(TimedEvent(at, LlmDone(turn)))
        return events

    def due(self, clock: int) -> list[EngineEvent]:
        """Events due by ``clock``, in order."""
        events = []
        while self._timed and self._timed[0][0] <= clock:
            events.append(heapq.heappop(self._timed)[2])
        return events

    def cancel(self, turn: int) -> None:
        self._timed = [entry for entry in self._timed if getattr(entry[2], "turn", None) != turn]
        heapq.heapify(self._timed)

    def run_tool(self, call: ToolCall) -> ToolResult:
        """The scripted tool's output, or a failure for a tool the scenario does not define."""
        if call.name in self._script.tools:
            return ToolResult(call.id, self._script.tools[call.name])
        return ToolResult(call.id, f"Failed: no tool named {call.name!r}.", failed=True)
