"""The real speech models, each loaded once per test session and shared by the ASR and TTS tests."""

from __future__ import annotations

import functools

from voice.asr.whisper import WhisperTranscriber
from voice.tts.piper_voice import PiperSynthesizer


@functools.cache
def whisper() -> WhisperTranscriber:
    """The bundled tiny.en with default settings."""
    return WhisperTranscriber()


@functools.cache
def piper() -> PiperSynthesizer:
    """The bundled en_US-joe-medium with default settings (phoneme alignments, zero noise)."""
    return PiperSynthesizer()
