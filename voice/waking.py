"""The wake word on a running conversation: the mic gated while asleep, a reply cut by the wake word,
the wake word's voice enrolling the conversation's speaker, and clients told ``asleep`` and ``listening``
(docs/architecture.md §2). Every driver's Duplex uses it."""

from __future__ import annotations

from collections import deque

import numpy as np

from voice.asr.port import Transcriber
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.client_events import Failure, StateChanged, StreamEvent
from voice.engine.inputs import CancelReply
from voice.runtime import ActionRunner
from voice.wake.phrase import WakeWordsDropped
from voice.wake.watch import IDLE_STATE, WakeWatch

ASLEEP = "asleep"
REPLY_STATES = ("thinking", "speaking", "paused", "holding")  # a reply in flight, or one on its way
WAKE_WORD_S = 1.2  # the voice before a detection taken as the wake word's ("Okay Nabu" takes 0.6-1 s)


class WakeWordGate:
    """Between the echo canceller and the engine: the wake watch on every block the engine would hear."""

    def __init__(self, watch: WakeWatch) -> None:
        self.watch = watch
        self.wakes = 0  # wake words heard so far (asleep or awake)
        self.last_wake: int | None = None  # the mic sample after the latest wake word
        self._runner: ActionRunner | None = None
        self._engine_state = IDLE_STATE
        self._told = False  # has the first state been told?
        self._recent: deque[AudioBlock] = deque()  # the mic's last WAKE_WORD_S or so, as heard

    def transcriber(self, inner: Transcriber) -> Transcriber:
        """``inner`` leaving out the wake word where a transcript starts with it."""
        return WakeWordsDropped(inner, self.watch.detector.phrase, lambda: self.last_wake)

    def attach(self, runner: ActionRunner) -> None:
        self._runner = runner
        runner.events.subscribe(self._follow)

    def hear(self, block: AudioBlock) -> AudioBlock:
        """The block the engine should hear instead of ``block``; cuts a reply the wake word was said over."""
        runner = self._runner
        if runner is None:
            raise RuntimeError("the wake word gate has no conversation attached")
        if not self._told:
            self._told = True
            if self.watch.asleep:
                self._tell(runner, ASLEEP, block.start)
        self._keep(block)
        heard = self.watch.hear(block)
        detector = self.watch.detector
        if detector.problem is not None:  # said once, as a device notice is
            runner.events.publish(Failure("wake", detector.problem, t=round(block.end / ENGINE_RATE, 3)))
            detector.problem = None
        if heard.detection is not None:
            self.wakes += 1
            self.last_wake = heard.detection.sample
            runner.enroll_speaker(self._wake_word(heard.detection.sample))  # who called starts it
            if self._engine_state in REPLY_STATES:
                runner.feed(CancelReply())  # the wake word is for the assistant: it stops to listen
        if heard.woke and heard.detection is not None:
            self._tell(runner, IDLE_STATE, heard.detection.sample)
        elif heard.slept:
            self._tell(runner, ASLEEP, block.end)
        return heard.block

    def _keep(self, block: AudioBlock) -> None:
        self._recent.append(block)
        while self._recent and block.end - self._recent[0].end > WAKE_WORD_S * block.rate:
            self._recent.popleft()

    def _wake_word(self, end: int) -> AudioBlock:
        """The mic's audio of the ``WAKE_WORD_S`` up to ``end``, the wake word's end."""
        start = max(0, end - round(WAKE_WORD_S * ENGINE_RATE))
        kept = [b for b in self._recent if b.end > start and b.start < end]
        if not kept:
            return AudioBlock(np.zeros(0, np.float32), ENGINE_RATE, start)
        joined = np.concatenate([b.samples for b in kept])
        first = max(0, start - kept[0].start)
        return AudioBlock(joined[first : first + end - max(start, kept[0].start)], ENGINE_RATE, start)

    def _tell(self, runner: ActionRunner, state: str, sample: int) -> None:
        runner.events.publish(StateChanged(state, round(sample / ENGINE_RATE, 3)))

    def _follow(self, event: StreamEvent) -> None:
        if isinstance(event, StateChanged) and event.state != ASLEEP:
            self._engine_state = event.state
            self.watch.engine_state(event.state, round(event.t * ENGINE_RATE))
