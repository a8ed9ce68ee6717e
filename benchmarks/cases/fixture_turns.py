"""The project's own speech fixtures (audio/manifest.json) as end-of-turn cases: as recorded, and with a pause
put between two of their words, each framed in silence; and as hearing_sets ``Turn``s beside a set's.
A case set of turn_end.py."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cases.hearing_sets import Turn
from voice.asr.whisper import WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.audio.wav import read_wav

AUDIO = Path(__file__).resolve().parents[2] / "audio"
LEAD_S, TAIL_S = 0.5, 1.5
SILENT_DBFS = -45.0  # quieter 10 ms frames are silence, as audio/manifest.json measures it


@dataclass(frozen=True)
class Case:
    """One user utterance on the mic; ``speech_end`` is the sample where its last word ends."""

    name: str
    signal: Samples
    speech_end: int


def padded(samples: Samples) -> Samples:
    lead, tail = (
        np.zeros(round(LEAD_S * ENGINE_RATE), np.float32),
        np.zeros(round(TAIL_S * ENGINE_RATE), np.float32),
    )
    return np.concatenate((lead, samples, tail))


def recorded_cases(fixtures: list[dict[str, Any]]) -> list[Case]:
    lead = round(LEAD_S * ENGINE_RATE)
    return [
        Case(f["file"], padded(read_wav(AUDIO / f["file"]).samples), lead + round(f["end_s"] * ENGINE_RATE))
        for f in fixtures
    ]


def silent_run(levels: np.ndarray, quietest: int) -> tuple[int, int]:
    """The run of silent frames around the quietest one, as [first, end) frame indices (empty if none)."""
    if levels[quietest] >= SILENT_DBFS:
        return quietest, quietest
    first, end = quietest, quietest + 1
    while first > 0 and levels[first - 1] < SILENT_DBFS:
        first -= 1
    while end < len(levels) and levels[end] < SILENT_DBFS:
        end += 1
    return first, end


def paused_cases(
    fixtures: list[dict[str, Any]], transcriber: WhisperTranscriber, pause_s: float
) -> list[Case]:
    """Each fixture with a pause of ``pause_s`` between two words, at each boundary whisper finds.

    The pause replaces the quietest stretch between the two words (the silent 10 ms frames around the
    quietest one, below -45 dBFS as in the manifest), so the silence is ``pause_s`` in all.
    """
    cases = []
    lead, frame = round(LEAD_S * ENGINE_RATE), ENGINE_RATE // 100
    for fixture in fixtures:
        samples = read_wav(AUDIO / fixture["file"]).samples
        levels = 10 * np.log10(
            np.square(samples[: len(samples) // frame * frame].reshape(-1, frame)).mean(axis=1) + 1e-12
        )
        words = transcriber.transcribe(AudioBlock(samples, ENGINE_RATE), word_timings=True).words
        for index, (word, following) in enumerate(itertools.pairwise(words)):
            low = max(0, round(word.end_s * 100) - 6)
            high = min(len(levels), max(low + 1, round(following.start_s * 100) + 6))
            cut_from, cut_to = (frame * f for f in silent_run(levels, low + int(np.argmin(levels[low:high]))))
            pause = np.zeros(round(pause_s * ENGINE_RATE), np.float32)
            spliced = np.concatenate((samples[:cut_from], pause, samples[cut_to:]))
            end = lead + round(fixture["end_s"] * ENGINE_RATE) + len(spliced) - len(samples)
            cases.append(Case(f"{fixture['file']}@{index + 1}:{word.text.strip()}", padded(spliced), end))
    return cases


def fixture_turns() -> list[Turn]:
    """The project's own speech fixtures as turns: whole, or with the pause each was recorded with."""
    manifest = json.loads((AUDIO / "manifest.json").read_text())
    lead, found = round(LEAD_S * ENGINE_RATE), []
    for fixture in manifest["fixtures"]:
        if fixture["kind"] != "speech":
            continue
        pauses = fixture["pauses"]
        found.append(
            Turn(
                fixture["file"],
                "fixtures",
                fixture["voice"],
                "fixtures",
                "paused" if pauses else "whole",
                fixture["text"],
                padded(read_wav(AUDIO / fixture["file"]).samples),
                lead + round(fixture["start_s"] * ENGINE_RATE),
                lead + round(fixture["end_s"] * ENGINE_RATE),
                lead + round(pauses[0]["start_s"] * ENGINE_RATE) if pauses else None,
            )
        )
    return found


def word_times(transcriber: WhisperTranscriber) -> Callable[[Samples], list[tuple[float, float]]]:
    """Whisper's (start_s, end_s) of each word it hears: where a recording's pause is put."""

    def timed(samples: Samples) -> list[tuple[float, float]]:
        block = AudioBlock(np.asarray(samples, dtype=np.float32), ENGINE_RATE)
        return [(word.start_s, word.end_s) for word in transcriber.transcribe(block, word_timings=True).words]

    return timed
