"""How exact the heard prefix stays when ASR and TTS run on a speech server, as JSON.

Every scenario in audio/scenarios with an interruption runs in virtual time three ways: ``local`` (whisper
and piper here, word spans from piper's phoneme alignments), ``wyoming`` (wyoming-faster-whisper and
wyoming-piper on loopback: spans estimated per sentence, from the sentence streaming) and ``openai``
(faster-whisper-server and local-tts-studio, both OpenAI-compatible: spans estimated over each chunk's
whole audio). For each, whisper (its full window) transcribes what speaker.wav really played in every turn
and counts the turns whose reported heard text is within one word of it, exactly equal in length, and
longer than it (``claimed_more``: the model was told of more than whisper hears played).

Both servers' voices add piper's noise, so each remote way runs ``--runs`` times (default 3) for more
interrupted turns; the local way is deterministic and runs once.

Usage (from the repository root): PYTHONPATH=. python benchmarks/remote_speech.py [--runs N]
[--ways local,wyoming,openai] [--against TREE] [--out FILE]   (about 10 minutes on 2 cores with 3 runs)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common.against import print_before_and_after
from common.scenario_runs import SCENARIOS, progress, simulate
from spoken_prefix import full_window_judge, spoken_prefix

from voice.asr.whisper import WhisperTranscriber
from voice.components import SpeechModels, load_speech_models
from voice.speech_backends import synthesizer_for, transcriber_for
from voice.testing.speech_servers import speech_servers
from voice.turn_end.smart_turn import SmartTurn

WAYS = ("local", "wyoming", "openai")


def interrupting_scenarios() -> list[Path]:
    return [
        path
        for path in sorted(SCENARIOS.glob("*.json"))
        if json.loads(path.read_text(encoding="utf-8")).get("expect", {}).get("interruptions", 0) > 0
    ]


def share(hits: list[bool]) -> float | None:
    return round(sum(hits) / len(hits), 3) if hits else None


def measure(
    label: str, models: SpeechModels, work: Path, judge: WhisperTranscriber, started: float, repeats: int = 1
) -> Any:
    runs = []
    for repeat in range(repeats):
        for path in interrupting_scenarios():
            progress(f"{label} {repeat + 1}/{repeats}: {path.stem}", started)
            runs.append(simulate(path, work / label / str(repeat) / path.stem, models))
    prefix = spoken_prefix(runs, judge)
    differences = prefix["interrupted_differences"]
    return {
        "interrupted_turns": prefix["interrupted_turns"],
        "within_one_word": prefix["interrupted_fraction"],
        "exact": share([difference == 0 for difference in differences]),
        "claimed_more": share([difference < 0 for difference in differences]),
        "word_differences": differences,
        "misses": prefix["misses"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3, help="runs of each remote way (default 3)")
    parser.add_argument("--ways", default=",".join(WAYS), help="which ways to run, comma-separated")
    parser.add_argument("--out", type=Path, help="also write the JSON there")
    parser.add_argument("--against", type=Path, help="another source tree to measure first, for before/after")
    args = parser.parse_args()
    ways = args.ways.split(",")
    if unknown := sorted(set(ways) - set(WAYS)):
        parser.error(f"unknown way {', '.join(unknown)}: choose from {', '.join(WAYS)}")

    def measure_ways() -> dict[str, Any]:
        started = time.monotonic()
        load_start = os.getloadavg()
        judge = full_window_judge()
        result: dict[str, Any] = {
            "scenarios": [path.stem for path in interrupting_scenarios()],
            "runs": args.runs,
        }
        with tempfile.TemporaryDirectory(prefix="remote-speech-") as folder, contextlib.ExitStack() as stack:
            work = Path(folder)
            if "local" in ways:
                result["local"] = measure("local", load_speech_models(), work, judge, started)
            if "wyoming" in ways or "openai" in ways:  # the servers take a while to start: only if used
                servers = stack.enter_context(speech_servers(work / "servers"))
                if "wyoming" in ways:
                    wyoming = SpeechModels(
                        transcriber_for(servers.wyoming_whisper),
                        synthesizer_for(servers.wyoming_piper),
                        SmartTurn(),
                    )
                    result["wyoming"] = measure("wyoming", wyoming, work, judge, started, args.runs)
                if "openai" in ways:
                    openai = SpeechModels(
                        transcriber_for(servers.whisper_http),
                        synthesizer_for(servers.piper_http),
                        SmartTurn(),
                    )
                    result["openai"] = measure("openai", openai, work, judge, started, args.runs)
        result["load_average"] = {"start": load_start[0], "end": os.getloadavg()[0]}
        return result

    print_before_and_after(args.against, __file__, sys.argv[1:], measure_ways, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
