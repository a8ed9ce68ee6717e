"""One streamed HTTP exchange that a cancel from another thread can cut at any moment.

httpx's sync API blocks in socket reads, and closing a socket from another thread does not wake a
blocked read on Linux; shutting it down does (and the server sees the connection close). The request
is sent from a helper thread and the caller waits on an event that a cancel also sets, so a cancel never
waits for the server. Before the response head arrives, the socket is known only if this request opened
the connection (httpcore's trace extension reports it); a request on a reused keep-alive connection is
closed as soon as its head arrives instead.
"""

from __future__ import annotations

import contextlib
import functools
import socket
import ssl
import threading
from typing import Any

import httpx

# httpcore trace events whose return value is the network stream of a connection this request opened.
_CONNECTED_EVENTS = ("connection.connect_tcp.complete", "connection.start_tls.complete")


@functools.cache
def verified_tls() -> ssl.SSLContext:
    """The TLS context httpx verifies with by default (certifi's CAs, or $SSL_CERT_FILE / $SSL_CERT_DIR),
    made once and shared: loading the CA bundle takes 25 ms for every client that makes its own."""
    return httpx.create_ssl_context()


class CancellableExchange:
    """Sends ``request`` at once (streamed) in a helper thread; the caller reads the body itself."""

    def __init__(self, client: httpx.Client, request: httpx.Request) -> None:
        self._client = client
        self._request = request
        self._lock = threading.Lock()
        self._settled = threading.Event()
        self._aborted = False
        self._response: httpx.Response | None = None
        self._connection: object | None = None
        self._error: Exception | None = None
        request.extensions = {**request.extensions, "trace": self._trace}
        threading.Thread(target=self._send, name="http-exchange", daemon=True).start()

    def _trace(self, event: str, info: dict[str, Any]) -> None:
        if event in _CONNECTED_EVENTS:
            with self._lock:
                self._connection = info.get("return_value")
                aborted = self._aborted
            if aborted:
                _shut_down(self._connection)

    def _send(self) -> None:
        try:
            response = self._client.send(self._request, stream=True)
        except Exception as exc:  # handed to the caller's thread, which translates it
            with self._lock:
                self._error = exc
            self._settled.set()
            return
        with self._lock:
            self._response = response
            abandoned = self._aborted
        if abandoned:
            response.close()  # nobody will read it; closing tells the server
        self._settled.set()

    def response(self) -> httpx.Response | None:
        """Block until the response head arrives (returned) or the exchange is aborted (None).

        Re-raises the error the send failed with.
        """
        self._settled.wait()
        with self._lock:
            if self._aborted:
                return None
            if self._error is not None:
                raise self._error
            return self._response

    def abort(self, reason: str = "") -> None:
        """Safe from any thread: wake the waiting caller and cut a body read in progress."""
        with self._lock:
            self._aborted = True
            response = self._response
            connection = self._connection
        self._settled.set()
        if response is not None:
            _shut_down(response.extensions.get("network_stream"))
        elif connection is not None:
            _shut_down(connection)

    def close(self) -> None:
        """Release the response (from the reading thread, once it is done with it)."""
        with self._lock:
            self._aborted = True
            response = self._response
        if response is not None:
            response.close()


def _shut_down(stream: Any) -> None:
    """Shut down the socket under an httpcore network stream, waking any thread blocked on it."""
    get_extra_info = getattr(stream, "get_extra_info", None)
    sock = get_extra_info("socket") if get_extra_info is not None else None
    if isinstance(sock, socket.socket):
        # The plain socket call, also for TLS: SSLSocket.shutdown would unwrap under the reader's feet.
        # An OSError means it is already closed, so there is nothing left to wake.
        with contextlib.suppress(OSError):
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
