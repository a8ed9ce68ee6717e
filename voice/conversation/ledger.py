"""The playback ledger: which words of a reply the user has heard by a given output sample, and when.

Reply text arrives in deltas whose boundaries have nothing to do with word boundaries; audio spans
arrive per word, in order, as synthesis places them on the output clock. A word is a maximal run of
non-space characters (punctuation stays with its word, so "dry," is one word). ``heard(n)`` is the
reply text up to the end of the last word whose audio ended at or before sample ``n``, never part of a
word and never a word still playing. It is the single source of the spoken prefix, and the one copy of
the reply's text.

Samples count on the reply's own audio (0 is its first sample): the engine queues each synthesized
piece after the last (``queue_audio``), the playback sink reports how much of it has played and by
which sample of the engine's clock (``note_played``), and ``heard()`` answers for that. It is the one
owner of the reply's played progress (docs/architecture.md §2): how much played, when the listener
heard its first sample and its latest, and the words that makes heard; the engine tells the stream
and the session log from it.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from voice.errors import ProtocolError

_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class SampleSpan:
    """Where one word's audio sits on the output clock: samples [start, end)."""

    start: int
    end: int


@dataclass(frozen=True)
class Progress:
    """What one report of playback changed: whether the listener just heard the reply's first sample, and
    how many words they have heard (``more_words``: more than before the report)."""

    started: bool
    words: int
    more_words: bool


@dataclass(frozen=True)
class LedgerWord:
    text: str
    char_start: int
    char_end: int
    span: SampleSpan | None


class PlaybackLedger:
    """Maps every synthesized word of one reply to its sample span and answers what was heard.

    Drivers ask what was heard at every playback block, so word boundaries are found once per text
    change and the heard count is a binary search over the words' end samples.
    """

    def __init__(self, started_at: int | None = None, heard_at: int | None = None) -> None:
        self._text = ""
        self._closed = False
        self._spans: list[SampleSpan] = []
        self._ends: list[int] = []  # span ends, non-decreasing: what bisect searches
        self._words: (
            list[tuple[int, int]] | None
        ) = []  # character spans of every run of non-space; None: stale
        self._queued = 0  # samples of the reply's audio queued for playback
        self._played = 0  # of those, how many the sink reported played
        self.started_at = started_at  # engine-clock sample the listener heard its first sample at
        self.heard_at = heard_at  # engine-clock sample by which they heard the latest of it

    @property
    def text(self) -> str:
        """All reply text entered so far, exactly as it arrived."""
        return self._text

    def add_text(self, delta: str) -> None:
        """Append a piece of the reply as the LLM streamed it."""
        if self._closed:
            raise ProtocolError("text added to a playback ledger after close_text()")
        self._text += delta
        self._words = None

    def close_text(self) -> None:
        """No more text: a trailing word without a following space is now complete."""
        self._closed = True

    def _word_spans(self) -> list[tuple[int, int]]:
        if self._words is None:
            self._words = [match.span() for match in _WORD.finditer(self._text)]
        return self._words

    def words(self) -> list[LedgerWord]:
        """Complete words so far, each with its span if synthesis has placed it."""
        found = self._word_spans()
        if found and not self._closed and found[-1][1] == len(self._text):
            found = found[:-1]  # still streaming: the last run of letters may continue in the next delta
        return [
            LedgerWord(self._text[a:b], a, b, self._spans[i] if i < len(self._spans) else None)
            for i, (a, b) in enumerate(found)
        ]

    def place(self, spans: list[SampleSpan]) -> None:
        """Give the next words, in reply order, the sample spans where their audio plays."""
        available = len(self.words()) - len(self._spans)
        if len(spans) > available:
            raise ProtocolError(f"{len(spans)} word spans placed but only {available} words await audio")
        previous_end = self._spans[-1].end if self._spans else None
        for span in spans:
            if span.end < span.start or (previous_end is not None and span.end < previous_end):
                raise ProtocolError(f"word span {span} runs backwards on the output clock")
            previous_end = span.end
        self._spans.extend(spans)
        self._ends.extend(span.end for span in spans)

    def queue_audio(self, frames: int, spans: list[SampleSpan]) -> int:
        """The next ``frames`` samples of the reply's audio, its words at ``spans`` from its first
        sample; returns where that piece starts in the reply's audio."""
        start = self._queued
        self.place([SampleSpan(start + span.start, start + span.end) for span in spans])
        self._queued += frames
        return start

    @property
    def queued(self) -> int:
        """Samples of the reply's audio queued for playback so far."""
        return self._queued

    @property
    def played(self) -> int:
        """Samples of the reply's audio the playback sink last reported played."""
        return self._played

    def note_played(self, played: int, clock: int) -> Progress:
        """The sink played ``played`` samples by engine-clock sample ``clock`` (fewer than before once a word
        cut by a pause plays again, from that word's start: no heard word is taken back)."""
        started = played > 0 and self.started_at is None
        if started:
            self.started_at = clock - played
        if played > self._played:
            self.heard_at = clock
        before = self.heard_word_count()
        self._played = played
        words = self.heard_word_count()
        return Progress(started, words, words > before)

    def for_retry(self) -> PlaybackLedger:
        """An empty ledger for the next attempt at this reply: what the listener heard of its start stays
        when they heard it (a retry comes only while no word was heard)."""
        return PlaybackLedger(self.started_at, self.heard_at)

    @property
    def playing(self) -> bool:
        """Queued audio is still to play."""
        return self._played < self._queued

    @property
    def placed_words(self) -> int:
        return len(self._spans)

    @property
    def audio_end(self) -> int | None:
        """Output sample where the last placed word's audio ends (None before any)."""
        return self._ends[-1] if self._ends else None

    def heard_word_count(self, sample: int | None = None) -> int:
        """How many leading words had finished playing by sample ``sample`` (default: as played)."""
        return bisect.bisect_right(self._ends, self._played if sample is None else sample)

    def word_start_at(self, sample: int | None = None) -> int:
        """Where the word playing at ``sample`` (default: as played) began; ``sample`` itself between words.

        A reply resumed after a pause plays again from here, so the word the pause cut is heard whole.
        """
        sample = self._played if sample is None else sample
        count = self.heard_word_count(sample)
        if count < len(self._spans) and self._spans[count].start < sample:
            return self._spans[count].start
        return sample

    def heard(self, sample: int | None = None) -> str:
        """Exactly the reply text whose words finished playing by sample ``sample`` (default: as played)."""
        count = self.heard_word_count(sample)
        if count == 0:
            return ""
        found = self._word_spans()
        return self._text[found[0][0] : found[count - 1][1]]
