"""The virtual room's MCP scenario: a scripted model calls a tool the scenario does not script, a real
MCP server started as a process answers, and the next request carries that answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from voice.asr.whisper import WhisperTranscriber
from voice.components import SpeechModels
from voice.sim.run import run_scenario
from voice.sim.scenario import load_scenario
from voice.tts.piper_voice import PiperSynthesizer

SCENARIO = Path(__file__).resolve().parents[2] / "audio" / "scenarios" / "mcp-order-lookup.json"


def test_the_scenario_names_its_server_by_paths_from_its_own_folder() -> None:
    (server,) = load_scenario(SCENARIO).mcp_servers

    assert server.name == "orders"
    assert server.command is not None
    assert Path(server.command[1]) == SCENARIO.parents[2] / "tests" / "tools" / "servers" / "orders_server.py"
    assert server.tools == ("lookup_order",)


@pytest.mark.models
def test_a_scripted_model_calls_an_mcp_tool_and_the_next_request_carries_its_real_result(
    transcriber: WhisperTranscriber, synthesizer: PiperSynthesizer, tmp_path: Path
) -> None:
    report = run_scenario(load_scenario(SCENARIO), tmp_path, models=SpeechModels(transcriber, synthesizer))

    first, second = report["turns"]
    assert second["request"][-2:] == [
        {"role": "tool_call", "id": "call_1_0", "name": "lookup_order", "arguments": {"order_id": "1234"}},
        {
            "role": "tool_result",
            "id": "call_1_0",
            "output": "Order 1234: two desk lamps, shipped on Tuesday, arriving Friday.",
        },
    ]
    assert first["spoken"] == "Let me look that up."
    assert not second["interrupted"]
