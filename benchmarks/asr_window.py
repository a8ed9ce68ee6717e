"""Whisper on a cut encoder window against whisper's full 30 s window, side by side in one process.

Utterances: the speech fixtures (audio/manifest.json) as recorded and under pink noise at 10 and 0 dB
SNR; long sentences espeak-ng says in three more voices (8-14 s, where the window grows); and the corpus
of speech the project was not tuned on (benchmarks/cases/unfamiliar_speech.py: piper and 24 espeak-ng voices,
whole questions and questions with a mid-sentence pause, clean and under noise at 20 and 10 dB SNR),
each with 0.2 s of the mic signal either side. Both transcribers are the real tiny.en and hear the same
audio, alternately.

- ``ms``: transcription time per utterance, median and p95, and the median ratio short/full.
- ``word_error_rate``: mean WER against the text said, per condition and in all.
- ``word_error_rate_unfamiliar``: the same over the corpus alone, and per voice family.
- ``differ``: utterances whose transcripts differ between the two, with both texts and WERs.
- ``cut_worse``, ``cut_better``: how many utterances the cut window heard worse (better) than the full one.
- ``broken_off``: the same utterances cut off at 60% of their length, as speech that breaks off mid-sentence
  (a reply cut by the user, a user trailing off): how many the cut window heard at least two words fewer
  of than the full window (whisper stopping early), with both texts. No WER: what was said is unknown.

Usage: python benchmarks/asr_window.py [--rounds 1] [--every N]   (about 10 minutes on 2 cores)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from cases.unfamiliar_speech import corpus, fixture_maker, with_noise
from common.word_error import wer

from voice.asr.whisper import WhisperSettings, WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.audio.wav import read_wav

AUDIO = Path(__file__).resolve().parents[1] / "audio"
OTHER_VOICES = ("en-gb+f3", "en-us+f2", "en+m7")
LONG_SENTENCES = (
    "I need a recipe for dinner tonight that uses chicken, rice and some of the spinach in the fridge, "
    "and it should not take more than half an hour.",
    "Tell me about the history of the old lighthouse on the northern coast, and why it was closed.",
)
SNR_DB = (10.0, 0.0)
BROKEN_AT = 0.6  # share of an utterance kept when it breaks off


@dataclass(frozen=True)
class Utterance:
    condition: str
    family: str  # the corpus's voice family, "" outside it
    text: str
    samples: Samples


def utterances(every: int) -> list[Utterance]:
    """Every utterance; of the corpus, every ``every``-th."""
    manifest = json.loads((AUDIO / "manifest.json").read_text(encoding="utf-8"))
    noise = read_wav(AUDIO / "pink-noise.wav").samples
    found = []
    for fixture in (f for f in manifest["fixtures"] if f["kind"] == "speech"):
        samples = read_wav(AUDIO / fixture["file"]).samples
        found.append(Utterance("fixtures", "", fixture["text"], samples))
        for snr in SNR_DB:
            noisy = with_noise(samples, noise, snr)
            found.append(Utterance(f"fixtures, noise {snr:g} dB", "", fixture["text"], noisy))
    make = fixture_maker()
    for voice in OTHER_VOICES:
        for text in LONG_SENTENCES:
            long = make.Espeak(voice, 165).speak(text).astype(np.float32)
            found.append(Utterance("long, other voices", "", text, long))
    for said in corpus()[::every]:
        found.append(Utterance(f"unfamiliar, {said.condition}", said.family, said.text, said.speech()))
    return found


def short_of_full(full: list[str], short: list[str]) -> dict[str, Any]:
    """How many of the broken-off utterances the cut window heard two or more words fewer of."""
    fewer = [
        {"full": f, "short": s}
        for f, s in zip(full, short, strict=True)
        if len(s.split()) <= len(f.split()) - 2
    ]
    return {"utterances": len(full), "short_two_words_fewer": len(fewer), "cases": fewer}


def mean_wer(said: list[Utterance], heard: list[str], chosen: list[int]) -> float:
    return round(statistics.mean(wer(said[i].text, heard[i]) for i in chosen), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--every", type=int, default=1, help="of the corpus, every Nth utterance")
    args = parser.parse_args()
    said = utterances(args.every)
    transcribers = {
        "full": WhisperTranscriber(WhisperSettings(short_window=False)),
        "short": WhisperTranscriber(WhisperSettings(short_window=True)),
    }
    broken = [u.samples[: int(BROKEN_AT * len(u.samples))] for u in said]
    broken_texts = {
        name: [t.transcribe(AudioBlock(samples, ENGINE_RATE)).text for samples in broken]
        for name, t in transcribers.items()
    }
    times: dict[str, list[float]] = {name: [] for name in transcribers}
    texts: dict[str, list[str]] = {name: [] for name in transcribers}
    for round_ in range(args.rounds):
        for index, utterance in enumerate(said):
            print(f"{round_ + 1}: {index + 1}/{len(said)}", file=sys.stderr)
            for name, transcriber in transcribers.items():
                started = time.perf_counter()
                heard = transcriber.transcribe(AudioBlock(utterance.samples, ENGINE_RATE)).text
                times[name].append((time.perf_counter() - started) * 1000)
                if round_ == 0:
                    texts[name].append(heard)
    everyone = list(range(len(said)))
    groups = {c: [i for i in everyone if said[i].condition == c] for c in sorted({u.condition for u in said})}
    corpus_only = [i for i in everyone if said[i].family]
    families = {
        f: [i for i in corpus_only if said[i].family == f]
        for f in sorted({said[i].family for i in corpus_only})
    }
    errors = {name: [wer(u.text, heard[i]) for i, u in enumerate(said)] for name, heard in texts.items()}
    result: dict[str, Any] = {
        "utterances": len(said),
        "seconds": {
            "median": round(statistics.median(len(u.samples) / ENGINE_RATE for u in said), 2),
            "max": round(max(len(u.samples) / ENGINE_RATE for u in said), 2),
        },
        "ms": {
            name: {
                "median": round(statistics.median(t), 1),
                "p95": round(sorted(t)[round(0.95 * (len(t) - 1))], 1),
            }
            for name, t in times.items()
        },
        "ratio_short_to_full_median": round(
            statistics.median(s / f for s, f in zip(times["short"], times["full"], strict=True)), 3
        ),
        "word_error_rate": {
            name: {
                **{condition: mean_wer(said, heard, chosen) for condition, chosen in groups.items()},
                "all": mean_wer(said, heard, everyone),
            }
            for name, heard in texts.items()
        },
        "word_error_rate_unfamiliar": {
            name: {
                "all": mean_wer(said, heard, corpus_only),
                **{family: mean_wer(said, heard, chosen) for family, chosen in families.items()},
            }
            for name, heard in texts.items()
        }
        if corpus_only
        else None,
        "differ": [
            {
                "said": u.text,
                "condition": u.condition,
                "family": u.family,
                "full": texts["full"][i],
                "short": texts["short"][i],
                "wer_full": round(errors["full"][i], 3),
                "wer_short": round(errors["short"][i], 3),
            }
            for i, u in enumerate(said)
            if texts["full"][i] != texts["short"][i]
        ],
        "cut_worse": sum(s > f for s, f in zip(errors["short"], errors["full"], strict=True)),
        "cut_better": sum(s < f for s, f in zip(errors["short"], errors["full"], strict=True)),
        "broken_off": short_of_full(broken_texts["full"], broken_texts["short"]),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
