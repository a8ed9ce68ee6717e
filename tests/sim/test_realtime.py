"""`--realtime`: the same scenario paced by the wall clock, with ASR, TTS and the LLM in worker threads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import AUDIO
from tests.support.scenarios import RunScenario
from voice.components import SpeechModels
from voice.sim.run import run_scenario
from voice.sim.scenario import load_scenario


@pytest.mark.models
def test_a_realtime_run_says_what_the_virtual_time_run_says(
    simulated: RunScenario, speech_models: SpeechModels, tmp_path: Path
) -> None:
    virtual, _ = simulated("interrupt-mid")
    scenario = load_scenario(AUDIO / "scenarios" / "interrupt-mid.json")

    real: dict[str, Any] = run_scenario(scenario, tmp_path, realtime=True, models=speech_models)

    assert real["turns"][0]["request"] == virtual["turns"][0]["request"]
    assert [s["transcript"] for s in real["user_speech"]] == [s["transcript"] for s in virtual["user_speech"]]
    assert [t["interrupted"] for t in real["turns"]] == [t["interrupted"] for t in virtual["turns"]]
    answer = real["turns"][0]
    assert (
        answer["audio_start_s"] > real["user_speech"][0]["end_s"]
    )  # a real delay: it had to think and speak
    assert real["turns"][1]["request"][-1] == {"role": "user", "text": real["user_speech"][1]["transcript"]}
