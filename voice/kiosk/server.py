"""One port: the page at ``/``, the event API at ``/ws``, Prometheus metrics at ``/metrics`` and health at
``/healthz``, on the websockets asyncio server. The last two follow ``/ws``'s token rule.

``process_request`` serves the page and guards the upgrade (origin: 403, token: 401); each accepted
connection gets the snapshot, then every event through its own bounded queue, and its frames are
parsed into commands for the keeper. A bad frame gets an ``error`` event; too many in a row close the
connection with 1008, and a frame over ``MAX_FRAME_BYTES`` is closed by websockets with 1009. A command
over its client's rate, or all clients' together, is dropped with a ``rate_limited`` error (``limits``).
``input.partial`` goes only to the clients that asked for it (``input.partials``); while none has, no
partial is decoded.
"""

from __future__ import annotations

import asyncio
import http
import json
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any
from urllib.parse import urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from voice.client_events import Failure, InputPartial, event_json
from voice.kiosk.browser_audio import BrowserAudio
from voice.kiosk.client import QUEUE_EVENTS, Client
from voice.kiosk.keeper import SessionKeeper
from voice.kiosk.limits import ALL_CLIENTS, Flooders, TokenBucket
from voice.kiosk.protocol import AudioFrame, BadFrame, PartialsWanted, PlaybackPosition, parse_command
from voice.kiosk.security import origin_ok, token_ok
from voice.telemetry.health import Health
from voice.telemetry.metrics import CONTENT_TYPE, VoiceMetrics

# the longest input.text (4000 characters, 48,000 bytes even as JSON \u escapes) and an audio frame
# (20 ms from the page: 640 bytes; at most a second, 32,000) fit
MAX_FRAME_BYTES = 64 * 1024
CLOSE_TIMEOUT_S = 5.0  # a closed client has this long to take its close frame
SEND_BUFFER_BYTES = 64 * 1024  # per connection, so a client that stops reading is noticed soon
WRITE_LIMIT_BYTES = 16 * 1024


@dataclass(frozen=True)
class ServerSettings:
    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = field(default=None, repr=False)
    allow_origins: Sequence[str] = ()
    queue_events: int = QUEUE_EVENTS


def page() -> bytes:
    """The page served at ``/`` (package data, replaced by the captions page)."""
    return files("voice.kiosk").joinpath("page.html").read_bytes()


class KioskServer:
    """The websocket clients and the keeper they talk to."""

    def __init__(
        self,
        keeper: SessionKeeper,
        settings: ServerSettings,
        browser: BrowserAudio | None = None,
        metrics: VoiceMetrics | None = None,
        health: Health | None = None,
    ) -> None:
        self._keeper = keeper
        self._settings = settings
        self._browser = browser  # --audio websocket: the page's audio goes here
        self._metrics = metrics
        self._health = health
        self._clients: set[Client] = set()
        self._partials: set[Client] = set()  # the clients that asked for the user's words as they speak
        self._everyone = TokenBucket(ALL_CLIENTS)  # commands from all clients together
        self._flooders = Flooders()
        self._page = page()

    def broadcast(self, event: dict[str, Any]) -> None:
        """Every event to every client, never waiting for any of them; encoded once for all (no
        per-connection compression, so the same bytes go to each)."""
        text = json.dumps(event, ensure_ascii=False)
        watchers = self._partials if event["type"] == InputPartial.type else self._clients
        for client in list(watchers):
            client.send_text(text)

    async def start(self) -> Server:
        settings = self._settings
        return await serve(
            self._handle,
            settings.host,
            settings.port,
            process_request=self._process_request,
            max_size=MAX_FRAME_BYTES,
            max_queue=16,
            compression=None,  # deflate costs each event once per watcher, and every 20 ms audio frame
            write_limit=WRITE_LIMIT_BYTES,
            close_timeout=CLOSE_TIMEOUT_S,
            server_header=None,
        )

    async def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        path = urlsplit(request.path).path
        if path == "/":
            response = connection.respond(http.HTTPStatus.OK, "")
            return _with_body(response, self._page, "text/html; charset=utf-8")
        if path in ("/metrics", "/healthz"):
            if not token_ok(self._settings.token, request.path, request.headers.get("Authorization")):
                return connection.respond(http.HTTPStatus.UNAUTHORIZED, "Missing or wrong token\n")
            return await self._telemetry(connection, path)
        if path != "/ws":
            return connection.respond(
                http.HTTPStatus.NOT_FOUND, "Not found: the page is at /, the API at /ws\n"
            )
        origin = request.headers.get("Origin")
        if not origin_ok(origin, request.headers.get("Host"), self._settings.allow_origins):
            return connection.respond(http.HTTPStatus.FORBIDDEN, "Origin not allowed\n")
        if not token_ok(self._settings.token, request.path, request.headers.get("Authorization")):
            return connection.respond(http.HTTPStatus.UNAUTHORIZED, "Missing or wrong token\n")
        return None

    async def _telemetry(self, connection: ServerConnection, path: str) -> Response:
        metrics, health = self._metrics, self._health
        if path == "/metrics" and metrics is not None:
            response = connection.respond(http.HTTPStatus.OK, "")
            return _with_body(response, metrics.exposition(), CONTENT_TYPE)
        if path == "/healthz" and health is not None:
            report = await asyncio.to_thread(health.report)  # its probes wait on other servers
            response = connection.respond(http.HTTPStatus(report.status_code), "")
            return _with_body(response, report.json(), "application/json")
        return connection.respond(http.HTTPStatus.NOT_FOUND, f"Not found: no {path} here\n")

    async def _handle(self, connection: ServerConnection) -> None:
        _limit_send_buffer(connection)
        address = _host(connection)
        burst = not self._flooders.lately(address)  # a flooder coming back gets no fresh burst
        client = Client(connection, self._everyone, self._settings.queue_events, burst)
        self._clients.add(client)
        if self._metrics is not None:
            self._metrics.client_connected()
        try:
            client.send(self._keeper.snapshot())
            async for frame in connection:
                if client.closing:
                    break
                try:
                    command = parse_command(frame, audio=self._browser is not None)
                except BadFrame as exc:
                    client.send(event_json(Failure("bad_frame", str(exc))))
                    client.bad_frame()
                    if self._metrics is not None:
                        self._metrics.frame_refused()
                    continue
                client.good_frame()
                if isinstance(command, AudioFrame | PlaybackPosition):
                    self._take_audio(client, command)  # paced by the page's audio clock, not a person
                elif client.admit(command):
                    if isinstance(command, PartialsWanted):
                        self._want_partials(client, command.enabled)
                    else:
                        self._keeper.handle(command)
                else:
                    if self._metrics is not None:
                        self._metrics.command_refused()
                    if client.flooding:
                        self._flooders.closed(address)
        except ConnectionClosed:
            pass
        finally:
            self._clients.discard(client)
            self._want_partials(client, False)
            if self._browser is not None:
                self._browser.peer_left(client)
            await client.finished()
            if self._metrics is not None:
                self._metrics.client_closed(connection.close_code)

    def _want_partials(self, client: Client, enabled: bool) -> None:
        """The client wants partials, or no more; they are decoded while any client wants them."""
        if enabled:
            self._partials.add(client)
        else:
            self._partials.discard(client)
        self._keeper.show_partials(bool(self._partials))

    def _take_audio(self, client: Client, command: AudioFrame | PlaybackPosition) -> None:
        browser = self._browser
        if browser is None:
            return
        if isinstance(command, PlaybackPosition):
            browser.take_position(client, command.samples)
            return
        refused = browser.take_frame(client, command.pcm)
        if refused is not None:
            client.send(event_json(refused))


def _with_body(response: Response, body: bytes, content_type: str) -> Response:
    headers = Headers(
        [
            (name, value)
            for name, value in response.headers.raw_items()
            if name.lower() not in {"content-type", "content-length"}
        ]
    )
    headers["Content-Type"] = content_type
    headers["Content-Length"] = str(len(body))
    headers["Cache-Control"] = "no-store"
    return Response(response.status_code, response.reason_phrase, headers, body)


def _host(connection: ServerConnection) -> str:
    """The peer's address without its port (every client on loopback or behind a proxy shares one)."""
    remote = connection.remote_address
    return str(remote[0]) if remote else ""


def _limit_send_buffer(connection: ServerConnection) -> None:
    """A fixed kernel send buffer: a client that stops reading backs up into its queue within ~100 KB."""
    sock = connection.transport.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER_BYTES)
