"""The heard prefix: is the text the assistant remembers as heard what really played, here or on a server?

Whisper (its full 30 s window) transcribes speaker.wav over each played turn afresh, and a turn passes when
its word count is within one word of the report's ``spoken``. Modes (each prints one JSON object; progress
goes to stderr), by where speech runs:

- ``room``: whisper and piper here, every scenario in audio/scenarios and the echo variants of barge_in.py
  room, in virtual time. Prints ``{"spoken_prefix": ...}``.
- ``servers``: every scenario with an interruption, in virtual time, three ways: ``local`` (whisper and
  piper here, word spans from piper's phoneme alignments), ``wyoming`` (wyoming-faster-whisper and
  wyoming-piper on loopback: spans estimated per sentence, from the sentence streaming) and ``openai``
  (faster-whisper-server and local-tts-studio, both OpenAI-compatible: spans estimated over each chunk's
  whole audio). For each, the turns whose reported heard text is within one word of whisper's, exactly
  equal in length, and longer than it (``claimed_more``: the model was told of more than whisper hears
  played). Both servers' voices add piper's noise, so each remote way runs ``--runs`` times (default 3)
  for more interrupted turns; the local way is deterministic and runs once.

Both take ``--against TREE``: the same command on TREE's voice package first, then this tree's.

Usage: python benchmarks/spoken_prefix.py room [--keep DIR] [--against TREE]   (a few minutes on 2 cores)
       PYTHONPATH=. python benchmarks/spoken_prefix.py servers [--runs N] [--ways local,wyoming,openai]
       [--against TREE] [--out FILE]   (from the repository root; about 10 minutes on 2 cores with 3 runs)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from common.harness import print_measured
from common.scenario_runs import (
    SCENARIOS,
    Run,
    add_run_options,
    echo_runs,
    print_figures,
    progress,
    scenario_runs,
    simulate,
)
from common.word_error import words

from voice.asr.port import Transcriber
from voice.asr.whisper import WhisperSettings, WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav
from voice.components import SpeechModels, load_speech_models
from voice.speech_backends import synthesizer_for, transcriber_for
from voice.testing.speech_servers import speech_servers
from voice.turn_end.smart_turn import SmartTurn

# --- room: every scenario and echo variant, speech here


def spoken_prefix(runs: list[Run], judge: Transcriber) -> dict[str, Any]:
    """How often the report's heard text has the word count of what speaker.wav really played (±1).

    ``judge`` decodes whisper's full window: on the cut one (no timestamps) whisper often stops early on a
    reply broken off mid-sentence, and would report fewer words than played.
    """
    checked: list[tuple[bool, bool]] = []  # (interrupted, within one word)
    cut_differences: list[int] = []  # per interrupted turn: whisper's words less the report's
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
            if turn["interrupted"]:
                cut_differences.append(difference)
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
        "interrupted_differences": sorted(cut_differences),
        "misses": misses,
    }


def full_window_judge() -> WhisperTranscriber:
    return WhisperTranscriber(WhisperSettings(short_window=False))


def room(work: Path, started: float) -> dict[str, Any]:
    progress("loading whisper and piper", started)
    models = load_speech_models()
    runs = scenario_runs(models, work, started)
    runs += [run for level in echo_runs(models, work, started) for run in level.runs]
    progress("spoken prefix: transcribing what speaker.wav played", started)
    return {"spoken_prefix": spoken_prefix(runs, full_window_judge())}


# --- servers: the interrupted scenarios, speech here and on servers

WAYS = ("local", "wyoming", "openai")


def interrupting_scenarios() -> list[Path]:
    return [
        path
        for path in sorted(SCENARIOS.glob("*.json"))
        if json.loads(path.read_text(encoding="utf-8")).get("fixture_expect", {}).get("interruptions", 0) > 0
    ]


def share(hits: list[bool]) -> float | None:
    return round(sum(hits) / len(hits), 3) if hits else None


def measure_way(
    label: str, models: SpeechModels, work: Path, judge: WhisperTranscriber, started: float, repeats: int = 1
) -> Any:
    runs = []
    for repeat in range(repeats):
        for path in interrupting_scenarios():
            progress(f"{label} {repeat + 1}/{repeats}: {path.stem}", started)
            runs.append(simulate(path, work / label / str(repeat) / path.stem, models))
    prefix = spoken_prefix(runs, judge)
    differences = prefix["interrupted_differences"]
    return {
        "interrupted_turns": prefix["interrupted_turns"],
        "within_one_word": prefix["interrupted_fraction"],
        "exact": share([difference == 0 for difference in differences]),
        "claimed_more": share([difference < 0 for difference in differences]),
        "word_differences": differences,
        "misses": prefix["misses"],
    }


def servers(args: argparse.Namespace) -> int:
    ways = args.ways.split(",")
    if unknown := sorted(set(ways) - set(WAYS)):
        raise SystemExit(f"unknown way {', '.join(unknown)}: choose from {', '.join(WAYS)}")

    def measure_ways() -> dict[str, Any]:
        started = time.monotonic()
        load_start = os.getloadavg()
        judge = full_window_judge()
        result: dict[str, Any] = {
            "scenarios": [path.stem for path in interrupting_scenarios()],
            "runs": args.runs,
        }
        with tempfile.TemporaryDirectory(prefix="remote-speech-") as folder, contextlib.ExitStack() as stack:
            work = Path(folder)
            if "local" in ways:
                result["local"] = measure_way("local", load_speech_models(), work, judge, started)
            if "wyoming" in ways or "openai" in ways:  # the servers take a while to start: only if used
                running = stack.enter_context(speech_servers(work / "servers"))
                servers = {
                    "wyoming": (running.wyoming_whisper, running.wyoming_piper),
                    "openai": (running.whisper_http, running.piper_http),
                }
                for way, (asr_url, tts_url) in servers.items():
                    if way in ways:
                        models = SpeechModels(transcriber_for(asr_url), synthesizer_for(tts_url), SmartTurn())
                        result[way] = measure_way(way, models, work, judge, started, args.runs)
        result["load_average"] = {"start": load_start[0], "end": os.getloadavg()[0]}
        return result

    print_measured(__file__, args, measure_ways)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    modes = parser.add_subparsers(dest="mode", required=True, metavar="MODE")
    room_mode = modes.add_parser("room", help="whisper and piper here: every scenario and echo variant")
    add_run_options(room_mode)
    servers_mode = modes.add_parser(
        "servers", help="interrupted scenarios here, on Wyoming, OpenAI-compatible"
    )
    servers_mode.add_argument("--runs", type=int, default=3, help="runs of each remote way (default 3)")
    servers_mode.add_argument("--ways", default=",".join(WAYS), help="which ways to run, comma-separated")
    servers_mode.add_argument("--out", type=Path, help="also write the JSON there")
    servers_mode.add_argument(
        "--against", type=Path, help="another source tree to measure first, for before/after"
    )
    args = parser.parse_args()
    if args.mode == "servers":
        return servers(args)
    return print_figures(__file__, args, "spoken-prefix", room)


if __name__ == "__main__":
    raise SystemExit(main())
