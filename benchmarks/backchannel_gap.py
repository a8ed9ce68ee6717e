"""The gap a listener's "yeah" makes in a reply, as JSON: from the pause to the first resumed sample.

A long scripted story plays in the virtual room (real whisper, piper, Smart Turn and VAD) while the
user says a backchannel every ``--spacing-s`` seconds: the tuning pool's fixtures in audio/ whose names
start ``nod-`` (piper joe and espeak-ng en-us/en-gb voices; the held-out voices are the scorecard's,
benchmarks/full_duplex.py). Paced by the wall clock by default, so ASR's time counts; ``--virtual``
gives the part no machine can speed up (the rest of the word after the pause, and the silences waited).

For each backchannel: where the speaker fell silent after its onset and where it played again, read
off speaker.wav (a paused buffer hands out exact zeros; piper's own pauses are never exact zeros); any
further pause while the user still said it (``more_gaps_ms``: it went on too soon, between "right" and
"right"; counted in ``paused_again``); and what became of it: ``backchannel`` (told as
input.backchannel), ``resumed`` (taken for a cough or echo), ``cut`` (the reply was cut: a misheard
word) or ``not_paused``. ``word_left_ms`` is the part of the gap
before the end of the user's voice (input.speech_stopped), ``judging_ms`` the rest. Each room (no
echo: ``headset``; ``echo``: -12 dB 40 ms late over -30 dB pink noise) is its own run.

Usage: python benchmarks/backchannel_gap.py [--virtual] [--rooms headset,echo] [--voices joe,usm3]
       [--keep DIR] [--against TREE] [--out FILE]        (about 90 s of room per room, paced)
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from common.harness import print_measured
from common.scenario_runs import AUDIO, ECHO_NOISE_DB, load_manifest, ms, progress, summary

import voice
from voice.audio.block import ENGINE_RATE
from voice.audio.wav import read_wav
from voice.components import SpeechModels, load_speech_models
from voice.sim.run import run_scenario
from voice.sim.scenario import load_scenario

STORY = (
    "Once upon a time, a small red fox lived at the edge of a quiet forest. Every morning she crept down "
    "to the river to watch the fish jump. One day she found a lost duckling there and walked it all the "
    "way home to its mother. The mother duck was so grateful that she invited the fox to dinner. The "
    "fox, who had never been invited anywhere, brushed her tail and arrived early with a bunch of wild "
    "flowers. They ate berries and seeds and talked until the moon rose over the trees. After that evening "
    "the fox and the ducks met every week by the water, and the other animals of the forest began to "
    "wonder what had happened to the sly red fox they used to fear. Some said she had grown soft, others "
    "said she was only waiting, but the ducks knew better. In the spring the duckling, now grown, taught "
    "the fox to swim in the shallow pools. The fox was clumsy at first and splashed about, but by the "
    "summer she could cross the river on her own. And so the fox who had lived alone found a family of "
    "her own by the river, and every evening they sat together on the bank and watched the fish jump."
)
FIRST_NOD_S = 5.0  # the story has begun by then (the question ends near 2.9 s)
ECHO_ROOM = {"echo_gain_db": -12, "echo_delay_ms": 40}
SILENT_RUN = ENGINE_RATE // 50  # 20 ms of exact zeros: the buffer paused
PAUSE_SEARCH_S = 1.0  # the speaker falls silent this soon after a voice's onset, or it was not paused


def nod_fixtures(manifest: dict[str, dict[str, Any]], voices: set[str] | None) -> list[dict[str, Any]]:
    """The backchannel fixtures of the tuning pool, those of ``voices`` (tags such as joe, usm3) only."""
    nods = [entry for name, entry in manifest.items() if name.startswith("nod-")]
    return [e for e in nods if voices is None or e["file"].removesuffix(".wav").rsplit("-", 1)[1] in voices]


def scenario(nods: list[dict[str, Any]], spacing_s: float, room: str) -> dict[str, Any]:
    """The story, asked for and played, with a backchannel every ``spacing_s`` from FIRST_NOD_S."""
    cues = [{"wav": str(AUDIO / "fox-story.wav"), "at_s": 0.5}]
    cues += [
        {"wav": str(AUDIO / nod["file"]), "at_s": round(FIRST_NOD_S + spacing_s * i, 3)}
        for i, nod in enumerate(nods)
    ]
    data: dict[str, Any] = {
        "version": 1,
        "llm": {"replies": [STORY] * (len(nods) + 1), "first_delta_ms": 300, "delta_ms": 40},
        "user": cues,
        "end_s": FIRST_NOD_S + spacing_s * len(nods) + 4.0,
    }
    if room == "echo":
        noise = {"wav": str(AUDIO / "pink-noise.wav"), "gain_db": ECHO_NOISE_DB}
        data["room"] = {**ECHO_ROOM, "noise": noise}
    return data


def first_silence(speaker: np.ndarray, start: int, end: int) -> int | None:
    """The first sample in [start, end) that begins SILENT_RUN exact zeros."""
    zeros = np.concatenate(([0], np.cumsum(speaker[start : end + SILENT_RUN] == 0)))
    runs = np.flatnonzero(zeros[SILENT_RUN:] - zeros[:-SILENT_RUN] == SILENT_RUN)
    runs = runs[runs < end - start]
    return None if not len(runs) else start + int(runs[0])


def silences(speaker: np.ndarray, start: int, end: int) -> list[tuple[int, int | None]]:
    """Each silence (SILENT_RUN exact zeros or more) beginning in [start, end): (its start, where sound
    came back, None if it never did)."""
    found: list[tuple[int, int | None]] = []
    while (silent := first_silence(speaker, start, end)) is not None:
        sound = np.flatnonzero(speaker[silent:] != 0)
        resumed = None if not len(sound) else silent + int(sound[0])
        found.append((silent, resumed))
        if resumed is None:
            break
        start = resumed
    return found


def cue_outcome(
    cue: dict[str, Any], nod: dict[str, Any], speaker: np.ndarray, events: list[dict[str, Any]]
) -> dict[str, Any]:
    """What one backchannel did to the reply, and the gaps it made: the first pause, and any more while
    the user was still saying it (a pause resumed too soon)."""
    onset = cue["at_s"] + nod["start_s"]
    spoken_until = cue["at_s"] + nod["end_s"]
    row: dict[str, Any] = {"wav": nod["file"], "text": nod["text"], "onset_s": round(onset, 3)}
    start = round(onset * ENGINE_RATE)
    found = silences(speaker, start, round((spoken_until + PAUSE_SEARCH_S / 2) * ENGINE_RATE))
    if not found or found[0][0] > start + PAUSE_SEARCH_S * ENGINE_RATE:
        return row | {"outcome": "not_paused"}
    silent, resumed = found[0]
    pause_s = silent / ENGINE_RATE
    row["pause_s"] = round(pause_s, 3)
    until = (found[-1][1] or silent + 5 * ENGINE_RATE) / ENGINE_RATE + 0.05
    during = [e for e in events if onset - 0.05 <= e.get("t", -1.0) <= until]
    kinds = {e["type"] for e in during}
    if "response.interrupted" in kinds:
        heard = [e["text"] for e in during if e["type"] == "input.transcript"]
        return row | {"outcome": "cut", "heard_as": heard}
    if resumed is None:
        return row | {"outcome": "not_resumed"}
    told = [e["text"] for e in during if e["type"] == "input.backchannel"]
    gaps = [ms((back - at) / ENGINE_RATE) for at, back in found if back is not None]
    row |= {"outcome": "backchannel" if told else "resumed", "heard_as": told, "gap_ms": gaps[0]}
    if len(gaps) > 1:
        row["more_gaps_ms"] = gaps[1:]  # it played on between parts of what the user said
    stopped = [e["t"] for e in during if e["type"] == "input.speech_stopped"]
    if stopped:
        word_left = max(0.0, stopped[0] - pause_s)
        row |= {"word_left_ms": ms(word_left), "judging_ms": ms(gaps[0] / 1000 - word_left)}
    return row


def room_figures(
    models: SpeechModels, nods: list[dict[str, Any]], room: str, args: argparse.Namespace, work: Path
) -> dict[str, Any]:
    path = work / f"backchannels-{room}.json"
    path.write_text(json.dumps(scenario(nods, args.spacing_s, room), indent=1), encoding="utf-8")
    out = work / f"run-{room}"
    out.mkdir()
    report = run_scenario(load_scenario(path), out, realtime=not args.virtual, models=models)
    events = [json.loads(line) for line in (out / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    speaker = read_wav(out / "speaker.wav").samples
    rows = [
        cue_outcome(cue, nod, speaker, events)
        for cue, nod in zip(report["user_audio"][1:], nods, strict=True)
    ]
    outcomes = {
        kind: sum(row["outcome"] == kind for row in rows) for kind in ("backchannel", "resumed", "cut")
    }
    went_on = [row for row in rows if "gap_ms" in row]
    return {
        "gap": summary([row["gap_ms"] for row in went_on]),
        "paused_again": sum(len(row.get("more_gaps_ms", [])) for row in went_on),
        "word_left": summary([row["word_left_ms"] for row in went_on if "word_left_ms" in row]),
        "judging": summary([row["judging_ms"] for row in went_on if "judging_ms" in row]),
        "outcomes": outcomes,
        "requests": len(report["turns"]),
        "backchannels_told": len(report.get("backchannels", [])),
        "cues": rows,
    }


def measure(args: argparse.Namespace) -> dict[str, Any]:
    started = time.monotonic()
    progress("loading whisper, piper and Smart Turn", started)
    models = load_speech_models()
    voices = None if args.voices is None else set(args.voices.split(","))
    nods = nod_fixtures(load_manifest(), voices)
    if not nods:
        raise SystemExit("no nod- fixtures for those voices in audio/manifest.json")
    rooms: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="backchannel-gap-") as temporary:
        # with --against, each tree keeps its runs apart, under its folder's name
        work = Path(temporary) if args.keep is None else args.keep / Path(voice.__file__).parents[1].name
        work.mkdir(parents=True, exist_ok=args.keep is None)
        for room in args.rooms.split(","):
            progress(f"room {room}: {len(nods)} backchannels", started)
            rooms[room] = room_figures(models, nods, room, args, work)
    return {
        "paced": "virtual time" if args.virtual else "real time",
        "rooms": rooms,
        "load_1min": round(os.getloadavg()[0], 2),
        "wall_s": round(time.monotonic() - started, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--virtual", action="store_true", help="virtual time: ASR and TTS take no time")
    parser.add_argument("--rooms", default="headset,echo", help="headset, echo or both (comma-separated)")
    parser.add_argument("--voices", help="only these voice tags (joe, usm3, gbf2, usm2, usm4, gb)")
    parser.add_argument(
        "--spacing-s", type=float, default=2.6, help="seconds from one backchannel to the next"
    )
    parser.add_argument("--keep", type=Path, help="keep the runs' outputs here (a folder per tree)")
    parser.add_argument("--against", type=Path, help="another tree to run first, side by side")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    print_measured(__file__, args, lambda: measure(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
