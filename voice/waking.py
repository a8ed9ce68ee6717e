"""The wake word on a running conversation: the mic gated while asleep, a reply cut by the wake word,
and clients told ``asleep`` and ``listening`` (docs/architecture.md §2). Every driver's Duplex uses it."""

from __future__ import annotations

from voice.asr.port import Transcriber
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.client_events import Failure, StateChanged, StreamEvent
from voice.engine.inputs import CancelReply
from voice.runtime import ActionRunner
from voice.wake.phrase import WakeWordsDropped
from voice.wake.watch import IDLE_STATE, WakeWatch

ASLEEP = "asleep"
REPLY_STATES = ("thinking", "speaking", "paused", "holding")  # a reply in flight, or one on its way


class WakeWordGate:
    """Between the echo canceller and the engine: the wake watch on every block the engine would hear."""

    def __init__(self, watch: WakeWatch) -> None:
        self.watch = watch
        self.wakes = 0  # wake words heard so far (asleep or awake)
        self.last_wake: int | None = None  # the mic sample after the latest wake word
        self._runner: ActionRunner | None = None
        self._engine_state = IDLE_STATE
        self._told = False  # has the first state been told?

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
        heard = self.watch.hear(block)
        detector = self.watch.detector
        if detector.problem is not None:  # said once, as a device notice is
            runner.events.publish(Failure("wake", detector.problem, t=round(block.end / ENGINE_RATE, 3)))
            detector.problem = None
        if heard.detection is not None:
            self.wakes += 1
            self.last_wake = heard.detection.sample
            if self._engine_state in REPLY_STATES:
                runner.feed(CancelReply())  # the wake word is for the assistant: it stops to listen
        if heard.woke and heard.detection is not None:
            self._tell(runner, IDLE_STATE, heard.detection.sample)
        elif heard.slept:
            self._tell(runner, ASLEEP, block.end)
        return heard.block

    def _tell(self, runner: ActionRunner, state: str, sample: int) -> None:
        runner.events.publish(StateChanged(state, round(sample / ENGINE_RATE, 3)))

    def _follow(self, event: StreamEvent) -> None:
        if isinstance(event, StateChanged) and event.state != ASLEEP:
            self._engine_state = event.state
            self.watch.engine_state(event.state, round(event.t * ENGINE_RATE))
