"""What a client may send (docs/architecture.md §7), parsed: a typed command, or a one-line reason why not."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TypeAlias

from voice.engine.inputs import CancelReply, MuteMicrophone, TextInput

MAX_TEXT_CHARS = 4000  # typed input; a frame's bytes are bounded by the server's max_size as well
MAX_ID_CHARS = 200


@dataclass(frozen=True)
class ResetSession:
    """``session.reset``: a new conversation; the old one stays in its log."""


@dataclass(frozen=True)
class PartialsWanted:
    """``input.partials``: this client wants the user's words as they speak (``input.partial``), or not."""

    enabled: bool


@dataclass(frozen=True)
class AudioFrame:
    """A binary frame from the page that talks (``--audio websocket``): 16 kHz mono s16le mic audio."""

    pcm: bytes


@dataclass(frozen=True)
class PlaybackPosition:
    """``playback.position``: how many samples of the reply audio sent to the page it has played."""

    samples: int


# input.text, response.cancel and mic.mute/unmute are the engine's own events; a reset and a client's
# wish for partials are the kiosk's
Command: TypeAlias = TextInput | CancelReply | MuteMicrophone | ResetSession | PartialsWanted
AudioCommand: TypeAlias = AudioFrame | PlaybackPosition


class BadFrame(ValueError):
    """A client frame that is not a command; the message says why in one line."""


_BARE: dict[str, Command] = {
    "response.cancel": CancelReply(),
    "mic.mute": MuteMicrophone(True),
    "mic.unmute": MuteMicrophone(False),
    "session.reset": ResetSession(),
}
COMMAND_TYPES = ("input.text", "input.partials", *_BARE)


def parse_command(frame: str | bytes, audio: bool = False) -> Command | AudioCommand:
    """One frame as a command; BadFrame for anything else (binary, not JSON, unknown, bad fields).

    With ``audio`` (``--audio websocket``) binary frames and ``playback.position`` are commands too.
    """
    if isinstance(frame, bytes):
        if not audio:
            raise BadFrame("binary frames carry audio, and this kiosk takes none (--audio websocket does)")
        if not frame or len(frame) % 2:
            raise BadFrame(
                f"an audio frame is 16 kHz mono s16le: a whole number of samples, not {len(frame)} bytes"
            )
        return AudioFrame(frame)
    try:
        data: Any = json.loads(frame)
    except ValueError as exc:
        raise BadFrame(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BadFrame(f"a command is a JSON object, not {type(data).__name__}")
    kind = data.get("type")
    if not isinstance(kind, str):
        raise BadFrame('a command needs a string "type"')
    if kind in _BARE:
        return _BARE[kind]
    if audio and kind == "playback.position":
        samples = data.get("samples")
        if not isinstance(samples, int) or isinstance(samples, bool) or samples < 0:
            raise BadFrame('playback.position needs "samples", a count of samples played (0 or more)')
        return PlaybackPosition(samples)
    if kind == "input.partials":
        enabled = data.get("enabled")
        if not isinstance(enabled, bool):
            raise BadFrame('input.partials needs "enabled", true or false')
        return PartialsWanted(enabled)
    if kind != "input.text":
        raise BadFrame(f"unknown command type {kind[:40]!r} (known: {', '.join(COMMAND_TYPES)})")
    text = data.get("text")
    if not isinstance(text, str):
        raise BadFrame('input.text needs a string "text"')
    if not text.strip():
        raise BadFrame("input.text has empty text")
    if len(text) > MAX_TEXT_CHARS:
        raise BadFrame(f"input.text is longer than {MAX_TEXT_CHARS} characters")
    input_id = data.get("id")
    if input_id is not None and (not isinstance(input_id, str) or not input_id):
        raise BadFrame('input.text "id" must be a non-empty string')
    if input_id is not None and len(input_id) > MAX_ID_CHARS:
        raise BadFrame(f'input.text "id" is longer than {MAX_ID_CHARS} characters')
    return TextInput(text, input_id)
