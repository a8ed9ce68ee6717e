"""Each eagerness in the virtual room, on a command said with a pause after its finished-sounding start
("Set a timer ... for ten minutes"), answered by a scripted model that is ready at once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import AUDIO
from voice.audio.vad import DEFAULT_QUIET
from voice.components import SpeechModels
from voice.engine.hold import HIGH_PAUSE_MS, SHORTEST_MS, START_MS, Eagerness
from voice.errors import ConfigError
from voice.sim.run import run_scenario
from voice.sim.scenario import load_scenario

SCENARIOS = AUDIO / "scenarios" / "eagerness"
PAUSE_ENDS_S = 0.5 + 1.48  # the cue's start plus where the fixture's pause ends


def run(name: str, out: Path, models: SpeechModels, eagerness: Eagerness | None = None) -> dict[str, Any]:
    scenario = load_scenario(SCENARIOS / f"{name}.json")
    report: dict[str, Any] = run_scenario(scenario, out, models=models, eagerness=eagerness)
    return report


def hold_lines(out: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in (out / "session.jsonl").read_text().splitlines()]
    return [line for line in lines if line["type"] == "hold"]


@pytest.mark.models
def test_high_answers_into_the_pause_is_cut_and_the_words_merge(
    speech_models: SpeechModels, tmp_path: Path
) -> None:
    report = run("high", tmp_path, speech_models)
    first, second, *_ = report["turns"]
    first_part, going_on, *_ = report["user_speech"]

    assert first["request"][-1]["text"] == first_part["transcript"]  # answered "Set a timer." alone
    assert first["audio_start_s"] < going_on["start_s"]  # into the pause
    assert first["interrupted"]
    assert first["spoken"] == ""  # cut at barge-in speed, before a word was heard
    assert first["barge_in_s"] - going_on["start_s"] < 0.25
    assert all(item["role"] == "user" for turn in report["turns"] for item in turn["request"])
    merged = second["request"][-1]["text"]
    assert merged.startswith(first_part["transcript"])
    assert "minutes" in merged  # one user item: what was answered and what followed
    assert not report.get("discarded_requests")  # nothing held back, nothing discarded unheard
    assert hold_lines(tmp_path) == []


@pytest.mark.models
def test_high_answers_a_finished_question_sooner_than_the_usual_200_ms_pause(
    speech_models: SpeechModels, tmp_path: Path
) -> None:
    report = run("auto-never-pauses", tmp_path, speech_models, eagerness=Eagerness.HIGH)
    delays = reply_delays_ms(report)

    assert len(delays) == 6
    assert not any(turn["interrupted"] for turn in report["turns"])
    assert all(HIGH_PAUSE_MS <= delay < 200 for delay in delays)  # the pause, a block and the reply


@pytest.mark.models
def test_auto_does_not_answer_into_the_pause(speech_models: SpeechModels, tmp_path: Path) -> None:
    report = run("auto", tmp_path, speech_models)
    (turn,) = report["turns"]
    (speech,) = report["user_speech"]

    assert turn["audio_start_s"] > PAUSE_ENDS_S
    assert turn["audio_start_s"] >= speech["end_s"] + START_MS / 1000
    assert not turn["interrupted"]
    assert "timer" in turn["request"][-1]["text"].lower()
    assert "minutes" in turn["request"][-1]["text"]
    (discarded,) = report["discarded_requests"]  # the pause was taken for an end, and held
    assert discarded["request"][-1]["text"] == "Set a timer."
    (change,) = hold_lines(tmp_path)  # the user went on within the hold: it grows for the next end
    assert change["was_ms"] == START_MS
    assert change["hold_ms"] > START_MS
    assert turn["audio_start_s"] >= speech["end_s"] + change["hold_ms"] / 1000


def reply_delays_ms(report: dict[str, Any]) -> list[float]:
    """Per turn: from the end of the user's speech it answers to its first reply audio."""
    ends = [speech["end_s"] for speech in report["user_speech"]]
    return [
        (turn["audio_start_s"] - max(end for end in ends if end < turn["audio_start_s"])) * 1000
        for turn in report["turns"]
    ]


@pytest.mark.models
def test_auto_shortens_the_hold_for_a_speaker_who_never_pauses(
    speech_models: SpeechModels, tmp_path: Path
) -> None:
    report = run("auto-never-pauses", tmp_path, speech_models)
    holds = [line["hold_ms"] for line in hold_lines(tmp_path)]
    delays = reply_delays_ms(report)

    assert len(report["turns"]) == len(report["user_speech"]) == 6  # one answer per question
    assert not any(turn["interrupted"] for turn in report["turns"])
    assert not report.get("discarded_requests")
    assert holds == sorted(holds, reverse=True)  # down at every turn
    assert len(set(holds)) == len(holds)
    assert holds[0] < START_MS
    assert SHORTEST_MS <= holds[-1] < START_MS - 150
    assert delays[0] >= START_MS  # the first answer waits out the starting hold
    assert delays[-1] >= holds[-1]  # never before the hold in effect
    assert delays[-1] < delays[0] - 150  # and the user hears it sooner


@pytest.mark.models
def test_auto_lengthens_the_hold_for_a_speaker_who_pauses_and_never_answers_into_it(
    speech_models: SpeechModels, tmp_path: Path
) -> None:
    report = run("auto-pauses", tmp_path, speech_models)
    changes = hold_lines(tmp_path)
    texts = [turn["request"][-1]["text"] for turn in report["turns"]]

    assert len(report["turns"]) == len(report["user_speech"]) == 5
    assert not any(turn["interrupted"] for turn in report["turns"])  # no answer played into a pause
    assert "minutes" in texts[0]  # whole sentences
    assert "minutes" in texts[-1]
    assert "Friday" in texts[2]
    grew = [change for change in changes if change["hold_ms"] > change["was_ms"]]
    assert len(grew) == 2  # each "Set a timer ..." pause the user went on from
    assert grew[0]["was_ms"] == START_MS
    assert all(change["hold_ms"] > 510 + 60 for change in grew)  # well past the fixture's 0.51 s pause
    assert all(delay >= START_MS for delay in reply_delays_ms(report))


@pytest.mark.models
def test_low_waits_for_the_long_silence(speech_models: SpeechModels, tmp_path: Path) -> None:
    report = run("low", tmp_path, speech_models)
    (turn,) = report["turns"]
    (speech,) = report["user_speech"]

    assert not report.get("discarded_requests")  # the pause was never taken for the end
    assert turn["audio_start_s"] >= speech["end_s"] + DEFAULT_QUIET.end_silence_ms / 1000
    assert "minutes" in turn["request"][-1]["text"]
    assert not turn["interrupted"]


@pytest.mark.models
def test_a_flag_overrides_the_scenarios_eagerness(speech_models: SpeechModels, tmp_path: Path) -> None:
    report = run("high", tmp_path, speech_models, eagerness=Eagerness.LOW)

    assert len(report["turns"]) == 1
    assert not report["turns"][0]["interrupted"]


def test_a_scenario_pins_eagerness_and_a_bad_one_is_one_line(tmp_path: Path) -> None:
    assert load_scenario(SCENARIOS / "high.json").eagerness is Eagerness.HIGH
    assert load_scenario(AUDIO / "scenarios" / "plain-turn.json").eagerness is None
    data = json.loads((SCENARIOS / "high.json").read_text())
    data["user"][0]["wav"] = str(AUDIO / "timer-pause.wav")
    data["turn"] = {"eagerness": "eager"}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))

    with pytest.raises(ConfigError, match="eagerness must be one of low, auto, high, not 'eager'"):
        load_scenario(bad)
