"""Voice-to-voice, as JSON: end of the user's speech to the first reply audio, paced in real time.

Real-time runs of plain-turn, pause-mid-sentence and interrupt-mid: end of the user's speech (cue time
plus the WAV's ``end_s``) to the first reply audio, raw and minus the VAD's endpointing silence; each turn
also says how much of it remains in virtual time (endpointing, the scripted LLM's first-delta delay and
the wait for the first clause) and how much is compute (ASR, TTS, threads).

Usage: python benchmarks/voice_to_voice.py [--keep DIR] [--against TREE]   (about a minute on 2 cores)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from common.scenario_runs import (
    SCENARIOS,
    Run,
    figure_command,
    latency_rows,
    latency_summary,
    load_manifest,
    ms,
    progress,
    reply_delays,
    simulate,
)

from voice.components import SpeechModels, load_speech_models

REALTIME_SCENARIOS = ("plain-turn", "pause-mid-sentence", "interrupt-mid")


def realtime_runs(models: SpeechModels, work: Path, started: float) -> list[Run]:
    runs = []
    for name in REALTIME_SCENARIOS:
        progress(f"real time: {name}", started)
        runs.append(simulate(SCENARIOS / f"{name}.json", work / "realtime" / name, models, realtime=True))
    return runs


def voice_to_voice(
    realtime: list[Run], virtual: dict[str, Run], manifest: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """End of the user's speech to the first reply audio, paced in real time.

    The same turn in the virtual-time run (ASR, TTS and the machine's speed take no time there) splits
    the figure into what the design waits for (endpointing, the scripted LLM, the first clause) and
    what computing costs (``compute_ms``).
    """
    rows: list[dict[str, Any]] = []
    for run in realtime:
        ideal = reply_delays(virtual[run.name], manifest)
        for latency, _, _ in latency_rows(run, manifest):
            row = {"scenario": run.name, **latency}
            if row["turn"] in ideal:
                user_end, audio_start = ideal[row["turn"]]
                row["virtual_time_ms"] = ms(audio_start - user_end)
                row["compute_ms"] = round(row["ms"] - row["virtual_time_ms"], 1)
            rows.append(row)
    return {"turns": rows, **latency_summary(rows)}


def measure(work: Path, started: float) -> dict[str, Any]:
    progress("loading whisper and piper", started)
    models = load_speech_models()
    virtual = {}
    for name in REALTIME_SCENARIOS:
        progress(f"virtual time: {name}", started)
        virtual[name] = simulate(SCENARIOS / f"{name}.json", work / "scenarios" / name, models)
    return voice_to_voice(realtime_runs(models, work, started), virtual, load_manifest())


if __name__ == "__main__":
    raise SystemExit(figure_command(__file__, "voice_to_voice", __doc__, measure))
