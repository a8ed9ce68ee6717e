"""Prometheus metrics of one assistant process (README "Running a fleet"), with the official client.

A subscriber like any other: turns, errors and the times users notice come from the event stream and
the session log's records; ASR, LLM and TTS times from the runtime's one timing hook (``produced``);
clients from the kiosk server; device glitches are the driver's counters, read when scraped. Process
RSS and CPU are prometheus_client's own ``process_*`` collector.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Final

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    ProcessCollector,
    disable_created_metrics,
)
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import Collector

from voice.client_events import (
    Failure,
    ResponseDone,
    ResponseInterrupted,
    SpeechStarted,
    StateChanged,
    StreamEvent,
)
from voice.conversation.log_records import InputWithdrawn, LogRecord, TurnFailed
from voice.engine.inputs import (
    EngineInput,
    LlmDone,
    LlmText,
    LlmToolCall,
    SynthesisReady,
    ToolDone,
    TranscriptReady,
)
from voice.telemetry.machine import Cpu

CONTENT_TYPE: Final = CONTENT_TYPE_LATEST
# a *_created series per counter and histogram would double what each scrape formats and Prometheus stores
disable_created_metrics()  # type: ignore[no-untyped-call]
BACKCHANNEL = "input.backchannel"  # a listener's "yeah" over a reply (issue 36): counted once it is published
OUTCOMES = ("completed", "interrupted", "discarded", "failed", BACKCHANNEL.removeprefix("input."))
LATENCY_BUCKETS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0)
REACTION_BUCKETS = (0.05, 0.075, 0.1, 0.125, 0.15, 0.175, 0.2, 0.25, 0.3, 0.5, 1.0, 2.0)
SHARE_BUCKETS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
DEVICE_COUNTERS = {  # DeviceConversation.device_counters() key: (metric name, help)
    "reopened": ("voice_device_reopens", "Times the audio devices were reopened after they failed."),
    "loop_stalls": ("voice_loop_stalls", "Times the engine loop woke late from waiting for the mic."),
    "dropped_blocks": ("voice_mic_dropped_blocks", "Mic blocks dropped because the loop fell behind."),
    "overflows": ("voice_audio_overflows", "Times the microphone lost input."),
    "underflows": ("voice_audio_underflows", "Times the speaker ran dry."),
}


class VoiceMetrics:
    """The metrics and what feeds them; ``exposition()`` is the text a scrape gets.

    ``see`` and ``note`` run on the engine's thread, ``produced`` on the workers', the client counts on
    the kiosk's loop; prometheus_client's metrics take them all.
    """

    def __init__(self, cpu: Cpu | None = None) -> None:
        self.registry = registry = CollectorRegistry()
        ProcessCollector(registry=registry)
        if cpu is not None:  # figures differ by CPU (issue 46): a dashboard can tell the machines apart
            about = "The processor and the instruction sets its kernels use."
            facts = {"model": cpu.model, "arch": cpu.arch, "cores": str(cpu.cores)}
            Info("voice_cpu", about, registry=registry).info(facts | {"sets": " ".join(cpu.present)})
        self.turns = Counter(
            "voice_turns",
            "Turns by how they ended: completed (played in full), interrupted (the user cut in), discarded "
            "(answered at a pause the user went on from, unheard), failed (by error code), backchannel "
            "(a listener's acknowledgement the reply went on over).",
            ["outcome", "code"],
            registry=registry,
        )
        for outcome in OUTCOMES:
            if outcome != "failed":
                self.turns.labels(outcome, "")
        self.errors = Counter(
            "voice_errors", "Error events clients were told of, by code.", ["code"], registry=registry
        )
        self.voice_to_voice = Histogram(
            "voice_voice_to_voice_seconds",
            "End of the user's speech to the first sample of the reply played (completed spoken turns).",
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.reaction = Histogram(
            "voice_barge_in_reaction_seconds",
            "Onset of the user's speech over a reply to the reply's last sample played (interrupted turns).",
            buckets=REACTION_BUCKETS,
            registry=registry,
        )
        self.heard_share = Histogram(
            "voice_interrupted_heard_ratio",
            "Share of an interrupted reply's generated words that were heard before the cut.",
            buckets=SHARE_BUCKETS,
            registry=registry,
        )
        self.asr = Histogram(
            "voice_asr_seconds", "Transcription asked to transcript ready.", buckets=LATENCY_BUCKETS,
            registry=registry,
        )  # fmt: skip
        self.llm_first_token = Histogram(
            "voice_llm_first_token_seconds",
            "Request handed to the LLM worker to its first text or tool call.",
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.llm_reply = Histogram(
            "voice_llm_reply_seconds", "Request handed to the LLM worker to the end of its stream.",
            buckets=LATENCY_BUCKETS, registry=registry,
        )  # fmt: skip
        self.tts_first_audio = Histogram(
            "voice_tts_first_audio_seconds",
            "A reply's first chunk handed to TTS to its audio ready.",
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.tools = Histogram(
            "voice_tool_seconds", "Tool call started to its result.", ["failed"], buckets=LATENCY_BUCKETS,
            registry=registry,
        )  # fmt: skip
        self.clients = Gauge("voice_clients_connected", "Websocket clients connected.", registry=registry)
        self.clients_closed = Counter(
            "voice_clients_closed", "Websocket connections ended, by close code.", ["code"], registry=registry
        )
        self.rate_limited = Counter(
            "voice_commands_rate_limited", "Client commands dropped for their rate.", registry=registry
        )
        self.bad_frames = Counter(
            "voice_bad_frames", "Client frames refused as malformed.", registry=registry
        )
        self._state = "listening"
        self._onset_s: float | None = None  # the user's speech onset while the reply was audible
        self._llm_turn: int | None = None  # the last turn whose first token was timed (the LLM worker's)
        self._tts_turn: int | None = None  # the last turn whose first audio was timed (the TTS worker's)

    # -- the event stream and the session log (the engine's thread) --------------------------------

    def see(self, event: StreamEvent) -> None:
        match event:
            case StateChanged(state=state):
                if state == "speaking" and self._state == "paused":
                    self._onset_s = None  # the pause was a cough or echo: the reply went on
                self._state = state
            case SpeechStarted(t=t):
                if self._state == "speaking":
                    self._onset_s = t
            case ResponseDone(metrics=measured):
                self.turns.labels("completed", "").inc()
                if "voice_to_voice_ms" in measured:
                    self.voice_to_voice.observe(measured["voice_to_voice_ms"] / 1000)
                self._onset_s = None
            case ResponseInterrupted(heard=heard, unheard=unheard, audio_end_ms=audio_end_ms):
                self.turns.labels("interrupted", "").inc()
                heard_words, unheard_words = len(heard.split()), len(unheard.split())
                if heard_words + unheard_words:
                    self.heard_share.observe(heard_words / (heard_words + unheard_words))
                onset = self._onset_s
                if audio_end_ms is not None and onset is not None and audio_end_ms / 1000 >= onset:
                    self.reaction.observe(audio_end_ms / 1000 - onset)
                self._onset_s = None
            case Failure(code=code):
                self.errors.labels(code).inc()
            case _ if event.type == BACKCHANNEL:
                self.turns.labels("backchannel", "").inc()

    def note(self, record: LogRecord) -> None:
        match record:
            case TurnFailed(reason=reason):
                self.turns.labels("failed", reason).inc()
            case InputWithdrawn():  # the turn just ended was sent at a pause the user went on from
                self.turns.labels("discarded", "").inc()

    # -- finished work (the workers' threads) -------------------------------------------------------

    def produced(self, kind: str, event: EngineInput, seconds: float) -> None:
        match event:
            case TranscriptReady():
                self.asr.observe(seconds)
            case LlmText(turn=turn) | LlmToolCall(turn=turn) if turn != self._llm_turn:
                self._llm_turn = turn
                self.llm_first_token.observe(seconds)
            case LlmDone():
                self.llm_reply.observe(seconds)
            case SynthesisReady(turn=turn) if turn != self._tts_turn:
                self._tts_turn = turn
                self.tts_first_audio.observe(seconds)
            case ToolDone(result=result):
                self.tools.labels(str(result.failed).lower()).observe(seconds)

    # -- the kiosk's clients (its loop) --------------------------------------------------------------

    def client_connected(self) -> None:
        self.clients.inc()

    def client_closed(self, code: int | None) -> None:
        self.clients.dec()
        self.clients_closed.labels(str(code) if code is not None else "none").inc()

    def command_refused(self) -> None:
        self.rate_limited.inc()

    def frame_refused(self) -> None:
        self.bad_frames.inc()

    # -- the driver's counters, read at each scrape ---------------------------------------------------

    def watch_devices(self, counters: Callable[[], dict[str, int]]) -> None:
        self.registry.register(_DeviceCollector(counters))

    def exposition(self) -> bytes:
        """The text format a Prometheus scrape gets."""
        return generate_latest(self.registry)


class _DeviceCollector(Collector):
    """The driver's glitch counters as Prometheus counters (the driver counts them on its loop)."""

    def __init__(self, counters: Callable[[], dict[str, int]]) -> None:
        self._counters = counters

    def collect(self) -> Iterator[Metric]:
        counted = self._counters()
        for key, (name, help_text) in DEVICE_COUNTERS.items():
            family = CounterMetricFamily(name, help_text)
            family.add_metric([], counted.get(key, 0))
            yield family

    def describe(self) -> Iterator[Metric]:
        return iter(())
