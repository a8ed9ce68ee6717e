"""The assistant's default real components, shared by `voice simulate`, `voice demo` and `voice chat`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

from voice.asr.guard import guarded
from voice.asr.port import Transcriber
from voice.asr.whisper import WhisperSettings, WhisperTranscriber
from voice.audio.speech_probability import SileroSpeech
from voice.audio.vad import DEFAULT_BARGE_IN, DEFAULT_QUIET, VadSettings, VoiceActivityDetector
from voice.conversation.context_window import ContextBudget
from voice.conversation.continuation import Conversation
from voice.engine.engine import Engine
from voice.engine.hold import HIGH_PAUSE_MS, Eagerness, Hold
from voice.errors import ConfigError
from voice.llm.port import ChatSettings, SizedChatModel, ToolSpec
from voice.models import resolve
from voice.remote.speech import synthesizer_for, transcriber_for
from voice.tts.piper_voice import PiperSettings, PiperSynthesizer
from voice.tts.port import Synthesizer
from voice.turn_end.port import EndOfTurn
from voice.turn_end.smart_turn import SmartTurn


@dataclass(frozen=True)
class SpeechModels:
    """Whisper, piper and the end-of-turn model, loaded once and shared by every run or session.

    Without an end-of-turn model every turn ends after the VAD's long silence.
    """

    transcriber: Transcriber
    synthesizer: Synthesizer
    end_of_turn: EndOfTurn | None = None


@dataclass(frozen=True)
class SpeechChoice:
    """Which whisper and piper to load, or which speech servers to use instead.

    ``asr_model`` is a models.txt name ("whisper-base"), a whisper size name or a model directory (None: the
    bundled tiny.en); ``tts_voice`` a models.txt name or a piper ``.onnx`` with its ``.onnx.json`` beside it
    (None: the bundled en_US-joe-medium). ``asr_url`` and ``tts_url`` name speech servers used instead
    (voice.remote.speech), with ``api_key`` for them.
    """

    asr_model: str | None = None
    tts_voice: str | None = None
    asr_url: str | None = None
    tts_url: str | None = None
    api_key: str | None = field(default=None, repr=False)


def load_speech_models(choice: SpeechChoice | None = None) -> SpeechModels:
    """Whisper and piper (or their servers) as ``choice`` says, and Smart Turn v3.2, loaded and warmed up.

    A model that is missing or corrupt is a one-line ModelError; a server's model is not loaded here.
    Turn-end judgement stays local either way.
    """
    choice = choice or SpeechChoice()
    whisper_model = None if choice.asr_url else resolve.asr_model(choice.asr_model)  # both before any loads
    piper_voice = None if choice.tts_url else resolve.tts_voice(choice.tts_voice)
    transcriber: Transcriber = guarded(
        transcriber_for(choice.asr_url, api_key=choice.api_key)
        if choice.asr_url
        else WhisperTranscriber(WhisperSettings(model=whisper_model))
    )
    synthesizer: Synthesizer = (
        synthesizer_for(choice.tts_url, api_key=choice.api_key)
        if choice.tts_url
        else PiperSynthesizer(PiperSettings(model=piper_voice))
    )
    return SpeechModels(transcriber, synthesizer, SmartTurn())


def make_engine(conversation: Conversation | None = None, eagerness: Eagerness = Eagerness.AUTO) -> Engine:
    """An engine listening with the default quiet and barge-in VAD settings and Silero's ear for a voice,
    answering a turn that sounds finished at a short pause as ``eagerness`` says."""
    vad = VoiceActivityDetector(quiet_vad(eagerness), DEFAULT_BARGE_IN, speech_model=SileroSpeech())
    return Engine(vad, conversation, hold=Hold(eagerness))


def quiet_vad(eagerness: Eagerness) -> VadSettings:
    """The VAD's settings while nothing plays: ``high`` offers the turn to whisper and Smart Turn sooner."""
    return (
        replace(DEFAULT_QUIET, speculate_ms=HIGH_PAUSE_MS) if eagerness is Eagerness.HIGH else DEFAULT_QUIET
    )


def context_budget(
    model: SizedChatModel, settings: ChatSettings, tools: tuple[ToolSpec, ...] = ()
) -> ContextBudget | None:
    """What the conversation may use of the model's context, or None when the model does not say.

    The ``tools`` every request offers take their share, as the system prompt does.
    """
    if model.context_tokens is None:
        return None
    reply = settings.max_tokens or model.context_tokens // 4  # an unbounded reply gets a quarter
    offered = json.dumps([[t.name, t.description, t.parameters] for t in tools]) if tools else ""
    try:
        return ContextBudget.for_model(model.context_tokens, reply, settings.system_prompt + offered)
    except ValueError as exc:
        if not tools:
            raise
        raise ConfigError(f"{exc} and the {len(tools)} tools offered; offer fewer (tools = [...])") from exc
