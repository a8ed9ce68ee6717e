"""Live words while the user speaks: ``input.partial`` events (docs/architecture.md §7).

A client of the event stream and of the mic audio the engine hears (after echo cancellation), never of
engine state. ``input.speech_started`` opens an utterance; its audio (from the VAD's pre-roll) is decoded
again as the user goes on, each decode's words published in place of the last; when the utterance is over
a final one carries its ``input.transcript`` text, or "" if it gave no input, so a client's live line ends
as the transcript. Nothing is decoded unless asked (``show``).

Off the path of every turn: decodes run on a thread and model of their own (voice/asr/partial_whisper.py),
never while a transcription, the end-of-turn model or a reply's synthesis is asked for (``yield_to``: one
asked for meanwhile abandons the decode at its next step), at most every ``EVERY_S`` and at most half the
time (a decode that took 200 ms waits 200 ms), and only while the user is voicing: the engine asks for
its early transcription ``speculate_ms`` into a pause, and a decode begun at a pause would meet it. One
decode hears at most ``SEGMENT_S``: a longer utterance keeps
the words of its first part, cut at a quiet moment, and decodes on from there. Speech that began over a
reply is not decoded until the verdict (``response.interrupted``, or the reply over): before it, its
words may be the assistant's own echo, and the cores belong to the barge-in.

The virtual room decodes inline (``threaded`` False) every ``INLINE_EVERY_S`` of audio while there is
new voice, pause or not (nothing else runs meanwhile in virtual time), so its runs stay deterministic.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.audio.vad import DEFAULT_QUIET
from voice.client_events import (
    SPOKEN_INPUT,
    Failure,
    InputPartial,
    InputTranscript,
    OutputAudioStarted,
    OutputAudioStopped,
    ResponseInterrupted,
    ResponseResumed,
    SpeechStarted,
    SpeechStopped,
    StateChanged,
    StreamEvent,
)
from voice.errors import VoiceError

EVERY_S = 0.3  # at most this often: words appear within a fraction of a second of being said
SEGMENT_S = 4.0  # a decode hears at most this much (a cut window of 13 s): longer speech is kept in parts
CUT_SEARCH_S = 2.0  # a part ends at the quietest moment of its last 2 s
QUIET_MS = 100  # that moment: the quietest 100 ms
FIRST_AFTER_S = 0.4  # of voice: a decode sooner hears half a word
INLINE_EVERY_S = 0.5  # the virtual room's pace (audio seconds)
VOICING_MS = 60  # a decode starts only this soon after a voiced frame: well before the early transcription
KEPT_IDLE_S = 1.5  # audio kept while nobody speaks: the pre-roll before a start the VAD tells late
KEPT_MOST_S = SEGMENT_S + 10.0  # never more, however long the decodes stand aside
PRE_ROLL_MS = DEFAULT_QUIET.pre_roll_ms
ENDED_STATES = ("listening", "speaking")
CLOSE_WAIT_S = 2.0  # after speech stopped: no transcript is due any more


class PartialDecoder(Protocol):
    """Words of an utterance so far; None when there are none to show (it looped, or ``stop`` said so
    between its steps: a decode under way is abandoned there)."""

    def decode(self, samples: Samples, stop: Callable[[], bool] = ...) -> str | None: ...


@dataclass
class _Utterance:
    number: int
    held: bool  # began over a reply: nothing is decoded until the verdict
    onset: int  # clock sample of its first voiced frame
    segment: int  # clock sample where the part being decoded starts (first: the VAD's pre-roll)
    stopped: bool = False
    committed: str = ""  # the words of the parts before ``segment``
    live: str = ""  # the last decode's words of the part from ``segment``
    decoded_voice: int = -1  # the VAD's voiced end when the last decode of this part was asked
    shown: bool = False  # a partial of it was published
    words: str = ""  # the last one's words


@dataclass(frozen=True)
class _Job:
    number: int
    samples: Samples
    cut: int | None  # a part ends here: its words are kept, and decoding goes on from here
    voiced: int


class LivePartials:
    """Follows the stream (``see``) and the mic (``hear``, one block at a time on the driver's loop) and
    publishes ``input.partial`` while ``show``n; ``load`` gives the decoder, on first use.

    ``decodes`` and ``decode_seconds`` count the decodes run and their wall time (for benchmarks).
    """

    def __init__(
        self,
        load: Callable[[], PartialDecoder],
        publish: Callable[[StreamEvent], None],
        voiced_until: Callable[[], int],
        *,
        yield_to: Callable[[], bool] = lambda: False,
        threaded: bool = True,
        rate: int = ENGINE_RATE,
    ) -> None:
        self._load = load
        self._publish = publish
        self._voiced_until = voiced_until
        self._yield_to = yield_to
        self._threaded = threaded
        self._rate = rate
        self._cond = threading.Condition()  # guards everything below that the decoding thread reads
        self._enabled = False
        self._blocks: deque[AudioBlock] = deque()
        self._now = 0  # end of the last block heard
        self._voiced = 0  # the VAD's voiced end at the last block heard
        self._utterance: _Utterance | None = None
        self._numbered = 0
        self._outbox: list[tuple[int, str, bool] | Failure] = []  # (utterance, text, final), in order
        self._finished_to = 0  # utterances up to this number are over: their late decodes are dropped
        self._orphans = 0  # transcripts still due of utterances ended unshown by a newer one
        self._reply_audible = False
        self._decoder: PartialDecoder | None = None
        self._broken = False  # the decoder did not load: nothing more is tried
        self._failed = False  # a failure was said (once: a broken model would say it every decode)
        self._thread: threading.Thread | None = None
        self._threads = 0  # decoding threads started: one whose number is not the last stops
        self._not_before = 0.0  # threaded: no decode starts before this (monotonic)
        self._next_inline = 0  # inline: no decode before this clock sample
        self.decodes = 0
        self.decode_seconds = 0.0

    # -- asked for --------------------------------------------------------------------------------

    @property
    def shown(self) -> bool:
        return self._enabled

    def show(self, enabled: bool) -> None:
        """Decode and publish partials from now on, or stop (a client or view asked)."""
        with self._cond:
            self._enabled = enabled
            if not enabled:
                self._blocks.clear()
                self._outbox = [item for item in self._outbox if isinstance(item, Failure)]
            self._cond.notify_all()

    def close(self) -> None:
        """Stop the decoding thread after the decode in hand, waiting for it at most ``CLOSE_WAIT_S`` (a
        low-priority decode on a busy machine must not hold a stop up); a later block starts it again."""
        with self._cond:
            thread, self._thread = self._thread, None
            self._threads += 1  # the thread in hand is no longer the last: it stops
            self._cond.notify_all()
        if thread is not None:
            thread.join(CLOSE_WAIT_S)

    # -- the stream -------------------------------------------------------------------------------

    def see(self, event: StreamEvent) -> None:
        """A subscriber of the stream, on the loop that publishes (what is published here waits for
        the next block: a subscriber publishing would reorder the stream for the ones after it)."""
        with self._cond:
            self._follow(event)
            self._cond.notify_all()

    def _follow(self, event: StreamEvent) -> None:
        utterance = self._utterance
        match event:
            case OutputAudioStarted():
                self._reply_audible = True
            case OutputAudioStopped():
                self._reply_audible = False
                if utterance is not None:
                    utterance.held = False  # the reply is over: what is said now is the user's
            case SpeechStarted(t=t):
                if utterance is not None:
                    self._orphans += int(utterance.stopped)  # its transcript, if any, is still to come
                    self._finish("")
                self._numbered += 1
                onset = round(t * self._rate)
                start = max(0, onset - PRE_ROLL_MS * self._rate // 1000)
                self._utterance = _Utterance(self._numbered, self._reply_audible, onset, start)
            case SpeechStopped() if utterance is not None:
                utterance.stopped = True
            case ResponseInterrupted() if utterance is not None:
                utterance.held = False  # the verdict: these are the user's words
            case ResponseResumed() if utterance is not None and utterance.stopped:
                self._finish("")  # the speech that paused the reply was not the user's words
            case InputTranscript(id=input_id, text=text) if input_id.startswith(SPOKEN_INPUT):
                if self._orphans:
                    self._orphans -= 1
                elif utterance is not None and utterance.stopped:
                    self._finish(text)
            case StateChanged(state=state) if state in ENDED_STATES:
                if utterance is not None and utterance.stopped:
                    self._finish("")
                self._orphans = 0

    def _finish(self, text: str) -> None:
        """The utterance is over: a client that saw its partials gets the final one. (lock held)"""
        utterance, self._utterance = self._utterance, None
        if utterance is None:
            return
        self._finished_to = utterance.number
        if utterance.shown:
            self._outbox.append((utterance.number, text, True))

    # -- the mic ----------------------------------------------------------------------------------

    def hear(self, block: AudioBlock) -> None:
        """A mic block as the engine heard it (after it did): kept while shown; what is ready is published."""
        with self._cond:
            if self._enabled and not self._broken:
                self._keep(block)
            ready = self._take_ready()
            job = None
            if not self._threaded and block.end >= self._next_inline:
                job = self._job()
            elif self._threaded and self._enabled and not self._broken:
                self._start_thread()
                if self._decodable():
                    self._cond.notify_all()  # the decoding thread looks whether a decode is due
        t = round(block.end / self._rate, 3)
        self._send(ready, t)
        if job is not None:
            self._next_inline = block.end + round(INLINE_EVERY_S * self._rate)
            text = self._decode(job)
            with self._cond:
                self._take(job, text)
                ready = self._take_ready()
            self._send(ready, t)

    def _keep(self, block: AudioBlock) -> None:
        """(lock held)"""
        self._blocks.append(block)
        self._now = block.end
        self._voiced = self._voiced_until()
        utterance = self._utterance
        keep_from = self._now - round(KEPT_IDLE_S * self._rate)
        if utterance is not None:
            keep_from = min(keep_from, utterance.segment)
        keep_from = max(keep_from, self._now - round(KEPT_MOST_S * self._rate))
        while self._blocks and self._blocks[0].end <= keep_from:
            self._blocks.popleft()

    def _take_ready(self) -> list[tuple[int, str, bool] | Failure]:
        """What is ready to publish, late decodes of utterances already over left out. (lock held)"""
        ready, self._outbox = self._outbox, []
        return [item for item in ready if isinstance(item, Failure) or item[2] or item[0] > self._finished_to]

    def _send(self, ready: list[tuple[int, str, bool] | Failure], t: float) -> None:
        for item in ready:
            if isinstance(item, Failure):
                self._publish(Failure(item.code, item.message, t=t))
            else:
                self._publish(InputPartial(item[1], item[2], t))

    # -- decoding ---------------------------------------------------------------------------------

    def _decodable(self) -> bool:
        """Is an utterance under way whose words may be decoded? (lock held)"""
        utterance = self._utterance
        return (
            self._enabled
            and not self._broken
            and utterance is not None
            and not utterance.held
            and not utterance.stopped
        )

    def _job(self) -> _Job | None:
        """The decode due now for the utterance under way, if any. (lock held)"""
        utterance = self._utterance
        if (
            utterance is None
            or not self._decodable()
            or self._voiced <= utterance.decoded_voice
            or self._now - utterance.onset < FIRST_AFTER_S * self._rate
        ):
            return None
        segment_end = utterance.segment + round(SEGMENT_S * self._rate)
        if self._now <= segment_end:
            return _Job(utterance.number, self._samples(utterance.segment, self._now), None, self._voiced)
        cut = self._quietest(segment_end - round(CUT_SEARCH_S * self._rate), segment_end)
        return _Job(utterance.number, self._samples(utterance.segment, cut), cut, utterance.decoded_voice)

    def _samples(self, start: int, end: int) -> Samples:
        """The audio kept over [start, end). (lock held)"""
        pieces = [
            block.samples[max(0, start - block.start) : max(0, end - block.start)]
            for block in self._blocks
            if block.end > start and block.start < end
        ]
        return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.float32)

    def _quietest(self, start: int, end: int) -> int:
        """The middle of the quietest QUIET_MS in [start, end). (lock held)"""
        samples = self._samples(start, end)
        frame = self._rate // 50
        frames = len(samples) // frame
        span = max(1, QUIET_MS * self._rate // 1000 // frame)
        if frames <= span:
            return end
        energy = np.square(samples[: frames * frame].reshape(frames, frame), dtype=np.float64).sum(axis=1)
        sums = np.convolve(energy, np.ones(span), mode="valid")
        return start + int(np.argmin(sums)) * frame + span * frame // 2

    def _ready_decoder(self) -> PartialDecoder | None:
        """The decoder, loaded on first use; None (said once) if it does not load."""
        if self._decoder is None and not self._broken:
            try:
                self._decoder = self._load()
            except VoiceError as exc:
                with self._cond:
                    self._broken = True  # a model that will not load is not tried again
                    self._say(exc)
        return self._decoder

    def _say(self, exc: VoiceError) -> None:
        """A failure, as one ``error`` event (a broken model would fail every decode). (lock held)"""
        if not self._failed:
            self._failed = True
            self._outbox.append(Failure("partials", f"live words: {exc}"))

    def _decode(self, job: _Job) -> str | None:
        """One decode, timed; a failure is said once and shows nothing."""
        started = time.monotonic()
        try:
            decoder = self._ready_decoder()
            return None if decoder is None else decoder.decode(job.samples, lambda: self._stop(job))
        except VoiceError as exc:
            with self._cond:
                self._say(exc)
            return None
        finally:
            done = time.monotonic()
            with self._cond:
                self.decodes += 1
                self.decode_seconds += done - started
                self._not_before = max(started + EVERY_S, done + (done - started))

    def _stop(self, job: _Job) -> bool:
        """Abandon ``job`` now? Threaded only: a transcription (or the turn's other work) is asked for, or
        its utterance is over."""
        if not self._threaded:
            return False
        with self._cond:
            utterance = self._utterance
            over = utterance is None or utterance.number != job.number
        return over or self._yield_to()

    def _take(self, job: _Job, text: str | None) -> None:
        """A decode's words, into the utterance it was of (if it is still under way). (lock held)"""
        utterance = self._utterance
        if utterance is None or utterance.number != job.number:
            return
        if job.cut is not None:
            kept = text if text is not None else utterance.live
            utterance.committed = _joined(utterance.committed, kept)
            utterance.segment, utterance.live, utterance.decoded_voice = job.cut, "", -1
            return
        utterance.decoded_voice = job.voiced
        if text is None:
            return
        utterance.live = text
        words = _joined(utterance.committed, text)
        if words and words != utterance.words and self._enabled:
            utterance.shown, utterance.words = True, words
            self._outbox.append((utterance.number, words, False))

    # -- the decoding thread ----------------------------------------------------------------------

    def _start_thread(self) -> None:
        """(lock held)"""
        if self._thread is None:
            self._threads += 1
            self._thread = threading.Thread(
                target=self._run, args=(self._threads,), name="voice-partials", daemon=True
            )
            self._thread.start()

    def _run(self, number: int) -> None:
        self._ready_decoder()  # loaded before the first words come, not while they wait
        while True:
            with self._cond:
                job = self._next_job(number)
            if job is None:
                return
            text = self._decode(job)
            with self._cond:
                self._take(job, text)

    def _next_job(self, number: int) -> _Job | None:
        """Wait for a decode due now that may run; None once thread ``number`` is closed. (lock held)"""
        while number == self._threads:
            wait = self._not_before - time.monotonic()
            voicing = self._now - self._voiced <= VOICING_MS * self._rate // 1000
            job = self._job() if wait <= 0 and voicing else None
            if job is not None and not self._yield_to():
                return job
            # hear() wakes us each block while there is something to decode
            self._cond.wait(wait if wait > 0 else None)
        return None


def _joined(first: str, second: str) -> str:
    return f"{first} {second}".strip()
