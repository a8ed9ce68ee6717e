"""What a conversation records: the events its session log stores and its history is rebuilt from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

from voice.conversation.items import Item, item_from_json, item_to_json
from voice.errors import SessionLogError


@dataclass(frozen=True)
class InputReceived:
    """The user said something (a final transcript, or typed text); ``input_id`` drops client retries."""

    text: str
    input_id: str | None = None


@dataclass(frozen=True)
class InputWithdrawn:
    """The last input was only the start of what the user said (they went on after a pause taken for
    the end of their turn): pending input is ``pending`` again, and the whole utterance comes next."""

    pending: str | None


@dataclass(frozen=True)
class TurnStarted:
    """An LLM request went out; ``turn`` counts requests from 1."""

    turn: int


@dataclass(frozen=True)
class ItemCommitted:
    """An item entered the history for good."""

    item: Item


@dataclass(frozen=True)
class TurnEnded:
    """A turn ended: ``completed`` (fully played) or cancelled with ``heard`` the spoken prefix.

    ``generated`` is everything the model produced and ``cut_s`` where playback stopped, kept so a
    reader of the log can see what was generated against what was heard.
    """

    turn: int
    cancelled: bool
    generated: str = ""
    heard: str = ""
    cut_s: float | None = None


@dataclass(frozen=True)
class ReplyHeard:
    """Progress of the reply in flight: ``heard`` is all of it heard so far (whole words), by ``heard_s``.

    Written as the reply plays, so a process killed mid-reply leaves in its log what the user heard.
    """

    turn: int
    heard: str
    heard_s: float | None = None


@dataclass(frozen=True)
class TurnLost:
    """A turn the log left open (the process was killed mid-reply), closed when the session resumed.

    It ends as a user's cut would: ``heard`` (the last progress the log recorded) is what crosses.
    """

    turn: int
    heard: str = ""
    heard_s: float | None = None


@dataclass(frozen=True)
class TurnFailed:
    """A turn failed (not a user's cut): its text stays out of the history and its input stays pending.

    ``reason`` is the error code (an LLM code, or the part that broke), ``dispatch`` the LLM's evidence
    of how far the request got, if it was the LLM.
    """

    turn: int
    reason: str
    dispatch: str | None = None
    generated: str = ""
    heard: str = ""


@dataclass(frozen=True)
class HistoryTrimmed:
    """Requests from now on leave out history items before ``first_kept`` (counted from the first ever)."""

    first_kept: int


@dataclass(frozen=True)
class BudgetShrunk:
    """The server refused a request as too large: requests from now on fit in ``tokens``."""

    tokens: int


@dataclass(frozen=True)
class InputRepeated:
    """An input arrived again with an id already seen: acknowledged, nothing started or cancelled."""

    input_id: str


@dataclass(frozen=True)
class PartFailed:
    """A part of the assistant (ASR, TTS, a tool) failed; kept so the log says what the user met."""

    part: str
    message: str


@dataclass(frozen=True)
class BackchannelHeard:
    """The user said only a listener's word (``text``) over a reply, at ``t``: the reply went on, and nothing
    entered the history."""

    text: str
    t: float | None = None


@dataclass(frozen=True)
class SpeechIgnored:
    """Speech heard at ``t`` was not the user's words (``why``: no words, echo, scrap; ``text`` what whisper
    wrote): nothing was asked and nothing entered the history."""

    text: str
    why: str
    t: float | None = None


@dataclass(frozen=True)
class InputStopped:
    """The input just received (``input_id``, ``text``) was a stop phrase: it was committed as the user's
    item (with any input pending before it), and no turn answers it."""

    input_id: str | None
    text: str


@dataclass(frozen=True)
class HoldChanged:
    """The silence a reply to a turn ended at a short pause waits for went from ``was_ms`` to ``hold_ms``."""

    hold_ms: int
    was_ms: int
    why: str


LogRecord: TypeAlias = (
    InputReceived
    | InputWithdrawn
    | TurnStarted
    | ItemCommitted
    | TurnEnded
    | ReplyHeard
    | TurnLost
    | TurnFailed
    | HistoryTrimmed
    | BudgetShrunk
    | InputRepeated
    | PartFailed
    | HoldChanged
    | BackchannelHeard
    | SpeechIgnored
    | InputStopped
)


def event_to_json(event: LogRecord) -> dict[str, Any]:
    match event:
        case InputReceived(text=text, input_id=input_id):
            return {"type": "input", "text": text, "input_id": input_id}
        case InputWithdrawn(pending=pending):
            return {"type": "input_withdrawn", "pending": pending}
        case TurnStarted(turn=turn):
            return {"type": "turn_start", "turn": turn}
        case ItemCommitted(item=item):
            return {"type": "item", "item": item_to_json(item)}
        case TurnEnded():
            return {
                "type": "turn_end",
                "turn": event.turn,
                "cancelled": event.cancelled,
                "generated": event.generated,
                "heard": event.heard,
                "cut_s": event.cut_s,
            }
        case ReplyHeard(turn=turn, heard=heard, heard_s=heard_s):
            return {"type": "heard", "turn": turn, "heard": heard, "heard_s": heard_s}
        case TurnLost(turn=turn, heard=heard, heard_s=heard_s):
            return {"type": "turn_lost", "turn": turn, "heard": heard, "heard_s": heard_s}
        case TurnFailed():
            return {
                "type": "turn_failed",
                "turn": event.turn,
                "reason": event.reason,
                "dispatch": event.dispatch,
                "generated": event.generated,
                "heard": event.heard,
            }
        case HistoryTrimmed(first_kept=first_kept):
            return {"type": "trimmed", "first_kept": first_kept}
        case BudgetShrunk(tokens=tokens):
            return {"type": "budget", "tokens": tokens}
        case InputRepeated(input_id=input_id):
            return {"type": "duplicate", "input_id": input_id}
        case PartFailed(part=part, message=message):
            return {"type": "failure", "part": part, "message": message}
        case HoldChanged(hold_ms=hold_ms, was_ms=was_ms, why=why):
            return {"type": "hold", "hold_ms": hold_ms, "was_ms": was_ms, "why": why}
        case BackchannelHeard(text=text, t=t):
            return {"type": "backchannel", "text": text, "t": t}
        case SpeechIgnored(text=text, why=why, t=t):
            return {"type": "ignored", "text": text, "why": why, "t": t}
        case InputStopped(input_id=input_id, text=text):
            return {"type": "stop", "input_id": input_id, "text": text}


def event_from_json(data: dict[str, Any]) -> LogRecord:
    try:
        kind = data["type"]
        if kind == "input":
            return InputReceived(str(data["text"]), data.get("input_id"))
        if kind == "input_withdrawn":
            pending = data["pending"]
            return InputWithdrawn(None if pending is None else str(pending))
        if kind == "turn_start":
            return TurnStarted(int(data["turn"]))
        if kind == "item":
            return ItemCommitted(item_from_json(data["item"]))
        if kind == "turn_end":
            cut = data.get("cut_s")
            return TurnEnded(
                int(data["turn"]),
                bool(data["cancelled"]),
                str(data.get("generated", "")),
                str(data.get("heard", "")),
                None if cut is None else float(cut),
            )
        if kind in ("heard", "turn_lost"):
            at = data.get("heard_s")
            made = ReplyHeard if kind == "heard" else TurnLost
            return made(int(data["turn"]), str(data["heard"]), None if at is None else float(at))
        if kind == "turn_failed":
            dispatch = data.get("dispatch")
            return TurnFailed(
                int(data["turn"]),
                str(data["reason"]),
                None if dispatch is None else str(dispatch),
                str(data.get("generated", "")),
                str(data.get("heard", "")),
            )
        if kind == "trimmed":
            return HistoryTrimmed(int(data["first_kept"]))
        if kind == "budget":
            return BudgetShrunk(int(data["tokens"]))
        if kind == "duplicate":
            return InputRepeated(str(data["input_id"]))
        if kind == "failure":
            return PartFailed(str(data["part"]), str(data["message"]))
        if kind == "hold":
            return HoldChanged(int(data["hold_ms"]), int(data["was_ms"]), str(data["why"]))
        if kind == "backchannel":
            at = data.get("t")
            return BackchannelHeard(str(data["text"]), None if at is None else float(at))
        if kind == "ignored":
            at = data.get("t")
            return SpeechIgnored(str(data["text"]), str(data["why"]), None if at is None else float(at))
        if kind == "stop":
            input_id = data.get("input_id")
            return InputStopped(None if input_id is None else str(input_id), str(data["text"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise SessionLogError(f"malformed {data.get('type', 'untyped')} event: {exc}") from exc
    raise SessionLogError(f"unknown event type {kind!r}")
