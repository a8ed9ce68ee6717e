"""Echo sweep in the virtual room: the user who cuts in, over every echo delay and level, printed as JSON.

For each cell (echo delay 0, 50, 100, 150, 250, 300 ms, by gain 0, -6, -12, -20 dB, by pink noise off or
at -30 dB) one scenario runs in virtual time: "Tell me a short story about a fox.", then
"Sorry, I meant on Sunday." 5.1 s into the story. Per cell:

- ``wer``: the interrupting utterance's transcript against its text; ``wer_alone`` is the same WAV
  transcribed alone, and ``wer_over_alone`` the difference (the bar: at most +0.10);
- ``echo_words``: words of the reply that appear in the user's transcript but not in what they said
  (the assistant's own words leaking into the user's turn; the bar: none);
- ``self_interruptions``: turns cut with no user speech under way, and requests beyond the two expected;
- ``reaction_ms``: from the true onset of the interrupting speech to the end of playback.

Usage: python benchmarks/echo_sweep.py [--delays 0,150] [--gains 0,-20]   (about 6 minutes for all 48 cells)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common.against import run_against, without_against
from common.word_error import wer, words

from voice.audio.wav import read_wav
from voice.components import load_speech_models
from voice.sim.commands import run_scenario
from voice.sim.scenario import load_scenario

AUDIO = Path(__file__).resolve().parents[1] / "audio"
DELAYS_MS = (0, 50, 100, 150, 250, 300)
GAINS_DB = (0, -6, -12, -20)
NOISE_DB = -30
QUESTION = "fox-story.wav"
CUT_IN = "sorry-sunday.wav"
CUT_AFTER_MS = 5100
REPLIES = [
    "Once upon a time, an old grey fox lived alone on a snowy hill. Each winter night he listened to the "
    "owls and counted the stars. When spring came, he finally went down to the valley to find a friend.",
    "Okay, on Sunday then.",
]
# a cell that self-interrupts asks for more replies than the two: it is counted, not a crash
SPARE_REPLIES = ["Sorry, go on."] * 8


def cell_scenario(
    folder: Path, delay_ms: int, gain_db: int, noise: bool, after_ms: int = CUT_AFTER_MS
) -> Path:
    room: dict[str, Any] = {"echo_gain_db": gain_db, "echo_delay_ms": delay_ms}
    if noise:
        room["noise"] = {"wav": str(AUDIO / "pink-noise.wav"), "gain_db": NOISE_DB}
    data = {
        "version": 1,
        "llm": {"replies": REPLIES + SPARE_REPLIES, "first_delta_ms": 300, "delta_ms": 40},
        "room": room,
        "user": [
            {"wav": str(AUDIO / QUESTION), "at_s": 0.5},
            {"wav": str(AUDIO / CUT_IN), "during_reply": 1, "after_ms": after_ms},
        ],
        "end_s": 20,
    }
    path = folder / f"d{delay_ms}-g{-gain_db}-{'noise' if noise else 'quiet'}-a{after_ms}.json"
    path.write_text(json.dumps(data))
    return path


def measure(report: dict[str, Any], manifest: dict[str, dict[str, Any]], alone: float) -> dict[str, Any]:
    cue = next(c for c in report["user_audio"] if c["wav"] == CUT_IN)
    spec = manifest[CUT_IN]
    if cue["at_s"] is None:
        return {"cut_in_played": False}
    onset = cue["at_s"] + spec["start_s"]
    heard = " ".join(
        s["transcript"] or ""
        for s in report["user_speech"]
        if onset - 0.4 <= s["start_s"] <= cue["at_s"] + spec["end_s"]
    )
    said = set(words(spec["text"]))
    reply = set(words(REPLIES[0]))
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


CELL_KEYS = ("delay_ms", "gain_db", "noise", "cut_after_ms")


def sweep(args: argparse.Namespace) -> dict[str, Any]:
    manifest = {f["file"]: f for f in json.loads((AUDIO / "manifest.json").read_text())["fixtures"]}
    models = load_speech_models()
    alone_text = models.transcriber.transcribe(read_wav(AUDIO / CUT_IN)).text
    alone = wer(manifest[CUT_IN]["text"], alone_text)
    cells = []
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="echo-sweep-") as tmp:
        folder = Path(tmp)
        for noise in (False, True):
            for delay in (int(d) for d in args.delays.split(",")):
                for gain in (int(g) for g in args.gains.split(",")):
                    for after in (int(a) for a in args.cut_after.split(",")):
                        path = cell_scenario(folder, delay, gain, noise, after)
                        report = run_scenario(load_scenario(path), folder / path.stem, models=models)
                        cell = dict(zip(CELL_KEYS, (delay, gain, noise, after), strict=True))
                        cell.update(measure(report, manifest, alone))
                        cells.append(cell)
                        print(
                            f"  {time.monotonic() - began:5.0f}s {json.dumps(cell)}",
                            file=sys.stderr,
                            flush=True,
                        )
    played = [c for c in cells if c.get("wer") is not None]
    reactions = sorted(c["reaction_ms"] for c in played if c["reaction_ms"] is not None)
    summary = {
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
    return {"summary": summary, "cells": cells}


def side_by_side(before: dict[str, Any], after: dict[str, Any], tree: str) -> dict[str, Any]:
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


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--delays", default=",".join(map(str, DELAYS_MS)))
    parser.add_argument("--gains", default=",".join(map(str, GAINS_DB)))
    parser.add_argument(
        "--cut-after", default=str(CUT_AFTER_MS), help="ms into the story the user cuts in (a list)"
    )
    parser.add_argument("--against", type=Path, help="another source tree to run first, for before/after")
    args = parser.parse_args()
    if args.against is not None:
        before = run_against(args.against, __file__, without_against(sys.argv[1:]))
        print(json.dumps(side_by_side(before, sweep(args), str(args.against)), indent=2))
    else:
        print(json.dumps(sweep(args), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
