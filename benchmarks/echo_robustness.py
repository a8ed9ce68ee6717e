"""Echo robustness, as JSON: whether the assistant's own voice, played back into the mic, stops it.

room-echo-noise and plain-turn again with echo at -6, -10, -14, -20 dB over -30 dB pink noise (virtual
time): self-interruptions (a turn cut with no user speech onset inside its audio), false barge-ins (pauses
that resumed), unfinished replies and the reaction of the real interruptions, per level.

Usage: python benchmarks/echo_robustness.py [--keep DIR] [--against TREE]   (under a minute on 2 cores)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from common.scenario_runs import (
    ECHO_NOISE_DB,
    EchoLevel,
    echo_runs,
    figure_command,
    load_manifest,
    progress,
    summary,
    turn_outcomes,
)

from voice.components import load_speech_models


def echo_robustness(levels: list[EchoLevel], manifest: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per echo level: what the echo did to the turns of its runs."""
    figures: list[dict[str, Any]] = []
    for level in levels:
        per_run = {run.name: turn_outcomes(run, manifest) for run in level.runs}
        figures.append(
            {
                "echo_gain_db": level.echo_db,
                "noise_gain_db": ECHO_NOISE_DB,
                "self_interruptions": sum(len(o["self_interruptions"]) for o in per_run.values()),
                "false_barge_ins": sum(o["false_barge_ins"] for o in per_run.values()),
                "unfinished_replies": sum(o["unfinished_replies"] for o in per_run.values()),
                "reaction": summary([r["reaction_ms"] for o in per_run.values() for r in o["reactions"]]),
                "runs": per_run,
            }
        )
    return {
        "self_interruptions": sum(level["self_interruptions"] for level in figures),
        "false_barge_ins": sum(level["false_barge_ins"] for level in figures),
        "levels": figures,
    }


def measure(work: Path, started: float) -> dict[str, Any]:
    progress("loading whisper and piper", started)
    return echo_robustness(echo_runs(load_speech_models(), work, started), load_manifest())


if __name__ == "__main__":
    raise SystemExit(figure_command(__file__, "echo_robustness", __doc__, measure))
