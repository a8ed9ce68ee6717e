"""The scenarios' runs as the tests read them: their names, events and interruptions."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.paths import SCENARIOS

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
