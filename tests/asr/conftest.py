from __future__ import annotations

import pytest

from tests import speech_models
from voice.asr.whisper import WhisperTranscriber
from voice.tts.piper_voice import PiperSynthesizer


@pytest.fixture(scope="session")
def transcriber() -> WhisperTranscriber:
    return speech_models.whisper()


@pytest.fixture(scope="session")
def synthesizer() -> PiperSynthesizer:
    return speech_models.piper()
