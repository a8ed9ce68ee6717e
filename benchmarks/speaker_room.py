"""What ``[turn] speaker = "conversation"`` costs real users in the virtual room: their cut-ins taken or not,
and how fast the reply stops for them, with and without a television, against ``anyone``.

Each held-out real voice of audio/real/ (never used to tune the verdicts) asks first (a clip of theirs: the
enrolment), the scripted reply tells a story, and 6 s into it they cut in with another clip of theirs. With
``tv`` a television (another real reader, reverberated: RT60 0.6 s, 12 dB under the user's speech level,
talking on without a pause) comes on 1.5 s into the story. Per run: whether the cut-in was taken (the story
interrupted and a request carrying at least half of its reference words), the reaction (the story's last
heard sample after the cut-in's first voiced 20 ms frame), the requests the television caused (requests
beyond the user's two), and the ``another voice`` verdicts. Times are on the room's sample clock (the run is
inline: no compute time in them).

Usage: python benchmarks/speaker_room.py [--out FILE] (about 3 minutes on 2 busy cores)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from common.machine import with_cpu

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav, write_wav
from voice.components import load_speech_models
from voice.sim.room import reverberated, under
from voice.sim.run import run_scenario
from voice.sim.scenario import load_scenario

REAL = Path(__file__).resolve().parents[1] / "audio" / "real"

STORY = (
    "Once upon a time, a small red fox lived at the edge of a quiet forest. Every morning she crept down to "
    "the river to watch the fish jump. One day she found a lost duckling there and walked it all the way "
    "home to its mother. The mother duck was so grateful that she invited the fox to dinner. The fox, who "
    "had never been invited anywhere, brushed her tail and arrived early with a bunch of wild flowers."
)
# (user, their first question, their cut-in, the television's reader)
USERS = (
    ("austen", "austen_880", "austen_930", ("beckett-01", "beckett-02", "beckett-03", "clone_test")),
    ("beckett", "beckett-01", "beckett-03", ("austen_870", "austen_890", "austen_920")),
    ("cards", "cards_5", "cards_2", ("austen_870", "austen_890", "austen_920")),
)
CUT_IN_AFTER_MS = 6000


def words(text: str) -> list[str]:
    return re.findall(r"[a-z']+", text.lower())


def first_voiced_s(path: Path) -> float:
    """Where the clip's voice begins: its first 20 ms frame within 30 dB of its loudest."""
    samples = read_wav(path).samples
    frames = samples[: len(samples) // 320 * 320].reshape(-1, 320).astype(np.float64)
    power = np.mean(frames**2, axis=1)
    return float(np.argmax(power > power.max() / 1000) * 320 / ENGINE_RATE)


def television(folder: Path, user_clip: Path, reader: tuple[str, ...]) -> Path:
    reading = np.concatenate([read_wav(REAL / f"{name}.wav").samples for name in reader] * 3)
    path = folder / "television.wav"
    write_wav(path, AudioBlock(under(reverberated(reading), read_wav(user_clip).samples, 12.0), ENGINE_RATE))
    return path


def run(models: Any, user: tuple[str, str, str, tuple[str, ...]], speaker: str, tv: bool) -> dict[str, Any]:
    _, first, cut_in, reader = user
    folder = Path(tempfile.mkdtemp(prefix="speaker-room-"))
    cues: list[dict[str, Any]] = [{"wav": str(REAL / f"{first}.wav"), "at_s": 0.5}]
    if tv:
        tv_path = television(folder, REAL / f"{first}.wav", reader)
        cues.append({"wav": str(tv_path), "during_reply": 1, "after_ms": 1500})
    cues.append({"wav": str(REAL / f"{cut_in}.wav"), "during_reply": 1, "after_ms": CUT_IN_AFTER_MS})
    scenario = {
        "version": 1,
        "llm": {
            "replies": [STORY, "Yes.", "Yes.", "Yes.", "Yes.", "Yes."],
            "first_delta_ms": 300,
            "delta_ms": 40,
        },
        "user": cues,
        "end_s": 30.0,
        "turn": {"speaker": speaker},
    }
    path = folder / "scenario.json"
    path.write_text(json.dumps(scenario))
    report = run_scenario(load_scenario(path), folder / "out", models=models)
    events = [json.loads(line) for line in (folder / "out" / "events.jsonl").read_text().splitlines()]
    reference = json.loads((REAL / "manifest.json").read_text())
    entries = reference if isinstance(reference, list) else reference.get("utterances", [])
    said = words(next(e["text"] for e in entries if e["file"] == f"{cut_in}.wav"))
    placed = next(c for c in report["user_audio"] if c["wav"] == f"{cut_in}.wav")
    onset = placed["at_s"] + first_voiced_s(REAL / f"{cut_in}.wav")
    turns = report["turns"]
    story = turns[0]
    carried = [words(t["request"][-1]["text"]) for t in turns[1:] if t["request"][-1]["role"] == "user"]
    heard = max((len(set(c) & set(said)) / len(set(said)) for c in carried), default=0.0)
    taken = bool(story["interrupted"]) and heard >= 0.5
    return {
        "cut_in_taken": taken,
        "cut_in_words_heard": heard,
        "reaction_ms": (story["audio_end_s"] - onset) * 1000 if taken else None,
        "requests": len(turns),
        "another_voice": sum(e["type"] == "input.ignored" and e["why"] == "another voice" for e in events),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", help="also write the JSON here")
    args = parser.parse_args()
    result: dict[str, Any] = {"load_average_before": os.getloadavg()[0]}
    models = load_speech_models()
    for user in USERS:
        for tv in (False, True):
            for speaker in ("anyone", "conversation"):
                key = f"{user[0]}, {'television' if tv else 'quiet room'}, {speaker}"
                print(key, file=sys.stderr, flush=True)
                result[key] = run(models, user, speaker, tv)
    result["load_average_after"] = os.getloadavg()[0]
    text = json.dumps(with_cpu(result), indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
