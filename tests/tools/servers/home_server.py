"""A home MCP server over streamable HTTP on loopback, for the toolbox's tests: ``home_server.py PORT``.

Its ``whoami`` tool answers with the Authorization header it was sent.
"""

from __future__ import annotations

import asyncio
import os
import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("home", log_level="WARNING")


@server.tool()
def switch_light(room: str, on: bool) -> str:
    """Switch the light in a room on or off."""
    return f"The {room} light is {'on' if on else 'off'}."


@server.tool()
def now() -> str:
    """The time at home."""
    return "It is 21:15 at home."


@server.tool()
def whoami(ctx: Context) -> str:
    """Who the caller is, by the token it sent."""
    request = ctx.request_context.request
    headers = getattr(request, "headers", {}) if request is not None else {}
    return f"Authorization: {headers.get('authorization', 'none')}"


@server.tool()
async def reboot_hub() -> str:
    """Reboot the home hub: the server goes away while the call runs."""
    await asyncio.sleep(0.2)
    os._exit(3)


@server.tool()
def server_pid() -> str:
    """The process id of this server."""
    return str(os.getpid())


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
