"""Shared fixtures for audio tests: real synthetic speech (espeak-ng)."""

from __future__ import annotations

import subprocess

import pytest

from tests.support.espeak import Speak
from voice.audio.block import Samples
from voice.audio.wav import read_wav


@pytest.fixture(scope="session")
def speak(tmp_path_factory: pytest.TempPathFactory) -> Speak:
    """Say a sentence with espeak-ng and return it as 16 kHz mono float32, starting at its first sample."""
    folder = tmp_path_factory.mktemp("speech")

    def say(text: str, voice: str = "en") -> Samples:
        path = folder / f"{abs(hash((text, voice)))}.wav"
        subprocess.run(["espeak-ng", "-v", voice, "-w", str(path), text], check=True)
        return read_wav(path).samples

    return say
