"""The scenario's scripted model: one reply per request, streamed word by word in virtual time."""

from __future__ import annotations

import heapq
import itertools
import re
from dataclasses import dataclass

from voice.conversation.continuation import Request
from voice.conversation.items import ToolCall, ToolResult
from voice.engine.events import EngineEvent, LlmDone, LlmFailed, LlmText, LlmToolCall, ToolDone
from voice.errors import ConfigError
from voice.llm.errors import Dispatch, ErrorCode, LLMError
from voice.runtime import Work
from voice.sim.scenario import ScriptedLlm, ScriptedReply

# Design §1: what a failure with each code may be retried as, and how far a request that failed early got.
_RETRIABLE = {ErrorCode.TRANSPORT, ErrorCode.PROTOCOL, ErrorCode.RATE_LIMITED, ErrorCode.UNAVAILABLE}
_REJECTED = {
    ErrorCode.INVALID,
    ErrorCode.UNAUTHORIZED,
    ErrorCode.RATE_LIMITED,
    ErrorCode.REFUSED,
    ErrorCode.TOO_LARGE,
    ErrorCode.UNSUPPORTED,
}

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

    def __init__(self, script: ScriptedLlm, rate: int, work: Work) -> None:
        self._script = script
        self._rate = rate
        self._work = work
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
        for timed in self._reply_events(request.turn, reply):
            self._at(start, timed)

    def _at(self, start: int, timed: TimedEvent) -> None:
        heapq.heappush(
            self._timed, (start + round(timed.delay_ms * self._rate / 1000), next(self._order), timed.event)
        )

    def _reply_events(self, turn: int, reply: ScriptedReply) -> list[TimedEvent]:
        at = self._script.first_delta_ms
        events: list[TimedEvent] = []
        deltas = _DELTA.findall(reply.text)
        for delta in deltas:
            events.append(TimedEvent(at, LlmText(turn, delta)))
            at += self._script.delta_ms
        if reply.fail is not None:
            return [
                *events,
                TimedEvent(at + reply.fail_after_ms, LlmFailed(turn, _failure(reply.fail, deltas))),
            ]
        for index, call in enumerate(reply.tool_calls):
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

    def run_tool(self, turn: int, call: ToolCall) -> None:
        """The scripted tool's output after its virtual run time, or a failure for an unknown tool."""
        tool = self._script.tools.get(call.name)
        if tool is None:
            result = ToolResult(call.id, f"Failed: no tool named {call.name!r}.", failed=True)
        else:
            result = ToolResult(call.id, tool.result)
        if tool is None or not tool.ms:
            self._work.inbox.put(ToolDone(turn, result))
        else:
            self._at(self.now, TimedEvent(tool.ms, ToolDone(turn, result)))


def _failure(code: ErrorCode, deltas: list[str]) -> LLMError:
    """The scripted error as a real client would report it: after text the server had accepted it."""
    dispatch = Dispatch.ACCEPTED if deltas else Dispatch.REJECTED if code in _REJECTED else Dispatch.UNKNOWN
    return LLMError(code, dispatch, f"scripted {code.value} failure", retriable=code in _RETRIABLE)
