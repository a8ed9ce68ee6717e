"""The quality bars of docs/architecture.md §5, as JSON: each figure they name measured once, and bars_met.

Each figure comes from the benchmark of its question, run here in one process:
``memory`` (memory.py peak, first, while this process is small), ``barge_in_reaction`` and
``echo_robustness`` (barge_in.py room), ``spoken_prefix`` (spoken_prefix.py room, over the runs of
those two), ``voice_to_voice`` (voice_to_voice.py scripted), ``voice_to_voice_local_models``
(voice_to_voice.py local-models) and ``voice_to_voice_parts`` (voice_to_voice.py parts).

Usage: python benchmarks/bars.py [--keep DIR]   (about 4 minutes on 2 cores)
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from barge_in import barge_in_reaction, echo_robustness
from common.machine import with_cpu
from common.scenario_runs import echo_runs, load_manifest, progress, scenario_runs
from common.voice_parts import voice_to_voice_parts
from memory import measure_memory
from spoken_prefix import full_window_judge, spoken_prefix
from voice_to_voice import realtime_runs, voice_to_voice, voice_to_voice_local_models

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
    args = parser.parse_args()
    if args.keep is not None:
        args.keep.mkdir(parents=True)
        result = benchmark(args.keep)
    else:
        with tempfile.TemporaryDirectory(prefix="bars-") as folder:
            result = benchmark(Path(folder))
    print(json.dumps(with_cpu(result), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
