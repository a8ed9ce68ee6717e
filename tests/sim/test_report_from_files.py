"""A simulation's report is built from what any client could record: rebuilt from the events.jsonl and
session.jsonl a run wrote, it says the same as the report the run printed."""

from __future__ import annotations

import json

import pytest

from tests.support.scenarios import NAMES, RunScenario
from voice.sim.report import ROOM_KEYS, rebuild_assistant_report

# an interruption, a tool run cut by the user, a reply that failed after words were heard, a request
# discarded at a pause the user went on from, false alarms over a reply, a typed duplicate
VARIED = [
    "interrupt-mid",
    "tool-running-interrupted",
    "failure-after-heard",
    "pause-after-a-whole-command",
    "sounds-no-barge-in",
    "typed-duplicate",
]


@pytest.mark.models
@pytest.mark.parametrize("name", NAMES)
def test_the_report_is_rebuilt_from_the_runs_stream_and_log(name: str, simulated: RunScenario) -> None:
    report, out = simulated(name)
    printed = json.loads((out / "report.json").read_text())

    rebuilt = rebuild_assistant_report(out)

    assert printed == report
    assert rebuilt == {key: value for key, value in report.items() if key not in ROOM_KEYS}


@pytest.mark.models
def test_the_varied_scenarios_report_what_the_rebuild_needs(simulated: RunScenario) -> None:
    """The scenarios rebuilt above between them cut, fail, discard, resume and drop a duplicate."""
    reports = {name: simulated(name)[0] for name in VARIED}
    turns = [turn for report in reports.values() for turn in report["turns"]]

    assert any(turn["interrupted"] and turn["barge_in_s"] is not None for turn in turns)
    assert any(turn.get("error") and turn["spoken"] for turn in turns)
    assert any(turn.get("false_barge_ins") for turn in turns)
    assert any(turn.get("tool_calls") for turn in turns)
    assert any(report.get("discarded_requests") for report in reports.values())
    assert any(report.get("duplicates") for report in reports.values())
    assert all(turn["audio_start_s"] is not None for turn in turns if turn["spoken"])
