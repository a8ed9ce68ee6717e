"""The registry's speech servers, started once per session on loopback with the bundled models."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.remote.servers import (
    LOCAL_TTS_RATE,
    faster_whisper_server_command,
    free_port,
    local_tts_command,
    local_tts_home,
    running,
    wyoming_piper_command,
    wyoming_whisper_command,
)


@pytest.fixture(scope="session")
def wyoming_whisper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """wyoming-faster-whisper serving the bundled tiny.en; yields its wyoming:// URL."""
    port, home = free_port(), tmp_path_factory.mktemp("wyoming-whisper")
    with running(wyoming_whisper_command(port, home), port, home / "server.log"):
        yield f"wyoming://127.0.0.1:{port}"


@pytest.fixture(scope="session")
def wyoming_piper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """wyoming-piper speaking with the bundled en_US-joe-medium; yields its wyoming:// URL."""
    port, home = free_port(), tmp_path_factory.mktemp("wyoming-piper")
    with running(wyoming_piper_command(port, home), port, home / "server.log"):
        yield f"wyoming://127.0.0.1:{port}"


@pytest.fixture(scope="session")
def whisper_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """faster-whisper-server (OpenAI-compatible) serving the bundled tiny.en; yields its /v1 URL."""
    port, home = free_port(), tmp_path_factory.mktemp("faster-whisper-server")
    with running(faster_whisper_server_command(port), port, home / "server.log"):
        yield f"http://127.0.0.1:{port}/v1"


@pytest.fixture(scope="session")
def piper_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """local-tts-studio (OpenAI-compatible piper) with the bundled voice; yields its /v1 URL and rate."""
    port, home = free_port(), tmp_path_factory.mktemp("local-tts")
    with running(local_tts_command(port), port, home / "server.log", local_tts_home(home)):
        yield f"http://127.0.0.1:{port}/v1?rate={LOCAL_TTS_RATE}"
