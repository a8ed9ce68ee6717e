"""The engine's phases, how a reply ends, and the shape of its transition table.

The table itself is ``TRANSITIONS`` in voice/engine/engine.py (its entries name the handlers of the Engine
and of the reply in flight, ``Replies``); docs/architecture.md §2 draws it. Where a handler's next phase
depends on more than the event (a reply still playing, an utterance still being transcribed), the two
functions at the end choose it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from voice.engine.actions import EngineAction


class Phase(enum.Enum):
    """Where the engine is; clients hear each phase but the hold as a ``state`` of the same name."""

    LISTENING = "listening"
    USER_SPEAKING = "user_speaking"  # the user talks and no reply is in flight
    PAUSED = "paused"  # the user talks over a reply in flight: it waits, paused, for their words' verdict
    THINKING = "thinking"  # a reply is on its way, or a transcript is due
    SPEAKING = "speaking"
    HOLDING = "holding"  # a reply to a user's turn ended at a short pause waits out the hold's silence

    @property
    def told(self) -> str | None:
        """The state clients hear of; a hold is told only once it has passed (or its reply ends)."""
        return None if self is Phase.HOLDING else self.value


class ReplyOutcome(enum.Enum):
    """How a reply ended (``Replies.close`` in voice/engine/replies.py)."""

    COMPLETED = "completed"  # played in full
    MOVED_ON = "moved_on"  # played in full, its tools done or abandoned, while the user moved on
    INTERRUPTED = "interrupted"  # the user cut in, pressed stop or left: what they heard is kept
    DISCARDED = "discarded"  # sent at a pause the user went on from: never told, never heard
    FAILED = "failed"  # the model or the voice failed: nothing of it enters the history


Handler = Callable[[Any, Any], list[EngineAction]]


@dataclass(frozen=True)
class Transition:
    """What an event does in a phase: its handler, and every phase the handler may move to."""

    handler: Handler
    to: frozenset[Phase]  # empty: the phase stays (events the handler dispatches may move it)


Entries = dict[tuple[Phase, type], Transition]
USER_TALKING = (Phase.USER_SPEAKING, Phase.PAUSED)
# Phases a reply's own news leaves as they are: the user talks over it, or the hold decides when it plays.
REPLY_WAITS = (Phase.PAUSED, Phase.HOLDING)


def row(kind: type, handler: Handler, moves: dict[Phase, set[Phase]]) -> Entries:
    """``kind`` is taken in each phase of ``moves``, and may move from it to the phases it lists."""
    return {(phase, kind): Transition(handler, frozenset(to)) for phase, to in moves.items()}


def stays(kind: type, handler: Handler, phases: tuple[Phase, ...]) -> Entries:
    """``kind`` is taken in each of ``phases`` and leaves the phase as it is."""
    return row(kind, handler, {phase: set() for phase in phases})


def without_reply(phase: Phase, transcribing: bool) -> Phase:
    """The phase once no reply is in flight: a talking user goes on talking, words still being
    transcribed keep the assistant thinking, else it listens."""
    if phase in USER_TALKING:
        return Phase.USER_SPEAKING
    return Phase.THINKING if transcribing else Phase.LISTENING


def with_reply(phase: Phase, audible: bool) -> Phase:
    """The phase while a reply is in flight: speaking while its audio plays unpaused, else thinking; a
    talking user or a hold stays as it is."""
    if phase in REPLY_WAITS:
        return phase
    return Phase.SPEAKING if audible else Phase.THINKING
