"""Spoken-prefix accuracy, as JSON: whether the heard text the assistant remembers is what really played.

Every scenario in audio/scenarios and the echo variants of barge_in.py room run in virtual time; whisper
(its full 30 s window) transcribes speaker.wav over each played turn afresh, and a turn passes when its
word count is within one word of the report's ``spoken``.

Usage: python benchmarks/spoken_prefix.py [--keep DIR] [--against TREE]   (a few minutes on 2 cores)
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from common.scenario_runs import Run, add_run_options, echo_runs, print_figures, progress, scenario_runs
from common.word_error import words

from voice.asr.port import Transcriber
from voice.asr.whisper import WhisperSettings, WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav
from voice.components import load_speech_models


def spoken_prefix(runs: list[Run], judge: Transcriber) -> dict[str, Any]:
    """How often the report's heard text has the word count of what speaker.wav really played (±1).

    ``judge`` decodes whisper's full window: on the cut one (no timestamps) whisper often stops early on a
    reply broken off mid-sentence, and would report fewer words than played.
    """
    checked: list[tuple[bool, bool]] = []  # (interrupted, within one word)
    cut_differences: list[int] = []  # per interrupted turn: whisper's words less the report's
    misses: list[dict[str, Any]] = []
    for run in runs:
        speaker = read_wav(run.out / "speaker.wav").samples
        for index, turn in enumerate(run.report["turns"], start=1):
            if turn["audio_start_s"] is None:
                continue
            start, end = (round(turn[key] * ENGINE_RATE) for key in ("audio_start_s", "audio_end_s"))
            played = judge.transcribe(AudioBlock(speaker[start:end], ENGINE_RATE))
            difference = len(words(played.text)) - len(words(turn["spoken"]))
            checked.append((turn["interrupted"], abs(difference) <= 1))
            if turn["interrupted"]:
                cut_differences.append(difference)
            if abs(difference) > 1:
                misses.append(
                    {
                        "run": run.name,
                        "turn": index,
                        "interrupted": turn["interrupted"],
                        "spoken": turn["spoken"],
                        "whisper_heard": played.text,
                        "word_difference": difference,
                    }
                )
    cut = [ok for interrupted, ok in checked if interrupted]
    return {
        "turns": len(checked),
        "within_one_word": sum(ok for _, ok in checked),
        "fraction": round(sum(ok for _, ok in checked) / len(checked), 3) if checked else None,
        "interrupted_turns": len(cut),
        "interrupted_fraction": round(sum(cut) / len(cut), 3) if cut else None,
        "interrupted_differences": sorted(cut_differences),
        "misses": misses,
    }


def full_window_judge() -> WhisperTranscriber:
    return WhisperTranscriber(WhisperSettings(short_window=False))


def measure(work: Path, started: float) -> dict[str, Any]:
    progress("loading whisper and piper", started)
    models = load_speech_models()
    runs = scenario_runs(models, work, started)
    runs += [run for level in echo_runs(models, work, started) for run in level.runs]
    progress("spoken prefix: transcribing what speaker.wav played", started)
    return spoken_prefix(runs, full_window_judge())


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_run_options(parser)
    raise SystemExit(
        print_figures(
            __file__,
            parser.parse_args(),
            "spoken-prefix",
            lambda work, started: {"spoken_prefix": measure(work, started)},
        )
    )
