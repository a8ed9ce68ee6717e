"""The one table of speech backends is what the config, the flags, `voice models` and `voice say` read."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from voice.cli import main
from voice.config.flags import add_speech_arguments, add_turn_arguments
from voice.config.keys import BY_NAME
from voice.config.settings import load_settings
from voice.engine.hold import Eagerness
from voice.errors import ConfigError
from voice.speech_backends import (
    BACKENDS,
    SYNTHESIZERS,
    TRANSCRIBERS,
    SpeechBackend,
    SpeechChoice,
    check_server_url,
    local_backend,
    prepare_synthesizer,
    prepare_transcriber,
    synthesizer_for,
    transcriber_for,
)

Capture = pytest.CaptureFixture[str]
SERVERS = [backend for backend in BACKENDS if not backend.local]


def example_url(scheme: str, form: str) -> str:
    """A URL of the backend's form on ``scheme``, reaching nothing that listens."""
    return f"{scheme}://127.0.0.1:9" + ("/v1" if form.endswith("/v1") else "")


@pytest.mark.parametrize("backend", SERVERS, ids=lambda b: f"{b.role}-{b.name}")
def test_every_server_backend_is_taken_by_the_config_and_shown_in_its_help(
    backend: SpeechBackend[Any],
) -> None:
    key = BY_NAME[f"{backend.role}.url"]
    for scheme in backend.schemes:
        url = example_url(scheme, backend.form)
        assert key.check(url) == url
        assert check_server_url(backend.role, url)[0] is backend
    assert backend.form in key.help


@pytest.mark.parametrize("backend", SERVERS, ids=lambda b: f"{b.role}-{b.name}")
def test_every_server_backend_opens_without_connecting_and_closes(backend: SpeechBackend[Any]) -> None:
    url = example_url(backend.schemes[0], backend.form)
    opened = transcriber_for(url) if backend.role == "asr" else synthesizer_for(url)
    with opened:
        assert url.split("://")[1].split("/")[0] in repr(opened)


def test_a_setting_picks_its_backend_by_form() -> None:
    assert local_backend("asr", None)[0].name == "whisper"
    assert local_backend("tts", "piper-en_US-lessac-medium") == (SYNTHESIZERS[0], "piper-en_US-lessac-medium")
    assert local_backend("tts", "piper:/voices/joe.onnx") == (SYNTHESIZERS[0], "/voices/joe.onnx")
    assert local_backend("asr", "whisper-base") == (TRANSCRIBERS[0], "whisper-base")
    assert check_server_url("asr", "https://speech.example/v1?model=small")[0].name == "openai"
    assert check_server_url("tts", "wyoming://box:10200?voice=alba")[0].name == "wyoming"


def test_a_setting_only_one_kind_of_backend_takes_is_refused_in_one_line() -> None:
    with pytest.raises(ConfigError, match=r"--length-scale is not something wyoming://box:10200 \(a Wyoming"):
        prepare_synthesizer(SpeechChoice(tts_url="wyoming://box:10200"), tuning={"length_scale": 1.5})
    with pytest.raises(ConfigError, match="--beam-size is not something piper"):
        prepare_synthesizer(SpeechChoice(), tuning={"beam_size": 3})
    with pytest.raises(ConfigError, match="ASR server URL ftp://box/v1 is not one of wyoming://HOST:PORT or"):
        prepare_transcriber(SpeechChoice(asr_url="ftp://box/v1"))


def test_the_flags_and_the_environment_reach_the_table() -> None:
    parser = argparse.ArgumentParser()
    add_speech_arguments(parser)
    args = parser.parse_args(["--tts", "http://box/v1?voice=alloy&rate=22050"])
    settings = load_settings(args, {"VOICE_ASR_URL": "wyoming://box:10300", "VOICE_SPEECH_API_KEY": "k"})
    assert settings.speech == SpeechChoice(
        asr_url="wyoming://box:10300", tts_url="http://box/v1?voice=alloy&rate=22050", api_key="k"
    )
    with pytest.raises(ConfigError, match="rate must be a sample rate in Hz"):
        load_settings(parser.parse_args(["--tts", "http://box/v1?rate=fast"]), {})


def test_under_high_eagerness_whisper_is_chosen_greedy() -> None:
    parser = argparse.ArgumentParser()
    add_turn_arguments(parser)
    assert load_settings(parser.parse_args(["--eagerness", "high"]), {}).speech.asr_greedy
    assert not load_settings(parser.parse_args(["--eagerness", "auto"]), {}).speech.asr_greedy
    assert not load_settings(parser.parse_args([]), {}).speech.asr_greedy
    auto = load_settings(parser.parse_args([]), {})
    assert auto.speech_for(Eagerness.HIGH).asr_greedy  # `voice simulate` on a scenario that pins high


def test_voice_say_speaks_with_the_configured_server_and_says_so_when_it_is_down(
    tmp_path: Path, capsys: Capture
) -> None:
    """No piper is loaded: the configured voice is a server, and nothing listens there."""
    wav = tmp_path / "said.wav"
    config = tmp_path / "config.toml"
    config.write_text('[tts]\nurl = "wyoming://127.0.0.1:9"\n', encoding="utf-8")

    assert main(["say", "Hello there.", "--out", str(wav), "--config", str(config)]) == 1

    error = capsys.readouterr().err
    assert "TTS server" in error
    assert "wyoming://127.0.0.1:9" in error
    assert len(error.strip().splitlines()) == 1
    assert not wav.exists()
