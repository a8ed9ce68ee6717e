"""The assistant's default real components, shared by `voice simulate`, `voice demo` and `voice chat`."""

from __future__ import annotations

from dataclasses import dataclass

from voice.asr.port import Transcriber
from voice.asr.whisper import WhisperTranscriber
from voice.audio.vad import DEFAULT_BARGE_IN, DEFAULT_QUIET, VoiceActivityDetector
from voice.conversation.context_window import ContextBudget
from voice.conversation.continuation import Conversation
from voice.engine.engine import Engine
from voice.llm.port import ChatSettings, SizedChatModel
from voice.tts.piper_voice import PiperSynthesizer
from voice.tts.port import Synthesizer


@dataclass(frozen=True)
class SpeechModels:
    """Whisper and piper, loaded once and shared by every run or session."""

    transcriber: Transcriber
    synthesizer: Synthesizer


def load_speech_models() -> SpeechModels:
    """The bundled tiny.en and en_US-joe-medium, loaded and warmed up."""
    return SpeechModels(WhisperTranscriber(), PiperSynthesizer())


def make_engine(conversation: Conversation | None = None) -> Engine:
    """An engine listening with the default quiet and barge-in VAD settings."""
    return Engine(VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN), conversation)


def context_budget(model: SizedChatModel, settings: ChatSettings) -> ContextBudget | None:
    """What the conversation may use of the model's context, or None when the model does not say."""
    if model.context_tokens is None:
        return None
    reply = settings.max_tokens or model.context_tokens // 4  # an unbounded reply gets a quarter
    return ContextBudget.for_model(model.context_tokens, reply, settings.system_prompt)
