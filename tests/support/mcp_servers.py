"""Real MCP servers for the tools' tests: the order desk over stdio, the home over streamable HTTP."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from voice.tools.mcp_settings import McpServerSettings

SERVERS = Path(__file__).resolve().parents[1] / "tools" / "servers"  # scenarios name them there too


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


def orders_settings(notes: Notes, **changes: Any) -> McpServerSettings:
    settings = McpServerSettings(
        "orders", command=(sys.executable, str(ORDERS)), env=(("ORDERS_NOTES", str(notes.path)),)
    )
    return replace(settings, **changes)


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


def kiosk_args(tmp_path: Path, notes: Notes, llm_url: str) -> tuple[str, ...]:
    """A typed-input kiosk with the config's MCP servers and the stand-in tool-calling LLM."""
    config = config_file(tmp_path, notes)
    return ("--audio", "none", "--config", str(config), "--llm-url", llm_url, "--llm-model", "stand-in")


def config_file(tmp_path: Path, notes: Notes) -> Path:
    config = tmp_path / "config.toml"
    config.write_text(
        f"""
[mcp.servers.orders]
command = [{str(sys.executable)!r}, {str(ORDERS)!r}]
env = {{ ORDERS_NOTES = {str(notes.path)!r} }}
tools = ["lookup_order", "slow_lookup"]

[mcp.servers.calendar]
command = ["/nonexistent/calendar-mcp"]
""",
        encoding="utf-8",
    )
    return config
