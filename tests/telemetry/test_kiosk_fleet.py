"""A spoken conversation with an interruption through a real kiosk, seen the way an operator sees it.

One `voice kiosk --audio websocket` (real whisper and piper) talks with a page that asks about the
weather and cuts the answer off ("Sorry, I meant on Sunday."), while a real Prometheus scrapes its
/metrics every second and its traces go over OTLP/HTTP to a receiver on loopback. Then: the scraped
counters and histogram counts against the session log, PromQL through Prometheus's HTTP API, and the
spans of the interrupted turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from websockets.asyncio.client import connect

from tests.support.kiosk import running_kiosk
from tests.support.otlp_receiver import OtlpReceiver, ReceivedSpan
from tests.support.prometheus_server import Prometheus
from tests.support.scripted_llm import scripted_llm
from tests.support.talking_page import RATE, TalkingPage, recording
from voice.conversation.log_records import InputWithdrawn, TurnEnded, TurnFailed, TurnStarted
from voice.conversation.session_log import load_session
from voice.telemetry.metrics import LATENCY_BUCKETS

pytestmark = [pytest.mark.slow, pytest.mark.models]

FIRST_REPLY = (
    "Tomorrow starts dry and bright, with a light breeze from the south. Around midday the clouds build, "
    "and rain moves in from the west by late afternoon."
)
SUNDAY_REPLY = "On Sunday it stays dry all day."
CUT_IN_AFTER_S = 1.5  # of the first reply's audio: inside its first sentence
MEDIAN = "histogram_quantile(0.5, sum by (le) (increase({}_bucket[10m])))"  # as docs/kiosk.md's first query


def reply_to(question: str) -> str:
    return SUNDAY_REPLY if "sunday" in question.lower() else FIRST_REPLY


@dataclass(frozen=True)
class Run:
    events: list[dict[str, Any]]
    scraped: str
    records: list[Any]
    spans: list[ReceivedSpan]
    median_v2v: float | None  # from Prometheus
    interrupted_in_prometheus: float | None


async def converse(url: str) -> list[dict[str, Any]]:
    async with connect(url, max_size=None) as ws:
        await ws.recv()  # the snapshot
        async with TalkingPage(ws) as page:
            await page.say(recording("what-weather.wav"))
            first = await page.wait_for(lambda e: e["type"] == "output_audio.started")
            await page.wait_for_audio(round(CUT_IN_AFTER_S * RATE))
            await page.say(recording("sorry-sunday.wav"))
            await page.wait_for(lambda e: e["type"] == "response.interrupted" and e["turn"] == first["turn"])
            await page.wait_for(lambda e: e["type"] == "response.done")
            return page.events


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    folder = tmp_path_factory.mktemp("fleet")
    with OtlpReceiver() as receiver, scripted_llm(reply_to) as llm:
        args = ["--audio", "websocket", "--no-echo-cancel", "--llm-url", llm.url, "--llm-model", "scripted"]
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint}
        with running_kiosk(folder, *args, env=env) as kiosk:
            events, scraped, figures = talk_while_scraped(kiosk.port, folder / "prometheus")
        # the kiosk has stopped: its last spans were exported on the way out
        [log] = kiosk.sessions.glob("kiosk-*.jsonl")
        records = [logged.event for logged in load_session(log).events]
        yield Run(events, scraped, records, list(receiver.spans), *figures)


def talk_while_scraped(
    port: int, folder: Path
) -> tuple[list[dict[str, Any]], str, tuple[float | None, float | None]]:
    """The conversation under a Prometheus scraping every second; the events, a scrape of our own, and
    Prometheus's voice-to-voice median and interrupted turns."""
    with Prometheus(folder, f"127.0.0.1:{port}") as prometheus:
        prometheus.wait_for('up{job="voice"}', 1)  # a scrape before anyone talks: counters at 0
        events = asyncio.run(converse(f"ws://127.0.0.1:{port}/ws"))
        scraped = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
        interrupted = prometheus.wait_for('sum(voice_turns_total{outcome="interrupted"})', 1)
        prometheus.wait_for("sum(voice_voice_to_voice_seconds_count)", 1)
        median = prometheus.value(MEDIAN.format("voice_voice_to_voice_seconds"))
    return events, scraped, (median, interrupted)


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a scrape, by name and labels (parsed as Prometheus parses it)."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def cut_over_audio(events: list[dict[str, Any]]) -> list[float]:
    """The reactions a client can tell from the stream: a cut whose speech began while the reply was audible
    (under load a reply can fall silent between chunks, and speech begun then has no reaction to time)."""
    state, onset, reactions = "listening", None, []
    for event in events:
        if event["type"] == "state":
            onset = None if state == "paused" and event["state"] == "speaking" else onset
            state = event["state"]
        elif event["type"] == "input.speech_started" and state == "speaking":
            onset = event["t"]
        elif event["type"] == "response.interrupted" and onset is not None and event["audio_end_ms"]:
            reactions.append(event["audio_end_ms"] / 1000 - onset)
            onset = None
    return reactions


def test_the_scraped_counters_and_histogram_counts_match_the_session_log(run: Run) -> None:
    scraped = samples(run.scraped)
    ended = [record for record in run.records if isinstance(record, TurnEnded)]
    withdrawn = sum(isinstance(record, InputWithdrawn) for record in run.records)
    completed = sum(not end.cancelled for end in ended)
    interrupted = sum(end.cancelled for end in ended) - withdrawn
    assert (completed, interrupted) == (1, 1)  # the conversation the page had
    turns = {labels: value for (name, labels), value in scraped.items() if name == "voice_turns_total"}
    assert turns == {
        (("code", ""), ("outcome", "completed")): completed,
        (("code", ""), ("outcome", "interrupted")): interrupted,
        (("code", ""), ("outcome", "discarded")): withdrawn,
        (("code", ""), ("outcome", "backchannel")): 0,
    }
    assert not any(isinstance(record, TurnFailed) for record in run.records)
    done = [event for event in run.events if event["type"] == "response.done"]
    assert scraped["voice_voice_to_voice_seconds_count", ()] == completed
    assert scraped["voice_voice_to_voice_seconds_sum", ()] == pytest.approx(
        sum(event["metrics"]["voice_to_voice_ms"] for event in done) / 1000
    )
    reactions = cut_over_audio(run.events)
    assert scraped["voice_barge_in_reaction_seconds_count", ()] == len(reactions)
    assert scraped["voice_barge_in_reaction_seconds_sum", ()] == pytest.approx(sum(reactions))
    assert scraped["voice_interrupted_heard_ratio_count", ()] == interrupted
    requests = sum(isinstance(record, TurnStarted) for record in run.records)
    assert scraped["voice_llm_reply_seconds_count", ()] == requests
    assert scraped["voice_asr_seconds_count", ()] >= completed + interrupted  # early transcripts count too
    assert scraped["voice_clients_connected", ()] == 0  # the page has gone, closing normally
    assert scraped["voice_clients_closed_total", (("code", "1000"),)] == 1
    assert scraped["process_resident_memory_bytes", ()] > 50e6


def test_prometheus_answers_the_voice_to_voice_median_and_the_interrupted_turns(run: Run) -> None:
    assert run.interrupted_in_prometheus == 1
    [done] = [event for event in run.events if event["type"] == "response.done"]
    measured = done["metrics"]["voice_to_voice_ms"] / 1000
    assert run.median_v2v is not None
    bounds = [0.0, *LATENCY_BUCKETS]
    bucket = next(i for i, upper in enumerate(bounds) if measured <= upper)
    assert bounds[bucket - 1] <= run.median_v2v <= bounds[bucket]  # interpolated inside its bucket


def test_the_interrupted_turn_is_one_trace_with_its_parts_as_children(run: Run) -> None:
    turns = {span.attributes["voice.turn"]: span for span in run.spans if span.name == "turn"}
    cut = next(event for event in run.events if event["type"] == "response.interrupted")
    root = turns[cut["turn"]]
    assert root.parent_span_id == ""
    assert root.service == "voice"
    assert root.attributes["voice.outcome"] == "interrupted"
    assert root.attributes["voice.interrupted"] is True
    assert root.attributes["voice.heard_words"] == len(cut["heard"].split())
    assert root.attributes["voice.eagerness"] == "auto"
    assert root.attributes["voice.input"] == "spoken"
    children = [span for span in run.spans if span.parent_span_id == root.span_id]
    names = {span.name for span in children}
    assert {"endpointing", "asr", "llm", "tts", "playback"} <= names
    assert all(span.trace_id == root.trace_id for span in children)
    assert all(root.start_ns <= span.start_ns <= span.end_ns <= root.end_ns for span in children)
    [llm] = [span for span in children if span.name == "llm"]
    [first_token] = [span for span in run.spans if span.name == "llm.first_token"
                     if span.parent_span_id == llm.span_id]  # fmt: skip
    assert first_token.end_ns <= llm.end_ns
    answer = turns[cut["turn"] + 1]
    assert answer.attributes["voice.outcome"] == "completed"
    [done] = [event for event in run.events if event["type"] == "response.done"]
    assert answer.attributes["voice.voice_to_voice_ms"] == done["metrics"]["voice_to_voice_ms"]
    assert answer.trace_id != root.trace_id


def test_no_user_text_leaves_in_spans_unless_asked(run: Run) -> None:
    said = [event["text"] for event in run.events if event["type"] == "input.transcript"]
    heard = [event["heard"] for event in run.events if event["type"] == "response.interrupted"]
    words = {word.strip(".,?!").lower() for text in said + heard for word in text.split()} - {""}
    for span in run.spans:
        for value in span.attributes.values():
            if isinstance(value, str):
                assert not words & {word.strip(".,?!").lower() for word in value.split()}, (span.name, value)
