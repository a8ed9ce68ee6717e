"""Real speech servers from the registry, started as processes on loopback with the bundled models."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from voice.asr.whisper import bundled_model_dir
from voice.testing.loopback import free_port, wait_for_port
from voice.tts.piper_voice import bundled_voice_path


def _offline(extra: dict[str, str]) -> dict[str, str]:
    """The environment of a server that must never reach the network for a model."""
    return {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1", **extra}


def wyoming_whisper_command(port: int, data_dir: Path) -> list[str]:
    return [
        sys.executable, "-m", "wyoming_faster_whisper",
        "--uri", f"tcp://127.0.0.1:{port}",
        "--model", str(bundled_model_dir()),
        "--data-dir", str(data_dir),
        "--local-files-only",
        "--stt-library", "faster-whisper",
        "--language", "en",
        "--beam-size", "1",
        "--cpu-threads", "1",
    ]  # fmt: skip


def wyoming_piper_command(port: int, data_dir: Path) -> list[str]:
    # A voice given as a path is loaded from it; the catalog is the package's own copy (no --update-voices).
    return [
        sys.executable, "-m", "wyoming_piper",
        "--uri", f"tcp://127.0.0.1:{port}",
        "--voice", str(bundled_voice_path()),
        "--data-dir", str(data_dir),
    ]  # fmt: skip


def faster_whisper_server_command(port: int) -> list[str]:
    return [
        sys.executable, "-m", "faster_whisper_server", str(bundled_model_dir()),
        "--host", "127.0.0.1", "--port", str(port),
    ]  # fmt: skip


LOCAL_TTS_RATE = 22050  # local-tts-studio sends the voice's own rate as pcm, not OpenAI's 24 kHz


def local_tts_command(port: int) -> list[str]:
    """local-tts-studio: piper behind ``/v1/audio/speech``; its settings come from :func:`local_tts_home`."""
    return [sys.executable, "-m", "local_tts.cli", "--host", "127.0.0.1", "--port", str(port)]


def local_tts_home(home: Path, *, api_key: str | None = None, voice: str | None = None) -> dict[str, str]:
    """A data folder serving the bundled voice (or ``voice``, a name it lacks) to API clients; its env."""
    bundled = bundled_voice_path()
    voices = home / "voices"
    voices.mkdir(parents=True, exist_ok=True)
    for source in (bundled, bundled.with_name(bundled.name + ".json")):
        if not (voices / source.name).exists():
            (voices / source.name).symlink_to(source)
    settings = {
        "voices_dir": str(voices),
        "device": "cpu",
        "api_default_voice": voice or bundled.stem,
        "api_key_enabled": api_key is not None,
        "api_key": api_key or "",
    }
    (home / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    return {"LOCAL_TTS_DATA_DIR": str(home)}


@contextmanager
def running(
    command: list[str], port: int, log: Path, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``command`` (``env`` added to ours), wait until ``port`` accepts, and stop it at the end."""
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=_offline(env or {}))
    try:
        wait_for_port(port, process, log)
        yield process
    finally:
        process.kill()
        process.wait()


@contextmanager
def wyoming_whisper_server(home: Path) -> Iterator[str]:
    """wyoming-faster-whisper serving the bundled tiny.en; yields its wyoming:// URL."""
    port = free_port()
    with running(wyoming_whisper_command(port, home), port, home / "server.log"):
        yield f"wyoming://127.0.0.1:{port}"


@contextmanager
def wyoming_piper_server(home: Path) -> Iterator[str]:
    """wyoming-piper speaking with the bundled en_US-joe-medium; yields its wyoming:// URL."""
    port = free_port()
    with running(wyoming_piper_command(port, home), port, home / "server.log"):
        yield f"wyoming://127.0.0.1:{port}"


@contextmanager
def whisper_http_server(home: Path) -> Iterator[str]:
    """faster-whisper-server (OpenAI-compatible) serving the bundled tiny.en; yields its /v1 URL."""
    port = free_port()
    with running(faster_whisper_server_command(port), port, home / "server.log"):
        yield f"http://127.0.0.1:{port}/v1"


@contextmanager
def piper_http_server(home: Path) -> Iterator[str]:
    """local-tts-studio (OpenAI-compatible piper) with the bundled voice; yields its /v1 URL and rate."""
    port = free_port()
    with running(local_tts_command(port), port, home / "server.log", local_tts_home(home)):
        yield f"http://127.0.0.1:{port}/v1?rate={LOCAL_TTS_RATE}"


@dataclass(frozen=True)
class SpeechServers:
    """The four servers' URLs, as ``transcriber_for`` and ``synthesizer_for`` take them."""

    wyoming_whisper: str
    wyoming_piper: str
    whisper_http: str
    piper_http: str


@contextmanager
def speech_servers(work: Path) -> Iterator[SpeechServers]:
    """All four servers at once, each with its own folder under ``work``; stopped at the end."""
    starts = {
        "wyoming-whisper": wyoming_whisper_server,
        "wyoming-piper": wyoming_piper_server,
        "faster-whisper-server": whisper_http_server,
        "local-tts": piper_http_server,
    }
    with ExitStack() as stack:
        urls = []
        for name, start in starts.items():
            (work / name).mkdir(parents=True, exist_ok=True)
            urls.append(stack.enter_context(start(work / name)))
        yield SpeechServers(*urls)
