"""The scenario's scripted model and tools: one reply per request, streamed word by word in virtual time."""

from __future__ import annotations

import re
from collections.abc import Iterator

from voice.cancel import CancelToken
from voice.conversation.items import ToolCall, ToolResult
from voice.errors import ConfigError
from voice.llm.errors import Dispatch, ErrorCode, LLMError
from voice.llm.port import ChatEvent, ChatRequest, Finished, TextDelta, ToolCallReady
from voice.runtime import Tools
from voice.sim.scenario import ScriptedLlm
from voice.sim.virtual_clock import VirtualClock

# docs/architecture.md §1: how a failure of each code may be retried, and how far a request failed early got.
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


class ScriptedChatModel:
    """A ChatModel streaming the scenario's replies in request order, word by word on the room's clock.

    A script that runs out of replies is the scenario's mistake, not a model failure: it is kept in
    ``error`` for the room to raise.
    """

    def __init__(self, script: ScriptedLlm, clock: VirtualClock) -> None:
        self._script = script
        self._clock = clock
        self._requests = 0
        self._latest: tuple[int, int] | None = None  # (turn, reply) of the request streamed last
        self.error: ConfigError | None = None

    def stream(self, request: ChatRequest, cancel: CancelToken) -> Iterator[ChatEvent]:
        if cancel.cancelled:  # cut before it began: it takes no reply
            return
        if self._requests >= len(self._script.replies):
            self.error = ConfigError(
                f"the scenario scripts {len(self._script.replies)} replies but the assistant made "
                f"request {self._requests + 1}"
            )
            raise self.error
        number = self._requests
        reply = self._script.replies[number]
        self._requests += 1
        self._latest = (request.turn, number)
        start = self._clock.now
        at = self._script.first_delta_ms
        deltas = _DELTA.findall(reply.text)
        for delta in deltas:
            if not self._clock.sleep_until(start + self._samples(at), cancel):
                return
            yield TextDelta(delta)
            at += self._script.delta_ms
        if reply.fail is not None:
            if self._clock.sleep_until(start + self._samples(at + reply.fail_after_ms), cancel):
                raise _failure(reply.fail, deltas)
            return
        if not self._clock.sleep_until(start + self._samples(at), cancel):
            return
        for index, call in enumerate(reply.tool_calls):
            yield ToolCallReady(ToolCall(f"call_{number + 1}_{index}", call.name, call.arguments))
        yield Finished("stop")

    def discard(self, turn: int) -> None:
        """A discarded preemptive request takes no reply (docs/architecture.md §4); the next one gets it."""
        if self._latest is not None and self._latest[0] == turn:
            self._requests, self._latest = self._latest[1], None

    def _samples(self, ms: float) -> int:
        return round(ms * self._clock.rate / 1000)


class ScriptedTools:
    """The scenario's tools: each answers its scripted output after its virtual run time.

    A call the script does not name goes to ``others`` (the MCP servers), if given.
    """

    def __init__(self, script: ScriptedLlm, clock: VirtualClock, others: Tools | None = None) -> None:
        self._script = script
        self._clock = clock
        self._others = others

    def __call__(self, call: ToolCall, cancel: CancelToken) -> ToolResult:
        tool = self._script.tools.get(call.name)
        if tool is None and self._others is not None:
            return self._others(call, cancel)
        if tool is None:
            return ToolResult(call.id, f"Failed: no tool named {call.name!r}.", failed=True)
        if tool.ms:
            self._clock.sleep_until(self._clock.now + round(tool.ms * self._clock.rate / 1000), cancel)
        return ToolResult(call.id, tool.result)


def _failure(code: ErrorCode, deltas: list[str]) -> LLMError:
    """The scripted error as a real client would report it: after text the server had accepted it."""
    dispatch = Dispatch.ACCEPTED if deltas else Dispatch.REJECTED if code in _REJECTED else Dispatch.UNKNOWN
    return LLMError(code, dispatch, f"scripted {code.value} failure", retriable=code in _RETRIABLE)
