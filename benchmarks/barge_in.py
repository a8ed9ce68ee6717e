"""Whole-pipeline barge-in figures from the scenarios in audio/scenarios, as JSON (docs/architecture.md §5).

- ``barge_in_reaction``: for every interrupted turn of every scenario (virtual time, deterministic), the
  time from the TRUE onset of the interrupting user speech (its cue's placed time plus the WAV's measured
  ``start_s`` from audio/manifest.json) to the end of playback (the turn's ``audio_end_s``); n, p50, p95
  (numpy linear interpolation), max in ms, for scenarios without echo and with echo (``room.echo_gain_db``).
- ``echo_robustness``: room-echo-noise and plain-turn again with echo at -6, -10, -14, -20 dB over -30 dB
  pink noise: self-interruptions (a turn cut with no user speech onset inside its audio), false barge-ins
  (pauses that resumed) and the reaction of the real interruptions.
- ``spoken_prefix``: whisper (its full 30 s window) transcribes speaker.wav over each played turn afresh; a
  turn passes when its word count is within one word of the report's ``spoken``.
- ``voice_to_voice``: real-time runs of plain-turn, pause-mid-sentence and interrupt-mid: end of the user's
  speech (cue time plus the WAV's ``end_s``) to the first reply audio, raw and minus the VAD's endpointing
  silence; each turn also says how much of it remains in virtual time (endpointing, the scripted LLM's
  first-delta delay and the wait for the first clause) and how much is compute (ASR, TTS, threads).
- ``voice_to_voice_local_models``: the same figure all models real and local, as docs/architecture.md §5 means
  it: the ``voice demo`` conversation paced in real time, three times, with the embedded llama.cpp
  server (SmolLM2-135M) started once for all runs. Per turn that answers the user: the median over the
  runs, and where the time went (endpointing, ASR running past it, the LLM until the first clause,
  synthesis of the first chunk); ``llm_alone`` sends the same requests again with nothing else running.
- ``voice_to_voice_parts``: the end of the user's speech to the first reply audio, median over real-time
  runs, split into its steps from the event stream and timed calls (benchmarks/voice_parts.py says how):
  ``scripted_at_once`` (plain-turn, pause-mid-sentence and pause-mid-question, each twice, with the
  scripted LLM's whole reply there at once) and ``embedded`` (the demo conversation, three runs, SmolLM2).
  ``--voice-to-voice`` runs only this; ``--against TREE`` runs it on that tree first, side by side.
- ``memory``: peak RSS (getrusage) of a fresh process that loads tiny.en, joe-medium and the echo
  canceller and runs room-echo-noise once.

Usage: python benchmarks/barge_in.py [--keep DIR] [--voice-to-voice [--against TREE]]   (about 4 minutes on
2 cores; --voice-to-voice about 2, twice that with --against)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import voice_parts
from against import run_against, without_against

from voice.asr.port import Transcriber
from voice.asr.whisper import WhisperSettings, WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.echo import WebRtcEchoCanceller
from voice.audio.vad import DEFAULT_QUIET
from voice.audio.wav import read_wav
from voice.cancel import CancelToken
from voice.components import SpeechModels, load_speech_models, make_engine
from voice.conversation.items import item_from_json
from voice.llm.config import LlmConfig, resolve_llm_config
from voice.llm.embedded import EmbeddedServer, open_chat_model
from voice.llm.port import ChatRequest, ChatSettings, TextDelta
from voice.sim.demo_scenario import demo_scenario
from voice.sim.driver import BLOCK, Pipeline, RoomSimulation
from voice.sim.run import run_scenario
from voice.sim.scenario import RealLlm, load_scenario
from voice.tts.chunker import SpeechChunker
from voice.tts.port import Synthesis, Synthesizer

AUDIO = Path(__file__).resolve().parents[1] / "audio"
SCENARIOS = AUDIO / "scenarios"
ECHO_LEVELS_DB = (-6.0, -10.0, -14.0, -20.0)
ECHO_NOISE_DB = -30.0
ECHO_BASES = ("room-echo-noise", "plain-turn")
REALTIME_SCENARIOS = ("plain-turn", "pause-mid-sentence", "interrupt-mid")
MEMORY_SCENARIO = "room-echo-noise"
LOCAL_RUNS = 3
AT_ONCE_SCENARIOS = ("plain-turn", "pause-mid-sentence", "pause-mid-question")
AT_ONCE_RUNS = 2
LOCAL_MAX_TOKENS = 60  # as `voice demo` asks
# An onset may sit up to one VAD frame after the last played sample and still be the cause of the stop.
ONSET_SLACK_S = 0.05
ENDPOINTING_MS = float(DEFAULT_QUIET.end_silence_ms)  # the VAD's end silence, in every voice-to-voice figure

BARS = {
    "reaction_p95_ms_without_echo": 300.0,
    "reaction_p95_ms_with_echo_minus_10_db": 350.0,
    "spoken_prefix_fraction": 0.95,
    "voice_to_voice_minus_endpointing_ms": 300.0,
    "voice_to_voice_local_models_minus_endpointing_ms": 300.0,
    "peak_rss_mb": 600.0,
}


@dataclass(frozen=True)
class Run:
    """One scenario run: its name, the report, where its outputs are, and whether the room had echo."""

    name: str
    report: dict[str, Any]
    out: Path
    echo_db: float | None


def progress(message: str, started: float) -> None:
    print(f"[{time.monotonic() - started:6.1f} s] {message}", file=sys.stderr, flush=True)


def load_manifest() -> dict[str, dict[str, Any]]:
    data = json.loads((AUDIO / "manifest.json").read_text(encoding="utf-8"))
    return {fixture["file"]: fixture for fixture in data["fixtures"]}


def speech_cues(report: dict[str, Any], manifest: dict[str, dict[str, Any]]) -> list[tuple[float, float]]:
    """(true onset, true end) in seconds of every user speech cue that was placed on the mic."""
    return [
        (cue["at_s"] + manifest[cue["wav"]]["start_s"], cue["at_s"] + manifest[cue["wav"]]["end_s"])
        for cue in report["user_audio"]
        if cue["at_s"] is not None and manifest[cue["wav"]]["kind"] == "speech"
    ]


def interrupting_onset(turn: dict[str, Any], cues: list[tuple[float, float]]) -> float | None:
    """The earliest speech onset inside the turn's audio span, or None if no user spoke while it played."""
    onsets = [
        onset for onset, _end in cues if turn["audio_start_s"] <= onset <= turn["audio_end_s"] + ONSET_SLACK_S
    ]
    return min(onsets, default=None)


def ms(seconds: float) -> float:
    return round(seconds * 1000.0, 1)


def summary(values_ms: list[float]) -> dict[str, Any]:
    if not values_ms:
        return {"n": 0, "p50_ms": None, "p95_ms": None, "max_ms": None}
    values = np.asarray(values_ms)
    return {
        "n": len(values_ms),
        "p50_ms": round(float(np.percentile(values, 50)), 1),
        "p95_ms": round(float(np.percentile(values, 95)), 1),
        "max_ms": round(float(values.max()), 1),
    }


def simulate(path: Path, out: Path, models: SpeechModels, *, realtime: bool = False) -> Run:
    scenario = load_scenario(path)
    out.mkdir(parents=True)
    report = run_scenario(scenario, out, realtime=realtime, models=models)
    return Run(path.stem, report, out, scenario.room.echo_gain_db)


def echo_variant(base: str, echo_db: float, folder: Path) -> Path:
    """A copy of scenario ``base`` with absolute wav paths, echo at ``echo_db`` and pink noise under it."""
    data = json.loads((SCENARIOS / f"{base}.json").read_text(encoding="utf-8"))
    for cue in data["user"]:
        cue["wav"] = str((SCENARIOS / cue["wav"]).resolve())
    room = data.get("room", {})
    room["echo_gain_db"] = echo_db
    room["noise"] = {"wav": str((AUDIO / "pink-noise.wav").resolve()), "gain_db": ECHO_NOISE_DB}
    data["room"] = room
    path = folder / f"{base}-echo{int(echo_db)}.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def turn_outcomes(run: Run, manifest: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per run: reactions of real interruptions, self-interruptions, false barge-ins, unfinished replies."""
    cues = speech_cues(run.report, manifest)
    reactions: list[dict[str, Any]] = []
    self_interruptions: list[dict[str, Any]] = []
    unfinished = 0
    for index, turn in enumerate(run.report["turns"], start=1):
        if not turn["interrupted"]:
            unfinished += turn["audio_start_s"] is not None and turn["spoken"] != turn["reply"]
            continue
        if turn["audio_start_s"] is None:
            continue  # cancelled while thinking: nothing was playing, so there is nothing to stop
        onset = interrupting_onset(turn, cues)
        if onset is None:
            self_interruptions.append(
                {
                    "turn": index,
                    "audio_start_s": turn["audio_start_s"],
                    "audio_end_s": turn["audio_end_s"],
                    "barge_in_s": turn["barge_in_s"],
                }
            )
            continue
        reactions.append(
            {
                "turn": index,
                "onset_s": round(onset, 3),
                "barge_in_s": turn["barge_in_s"],
                "audio_end_s": turn["audio_end_s"],
                "reaction_ms": ms(turn["audio_end_s"] - onset),
            }
        )
    return {
        "turns": len(run.report["turns"]),
        "interrupted": sum(turn["interrupted"] for turn in run.report["turns"]),
        "reactions": reactions,
        "self_interruptions": self_interruptions,
        "false_barge_ins": sum(turn.get("false_barge_ins", 0) for turn in run.report["turns"]),
        "unfinished_replies": unfinished,
    }


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def spoken_prefix(runs: list[Run], judge: Transcriber) -> dict[str, Any]:
    """How often the report's heard text has the word count of what speaker.wav really played (±1).

    ``judge`` decodes whisper's full window: on the cut one (no timestamps) whisper often stops early on a
    reply broken off mid-sentence, and would report fewer words than played.
    """
    checked: list[tuple[bool, bool]] = []  # (interrupted, within one word)
    misses: list[dict[str, Any]] = []
    for run in runs:
        speaker = read_wav(run.out / "speaker.wav").samples
        for index, turn in enumerate(run.report["turns"], start=1):
            if turn["audio_start_s"] is None:
                continue
            start, end = (round(turn[key] * ENGINE_RATE) for key in ("audio_start_s", "audio_end_s"))
            played = judge.transcribe(AudioBlock(speaker[start:end], ENGINE_RATE))
            difference = len(words(played.text)) - len(words(turn["spoken"]))
            checked.append((turn["interrupted"], abs(difference) <= 1))
            if abs(difference) > 1:
                misses.append(
                    {
                        "run": run.name,
                        "turn": index,
                        "interrupted": turn["interrupted"],
                        "spoken": turn["spoken"],
                        "whisper_heard": played.text,
                        "word_difference": difference,
                    }
                )
    cut = [ok for interrupted, ok in checked if interrupted]
    return {
        "turns": len(checked),
        "within_one_word": sum(ok for _, ok in checked),
        "fraction": round(sum(ok for _, ok in checked) / len(checked), 3) if checked else None,
        "interrupted_turns": len(cut),
        "interrupted_fraction": round(sum(cut) / len(cut), 3) if cut else None,
        "misses": misses,
    }


def reply_delays(run: Run, manifest: dict[str, dict[str, Any]]) -> dict[int, tuple[float, float]]:
    """Turn number → (end of the user's speech it answers, first reply audio), for turns answering a user."""
    ends = [end for _onset, end in speech_cues(run.report, manifest)]
    delays = {}
    for index, turn in enumerate(run.report["turns"], start=1):
        if turn["audio_start_s"] is None or turn["request"][-1]["role"] != "user":
            continue  # nothing played, or a follow-up that answers a tool result
        before = [end for end in ends if end <= turn["audio_start_s"]]
        if before:
            delays[index] = (max(before), turn["audio_start_s"])
    return delays


def latency_row(turn: int, user_end: float, audio_start: float) -> dict[str, Any]:
    """One turn's voice-to-voice figure: end of the user's speech to the first reply audio."""
    latency = ms(audio_start - user_end)
    return {
        "turn": turn,
        "user_end_s": round(user_end, 3),
        "audio_start_s": audio_start,
        "ms": latency,
        "minus_endpointing_ms": round(latency - ENDPOINTING_MS, 1),
    }


def median_latency(latencies_ms: list[float]) -> dict[str, float | None]:
    median = round(statistics.median(latencies_ms), 1) if latencies_ms else None
    return {
        "median_ms": median,
        "median_minus_endpointing_ms": None if median is None else round(median - ENDPOINTING_MS, 1),
    }


def voice_to_voice(
    realtime: list[Run], virtual: dict[str, Run], manifest: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """End of the user's speech to the first reply audio, paced in real time.

    The same turn in the virtual-time run (ASR, TTS and the machine's speed take no time there) splits
    the figure into what the design waits for (endpointing, the scripted LLM, the first clause) and
    what computing costs (``compute_ms``).
    """
    rows: list[dict[str, Any]] = []
    for run in realtime:
        ideal = reply_delays(virtual[run.name], manifest)
        for index, (user_end, audio_start) in reply_delays(run, manifest).items():
            row = {"scenario": run.name, **latency_row(index, user_end, audio_start)}
            if index in ideal:
                row["virtual_time_ms"] = ms(ideal[index][1] - ideal[index][0])
                row["compute_ms"] = round(row["ms"] - row["virtual_time_ms"], 1)
            rows.append(row)
    return {
        "turns": rows,
        "endpointing_ms": ENDPOINTING_MS,
        **median_latency([row["ms"] for row in rows]),
    }


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
            for index, (user_end, audio_start) in reply_delays(timed.run, manifest).items():
                rows.append(
                    {
                        "run": number,
                        **latency_row(index, user_end, audio_start),
                        "parts_ms": reply_parts(timed, index, user_end, audio_start, run_started),
                    }
                )
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
        "endpointing_ms": ENDPOINTING_MS,
        **median_latency([row["ms"] for row in rows]),
        "per_turn": per_turn,
        "llm_alone": alone,
        "turns": rows,
    }


def at_once_variant(name: str, folder: Path) -> Path:
    """A copy of scenario ``name`` whose scripted LLM has its whole reply at once (no first-delta delay)."""
    data = json.loads((SCENARIOS / f"{name}.json").read_text(encoding="utf-8"))
    for cue in data["user"]:
        if "wav" in cue:
            cue["wav"] = str((SCENARIOS / cue["wav"]).resolve())
    data["llm"]["first_delta_ms"] = 0
    data["llm"]["delta_ms"] = 0
    path = folder / f"{name}-at-once.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def parts_rows(
    report: dict[str, Any], out: Path, timers: voice_parts.Timers, run_started: float, **label: Any
) -> list[dict[str, Any]]:
    rows = []
    run = Run(out.name, report, out, None)
    for index, (user_end, audio_start) in reply_delays(run, load_manifest()).items():
        rows.append(
            {
                **label,
                **latency_row(index, user_end, audio_start),
                "parts_ms": voice_parts.turn_parts(out, timers, run_started, index, user_end, audio_start),
            }
        )
    return rows


def eagerness_kwargs(eagerness: str | None) -> dict[str, Any]:
    """``run_scenario``'s eagerness, when one is asked for (a tree from before the setting takes none)."""
    if eagerness is None:
        return {}
    from voice.engine.hold import Eagerness

    return {"eagerness": Eagerness(eagerness)}


def voice_to_voice_parts(
    models: SpeechModels, work: Path, started: float, eagerness: str | None = None
) -> dict[str, Any]:
    """Voice-to-voice medians over real-time runs, scripted LLM at once and embedded, split into steps."""
    variants = work / "at-once-scenarios"
    variants.mkdir(parents=True, exist_ok=True)
    scripted: list[dict[str, Any]] = []
    for name in AT_ONCE_SCENARIOS:
        path = at_once_variant(name, variants)
        for number in range(1, AT_ONCE_RUNS + 1):
            progress(f"voice to voice, LLM at once: {name} run {number}/{AT_ONCE_RUNS}", started)
            timers = voice_parts.Timers()
            out = work / "v2v-at-once" / f"{name}-{number}"
            out.mkdir(parents=True)
            with voice_parts.timed_chat_models(timers):
                run_started = time.monotonic()
                report = run_scenario(
                    load_scenario(path),
                    out,
                    realtime=True,
                    models=voice_parts.timed_models(models, timers),
                    **eagerness_kwargs(eagerness),
                )
            scripted += parts_rows(report, out, timers, run_started, scenario=name, run=number)
    embedded_config = resolve_llm_config(None, None, None, {})
    embedded: list[dict[str, Any]] = []
    progress("voice to voice, embedded LLM: starting the llama.cpp server", started)
    with EmbeddedServer(embedded_config.gguf, model=embedded_config.model) as server:
        served = LlmConfig(url=server.url, model=server.model)
        for number in range(1, LOCAL_RUNS + 1):
            progress(f"voice to voice, embedded LLM: demo run {number}/{LOCAL_RUNS}", started)
            timers = voice_parts.Timers()
            out = work / "v2v-embedded" / f"demo-{number}"
            out.mkdir(parents=True)
            scenario = demo_scenario(RealLlm(None, None, max_tokens=LOCAL_MAX_TOKENS))
            with voice_parts.timed_chat_models(timers):
                run_started = time.monotonic()
                report = run_scenario(
                    scenario,
                    out,
                    realtime=True,
                    llm_config=served,
                    models=voice_parts.timed_models(models, timers),
                    **eagerness_kwargs(eagerness),
                )
            embedded += parts_rows(report, out, timers, run_started, run=number)
    return {
        "scripted_at_once": {**voice_parts.medians(scripted), "turns": scripted},
        "embedded": {**voice_parts.medians(embedded), "turns": embedded},
    }


def voice_to_voice_only(work: Path, eagerness: str | None = None) -> dict[str, Any]:
    started = time.monotonic()
    progress("loading the speech models", started)
    result = voice_to_voice_parts(load_speech_models(), work, started, eagerness)
    result["load_1min"] = round(os.getloadavg()[0], 2)
    return result


def side_by_side(before: dict[str, Any], after: dict[str, Any], tree: str) -> dict[str, Any]:
    """The medians of both trees next to each other; every turn's parts follow."""
    summary = {
        kind: {
            "before": {k: v for k, v in before[kind].items() if k != "turns"},
            "after": {k: v for k, v in after[kind].items() if k != "turns"},
        }
        for kind in ("scripted_at_once", "embedded")
    }
    return {
        "before_tree": tree,
        "load_1min": [before["load_1min"], after["load_1min"]],
        **summary,
        "before": before,
        "after": after,
    }


def memory_probe() -> dict[str, Any]:
    """In a fresh process: load the models and the echo canceller once, run one scenario, read peak RSS."""
    models = load_speech_models()
    pipeline = Pipeline(models.transcriber, models.synthesizer, make_engine, WebRtcEchoCanceller())
    RoomSimulation(load_scenario(SCENARIOS / f"{MEMORY_SCENARIO}.json"), pipeline).run()
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {"scenario": MEMORY_SCENARIO, "peak_rss_mb": round(peak_kib / 1024, 1)}


def measure_memory() -> dict[str, Any]:
    probe = subprocess.run(
        [sys.executable, __file__, "--memory-probe"],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(probe.stdout)
    return result


def within(value: float | None, bar: float, *, at_least: bool = False) -> bool | None:
    """Whether a measured value meets its bar; None when nothing was measured."""
    if value is None:
        return None
    return value >= bar if at_least else value <= bar


def bars(result: dict[str, Any]) -> dict[str, bool | None]:
    levels = {level["echo_gain_db"]: level for level in result["echo_robustness"]["levels"]}
    self_interruptions = (
        result["echo_robustness"]["self_interruptions"] + result["barge_in_reaction"]["self_interruptions"]
    )
    return {
        "reaction_p95_without_echo": within(
            result["barge_in_reaction"]["without_echo"]["p95_ms"], BARS["reaction_p95_ms_without_echo"]
        ),
        "reaction_p95_with_minus_10_db_echo": within(
            levels[-10.0]["reaction"]["p95_ms"], BARS["reaction_p95_ms_with_echo_minus_10_db"]
        ),
        "never_stops_itself": self_interruptions == 0,
        "spoken_prefix_of_interruptions": within(
            result["spoken_prefix"]["interrupted_fraction"], BARS["spoken_prefix_fraction"], at_least=True
        ),
        "voice_to_voice": within(
            result["voice_to_voice"]["median_minus_endpointing_ms"],
            BARS["voice_to_voice_minus_endpointing_ms"],
        ),
        "voice_to_voice_local_models": within(
            result["voice_to_voice_local_models"]["median_minus_endpointing_ms"],
            BARS["voice_to_voice_local_models_minus_endpointing_ms"],
        ),
        "memory": result["memory"]["peak_rss_mb"] < BARS["peak_rss_mb"],
    }


def reactions(
    models: SpeechModels, work: Path, manifest: dict[str, Any], started: float
) -> tuple[dict[str, Any], dict[str, Any], list[Run], list[Run]]:
    """Every scenario, and the echo variants at each level, in virtual time: the barge-in reaction and
    the echo robustness figures, and the runs themselves."""
    scenario_runs: list[Run] = []
    for path in sorted(SCENARIOS.glob("*.json")):
        progress(f"scenario {path.stem}", started)
        scenario_runs.append(simulate(path, work / "scenarios" / path.stem, models))
    outcomes = {run.name: turn_outcomes(run, manifest) for run in scenario_runs}
    reaction_groups: dict[str, list[float]] = {"without_echo": [], "with_echo": []}
    for run in scenario_runs:
        group = "without_echo" if run.echo_db is None else "with_echo"
        reaction_groups[group] += [r["reaction_ms"] for r in outcomes[run.name]["reactions"]]

    variants = work / "echo-scenarios"
    variants.mkdir(parents=True)
    echo_runs: list[Run] = []
    levels: list[dict[str, Any]] = []
    for echo_db in ECHO_LEVELS_DB:
        level_runs = []
        for base in ECHO_BASES:
            progress(f"echo {echo_db:+.0f} dB: {base}", started)
            path = echo_variant(base, echo_db, variants)
            level_runs.append(simulate(path, work / "echo" / path.stem, models))
        per_run = {run.name: turn_outcomes(run, manifest) for run in level_runs}
        levels.append(
            {
                "echo_gain_db": echo_db,
                "noise_gain_db": ECHO_NOISE_DB,
                "self_interruptions": sum(len(o["self_interruptions"]) for o in per_run.values()),
                "false_barge_ins": sum(o["false_barge_ins"] for o in per_run.values()),
                "unfinished_replies": sum(o["unfinished_replies"] for o in per_run.values()),
                "reaction": summary([r["reaction_ms"] for o in per_run.values() for r in o["reactions"]]),
                "runs": per_run,
            }
        )
        echo_runs += level_runs

    reaction = {
        "without_echo": summary(reaction_groups["without_echo"]),
        "with_echo": summary(reaction_groups["with_echo"]),
        "self_interruptions": sum(len(o["self_interruptions"]) for o in outcomes.values()),
        "false_barge_ins": sum(o["false_barge_ins"] for o in outcomes.values()),
        "scenarios": outcomes,
    }
    echo = {
        "self_interruptions": sum(level["self_interruptions"] for level in levels),
        "false_barge_ins": sum(level["false_barge_ins"] for level in levels),
        "levels": levels,
    }
    return reaction, echo, scenario_runs, echo_runs


def reaction_only(work: Path) -> dict[str, Any]:
    """The barge-in reaction and echo robustness alone (virtual time, no memory or real-time parts)."""
    started = time.monotonic()
    progress("loading whisper and piper", started)
    reaction, echo, _, _ = reactions(load_speech_models(), work, load_manifest(), started)
    return {
        "barge_in_reaction": reaction,
        "echo_robustness": echo,
        "wall_s": round(time.monotonic() - started, 1),
    }


def benchmark(work: Path) -> dict[str, Any]:
    started = time.monotonic()
    manifest = load_manifest()
    # First, while this process is small: a child's ru_maxrss starts from its parent's RSS at the fork.
    progress("memory: a fresh process with tiny.en, joe-medium and AEC", started)
    memory = measure_memory()
    progress("loading whisper and piper", started)
    models = load_speech_models()

    reaction, echo, scenario_runs, echo_runs = reactions(models, work, manifest, started)
    progress("spoken prefix: transcribing what speaker.wav played", started)
    prefix = spoken_prefix(scenario_runs + echo_runs, WhisperTranscriber(WhisperSettings(short_window=False)))

    realtime_runs = []
    for name in REALTIME_SCENARIOS:
        progress(f"real time: {name}", started)
        realtime_runs.append(
            simulate(SCENARIOS / f"{name}.json", work / "realtime" / name, models, realtime=True)
        )
    v2v = voice_to_voice(realtime_runs, {run.name: run for run in scenario_runs}, manifest)
    v2v_local = voice_to_voice_local_models(models, work, manifest, started)
    v2v_parts = voice_to_voice_parts(models, work, started)

    result: dict[str, Any] = {
        "barge_in_reaction": reaction,
        "echo_robustness": echo,
        "spoken_prefix": prefix,
        "voice_to_voice": v2v,
        "voice_to_voice_local_models": v2v_local,
        "voice_to_voice_parts": v2v_parts,
        "memory": memory,
        "bars": BARS,
    }
    result["bars_met"] = bars(result)
    result["wall_s"] = round(time.monotonic() - started, 1)
    progress("done", started)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--keep", type=Path, help="write every run's outputs here (a new folder) and keep them"
    )
    parser.add_argument("--memory-probe", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--voice-to-voice", action="store_true", help="only the voice-to-voice parts")
    parser.add_argument("--reaction", action="store_true", help="only the barge-in reaction and echo parts")
    parser.add_argument(
        "--against", type=Path, help="with --voice-to-voice or --reaction: another tree to run first"
    )
    parser.add_argument(
        "--eagerness",
        choices=("low", "auto", "high"),
        help="with --voice-to-voice: this tree's eagerness (the --against tree runs as it is)",
    )
    args = parser.parse_args()
    if args.memory_probe:
        print(json.dumps(memory_probe()))
        return 0
    if args.reaction:
        before = None
        if args.against is not None:
            before = run_against(args.against, __file__, without_against(sys.argv[1:]))
        with tempfile.TemporaryDirectory(prefix="barge-in-reaction-") as folder:
            after = reaction_only(Path(folder))
        print(json.dumps(after if before is None else {"before": before, "after": after}, indent=2))
        return 0
    if args.voice_to_voice:
        before = None
        if args.against is not None:
            argv = without_against(sys.argv[1:])
            if "--eagerness" in argv:
                at = argv.index("--eagerness")
                argv = argv[:at] + argv[at + 2 :]
            argv = [arg for arg in argv if not arg.startswith("--eagerness=")]
            before = run_against(args.against, __file__, argv)
        with tempfile.TemporaryDirectory(prefix="voice-to-voice-") as folder:
            after = voice_to_voice_only(Path(folder), args.eagerness)
        result = after if before is None else side_by_side(before, after, str(args.against))
        print(json.dumps(result, indent=2))
        return 0
    if args.keep is not None:
        args.keep.mkdir(parents=True)
        result = benchmark(args.keep)
    else:
        with tempfile.TemporaryDirectory(prefix="barge-in-") as folder:
            result = benchmark(Path(folder))
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
