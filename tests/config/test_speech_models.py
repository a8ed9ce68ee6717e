"""--asr-model / --tts-voice and [asr] / [tts] reach load_speech_models in chat, kiosk and simulate."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from voice.cli import main
from voice.components import SpeechModels
from voice.errors import ModelError
from voice.speech_backends import SpeechChoice

WriteConfig = Callable[[str], Path]
COMMANDS = {
    "chat": ("voice.cli.chat", ["chat"]),
    "kiosk": ("voice.kiosk.audio", ["kiosk", "--audio", "websocket"]),
    "simulate": ("voice.cli.simulate", ["simulate", "SCENARIO", "--out", "OUT"]),
}


@pytest.mark.parametrize("command", COMMANDS)
def test_the_chosen_models_are_the_ones_loaded(
    command: str,
    write_config: WriteConfig,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def refuse(choice: SpeechChoice | None = None) -> SpeechModels:
        assert choice is not None
        raise ModelError(
            f"asked for {choice.asr_model} and {choice.tts_voice}"
        )  # stands in for the slow real load

    module, argv = COMMANDS[command]
    monkeypatch.setattr(f"{module}.load_speech_models", refuse)
    scenario = tmp_path / "scenario.json"
    scenario.write_text('{"version": 1, "llm": {"replies": ["Hi."]}, "user": [], "end_s": 1}')
    argv = [str(scenario) if a == "SCENARIO" else str(tmp_path / "out") if a == "OUT" else a for a in argv]
    path = write_config('[asr]\nmodel = "whisper-base.en"\n[tts]\nvoice = "piper-en_US-lessac-medium"\n')

    assert main([*argv, "--config", str(path)]) == 1
    assert capsys.readouterr().err.endswith("asked for whisper-base.en and piper-en_US-lessac-medium\n")

    assert main([*argv, "--config", str(path), "--tts-voice", "/voices/alba.onnx"]) == 1
    assert capsys.readouterr().err.endswith("asked for whisper-base.en and /voices/alba.onnx\n")
