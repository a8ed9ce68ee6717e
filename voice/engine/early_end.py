"""The input of a turn ended at a short pause, while the hold has yet to make that end certain.

The end-of-turn model and whisper took the pause for the end of the turn, so the request goes out at
once, but its reply plays only after the hold's silence. Until then the input is provisional: if the
user goes on, the request is discarded unheard and the utterance continues as one, transcribed whole.
So the stream hears that the user stopped, that the assistant is thinking, what they said and that a
response is on its way only once the turn's end is certain; of a discarded request it hears nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from voice.audio.block import AudioBlock
from voice.client_events import StreamEvent


@dataclass
class EarlyInput:
    """What the user said up to a pause judged the end of their turn."""

    voiced_end: int  # where their voice stopped: the hold's silence counts from here
    audio: AudioBlock  # the utterance so far, joined with what follows if they go on
    over_reply: bool  # said over a reply: what follows takes ASR's careful path too
    pending_before: str | None = None  # the conversation's pending input before this input
    untold: list[StreamEvent] = field(default_factory=list)  # speech stopped, state, transcript, response
    told: bool = False  # the stream heard of it (the hold passed, or the turn failed or was cut)


class EarlyEnds:
    """The input being taken at a short pause, what the stream is not told until its turn's end is
    certain, and the utterance the user went on from after such a pause."""

    def __init__(self, emit: Callable[[StreamEvent], None]) -> None:
        self._emit = emit
        self.taking: EarlyInput | None = None  # taken at a pause just now, until a reply holds it
        self.continuing: EarlyInput | None = None  # the user went on from it: one utterance with what follows

    def tell(self, event: StreamEvent) -> None:
        """Emit ``event``, or keep it with the input being taken early until its turn is certain."""
        if self.taking is not None:
            self.taking.untold.append(event)
        else:
            self._emit(event)

    def told(self, early: EarlyInput | None) -> None:
        """The early input's turn is certain (or failed, or was cut): the stream hears what it held back."""
        if early is None:
            return
        for event in early.untold:
            self._emit(event)
        early.untold.clear()
        early.told = True

    def whole(self, utterance: AudioBlock) -> AudioBlock:
        """The utterance from its start, before any pause the user went on from."""
        return utterance if self.continuing is None else self.continuing.audio.followed_by(utterance)

    def over_reply(self, reply_in_flight: bool) -> bool:
        """The assistant's voice may be in the utterance: a reply is in flight, or was when it began."""
        return reply_in_flight or (self.continuing is not None and self.continuing.over_reply)

    @staticmethod
    def hold_passed(early: EarlyInput, clock: int, voiced_until: int, hold: int, start_window: int) -> bool:
        """The user stayed silent ``hold`` samples after ``early``'s end by ``clock``, so the reply held for
        it may play. Voiced frames in the hold that never become speech (noise) delay it only so long: a
        user who went on within the hold is declared speaking by then, and the reply never plays into them."""
        silent = clock - max(voiced_until, early.voiced_end)
        noise_only = clock - early.voiced_end >= hold + start_window
        return silent >= hold or noise_only
