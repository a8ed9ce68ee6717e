"""Scenarios run once per test session with the real whisper and piper models (scripted LLM)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import AUDIO
from tests.support.scenarios import RunScenario
from voice.asr.whisper import WhisperTranscriber
from voice.components import SpeechModels, assistant_ears
from voice.sim.run import run_scenario
from voice.sim.scenario import load_scenario
from voice.tts.piper_voice import PiperSynthesizer
from voice.turn_end.smart_turn import SmartTurn


@pytest.fixture(scope="session")
def speech_models(transcriber: WhisperTranscriber, synthesizer: PiperSynthesizer) -> SpeechModels:
    """The session's one whisper (behind the word guard, as the assistant loads it), one piper and one
    Smart Turn, as the pipeline takes them."""
    return SpeechModels(assistant_ears(transcriber), synthesizer, SmartTurn())


@pytest.fixture(scope="session")
def manifest() -> dict[str, dict[str, Any]]:
    data = json.loads((AUDIO / "manifest.json").read_text())
    return {fixture["file"]: fixture for fixture in data["fixtures"]}


@pytest.fixture(scope="session")
def simulated(speech_models: SpeechModels, tmp_path_factory: pytest.TempPathFactory) -> RunScenario:
    """Runs a scenario by name (once per session) and returns its report and output folder."""
    done: dict[str, tuple[dict[str, Any], Path]] = {}

    def run(name: str) -> tuple[dict[str, Any], Path]:
        if name not in done:
            out = tmp_path_factory.mktemp(name)
            report = run_scenario(
                load_scenario(AUDIO / "scenarios" / f"{name}.json"), out, models=speech_models
            )
            done[name] = (report, out)
        return done[name]

    return run
