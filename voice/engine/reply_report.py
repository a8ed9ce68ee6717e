"""What the stream and the session log hear about one reply's playback, told from its ledger.

The ledger (voice/conversation/ledger.py) stores how far the reply played and which words that makes
heard; this tells it: when its audio began, each new heard word, heard progress for the log (at word
ends, a line at most every HEARD_LOGGED_EVERY_MS), and at its end what was measured (voice to voice,
speech that paused it and was not the user) or what the user heard before a cut.
"""

from __future__ import annotations

from collections.abc import Callable

from voice.client_events import (
    OutputAudioStarted,
    ResponseDone,
    ResponseHeard,
    ResponseInterrupted,
    StreamEvent,
)
from voice.conversation.ledger import PlaybackLedger

# A process killed mid-reply loses at most this much heard progress and the word being heard.
HEARD_LOGGED_EVERY_MS = 500

LogHeard = Callable[[str, float], None]  # the heard text so far, and when (seconds)


class ReplyReport:
    """One reply's playback as told: ``turn`` is its number, ``input_end`` where the spoken input it
    answers ended (None for typed input or a follow-up)."""

    def __init__(self, turn: int, rate: int, input_end: int | None = None) -> None:
        self.turn = turn
        self.rate = rate
        self.input_end = input_end
        self.barge_in: int | None = None  # where speech over its audio paused it, until judged
        self.false_barge_ins = 0  # speech that paused it and was not the user (a cough, its echo)
        self._logged_words = 0  # words the session log has as heard
        self._logged_at: int | None = None  # engine-clock sample of the last heard progress logged

    def played(self, ledger: PlaybackLedger, played: int, clock: int, log: LogHeard) -> list[StreamEvent]:
        """The sink played ``played`` samples of the reply by engine-clock sample ``clock``."""
        progress = ledger.note_played(played, clock)
        told: list[StreamEvent] = []
        if progress.started:
            told.append(OutputAudioStarted(self.turn, self._seconds(clock - played)))
        if progress.more_words:
            told.append(
                ResponseHeard(self.turn, ledger.heard().strip(), progress.words, self._seconds(clock))
            )
        every = HEARD_LOGGED_EVERY_MS * self.rate // 1000
        due = self._logged_at is None or clock - self._logged_at >= every
        if progress.words > self._logged_words and due:
            self._logged_words, self._logged_at = progress.words, clock
            log(ledger.heard(), self._seconds(clock))
        return told

    def speech_over(self, sample: int) -> None:
        """Speech over the playing reply paused it at ``sample`` (the first such speech counts)."""
        if self.barge_in is None:
            self.barge_in = sample

    def not_cut(self, *, listener: bool) -> None:
        """The speech that paused it was no cut-in: a false alarm, unless a listener's word (the user)."""
        if self.barge_in is not None:
            self.false_barge_ins += not listener
            self.barge_in = None

    def done(self, ledger: PlaybackLedger, t: float) -> ResponseDone:
        """The reply played in full: its text, with what was measured about it."""
        metrics: dict[str, float] = {}
        start = ledger.started_at
        if self.input_end is not None and start is not None:
            metrics["voice_to_voice_ms"] = round((start - self.input_end) * 1000 / self.rate, 1)
        if self.false_barge_ins:
            metrics["false_barge_ins"] = self.false_barge_ins
        return ResponseDone(self.turn, ledger.text.strip(), metrics, t)

    def interrupted(self, ledger: PlaybackLedger, t: float) -> ResponseInterrupted:
        """The reply was cut: the words the user heard, those they did not, and where its audio stopped."""
        heard = ledger.heard().strip()
        unheard = ledger.text.strip()[len(heard) :].strip()
        cut = ledger.heard_at
        audio_end_ms = None if cut is None else round(cut * 1000 / self.rate, 1)
        return ResponseInterrupted(self.turn, heard, unheard, audio_end_ms, t)

    def _seconds(self, sample: int) -> float:
        return round(sample / self.rate, 3)
