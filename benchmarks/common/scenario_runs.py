"""What the barge-in figures share: running the scenarios of audio/scenarios and reading their reports.

A run's report.json and the fixtures' manifest (the true onset and end of each WAV's speech) give every
figure its times; ``print_figures`` runs a command's figures in one process, before and after with --against.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from common.against import run_against, without_against
from common.machine import with_cpu
from voice.audio.vad import DEFAULT_QUIET
from voice.components import SpeechModels
from voice.sim.run import run_scenario
from voice.sim.scenario import load_scenario

AUDIO = Path(__file__).resolve().parents[2] / "audio"
SCENARIOS = AUDIO / "scenarios"
ECHO_LEVELS_DB = (-6.0, -10.0, -14.0, -20.0)
ECHO_NOISE_DB = -30.0
ECHO_BASES = ("room-echo-noise", "plain-turn")
LOCAL_MAX_TOKENS = 60  # as `voice demo` asks
LOCAL_RUNS = 3  # runs of the demo conversation with the embedded LLM
# An onset may sit up to one VAD frame after the last played sample and still be the cause of the stop.
ONSET_SLACK_S = 0.05
ENDPOINTING_MS = float(DEFAULT_QUIET.end_silence_ms)  # the VAD's end silence, in every voice-to-voice figure


@dataclass(frozen=True)
class Run:
    """One scenario run: its name, the report, where its outputs are, and whether the room had echo."""

    name: str
    report: dict[str, Any]
    out: Path
    echo_db: float | None


@dataclass(frozen=True)
class EchoLevel:
    """The echo variants of ``ECHO_BASES`` run at one echo gain."""

    echo_db: float
    runs: list[Run]


def progress(message: str, started: float) -> None:
    print(f"[{time.monotonic() - started:6.1f} s] {message}", file=sys.stderr, flush=True)


def load_manifest() -> dict[str, dict[str, Any]]:
    data = json.loads((AUDIO / "manifest.json").read_text(encoding="utf-8"))
    return {fixture["file"]: fixture for fixture in data["fixtures"]}


def speech_cues(report: dict[str, Any], manifest: dict[str, dict[str, Any]]) -> list[tuple[float, float]]:
    """(true onset, true end) in seconds of every user speech cue that was placed on the mic."""
    return [
        (cue["at_s"] + manifest[cue["wav"]]["start_s"], cue["at_s"] + manifest[cue["wav"]]["end_s"])
        for cue in report["user_audio"]
        if cue["at_s"] is not None and manifest[cue["wav"]]["kind"] == "speech"
    ]


def interrupting_onset(turn: dict[str, Any], cues: list[tuple[float, float]]) -> float | None:
    """The earliest speech onset inside the turn's audio span, or None if no user spoke while it played."""
    onsets = [
        onset for onset, _end in cues if turn["audio_start_s"] <= onset <= turn["audio_end_s"] + ONSET_SLACK_S
    ]
    return min(onsets, default=None)


def ms(seconds: float) -> float:
    return round(seconds * 1000.0, 1)


def summary(values_ms: list[float]) -> dict[str, Any]:
    if not values_ms:
        return {"n": 0, "p50_ms": None, "p95_ms": None, "max_ms": None}
    values = np.asarray(values_ms)
    return {
        "n": len(values_ms),
        "p50_ms": round(float(np.percentile(values, 50)), 1),
        "p95_ms": round(float(np.percentile(values, 95)), 1),
        "max_ms": round(float(values.max()), 1),
    }


def simulate(path: Path, out: Path, models: SpeechModels, *, realtime: bool = False) -> Run:
    scenario = load_scenario(path)
    out.mkdir(parents=True)
    report = run_scenario(scenario, out, realtime=realtime, models=models)
    return Run(path.stem, report, out, scenario.room.echo_gain_db)


def scenario_runs(models: SpeechModels, work: Path, started: float) -> list[Run]:
    """Every scenario in audio/scenarios, once, in virtual time."""
    runs: list[Run] = []
    for path in sorted(SCENARIOS.glob("*.json")):
        progress(f"scenario {path.stem}", started)
        runs.append(simulate(path, work / "scenarios" / path.stem, models))
    return runs


def echo_variant(base: str, echo_db: float, folder: Path) -> Path:
    """A copy of scenario ``base`` with absolute wav paths, echo at ``echo_db`` and pink noise under it."""
    data = json.loads((SCENARIOS / f"{base}.json").read_text(encoding="utf-8"))
    for cue in data["user"]:
        cue["wav"] = str((SCENARIOS / cue["wav"]).resolve())
    room = data.get("room", {})
    room["echo_gain_db"] = echo_db
    room["noise"] = {"wav": str((AUDIO / "pink-noise.wav").resolve()), "gain_db": ECHO_NOISE_DB}
    data["room"] = room
    path = folder / f"{base}-echo{int(echo_db)}.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def echo_runs(models: SpeechModels, work: Path, started: float) -> list[EchoLevel]:
    """``ECHO_BASES`` at each of ``ECHO_LEVELS_DB`` over pink noise, in virtual time."""
    variants = work / "echo-scenarios"
    variants.mkdir(parents=True)
    levels: list[EchoLevel] = []
    for echo_db in ECHO_LEVELS_DB:
        runs = []
        for base in ECHO_BASES:
            progress(f"echo {echo_db:+.0f} dB: {base}", started)
            path = echo_variant(base, echo_db, variants)
            runs.append(simulate(path, work / "echo" / path.stem, models))
        levels.append(EchoLevel(echo_db, runs))
    return levels


def turn_outcomes(run: Run, manifest: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per run: reactions of real interruptions, self-interruptions, false barge-ins, unfinished replies."""
    cues = speech_cues(run.report, manifest)
    reactions: list[dict[str, Any]] = []
    self_interruptions: list[dict[str, Any]] = []
    unfinished = 0
    for index, turn in enumerate(run.report["turns"], start=1):
        if not turn["interrupted"]:
            unfinished += turn["audio_start_s"] is not None and turn["spoken"] != turn["reply"]
            continue
        if turn["audio_start_s"] is None:
            continue  # cancelled while thinking: nothing was playing, so there is nothing to stop
        onset = interrupting_onset(turn, cues)
        if onset is None:
            self_interruptions.append(
                {
                    "turn": index,
                    "audio_start_s": turn["audio_start_s"],
                    "audio_end_s": turn["audio_end_s"],
                    "barge_in_s": turn["barge_in_s"],
                }
            )
            continue
        reactions.append(
            {
                "turn": index,
                "onset_s": round(onset, 3),
                "barge_in_s": turn["barge_in_s"],
                "audio_end_s": turn["audio_end_s"],
                "reaction_ms": ms(turn["audio_end_s"] - onset),
            }
        )
    return {
        "turns": len(run.report["turns"]),
        "interrupted": sum(turn["interrupted"] for turn in run.report["turns"]),
        "reactions": reactions,
        "self_interruptions": self_interruptions,
        "false_barge_ins": sum(turn.get("false_barge_ins", 0) for turn in run.report["turns"]),
        "unfinished_replies": unfinished,
    }


def reply_delays(run: Run, manifest: dict[str, dict[str, Any]]) -> dict[int, tuple[float, float]]:
    """Turn number → (end of the user's speech it answers, first reply audio), for turns answering a user."""
    ends = [end for _onset, end in speech_cues(run.report, manifest)]
    delays = {}
    for index, turn in enumerate(run.report["turns"], start=1):
        if turn["audio_start_s"] is None or turn["request"][-1]["role"] != "user":
            continue  # nothing played, or a follow-up that answers a tool result
        before = [end for end in ends if end <= turn["audio_start_s"]]
        if before:
            delays[index] = (max(before), turn["audio_start_s"])
    return delays


def latency_row(turn: int, user_end: float, audio_start: float) -> dict[str, Any]:
    """One turn's voice-to-voice figure: end of the user's speech to the first reply audio."""
    latency = ms(audio_start - user_end)
    return {
        "turn": turn,
        "user_end_s": round(user_end, 3),
        "audio_start_s": audio_start,
        "ms": latency,
        "minus_endpointing_ms": round(latency - ENDPOINTING_MS, 1),
    }


def median_latency(latencies_ms: list[float]) -> dict[str, float | None]:
    median = round(statistics.median(latencies_ms), 1) if latencies_ms else None
    return {
        "median_ms": median,
        "median_minus_endpointing_ms": None if median is None else round(median - ENDPOINTING_MS, 1),
    }


def latency_rows(run: Run, manifest: dict[str, dict[str, Any]]) -> list[tuple[dict[str, Any], float, float]]:
    """Per turn answering the user: its :func:`latency_row`, end of the user's speech, first reply audio."""
    return [
        (latency_row(index, user_end, audio_start), user_end, audio_start)
        for index, (user_end, audio_start) in reply_delays(run, manifest).items()
    ]


def latency_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The VAD's endpointing silence and the median of the rows' voice-to-voice figures."""
    return {"endpointing_ms": ENDPOINTING_MS, **median_latency([row["ms"] for row in rows])}


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """``--keep DIR`` (every run's outputs kept there) and ``--against TREE`` (that tree's voice first)."""
    parser.add_argument(
        "--keep", type=Path, help="write every run's outputs here (a new folder) and keep them"
    )
    parser.add_argument("--against", type=Path, help="another tree to run first, side by side")


def print_figures(
    script: str, args: argparse.Namespace, prefix: str, measure: Callable[[Path, float], dict[str, Any]]
) -> int:
    """``measure(work, started)``'s figures printed with ``load_1min`` and ``wall_s``.

    ``work`` is ``args.keep`` or a temporary folder; with ``args.against`` the same command runs on that
    tree's voice package first and ``{"before": ..., "after": ...}`` is printed.
    """
    before = None
    if args.against is not None:
        before = run_against(args.against, script, without_against(sys.argv[1:]))
    started = time.monotonic()
    if args.keep is not None:
        args.keep.mkdir(parents=True)
        figures = measure(args.keep, started)
    else:
        with tempfile.TemporaryDirectory(prefix=f"{prefix}-") as folder:
            figures = measure(Path(folder), started)
    after = {
        **figures,
        "load_1min": round(os.getloadavg()[0], 2),
        "wall_s": round(time.monotonic() - started, 1),
    }
    progress("done", started)
    print(json.dumps(with_cpu(after if before is None else {"before": before, "after": after}), indent=2))
    return 0


def at_once_variant(name: str, folder: Path) -> Path:
    """A copy of scenario ``name`` whose scripted LLM has its whole reply at once (no first-delta delay)."""
    data = json.loads((SCENARIOS / f"{name}.json").read_text(encoding="utf-8"))
    for cue in data["user"]:
        if "wav" in cue:
            cue["wav"] = str((SCENARIOS / cue["wav"]).resolve())
    data["llm"]["first_delta_ms"] = 0
    data["llm"]["delta_ms"] = 0
    path = folder / f"{name}-at-once.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


# The echo sweep's room (barge_in.py sweep): the fox story asked for, and a cut-in
# CUT_AFTER_MS into it, at one echo delay and gain, without or with pink noise under it.
SWEEP_DELAYS_MS = (0, 50, 100, 150, 250, 300)
SWEEP_GAINS_DB = (0, -6, -12, -20)
SWEEP_NOISE_DB = -30
SWEEP_QUESTION = "fox-story.wav"
SWEEP_CUT_IN = "sorry-sunday.wav"
SWEEP_CUT_AFTER_MS = 5100
SWEEP_REPLIES = [
    "Once upon a time, an old grey fox lived alone on a snowy hill. Each winter night he listened to the "
    "owls and counted the stars. When spring came, he finally went down to the valley to find a friend.",
    "Okay, on Sunday then.",
]
# a cell that self-interrupts asks for more replies than the two: it is counted, not a crash
SPARE_REPLIES = ["Sorry, go on."] * 8


def sweep_cell(
    folder: Path,
    delay_ms: int,
    gain_db: int,
    noise: bool,
    after_ms: int = SWEEP_CUT_AFTER_MS,
    cut_in: Path = AUDIO / SWEEP_CUT_IN,
) -> Path:
    """The scenario of one cell of the echo sweep, written into ``folder``."""
    room: dict[str, Any] = {"echo_gain_db": gain_db, "echo_delay_ms": delay_ms}
    if noise:
        room["noise"] = {"wav": str(AUDIO / "pink-noise.wav"), "gain_db": SWEEP_NOISE_DB}
    data = {
        "version": 1,
        "llm": {"replies": SWEEP_REPLIES + SPARE_REPLIES, "first_delta_ms": 300, "delta_ms": 40},
        "room": room,
        "user": [
            {"wav": str(AUDIO / SWEEP_QUESTION), "at_s": 0.5},
            {"wav": str(cut_in), "during_reply": 1, "after_ms": after_ms},
        ],
        "end_s": 20,
    }
    path = folder / f"d{delay_ms}-g{-gain_db}-{'noise' if noise else 'quiet'}-a{after_ms}.json"
    path.write_text(json.dumps(data))
    return path
