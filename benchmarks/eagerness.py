"""Eagerness in virtual time: how soon each setting answers, and whether it answers into a pause.

The room runs in virtual time with a scripted LLM whose reply is there at once, so whisper, Smart Turn
and piper cost no time: what is left of voice-to-voice is the turn-taking policy alone (the 200 ms pause,
the hold or the 600 ms silence, and a block or two). Deterministic; real-time figures with compute are
voice_to_voice.py parts --eagerness.

- ``pauses``: each fixture with a 0.4-0.55 s mid-sentence pause, said once: ``into_pause`` (reply audio
  started before the user's last word), ``cut`` (turns the user cut) and ``voice_to_voice_ms`` (end of the
  user's last word to the reply the user heard out, or null).
- ``never_pauses``: one conversation of eight questions said without a pause, 6 s apart, each answered
  "Sure."; per turn the voice-to-voice ms and the hold in effect, from the session log's ``hold`` lines.
- ``pauses_then_not``: timer-pause.wav (a pause after "Set a timer"), then the eight questions: the
  hold grows and comes back down.

``--realtime`` gives instead the eagerness rows of issue 29's table in real time, with real whisper, Smart
Turn and piper and a scripted LLM whose whole reply is there at once (every reply the same sentence, so
piper's first chunk costs the same), medians over ``--runs`` runs of each, interleaved:

- ``auto_ms`` and ``high_ms``: voice-to-voice (end of the user's last word to the first reply audio the user
  heard out) on what-weather, paris-pause and tokyo-pause, each in a new session (``auto``'s hold at 520 ms);
- ``auto_never_pauses_ms``: the six questions of audio/scenarios/eagerness/auto-never-pauses.json in one
  session, 7 s apart, said without a pause, so the hold comes down (``last_three_ms``: once it has);
- ``auto_into_pause``: turns of ``auto`` whose reply started before the user's last word, over those three
  fixtures and timer-pause (every one with a 0.4-0.55 s mid-sentence pause).

Each eagerness hears with whisper as `voice chat` builds it for that eagerness (under ``high``, choosing a
question's words greedily, not with the beam: ``models_for``).

``--against TREE`` runs the same first on that tree's voice package; a tree from before the setting runs
as it is (``as_is``: the fixed 520 ms hold), so both sit side by side (with --realtime, ``rows`` puts the
two trees' medians next to each other).

Usage: python benchmarks/eagerness.py [--against TREE] [--realtime [--runs N]]
(virtual: about a minute on 2 cores; --realtime: about 6 minutes for 5 runs; twice with --against)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from common.against import run_against, without_against
from common.machine import with_cpu

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
REALTIME_ALONE = ("what-weather.wav", "paris-pause.wav", "tokyo-pause.wav")  # each in a new session
NEVER_PAUSES = AUDIO / "scenarios" / "eagerness" / "auto-never-pauses.json"
REPLY = "Tomorrow starts dry, then rain moves in from the west."  # plain-turn's reply, 3.2 s long
REALTIME_APART_S = 7.0  # the next question comes after REPLY is heard out, never cutting it


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


def models_for(eagerness: Any, default: Any) -> Any:
    """The models as `voice chat` builds them for ``eagerness``: under high, whisper choosing words greedily
    (a tree from before that choice has one way, ``default``)."""
    if eagerness is None or eagerness.value != "high":
        return default
    try:
        from voice.speech_backends import SpeechChoice

        return load_speech_models(SpeechChoice(asr_greedy=True))
    except (ImportError, TypeError):
        return default


def measure() -> dict[str, Any]:
    loaded = load_speech_models()
    fixtures = manifest()
    result: dict[str, Any] = {"pauses": {}, "never_pauses": {}, "pauses_then_not": {}}
    with tempfile.TemporaryDirectory(prefix="eagerness-") as folder:
        work = Path(folder)
        for eagerness in settings():
            name = "as_is" if eagerness is None else eagerness.value
            models = models_for(eagerness, loaded)
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


def realtime_scenario(folder: Path, cues: list[tuple[str, float]], name: str) -> Path:
    """A scenario of ``(wav, at_s)`` cues answered at once with REPLY, ending 4 s after the last word."""
    fixtures = manifest()
    wav, at_s = cues[-1]
    data = {
        "version": 1,
        "llm": {"replies": [REPLY] * (3 * len(cues)), "first_delta_ms": 0, "delta_ms": 0},
        "user": [{"wav": str(AUDIO / wav), "at_s": at} for wav, at in cues],
        "end_s": round(at_s + fixtures[wav]["end_s"] + 4.0, 2),
    }
    path = folder / f"{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def realtime_run(
    path: Path, out: Path, eagerness: Any, models: Any
) -> tuple[list[dict[str, Any]], list[int]]:
    out.mkdir(parents=True)
    chosen = {} if eagerness is None else {"eagerness": eagerness}
    report = run_scenario(load_scenario(path), out, models=models, realtime=True, **chosen)
    lines = [json.loads(line) for line in (out / "session.jsonl").read_text().splitlines()]
    return per_cue(report, manifest()), [line["hold_ms"] for line in lines if line["type"] == "hold"]


def median(values: list[Any]) -> float | None:
    heard = [value for value in values if value is not None]
    return round(statistics.median(heard), 1) if heard else None


def measure_realtime(runs: int) -> dict[str, Any]:
    """The eagerness rows in real time: each cell ``runs`` times, the cells interleaved (the load moves)."""
    models = load_speech_models()
    chosen_models = {setting: models_for(setting, models) for setting in settings()}
    chosen = {setting.value if setting else "as_is": setting for setting in settings()}
    chosen.pop("low", None)  # no row of the table
    auto = chosen.get("auto", chosen.get("as_is"))
    alone: dict[str, list[dict[str, Any]]] = {name: [] for name in chosen}
    never: list[list[dict[str, Any]]] = []
    holds: list[list[int]] = []
    load = [round(os.getloadavg()[0], 2)]
    # the scenario's own cues are 4 s apart, under REPLY's 3.2 s plus the answer's delay: spaced out
    # here, so no reply is cut by the next question and every turn gives a figure
    never_cues = [
        (Path(cue["wav"]).name, 0.5 + REALTIME_APART_S * i)
        for i, cue in enumerate(json.loads(NEVER_PAUSES.read_text())["user"])
    ]
    with tempfile.TemporaryDirectory(prefix="eagerness-realtime-") as folder:
        work = Path(folder)
        for number in range(runs):
            for name, eagerness in chosen.items():
                for wav in (*REALTIME_ALONE, *(("timer-pause.wav",) if eagerness is auto else ())):
                    path = realtime_scenario(work, [(wav, 0.5)], f"{name}-{wav}-{number}")
                    ran = chosen_models[eagerness]
                    rows, _ = realtime_run(path, work / f"out-{name}-{wav}-{number}", eagerness, ran)
                    alone[name] += rows
            path = realtime_scenario(work, never_cues, f"never-{number}")
            rows, changes = realtime_run(path, work / f"out-never-{number}", auto, models)
            never.append(rows)
            holds.append(changes)
            print(f"eagerness in real time: run {number + 1}/{runs} done", file=sys.stderr, flush=True)
    load.append(round(os.getloadavg()[0], 2))

    def voice_to_voice(rows: list[dict[str, Any]]) -> list[Any]:
        return [row["voice_to_voice_ms"] for row in rows if row["wav"] in REALTIME_ALONE]

    auto_name = "auto" if "auto" in chosen else "as_is"
    result: dict[str, Any] = {
        "runs": runs,
        "load_1min": load,
        "auto_ms": median(voice_to_voice(alone[auto_name])),
        "auto_never_pauses_ms": median([row["voice_to_voice_ms"] for rows in never for row in rows]),
        "auto_never_pauses_last_three_ms": median(
            [row["voice_to_voice_ms"] for rows in never for row in rows[-3:]]
        ),
        "auto_into_pause": sum(row["into_pause"] for row in alone[auto_name]),
        "auto_turns": len(alone[auto_name]),
    }
    if "high" in chosen:
        result["high_ms"] = median(voice_to_voice(alone["high"]))
        result["high_into_pause"] = sum(row["into_pause"] for row in alone["high"])
    result["cells"] = {"alone": alone, "never_pauses": never, "never_pauses_holds_ms": holds}
    return result


ROWS = (
    ("auto_ms", "voice-to-voice, auto, a new session (hold 520 ms): target <= hold + 40"),
    ("auto_never_pauses_ms", "voice-to-voice, auto, a speaker who never pauses: target <= 450"),
    ("auto_never_pauses_last_three_ms", "the same, its last three questions (the hold came down)"),
    ("high_ms", "voice-to-voice, high: target <= 330"),
    ("auto_into_pause", "turns answered into a 0.4-0.5 s pause, auto (of auto_turns): target 0"),
    ("auto_turns", "auto's turns on fixtures with such a pause"),
    ("load_1min", "load average, start and end"),
)


def side_by_side(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Each row's figure on both trees, next to each other."""
    return {key: {"what": what, "before": before.get(key), "after": after.get(key)} for key, what in ROWS}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--against", type=Path, help="another tree to run first, side by side")
    parser.add_argument("--realtime", action="store_true", help="issue 29's eagerness rows, in real time")
    parser.add_argument("--runs", type=int, default=5, help="real-time runs of each cell (default 5)")
    args = parser.parse_args()
    before = None
    if args.against is not None:
        before = run_against(args.against, __file__, without_against(sys.argv[1:]))
    after = measure_realtime(args.runs) if args.realtime else measure()
    result = after if before is None else {"before_tree": str(args.against), "before": before, "after": after}
    if before is not None and args.realtime:
        result = {"rows": side_by_side(before, after), **result}
    print(json.dumps(with_cpu(result), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
