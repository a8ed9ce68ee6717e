"""The user's utterance ended before the VAD's long silence, on its early transcript, and the hold after it.

A turn the end-of-turn model and whisper judge finished at a short pause ends there: it is answered at
once, and its input is taken early (early_end.py) until the hold's silence makes the end certain and the
reply plays, or the user goes on and the request is discarded unheard. The phases stay the engine's: an
early end asks it (its ``Turn``) to end the utterance or to let the held reply play, as the table's
``VoiceEnded`` and ``HoldPassed``.

A listener's word over a reply never ends early: it is only known to be one once the listener has
stopped, at the long silence (words_judge.py says why), so "Yeah, ... but what about Monday?" stays one
utterance and the reply never resumes into it.
"""

from __future__ import annotations

from typing import Protocol

from voice.audio.block import AudioBlock
from voice.audio.vad import PAUSE_OVER_REPLY_MS, Vad
from voice.conversation.continuation import Conversation
from voice.engine.actions import EngineAction
from voice.engine.early_end import EarlyEnds, EarlyInput
from voice.engine.hold import Hold
from voice.engine.phases import USER_TALKING, Phase, ReplyOutcome
from voice.engine.replies import Replies
from voice.engine.reply import Reply
from voice.engine.utterances import Utterances
from voice.engine.words_judge import WordsJudge
from voice.errors import ProtocolError


class Turn(Protocol):
    """What of the engine an early end sees: the phase, and the two moves it may ask for."""

    @property
    def phase(self) -> Phase: ...

    def end_utterance(self, sample: int, audio: AudioBlock) -> list[EngineAction]:
        """End the utterance at ``sample``, as the long silence would."""

    def play_held_reply(self) -> list[EngineAction]:
        """The hold passed: the reply held for it plays."""


class PauseEnds:
    """Ends the user's turn at a short pause when its early transcript and the model say so."""

    def __init__(
        self,
        turn: Turn,
        *,
        vad: Vad,
        utterances: Utterances,
        judge: WordsJudge,
        hold: Hold,
        early: EarlyEnds,
        replies: Replies,
    ) -> None:
        self._turn = turn
        self._vad = vad
        self._utterances = utterances
        self._judge = judge
        self._hold = hold
        self._early = early
        self._replies = replies

    def turn_at_pause(self, clock: int) -> list[EngineAction]:
        """The user's turn was judged over at the pause: it ends there, as if the long silence had passed,
        its input taken early."""
        finished = self._utterances.finished_at_pause()
        if finished is None or self._turn.phase not in USER_TALKING or not self._hold.ends_early:
            return []
        said, audio, text, probability = finished
        if not self._judge.ends_a_turn(text, said, *self._replies.overlapped()):
            return []  # a scrap, echo or a listener's word over the reply: not the end of a turn
        self._hold.ended_early(said.end, probability)
        over_reply = self._early.over_reply(self._replies.in_flight is not None)
        early = self._early.taking = EarlyInput(said.end, audio, over_reply)
        actions = self._turn.end_utterance(said.end, audio)
        self._early.taking = None
        reply = self._replies.in_flight
        if reply is None or reply.early is not early:  # no reply waits on it: it is final
            self._early.told(early)
        return actions + self.play_if_hold_passed(clock)  # no hold (high), or it passed already

    @property
    def held(self) -> Reply | None:
        """The reply to a turn ended at a pause, waiting for the hold's silence (None: none waits)."""
        reply = self._replies.in_flight
        if self._turn.phase is not Phase.HOLDING or reply is None or reply.early is None:
            return None
        return reply

    def play_if_hold_passed(self, clock: int) -> list[EngineAction]:
        """By ``clock`` the user stayed silent through the hold after an early end: its reply plays."""
        reply, vad = self.held, self._vad
        if reply is None or reply.early is None:
            return []
        hold = self._hold.samples
        if reply.early.over_reply and hold:  # "No, ... in Celsius": the breath after a cut-in's first word
            hold = max(hold, PAUSE_OVER_REPLY_MS * self._hold.rate // 1000)
        if not self._early.hold_passed(reply.early, clock, vad.voiced_until, hold, vad.start_window):
            return []
        return self._turn.play_held_reply()

    def went_on(self, sample: int, conversation: Conversation) -> list[EngineAction]:
        """The user spoke again at ``sample`` within the hold: the pause was mid-sentence. The held
        request is discarded unheard, its input withdrawn, and the utterance goes on as one (no new speech
        started)."""
        reply = self.held
        if reply is None or reply.early is None:
            raise ProtocolError("the user went on from a pause with no reply held")
        self._hold.went_on(sample)
        actions = self._replies.close(reply, ReplyOutcome.DISCARDED)
        conversation.withdraw_input(reply.early.pending_before)
        self._utterances.reopen()
        self._early.continuing = reply.early
        return actions
