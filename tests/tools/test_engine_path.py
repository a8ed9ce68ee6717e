"""MCP tools through the engine's own path, in the virtual room with stand-in speech (real MCP servers):
the tools are offered on every request, a result reaches the next one, and a user who cuts in while a
slow tool runs waits for its real result."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from voice.audio.vad import DEFAULT_BARGE_IN, DEFAULT_QUIET, VoiceActivityDetector
from voice.cancel import CancelToken
from voice.conversation.items import NOT_RUN_INTERRUPTED, ToolCall, ToolResult, UserText
from voice.conversation.log_view import render_session
from voice.conversation.session_log import SessionLog, load_session
from voice.engine.engine import Engine
from voice.llm.port import ChatEvent, ChatRequest, Finished, TextDelta, ToolCallReady
from voice.sim.driver import Pipeline, RoomSimulation, SimulationResult
from voice.sim.scenario import RealLlm, Scenario, ScriptedLlm, ScriptedReply, ScriptedToolCall, UserCue
from voice.testing.stand_ins import EvenSynthesizer, Hears
from voice.tools.mcp_settings import McpServerSettings
from voice.tools.toolbox import McpToolbox


class OrderDeskModel:
    """A stand-in LLM that asks for the order's lookup, then answers with what the tool said."""

    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []

    def stream(self, request: ChatRequest, cancel: CancelToken) -> Iterator[ChatEvent]:
        self.requests.append(request)
        results = [item for item in request.items if isinstance(item, ToolResult)]
        if not results:
            yield TextDelta("Let me look.")
            yield ToolCallReady(ToolCall("call-1", "lookup_order", {"order_id": "1234"}))
        else:
            yield TextDelta(f"Here it is: {results[-1].output}")
        yield Finished("stop")


def run_room(
    scenario: Scenario,
    box: McpToolbox,
    model: OrderDeskModel | None = None,
    log: SessionLog | None = None,
    *,
    realtime: bool = False,
) -> SimulationResult:
    pipeline = Pipeline(
        Hears(),
        EvenSynthesizer(),
        lambda: Engine(VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN)),
        chat_model=model,
        tools=box,
        tool_specs=box.specs,
    )
    return RoomSimulation(scenario, pipeline, realtime=realtime, session_log=log).run()


def test_the_tools_are_offered_on_every_request_and_a_result_reaches_the_next(
    orders: McpServerSettings, tmp_path: Path
) -> None:
    model = OrderDeskModel()
    scenario = Scenario(
        Path("order.json"), RealLlm(), (UserCue(None, at_s=0.5, text="Where is order 1234?"),), 7.0
    )
    with McpToolbox([orders]) as box, SessionLog.create(tmp_path / "session.jsonl") as log:
        result = run_room(scenario, box, model, log)
        offered = box.specs
    shown_in_log = render_session(load_session(tmp_path / "session.jsonl"))

    first, second = model.requests
    assert first.tools == offered
    assert second.tools == offered
    assert second.items[-2:] == (
        ToolCall("call-1", "lookup_order", {"order_id": "1234"}),
        ToolResult("call-1", "Order 1234: two desk lamps, shipped on Tuesday, arriving Friday."),
    )
    said = [e["text"] for e in result.events if e["type"] == "response.done"]
    assert said[-1] == "Here it is: Order 1234: two desk lamps, shipped on Tuesday, arriving Friday."
    shown = [
        (e["type"], e.get("name"), e.get("output")) for e in result.events if e["type"].startswith("tool.")
    ]
    assert shown == [
        ("tool.call", "lookup_order", None),
        ("tool.result", None, "Order 1234: two desk lamps, shipped on Tuesday, arriving Friday."),
    ]
    assert (
        '  tool call   lookup_order({"order_id": "1234"})\n'
        "  tool result Order 1234: two desk lamps, shipped on Tuesday, arriving Friday.\n"
    ) in shown_in_log


@pytest.mark.slow
@pytest.mark.processes
@pytest.mark.realtime
def test_a_user_cutting_in_while_a_slow_tool_runs_gets_its_real_result_not_a_not_run(
    orders: McpServerSettings,
) -> None:
    slow = ScriptedToolCall("slow_lookup", {"order_id": "77", "seconds": 2.5})
    replies = (ScriptedReply("Let me look.", (slow,)), ScriptedReply("Your archived order was one kettle."))
    script = ScriptedLlm(replies, first_delta_ms=100, delta_ms=20)
    user = (
        UserCue(None, at_s=0.3, text="What was in my old order 77?"),
        UserCue(None, during_reply=1, after_ms=1500, text="Actually, is it the kettle one?"),
    )
    with McpToolbox([orders]) as box:
        result = run_room(Scenario(Path("slow.json"), script, user, 7.0), box, realtime=True)

    order = [
        e["type"] for e in result.events if e["type"] in {"tool.call", "tool.result", "input.transcript"}
    ]
    assert order == [
        "input.transcript",
        "tool.call",
        "input.transcript",
        "tool.result",
    ]  # cut in while it ran
    second = result.recorder.turns[2].request
    results = [item for item in second if isinstance(item, ToolResult)]
    assert results == [ToolResult("call_1_0", "Archived order 77: one kettle, delivered in March.")]
    assert second[-1] == UserText("Actually, is it the kettle one?")
    everything = json.dumps(result.events)
    assert NOT_RUN_INTERRUPTED not in everything
    assert not any(e["type"] == "response.interrupted" for e in result.events)
