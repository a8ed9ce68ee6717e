"""Scenario files: a bad one is one clear line and exit 1, and an earlier run is never overwritten."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.paths import AUDIO
from voice.cli import main
from voice.engine.overlap import Overlap
from voice.sim.scenario import RealLlm, ScriptedLlm, load_scenario

GOOD = {
    "version": 1,
    "llm": {"replies": ["Hello."], "first_delta_ms": 100},
    "user": [{"wav": str(AUDIO / "hello-there.wav"), "at_s": 0.5}],
    "end_s": 5,
}


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(data))
    return path


def test_relative_wav_paths_are_relative_to_the_scenario_file() -> None:
    scenario = load_scenario(AUDIO / "scenarios" / "room-echo-noise.json")

    assert scenario.user[0].wav == AUDIO / "fox-story.wav"
    assert scenario.room.noise is not None
    assert scenario.room.noise.wav == AUDIO / "pink-noise.wav"
    assert isinstance(scenario.llm, ScriptedLlm)


def test_a_scenario_sets_its_own_backchannels_and_stop_phrases(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, GOOD | {"turn": {"stop_phrases": ["enough"]}}))

    assert scenario.overlap is not None
    assert scenario.overlap.verdict("Enough.") is Overlap.STOP
    assert scenario.overlap.verdict("Stop.") is Overlap.CUT_IN
    assert scenario.overlap.verdict("Yeah.") is Overlap.BACKCHANNEL  # the list it left out: the default
    assert load_scenario(write(tmp_path, GOOD)).overlap is None  # the config's


def test_a_scenario_may_keep_to_the_conversations_speaker(tmp_path: Path) -> None:
    assert (
        load_scenario(write(tmp_path, GOOD | {"turn": {"speaker": "conversation"}})).speaker == "conversation"
    )
    assert load_scenario(write(tmp_path, GOOD)).speaker is None  # the config's


def test_a_real_llm_scenario_names_the_embedded_model(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, GOOD | {"llm": {"embedded": True}}))

    assert scenario.llm == RealLlm(None, None)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (GOOD | {"version": 2}, "version must be 1, got 2"),
        ({k: v for k, v in GOOD.items() if k != "end_s"}, "missing key 'end_s'"),
        (GOOD | {"user": [{"wav": "nope.wav", "at_s": 1}]}, "no such wav file 'nope.wav'"),
        (
            GOOD | {"user": [{"wav": str(AUDIO / "hello-there.wav")}]},
            "user entry 1 needs at_s or during_reply",
        ),
        (
            GOOD | {"user": [{"wav": str(AUDIO / "hello-there.wav"), "during_reply": 0}]},
            "during_reply counts from 1",
        ),
        (GOOD | {"llm": {"model": "x"}}, 'llm needs "replies", "url", "config": true or "embedded": true'),
        ([1, 2], "the top level must be an object"),
        (GOOD | {"llm": {"replies": [{"text": "Hi", "fail": "bogus"}]}}, "unknown fail code 'bogus'"),
        (GOOD | {"llm": {"replies": ["Hi"], "tools": {"x": {"ms": 5}}}}, "missing key 'result'"),
        (
            GOOD | {"llm": {"replies": ["Hi"], "tools": {"x": {"result": "r", "ms": -1}}}},
            "ms must not be negative",
        ),
        (GOOD | {"user": [{"text": " ", "at_s": 1}]}, "user entry 1: text must be a non-empty string"),
        (GOOD | {"turn": {"stop_phrases": "stop"}}, "turn.stop_phrases must be a list of phrases"),
        (GOOD | {"turn": {"eager": "high"}}, "turn must be an object with only backchannels, eagerness"),
        (GOOD | {"turn": {"speaker": "me"}}, "turn.speaker must be one of conversation, anyone, not 'me'"),
    ],
)
def test_a_bad_scenario_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: object, message: str
) -> None:
    assert main(["simulate", str(write(tmp_path, data)), "--out", str(tmp_path / "out")]) == 1

    err = capsys.readouterr().err
    assert err.startswith("voice: error: scenario ")
    assert message in err
    assert err.count("\n") == 1


def test_a_scenario_that_is_not_json_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "scenario.json"
    path.write_text("{not json")

    assert main(["simulate", str(path), "--out", str(tmp_path / "out")]) == 1
    assert "is not valid JSON" in capsys.readouterr().err


def test_an_earlier_run_is_not_overwritten_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "session.jsonl").write_text("precious\n")

    assert main(["simulate", str(write(tmp_path, GOOD)), "--out", str(out)]) == 1

    assert "pass --force to replace them" in capsys.readouterr().err
    assert (out / "session.jsonl").read_text() == "precious\n"


@pytest.mark.models
def test_a_script_with_too_few_replies_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    two_questions = [
        {"wav": str(AUDIO / "hello-there.wav"), "at_s": 0.5},
        {"wav": str(AUDIO / "what-weather.wav"), "at_s": 2.5},
    ]
    path = write(tmp_path, GOOD | {"user": two_questions, "end_s": 8})

    code = main(["simulate", str(path), "--out", str(tmp_path / "out")])

    assert code == 1
    assert capsys.readouterr().err.strip() == (
        "voice: error: the scenario scripts 1 replies but the assistant made request 2"
    )
