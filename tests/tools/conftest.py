"""The MCP servers and the tool-calling LLM as fixtures (helpers: tests/support/mcp_servers.py)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.mcp_servers import SERVERS, Notes, orders_settings, start_home, stop
from voice.testing.loopback import free_port
from voice.tools.mcp_settings import McpServerSettings


@pytest.fixture
def notes(tmp_path: Path) -> Notes:
    return Notes(tmp_path / "orders-notes.txt")


@pytest.fixture
def orders(notes: Notes) -> McpServerSettings:
    return orders_settings(notes)


@pytest.fixture(scope="session")
def home_url() -> Iterator[str]:
    """The home server on a free loopback port, for the whole session."""
    process = start_home(port := free_port())
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process)


@pytest.fixture(scope="module")
def tool_calling_llm() -> Iterator[str]:
    """The stand-in LLM that calls tools (SmolLM2 cannot through llama.cpp's streaming API)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVERS / "tool_calling_llm.py"), str(port)], stderr=subprocess.DEVNULL
    )
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.wait(10)
