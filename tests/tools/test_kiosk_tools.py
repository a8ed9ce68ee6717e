"""`voice kiosk --audio none` with MCP servers from its config file: a typed question leads to a real
tool call whose result the answer uses, a server that does not start is one line and an error, and a
reset while a tool runs cancels it at the server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from tests.support.kiosk import Event, events_until, next_event, of_type, running_kiosk, send
from tests.support.mcp_servers import Notes, kiosk_args

pytestmark = [pytest.mark.slow, pytest.mark.processes]

ANSWER = "Order 1234: two desk lamps, shipped on Tuesday, arriving Friday."


def test_a_typed_question_leads_to_a_tool_call_whose_result_the_answer_uses(
    tmp_path: Path, notes: Notes, tool_calling_llm: str
) -> None:
    args = kiosk_args(tmp_path, notes, tool_calling_llm)

    async def talk(url: str) -> tuple[list[Event], list[Event]]:
        async with connect(url) as ws:
            created = await next_event(ws)
            assert created["type"] == "session.created"
            await send(ws, type="input.text", id="q-order", text="Where is my order 1234?")
            answered = await events_until(ws, lambda e: e["type"] == "response.done" and e["turn"] == 2, 60)
            await send(ws, type="input.text", id="q-archive", text="And order 99 in the archive?")
            await events_until(ws, of_type("tool.call"), 60)
            await send(ws, type="session.reset")
            reset = await events_until(ws, of_type("session.created"), 30)
            return answered, reset

    with running_kiosk(tmp_path, *args) as kiosk:
        answered, _ = asyncio.run(talk(kiosk.url))
        cancelled = notes.wait_for("cancelled slow_lookup 99", 10)
        kiosk.wait_for_line("abandoned", 10)
    output = kiosk.output()

    tools = [(e["type"], e.get("name"), e.get("output")) for e in answered if e["type"].startswith("tool.")]
    assert tools == [("tool.call", "lookup_order", None), ("tool.result", None, ANSWER)]
    done = [e["text"] for e in answered if e["type"] == "response.done"]
    assert done == ["Let me look that up.", f"I looked it up. {ANSWER}"]
    assert cancelled
    assert output.count("MCP server calendar did not start: No such file or directory") == 1
    assert "tool slow_lookup (orders) abandoned" in output
