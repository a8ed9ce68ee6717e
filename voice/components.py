"""The assistant's default real components: whisper, piper, webrtcvad and WebRTC echo cancellation."""

from __future__ import annotations

from voice.asr.whisper import WhisperSettings, WhisperTranscriber
from voice.audio.echo import EchoCanceller, WebRtcEchoCanceller
from voice.audio.vad import DEFAULT_BARGE_IN, DEFAULT_QUIET, VoiceActivityDetector
from voice.conversation.continuation import Conversation
from voice.engine.engine import Engine
from voice.tts.piper_voice import PiperSettings, PiperSynthesizer


def make_engine(conversation: Conversation | None = None) -> Engine:
    """An engine listening with the default quiet and barge-in VAD settings."""
    return Engine(VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN), conversation)


def load_transcriber(settings: WhisperSettings | None = None) -> WhisperTranscriber:
    return WhisperTranscriber(settings)


def load_synthesizer(settings: PiperSettings | None = None) -> PiperSynthesizer:
    return PiperSynthesizer(settings)


def make_echo_canceller() -> EchoCanceller:
    return WebRtcEchoCanceller()
