"""The assistant's real components opened as the settings say: speech models, the engine, the LLM.

Shared by `voice simulate`, `voice demo`, `voice chat`, `voice kiosk` and `voice ask`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from voice.asr.context import heeding_context
from voice.asr.guard import guarded
from voice.asr.port import Transcriber
from voice.audio.block import ENGINE_RATE
from voice.audio.speech_probability import SileroSpeech
from voice.audio.vad import DEFAULT_BARGE_IN, DEFAULT_QUIET, VadSettings, VoiceActivityDetector
from voice.config.llm import LlmConfig
from voice.conversation.context_window import ContextBudget
from voice.conversation.continuation import Conversation
from voice.engine.engine import Engine
from voice.engine.hold import HIGH_PAUSE_MS, Eagerness, Hold
from voice.engine.overlap import OverlapPhrases
from voice.errors import ConfigError
from voice.llm.embedded_chat import EmbeddedChatModel
from voice.llm.embedded_server import N_CTX, EmbeddedServer
from voice.llm.openai_client import OpenAIChatModel
from voice.llm.port import ChatSettings, SizedChatModel, ToolSpec
from voice.speaker.encoder import SpeakerEncoder
from voice.speaker.voiceprint import Embed
from voice.speech_backends import SpeechChoice, prepare_synthesizer, prepare_transcriber
from voice.tts.port import Synthesizer
from voice.turn_end.port import EndOfTurn
from voice.turn_end.smart_turn import SmartTurn
from voice.wake.models import open_wake_detector
from voice.wake.watch import WakeWatch
from voice.waking import WakeWordGate


@dataclass(frozen=True)
class SpeechModels:
    """Whisper, piper, the end-of-turn model and the speaker encoder, loaded once and shared by every run
    or session.

    Without an end-of-turn model every turn ends after the VAD's long silence; without a speaker encoder
    every voice is the speaker's (``[turn] speaker = "anyone"``).
    """

    transcriber: Transcriber
    synthesizer: Synthesizer
    end_of_turn: EndOfTurn | None = None
    speaker: SpeakerEncoder | None = None

    @property
    def speaker_embed(self) -> Embed | None:
        """What tells whose voice a stretch is, for a runner's voiceprint (None: anyone's is taken)."""
        return None if self.speaker is None else self.speaker.embed


def load_speech_models(choice: SpeechChoice | None = None) -> SpeechModels:
    """The recogniser and voice ``choice`` names (voice/speech_backends.py) and Smart Turn v3.2, loaded.

    Both models are found before either loads, so a missing or corrupt one is a one-line ModelError at once;
    a server's model is not loaded here. Turn-end judgement stays local either way.
    """
    choice = choice or SpeechChoice()
    greedy = {"beam_size": 1} if choice.asr_greedy and choice.asr_url is None else None
    transcriber, synthesizer = prepare_transcriber(choice, tuning=greedy), prepare_synthesizer(choice)
    return SpeechModels(assistant_ears(transcriber(), choice.asr_context), synthesizer(), SmartTurn())


def telling_voices_apart(models: SpeechModels, speaker: str) -> SpeechModels:
    """``models`` with the GE2E speaker encoder loaded when only the conversation's ``speaker`` takes turns
    (``[turn] speaker = "conversation"``), as they are otherwise."""
    if speaker != "conversation" or models.speaker is not None:
        return models
    return replace(models, speaker=SpeakerEncoder())


def assistant_ears(transcriber: Transcriber, context: bool = False) -> Transcriber:
    """``transcriber`` as the assistant hears through it: behind the word guard, given the assistant's
    last question as context only if ``context`` (``[asr] context``)."""
    return heeding_context(guarded(transcriber), context)


def open_wake_gate(word: str | None, awake_s: float) -> WakeWordGate | None:
    """The wake word gate ``word`` names, asleep to start with; None without a wake word."""
    if word is None:
        return None
    return WakeWordGate(WakeWatch(open_wake_detector(word), round(awake_s * ENGINE_RATE)))


def make_engine(
    conversation: Conversation | None = None,
    eagerness: Eagerness = Eagerness.AUTO,
    overlap: OverlapPhrases | None = None,
    speaker: str = "anyone",
) -> Engine:
    """An engine listening with the default quiet and barge-in VAD settings and Silero's ear for a voice,
    answering a turn that sounds finished at a short pause as ``eagerness`` says, and taking ``overlap``'s
    backchannels and stop phrases over a reply (the defaults without it); ``speaker`` "conversation" takes
    turns only from the conversation's speaker (docs/architecture.md §10)."""
    vad = VoiceActivityDetector(quiet_vad(eagerness), DEFAULT_BARGE_IN, speech_model=SileroSpeech())
    only_speaker = speaker == "conversation"
    return Engine(vad, conversation, hold=Hold(eagerness), overlap=overlap, speaker=only_speaker)


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


@contextmanager
def open_chat_model(config: LlmConfig) -> Iterator[SizedChatModel]:
    """The configured model, or the embedded server's when no URL is set; everything stops on exit."""
    if config.url is not None:
        if not config.model:
            raise ConfigError(f"the LLM at {config.url} needs a model name")
        with OpenAIChatModel(
            config.url,
            config.model,
            api_key=config.api_key,
            extra_headers=dict(config.extra_headers),
            context_tokens=config.context_tokens,
        ) as remote:
            yield remote
        return
    with (
        EmbeddedServer(config.gguf, model=config.model, n_ctx=config.context_tokens or N_CTX) as server,
        EmbeddedChatModel(server) as local,
    ):
        yield local
