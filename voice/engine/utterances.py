"""Utterances from the VAD's cut to their transcripts, with speculative ASR.

When the user pauses, the utterance so far is transcribed at once, while endpointing still waits to be
sure the turn ended; if it ends at that very sample, the early transcript is the utterance's, and the
reply starts without waiting for ASR. Speech past the pause drops the early offer.
"""

from __future__ import annotations

from voice.audio.block import AudioBlock
from voice.engine.actions import DropTranscription, EngineAction, Transcribe
from voice.engine.events import TranscriptFailed, TranscriptReady
from voice.engine.records import SpeechRecord
from voice.errors import ProtocolError

Transcript = TranscriptReady | TranscriptFailed


class Utterances:
    """The utterance under way, transcriptions asked and still due, and the early offer."""

    def __init__(self) -> None:
        self.open: SpeechRecord | None = None  # the utterance the user is speaking
        self.transcribing = 0  # final transcripts still to come
        self._asked = 0  # transcriptions asked so far: the next one's number
        self._record_of: dict[int, SpeechRecord] = {}
        self._speculation: tuple[int, int] | None = None  # (transcription, voiced end) offered early
        self._early: dict[int, Transcript] = {}
        self._confirmed: Transcript | None = None  # an early transcript endpointing just confirmed

    def started(self, sample: int) -> None:
        self.open = SpeechRecord(sample, sample)

    def paused(self, sample: int, audio: AudioBlock) -> list[EngineAction]:
        """The user may have finished: transcribe now, while endpointing still waits to be sure."""
        stale = self._drop_speculation()
        self._asked += 1
        self._speculation = (self._asked, sample)
        return [*stale, Transcribe(self._asked, audio)]

    def ended(self, sample: int, audio: AudioBlock) -> tuple[SpeechRecord, list[EngineAction]]:
        """The utterance ended at ``sample``: its record, and the transcription to ask if none was offered."""
        record = self.open
        if record is None:  # the table admits SpeechEnded only while the user speaks
            raise ProtocolError("speech ended that never started")
        record.end = sample
        self.open = None
        self.transcribing += 1
        speculation = self._speculation
        if speculation is not None and speculation[1] == sample:  # nothing was said since the offer
            self._speculation = None
            self._record_of[speculation[0]] = record
            self._confirmed = self._early.pop(speculation[0], None)
            return record, []
        stale = self._drop_speculation()
        self._asked += 1
        self._record_of[self._asked] = record
        return record, [*stale, Transcribe(self._asked, audio)]

    def take_confirmed(self) -> Transcript | None:
        """The early transcript the last ``ended`` confirmed, once."""
        confirmed, self._confirmed = self._confirmed, None
        return confirmed

    def claim(self, event: Transcript) -> SpeechRecord | None:
        """The utterance a transcript belongs to; an early one is kept until endpointing confirms it."""
        record = self._record_of.pop(event.utterance, None)
        if record is None:
            if self._speculation is not None and self._speculation[0] == event.utterance:
                self._early[event.utterance] = event
            return None  # or a speculation the user talked past: dropped
        self.transcribing -= 1
        return record

    def drop_all(self) -> list[EngineAction]:
        """Forget every transcription still to come (a new conversation)."""
        actions = self._drop_speculation()
        actions += [DropTranscription(utterance) for utterance in sorted(self._record_of)]
        self._record_of.clear()
        self.transcribing = 0
        return actions

    def _drop_speculation(self) -> list[EngineAction]:
        """The user talked past an early offer: its transcription is not needed (if queued, it never runs)."""
        speculation, self._speculation = self._speculation, None
        self._early.clear()
        return [] if speculation is None else [DropTranscription(speculation[0])]
