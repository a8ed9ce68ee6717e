"""A turn's trace from what the stream, the log and the workers say: its spans, parents and attributes."""

from __future__ import annotations

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from voice.client_events import (
    InputTranscript,
    OutputAudioStarted,
    OutputAudioStopped,
    ResponseCreated,
    ResponseInterrupted,
    SpeechStarted,
    SpeechStopped,
    StateChanged,
)
from voice.conversation.log_records import TurnEnded
from voice.engine.inputs import LlmDone, LlmText, SynthesisReady, TranscriptReady
from voice.telemetry.traces import TurnTracer
from voice.tts.port import Synthesis

HEARD = "Tomorrow starts dry,"


class Wall:
    """Wall time in ns as the test sets it: each event is seen when its sample-clock time comes."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def __call__(self) -> int:
        return round((1_800_000_000 + self.seconds) * 1e9)


def interrupted_turn(include_text: bool) -> list[ReadableSpan]:
    exporter = InMemorySpanExporter()
    wall = Wall()
    tracer = TurnTracer(exporter, "auto", include_text, export_delay_ms=50, wall_ns=wall)
    synthesis = Synthesis.__new__(Synthesis)
    for at, source, thing in (
        (0.0, "event", StateChanged("listening", 0.0)),
        (0.6, "event", SpeechStarted(0.5)),  # the VAD tells of the onset a little after it
        (2.2, "event", SpeechStopped(2.1)),
        (2.4, "asr", TranscriptReady(1, "What about tomorrow?")),
        (2.4, "event", InputTranscript("speech-1", "What about tomorrow?", None, 2.4)),
        (2.4, "event", ResponseCreated(1, 2.4)),
        (2.6, "llm", LlmText(1, "Tomorrow")),
        (2.7, "tts", SynthesisReady(1, 0, synthesis)),
        (2.8, "event", StateChanged("speaking", 2.8)),
        (2.8, "event", OutputAudioStarted(1, 2.8)),
        (3.0, "llm", LlmDone(1)),
        (3.4, "event", SpeechStarted(3.3)),
        (3.41, "event", StateChanged("paused", 3.41)),
        (4.0, "record", TurnEnded(1, True, "Tomorrow starts dry, then rain.", HEARD, 3.41)),
        (4.0, "event", ResponseInterrupted(1, HEARD, "then rain.", 3410.0, 4.0)),
        (4.0, "event", OutputAudioStopped(1, 3.41)),
    ):
        wall.seconds = at
        if source == "event":
            tracer.see(thing)  # type: ignore[arg-type]
        elif source == "record":
            tracer.note(thing)  # type: ignore[arg-type]
        else:  # work asked for 0.2 s before it came
            tracer.produced(source, thing, 0.2)  # type: ignore[arg-type]
    tracer.close()
    return list(exporter.get_finished_spans())


def test_an_interrupted_turn_is_a_root_span_with_its_parts_as_children() -> None:
    spans = interrupted_turn(include_text=False)
    [root] = [span for span in spans if span.name == "turn"]
    assert root.parent is None
    attributes = dict(root.attributes or {})
    assert attributes["voice.outcome"] == "interrupted"
    assert attributes["voice.interrupted"] is True
    assert attributes["voice.heard_words"] == 3
    assert attributes["voice.eagerness"] == "auto"
    assert attributes["voice.barge_in_reaction_ms"] == 110.0
    assert "voice.user_text" not in attributes
    by_name = {span.name: span for span in spans}
    assert {"endpointing", "asr", "llm", "llm.first_token", "tts", "playback"} <= set(by_name)
    for name in ("endpointing", "asr", "llm", "tts", "playback"):
        assert by_name[name].parent is not None
        assert by_name[name].parent.span_id == root.context.span_id
    first_token = by_name["llm.first_token"]
    assert first_token.parent is not None
    assert first_token.parent.span_id == by_name["llm"].context.span_id
    assert root.start_time is not None
    assert root.end_time is not None
    playback = by_name["playback"]
    assert playback.end_time is not None
    assert playback.start_time is not None
    assert round((playback.end_time - playback.start_time) / 1e6) == 610  # 2.8 s to 3.41 s
    assert root.start_time <= playback.start_time <= playback.end_time <= root.end_time


def test_text_goes_into_spans_only_when_asked() -> None:
    [root] = [span for span in interrupted_turn(include_text=True) if span.name == "turn"]
    attributes = dict(root.attributes or {})
    assert attributes["voice.user_text"] == "What about tomorrow?"
    assert attributes["voice.heard_text"] == HEARD
