"""A systemd-style notify socket: a datagram socket that keeps every message with when it came."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path


class NotifySocket:
    """``with NotifySocket(path) as notify:`` then give the child ``NOTIFY_SOCKET=str(path)``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.messages: list[tuple[float, str]] = []  # time.monotonic(), text
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._socket.bind(str(path))
        self._socket.settimeout(0.2)
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)

    def _read(self) -> None:
        while not self._closed.is_set():
            try:
                data = self._socket.recv(4096)
            except TimeoutError:
                continue
            self.messages.append((time.monotonic(), data.decode()))

    def times(self, text: str) -> list[float]:
        """When each message holding the line ``text`` came."""
        return [at for at, message in list(self.messages) if text in message.splitlines()]

    def wait_for(self, text: str, seconds: float, after: float = 0.0) -> float:
        """When the first ``text`` came after ``after`` (a time.monotonic()), waiting up to ``seconds``."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            found = [at for at in self.times(text) if at > after]
            if found:
                return found[0]
            time.sleep(0.05)
        raise AssertionError(f"{text!r} never came: {self.messages}")

    def __enter__(self) -> NotifySocket:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._closed.set()
        self._thread.join()
        self._socket.close()
