"""A speech server that is down: the turn fails with an error event naming it, and the assistant goes on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.support.paths import SCENARIOS
from voice.asr.whisper import WhisperTranscriber
from voice.audio.wav import read_wav
from voice.components import SpeechModels
from voice.sim.run import run_scenario
from voice.sim.scenario import load_scenario
from voice.speech_backends import synthesizer_for, transcriber_for
from voice.testing.loopback import free_port
from voice.tts.piper_voice import PiperSynthesizer

pytestmark = pytest.mark.models

PLAIN_TURN = SCENARIOS[0].parent / "plain-turn.json"


def errors(out: Path) -> list[dict[str, Any]]:
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    return [event for event in events if event["type"] == "error"]


def test_with_the_asr_server_down_the_user_hears_that_it_cannot_hear_right_now(
    synthesizer: PiperSynthesizer, transcriber: WhisperTranscriber, tmp_path: Path
) -> None:
    dead = f"wyoming://127.0.0.1:{free_port()}"
    with transcriber_for(dead) as deaf:
        report = run_scenario(load_scenario(PLAIN_TURN), tmp_path, models=SpeechModels(deaf, synthesizer))

    assert report["turns"] == []  # nothing was taken as the user's words
    [error] = errors(tmp_path)
    assert error["code"] == "asr"
    assert f"cannot connect to {dead}" in error["message"]
    said = transcriber.transcribe(read_wav(tmp_path / "speaker.wav")).text
    assert "can't hear you right now" in said.lower() or "cannot hear you right now" in said.lower(), said


def test_with_the_tts_server_down_the_reply_fails_and_nothing_garbled_plays(
    transcriber: WhisperTranscriber, tmp_path: Path
) -> None:
    dead = f"wyoming://127.0.0.1:{free_port()}"
    with synthesizer_for(dead) as mute:
        report = run_scenario(load_scenario(PLAIN_TURN), tmp_path, models=SpeechModels(transcriber, mute))

    [turn] = report["turns"]
    assert turn["error"] == "synthesis"
    assert turn["spoken"] == ""
    assert {error["code"] for error in errors(tmp_path)} == {"tts"}
    assert all(f"cannot connect to {dead}" in error["message"] for error in errors(tmp_path))
    assert float(np.abs(read_wav(tmp_path / "speaker.wav").samples).max()) == 0.0
