"""What drivers tell the engine: audio, transcripts, LLM output, synthesized audio, playback progress."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from voice.audio.block import AudioBlock
from voice.conversation.items import ToolCall, ToolResult
from voice.llm.errors import LLMError
from voice.tts.port import Synthesis


@dataclass(frozen=True)
class MicAudio:
    """A block from the microphone (echo already cancelled), on the engine's sample clock."""

    block: AudioBlock


@dataclass(frozen=True)
class TranscriptReady:
    """ASR's words for a transcription; ``reached_back``: samples of the user's voice before the VAD's cut
    it heard too (voice/audio/asr_signal.py: over a reply the VAD finds a voice late)."""

    utterance: int
    text: str
    reached_back: int = 0


@dataclass(frozen=True)
class TranscriptFailed:
    """ASR could not transcribe an utterance: the model raised, or (``server_down``) its server is down."""

    utterance: int
    message: str
    server_down: bool = False


@dataclass(frozen=True)
class TurnEndJudged:
    """How likely the end-of-turn model finds it that the user finished at the pause of ``utterance``."""

    utterance: int
    probability: float


@dataclass(frozen=True)
class SpeakerJudged:
    """How like the conversation's speaker the stretch of JudgeSpeaker(``stretch``) sounds: the cosine
    of its voice embedding to the voiceprint, None when it held too little voice or nobody is enrolled;
    ``voiced_s`` is how long the stretch was."""

    stretch: int
    similarity: float | None
    voiced_s: float


@dataclass(frozen=True)
class TextInput:
    """Typed user input (or a client's); ``input_id`` lets a retried delivery be recognised and dropped."""

    text: str
    input_id: str | None = None


@dataclass(frozen=True)
class CancelReply:
    """A stop button: the reply in flight ends as a spoken barge-in would end it, heard prefix kept."""


@dataclass(frozen=True)
class MuteMicrophone:
    """While ``muted``, the microphone's audio counts as silence (the clock still runs on its blocks)."""

    muted: bool


@dataclass(frozen=True)
class EndConversation:
    """The conversation ends here (a new visitor): the turn in flight is cut, late transcripts dropped."""


@dataclass(frozen=True)
class CloseSession:
    """The assistant is stopping (Ctrl-C, SIGTERM, a view's quit, a kiosk's shutdown): the turn in flight
    ends as a stop would end it, heard prefix kept, before the session's log is closed."""


@dataclass(frozen=True)
class LlmText:
    turn: int
    text: str


@dataclass(frozen=True)
class LlmToolCall:
    turn: int
    call: ToolCall


@dataclass(frozen=True)
class LlmDone:
    """The model finished its reply normally."""

    turn: int


@dataclass(frozen=True)
class LlmFailed:
    turn: int
    error: LLMError


@dataclass(frozen=True)
class SynthesisReady:
    turn: int
    chunk: int
    synthesis: Synthesis


@dataclass(frozen=True)
class SynthesisFailed:
    """TTS could not speak a chunk of the turn's reply."""

    turn: int
    chunk: int
    message: str


@dataclass(frozen=True)
class FailedOutsideReply:
    """Work of no reply failed (speaking a notice, judging a pause): logged, nothing else changes."""

    part: str
    message: str


@dataclass(frozen=True)
class AudioPlayed:
    """``played`` samples of the turn's audio have finished playing by output clock sample ``clock``.

    Drivers subtract the device's output latency: a sample handed to the device is not yet heard.
    """

    turn: int
    played: int
    clock: int


@dataclass(frozen=True)
class ToolDone:
    turn: int
    result: ToolResult


EngineInput: TypeAlias = (
    MicAudio
    | TranscriptReady
    | TranscriptFailed
    | TurnEndJudged
    | SpeakerJudged
    | TextInput
    | CancelReply
    | MuteMicrophone
    | EndConversation
    | CloseSession
    | LlmText
    | LlmToolCall
    | LlmDone
    | LlmFailed
    | SynthesisReady
    | SynthesisFailed
    | FailedOutsideReply
    | AudioPlayed
    | ToolDone
)
