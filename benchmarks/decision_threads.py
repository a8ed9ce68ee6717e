"""Whisper's thread count at a pause: whisper and Smart Turn side by side, as the engine asks them.

At a pause the engine asks whisper for the words and Smart Turn whether the turn is over, each on its own
worker; the decision waits for both. For each whisper thread count, on the project's questions cut at
their last word (plus 0.1 s): whisper alone, Smart Turn alone (one thread, as it runs), and both at once
from two threads, the decision being the later of the two; then one long utterance (the questions joined,
twice) alone, where more threads would pay most. ``0`` is what ``voice`` takes when none is set
(``voice.asr.whisper.default_threads``: half the cores); with ``--against`` a tree from before it gives
``0`` to CTranslate2, which chooses for itself.

Usage: python benchmarks/decision_threads.py [--threads 1 2 0] [--runs 5] [--against TREE] [--out FILE]
(about a minute)
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from common.harness import common_options, print_measured, spread, timed

from voice.asr.whisper import WhisperSettings, WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav
from voice.turn_end.smart_turn import SmartTurn

AUDIO = Path(__file__).resolve().parents[1] / "audio"
QUESTIONS = ("what-weather.wav", "check-sunday.wav", "what-wear.wav", "fox-story.wav", "what-weekend.wav")


def questions() -> list[AudioBlock]:
    fixtures = {f["file"]: f for f in json.loads((AUDIO / "manifest.json").read_text())["fixtures"]}
    cut = []
    for name in QUESTIONS:
        samples = read_wav(AUDIO / name).samples
        cut.append(AudioBlock(samples[: round((fixtures[name]["end_s"] + 0.1) * ENGINE_RATE)], ENGINE_RATE))
    return cut


def side_by_side(whisper: WhisperTranscriber, judge: SmartTurn, audio: AudioBlock) -> dict[str, float]:
    """Milliseconds to whisper's words, to Smart Turn's verdict, and to both, asked at once."""
    done: dict[str, float] = {}
    start = time.perf_counter()

    def run(name: str, work: Any) -> None:
        work(audio)
        done[name] = (time.perf_counter() - start) * 1000.0

    workers = [
        threading.Thread(target=run, args=("whisper", whisper.transcribe)),
        threading.Thread(target=run, args=("smart_turn", judge.probability_complete)),
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return done | {"both": max(done.values())}


def one_count(threads: int, clips: list[AudioBlock], long: AudioBlock, judge: SmartTurn, runs: int) -> Any:
    """The figures of whisper at ``threads`` threads (0: voice's default for this machine)."""
    whisper = WhisperTranscriber(WhisperSettings(cpu_threads=threads))
    for clip in clips[:2]:  # warm up
        whisper.transcribe(clip)
        judge.probability_complete(clip)
    rows = [side_by_side(whisper, judge, clip) for _ in range(runs) for clip in clips]
    alone = [t for clip in clips for t in timed(lambda: whisper.transcribe(clip), runs)]  # noqa: B023
    judged = [t for clip in clips for t in timed(lambda: judge.probability_complete(clip), runs)]  # noqa: B023
    return {
        "whisper_alone_ms": spread(alone),
        "smart_turn_alone_ms": spread(judged),
        "side_by_side_ms": {
            key: spread(row[key] for row in rows) for key in ("whisper", "smart_turn", "both")
        },
        "long_utterance_alone_ms": spread(timed(lambda: whisper.transcribe(long), runs, warmup=1)),
    }


def measure(args: argparse.Namespace) -> dict[str, Any]:
    clips = questions()
    long = AudioBlock(np.concatenate([clip.samples for clip in clips] * 2), ENGINE_RATE)
    judge = SmartTurn()
    by_count = {str(threads): one_count(threads, clips, long, judge, args.runs) for threads in args.threads}
    return {
        "long_utterance_s": round(long.duration_s, 1),
        "default_threads_here": voice_default_threads(),
        "decision_median_ms": {
            key: value["side_by_side_ms"]["both"]["p50"] for key, value in by_count.items()
        },
        "by_threads": by_count,
    }


def voice_default_threads() -> int | None:
    """What ``0`` gives whisper in this tree (None: a tree from before, where CTranslate2 chose itself)."""
    from voice.asr import whisper

    default = getattr(whisper, "default_threads", None)
    return None if default is None else int(default())


def thread_count(text: str) -> int:
    count = int(text)
    if count < 0:
        raise argparse.ArgumentTypeError("a thread count is 0 (voice's default here) or a positive number")
    return count


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--threads", nargs="+", type=thread_count, default=[1, 2], help="the counts to compare"
    )
    common_options(parser, runs=5)
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    return print_measured(__file__, args, lambda: measure(args))


if __name__ == "__main__":
    raise SystemExit(main())
