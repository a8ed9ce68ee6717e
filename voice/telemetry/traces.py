"""OpenTelemetry traces: one span per turn, with a child for each part of it, exported over OTLP/HTTP.

The tracer is a subscriber of the event stream and the session log and a watcher of the runtime's work,
like the metrics; each thing it is told goes on a queue with the wall time it was seen, and its own
thread builds the spans once a turn has ended (with the times each part really took) and hands them to
the SDK's batch processor, whose thread exports them. The engine's thread does one queue put per event.

Spans of a turn (``turn``): ``endpointing`` (the user's speech ended to the request sent), ``asr``,
``llm`` (to the end of its stream) with ``llm.first_token`` inside it, ``tts`` for each chunk,
``playback`` (first to last sample played) and ``tool`` for each call. The turn carries its outcome,
``voice.interrupted``, the words heard, the eagerness and, for a failure, ``error.code``; no user text
and no reply text unless ``include_text``.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter

from voice.client_events import (
    InputTranscript,
    OutputAudioStarted,
    OutputAudioStopped,
    ResponseCreated,
    ResponseDone,
    ResponseInterrupted,
    ResponseResumed,
    SpeechStarted,
    SpeechStopped,
    StateChanged,
    StreamEvent,
    ToolCalled,
    ToolFinished,
)
from voice.conversation.log_records import InputWithdrawn, LogRecord, TurnEnded, TurnFailed
from voice.engine.inputs import EngineInput, LlmDone, LlmText, LlmToolCall, SynthesisReady, TranscriptReady

SETTLE_S = 0.5  # a turn's last events follow its end record within one step of the engine
GATHER_S = 0.2  # events gather this long before the tracer's thread takes them
EXPORT_DELAY_MS = 2000  # the batch processor sends at most every this often
NS = 1_000_000_000


@dataclass
class _TracedInput:
    """The user input being formed: when its speech began and ended, its transcription, its text."""

    onset_ns: int | None = None
    stopped_ns: int | None = None
    asr: tuple[int, int] | None = None
    text: str | None = None
    typed_ns: int | None = None


@dataclass
class _TracedTurn:
    number: int
    user: _TracedInput
    request_ns: int
    llm: tuple[int, int] | None = None
    first_token_ns: int | None = None
    llm_started_ns: int | None = None
    chunks: list[tuple[int, int, int]] = field(default_factory=list)  # chunk, start, end
    playback: list[int | None] = field(default_factory=lambda: [None, None])
    tools: dict[str, tuple[str, int, int | None, bool]] = field(
        default_factory=dict
    )  # id: name, start, end, failed
    outcome: str | None = None
    error_code: str | None = None
    heard: str = ""
    generated: str = ""
    reaction_ms: float | None = None
    voice_to_voice_ms: float | None = None
    ended_at: float | None = None  # time.monotonic() the end was seen


class TurnTracer:
    """Builds each turn's spans on its own thread; ``close`` exports what is left."""

    def __init__(
        self,
        exporter: SpanExporter,
        eagerness: str,
        include_text: bool = False,
        export_delay_ms: int = EXPORT_DELAY_MS,
        wall_ns: Callable[[], int] = time.time_ns,
    ) -> None:
        self._provider = TracerProvider(resource=Resource.create({"service.name": "voice"}))
        self._provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=export_delay_ms))
        self._tracer = self._provider.get_tracer("voice")
        self._eagerness = eagerness
        self._include_text = include_text
        self._wall_ns = wall_ns
        self._queue: queue.SimpleQueue[tuple[int, str, Any] | None] = queue.SimpleQueue()
        self._input = _TracedInput()
        self._turns: dict[int, _TracedTurn] = {}
        self._offset_ns: int | None = None  # wall time minus the session's sample clock, in ns
        self._state = "listening"
        self._cut_onset_s: float | None = None  # speech that began while the reply was audible (sample clock)
        self._thread = threading.Thread(target=self._run, name="voice-traces", daemon=True)
        self._thread.start()

    @classmethod
    def over_http(cls, endpoint: str, eagerness: str, include_text: bool = False) -> TurnTracer:
        """Spans to an OTLP/HTTP collector at ``endpoint`` (its base: ``/v1/traces`` is added)."""
        exporter = OTLPSpanExporter(endpoint=f"{endpoint.rstrip('/')}/v1/traces")
        return cls(exporter, eagerness, include_text)

    # -- what it is told (any thread: one queue put) --------------------------------------------------

    def see(self, event: StreamEvent) -> None:
        self._queue.put((self._wall_ns(), "event", event))

    def note(self, record: LogRecord) -> None:
        self._queue.put((self._wall_ns(), "record", record))

    def produced(self, kind: str, event: EngineInput, seconds: float) -> None:
        self._queue.put((self._wall_ns(), "work", (event, round(seconds * NS))))

    def close(self) -> None:
        """Build the turns still open and export every span (waits for the exporter)."""
        self._queue.put(None)
        self._thread.join()
        self._provider.shutdown()

    # -- its thread ----------------------------------------------------------------------------------

    def _run(self) -> None:
        """Asleep while nothing happens; woken by the first event, it lets a batch gather, then takes it
        all: the publishing threads never hand it the GIL event by event."""
        while True:
            waiting = any(turn.ended_at is not None for turn in self._turns.values())
            try:
                batch = [self._queue.get(timeout=SETTLE_S if waiting else None)]
            except queue.Empty:
                batch = []
            else:
                time.sleep(GATHER_S)
                while not self._queue.empty():
                    batch.append(self._queue.get())
            for item in batch:
                if item is None:
                    self._build_ended(float("inf"))
                    return
                self._take(*item)
            self._build_ended(time.monotonic() - SETTLE_S)

    def _take(self, seen_ns: int, source: str, thing: Any) -> None:
        if source == "work":
            self._work(seen_ns, *thing)
        elif source == "event":
            self._event(seen_ns, thing)
        elif isinstance(thing, TurnEnded | TurnFailed | InputWithdrawn):
            self._ended(thing)

    def _at(self, t: float, seen_ns: int) -> int:
        """A time on the session's sample clock as wall time (by the latest state change's)."""
        return seen_ns if self._offset_ns is None else self._offset_ns + round(t * NS)

    def _event(self, seen_ns: int, event: StreamEvent) -> None:
        user = self._input
        match event:
            case StateChanged(state=state, t=t):
                self._offset_ns = seen_ns - round(t * NS)
                if state == "speaking" and self._state == "paused":
                    self._cut_onset_s = None
                self._state = state
            case SpeechStarted(t=t):
                if self._state == "speaking":
                    self._cut_onset_s = t
                if user.onset_ns is None:
                    user.onset_ns = self._at(t, seen_ns)
            case SpeechStopped(t=t):
                user.stopped_ns = self._at(t, seen_ns)
            case ResponseResumed():
                self._input = _TracedInput(
                    asr=user.asr, text=user.text, typed_ns=user.typed_ns
                )  # a cough: no input
            case InputTranscript(id=input_id, text=text):
                user.text = text
                if not input_id.startswith("speech-") and user.onset_ns is None:
                    user.typed_ns = seen_ns
            case ResponseCreated(turn=number):
                self._turns[number] = _TracedTurn(number, user, seen_ns)
                self._input = _TracedInput()
            case OutputAudioStarted(turn=number, t=t) if number in self._turns:
                self._turns[number].playback[0] = self._at(t, seen_ns)
            case OutputAudioStopped(turn=number, t=t) if number in self._turns:
                self._turns[number].playback[1] = self._at(t, seen_ns)
            case ToolCalled(turn=number, id=call_id, name=name) if number in self._turns:
                self._turns[number].tools[call_id] = (name, seen_ns, None, False)
            case ToolFinished(turn=number, id=call_id, failed=failed) if number in self._turns:
                name, started, _, _ = self._turns[number].tools.get(call_id, ("tool", seen_ns, None, False))
                self._turns[number].tools[call_id] = (name, started, seen_ns, failed)
            case ResponseDone(turn=number, metrics=measured) if number in self._turns:
                self._turns[number].voice_to_voice_ms = measured.get("voice_to_voice_ms")
            case ResponseInterrupted(turn=number, audio_end_ms=audio_end_ms) if number in self._turns:
                onset = self._cut_onset_s
                if audio_end_ms is not None and onset is not None and audio_end_ms >= onset * 1000:
                    self._turns[number].reaction_ms = round(audio_end_ms - onset * 1000, 1)
                self._cut_onset_s = None

    def _work(self, seen_ns: int, event: EngineInput, took_ns: int) -> None:
        asked = seen_ns - took_ns
        match event:
            case TranscriptReady():
                self._input.asr = (asked, seen_ns)
            case LlmText(turn=number) | LlmToolCall(turn=number) if number in self._turns:
                turn = self._turns[number]
                if turn.first_token_ns is None:
                    turn.first_token_ns, turn.llm_started_ns = seen_ns, asked
            case LlmDone(turn=number) if number in self._turns:
                self._turns[number].llm = (asked, seen_ns)
            case SynthesisReady(turn=number, chunk=chunk) if number in self._turns:
                self._turns[number].chunks.append((chunk, asked, seen_ns))

    def _ended(self, record: TurnEnded | TurnFailed | InputWithdrawn) -> None:
        match record:
            case TurnEnded(turn=number) if number in self._turns:
                turn = self._turns[number]
                turn.outcome = "interrupted" if record.cancelled else "completed"
                turn.heard = record.heard if record.cancelled else record.generated
                turn.generated = record.generated
                turn.ended_at = time.monotonic()
            case TurnFailed(turn=number) if number in self._turns:
                turn = self._turns[number]
                turn.outcome, turn.error_code = "failed", record.reason
                turn.heard, turn.generated = record.heard, record.generated
                turn.ended_at = time.monotonic()
            case InputWithdrawn():
                ended = [turn for turn in self._turns.values() if turn.outcome == "interrupted"]
                if ended:
                    ended[-1].outcome = "discarded"

    def _build_ended(self, before: float) -> None:
        for number in [n for n, turn in self._turns.items() if turn.ended_at is not None]:
            turn = self._turns[number]
            if turn.ended_at is not None and turn.ended_at <= before:
                self._build(self._turns.pop(number))

    def _build(self, turn: _TracedTurn) -> None:
        user = turn.user
        starts = [user.onset_ns, user.typed_ns, user.asr[0] if user.asr else None, turn.request_ns]
        start = min(at for at in starts if at is not None)
        ends = [turn.request_ns, *(t for t in turn.playback if t is not None)]
        ends += [end for _, _, end in turn.chunks] + ([turn.llm[1]] if turn.llm else [])
        end = max(ends)
        attributes: dict[str, Any] = {
            "voice.turn": turn.number,
            "voice.outcome": turn.outcome or "unknown",
            "voice.interrupted": turn.outcome == "interrupted",
            "voice.heard_words": len(turn.heard.split()),
            "voice.generated_words": len(turn.generated.split()),
            "voice.eagerness": self._eagerness,
            "voice.input": "typed" if user.typed_ns is not None else "spoken",
        }
        if turn.error_code is not None:
            attributes["error.code"] = turn.error_code
        if turn.voice_to_voice_ms is not None:
            attributes["voice.voice_to_voice_ms"] = turn.voice_to_voice_ms
        if turn.reaction_ms is not None:
            attributes["voice.barge_in_reaction_ms"] = turn.reaction_ms
        if self._include_text:
            attributes["voice.user_text"] = user.text or ""
            attributes["voice.heard_text"] = turn.heard
        root = self._tracer.start_span("turn", start_time=start, attributes=attributes)
        inside = trace.set_span_in_context(root)

        def child(name: str, begin: int, finish: int, **extra: Any) -> trace.Span:
            span = self._tracer.start_span(name, context=inside, start_time=begin, attributes=extra)
            span.end(end_time=max(begin, finish))
            return span

        if user.stopped_ns is not None:
            child("endpointing", user.stopped_ns, turn.request_ns)
        if user.asr is not None:
            child("asr", *user.asr)
        if turn.llm is not None or turn.first_token_ns is not None:
            began = turn.llm_started_ns or turn.request_ns
            finished = turn.llm[1] if turn.llm else turn.first_token_ns or began
            llm = self._tracer.start_span("llm", context=inside, start_time=began)
            if turn.first_token_ns is not None:
                first = self._tracer.start_span(
                    "llm.first_token", context=trace.set_span_in_context(llm), start_time=began
                )
                first.end(end_time=turn.first_token_ns)
            llm.set_attribute("voice.finished", turn.llm is not None)
            llm.end(end_time=max(began, finished))
        for chunk, began, finished in turn.chunks:
            child("tts", began, finished, **{"voice.chunk": chunk})
        played_from, played_to = turn.playback
        if played_from is not None:
            child("playback", played_from, played_to or end)
        for name, called, returned, failed in turn.tools.values():
            child("tool", called, returned or end, **{"voice.tool": name, "voice.failed": failed})
        root.end(end_time=end)
