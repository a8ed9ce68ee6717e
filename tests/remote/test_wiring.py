"""--asr / --tts and [asr] url / [tts] url reach load_speech_models in chat, kiosk and simulate."""

from __future__ import annotations

from pathlib import Path

import pytest

from voice.cli import main
from voice.components import SpeechModels
from voice.errors import ModelError
from voice.speech_backends import SpeechChoice

COMMANDS = {
    "chat": ("voice.cli.chat", ["chat"]),
    "kiosk": ("voice.kiosk.audio", ["kiosk", "--audio", "websocket"]),
    "simulate": ("voice.cli.simulate", ["simulate", "SCENARIO", "--out", "OUT"]),
}


@pytest.fixture(autouse=True)
def no_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    for variable in ("VOICE_ASR_URL", "VOICE_TTS_URL", "VOICE_SPEECH_API_KEY"):
        monkeypatch.delenv(variable, raising=False)


def command_line(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The command's arguments, with load_speech_models refusing by naming what it was asked for."""

    def refuse(choice: SpeechChoice | None = None) -> SpeechModels:
        assert choice is not None
        raise ModelError(f"asked for {choice.asr_url} and {choice.tts_url} with key {choice.api_key}")

    module, argv = COMMANDS[command]
    monkeypatch.setattr(f"{module}.load_speech_models", refuse)
    scenario = tmp_path / "scenario.json"
    scenario.write_text('{"version": 1, "llm": {"replies": ["Hi."]}, "user": [], "end_s": 1}')
    return [str(scenario) if a == "SCENARIO" else str(tmp_path / "out") if a == "OUT" else a for a in argv]


@pytest.mark.parametrize("command", COMMANDS)
def test_speech_servers_from_flags_the_file_and_the_environment_reach_the_loader(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = command_line(command, tmp_path, monkeypatch)
    config = tmp_path / "config.toml"
    config.write_text('[asr]\nurl = "wyoming://box:10300"\n[tts]\nurl = "http://box:8000/v1?voice=alloy"\n')

    assert main([*argv, "--config", str(config)]) == 1
    assert capsys.readouterr().err.endswith(
        "asked for wyoming://box:10300 and http://box:8000/v1?voice=alloy with key None\n"
    )

    monkeypatch.setenv("VOICE_SPEECH_API_KEY", "sk-speech")
    monkeypatch.setenv("VOICE_TTS_URL", "wyoming://tts-box:10200")
    assert main([*argv, "--config", str(config), "--asr", "https://speech.example/v1"]) == 1
    assert capsys.readouterr().err.endswith(
        "asked for https://speech.example/v1 and wyoming://tts-box:10200 with key sk-speech\n"
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_a_bad_speech_server_url_is_one_line_before_anything_loads(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = command_line(command, tmp_path, monkeypatch)

    assert main([*argv, "--asr", "wyoming://box"]) != 0

    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("voice: error: ")
    assert "--asr" in err
    assert "must be wyoming://HOST:PORT" in err
    assert "asked for" not in err
