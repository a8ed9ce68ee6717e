"""How long a reply to a turn ended at a short pause waits in silence before it plays: the hold.

``eagerness`` is the user's trade between a fast answer and never answering into a pause: ``high`` plays
at once (a user who goes on cuts it at barge-in speed), ``low`` never ends a turn at the short pause (the
VAD's long silence decides), ``auto`` holds and adapts the hold to the speaker within the session:

- it starts at 520 ms: a 0.5 s pause plus one VAD frame, the time a resuming voice takes to be known;
- a turn ended at a pause that stays ended (no speech within 1 s of its end) shortens it by up to 60 ms,
  the more the surer Smart Turn was (nothing at 0.5, 60 ms at 1.0), never under 250 ms nor under the
  longest pause this speaker has made mid-turn plus 120 ms;
- a user who goes on after such an end (within the hold, or into the reply within 1 s) lengthens it by
  60 to 120 ms, the more the surer Smart Turn was that they had finished, and to at least that pause plus
  120 ms, up to 1 s; a pause Smart Turn did take for a pause (the user resumed) raises it to that floor;
- what is learned takes effect at the next turn ended at a pause.

Pure: positions on the sample clock in, holds out; each change is kept for the session log.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from voice.audio.block import ENGINE_RATE
from voice.engine.utterances import COMPLETE_ABOVE

START_MS = 520
SHORTEST_MS = 250
LONGEST_MS = 1000
MARGIN_MS = 120  # the hold outlasts the longest pause the speaker made mid-turn by this much
STEP_DOWN_MS = 60  # a turn that stayed ended, judged with full confidence
STEP_UP_MS = 60  # the user went on; up to twice this when Smart Turn was sure they had finished
# Under ``high`` nothing holds the reply, so the pause before whisper and Smart Turn are asked is on the
# path to every answer: it is 100 ms, not the VAD's usual 200 (both hear the same turns end on the fixtures).
HIGH_PAUSE_MS = 100


class Eagerness(enum.Enum):
    LOW = "low"
    AUTO = "auto"
    HIGH = "high"


EAGERNESS = tuple(e.value for e in Eagerness)


@dataclass(frozen=True)
class HoldChange:
    """The hold went from ``was_ms`` to ``hold_ms`` because of ``why`` (one line for the log)."""

    hold_ms: int
    was_ms: int
    why: str


@dataclass
class _EarlyEnd:
    voiced_end: int
    confidence: float  # 0 at Smart Turn's threshold, 1 when it was certain


class Hold:
    """The hold in effect, and under ``auto`` what the speaker has shown so far."""

    def __init__(self, eagerness: Eagerness = Eagerness.AUTO, rate: int = ENGINE_RATE) -> None:
        self.eagerness = eagerness
        self.rate = rate
        self._changes: list[HoldChange] = []
        self._paused_at: int | None = None  # voiced end of the user's pause in the quiet, until they go on
        self.reset()

    @property
    def ends_early(self) -> bool:
        """A turn may end at the short pause (not under ``low``)."""
        return self.eagerness is not Eagerness.LOW

    @property
    def ms(self) -> int:
        """The hold in effect: what was learned applies from the next turn ended at a pause."""
        return self._ms

    @property
    def next_ms(self) -> int:
        return self._next_ms

    @property
    def samples(self) -> int:
        return self._ms * self.rate // 1000

    def reset(self) -> None:
        """A new conversation, perhaps a new person: start again from what the setting says."""
        self._ms = self._next_ms = 0 if self.eagerness is Eagerness.HIGH else START_MS
        self._why: list[str] = []  # what moved the next hold since the last early end
        self._floor_ms = SHORTEST_MS
        self._pending: _EarlyEnd | None = None  # the last early end, until speech says whether it held

    def take_changes(self) -> list[HoldChange]:
        changes, self._changes = self._changes, []
        return changes

    def ended_early(self, voiced_end: int, probability: float) -> None:
        """A turn ended at the pause after ``voiced_end``; Smart Turn called it finished (``probability``).

        What was learned since the last early end takes effect now, so a change is told with the turn
        whose reply it delays or hastens.
        """
        self._settle_pending(None)
        if self._next_ms != self._ms:
            self._changes.append(HoldChange(self._next_ms, self._ms, "; ".join(self._why)))
            self._ms = self._next_ms
        self._why = []
        confidence = (probability - COMPLETE_ABOVE) / (1.0 - COMPLETE_ABOVE)
        self._pending = _EarlyEnd(voiced_end, min(1.0, max(0.0, confidence)))

    def speech_started(self, sample: int) -> None:
        """Speech began at ``sample``: an early end more than LONGEST_MS before it held."""
        pending = self._pending
        if pending is not None and sample - pending.voiced_end >= self._samples(LONGEST_MS):
            self._settle_pending(None)

    def went_on(self, sample: int) -> None:
        """The user went on at ``sample`` after the last early end (within the hold, or cutting its reply)."""
        pending = self._pending
        if pending is None or not 0 < sample - pending.voiced_end < self._samples(LONGEST_MS):
            return  # none pending, the utterance that ended there, or a new turn
        self._settle_pending(sample)

    def user_paused(self, voiced_end: int | None) -> None:
        """The user paused after ``voiced_end`` (None: over a reply, or the utterance ended: no lesson)."""
        self._paused_at = voiced_end

    def user_resumed(self, sample: int, over_reply: bool) -> None:
        """The user went on at ``sample`` from their pause (over a reply it may have been echo: no lesson)."""
        if self._paused_at is not None and not over_reply:
            self.paused_within_turn(self._paused_at, sample)
        self._paused_at = None

    def paused_within_turn(self, voiced_end: int, resumed: int) -> None:
        """The user paused from ``voiced_end`` to ``resumed`` and went on, with the turn not ended there."""
        pause_ms = self._ms_of(resumed - voiced_end)
        self._raise_floor(pause_ms)
        if self.eagerness is Eagerness.AUTO and self._next_ms < self._floor_ms:
            self._change(self._floor_ms, f"the user paused {pause_ms} ms mid-turn")

    def _settle_pending(self, resumed: int | None) -> None:
        """The last early end turned out an end (``resumed`` None) or a pause the user went on from."""
        pending, self._pending = self._pending, None
        if pending is None or self.eagerness is not Eagerness.AUTO:
            return
        if resumed is None:
            step = round(STEP_DOWN_MS * pending.confidence)
            self._change(max(self._floor_ms, self._next_ms - step), "a turn ended at a pause stayed ended")
            return
        pause_ms = self._ms_of(resumed - pending.voiced_end)
        self._raise_floor(pause_ms)
        step = round(STEP_UP_MS * (1.0 + pending.confidence))
        self._change(
            max(self._floor_ms, self._next_ms + step), f"the user went on after a {pause_ms} ms pause"
        )

    def _raise_floor(self, pause_ms: int) -> None:
        self._floor_ms = min(LONGEST_MS, max(self._floor_ms, pause_ms + MARGIN_MS))

    def _change(self, ms: int, why: str) -> None:
        ms = min(LONGEST_MS, max(SHORTEST_MS, ms))
        if ms != self._next_ms:
            self._why.append(why)
            self._next_ms = ms

    def _samples(self, ms: int) -> int:
        return ms * self.rate // 1000

    def _ms_of(self, samples: int) -> int:
        return round(samples * 1000 / self.rate)


def parse_eagerness(value: str) -> Eagerness:
    """``low``, ``auto`` or ``high``; anything else is a ValueError naming the choices."""
    try:
        return Eagerness(value)
    except ValueError:
        raise ValueError(f"eagerness must be one of {', '.join(EAGERNESS)}, not {value!r}") from None
