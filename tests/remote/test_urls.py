"""A speech server's URL picks the backend; a URL that names none is one clear line."""

from __future__ import annotations

import pytest

from voice.asr.openai_asr import OpenAITranscriber
from voice.asr.wyoming_asr import WyomingTranscriber
from voice.errors import ConfigError
from voice.remote.urls import is_server_url
from voice.speech_backends import synthesizer_for, transcriber_for
from voice.tts.openai_tts import OpenAISynthesizer
from voice.tts.wyoming_tts import WyomingSynthesizer


def test_the_held_out_forms_pick_wyoming_and_openai_backends() -> None:
    assert isinstance(transcriber_for("wyoming://127.0.0.1:10300"), WyomingTranscriber)
    assert isinstance(
        synthesizer_for("wyoming://speech-box:10200?voice=en_US-lessac-medium"), WyomingSynthesizer
    )
    assert isinstance(transcriber_for("http://127.0.0.1:8000/v1"), OpenAITranscriber)
    assert isinstance(synthesizer_for("https://speech.example/v1?voice=alloy&rate=22050"), OpenAISynthesizer)


def test_a_model_name_is_not_a_server_url() -> None:
    assert is_server_url("wyoming://box:10300")
    assert is_server_url("http://box/v1")
    assert not is_server_url("whisper-base")
    assert not is_server_url("/models/joe.onnx")
    assert not is_server_url(None)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("wyoming://box", "ASR server URL wyoming://box must be wyoming://HOST:PORT"),
        ("wyoming://box:10300/asr", "must be wyoming://HOST:PORT"),
        ("wyoming://box:99999", "has a bad port"),
        ("ftp://box/v1", "is not one of wyoming://HOST:PORT or http(s)://HOST/v1"),
        ("box:10300", "is not one of"),
        ("http://box:8000", "must name the API's base, e.g. http://HOST/v1"),
        ("http://box/v1?speed=2", "unknown option 'speed', known: language, model"),
    ],
)
def test_a_url_that_names_no_server_is_a_config_error(url: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        transcriber_for(url)

    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_credentials_in_a_bad_url_are_not_repeated() -> None:
    with pytest.raises(ConfigError) as raised:
        synthesizer_for("http://user:hunter2@box/v1?rate=fast")

    assert "hunter2" not in str(raised.value)
    assert "rate must be a sample rate in Hz" in str(raised.value)
