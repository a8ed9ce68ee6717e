"""One connected client: its own bounded queue of events, sent in order; a slow reader is closed.

Publishing never waits on a client: an event that finds the queue full closes that client (code 1013,
try again later: a reconnect gets a fresh snapshot), and nobody else is affected.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

QUEUE_EVENTS = 500  # a page shows captions; this many unread events means it is not reading
BAD_FRAMES_IN_A_ROW = 10  # then a client is closed with 1008 (policy violation)
CLOSE_TOO_SLOW = 1013
CLOSE_BAD_FRAMES = 1008


class Client:
    """Events queued for one websocket and the task that sends them."""

    def __init__(self, connection: ServerConnection, queue_events: int = QUEUE_EVENTS) -> None:
        self.connection = connection
        self._queue: asyncio.Queue[str | bytes] = asyncio.Queue(queue_events)
        self._bad_in_a_row = 0
        self.closing = False
        self._sender = asyncio.create_task(self._send_all())

    def send(self, event: dict[str, Any]) -> None:
        """Queue an event; a full queue closes the client instead of waiting for it."""
        if self.closing:
            return
        try:
            self._queue.put_nowait(json.dumps(event, ensure_ascii=False))
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

    def bad_frame(self) -> bool:
        """Count a bad frame; True when the client has sent too many in a row and is being closed."""
        self._bad_in_a_row += 1
        if self._bad_in_a_row >= BAD_FRAMES_IN_A_ROW:
            self.close(CLOSE_BAD_FRAMES, f"{BAD_FRAMES_IN_A_ROW} bad frames in a row")
            return True
        return False

    def good_frame(self) -> None:
        self._bad_in_a_row = 0

    def close(self, code: int, reason: str) -> None:
        """Close with ``code`` without waiting here; what is still queued is dropped."""
        if self.closing:
            return
        self.closing = True
        self._sender.cancel()
        print(f"voice kiosk: closing a client ({code}): {reason}", file=sys.stderr, flush=True)
        asyncio.get_running_loop().create_task(self.connection.close(code, reason))

    async def finished(self) -> None:
        """Stop sending (the connection ended)."""
        self.closing = True
        self._sender.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._sender

    async def _send_all(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            while True:
                await self.connection.send(await self._queue.get())
