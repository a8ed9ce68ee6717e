"""Eagerness in virtual time: how soon each setting answers, and whether it answers into a pause.

The room runs in virtual time with a scripted LLM whose reply is there at once, so whisper, Smart Turn
and piper cost no time: what is left of voice-to-voice is the turn-taking policy alone (the 200 ms pause,
the hold or the 600 ms silence, and a block or two). Deterministic; real-time figures with compute are
voice_to_voice_parts.py --eagerness.

- ``pauses``: each fixture with a 0.4-0.55 s mid-sentence pause, said once: ``into_pause`` (reply audio
  started before the user's last word), ``cut`` (turns the user cut) and ``voice_to_voice_ms`` (end of the
  user's last word to the reply the user heard out, or null).
- ``never_pauses``: one conversation of eight questions said without a pause, 6 s apart, each answered
  "Sure."; per turn the voice-to-voice ms and the hold in effect, from the session log's ``hold`` lines.
- ``pauses_then_not``: timer-pause.wav (a pause after "Set a timer"), then the eight questions: the
  hold grows and comes back down.

``--against TREE`` runs the same first on that tree's voice package; a tree from before the setting runs
as it is (``as_is``: the fixed 520 ms hold), so both sit side by side.

Usage: python benchmarks/eagerness.py [--against TREE]   (about a minute on 2 cores, twice with --against)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from against import run_against, without_against

from voice.components import load_speech_models
from voice.sim.run import run_scenario
from voice.sim.scenario import load_scenario

AUDIO = Path(__file__).resolve().parents[1] / "audio"
PAUSED = ("timer-pause.wav", "paris-pause.wav", "tokyo-pause.wav")
QUESTIONS = (
    "what-weather.wav",
    "check-sunday.wav",
    "fox-story.wav",
    "what-wear.wav",
    "what-weekend.wav",
    "hello-there.wav",
    "sorry-sunday.wav",
    "thanks-all.wav",
)
APART_S = 6.0


def manifest() -> dict[str, dict[str, Any]]:
    data = json.loads((AUDIO / "manifest.json").read_text())
    return {fixture["file"]: fixture for fixture in data["fixtures"]}


def scenario(folder: Path, wavs: tuple[str, ...], name: str) -> Path:
    cues = [{"wav": str(AUDIO / wav), "at_s": 0.5 + APART_S * i} for i, wav in enumerate(wavs)]
    data = {
        "version": 1,
        "llm": {"replies": ["Sure."] * (3 * len(wavs)), "first_delta_ms": 0, "delta_ms": 0},
        "user": cues,
        "end_s": 0.5 + APART_S * len(wavs) + 2,
    }
    path = folder / f"{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def settings() -> list[Any]:
    """Every eagerness, or None alone on a tree from before the setting (it runs as it is)."""
    if importlib.util.find_spec("voice.engine.hold") is None:
        return [None]
    from voice.engine.hold import Eagerness

    return list(Eagerness)


def run(path: Path, out: Path, eagerness: Any, models: Any) -> tuple[dict[str, Any], list[int]]:
    out.mkdir(parents=True)
    chosen = {} if eagerness is None else {"eagerness": eagerness}
    report = run_scenario(load_scenario(path), out, models=models, **chosen)
    lines = [json.loads(line) for line in (out / "session.jsonl").read_text().splitlines()]
    return report, [line["hold_ms"] for line in lines if line["type"] == "hold"]


def per_cue(report: dict[str, Any], fixtures: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """For each cue: did a reply start before its last word, how many turns were cut, and the delay."""
    rows = []
    cues = report["user_audio"]
    for index, cue in enumerate(cues):
        start = cue["at_s"] + fixtures[cue["wav"]]["start_s"]
        end = cue["at_s"] + fixtures[cue["wav"]]["end_s"]
        until = cues[index + 1]["at_s"] if index + 1 < len(cues) else float("inf")
        turns = [
            t
            for t in report["turns"]
            if t["audio_start_s"] is not None and start < t["audio_start_s"] < until
        ]
        heard = [t for t in turns if not t["interrupted"] and t["audio_start_s"] >= end]
        rows.append(
            {
                "wav": cue["wav"],
                "into_pause": any(t["audio_start_s"] < end for t in turns),
                "cut": sum(t["interrupted"] for t in turns),
                "voice_to_voice_ms": round((heard[0]["audio_start_s"] - end) * 1000) if heard else None,
            }
        )
    return rows


def measure() -> dict[str, Any]:
    models = load_speech_models()
    fixtures = manifest()
    result: dict[str, Any] = {"pauses": {}, "never_pauses": {}, "pauses_then_not": {}}
    with tempfile.TemporaryDirectory(prefix="eagerness-") as folder:
        work = Path(folder)
        for eagerness in settings():
            name = "as_is" if eagerness is None else eagerness.value
            rows = []
            for wav in PAUSED:
                path = scenario(work, (wav,), f"{name}-{wav}")
                report, _ = run(path, work / f"out-{name}-{wav}", eagerness, models)
                rows += per_cue(report, fixtures)
            result["pauses"][name] = rows
            for key, wavs in (
                ("never_pauses", QUESTIONS),
                ("pauses_then_not", ("timer-pause.wav", *QUESTIONS)),
            ):
                path = scenario(work, wavs, f"{name}-{key}")
                report, holds = run(path, work / f"out-{name}-{key}", eagerness, models)
                result[key][name] = {
                    "voice_to_voice_ms": [row["voice_to_voice_ms"] for row in per_cue(report, fixtures)],
                    "into_pause": sum(row["into_pause"] for row in per_cue(report, fixtures)),
                    "hold_changes_ms": holds,
                }
    return result


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--against", type=Path, help="another tree to run first, side by side")
    args = parser.parse_args()
    before = None
    if args.against is not None:
        before = run_against(args.against, __file__, without_against(sys.argv[1:]))
    after = measure()
    result = after if before is None else {"before_tree": str(args.against), "before": before, "after": after}
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
