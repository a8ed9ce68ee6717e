"""Who may connect: tokens, origins, binds (what a connected client may cost: test_clients).

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

from tests.support.kiosk import UNREACHABLE_LLM, Event, next_event, running_kiosk

TOKEN = "s3cret-kiosk-token"

pytestmark = [pytest.mark.slow, pytest.mark.processes]  # each test starts a kiosk process


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
