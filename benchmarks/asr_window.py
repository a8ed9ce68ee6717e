"""Whisper on a cut encoder window against whisper's full 30 s window, side by side in one process.

Utterances: the speech fixtures (audio/manifest.json) as recorded and under pink noise at 10 and 0 dB
SNR, and sentences espeak-ng says now in voices the fixtures do not use, some of them long (8-14 s,
where the window grows). Both transcribers are the real tiny.en and hear the same audio, alternately.

- ``ms``: transcription time per utterance, median and p95, and the median ratio short/full.
- ``word_error_rate``: mean WER against the text said, per condition and in all.
- ``differ``: utterances whose transcripts differ between the two, with both texts.
- ``broken_off``: the same utterances cut off at 60% of their length, as speech that breaks off mid-sentence
  (a reply cut by the user, a user trailing off): how many the cut window heard at least two words fewer
  of than the full window (whisper stopping early), with both texts. No WER: what was said is unknown.

Usage: python benchmarks/asr_window.py [--rounds 2]   (about 2 minutes on 2 cores)
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from word_error import wer

from voice.asr.whisper import WhisperSettings, WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.audio.resample import resample
from voice.audio.wav import read_wav

AUDIO = Path(__file__).resolve().parents[1] / "audio"
OTHER_VOICES = ("en-gb+f3", "en-us+f2", "en+m7")
SENTENCES = (
    "Could you remind me to call my sister at six?",
    "How long does it take to boil an egg?",
    "Turn the kitchen lights off, please.",
    "I need a recipe for dinner tonight that uses chicken, rice and some of the spinach in the fridge, "
    "and it should not take more than half an hour.",
    "Tell me about the history of the old lighthouse on the northern coast, and why it was closed.",
)
SNR_DB = (10.0, 0.0)
BROKEN_AT = 0.6  # share of an utterance kept when it breaks off


def spoken(text: str, voice: str) -> Samples:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "said.wav"
        subprocess.run(["espeak-ng", "-v", voice, "-s", "165", "-w", str(path), text], check=True)
        block = read_wav(path)
    return resample(block.samples, block.rate, ENGINE_RATE).astype(np.float32)


def with_noise(samples: Samples, noise: Samples, snr_db: float) -> Samples:
    noise = np.resize(noise, len(samples))
    gain = np.sqrt(np.mean(samples**2) / np.mean(noise**2) / 10 ** (snr_db / 10))
    return (samples + gain * noise).astype(np.float32)


def utterances() -> list[tuple[str, str, Samples]]:
    """(condition, text said, audio) for every utterance."""
    manifest = json.loads((AUDIO / "manifest.json").read_text(encoding="utf-8"))
    noise = read_wav(AUDIO / "pink-noise.wav").samples
    found = []
    for fixture in (f for f in manifest["fixtures"] if f["kind"] == "speech"):
        samples = read_wav(AUDIO / fixture["file"]).samples
        found.append(("fixtures", fixture["text"], samples))
        for snr in SNR_DB:
            found.append((f"fixtures, noise {snr:g} dB", fixture["text"], with_noise(samples, noise, snr)))
    for voice in OTHER_VOICES:
        for text in SENTENCES:
            found.append(("other voices", text, spoken(text, voice)))
    return found


def short_of_full(full: list[str], short: list[str]) -> dict[str, Any]:
    """How many of the broken-off utterances the cut window heard two or more words fewer of."""
    fewer = [
        {"full": f, "short": s}
        for f, s in zip(full, short, strict=True)
        if len(s.split()) <= len(f.split()) - 2
    ]
    return {"utterances": len(full), "short_two_words_fewer": len(fewer), "cases": fewer}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    said = utterances()
    transcribers = {
        "full": WhisperTranscriber(WhisperSettings(short_window=False)),
        "short": WhisperTranscriber(WhisperSettings(short_window=True)),
    }
    broken = [samples[: int(BROKEN_AT * len(samples))] for _, _, samples in said]
    broken_texts = {
        name: [t.transcribe(AudioBlock(samples, ENGINE_RATE)).text for samples in broken]
        for name, t in transcribers.items()
    }
    times: dict[str, list[float]] = {name: [] for name in transcribers}
    texts: dict[str, list[str]] = {name: [] for name in transcribers}
    for round_ in range(args.rounds):
        for _condition, _text, samples in said:
            for name, transcriber in transcribers.items():
                started = time.perf_counter()
                heard = transcriber.transcribe(AudioBlock(samples, ENGINE_RATE)).text
                times[name].append((time.perf_counter() - started) * 1000)
                if round_ == 0:
                    texts[name].append(heard)
    conditions = sorted({condition for condition, _, _ in said})
    result: dict[str, Any] = {
        "utterances": len(said),
        "seconds": {
            "median": round(statistics.median(len(s) / ENGINE_RATE for _, _, s in said), 2),
            "max": round(max(len(s) / ENGINE_RATE for _, _, s in said), 2),
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
                **{
                    condition: round(
                        statistics.mean(
                            wer(text, heard[i]) for i, (c, text, _) in enumerate(said) if c == condition
                        ),
                        3,
                    )
                    for condition in conditions
                },
                "all": round(statistics.mean(wer(text, heard[i]) for i, (_, text, _) in enumerate(said)), 3),
            }
            for name, heard in texts.items()
        },
        "differ": [
            {"said": text, "full": texts["full"][i], "short": texts["short"][i]}
            for i, (_, text, _) in enumerate(said)
            if texts["full"][i] != texts["short"][i]
        ],
        "broken_off": short_of_full(broken_texts["full"], broken_texts["short"]),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
