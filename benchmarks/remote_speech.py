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

from against import print_before_and_after
from scenario_runs import SCENARIOS, Run, progress, simulate
from spoken_prefix import spoken_prefix
from word_error import words

from tests.remote.servers import speech_servers
from voice.asr.whisper import WhisperSettings, WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav
from voice.components import SpeechModels, load_speech_models
from voice.remote.speech import synthesizer_for, transcriber_for
from voice.turn_end.smart_turn import SmartTurn


def interrupting_scenarios() -> list[Path]:
    return [
        path
        for path in sorted(SCENARIOS.glob("*.json"))
        if json.loads(path.read_text(encoding="utf-8")).get("expect", {}).get("interruptions", 0) > 0
    ]


def word_differences(runs: list[Run], judge: WhisperTranscriber) -> list[int]:
    """For each interrupted turn, the words whisper finds in what played less those of its heard text."""
    differences: list[int] = []
    for run in runs:
        speaker = read_wav(run.out / "speaker.wav").samples
        for turn in run.report["turns"]:
            if not turn["interrupted"] or turn["audio_start_s"] is None:
                continue
            start, end = (round(turn[key] * ENGINE_RATE) for key in ("audio_start_s", "audio_end_s"))
            played = judge.transcribe(AudioBlock(speaker[start:end], ENGINE_RATE)).text
            differences.append(len(words(played)) - len(words(turn["spoken"])))
    return differences


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
    differences = word_differences(runs, judge)
    return {
        "interrupted_turns": prefix["interrupted_turns"],
        "within_one_word": prefix["interrupted_fraction"],
        "exact": share([difference == 0 for difference in differences]),
        "claimed_more": share([difference < 0 for difference in differences]),
        "word_differences": sorted(differences),
        "misses": prefix["misses"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3, help="runs of each remote way (default 3)")
    parser.add_argument("--ways", default="local,wyoming,openai", help="which ways to run, comma-separated")
    parser.add_argument("--out", type=Path, help="also write the JSON there")
    parser.add_argument("--against", type=Path, help="another source tree to measure first, for before/after")
    args = parser.parse_args()
    ways = args.ways.split(",")

    def measure_ways() -> dict[str, Any]:
        started = time.monotonic()
        load_start = os.getloadavg()
        judge = WhisperTranscriber(WhisperSettings(short_window=False))
        result: dict[str, Any] = {
            "scenarios": [path.stem for path in interrupting_scenarios()],
            "runs": args.runs,
        }
        with tempfile.TemporaryDirectory(prefix="remote-speech-") as folder, contextlib.ExitStack() as stack:
            work = Path(folder)
            if "local" in ways:
                result["local"] = measure("local", load_speech_models(), work, judge, started)
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
                    transcriber_for(servers.whisper_http), synthesizer_for(servers.piper_http), SmartTurn()
                )
                result["openai"] = measure("openai", openai, work, judge, started, args.runs)
        result["load_average"] = {"start": load_start[0], "end": os.getloadavg()[0]}
        return result

    print_before_and_after(args.against, __file__, sys.argv[1:], measure_ways, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
