"""A client that is a kiosk's microphone and speaker (``--audio websocket``), as the talking page is.

It sends 20 ms frames of 16 kHz s16le on its own clock (silence, or the recording it was asked to say),
takes the reply audio back and reports each piece played at once (a speaker without latency), and keeps
every event the kiosk sends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from voice.audio.wav import read_wav

RATE = 16000
FRAME = 320  # 20 ms, as the page sends
AUDIO = Path(__file__).resolve().parents[2] / "audio"


def recording(name: str) -> np.ndarray:
    """A fixture from audio/ at 16 kHz."""
    return np.asarray(read_wav(AUDIO / name, RATE).samples, dtype=np.float32)


class TalkingPage:
    """``async with TalkingPage(ws):`` sends and receives until the block ends."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.received = 0  # reply samples received and reported played
        self.events: list[dict[str, Any]] = []
        self._arrived = asyncio.Event()
        self._speech: np.ndarray | None = None
        self._spoken = 0
        self._said = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    async def __aenter__(self) -> TalkingPage:
        self._done = asyncio.Event()
        self._tasks = [asyncio.create_task(self._send_frames()), asyncio.create_task(self._receive())]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._done.set()
        await self.ws.close()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def say(self, samples: np.ndarray) -> None:
        """Speak ``samples`` into the kiosk's microphone; returns once they are all sent."""
        self._said.clear()
        self._speech, self._spoken = samples, 0
        await self._said.wait()

    async def wait_for(self, wanted: Callable[[dict[str, Any]], bool], seconds: float = 90) -> dict[str, Any]:
        """The first event so far (or to come) that is ``wanted``."""
        async with asyncio.timeout(seconds):
            while True:
                for event in self.events:
                    if wanted(event):
                        return event
                self._arrived.clear()
                await self._arrived.wait()

    async def wait_for_audio(self, samples: int, seconds: float = 90) -> None:
        """Until ``samples`` more reply samples have been received."""
        target = self.received + samples
        async with asyncio.timeout(seconds):
            while self.received < target:
                self._arrived.clear()
                await self._arrived.wait()

    async def _send_frames(self) -> None:
        loop = asyncio.get_running_loop()
        due = loop.time()
        with contextlib.suppress(ConnectionClosed):
            while not self._done.is_set():
                frame = np.zeros(FRAME, dtype=np.float32)
                speech = self._speech
                if speech is not None:
                    piece = speech[self._spoken : self._spoken + FRAME]
                    frame[: len(piece)] = piece
                    self._spoken += FRAME
                    if self._spoken >= len(speech):
                        self._speech = None
                        self._said.set()
                await self.ws.send((np.clip(frame, -1, 1) * 32767).astype("<i2").tobytes())
                due += FRAME / RATE
                await asyncio.sleep(max(0.0, due - loop.time()))

    async def _receive(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for message in self.ws:
                if isinstance(message, bytes):
                    self.received += len(message) // 2
                    await self.ws.send(json.dumps({"type": "playback.position", "samples": self.received}))
                else:
                    self.events.append(json.loads(message))
                self._arrived.set()
