"""Utterances from the VAD's cut to their transcripts, with speculative ASR.

When the user pauses, the utterance so far is transcribed at once, while endpointing still waits to be
sure the turn ended; if it ends at that very sample, the early transcript is the utterance's, and the
reply starts without waiting for ASR. Speech past the pause drops the early offer.

At the same pause the end-of-turn model may be asked to judge the whole utterance so far (the turn up
to the pause): if it hears a finished turn and whisper a finished sentence, or whisper punctuated a
sentence of four words or more, or the utterance is long and the model is sure (``finished``), the turn
ends there, without waiting out the long silence. A pause judged unfinished keeps the utterance open:
the next pause offers it again, longer, and the long silence stays the fallback.
"""

from __future__ import annotations

from dataclasses import dataclass

from voice.asr.context import answer_context
from voice.audio.block import AudioBlock
from voice.engine.actions import DropTranscription, EngineAction, JudgeTurnEnd, Transcribe
from voice.engine.inputs import TranscriptFailed, TranscriptReady, TurnEndJudged
from voice.engine.transcripts import WHOLE_PUNCTUATED_WORDS, ends_a_sentence, is_sentence_long
from voice.errors import ProtocolError

TranscriptOutcome = TranscriptReady | TranscriptFailed
COMPLETE_ABOVE = 0.5  # an end-of-turn probability above this reads as "the user has finished"
SURE_ABOVE = 0.9  # above this the model is sure enough to end a long utterance whisper left unpunctuated


def finished(probability: float, text: str) -> bool:
    """Whether a pause ends the turn, from the end-of-turn model's ``probability`` and whisper's ``text``.

    A short utterance needs both to agree: the model hears "I was wondering" as finished, whisper writes
    "Set a timer." before the user goes on. A sentence whisper punctuated needs no more than that once
    it has WHOLE_PUNCTUATED_WORDS words: the model hears many whole questions in voices it was not
    trained on as unfinished (espeak-ng's: p 0.01-0.3 where whisper wrote "Are you still there?" or
    the question word for word). Unpunctuated, a long one (is_sentence_long) needs the model sure of
    it: whisper leaves out the full stop of words it is unsure of ("who wrote the novel middle mark").
    """
    punctuated = ends_a_sentence(text)
    if probability > COMPLETE_ABOVE and punctuated:
        return True
    if punctuated:
        return is_sentence_long(text, WHOLE_PUNCTUATED_WORDS)
    return is_sentence_long(text) and probability > SURE_ABOVE


@dataclass
class Utterance:
    """One user utterance as the VAD cut it, from its onset to its last voiced sample, on the engine clock."""

    start: int
    end: int


@dataclass
class _Offer:
    """The utterance offered at a pause, before the long silence makes its end certain."""

    transcription: int
    voiced_end: int
    audio: AudioBlock
    probability: float | None = None  # the end-of-turn model's, once judged: above COMPLETE_ABOVE, finished


class Utterances:
    """The utterance under way, transcriptions asked and still due, and the early offer."""

    def __init__(self) -> None:
        self.open: Utterance | None = None  # the utterance the user is speaking
        self._last: Utterance | None = None  # the utterance that ended last
        self.transcribing = 0  # final transcripts still to come
        self._asked = 0  # transcriptions asked so far: the next one's number
        self._utterance_of: dict[int, Utterance] = {}
        self._speculation: _Offer | None = None
        self._early: dict[int, TranscriptOutcome] = {}
        self._confirmed: TranscriptOutcome | None = None  # an early transcript endpointing just confirmed

    def started(self, sample: int) -> None:
        self.open = Utterance(sample, sample)

    def reopen(self) -> None:
        """The user went on after a pause taken for the end of the turn: that utterance continues."""
        if self._last is None:
            raise ProtocolError("an utterance reopened before any ended")
        self.open = self._last

    def paused(
        self, sample: int, audio: AudioBlock, over_reply: bool, said_last: str = ""
    ) -> list[EngineAction]:
        """The user may have finished: transcribe now and ask whether the turn is over, while
        endpointing still waits to be sure (``over_reply``: ASR takes its careful path; ``said_last``:
        what the assistant was last heard saying, ASR's context if it asked something)."""
        context = answer_context(said_last, over_reply=over_reply)
        stale = self._drop_speculation()
        self._asked += 1
        self._speculation = _Offer(self._asked, sample, audio)
        return [*stale, Transcribe(self._asked, audio, over_reply, context), JudgeTurnEnd(self._asked, audio)]

    def drop_open(self) -> list[EngineAction]:
        """The utterance under way was another voice's: no one's turn; its early offer is dropped."""
        self.open = None
        return self._drop_speculation()

    def resumed(self) -> list[EngineAction]:
        """The user went on after the pause: its offer and any judgement of it no longer count."""
        return self._drop_speculation()

    def judged(self, event: TurnEndJudged) -> None:
        offer = self._speculation
        if offer is not None and offer.transcription == event.utterance:  # else the user went on
            offer.probability = event.probability

    def finished_at_pause(self) -> tuple[Utterance, AudioBlock, str, float] | None:
        """(the utterance up to its voiced end, its audio, its transcript, the model's probability) at the
        pause, if the model's judgement and whisper's transcript call the turn finished (``finished``);
        otherwise the VAD's long silence decides, as without a model."""
        offer = self._speculation
        # not judged (yet, or without a model: the long silence decides)
        if self.open is None or offer is None or offer.probability is None:
            return None
        early = self._early.get(offer.transcription)
        if not isinstance(early, TranscriptReady):
            return None
        if not finished(offer.probability, early.text):
            return None
        return Utterance(self.open.start, offer.voiced_end), offer.audio, early.text, offer.probability

    def ended(
        self, sample: int, audio: AudioBlock, over_reply: bool, said_last: str = ""
    ) -> list[EngineAction]:
        """The utterance ended at ``sample``: the transcription to ask, if none was offered (``paused``
        says what ``over_reply`` and ``said_last`` do)."""
        context = answer_context(said_last, over_reply=over_reply)
        utterance = self.open
        if utterance is None:  # the table admits SpeechEnded only while the user speaks
            raise ProtocolError("speech ended that never started")
        utterance.end = sample
        self.open = None
        self._last = utterance
        self.transcribing += 1
        speculation = self._speculation
        if speculation is not None and speculation.voiced_end == sample:  # nothing was said since the offer
            self._speculation = None
            self._utterance_of[speculation.transcription] = utterance
            self._confirmed = self._early.pop(speculation.transcription, None)
            return []
        stale = self._drop_speculation()
        self._asked += 1
        self._utterance_of[self._asked] = utterance
        return [*stale, Transcribe(self._asked, audio, over_reply, context)]

    def take_confirmed(self) -> TranscriptOutcome | None:
        """The early transcript the last ``ended`` confirmed, once."""
        confirmed, self._confirmed = self._confirmed, None
        return confirmed

    def claim(self, event: TranscriptOutcome) -> Utterance | None:
        """The utterance a transcript belongs to; an early one is kept until endpointing confirms it."""
        utterance = self._utterance_of.pop(event.utterance, None)
        if utterance is None:
            if self._speculation is not None and self._speculation.transcription == event.utterance:
                self._early[event.utterance] = event
            return None  # or a speculation the user talked past: dropped
        self.transcribing -= 1
        return utterance

    def drop_all(self) -> list[EngineAction]:
        """Forget every transcription still to come (a new conversation)."""
        actions = self._drop_speculation()
        actions += [DropTranscription(utterance) for utterance in sorted(self._utterance_of)]
        self._utterance_of.clear()
        self.transcribing = 0
        return actions

    def _drop_speculation(self) -> list[EngineAction]:
        """The user talked past an early offer: its transcription is not needed (if queued, it never runs)."""
        speculation, self._speculation = self._speculation, None
        self._early.clear()
        return [] if speculation is None else [DropTranscription(speculation.transcription)]
