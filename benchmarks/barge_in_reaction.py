"""The barge-in reaction, as JSON: how soon the speaker falls silent after the user cuts in.

For every interrupted turn of every scenario in audio/scenarios (virtual time, deterministic), the time
from the TRUE onset of the interrupting user speech (its cue's placed time plus the WAV's measured
``start_s`` from audio/manifest.json) to the end of playback (the turn's ``audio_end_s``); n, p50, p95
(numpy linear interpolation), max in ms, for scenarios without echo and with echo (``room.echo_gain_db``).

Usage: python benchmarks/barge_in_reaction.py [--keep DIR] [--against TREE]   (a minute or two on 2 cores)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from common.scenario_runs import (
    Run,
    figure_command,
    load_manifest,
    progress,
    scenario_runs,
    summary,
    turn_outcomes,
)

from voice.components import load_speech_models


def barge_in_reaction(runs: list[Run], manifest: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The reactions of every real interruption in ``runs``, grouped by whether the room had echo."""
    outcomes = {run.name: turn_outcomes(run, manifest) for run in runs}
    groups: dict[str, list[float]] = {"without_echo": [], "with_echo": []}
    for run in runs:
        group = "without_echo" if run.echo_db is None else "with_echo"
        groups[group] += [r["reaction_ms"] for r in outcomes[run.name]["reactions"]]
    return {
        "without_echo": summary(groups["without_echo"]),
        "with_echo": summary(groups["with_echo"]),
        "self_interruptions": sum(len(o["self_interruptions"]) for o in outcomes.values()),
        "false_barge_ins": sum(o["false_barge_ins"] for o in outcomes.values()),
        "scenarios": outcomes,
    }


def measure(work: Path, started: float) -> dict[str, Any]:
    progress("loading whisper and piper", started)
    return barge_in_reaction(scenario_runs(load_speech_models(), work, started), load_manifest())


if __name__ == "__main__":
    raise SystemExit(figure_command(__file__, "barge_in_reaction", __doc__, measure))
