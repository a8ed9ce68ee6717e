"""How long real people pause inside what they say, as the barge-in VAD hears it, as JSON.

A listener's "yeah" over a reply can only be told from the first word of a cut-in ("Yeah, ... but what
about Monday?") once the user has stayed quiet longer than people pause after a first word or at a comma
(issue 45). This measures those pauses in real speech: the recordings of audio/real/ (audio/real/README.md),
each source's contiguous cuts joined back into the recording they came from, run through the engine's VAD
with its barge-in settings and Silero, as over a reply. A pause is the silence from the end of one voiced
run to the next voiced frame of the same utterance (the VAD's ``VoiceLull`` or ``VoicePaused``, then
``VoiceResumed``); pauses of the VAD's end silence or more end the utterance and are counted apart.

Each pause is labelled by the reference text where it falls: at a comma, at a sentence's end, or inside a
cut (a pause the text marks with nothing, or a comma inside a cut). Pools as TEAM.md's: ``tuning`` is
what voice/engine/words_judge.py's rule was read from (no verdict before the VAD's end silence);
``held_out`` is reported, never tuned on. The synthetic ``endgame`` recording is left out (not people).

Usage: python benchmarks/speech_pauses.py [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from common.machine import with_cpu
from common.scenario_runs import summary

from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.speech_probability import SileroSpeech
from voice.audio.vad import (
    DEFAULT_BARGE_IN,
    DEFAULT_QUIET,
    VoiceActivityDetector,
    VoiceEnded,
    VoiceLull,
    VoicePaused,
    VoiceResumed,
    VoiceStarted,
)
from voice.audio.wav import read_wav

REAL = Path(__file__).resolve().parents[1] / "audio" / "real"
BLOCK = ENGINE_RATE // 50  # 20 ms, as a sound device hands them
SYNTHETIC = "endgame"  # moonshine's ZipVoice lines: not a person
TAIL_S = 1.0  # silence after each recording, so its last utterance ends


def recordings() -> list[tuple[str, str, np.ndarray, list[tuple[float, str]]]]:
    """(pool, name, samples, [(time of each cut between two texts, the text before it)]): each source's
    contiguous cuts joined in order."""
    manifest = json.loads((REAL / "manifest.json").read_text())
    by_source: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for entry in manifest["utterances"]:
        if SYNTHETIC not in entry["file"]:
            by_source[entry["source"]].append(entry)
    joined = []
    for source, entries in by_source.items():
        entries.sort(key=lambda entry: entry["span_s"][0])
        runs: list[list[dict[str, Any]]] = []
        for entry in entries:
            if runs and abs(runs[-1][-1]["span_s"][1] - entry["span_s"][0]) < 1e-6:
                runs[-1].append(entry)
            else:
                runs.append([entry])
        for run in runs:
            parts = [read_wav(REAL / entry["file"]).samples for entry in run]
            cuts, at = [], 0
            for entry, part in zip(run, parts, strict=True):
                at += len(part)
                cuts.append((at / ENGINE_RATE, entry["text"]))
            samples = np.concatenate([*parts, np.zeros(int(TAIL_S * ENGINE_RATE), np.float32)])
            joined.append((run[0]["pool"], f"{source}:{run[0]['file']}", samples, cuts[:-1]))
    return joined


def pauses(samples: np.ndarray) -> tuple[list[tuple[float, float]], list[float]]:
    """([(start s, length s)] of pauses inside utterances, [length s] of silences between utterances)."""
    vad = VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN, speech_model=SileroSpeech())
    inside: list[tuple[float, float]] = []
    between: list[float] = []
    quiet_from: int | None = None
    ended: int | None = None
    for start in range(0, len(samples) - BLOCK + 1, BLOCK):
        block = AudioBlock(samples[start : start + BLOCK], ENGINE_RATE, start)
        for event in vad.process(block, assistant_speaking=True):
            if isinstance(event, VoiceLull | VoicePaused) and quiet_from is None:
                quiet_from = event.sample
            elif isinstance(event, VoiceResumed) and quiet_from is not None:
                inside.append((quiet_from / ENGINE_RATE, (event.sample - quiet_from) / ENGINE_RATE))
                quiet_from = None
            elif isinstance(event, VoiceEnded):
                ended, quiet_from = event.sample, None
            elif isinstance(event, VoiceStarted) and ended is not None:
                between.append((event.sample - ended) / ENGINE_RATE)
    return inside, between


def label(at_s: float, length_s: float, cuts: list[tuple[float, str]]) -> str:
    """Where the reference text puts a pause: at a comma, at a sentence's end, or inside a cut."""
    for cut_s, text in cuts:
        if at_s - 0.05 <= cut_s <= at_s + length_s + 0.05:
            return "comma" if text.rstrip().endswith((",", ";", ":", "-")) else "sentence_end"
    return "inside_cut"


def measure() -> dict[str, Any]:
    found: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for pool, name, samples, cuts in recordings():
        print(f"{pool} {name}: {len(samples) / ENGINE_RATE:.1f} s", file=sys.stderr, flush=True)
        inside, between = pauses(samples)
        for at_s, length_s in inside:
            found[pool][label(at_s, length_s, cuts)].append(length_s * 1000)
            found[pool]["all_inside"].append(length_s * 1000)
        found[pool]["between_utterances"] += [length * 1000 for length in between]
    return {
        "what": "pauses inside utterances (ms) of real speech, the barge-in VAD's view",
        "end_silence_ms": DEFAULT_BARGE_IN.end_silence_ms,
        "pools": {
            pool: {
                kind: {**summary(values), "p90_ms": round(float(np.percentile(values, 90)), 1)}
                for kind, values in kinds.items()
            }
            for pool, kinds in found.items()
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    result = json.dumps(with_cpu(measure()), indent=2)
    print(result)
    if args.out:
        args.out.write_text(result + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
