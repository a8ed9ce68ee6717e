"""Whose words a transcript holds, and what they ask for: the barge-in and overlap verdicts as one.

Words heard over a reply (or in the echo tail of one that just ended) may be the assistant's own echo, a
cough or a scrap (voice/engine/barge_in.py); if they are the user's, they may be a listener's
backchannel, a stop phrase, or input to answer (voice/engine/overlap.py, docs/architecture.md §1.8).
A backchannel is one only over a reply that has begun to play and asked nothing so far: after a
question, or in the quiet, "yes" is an answer. A stop is one only while a reply is in flight.

The verdict is taken on the whole utterance, once the VAD's long silence has ended it, never at a lull
after its first word: people pause after a first word or a comma ("Yeah, ... but what about Monday?")
as long as 580 ms in real speech (benchmarks/README.md, Decided questions), and a "yeah" taken at such a
pause lost the cut-in's first word, or all of it, and let the reply resume into it (issue 45).
"""

from __future__ import annotations

import enum

from voice.conversation.ledger import PlaybackLedger
from voice.engine.barge_in import NO_WORDS, EchoJudge, asks_a_question
from voice.engine.overlap import Overlap, OverlapPhrases
from voice.engine.utterances import Utterance


class Verdict(enum.Enum):
    """The verdict on a transcript."""

    NOT_USER = "not_user"  # a cough, a click, a scrap or the assistant's echo: the reply goes on
    BACKCHANNEL = "backchannel"  # a listener's word: the reply goes on, nothing is asked
    STOP = "stop"  # the reply is cut and nothing is asked
    INPUT = "input"  # the reply is cut and the words are answered


class WordsJudge:
    """The verdicts; remembers how the last reply that played in full ended, for its echo tail."""

    def __init__(self, phrases: OverlapPhrases, rate: int) -> None:
        self.phrases = phrases
        self._echo = EchoJudge(rate)

    def judge(self, text: str, said: Utterance, reply: PlaybackLedger | None, barged_in: bool) -> Verdict:
        """``text`` transcribed from ``said``; ``reply`` is the one in flight (None between replies),
        ``barged_in`` whether the utterance paused it."""
        overlap = self.overlap(text, said, reply)
        listener = overlap is Overlap.BACKCHANNEL
        if self._echo.not_user_why(text, said, reply, barged_in, listener_word=listener) is not None:
            return Verdict.NOT_USER
        if listener:
            return Verdict.BACKCHANNEL
        return Verdict.STOP if overlap is Overlap.STOP else Verdict.INPUT

    def not_user_why(self, text: str, said: Utterance, reply: PlaybackLedger | None, barged_in: bool) -> str:
        """What words judged ``Verdict.NOT_USER`` were: "no words", "echo" or "scrap"."""
        listener = self.overlap(text, said, reply) is Overlap.BACKCHANNEL
        return self._echo.not_user_why(text, said, reply, barged_in, listener_word=listener) or NO_WORDS

    def ends_a_turn(self, text: str, said: Utterance, reply: PlaybackLedger | None, barged_in: bool) -> bool:
        """Words at a pause that may end the user's turn there: over a reply, the user's, and neither a
        listener's word nor a stop phrase, which more words may follow ("Wait, ... which river was that?"):
        those, a scrap and echo wait for the long silence (the reply stays paused meanwhile)."""
        if reply is None:
            return True
        is_user = self._echo.not_user_why(text, said, reply, barged_in) is None
        return is_user and self.overlap(text, said, reply) is Overlap.CUT_IN

    def overlap(self, text: str, said: Utterance, reply: PlaybackLedger | None) -> Overlap:
        """What the user's words ask for, over ``reply`` (None: between replies)."""
        verdict = self.phrases.verdict(text)
        if verdict is Overlap.STOP and reply is None:
            return Overlap.CUT_IN
        if verdict is not Overlap.BACKCHANNEL:
            return verdict
        listening = self._echo.in_tail_of_statement(said) if reply is None else self.listened_to(reply)
        return Overlap.BACKCHANNEL if listening else Overlap.CUT_IN

    @staticmethod
    def listened_to(reply: PlaybackLedger) -> bool:
        """The reply has begun to play and asked nothing so far: a "yeah" over it is a listener's."""
        return reply.started_at is not None and not asks_a_question(reply.heard())

    def reply_ended(self, reply: PlaybackLedger) -> None:
        """A reply played in full: its last words may come back as echo just after."""
        if reply.heard_at is not None:
            self._echo.reply_ended(reply, reply.heard_at)

    def forget(self) -> None:
        """A new conversation: no echo tail of the last one."""
        self._echo.forget()
