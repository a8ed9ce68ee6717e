"""The whole pipeline against the quality bars of docs/architecture.md §5, as JSON: every barge-in figure
in one run, then ``bars_met``.

Each figure has its own script, which also runs it alone and says what it measures:
``memory`` (memory.py, first, while this process is small), ``barge_in_reaction`` (barge_in_reaction.py),
``echo_robustness`` (echo_robustness.py), ``spoken_prefix`` (spoken_prefix.py, over the runs of those
two), ``voice_to_voice`` (voice_to_voice.py), ``voice_to_voice_local_models``
(voice_to_voice_local_models.py) and ``voice_to_voice_parts`` (voice_to_voice_parts.py).

``--reaction [--against TREE]`` runs only the barge-in reaction and echo robustness (virtual time);
``--voice-to-voice [--against TREE] [--eagerness E]`` only voice_to_voice_parts.py.

Usage: python benchmarks/barge_in.py [--keep DIR] [--reaction | --voice-to-voice] [--against TREE]
(about 4 minutes on 2 cores; --voice-to-voice about 2, twice that with --against)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import voice_to_voice_parts
from barge_in_reaction import barge_in_reaction
from common.against import run_against, without_against
from common.scenario_runs import echo_runs, load_manifest, progress, scenario_runs
from echo_robustness import echo_robustness
from memory import measure_memory
from spoken_prefix import full_window_judge, spoken_prefix
from voice_to_voice import realtime_runs, voice_to_voice
from voice_to_voice_local_models import voice_to_voice_local_models

from voice.components import load_speech_models

BARS = {
    "reaction_p95_ms_without_echo": 300.0,
    "reaction_p95_ms_with_echo_minus_10_db": 350.0,
    "spoken_prefix_fraction": 0.95,
    "voice_to_voice_minus_endpointing_ms": 300.0,
    "voice_to_voice_local_models_minus_endpointing_ms": 300.0,
    "peak_rss_mb": 600.0,
}


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


def reaction_only(work: Path) -> dict[str, Any]:
    """The barge-in reaction and echo robustness alone (virtual time, no memory or real-time parts)."""
    started = time.monotonic()
    progress("loading whisper and piper", started)
    models = load_speech_models()
    manifest = load_manifest()
    reaction = barge_in_reaction(scenario_runs(models, work, started), manifest)
    echo = echo_robustness(echo_runs(models, work, started), manifest)
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

    virtual = scenario_runs(models, work, started)
    reaction = barge_in_reaction(virtual, manifest)
    levels = echo_runs(models, work, started)
    echo = echo_robustness(levels, manifest)
    progress("spoken prefix: transcribing what speaker.wav played", started)
    prefix = spoken_prefix(virtual + [run for level in levels for run in level.runs], full_window_judge())

    v2v = voice_to_voice(realtime_runs(models, work, started), {run.name: run for run in virtual}, manifest)
    v2v_local = voice_to_voice_local_models(models, work, manifest, started)
    v2v_parts = voice_to_voice_parts.voice_to_voice_parts(models, work, started)

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
    parser.add_argument("--voice-to-voice", action="store_true", help="only the voice-to-voice parts")
    parser.add_argument("--reaction", action="store_true", help="only the barge-in reaction and echo parts")
    parser.add_argument(
        "--against", type=Path, help="with --voice-to-voice or --reaction: another tree to run first"
    )
    parser.add_argument(
        "--embedded-only", action="store_true", help="with --voice-to-voice: only the embedded LLM's runs"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="with --voice-to-voice: rounds of TREE's runs then this tree's, alternated (the load moves)",
    )
    parser.add_argument(
        "--eagerness",
        choices=("low", "auto", "high"),
        help="with --voice-to-voice: this tree's eagerness (the --against tree runs as it is)",
    )
    args = parser.parse_args()
    if args.voice_to_voice:
        return voice_to_voice_parts.main([arg for arg in sys.argv[1:] if arg != "--voice-to-voice"])
    if args.reaction:
        before = None
        if args.against is not None:
            before = run_against(args.against, __file__, without_against(sys.argv[1:]))
        with tempfile.TemporaryDirectory(prefix="barge-in-reaction-") as folder:
            after = reaction_only(Path(folder))
        print(json.dumps(after if before is None else {"before": before, "after": after}, indent=2))
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
