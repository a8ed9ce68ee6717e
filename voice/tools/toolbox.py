"""The tools of every configured MCP server: offered to the LLM as tool specifications, run for the engine.

The engine's tool worker calls synchronously (``voice.runtime.Tools``); the MCP sessions live on one
asyncio loop in a thread the toolbox owns. A server that fails to start costs only its own tools.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import re
import sys
import threading
from collections import Counter
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from voice.cancel import CancelToken
from voice.conversation.items import ABANDONED_RUNNING, ToolCall, ToolResult
from voice.llm.port import ToolSpec
from voice.tools.mcp_settings import McpServerSettings

if TYPE_CHECKING:  # the MCP SDK takes a second to import: it loads when a server is configured
    from mcp.types import Tool

    from voice.tools.mcp_connection import CallOutcome, McpConnection

CLOSE_WAIT_S = 15.0  # shutting down: cancel notifications sent and processes ended within this
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")
_T = TypeVar("_T")

# The SDK's own warnings (a session that could not be ended politely, ...) are not for the user's terminal:
# the toolbox says in one line what matters. An application that configures logging still gets them.
logging.getLogger("mcp").addHandler(logging.NullHandler())


def say_on_stderr(line: str) -> None:
    print(f"voice: {line}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class _Route:
    """Where a name the LLM sees leads: a server's tool."""

    connection: McpConnection
    tool: str


class McpToolbox:
    """Every configured MCP server, started on entry and stopped on exit; call it as the engine's tools.

    ``failures`` holds one line per server that did not start, for the caller to show (the event
    stream's ``error`` events); ``say`` prints what else is worth a log line (abandoned calls).
    """

    def __init__(
        self,
        servers: Sequence[McpServerSettings],
        environ: Mapping[str, str] | None = None,
        say: Callable[[str], None] = say_on_stderr,
    ) -> None:
        self._servers = tuple(s for s in servers if s.tools != ())  # an empty allow-list: nothing to start
        self._environ = os.environ if environ is None else environ
        self._say = say
        self.specs: tuple[ToolSpec, ...] = ()
        self.failures: tuple[str, ...] = ()
        self._routes: dict[str, _Route] = {}
        self._connections: list[McpConnection] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._running: dict[concurrent.futures.Future[CallOutcome], str] = {}  # calls under way: what
        self._tasks: set[asyncio.Task[Any]] = set()  # the same calls, on the loop

    # -- start and stop ---------------------------------------------------------------------------

    def __enter__(self) -> McpToolbox:
        self.open()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def open(self) -> None:
        """Start every server and list its tools; each that fails is one line in ``failures``, left out."""
        if not self._servers:
            return
        from voice.tools.mcp_connection import McpConnection

        loop = self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=loop.run_forever, name="voice-mcp", daemon=True)
        self._thread.start()
        self._connections = [McpConnection(server, self._environ) for server in self._servers]
        listed = self._on_loop(self._start_all()).result()
        failures: list[str] = []
        offered: list[tuple[McpConnection, Tool]] = []
        for connection, tools in zip(self._connections, listed, strict=True):
            if isinstance(tools, str):
                failures.append(f"MCP server {connection.name} did not start: {tools}; going on without it")
                continue
            offered += self._allowed(connection, tools)
        self.failures = tuple(failures)
        self._offer(offered)

    def close(self) -> None:
        """Cancel the calls still running (their servers get MCP's cancel notification); stop the servers."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        with self._lock:
            running = list(self._running.items())
        for future, what in running:
            if future.cancel():
                self._say(f"{what} abandoned at shutdown; its server was told to cancel it")
        try:
            self._on_loop(self._close_all()).result(CLOSE_WAIT_S)
        except concurrent.futures.TimeoutError:
            self._say(f"MCP servers still closing after {CLOSE_WAIT_S:g} s; leaving them")
        loop.call_soon_threadsafe(loop.stop)
        thread.join(CLOSE_WAIT_S)
        if not thread.is_alive():
            loop.close()
        self._loop = self._thread = None

    # -- calls ------------------------------------------------------------------------------------

    def __call__(self, call: ToolCall, cancel: CancelToken) -> ToolResult:
        """Run one call the model made (on the engine's tool worker); cancelling abandons it."""
        route = self._routes.get(call.name)
        if route is None or self._loop is None:
            return ToolResult(call.id, f"Failed: no tool named {call.name!r}.", failed=True)
        timeout_s = route.connection.settings.timeout_s
        future = self._on_loop(self._tracked(route.connection.call(route.tool, call.arguments, timeout_s)))
        what = f"tool {call.name} ({route.connection.name})"
        with self._lock:
            self._running[future] = what

        def abandon(reason: str) -> None:  # the turn was let go (a reset, or the user moved on too long ago)
            if future.cancel():
                self._say(f"{what} abandoned; its server was told to cancel it")

        unsubscribe = cancel.on_cancel(abandon)
        try:
            outcome = future.result(timeout_s + CLOSE_WAIT_S)  # the call's own timeout ends it first
        except concurrent.futures.CancelledError:
            return ToolResult(call.id, ABANDONED_RUNNING, failed=True)
        except concurrent.futures.TimeoutError:
            from voice.tools.mcp_connection import TIMED_OUT

            future.cancel()
            return ToolResult(call.id, TIMED_OUT, failed=True)
        finally:
            unsubscribe()
            with self._lock:
                self._running.pop(future, None)
        return ToolResult(call.id, outcome.output, failed=outcome.failed)

    def restarts(self, server: str) -> int:
        """How often ``server`` was started again after dying."""
        return sum(c.restarts for c in self._connections if c.name == server)

    # -- on the loop ------------------------------------------------------------------------------

    def _on_loop(self, coroutine: Coroutine[Any, Any, _T]) -> concurrent.futures.Future[_T]:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)

    async def _tracked(self, coroutine: Coroutine[Any, Any, _T]) -> _T:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            return await coroutine
        finally:
            self._tasks.discard(task)

    async def _start_all(self) -> list[list[Tool] | str]:
        """Each server's tools, or why it did not start."""
        return list(await asyncio.gather(*(self._start(c) for c in self._connections)))

    async def _start(self, connection: McpConnection) -> list[Tool] | str:
        from voice.tools.mcp_connection import ServerDown

        missing = [var for _, var in connection.settings.headers_env if var not in self._environ]
        if missing:
            return f"environment variable {missing[0]} (for a header) is not set"
        try:
            return await connection.start()
        except ServerDown as exc:
            return str(exc)

    async def _close_all(self) -> None:
        if self._tasks:  # cancelled calls send their cancel notification before the sessions go
            await asyncio.wait(list(self._tasks), timeout=2.0)
        await asyncio.gather(*(c.close() for c in self._connections), return_exceptions=True)

    # -- what the model is offered ----------------------------------------------------------------

    def _allowed(self, connection: McpConnection, tools: list[Tool]) -> list[tuple[McpConnection, Tool]]:
        allow = connection.settings.tools
        if allow is None:
            return [(connection, tool) for tool in tools]
        names = {tool.name for tool in tools}
        for name in allow:
            if name not in names:
                self._say(f"MCP server {connection.name} offers no tool {name!r} (named in its tools list)")
        return [(connection, tool) for tool in tools if tool.name in allow]

    def _offer(self, offered: list[tuple[McpConnection, Tool]]) -> None:
        """Tool specifications for the model; a name two servers offer is qualified by each server's name."""
        counts = Counter(tool.name for _, tool in offered)
        specs: list[ToolSpec] = []
        for connection, tool in offered:
            name = tool.name if counts[tool.name] == 1 else f"{connection.name}__{tool.name}"
            name = _NAME_CHARS.sub("_", name)[:64]
            self._routes[name] = _Route(connection, tool.name)
            parameters = dict(tool.input_schema) or {"type": "object", "properties": {}}
            specs.append(ToolSpec(name, tool.description or tool.title or tool.name, parameters))
        self.specs = tuple(specs)
