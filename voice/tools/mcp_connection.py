"""One MCP server as the toolbox holds it: started over stdio or reached over streamable HTTP, its tools
listed, its calls made, and, after it dies, started again with backoff for later calls.

Everything here runs on the toolbox's asyncio loop. Each connection lives in a task of its own, because
the SDK's transports and sessions must be entered and left by the same task.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import IO, Any, TextIO, cast

import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT, CallToolResult, Tool

from voice.tools.mcp_results import result_text
from voice.tools.mcp_settings import McpServerSettings

START_TIMEOUT_S = 20.0  # at least: a server may take longer to start than one of its calls may run
FIRST_RESTART_S = 0.5
LAST_RESTART_S = 30.0
TIMED_OUT = "Failed: timed out; it may have taken effect."


class ServerDown(Exception):
    """The server is not running (it failed to start, or died and is not back yet)."""


@dataclass(frozen=True)
class CallOutcome:
    """What one call came to: the text for the conversation, and whether it failed."""

    output: str
    failed: bool = False


class McpConnection:
    """One configured server. ``start`` connects (or raises with why); ``call`` runs one tool."""

    def __init__(self, settings: McpServerSettings, environ: Mapping[str, str]) -> None:
        self.settings = settings
        self._environ = environ
        self._session: ClientSession | None = None
        self._lost: asyncio.Event = asyncio.Event()  # tells the holding task to let the connection go
        self._holder: asyncio.Task[None] | None = None
        self._restarter: asyncio.Task[None] | None = None
        self._closing = False
        self.down_because = "not started"
        self._settled = asyncio.Event()  # the latest (re)start attempt ended, either way
        self.restarts = 0

    @property
    def name(self) -> str:
        return self.settings.name

    async def start(self) -> list[Tool]:
        """Connect and list the tools (within 20 s, or the timeout if longer); ServerDown says why not."""
        ready: asyncio.Future[ClientSession] = asyncio.get_running_loop().create_future()
        self._lost = asyncio.Event()
        self._holder = asyncio.create_task(self._hold(ready, self._lost), name=f"mcp-{self.name}")
        limit = max(self.settings.timeout_s, START_TIMEOUT_S)
        try:
            async with asyncio.timeout(limit):
                session = await asyncio.shield(ready)
                listed = await session.list_tools()
        except Exception as exc:
            await self._let_go()
            self._settled.set()
            raise ServerDown(_why(exc, limit)) from exc
        self._session = session
        self._settled.set()
        return listed.tools

    async def call(self, tool: str, arguments: dict[str, Any], timeout_s: float) -> CallOutcome:
        """Run ``tool``; a dead server fails this call clearly and is started again for later ones."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        with contextlib.suppress(TimeoutError):  # a restart under way may bring it back in time
            await asyncio.wait_for(self._settled.wait(), timeout_s)
        session = self._session
        if session is None:
            why = self.down_because
            return CallOutcome(f"Failed: the {self.name} tool server is not running ({why}).", True)
        try:
            left = max(0.01, deadline - loop.time())
            result = await session.call_tool(tool, arguments, read_timeout_seconds=left)
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                return CallOutcome(TIMED_OUT, True)
            if exc.code == CONNECTION_CLOSED:
                self._connection_lost(session, "it stopped during a call")
                return CallOutcome(
                    f"Failed: the {self.name} tool server stopped during the call; it may have taken effect.",
                    True,
                )
            return CallOutcome(f"Failed: {exc.message}", True)
        if not isinstance(result, CallToolResult):
            return CallOutcome("Failed: the server answered in a form voice cannot read.", True)
        text = result_text(result)
        return CallOutcome(f"Failed: {text}" if result.is_error else text, result.is_error)

    async def close(self) -> None:
        """Let the connection go for good (a stdio server's process ends)."""
        self._closing = True
        if self._restarter is not None:
            self._restarter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._restarter
        await self._let_go()

    # -- the connection's life --------------------------------------------------------------------

    async def _hold(self, ready: asyncio.Future[ClientSession], lost: asyncio.Event) -> None:
        """Enter the transport and session, hand the session over, and keep them until ``lost``."""
        with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as file:
            errlog = cast(TextIO, file)  # the server's stderr: its last line says why it failed
            try:
                async with self._transport(errlog) as (read, write), ClientSession(read, write) as session:
                    await session.initialize()
                    ready.set_result(session)
                    await lost.wait()
            except Exception as exc:
                if not ready.done():
                    ready.set_exception(_StartFailed(_why(exc, START_TIMEOUT_S), _last_line(errlog)))

    @contextlib.asynccontextmanager
    async def _transport(self, errlog: TextIO) -> AsyncIterator[Any]:
        settings = self.settings
        if settings.command is not None:
            params = StdioServerParameters(
                command=settings.command[0], args=list(settings.command[1:]), env=dict(settings.env) or None
            )
            async with stdio_client(params, errlog=errlog) as streams:
                yield streams
            return
        assert settings.url is not None
        headers = {header: self._environ.get(variable, "") for header, variable in settings.headers_env}
        timeout = httpx2.Timeout(settings.timeout_s, read=max(300.0, settings.timeout_s))
        async with (
            httpx2.AsyncClient(headers=headers, timeout=timeout) as client,
            streamable_http_client(settings.url, http_client=client) as streams,
        ):
            yield streams

    def _connection_lost(self, session: ClientSession, why: str) -> None:
        """The server died: later calls wait for it to be started again, with backoff."""
        if self._session is not session or self._closing:
            return
        self._session = None
        self.down_because = why
        self._settled.clear()
        self._lost.set()
        self._restarter = asyncio.create_task(self._restart(), name=f"mcp-{self.name}-restart")

    async def _restart(self) -> None:
        delay = FIRST_RESTART_S
        while not self._closing:
            await asyncio.sleep(delay)
            await self._let_go()
            try:
                await self.start()
            except ServerDown as exc:
                self.down_because = f"restarting failed: {exc}"  # calls fail at once while it keeps trying
                delay = min(delay * 2, LAST_RESTART_S)
                continue
            self.restarts += 1
            return

    async def _let_go(self) -> None:
        self._session = None
        self._lost.set()
        holder, self._holder = self._holder, None
        if holder is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(holder, 10.0)  # past that it is cancelled: a stuck start goes too


class _StartFailed(Exception):
    def __init__(self, why: str, stderr: str) -> None:
        super().__init__(f"{why} ({stderr})" if stderr else why)


def _why(exc: BaseException, timeout_s: float) -> str:
    """One line saying why a server did not start."""
    if isinstance(exc, _StartFailed | ServerDown):
        return str(exc)
    if isinstance(exc, TimeoutError):
        return f"no answer within {timeout_s:g} s"
    if isinstance(exc, BaseExceptionGroup):
        return _why(exc.exceptions[0], timeout_s)
    if isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED:
        return "it exited before answering"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return (f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__).splitlines()[0]


def _last_line(errlog: IO[str]) -> str:
    """The last line the server wrote on stderr: usually what went wrong."""
    errlog.flush()
    errlog.seek(0)
    lines = [line.strip() for line in errlog.read().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""
