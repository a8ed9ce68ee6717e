"""The scenarios' runs as the tests read them (names, events, interruptions), and scenarios made in a test."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.paths import AUDIO, SCENARIOS
from voice.components import SpeechModels
from voice.sim.run import run_scenario
from voice.sim.scenario import load_scenario

NAMES = [path.stem for path in SCENARIOS]  # every scenario needs its expectations file: none is skipped
RunScenario = Callable[[str], tuple[dict[str, Any], Path]]  # the `simulated` fixture: report and folder


def interrupting_onset(report: dict[str, Any], turn: dict[str, Any], manifest: dict[str, Any]) -> float:
    """When the user's interrupting speech really began: its cue time plus the speech start in the WAV."""
    onsets = [
        cue["at_s"] + manifest[cue["wav"]]["start_s"]
        for cue in report["user_audio"]
        if cue["at_s"] is not None and manifest[cue["wav"]]["kind"] == "speech"
    ]
    during = [t for t in onsets if turn["audio_start_s"] <= t <= turn["audio_end_s"] + 0.05]
    assert during, (
        f"no user speech began while turn audio played ({turn['audio_start_s']}-{turn['audio_end_s']})"
    )
    return min(during)


def read_events(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def cue(wav: str, **at: Any) -> dict[str, Any]:
    """A user entry playing ``wav`` (a fixture of audio/, or a path) where ``at`` says."""
    return {"wav": str(AUDIO / wav), **at}


def simulate(tmp_path: Path, models: SpeechModels, data: dict[str, Any]) -> tuple[dict[str, Any], Path]:
    """Run the scenario ``data`` (without its version) in the virtual room: its report and output folder."""
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"version": 1, **data}))
    report = run_scenario(load_scenario(path), tmp_path / "out", models=models)
    return report, tmp_path / "out"
