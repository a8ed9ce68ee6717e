"""Who may connect, and what a client may cost: tokens, origins, binds, slow readers.

These kiosks run with an LLM URL nobody answers: no request here needs a reply.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from tests.kiosk.conftest import UNREACHABLE_LLM, Event, events_until, next_event, running_kiosk, send

TOKEN = "s3cret-kiosk-token"
REPEATS = 3000
CLOSING = "voice kiosk: closing a client (1013): too slow: 500 events unread"
BATCH = 100
LONG_ID = "again-" + "x" * 190  # long acknowledgements fill a stalled reader's buffers sooner

pytestmark = pytest.mark.slow  # each test starts a kiosk process


def status_of(url: str, **kwargs: object) -> int:
    async def run() -> int:
        try:
            async with connect(url, **kwargs) as ws:  # type: ignore[arg-type]
                event = await next_event(ws)
                assert event["type"] == "session.created"
                return 101
        except InvalidStatus as refused:
            return refused.response.status_code

    return asyncio.run(run())


def test_with_a_token_set_the_upgrade_needs_it(tmp_path: Path) -> None:
    with running_kiosk(tmp_path, "--audio", "none", *UNREACHABLE_LLM, env={"VOICE_TOKEN": TOKEN}) as kiosk:
        assert status_of(kiosk.url) == 401
        assert status_of(kiosk.url + "?token=wrong") == 401
        assert status_of(kiosk.url, additional_headers={"Authorization": "Bearer wrong"}) == 401
        assert status_of(kiosk.url + f"?token={TOKEN}") == 101
        assert status_of(kiosk.url, additional_headers={"Authorization": f"Bearer {TOKEN}"}) == 101

        async def snapshot() -> Event:
            async with connect(kiosk.url + f"?token={TOKEN}") as ws:
                return await next_event(ws)

        assert asyncio.run(snapshot())["settings"]["token_required"] is True
        assert TOKEN not in json.dumps(asyncio.run(snapshot()))
    assert TOKEN not in kiosk.output()
    assert all(TOKEN not in path.read_text() for path in kiosk.sessions.iterdir())


def test_browsers_connect_only_from_the_page_itself_or_an_allowed_origin(tmp_path: Path) -> None:
    allowed = "https://screen.example"
    with running_kiosk(tmp_path, "--audio", "none", *UNREACHABLE_LLM, "--allow-origin", allowed) as kiosk:
        assert status_of(kiosk.url, origin="https://evil.example") == 403
        assert status_of(kiosk.url, origin=f"http://127.0.0.1:{kiosk.port}") == 101  # the page's own
        assert status_of(kiosk.url, origin=allowed) == 101
        assert status_of(kiosk.url) == 101  # no Origin: not a browser


def run_refused(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {name: value for name, value in os.environ.items() if not name.startswith("VOICE_")}
    return subprocess.run(
        [sys.executable, "-m", "voice", "kiosk", *args, *UNREACHABLE_LLM],
        capture_output=True, text=True, timeout=120, env={**environ, **(env or {})},
    )  # fmt: skip


def test_a_bind_beyond_loopback_without_a_token_is_refused_in_one_line() -> None:
    result = run_refused("--host", "0.0.0.0", "--audio", "none")
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "voice: error: listening on 0.0.0.0 reaches other machines: set VOICE_TOKEN to require a token"
    ]


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_refused("--audio", "none", "--port", str(port), "--sessions", str(tmp_path))
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1].startswith(f"voice: error: cannot listen on 127.0.0.1:{port}: ")
    assert "Traceback" not in result.stderr


def stalled_reader(port: int) -> socket.socket:
    """A websocket client that completes the upgrade and then never reads: a stalled page."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.sendall(
        b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    response = b""
    while b"\r\n\r\n" not in response:
        response += sock.recv(1)
    assert response.startswith(b"HTTP/1.1 101"), response
    return sock


def read_to_end(sock: socket.socket) -> bytes:
    data = b""
    sock.settimeout(30)
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_a_client_too_slow_to_read_is_closed_and_the_others_carry_on(tmp_path: Path) -> None:
    with running_kiosk(tmp_path, "--audio", "none", *UNREACHABLE_LLM) as kiosk:
        slow = stalled_reader(kiosk.port)

        async def run() -> None:
            async with connect(kiosk.url) as fast:
                await next_event(fast)
                await send(fast, type="input.text", id=LONG_ID, text="Hello?")
                for _ in range(REPEATS // BATCH):  # each repeat is acknowledged to every client
                    if CLOSING in kiosk.output():
                        break  # the stalled reader has the close timeout to read up to its close frame
                    for _ in range(BATCH):
                        await send(fast, type="input.text", id=LONG_ID, text="Hello?")
                    count = 0
                    while count < BATCH:  # a client that reads what it asked for
                        count += (await next_event(fast, 60))["type"] == "input.duplicate"
                await send(fast, type="mic.mute")  # the fast client is still served
                await events_until(fast, lambda e: e.get("state") == "muted")

        asyncio.run(run())
        assert CLOSING in kiosk.output()
        with slow:
            received = read_to_end(slow)
        reason = b"too slow: 500 events unread"
        close_frame = bytes([0x88, 2 + len(reason)]) + (1013).to_bytes(2, "big") + reason
        assert received.endswith(close_frame)  # what was queued is dropped; the close says why
        assert "Traceback" not in kiosk.output()
