"""A real `voice kiosk` on loopback, as a subprocess, and a real websockets client to talk to it."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection

UNREACHABLE_LLM = ["--llm-url", "http://127.0.0.1:9/v1", "--llm-model", "unused"]


STOP_S = 10.0  # SIGTERM must end it within a few seconds


class Kiosk:
    """A running `voice kiosk`: its port, its session folder, and everything it printed so far."""

    def __init__(self, process: subprocess.Popen[str], sessions: Path) -> None:
        self.process = process
        self.sessions = sessions
        self.lines: list[str] = []
        self._started = threading.Event()
        self.port = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if not self._started.wait(240) or not self.port:
            self.stop()
            raise AssertionError(f"voice kiosk did not start: {''.join(self.lines)}")

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line)
            found = re.match(r"kiosk: http://[^ ]+:(\d+)/", line)
            if found:
                self.port = int(found.group(1))
                self._started.set()
        self._started.set()

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def output(self) -> str:
        return "".join(self.lines)

    def wait_for_line(self, wanted: str, timeout: float = 60) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if any(wanted in line for line in self.lines):
                return
            time.sleep(0.05)
        raise AssertionError(f"{wanted!r} never came: {self.output()}")

    def stop(self) -> int:
        """SIGTERM, as systemd stops it; returns the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=STOP_S)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
        self._reader.join(5)
        if self.process.stdout is not None:
            self.process.stdout.close()
        return code


@contextmanager
def running_kiosk(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Kiosk]:
    sessions = tmp_path / "sessions"
    environ = {name: value for name, value in os.environ.items() if not name.startswith("VOICE_")}
    environ["XDG_STATE_HOME"] = str(tmp_path / "state")  # the embedded server's log goes there
    process = subprocess.Popen(
        [sys.executable, "-m", "voice", "kiosk", "--port", "0", "--sessions", str(sessions), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**environ, **(env or {})},
    )
    kiosk = Kiosk(process, sessions)
    try:
        yield kiosk
    finally:
        code = kiosk.stop()
        assert code == 0, kiosk.output()


Event = dict[str, Any]


async def next_event(ws: ClientConnection, seconds: float = 120) -> Event:
    event: Event = json.loads(await asyncio.wait_for(ws.recv(), seconds))
    return event


async def events_until(
    ws: ClientConnection, done: Callable[[Event], bool], seconds: float = 180
) -> list[Event]:
    """Events up to and including the first for which ``done`` is true."""
    seen: list[Event] = []
    async with asyncio.timeout(seconds):
        while True:
            seen.append(await next_event(ws, seconds))
            if done(seen[-1]):
                return seen


async def send(ws: ClientConnection, **command: Any) -> None:
    await ws.send(json.dumps(command))


def of_type(kind: str) -> Callable[[Event], bool]:
    return lambda event: event["type"] == kind
