"""The registry's speech servers, started once per session on loopback with the bundled models."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from voice.testing.speech_servers import (
    piper_http_server,
    whisper_http_server,
    wyoming_piper_server,
    wyoming_whisper_server,
)


@pytest.fixture(scope="session")
def wyoming_whisper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with wyoming_whisper_server(tmp_path_factory.mktemp("wyoming-whisper")) as url:
        yield url


@pytest.fixture(scope="session")
def wyoming_piper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with wyoming_piper_server(tmp_path_factory.mktemp("wyoming-piper")) as url:
        yield url


@pytest.fixture(scope="session")
def whisper_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with whisper_http_server(tmp_path_factory.mktemp("faster-whisper-server")) as url:
        yield url


@pytest.fixture(scope="session")
def piper_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with piper_http_server(tmp_path_factory.mktemp("local-tts")) as url:
        yield url
