"""An order desk MCP server over stdio, for the toolbox's tests: quick, slow, failing and dying tools.

``ORDERS_NOTES`` names a file where the server notes calls it was told to cancel.
"""

from __future__ import annotations

import asyncio
import base64
import os
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ImageContent, TextContent

server = MCPServer("orders", log_level="WARNING")
_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def _note(line: str) -> None:
    notes = os.environ.get("ORDERS_NOTES")
    if notes:
        with Path(notes).open("a", encoding="utf-8") as file:
            file.write(line + "\n")


@server.tool()
def lookup_order(order_id: str) -> str:
    """Look up an order by its number: what it holds and where it is."""
    return f"Order {order_id}: two desk lamps, shipped on Tuesday, arriving Friday."


@server.tool()
async def slow_lookup(order_id: str, seconds: float) -> str:
    """Look up an order in the archive, which takes a while."""
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        _note(f"cancelled slow_lookup {order_id}")
        raise
    return f"Archived order {order_id}: one kettle, delivered in March."


@server.tool()
def refund(order_id: str) -> str:
    """Refund an order."""
    raise ToolError(f"order {order_id} was paid in cash; refunds need a manager")


@server.tool()
def order_status(order_id: str) -> dict[str, Any]:
    """The order's status as data."""
    return {"order": order_id, "status": "shipped", "parcels": 2}


@server.tool(structured_output=False)
def order_photo(order_id: str) -> list[TextContent | ImageContent]:
    """A photo of the parcel, with a caption."""
    return [
        TextContent(text=f"Parcel {order_id} at the depot."),
        Image(data=_PNG, format="png").to_image_content(),
    ]


@server.tool()
async def crash_during(order_id: str) -> str:
    """A tool whose server dies while it runs."""
    _note(f"crashing {os.getpid()}")
    await asyncio.sleep(0.2)
    os._exit(3)


@server.tool()
def server_pid() -> str:
    """The process id of this server."""
    return str(os.getpid())


@server.tool()
def now() -> str:
    """The time at the order desk."""
    return "It is 09:30 at the order desk."


@server.tool()
def delete_all_orders() -> str:
    """Delete every order: a kiosk visitor must never reach this."""
    _note("deleted every order")
    return "Every order was deleted."


if __name__ == "__main__":
    server.run()
