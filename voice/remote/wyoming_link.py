"""One Wyoming connection per call: events out with the ``wyoming`` package, frames in read strictly.

A frame is a JSON header line, then ``data_length`` bytes of JSON merged into its data, then
``payload_length`` bytes of payload. ``wyoming.event.read_event`` answers None both for a closed
connection and for a broken header; here each is its own error, so a user learns which happened.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Iterator
from types import TracebackType
from typing import Any, BinaryIO

from wyoming.error import Error
from wyoming.event import Event, write_event
from wyoming.info import Describe, Info

from voice.cancel import CancelToken
from voice.llm.errors import Dispatch, ErrorCode
from voice.remote.errors import CONNECT_TIMEOUT_S, IDLE_TIMEOUT_S, SpeechServerError
from voice.remote.limits import Limits
from voice.remote.urls import ServerUrl

_MAX_HEADER = 65_536
_MAX_DATA = 1 << 20
_MAX_PAYLOAD = 16 << 20  # far more than one audio chunk or one utterance's info


class WyomingLink:
    """Where a Wyoming server listens and how long to wait for it; opens a fresh connection per call.

    A connection per call is what makes a restarted server usable again at once, with no stale socket.
    """

    def __init__(
        self,
        role: str,
        host: str,
        port: int,
        *,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
        idle_timeout_s: float | None = IDLE_TIMEOUT_S,  # None: a stream that may stay quiet for ever
    ) -> None:
        self.role = role
        self.host = host
        self.port = port
        self.url = f"wyoming://{host}:{port}"
        self.connect_timeout_s = connect_timeout_s
        self.idle_timeout_s = idle_timeout_s

    @classmethod
    def to(cls, url: ServerUrl, limits: Limits) -> WyomingLink:
        """The link to a wyoming://HOST:PORT the table of speech backends has checked."""
        assert url.port is not None
        return cls(
            url.role,
            url.host,
            url.port,
            connect_timeout_s=limits.connect_timeout_s,
            idle_timeout_s=limits.idle_timeout_s,
        )

    def fail(self, code: ErrorCode, dispatch: Dispatch, detail: str, *, retriable: bool) -> SpeechServerError:
        return SpeechServerError(self.role, code, dispatch, detail, retriable=retriable)

    def connect(self, cancel: CancelToken | None = None) -> WyomingConnection:
        """A new connection; a ``cancel`` fired while it connects or is open ends it at once (a read too)."""
        sock = self._open() if cancel is None else self._open_unless_cancelled(cancel)
        sock.settimeout(self.idle_timeout_s)
        return WyomingConnection(self, sock, cancel)

    def _open_unless_cancelled(self, cancel: CancelToken) -> socket.socket:
        """Connect in a helper thread, so that a cancel need not wait out a host that never answers."""
        opened: list[socket.socket | SpeechServerError] = []
        lock = threading.Lock()
        settled = threading.Event()

        def attempt() -> None:
            try:
                outcome: socket.socket | SpeechServerError = self._open()
            except SpeechServerError as error:
                outcome = error
            with lock:
                opened.append(outcome)
                abandoned = cancel.cancelled
            if abandoned and isinstance(outcome, socket.socket):
                outcome.close()  # connected after the caller left: nobody will use it
            settled.set()

        unsubscribe = cancel.on_cancel(lambda reason: settled.set())
        try:
            if not cancel.cancelled:
                threading.Thread(target=attempt, name="wyoming-connect", daemon=True).start()
                settled.wait()
        finally:
            unsubscribe()
        with lock:
            outcome = opened[0] if opened else None
            cancelled = cancel.cancelled
        if cancelled:
            if isinstance(outcome, socket.socket):
                outcome.close()  # connected as the cancel came: nobody will use it
            raise self.fail(
                ErrorCode.CANCELLED,
                Dispatch.NOT_SENT,
                f"{cancel.reason}: not sent to {self.url}",
                retriable=False,
            )
        assert outcome is not None  # settled without a cancel: the attempt ended
        if isinstance(outcome, SpeechServerError):
            raise outcome
        return outcome

    def _open(self) -> socket.socket:
        try:
            return socket.create_connection((self.host, self.port), timeout=self.connect_timeout_s)
        except TimeoutError as exc:
            raise self.fail(
                ErrorCode.DEADLINE, Dispatch.NOT_SENT, f"no connection to {self.url} in time", retriable=True
            ) from exc
        except OSError as exc:
            raise self.fail(
                ErrorCode.TRANSPORT,
                Dispatch.NOT_SENT,
                f"cannot connect to {self.url}: {_reason(exc)}",
                retriable=True,
            ) from exc

    def describe(self, cancel: CancelToken | None = None) -> Info:
        """The server's ``info``: which programs it runs and what they support."""
        with self.connect(cancel) as connection:
            connection.send(Describe().event())
            while True:
                event = connection.receive()
                if Info.is_type(event.type):
                    try:
                        return Info.from_event(event)
                    except (KeyError, TypeError, ValueError, AttributeError) as exc:
                        raise connection.malformed("an info event it describes itself with") from exc


class WyomingConnection:
    """One open connection; every failure on it is a :class:`SpeechServerError`."""

    def __init__(self, link: WyomingLink, sock: socket.socket, cancel: CancelToken | None = None) -> None:
        self._link = link
        self._sock = sock
        self._reader: BinaryIO = sock.makefile("rb")
        self._writer: BinaryIO = sock.makefile("wb")
        self.answered = False  # any frame received: the server has the request
        self._cancel = cancel
        self._unsubscribe = cancel.on_cancel(self._cut) if cancel is not None else None

    def __enter__(self) -> WyomingConnection:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        for stream in (self._writer, self._reader):
            with contextlib.suppress(OSError):  # an unsent tail is of no use once the call is over
                stream.close()
        self._sock.close()

    def _cut(self, reason: str) -> None:
        """From the cancelling thread: shutting the socket down wakes a read or write blocked on it."""
        with contextlib.suppress(OSError):  # already closed: nothing is blocked on it
            self._sock.shutdown(socket.SHUT_RDWR)

    @contextlib.contextmanager
    def _explained_by_cancel(self) -> Iterator[None]:
        """Once cancelled nothing more is read or sent; a cut read fails as cancelled, however it broke."""
        if self._cancel is not None and self._cancel.cancelled:
            raise self._cancelled()
        try:
            yield
        except (OSError, SpeechServerError) as exc:
            if self._cancel is not None and self._cancel.cancelled:
                raise self._cancelled() from exc
            raise

    def _cancelled(self) -> SpeechServerError:
        reason = self._cancel.reason if self._cancel is not None else "cancelled"
        return self._link.fail(
            ErrorCode.CANCELLED, self._dispatch(), f"{reason}: left {self._link.url}", retriable=False
        )

    def send(self, event: Event) -> None:
        with self._explained_by_cancel():
            self._send(event)

    def receive(self) -> Event:
        """The next event; an ``error`` event from the server is raised (its code kept, its text not)."""
        with self._explained_by_cancel():
            return self._receive()

    def _send(self, event: Event) -> None:
        try:
            write_event(event, self._writer)
        except TimeoutError as exc:
            raise self._link.fail(
                ErrorCode.DEADLINE, Dispatch.UNKNOWN, f"sending to {self._link.url} stalled", retriable=True
            ) from exc
        except OSError as exc:
            raise self._link.fail(
                ErrorCode.TRANSPORT,
                Dispatch.UNKNOWN,
                f"the connection to {self._link.url} broke while sending ({_reason(exc)})",
                retriable=True,
            ) from exc

    def _receive(self) -> Event:
        try:
            event = self._read_frame()
        except TimeoutError as exc:
            what = "the answer went silent" if self.answered else "no answer"
            raise self._link.fail(
                ErrorCode.DEADLINE,
                self._dispatch(),
                f"{what} for {self._link.idle_timeout_s:g} s from {self._link.url}",
                retriable=True,
            ) from exc
        except OSError as exc:
            raise self._link.fail(
                ErrorCode.TRANSPORT,
                self._dispatch(),
                f"the connection to {self._link.url} broke ({_reason(exc)})",
                retriable=True,
            ) from exc
        self.answered = True
        if Error.is_type(event.type):
            code = event.data.get("code")
            named = f" [{code}]" if isinstance(code, str) and code.isidentifier() and len(code) <= 64 else ""
            raise self._link.fail(
                ErrorCode.UNAVAILABLE,
                Dispatch.ACCEPTED,
                f"{self._link.url} answered with an error event{named}",
                retriable=True,
            )
        return event

    def malformed(self, what: str) -> SpeechServerError:
        return self._link.fail(
            ErrorCode.PROTOCOL,
            Dispatch.ACCEPTED,
            f"{self._link.url} sent a malformed frame: {what} is not valid",
            retriable=False,
        )

    def _dispatch(self) -> Dispatch:
        return Dispatch.ACCEPTED if self.answered else Dispatch.UNKNOWN

    def _closed(self) -> SpeechServerError:
        return self._link.fail(
            ErrorCode.TRANSPORT,
            self._dispatch(),
            f"{self._link.url} closed the connection before its answer was complete",
            retriable=True,
        )

    def _read_frame(self) -> Event:
        line = self._reader.readline(_MAX_HEADER + 1)
        if not line:
            raise self._closed()
        if not line.endswith(b"\n"):
            if len(line) > _MAX_HEADER:
                raise self.malformed("a header line longer than 64 KiB")
            raise self._closed()
        header = _json_object(line)
        if header is None or not isinstance(header.get("type"), str):
            raise self.malformed("a header that is not a JSON object with a type")
        data = header.get("data") or {}
        if not isinstance(data, dict):
            raise self.malformed("the header's data")
        data_length = self._length(header, "data_length", _MAX_DATA)
        if data_length:
            extra = _json_object(self._read_exactly(data_length))
            if extra is None:
                raise self.malformed("the data block")
            data = {**data, **extra}
        payload_length = self._length(header, "payload_length", _MAX_PAYLOAD)
        payload = self._read_exactly(payload_length) if payload_length else None
        return Event(type=header["type"], data=data, payload=payload)

    def _length(self, header: dict[str, Any], key: str, limit: int) -> int:
        value = header.get(key)
        if value is None:
            return 0
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= limit:
            raise self.malformed(f"the header's {key}")
        return value

    def _read_exactly(self, length: int) -> bytes:
        data = self._reader.read(length)
        if len(data) < length:
            raise self._closed()
        return data


def _json_object(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw)
    except ValueError:  # also undecodable UTF-8
        return None
    return value if isinstance(value, dict) else None


def _reason(exc: OSError) -> str:
    """The OS's short reason (e.g. "Connection refused"), not the peer's words."""
    return exc.strerror or type(exc).__name__
