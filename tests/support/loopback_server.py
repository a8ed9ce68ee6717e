"""A TCP server on 127.0.0.1 that serves each connection on a thread of its own, for the fault servers."""

from __future__ import annotations

import socket
import threading
from typing import Self


class LoopbackServer:
    """Accepts connections until closed and hands each to ``_serve``; subclasses set their state first."""

    def __init__(self, port: int = 0) -> None:
        self._listener = socket.create_server(("127.0.0.1", port))
        self.port: int = self._listener.getsockname()[1]
        self._threads: list[threading.Thread] = []
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()

    def _serve(self, conn: socket.socket) -> None:
        raise NotImplementedError

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return  # closed
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        self._accepting.join(timeout=5)
        for thread in self._threads:
            thread.join(timeout=5)
