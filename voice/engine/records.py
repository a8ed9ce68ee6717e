"""What the engine measured about each turn and utterance, on the sample clock (the report's source)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TurnRecord:
    """One LLM request and what became of it; sample positions are on the engine clock.

    The request itself is not kept (the session log has it): records of a long session stay small.
    """

    turn: int
    reply: str = ""
    spoken: str = ""
    interrupted: bool = False
    audio_start: int | None = None
    audio_end: int | None = None
    barge_in: int | None = None
    tool_calls: list[str] = field(default_factory=list)
    false_barge_ins: int = 0
    error: str | None = None
    discarded: bool = False  # a preemptive request the user talked past, unheard


@dataclass
class SpeechRecord:
    """One user utterance as the VAD cut it, with its transcript once known."""

    start: int
    end: int
    transcript: str | None = None
