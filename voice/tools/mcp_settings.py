"""The config's ``[mcp.servers.NAME]`` tables: which MCP servers to start or reach, which tools to offer.

A server is a command started over stdio (``command = [...]``, optional ``env``) or a streamable-HTTP ``url``
whose headers come from the environment (``headers_env = {"Authorization" = "VAR"}``), never from the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from voice.errors import ConfigError

DEFAULT_TIMEOUT_S = 30.0
_KEYS = {"command", "url", "env", "headers_env", "timeout_s", "tools"}


@dataclass(frozen=True)
class McpServerSettings:
    """One MCP server: exactly one of ``command`` (stdio) and ``url`` (streamable HTTP).

    ``tools`` None offers every tool the server lists; otherwise only those named (none: it is not started).
    """

    name: str
    command: tuple[str, ...] | None = None
    url: str | None = None
    env: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    headers_env: tuple[tuple[str, str], ...] = ()  # header name, environment variable holding its value
    timeout_s: float = DEFAULT_TIMEOUT_S
    tools: tuple[str, ...] | None = None


def parse_mcp_servers(servers: Mapping[str, Any], where: str) -> tuple[McpServerSettings, ...]:
    """The servers of an ``[mcp.servers]`` table; ``where`` (the file) is named in every error."""
    return tuple(_server(str(name), table, where) for name, table in servers.items())


def _server(name: str, table: Any, where: str) -> McpServerSettings:
    key = f"mcp.servers.{name}"
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where}: {key} must be a table")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key {key}.{unknown[0]}")
    command, url = table.get("command"), table.get("url")
    if (command is None) == (url is None):
        raise ConfigError(f"{where}: {key} needs exactly one of command (stdio) and url (streamable HTTP)")
    if command is not None and (
        not isinstance(command, list) or not command or not all(isinstance(part, str) for part in command)
    ):
        raise ConfigError(f"{where}: {key}.command must be a non-empty list of strings")
    if url is not None and (not isinstance(url, str) or not url.startswith(("http://", "https://"))):
        raise ConfigError(f"{where}: {key}.url must be an http:// or https:// URL")
    timeout = table.get("timeout_s", DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= 3600:
        raise ConfigError(f"{where}: {key}.timeout_s must be a number of seconds above 0 (at most 3600)")
    tools = table.get("tools")
    if tools is not None and (not isinstance(tools, list) or not all(isinstance(t, str) for t in tools)):
        raise ConfigError(f"{where}: {key}.tools must be a list of tool names")
    return McpServerSettings(
        name=name,
        command=tuple(command) if command is not None else None,
        url=url,
        env=_strings(table.get("env", {}), f"{key}.env", where),
        headers_env=_strings(table.get("headers_env", {}), f"{key}.headers_env", where),
        timeout_s=float(timeout),
        tools=tuple(tools) if tools is not None else None,
    )


def _strings(value: Any, key: str, where: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError(f"{where}: {key} must be a table of strings")
    return tuple((str(k), v) for k, v in value.items())
