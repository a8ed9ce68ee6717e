"""What the metrics count, fed as the stream, the log and the workers feed them; read back as scraped."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pytest
from prometheus_client.parser import text_string_to_metric_families

from voice.client_events import (
    Failure,
    ResponseDone,
    ResponseInterrupted,
    ResponseResumed,
    SpeechStarted,
    StateChanged,
)
from voice.conversation.items import ToolResult
from voice.conversation.log_records import InputWithdrawn, TurnEnded, TurnFailed
from voice.engine.inputs import LlmDone, LlmText, SynthesisReady, ToolDone, TranscriptReady
from voice.telemetry.machine import parse_cpuinfo
from voice.telemetry.metrics import VoiceMetrics
from voice.tts.port import Synthesis


@dataclass(frozen=True)
class Backchannel:
    """The event another branch adds (issue 36): counted by its type alone."""

    type: ClassVar[str] = "input.backchannel"
    text: str
    t: float


def scraped(metrics: VoiceMetrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = metrics.exposition().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def feed(metrics: VoiceMetrics, *events: object) -> None:
    for event in events:
        metrics.see(event)  # type: ignore[arg-type]


def turns(metrics: VoiceMetrics, outcome: str, code: str = "") -> float:
    return scraped(metrics)["voice_turns_total", (("code", code), ("outcome", outcome))]


def test_a_cut_in_counts_an_interrupted_turn_its_reaction_and_the_share_heard() -> None:
    metrics = VoiceMetrics()
    feed(
        metrics,
        StateChanged("speaking", 2.0),
        SpeechStarted(3.30),  # the user's onset while the reply plays
        StateChanged("paused", 3.41),
        ResponseInterrupted(1, "Tomorrow starts dry,", "then rain moves in.", 3410.0, 4.2),
    )
    values = scraped(metrics)
    assert turns(metrics, "interrupted") == 1
    assert values["voice_barge_in_reaction_seconds_count", ()] == 1
    assert values["voice_barge_in_reaction_seconds_sum", ()] == pytest.approx(0.11)
    assert values["voice_interrupted_heard_ratio_sum", ()] == pytest.approx(3 / 7)


def test_speech_that_only_paused_the_reply_is_no_reaction_for_a_later_stop_button() -> None:
    metrics = VoiceMetrics()
    feed(
        metrics,
        StateChanged("speaking", 2.0),
        SpeechStarted(2.5),
        StateChanged("paused", 2.6),
        ResponseResumed(1, 3.0),
        StateChanged("speaking", 3.0),  # a cough: the reply went on
        ResponseInterrupted(1, "a b", "c", 4000.0, 4.0),  # then the stop button
    )
    assert scraped(metrics)["voice_barge_in_reaction_seconds_count", ()] == 0
    assert turns(metrics, "interrupted") == 1


def test_completed_failed_discarded_and_backchannel_turns_and_errors_by_code() -> None:
    metrics = VoiceMetrics()
    feed(metrics, ResponseDone(1, "Hi.", {"voice_to_voice_ms": 640.0}, 3.0), Backchannel("yeah", 4.0))
    feed(metrics, Failure("unavailable", "the server is down", "not-sent", True, 5.0), Failure("asr", "x"))
    for record in (
        TurnFailed(2, "unavailable"),
        TurnFailed(3, "synthesis"),
        TurnEnded(4, True),
        InputWithdrawn(None),
    ):
        metrics.note(record)
    values = scraped(metrics)
    assert turns(metrics, "completed") == 1
    assert turns(metrics, "backchannel") == 1
    assert turns(metrics, "failed", "unavailable") == turns(metrics, "failed", "synthesis") == 1
    assert turns(metrics, "discarded") == 1
    assert values["voice_voice_to_voice_seconds_sum", ()] == pytest.approx(0.64)
    assert values["voice_errors_total", (("code", "unavailable"),)] == 1
    assert values["voice_errors_total", (("code", "asr"),)] == 1


def test_work_times_first_token_and_first_audio_once_per_turn() -> None:
    metrics = VoiceMetrics()
    synthesis = Synthesis.__new__(Synthesis)
    for event, seconds in (
        (TranscriptReady(1, "hello"), 0.4),
        (LlmText(1, "Hi"), 0.3),
        (LlmText(1, " there"), 0.5),
        (LlmDone(1), 0.9),
        (SynthesisReady(1, 0, synthesis), 0.2),
        (SynthesisReady(1, 1, synthesis), 0.25),
        (LlmText(2, "Next"), 0.35),
        (ToolDone(2, ToolResult("c1", "Dry.")), 1.5),
    ):
        metrics.produced("work", event, seconds)
    values = scraped(metrics)
    assert values["voice_asr_seconds_sum", ()] == pytest.approx(0.4)
    assert values["voice_llm_first_token_seconds_count", ()] == 2
    assert values["voice_llm_first_token_seconds_sum", ()] == pytest.approx(0.65)
    assert values["voice_llm_reply_seconds_sum", ()] == pytest.approx(0.9)
    assert values["voice_tts_first_audio_seconds_count", ()] == 1
    assert values["voice_tool_seconds_count", (("failed", "false"),)] == 1


def test_clients_and_the_drivers_counters_as_scraped() -> None:
    metrics = VoiceMetrics()
    counters = {"reopened": 0, "loop_stalls": 2, "dropped_blocks": 0, "overflows": 1, "underflows": 0}
    metrics.watch_devices(lambda: counters)
    for _ in range(3):
        metrics.client_connected()
    metrics.client_closed(1013)
    metrics.client_closed(1000)
    metrics.command_refused()
    counters["reopened"] = 1  # read at the scrape, not at registration
    values = scraped(metrics)
    assert values["voice_clients_connected", ()] == 1
    assert values["voice_clients_closed_total", (("code", "1013"),)] == 1
    assert values["voice_commands_rate_limited_total", ()] == 1
    assert values["voice_device_reopens_total", ()] == 1
    assert values["voice_loop_stalls_total", ()] == 2


def test_every_name_follows_the_conventions() -> None:
    families = list(text_string_to_metric_families(VoiceMetrics().exposition().decode()))
    ours = [family for family in families if not family.name.startswith("process_")]
    assert ours
    assert all(family.name.startswith("voice_") for family in ours)
    for family in ours:
        if family.type == "counter":
            assert all(sample.name.endswith(("_total", "_created")) for sample in family.samples)
        if family.type == "histogram":
            assert family.name.endswith(("_seconds", "_ratio")), family.name


def test_the_cpu_is_one_info_series_so_a_dashboard_tells_the_machines_apart() -> None:
    epyc = parse_cpuinfo("processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fma avx2 f16c\n", "x86_64")
    labels = (("arch", "x86_64"), ("cores", "1"), ("model", "AMD EPYC 7B13"), ("sets", "avx2 fma f16c"))
    assert scraped(VoiceMetrics(epyc))["voice_cpu_info", labels] == 1.0
    assert not any(name == "voice_cpu_info" for name, _ in scraped(VoiceMetrics()))
