"""Barge-in's judgement: were the words heard over the reply (or just after it) the user's, or its echo?

Speech over the reply pauses it at once; this decides, from the utterance's transcript, whether the
user really cut in. A cough, a click, a fragment or the assistant's own words coming back through the
mic are not the user (the reply then resumes); a reply's last words can come back just after it ended.
"""

from __future__ import annotations

from voice.conversation.ledger import PlaybackLedger
from voice.engine.transcripts import is_fragment, is_meaningful, sounds_like_echo
from voice.engine.utterances import Utterance

ECHO_TAIL_S = 0.5  # a reply's last words can still come back through the mic this long after it ended
# why speech was not the user's words, as the log and the stream say it
NO_WORDS, ECHO, SCRAP = "no words", "echo", "scrap"


def recently_played(ledger: PlaybackLedger, before: int = 12, after: int = 2) -> tuple[str, int]:
    """The words around the pause (what an echo of the assistant's own voice would repeat), and
    how many of them had been heard at the pause."""
    words = [word.text for word in ledger.words()]
    heard = ledger.heard_word_count()
    first = max(0, heard - before)
    return " ".join(words[first : heard + after]), heard - first


def asks_a_question(heard: str) -> bool:
    """The heard part of a reply ends on a question ("Shall I go on?"): a "yes" now answers it."""
    return heard.rstrip().endswith("?")


class EchoJudge:
    """Tells the user's words from the assistant's echo; remembers how the last reply ended."""

    def __init__(self, rate: int) -> None:
        self.rate = rate
        self._last_reply: tuple[str, int, int] | None = None  # its last words, how many, when it ended
        self._last_asked = False  # the last reply ended on a question

    def reply_ended(self, ledger: PlaybackLedger, audio_end: int) -> None:
        """A reply played in full, its last sample heard at ``audio_end``."""
        self._last_reply = (*recently_played(ledger), audio_end)
        self._last_asked = asks_a_question(ledger.heard())

    def in_tail_of_statement(self, said: Utterance) -> bool:
        """``said`` began in the echo tail of a reply that played in full and asked nothing: a listener's
        "wow" as it ends is still said over it."""
        if self._last_reply is None or self._last_asked:
            return False
        return said.start - self._last_reply[2] < ECHO_TAIL_S * self.rate

    def forget(self) -> None:
        self._last_reply = None

    def not_user_why(
        self,
        text: str,
        said: Utterance,
        reply: PlaybackLedger | None,
        barged_in: bool,
        *,
        listener_word: bool = False,
    ) -> str | None:
        """Why ``text``, transcribed from ``said``, is not the user's words ("no words", "echo", "scrap"), or
        None if it is; ``reply`` is the turn in flight's (None between turns) and ``barged_in`` whether the
        utterance paused it. A ``listener_word`` ("yeah") is said in a fifth of a second: short as it is,
        it is no scrap of echo unless the reply said it."""
        if not is_meaningful(text):
            return NO_WORDS
        if reply is not None and barged_in:
            if sounds_like_echo(text, *recently_played(reply)):
                return ECHO
            voiced_s = (said.end - said.start) / self.rate
            return None if listener_word or not is_fragment(text, voiced_s) else SCRAP
        if reply is None and self._last_reply is not None:
            words, count, ended = self._last_reply
            tail = said.start - ended < ECHO_TAIL_S * self.rate
            return ECHO if tail and sounds_like_echo(text, words, count) else None
        return None
