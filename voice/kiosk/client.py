"""One connected client: its own bounded queue of events, sent in order; a slow reader is closed.

Publishing never waits on a client: an event that finds the queue full closes that client (code 1013,
try again later: a reconnect gets a fresh snapshot), and nobody else is affected. What the client
sends is limited too: bad frames in a row, and commands over its rate (``limits``), close it with 1008.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from voice.client_events import event_json
from voice.kiosk.limits import REFUSALS, CommandLimits, TokenBucket
from voice.kiosk.protocol import Command

QUEUE_EVENTS = 500  # a page shows captions; this many unread events means it is not reading
BAD_FRAMES_IN_A_ROW = 10  # then a client is closed with 1008 (policy violation)
CLOSE_TOO_SLOW = 1013
CLOSE_BAD_FRAMES = 1008
CLOSE_FLOODING = 1008
DRAIN_S = 2.0  # a client closed for what it sent has this long to take the errors queued before the close


class Client:
    """Events queued for one websocket, the task that sends them, and what the client may send."""

    def __init__(
        self,
        connection: ServerConnection,
        everyone: TokenBucket,
        queue_events: int = QUEUE_EVENTS,
        burst: bool = True,
    ) -> None:
        self.connection = connection
        self._queue: asyncio.Queue[str | bytes | None] = asyncio.Queue(queue_events)  # None: close
        self._bad_in_a_row = 0
        self._limits = CommandLimits(everyone, burst=burst)
        self.closing = False
        self.flooding = False  # closed for flooding
        self._sender = asyncio.create_task(self._send_all())
        self._closer: asyncio.Task[None] | None = None

    def send(self, event: dict[str, Any]) -> None:
        """Queue an event for this client alone."""
        self.send_text(json.dumps(event, ensure_ascii=False))

    def send_text(self, text: str) -> None:
        """Queue an event already in JSON (a broadcast encodes once for all); a full queue closes the
        client instead of waiting for it."""
        if self.closing:
            return
        try:
            self._queue.put_nowait(text)
        except asyncio.QueueFull:
            self.close(CLOSE_TOO_SLOW, f"too slow: {self._queue.maxsize} events unread")

    def send_audio(self, pcm: bytes) -> None:
        """Queue reply audio for the talking page (``--audio websocket``), in line with its events."""
        if self.closing:
            return
        try:
            self._queue.put_nowait(pcm)
        except asyncio.QueueFull:
            self.close(CLOSE_TOO_SLOW, f"too slow: {self._queue.maxsize} frames unread")

    def admit(self, command: Command) -> bool:
        """True if ``command`` is within the rates; else it is dropped with a ``rate_limited`` error,
        and a client refused too often is closed as flooding."""
        refused = self._limits.admit(command)
        if refused is None:
            return True
        self.send(event_json(refused))
        if self._limits.refused():
            self.flooding = True
            self.close(
                CLOSE_FLOODING, f"flooding: over {REFUSALS.burst} commands refused for their rate", drain=True
            )
        return False

    def bad_frame(self) -> bool:
        """Count a bad frame; True when the client has sent too many in a row and is being closed."""
        self._bad_in_a_row += 1
        if self._bad_in_a_row >= BAD_FRAMES_IN_A_ROW:
            self.close(CLOSE_BAD_FRAMES, f"{BAD_FRAMES_IN_A_ROW} bad frames in a row", drain=True)
            return True
        return False

    def good_frame(self) -> None:
        self._bad_in_a_row = 0

    def close(self, code: int, reason: str, drain: bool = False) -> None:
        """Close with ``code`` without waiting here. What is still queued is dropped, or with ``drain``
        sent first (for up to ``DRAIN_S``): the errors that say what the client did wrong."""
        if self.closing:
            return
        self.closing = True
        print(f"voice kiosk: closing a client ({code}): {reason}", file=sys.stderr, flush=True)
        if drain:
            with contextlib.suppress(asyncio.QueueFull):
                self._queue.put_nowait(None)
                self._closer = asyncio.get_running_loop().create_task(self._close_drained(code, reason))
                return
        self._sender.cancel()
        self._closer = asyncio.get_running_loop().create_task(self.connection.close(code, reason))

    async def finished(self) -> None:
        """The connection's last frame came: let a close under way end, then stop sending."""
        if self._closer is not None:
            await self._closer
        self.closing = True
        self._sender.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._sender

    async def _close_drained(self, code: int, reason: str) -> None:
        await asyncio.wait({self._sender}, timeout=DRAIN_S)
        self._sender.cancel()
        await self.connection.close(code, reason)

    async def _send_all(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            while (item := await self._queue.get()) is not None:
                await self.connection.send(item)
