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
    utterance: int
    text: str


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
class PlaybackProgress:
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


EngineEvent: TypeAlias = (
    MicAudio
    | TranscriptReady
    | LlmText
    | LlmToolCall
    | LlmDone
    | LlmFailed
    | SynthesisReady
    | PlaybackProgress
    | ToolDone
)
