"""What clients see (docs/architecture.md §7): the typed events of the one stream, and their JSON.

The engine and the runtime publish them on an ``EventStream`` (voice/event_stream.py). Each event
turns into the JSON object a websocket client receives: ``type`` first, then its fields, then ``t``,
the seconds on the session's sample clock when it happened.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, TypeAlias, get_args

SPOKEN_INPUT = "speech-"  # the engine's ids for spoken input
TYPED_INPUT = "text-"  # the engine's ids for typed input that came without the client's own


@dataclass(frozen=True)
class StateChanged:
    type: ClassVar[str] = "state"
    state: str  # listening, user_speaking, paused, thinking, speaking (muted, asleep: the kiosk's)
    t: float


@dataclass(frozen=True)
class SpeechStarted:
    type: ClassVar[str] = "input.speech_started"
    t: float


@dataclass(frozen=True)
class SpeechStopped:
    type: ClassVar[str] = "input.speech_stopped"
    t: float


@dataclass(frozen=True)
class InputLevel:
    """The microphone's level over the last ~100 ms (``dbfs``, RMS) and whether the VAD heard a voice in it.

    Published only by a device driver asked for it (the terminal view's meter); never recorded.
    """

    type: ClassVar[str] = "input.level"
    dbfs: float
    voice: bool
    t: float


@dataclass(frozen=True)
class InputPartial:
    """The words of the utterance under way so far, decoded as the user speaks: each replaces the last.

    ``final`` once the utterance is over: ``text`` is then its ``input.transcript`` text, or "" if it gave
    no input (a cough, echo, a failed transcription). Published only while a client or view asked for
    them (``input.partials``, voice/asr/partials.py); provisional, never recorded in the session log.
    """

    type: ClassVar[str] = "input.partial"
    text: str
    final: bool
    t: float


@dataclass(frozen=True)
class InputTranscript:
    """A user input is final (spoken or typed); ``merged`` is the pending input it joined, if any."""

    type: ClassVar[str] = "input.transcript"
    id: str
    text: str
    merged: str | None
    t: float


@dataclass(frozen=True)
class InputBackchannel:
    """The user said only a listener's word over a reply ("yeah", "right, right"): the reply goes on, nothing
    is asked and nothing enters the history. ``turn`` is the reply's (None just after one ended)."""

    type: ClassVar[str] = "input.backchannel"
    text: str
    turn: int | None
    t: float


@dataclass(frozen=True)
class InputIgnored:
    """Speech the VAD heard was not the user's words, so nothing is asked and a paused reply goes on; ``why``
    says what it was: "no words" (a cough, a knock), "echo" (the assistant's own voice), "scrap" (too short
    or too quick to be words) or "another voice" (not the conversation's speaker, with ``[turn] speaker =
    "conversation"``). ``turn`` is the reply in flight's (None between replies)."""

    type: ClassVar[str] = "input.ignored"
    text: str
    why: str
    turn: int | None
    t: float


@dataclass(frozen=True)
class InputStop:
    """The user's input ``id`` (told in ``input.transcript``) was a stop phrase: the reply in flight is cut,
    the words enter the history, and nothing is asked until the user speaks again."""

    type: ClassVar[str] = "input.stop"
    id: str
    text: str
    t: float


@dataclass(frozen=True)
class InputDuplicate:
    type: ClassVar[str] = "input.duplicate"
    id: str
    t: float


@dataclass(frozen=True)
class ResponseCreated:
    type: ClassVar[str] = "response.created"
    turn: int
    t: float


@dataclass(frozen=True)
class ResponseHeard:
    """Playback passed the end of a word: ``text`` is all heard so far, ``words`` how many words."""

    type: ClassVar[str] = "response.heard"
    turn: int
    text: str
    words: int
    t: float


@dataclass(frozen=True)
class ResponseInterrupted:
    """The user cut in: ``heard`` is what the next request carries, ``unheard`` the rest generated."""

    type: ClassVar[str] = "response.interrupted"
    turn: int
    heard: str
    unheard: str
    audio_end_ms: float | None
    t: float


@dataclass(frozen=True)
class ResponseResumed:
    type: ClassVar[str] = "response.resumed"
    turn: int
    t: float


@dataclass(frozen=True)
class ResponseDone:
    """The reply played in full; ``metrics`` holds what was measured (``voice_to_voice_ms``, ...)."""

    type: ClassVar[str] = "response.done"
    turn: int
    text: str
    metrics: dict[str, float] = field(default_factory=dict)
    t: float = 0.0


@dataclass(frozen=True)
class OutputAudioStarted:
    """The first sample of the turn's reply audio played at ``t`` (the driver's playback says so)."""

    type: ClassVar[str] = "output_audio.started"
    turn: int
    t: float


@dataclass(frozen=True)
class OutputAudioStopped:
    """The turn is over and its reply audio played no further: its last sample played at ``t``."""

    type: ClassVar[str] = "output_audio.stopped"
    turn: int
    t: float


@dataclass(frozen=True)
class NoticeSpoken:
    """The assistant said a notice outside any turn ("Sorry, I could not reach the language model.")."""

    type: ClassVar[str] = "notice"
    text: str
    t: float


@dataclass(frozen=True)
class ToolCalled:
    type: ClassVar[str] = "tool.call"
    turn: int
    id: str
    name: str
    arguments: dict[str, Any]
    t: float


@dataclass(frozen=True)
class ToolFinished:
    type: ClassVar[str] = "tool.result"
    turn: int
    id: str
    output: str
    failed: bool
    t: float


@dataclass(frozen=True)
class Failure:
    """Any failure; LLM failures also say how far the request got and whether a retry may help."""

    type: ClassVar[str] = "error"
    code: str
    message: str
    dispatch: str | None = None
    retriable: bool | None = None
    t: float | None = None


@dataclass(frozen=True)
class SessionCreated:
    """Sent to each client as it connects, never on the stream: a snapshot, so a page opened
    mid-conversation is current (``history``: the items the next request would carry)."""

    type: ClassVar[str] = "session.created"
    session: str
    state: str
    history: list[dict[str, Any]]
    settings: dict[str, Any]


StreamEvent: TypeAlias = (
    StateChanged
    | SpeechStarted
    | SpeechStopped
    | InputLevel
    | InputPartial
    | InputTranscript
    | InputBackchannel
    | InputIgnored
    | InputStop
    | InputDuplicate
    | ResponseCreated
    | ResponseHeard
    | ResponseInterrupted
    | ResponseResumed
    | ResponseDone
    | OutputAudioStarted
    | OutputAudioStopped
    | NoticeSpoken
    | ToolCalled
    | ToolFinished
    | Failure
)


def event_json(event: StreamEvent | SessionCreated) -> dict[str, Any]:
    """The event as a client receives it: ``type`` first; unset optional fields left out."""
    data: dict[str, Any] = {"type": event.type}
    for item in fields(event):
        value = getattr(event, item.name)
        # §7 names these even when empty
        if value is not None or item.name in {"merged", "audio_end_ms", "turn"}:
            data[item.name] = value
    return data


EVENT_TYPES: dict[str, type[StreamEvent]] = {cls.type: cls for cls in get_args(StreamEvent)}


def event_from_json(data: dict[str, Any]) -> StreamEvent:
    """An event as a client received it, as its object again (to replay a recorded events.jsonl)."""
    cls = EVENT_TYPES[data["type"]]
    names = {item.name for item in fields(cls)}
    return cls(**{key: value for key, value in data.items() if key in names})
