"""The toolbox against real MCP servers started as processes: what the model is offered, what a call
gives the conversation, and what happens when a server errs, is slow, dies or is not there."""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.mcp_servers import ORDERS, Notes, orders_settings, start_home, stop
from voice.cancel import CancelToken
from voice.config.settings import load_settings
from voice.conversation.items import ABANDONED_RUNNING, ToolCall, ToolResult
from voice.testing.loopback import free_port
from voice.tools.mcp_settings import McpServerSettings
from voice.tools.toolbox import McpToolbox


def call(box: McpToolbox, name: str, **arguments: object) -> ToolResult:
    return box(ToolCall(f"call-{name}", name, dict(arguments)), CancelToken())


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpToolbox]:
    """One order desk, as configured by default, for the tests that only call its tools."""
    notes = Notes(tmp_path_factory.mktemp("desk") / "orders-notes.txt")
    with McpToolbox([orders_settings(notes)]) as box:
        yield box


def test_a_servers_tools_are_offered_with_their_schemas_and_answer_in_text(desk: McpToolbox) -> None:
    offered = {spec.name: spec for spec in desk.specs}
    result = call(desk, "lookup_order", order_id="1234")

    assert (
        offered["lookup_order"].description
        == "Look up an order by its number: what it holds and where it is."
    )
    assert offered["lookup_order"].parameters["required"] == ["order_id"]
    assert result == ToolResult(
        "call-lookup_order", "Order 1234: two desk lamps, shipped on Tuesday, arriving Friday."
    )


def test_structured_content_goes_in_as_json_and_an_image_is_left_out_with_a_note(desk: McpToolbox) -> None:
    status = call(desk, "order_status", order_id="7")
    photo = call(desk, "order_photo", order_id="7")

    assert not status.failed
    assert '"status": "shipped"' in status.output
    assert '"parcels": 2' in status.output
    assert photo.output == "Parcel 7 at the depot.\n(an image left out: it cannot be read aloud)"


def test_a_tool_error_is_a_failed_result_with_the_servers_message(desk: McpToolbox) -> None:
    result = call(desk, "refund", order_id="9")

    assert result.failed
    assert result.output.startswith("Failed: ")
    assert result.output.endswith("order 9 was paid in cash; refunds need a manager")


@pytest.mark.slow
@pytest.mark.processes
@pytest.mark.realtime
def test_a_call_past_the_servers_timeout_fails_and_the_server_is_told_to_cancel(notes: Notes) -> None:
    with McpToolbox([orders_settings(notes, timeout_s=1.0)]) as box:
        started = time.monotonic()
        result = call(box, "slow_lookup", order_id="55", seconds=20)
        took = time.monotonic() - started
        told = notes.wait_for("cancelled slow_lookup 55")

    assert result == ToolResult(
        "call-slow_lookup", "Failed: timed out; it may have taken effect.", failed=True
    )
    assert 1.0 <= took < 3.0
    assert told


@pytest.mark.slow
@pytest.mark.processes
def test_a_server_that_dies_mid_call_fails_that_call_and_is_restarted_for_the_next(
    orders: McpServerSettings,
) -> None:
    with McpToolbox([orders]) as box:
        before = call(box, "server_pid").output
        crashed = call(box, "crash_during", order_id="3")
        after = call(box, "server_pid")
        found = call(box, "lookup_order", order_id="3")
        restarts = box.restarts("orders")

    assert crashed.failed
    assert (
        crashed.output == "Failed: the orders tool server stopped during the call; it may have taken effect."
    )
    assert not after.failed
    assert after.output != before  # a new process
    assert found.output.startswith("Order 3:")
    assert restarts == 1


@pytest.mark.slow
@pytest.mark.processes
def test_an_http_server_that_dies_mid_call_fails_that_call_and_is_reached_again_once_back() -> None:
    port = free_port()
    first = start_home(port)
    try:
        with McpToolbox([McpServerSettings("home", url=f"http://127.0.0.1:{port}/mcp", timeout_s=5)]) as box:
            before = call(box, "server_pid").output
            crashed = call(box, "reboot_hub")
            first.wait(5)
            while_down = call(box, "server_pid")
            second = start_home(port)
            try:
                deadline = time.monotonic() + 20
                while box.restarts("home") == 0 and time.monotonic() < deadline:
                    time.sleep(0.2)
                after = call(box, "server_pid")
            finally:
                stop(second)
    finally:
        stop(first)

    assert crashed.output == "Failed: the home tool server stopped during the call; it may have taken effect."
    assert while_down.failed
    assert while_down.output.startswith("Failed: the home tool server is not running")
    assert not after.failed
    assert after.output != before


def test_only_allow_listed_tools_are_offered_or_run(notes: Notes) -> None:
    lines: list[str] = []
    settings = orders_settings(notes, tools=("lookup_order", "cancel_order"))
    with McpToolbox([settings], say=lines.append) as box:
        names = [spec.name for spec in box.specs]
        refused = call(box, "delete_all_orders")

    assert names == ["lookup_order"]
    assert refused == ToolResult(
        "call-delete_all_orders", "Failed: no tool named 'delete_all_orders'.", failed=True
    )
    assert "deleted every order" not in notes.lines()
    assert lines == ["MCP server orders offers no tool 'cancel_order' (named in its tools list)"]


def test_a_name_two_servers_offer_is_qualified_by_each_servers_name(
    orders: McpServerSettings, home_url: str
) -> None:
    home = McpServerSettings("home", url=home_url)
    with McpToolbox([orders, home]) as box:
        names = {spec.name for spec in box.specs}
        at_desk = call(box, "orders__now")
        at_home = call(box, "home__now")
        light = call(box, "switch_light", room="kitchen", on=True)

    assert {"orders__now", "home__now", "lookup_order", "switch_light"} <= names
    assert "now" not in names
    assert at_desk.output == "It is 09:30 at the order desk."
    assert at_home.output == "It is 21:15 at home."
    assert light.output == "The kitchen light is on."


def test_http_headers_come_from_the_environment_never_the_file(home_url: str) -> None:
    home = McpServerSettings("home", url=home_url, headers_env=(("Authorization", "HOME_TOKEN"),))
    with McpToolbox([home], environ={"HOME_TOKEN": "Bearer kitchen-7"}) as box:
        answer = call(box, "whoami")
    with McpToolbox([home], environ={}) as box:
        offered = box.specs
        lines = list(box.failures)

    assert answer.output == "Authorization: Bearer kitchen-7"
    assert offered == ()
    assert lines == [
        "MCP server home did not start: environment variable HOME_TOKEN (for a header) is not set; "
        "going on without it"
    ]


def test_servers_that_fail_to_start_are_one_line_each_and_the_others_still_serve(
    orders: McpServerSettings, tmp_path: object
) -> None:
    missing = McpServerSettings("calendar", command=("/nonexistent/calendar-mcp",))
    broken = McpServerSettings(
        "notes", command=(sys.executable, "-c", "raise SystemExit('no notebook configured')")
    )
    unreachable = McpServerSettings("lights", url="http://127.0.0.1:9/mcp", timeout_s=5)
    said: list[str] = []
    with McpToolbox([missing, orders, broken, unreachable], say=said.append) as box:
        result = call(box, "lookup_order", order_id="1")
        lines = box.failures

    assert result.output.startswith("Order 1:")
    assert said == []  # the failures are the caller's to show, once
    assert [line.split(" did not start: ")[0] for line in lines] == [
        "MCP server calendar",
        "MCP server notes",
        "MCP server lights",
    ]
    assert "No such file or directory" in lines[0]
    assert "no notebook configured" in lines[1]
    assert all("\n" not in line and line.endswith("going on without it") for line in lines)


@pytest.mark.slow
@pytest.mark.processes
def test_calls_still_running_at_shutdown_are_cancelled_at_the_server_and_said_abandoned(
    orders: McpServerSettings, notes: Notes
) -> None:
    lines: list[str] = []
    results: list[ToolResult] = []
    box = McpToolbox([orders], say=lines.append)
    box.open()
    worker = threading.Thread(
        target=lambda: results.append(call(box, "slow_lookup", order_id="8", seconds=30))
    )
    worker.start()
    time.sleep(1.0)
    box.close()
    worker.join(5)

    assert results == [ToolResult("call-slow_lookup", ABANDONED_RUNNING, failed=True)]
    assert lines == ["tool slow_lookup (orders) abandoned at shutdown; its server was told to cancel it"]
    assert notes.wait_for("cancelled slow_lookup 8")


@pytest.mark.slow
@pytest.mark.processes
def test_a_cancelled_token_abandons_the_call_and_tells_the_server(
    orders: McpServerSettings, notes: Notes
) -> None:
    lines: list[str] = []
    token = CancelToken()
    with McpToolbox([orders], say=lines.append) as box:
        threading.Timer(1.0, token.cancel).start()
        result = box(ToolCall("c1", "slow_lookup", {"order_id": "4", "seconds": 30}), token)
        told = notes.wait_for("cancelled slow_lookup 4")

    assert result == ToolResult("c1", ABANDONED_RUNNING, failed=True)
    assert told
    assert lines == ["tool slow_lookup (orders) abandoned; its server was told to cancel it"]


def test_an_empty_allow_list_in_the_config_offers_no_tool_and_runs_none(notes: Notes, tmp_path: Path) -> None:
    """An operator who empties ``tools`` to turn a server's tools off exposes none of them (and the server
    is not even started)."""
    config = tmp_path / "config.toml"
    config.write_text(
        f"[mcp.servers.orders]\ncommand = [{sys.executable!r}, {str(ORDERS)!r}]\n"
        f"env = {{ ORDERS_NOTES = {str(notes.path)!r} }}\ntools = []\n",
        encoding="utf-8",
    )
    (servers,) = load_settings(argparse.Namespace(config=config), {}).mcp_servers
    with McpToolbox([servers], say=lambda line: None) as box:
        offered = box.specs
        refused = call(box, "delete_all_orders")

    assert offered == ()
    assert refused.failed
    assert "deleted every order" not in notes.lines()


def test_a_call_past_the_servers_timeout_is_a_failed_result(notes: Notes) -> None:
    with McpToolbox([orders_settings(notes, timeout_s=0.5)]) as box:
        result = call(box, "slow_lookup", order_id="56", seconds=20)

    assert result == ToolResult(
        "call-slow_lookup", "Failed: timed out; it may have taken effect.", failed=True
    )
