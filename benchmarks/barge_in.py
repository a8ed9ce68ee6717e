"""Barge-in: how soon does the reply fall silent when the user cuts in, and does its own voice ever stop it?

Modes (each prints one JSON object; progress goes to stderr):

- ``room``: every scenario of audio/scenarios in virtual time (deterministic): for each interrupted turn,
  the TRUE onset of the interrupting speech (its cue's placed time plus the WAV's measured ``start_s`` in
  audio/manifest.json) to the end of playback (the turn's ``audio_end_s``), n/p50/p95/max in ms without
  and with echo (``barge_in_reaction``); then room-echo-noise and plain-turn again with echo at -6, -10,
  -14 and -20 dB over -30 dB pink noise: self-interruptions (a turn cut with no user speech onset inside
  its audio), false barge-ins (pauses that resumed), unfinished replies and the reaction, per level
  (``echo_robustness``). ``--only reaction|echo`` runs one of the two.
- ``sweep``: the user who cuts in over every echo delay (0-300 ms) by gain (0 to -20 dB), without and with
  -30 dB pink noise: "Tell me a short story about a fox.", then "Sorry, I meant on Sunday." 5.1 s into the
  story. Per cell: ``wer`` of the cut-in's transcript, ``wer_alone`` (the same WAV alone) and
  ``wer_over_alone`` (bar: at most +0.10), ``echo_words`` (reply words leaking into the user's transcript;
  bar: none), ``self_interruptions`` (turns cut with no user speech under way, and requests beyond the
  two expected; bar: none) and ``reaction_ms``.
- ``pulse``: on a private PulseAudio null sink, the speaker opened as `voice chat` opens it plays white
  noise and is paused ``--after-s`` in as a barge-in pauses it: ``sounding_after_pause_ms`` (the reply
  still reaching the mic after the pause, on the mic's clock), ``heard_gap_ms`` (what reached the sink
  less what the buffer counts as played; positive: heard, not counted), ``counted_ahead_ms_max`` (how far
  the progress reported before the pause ran ahead of what reached the sink), the underflows.

Every mode takes ``--against TREE``: the same command on TREE's voice package first, then this tree's,
side by side. The real sound loop over an hour is device_soak.py; the kiosk's page audio,
kiosk_cut_in_load.py.

Usage: python benchmarks/barge_in.py room [--only reaction|echo] [--keep DIR] [--against TREE]
       python benchmarks/barge_in.py sweep [--delays 0,150] [--gains 0,-20] [--cut-after MS,...]
                                           [--against TREE]
       python benchmarks/barge_in.py pulse [--trials 12] [--after-s 1.5] [--out FILE] [--against TREE]
(room: a few minutes on 2 cores; sweep: about 6 minutes for all 48 cells; pulse: about a minute)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from common.against import run_against, without_against
from common.harness import print_measured
from common.machine import with_cpu
from common.scenario_runs import (
    AUDIO,
    ECHO_NOISE_DB,
    SWEEP_CUT_AFTER_MS,
    SWEEP_CUT_IN,
    SWEEP_DELAYS_MS,
    SWEEP_GAINS_DB,
    SWEEP_REPLIES,
    EchoLevel,
    Run,
    add_run_options,
    echo_runs,
    load_manifest,
    print_figures,
    progress,
    scenario_runs,
    summary,
    sweep_cell,
    turn_outcomes,
)
from common.word_error import wer, words

import voice
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.devices import rescan_devices
from voice.audio.playback import PlaybackBuffer
from voice.audio.pulse import private_pulse
from voice.audio.wav import read_wav
from voice.chat.driver import DeviceSettings, device_openers
from voice.components import load_speech_models
from voice.sim.run import run_scenario
from voice.sim.scenario import load_scenario

# --- room: the scenarios and their echo variants, in virtual time


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


def room(args: argparse.Namespace) -> int:
    def measure(work: Path, started: float) -> dict[str, Any]:
        progress("loading whisper and piper", started)
        models, manifest, found = load_speech_models(), load_manifest(), {}
        if args.only in (None, "reaction"):
            found["barge_in_reaction"] = barge_in_reaction(scenario_runs(models, work, started), manifest)
        if args.only in (None, "echo"):
            found["echo_robustness"] = echo_robustness(echo_runs(models, work, started), manifest)
        return found

    return print_figures(__file__, args, "barge-in-room", measure)


# --- sweep: the user who cuts in, over every echo delay and level

CELL_KEYS = ("delay_ms", "gain_db", "noise", "cut_after_ms")


def cell_figures(report: dict[str, Any], manifest: dict[str, dict[str, Any]], alone: float) -> dict[str, Any]:
    cue = next(c for c in report["user_audio"] if c["wav"] == SWEEP_CUT_IN)
    spec = manifest[SWEEP_CUT_IN]
    if cue["at_s"] is None:
        return {"cut_in_played": False}
    onset = cue["at_s"] + spec["start_s"]
    heard = " ".join(
        s["transcript"] or ""
        for s in report["user_speech"]
        if onset - 0.4 <= s["start_s"] <= cue["at_s"] + spec["end_s"]
    )
    said = set(words(spec["text"]))
    reply = set(words(SWEEP_REPLIES[0]))
    turns = report["turns"]
    cut = [t for t in turns if t["interrupted"]]
    early = [t for t in cut if t["barge_in_s"] is not None and t["barge_in_s"] < onset - 0.05]
    reaction = [round((t["audio_end_s"] - onset) * 1000) for t in cut if t not in early]
    return {
        "heard": heard,
        "wer": round(wer(spec["text"], heard), 2),
        "wer_over_alone": round(wer(spec["text"], heard) - alone, 2),
        "echo_words": sorted({w for w in words(heard) if w in reply and w not in said}),
        "self_interruptions": len(early) + max(0, len(turns) - 2),
        "reaction_ms": reaction[0] if reaction else None,
    }


def sweep_cells(args: argparse.Namespace) -> dict[str, Any]:
    manifest = load_manifest()
    models = load_speech_models()
    alone_text = models.transcriber.transcribe(read_wav(AUDIO / SWEEP_CUT_IN)).text
    alone = wer(manifest[SWEEP_CUT_IN]["text"], alone_text)
    cells = []
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="echo-sweep-") as tmp:
        folder = Path(tmp)
        for noise in (False, True):
            for delay in (int(d) for d in args.delays.split(",")):
                for gain in (int(g) for g in args.gains.split(",")):
                    for after in (int(a) for a in args.cut_after.split(",")):
                        path = sweep_cell(folder, delay, gain, noise, after)
                        report = run_scenario(load_scenario(path), folder / path.stem, models=models)
                        cell = dict(zip(CELL_KEYS, (delay, gain, noise, after), strict=True))
                        cell.update(cell_figures(report, manifest, alone))
                        cells.append(cell)
                        progress(json.dumps(cell), began)
    played = [c for c in cells if c.get("wer") is not None]
    reactions = sorted(c["reaction_ms"] for c in played if c["reaction_ms"] is not None)
    totals = {
        "cells": len(cells),
        "wer_alone": round(alone, 2),
        "alone_transcript": alone_text,
        "cells_within_0.10_of_alone": sum(c["wer_over_alone"] <= 0.10 for c in played),
        "mean_wer": round(sum(c["wer"] for c in played) / max(1, len(played)), 3),
        "worst_wer": max((c["wer"] for c in played), default=None),
        "cells_with_echo_words": sum(bool(c["echo_words"]) for c in played),
        "self_interruptions": sum(c["self_interruptions"] for c in played),
        "cut_in_missed": sum(c["reaction_ms"] is None for c in played) + len(cells) - len(played),
        "reaction_ms": {
            "p50": reactions[len(reactions) // 2] if reactions else None,
            "max": reactions[-1] if reactions else None,
        },
    }
    return {"summary": totals, "cells": cells}


def cells_side_by_side(before: dict[str, Any], after: dict[str, Any], tree: str) -> dict[str, Any]:
    """One row per cell with the before and after measurements next to each other."""
    earlier = {tuple(c[k] for k in CELL_KEYS): c for c in before["cells"]}
    rows = []
    for cell in after["cells"]:
        key = tuple(cell[k] for k in CELL_KEYS)
        old = earlier.get(key, {})
        row = dict(zip(CELL_KEYS, key, strict=True))
        row["before"] = {k: v for k, v in old.items() if k not in CELL_KEYS}
        row["after"] = {k: v for k, v in cell.items() if k not in CELL_KEYS}
        rows.append(row)
    return {"before": {"tree": tree, **before["summary"]}, "after": after["summary"], "cells": rows}


def sweep(args: argparse.Namespace) -> int:
    if args.against is None:
        print(json.dumps(with_cpu(sweep_cells(args)), indent=2))
        return 0
    before = run_against(args.against, __file__, without_against(sys.argv[1:]))
    print(json.dumps(with_cpu(cells_side_by_side(before, sweep_cells(args), str(args.against))), indent=2))
    return 0


# --- pulse: what a paused reply still plays on PulseAudio

SETTLE_S = 0.6  # after the pause: longer than PulseAudio holds, so the held audio has played or not


def pulse_trial(after_s: float, seed: int) -> dict[str, Any]:
    blocks: list[AudioBlock] = []
    lock = threading.Lock()

    def heard(block: AudioBlock) -> None:
        with lock:
            blocks.append(block)

    def mic_audio() -> np.ndarray:
        with lock:
            return np.concatenate([b.samples for b in blocks]) if blocks else np.zeros(0, np.float32)

    open_input, open_output = device_openers(DeviceSettings("pulse", "pulse"))
    buffer = PlaybackBuffer(ENGINE_RATE)
    speaker = open_output(buffer, lambda block: None)
    mic = open_input(heard)
    try:
        deadline = time.monotonic() + 10
        while len(mic_audio()) < ENGINE_RATE // 5 and time.monotonic() < deadline:
            time.sleep(0.02)
        reply = (np.random.default_rng(seed).standard_normal(4 * ENGINE_RATE) * 0.1).astype(np.float32)
        buffer.enqueue(reply, turn=1)
        time.sleep(after_s)
        cut_at = len(mic_audio())
        counted_before = buffer.audio_played_at(speaker.position - speaker.latency_samples)
        buffer.pause()
        silence = getattr(speaker, "silence_unplayed", None)
        silenced = silence() if silence is not None else None
        until = time.monotonic() + SETTLE_S
        while time.monotonic() < until:  # as the driver checks between mic blocks
            unmute = getattr(speaker, "unmute_when_played", None)
            if unmute is not None:
                unmute()
            time.sleep(0.04)
        counted = buffer.audio_played_to
        underflows = speaker.underflows
    finally:
        mic.close()
        speaker.close()
    audio = mic_audio()
    loud = np.flatnonzero(np.abs(audio) > 1e-3)
    if not len(loud):
        return {"seed": seed, "heard": False}
    first, end = int(loud[0]), int(loud[-1]) + 1
    reached = end - first

    def ms(samples: int) -> float:
        return round(samples * 1000 / ENGINE_RATE, 1)

    return {
        "seed": seed,
        "silenced": silenced is not None,
        "sounding_after_pause_ms": ms(end - cut_at),
        "heard_gap_ms": ms(reached - counted),
        "counted_ahead_ms": ms(max(0, counted_before - reached)),
        "underflows": underflows,
    }


def pulse_trials(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    load_start = os.getloadavg()
    with private_pulse(folder / "pulse") as server:
        os.environ["PULSE_SERVER"] = server
        rescan_devices()
        rows = [pulse_trial(args.after_s + 0.0137 * n, n) for n in range(args.trials)]
    done = [row for row in rows if "sounding_after_pause_ms" in row]

    def median(key: str) -> float | None:
        return round(statistics.median(row[key] for row in done), 1) if done else None

    return {
        "voice_package": str(Path(voice.__file__).parent),
        "trials": len(rows),
        "silenced": sum(bool(row.get("silenced")) for row in rows),
        "sounding_after_pause_ms": {
            "p50": median("sounding_after_pause_ms"),
            "max": max((row["sounding_after_pause_ms"] for row in done), default=None),
        },
        "heard_gap_ms": {
            "p50": median("heard_gap_ms"),
            "min": min((row["heard_gap_ms"] for row in done), default=None),
            "max": max((row["heard_gap_ms"] for row in done), default=None),
        },
        "counted_ahead_ms_max": max((row["counted_ahead_ms"] for row in done), default=None),
        "underflows": sum(row["underflows"] for row in done),
        "load_average": {
            "start": [round(x, 2) for x in load_start],
            "end": [round(x, 2) for x in os.getloadavg()],
        },
        "rows": rows,
    }


def pulse(args: argparse.Namespace) -> int:
    def measure() -> dict[str, Any]:
        with tempfile.TemporaryDirectory(prefix="pulse-cut-") as folder:
            return pulse_trials(args, Path(folder))

    print_measured(__file__, args, measure)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    modes = parser.add_subparsers(dest="mode", required=True, metavar="MODE")
    room_mode = modes.add_parser("room", help="the scenarios and their echo variants, virtual time")
    room_mode.add_argument("--only", choices=("reaction", "echo"), help="one of the two figures")
    add_run_options(room_mode)
    room_mode.set_defaults(command=room)
    sweep_mode = modes.add_parser("sweep", help="a cut-in over every echo delay and level")
    sweep_mode.add_argument("--delays", default=",".join(map(str, SWEEP_DELAYS_MS)))
    sweep_mode.add_argument("--gains", default=",".join(map(str, SWEEP_GAINS_DB)))
    sweep_mode.add_argument(
        "--cut-after", default=str(SWEEP_CUT_AFTER_MS), help="ms into the story the user cuts in (a list)"
    )
    sweep_mode.add_argument("--against", type=Path, help="another tree to run first, side by side")
    sweep_mode.set_defaults(command=sweep)
    pulse_mode = modes.add_parser("pulse", help="what a paused reply still plays on PulseAudio")
    pulse_mode.add_argument("--trials", type=int, default=12)
    pulse_mode.add_argument("--after-s", type=float, default=1.5, help="into the reply before the pause")
    pulse_mode.add_argument("--out", type=Path, help="also write the JSON there")
    pulse_mode.add_argument("--against", type=Path, help="another tree to measure first, side by side")
    pulse_mode.set_defaults(command=pulse)
    args = parser.parse_args()
    result: int = args.command(args)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
