"""Real MCP servers for the toolbox's tests: the order desk over stdio, the home over streamable HTTP."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from voice.tools.mcp_settings import McpServerSettings

SERVERS = Path(__file__).resolve().parent / "servers"
ORDERS = SERVERS / "orders_server.py"
HOME = SERVERS / "home_server.py"


class Notes:
    """What the order desk noted: calls it was told to cancel, orders it deleted, crashes."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def lines(self) -> list[str]:
        return self.path.read_text().splitlines() if self.path.exists() else []

    def wait_for(self, line: str, seconds: float = 5.0) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if line in self.lines():
                return True
            time.sleep(0.05)
        return False


@pytest.fixture
def notes(tmp_path: Path) -> Notes:
    return Notes(tmp_path / "orders-notes.txt")


def orders_settings(notes: Notes, **changes: Any) -> McpServerSettings:
    settings = McpServerSettings(
        "orders", command=(sys.executable, str(ORDERS)), env=(("ORDERS_NOTES", str(notes.path)),)
    )
    return replace(settings, **changes)


@pytest.fixture
def orders(notes: Notes) -> McpServerSettings:
    return orders_settings(notes)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start_home(port: int) -> subprocess.Popen[str]:
    """The home server on ``port``, once it accepts connections."""
    process = subprocess.Popen(
        [sys.executable, str(HOME), str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return process
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                _, err = process.communicate()
                raise AssertionError(f"the home MCP server did not start: {err}") from None
            time.sleep(0.1)


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    process.communicate(timeout=10)


@pytest.fixture(scope="session")
def home_url() -> Iterator[str]:
    """The home server on a free loopback port, for the whole session."""
    process = start_home(port := free_port())
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process)
