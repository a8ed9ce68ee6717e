"""A loopback HTTP server on real sockets that answers each request with a scripted, possibly broken, reply.

Each accepted connection runs ``script(exchange)`` in its own thread. The script writes raw bytes, so it
can send what a well-behaved server never would: a reset, a stall, half an event. The server records
each request it read and when the client closed its side.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.support.loopback_server import LoopbackServer


@dataclass(frozen=True)
class ReceivedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Exchange:
    """The server's side of one connection, handed to the script."""

    def __init__(self, conn: socket.socket, server: FaultServer) -> None:
        self._conn = conn
        self._server = server
        self.request = self._read_request()

    def _read_request(self) -> ReceivedRequest:
        data = b""
        while b"\r\n\r\n" not in data:
            piece = self._conn.recv(65_536)
            if not piece:
                raise ConnectionError("client closed before sending a request")
            data += piece
        head, _, body = data.partition(b"\r\n\r\n")
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        while len(body) < int(headers.get("content-length", "0")):
            body += self._conn.recv(65_536)
        method, path, _ = request_line.split(" ", 2)
        request = ReceivedRequest(method, path, headers, body)
        self._server.requests.append(request)
        return request

    @property
    def server_requests(self) -> list[ReceivedRequest]:
        """Every request the server has read so far, this one included."""
        return self._server.requests

    def send(self, data: bytes) -> None:
        self._conn.sendall(data)

    def send_head(self, status: int = 200, headers: dict[str, str] | None = None) -> None:
        """A chunked response head (an event stream unless ``headers`` say otherwise)."""
        fields = {"content-type": "text/event-stream", "transfer-encoding": "chunked", **(headers or {})}
        lines = [f"HTTP/1.1 {status} Scripted", *(f"{name}: {value}" for name, value in fields.items())]
        self.send(("\r\n".join(lines) + "\r\n\r\n").encode())

    def send_chunk(self, text: str) -> None:
        data = text.encode()
        self.send(b"%x\r\n%s\r\n" % (len(data), data))

    def send_event(self, payload: Any) -> None:
        self.send_chunk(f"data: {payload if isinstance(payload, str) else json.dumps(payload)}\n\n")

    def end_chunks(self) -> None:
        self.send(b"0\r\n\r\n")

    def respond(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        """A complete JSON response (an error answer)."""
        data = json.dumps(body).encode()
        fields = {"content-type": "application/json", "content-length": str(len(data)), **(headers or {})}
        lines = [f"HTTP/1.1 {status} Scripted", *(f"{name}: {value}" for name, value in fields.items())]
        self.send(("\r\n".join(lines) + "\r\n\r\n").encode() + data)

    def reset(self) -> None:
        """Abort the connection with a TCP reset instead of an orderly close."""
        self._conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self._conn.close()

    def wait_for_disconnect(self, timeout: float = 10.0) -> bool:
        """Block until the client closes its side (recording when) or ``timeout`` passes; True if it did."""
        self._conn.settimeout(timeout)
        try:
            while self._conn.recv(65_536):
                pass
        except TimeoutError:
            return False
        except OSError:
            pass  # a reset: the client is gone as well
        self._server.disconnected_at = time.monotonic()
        self._server.disconnected.set()
        return True


Script = Callable[[Exchange], None]


class FaultServer(LoopbackServer):
    """Serve ``script`` to every connection on 127.0.0.1 until closed."""

    def __init__(self, script: Script) -> None:
        self._script = script
        self.requests: list[ReceivedRequest] = []
        self.disconnected = threading.Event()
        self.disconnected_at: float | None = None
        super().__init__()  # serving starts here, with the state above in place
        self.url = f"http://127.0.0.1:{self.port}/v1"

    def _serve(self, conn: socket.socket) -> None:
        # An OSError means the client went away mid-script, which is what many tests do on purpose.
        with conn, contextlib.suppress(OSError):
            self._script(Exchange(conn, self))


def delta_chunk(text: str) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}


def finish_chunk(reason: str = "stop") -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}


def replying(*chunks: Any, done: bool = True) -> Script:
    """A well-formed reply: each of ``chunks`` as an event, then the end marker (unless ``done`` is False)."""

    def script(exchange: Exchange) -> None:
        exchange.send_head()
        for chunk in chunks:
            exchange.send_event(chunk)
        if done:
            exchange.send_event("[DONE]")
        exchange.end_chunks()

    return script
