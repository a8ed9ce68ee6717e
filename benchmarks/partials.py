"""Live partials (``input.partial``): what they cost and how far behind the voice they come, as JSON.

Every scenario below runs paced in real time twice per round, partials off and partials on (the order
swapped each round, since the load on shared cores moves), in one process with the models loaded once:

- ``partials``: CPU they cost, as % of one core per second of the user's speech (the process's CPU time
  with them on less off, per pair of runs, over the seconds of speech the room played); their decodes
  (count per second of speech, wall ms each; ``asr_overlapped_ms``: per whisper call of the turn, how long a
  partial decode still ran beside it, and ``asr_ms_of_calls_overlapped`` those calls' own wall time, to
  set beside ``off.asr_ms``); their delay behind the voice: for each word of a question
  (its end in the room from whisper's word timings on the WAV alone), from its end to the first partial
  holding that many words (``words_shown_live`` is the share that appeared before the final one); and
  ``first_words_ms``, from the speech onset to the first partial.
- ``off`` / ``on``: what partials must not slow: voice-to-voice (end of the user's speech to the first
  reply audio; the scripted LLM answers at once), each whisper call's wall time (``asr_ms``: the early and
  final transcriptions), the transcript after the speech ended, the barge-in reaction of interrupt-mid
  (from its cut-in's onset to where the reply stopped), and idle listening's CPU (20 s with no one
  speaking; partials asked for, nothing to decode).

Usage: python benchmarks/partials.py [--rounds N] [--keep DIR]   (about 1 minute a round on 2 cores)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import voice_parts
from common.machine import with_cpu
from common.scenario_runs import (
    SCENARIOS,
    Run,
    at_once_variant,
    load_manifest,
    ms,
    progress,
    reply_delays,
    speech_cues,
    summary,
)

from voice.asr.partial_whisper import whisper_partials
from voice.audio.block import Samples
from voice.audio.wav import read_wav
from voice.components import SpeechModels, load_speech_models
from voice.sim.run import run_scenario
from voice.sim.scenario import load_scenario

QUESTIONS = ("plain-turn", "pause-mid-sentence", "pause-mid-question")  # questions said in the quiet
CUT_IN = "interrupt-mid"  # a question, then a cut-in over the reply
IDLE_S = 20.0
AUDIO = SCENARIOS.parent


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class TimedDecoder:
    """The partials model, each decode's wall time noted."""

    def __init__(self) -> None:
        self._decoder = whisper_partials()
        self.spans: list[tuple[float, float]] = []  # monotonic start and end of each decode

    def decode(self, samples: Samples, stop: Callable[[], bool] = lambda: False) -> str | None:
        started = time.monotonic()
        try:
            return self._decoder.decode(samples, stop)
        finally:
            self.spans.append((started, time.monotonic()))


def idle(folder: Path) -> Path:
    path = folder / "idle.json"
    scenario = {"version": 1, "llm": {"replies": []}, "user": [], "end_s": IDLE_S}
    path.write_text(json.dumps(scenario), encoding="utf-8")
    return path


def word_ends(models: SpeechModels, wav: str) -> list[float]:
    """Where each word whisper hears in ``wav`` ends, in seconds from the file's start."""
    heard = models.transcriber.transcribe(read_wav(AUDIO / wav), word_timings=True)
    if not heard.words:
        raise SystemExit(f"no word timings for {wav}: they need the local whisper")
    return [word.end_s for word in heard.words]


def events_of(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "events.jsonl").read_text(encoding="utf-8").splitlines()]


def utterance_partials(events: list[dict[str, Any]], onset: float) -> list[dict[str, Any]]:
    """The partials of the utterance that began nearest after ``onset`` (up to and with its final one)."""
    started = [
        index
        for index, event in enumerate(events)
        if event["type"] == "input.speech_started" and event["t"] >= onset - 0.3
    ]
    if not started:
        return []
    shown = []
    for event in events[started[0] :]:
        if event["type"] == "input.partial":
            shown.append(event)
            if event["final"]:
                break
    return shown


def partial_delays(
    report: dict[str, Any],
    events: list[dict[str, Any]],
    manifest: dict[str, dict[str, Any]],
    ends: dict[str, list[float]],
) -> tuple[list[float], list[float], int, int]:
    """Per word of each question said in the quiet: ms from its end to the first partial with that many
    words; per question, ms from its onset to the first partial; words shown live, words in all."""
    delays, firsts, live_words, all_words = [], [], 0, 0
    for cue in report["user_audio"]:
        if cue["at_s"] is None or cue.get("during_reply") or manifest[cue["wav"]]["kind"] != "speech":
            continue
        onset = cue["at_s"] + manifest[cue["wav"]]["start_s"]
        shown = [event for event in utterance_partials(events, onset) if not event["final"]]
        if shown:
            firsts.append(ms(shown[0]["t"] - onset))
        for count, end in enumerate(ends[cue["wav"]], start=1):
            all_words += 1
            appeared = [event["t"] for event in shown if len(event["text"].split()) >= count]
            if appeared:
                live_words += 1
                delays.append(ms(appeared[0] - (cue["at_s"] + end)))
    return delays, firsts, live_words, all_words


def one_run(
    path: Path, out: Path, models: SpeechModels, partials: bool
) -> tuple[dict[str, Any], float, voice_parts.Timers, TimedDecoder | None]:
    timers = voice_parts.Timers()
    decoder = TimedDecoder() if partials else None
    out.mkdir(parents=True)
    cpu = cpu_seconds()
    report = run_scenario(
        load_scenario(path),
        out,
        realtime=True,
        models=voice_parts.timed_models(models, timers),
        partials=decoder,
    )
    return report, cpu_seconds() - cpu, timers, decoder


def speech_seconds(report: dict[str, Any], manifest: dict[str, dict[str, Any]]) -> float:
    return sum(end - start for start, end in speech_cues(report, manifest))


def measure(work: Path, rounds: int, started: float) -> dict[str, Any]:
    progress("loading the speech models and the partials model", started)
    models = load_speech_models()
    whisper_partials()
    manifest = load_manifest()
    variants = work / "scenarios"
    variants.mkdir(parents=True)
    paths = {name: at_once_variant(name, variants) for name in (*QUESTIONS, CUT_IN)}
    paths["idle"] = idle(variants)
    wavs = {
        cue["wav"]
        for name in paths
        if name != "idle"
        for cue in json.loads(paths[name].read_text())["user"]
        if "wav" in cue
    }
    ends = {Path(wav).name: word_ends(models, Path(wav).name) for wav in wavs}

    sides: dict[str, dict[str, list[float]]] = {
        side: {
            "voice_to_voice_ms": [],
            "asr_ms": [],
            "transcript_after_speech_ms": [],
            "barge_in_reaction_ms": [],
        }
        for side in ("off", "on")
    }
    cpu_per_speech: dict[str, list[float]] = {"off": [], "on": []}
    idle_cpu: dict[str, list[float]] = {"off": [], "on": []}
    extra_cpu_pct: list[float] = []
    decode_ms: list[float] = []
    overlaps: list[float] = []
    asr_overlapped: list[float] = []  # the wall time of each whisper call a partial decode ran beside
    decodes = 0
    spoken_s = 0.0
    delays: list[float] = []
    firsts: list[float] = []
    live_words = all_words = 0
    loads = []
    for number in range(rounds):
        order = ("off", "on") if number % 2 == 0 else ("on", "off")
        for name, path in paths.items():
            cpu_of: dict[str, float] = {}
            for side in order:
                progress(f"round {number + 1}/{rounds}: {name}, partials {side}", started)
                out = work / f"round-{number + 1}" / f"{name}-{side}"
                report, cpu, timers, decoder = one_run(path, out, models, side == "on")
                cpu_of[side] = cpu
                if name == "idle":
                    idle_cpu[side].append(round(100 * cpu / IDLE_S, 2))
                    continue
                figures = sides[side]
                run = Run(name, report, out, None)
                figures["voice_to_voice_ms"] += [
                    ms(audio - end) for end, audio in reply_delays(run, manifest).values()
                ]
                figures["asr_ms"] += [ms(end - begin) for begin, end in timers.spans.get("asr", [])]
                events = events_of(out)
                figures["transcript_after_speech_ms"] += transcript_delays(report, events, manifest)
                if name == CUT_IN:
                    figures["barge_in_reaction_ms"] += reactions(report, manifest)
                speech = speech_seconds(report, manifest)
                cpu_per_speech[side].append(round(cpu / speech, 3))
                if decoder is not None:
                    decode_ms += [ms(end - begin) for begin, end in decoder.spans]
                    decodes += len(decoder.spans)
                    for span in timers.spans.get("asr", []):
                        overlaps.append(overlap_ms(span, decoder.spans))
                        if overlaps[-1] > 0:
                            asr_overlapped.append(ms(span[1] - span[0]))
                    spoken_s += speech
                    found = partial_delays(report, events, manifest, ends)
                    delays += found[0]
                    firsts += found[1]
                    live_words += found[2]
                    all_words += found[3]
            if name != "idle":
                speech = speech_seconds(report, manifest)
                extra_cpu_pct.append(round(100 * (cpu_of["on"] - cpu_of["off"]) / speech, 1))
        loads.append(round(os.getloadavg()[0], 2))

    def side_summary(side: str) -> dict[str, Any]:
        return {
            **{figure: summary(values) for figure, values in sides[side].items()},
            "cpu_s_per_speech_s": median(cpu_per_speech[side]),
            "idle_cpu_pct_of_core": median(idle_cpu[side]),
        }

    return {
        "partials": {
            "cpu_pct_of_core_per_speech_s": {"median": median(extra_cpu_pct), "per_pair": extra_cpu_pct},
            "decodes_per_speech_s": round(decodes / spoken_s, 2) if spoken_s else None,
            "decode_ms": summary(decode_ms),
            "asr_overlapped_ms": summary(overlaps),
            "asr_ms_of_calls_overlapped": summary(asr_overlapped),
            "delay_behind_voice_ms": summary(delays),
            "first_words_ms": summary(firsts),
            "words_shown_live": round(live_words / all_words, 3) if all_words else None,
        },
        "off": side_summary("off"),
        "on": side_summary("on"),
        "rounds": rounds,
        "scenarios": list(paths),
        "load_1min_per_round": loads,
    }


def transcript_delays(
    report: dict[str, Any], events: list[dict[str, Any]], manifest: dict[str, dict[str, Any]]
) -> list[float]:
    """For each speech cue, ms from the end of its speech to the first spoken transcript told after it."""
    told = [event["t"] for event in events if event["type"] == "input.transcript"]
    found = []
    for _start, end in speech_cues(report, manifest):
        after = [t for t in told if t >= end]
        if after:
            found.append(ms(after[0] - end))
    return found


def reactions(report: dict[str, Any], manifest: dict[str, dict[str, Any]]) -> list[float]:
    """Each cut reply: ms from the onset of the speech that cut it to where its audio stopped."""
    onsets = [start for start, _end in speech_cues(report, manifest)]
    found = []
    for turn in report["turns"]:
        if not turn["interrupted"] or turn["audio_start_s"] is None:
            continue
        during = [t for t in onsets if turn["audio_start_s"] <= t <= turn["audio_end_s"] + 0.05]
        if during:
            found.append(ms(turn["audio_end_s"] - min(during)))
    return found


def overlap_ms(span: tuple[float, float], others: list[tuple[float, float]]) -> float:
    """How long ``span`` (a transcription) ran while any of ``others`` (partial decodes) still ran."""
    begin, end = span
    return ms(
        sum(max(0.0, min(end, other_end) - max(begin, other_begin)) for other_begin, other_end in others)
    )


def median(values: list[float]) -> float | None:
    return round(float(statistics.median(values)), 3) if values else None


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=2, help="rounds of off/on pairs (default 2)")
    parser.add_argument(
        "--keep", type=Path, help="write every run's outputs here (a new folder) and keep them"
    )
    args = parser.parse_args()
    started = time.monotonic()
    load_before = round(os.getloadavg()[0], 2)
    if args.keep is not None:
        args.keep.mkdir(parents=True)
        result = measure(args.keep, args.rounds, started)
    else:
        with tempfile.TemporaryDirectory(prefix="partials-") as folder:
            result = measure(Path(folder), args.rounds, started)
    result["load_1min_before"] = load_before
    result["wall_s"] = round(time.monotonic() - started, 1)
    progress("done", started)
    print(json.dumps(with_cpu(result), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
