"""How a remote voice's estimated word spans place a cut-in, against piper's phoneme alignments, as JSON.

A remote voice gives no alignments, so the heard prefix rests on voice/tts/estimate.py. Here the bundled
voice speaks every chunk of the scenarios' replies (cut as the engine cuts them) and ``HELD_OUT``
sentences the estimate was not fitted on: once clean and ``--noisy`` times with the servers' noise
(noise 0.667, width 0.8: joe-medium's own, which wyoming-piper and local-tts-studio use). Its alignments
give each word's true span; ``estimated_synthesis`` the estimate over the same audio. At a cut every
10 ms of each take, the words the estimate calls heard less the words that had ended:

- ``claims_still_playing``: share of cuts told of a word still playing (the model must never be told of
  unplayed words), ``claims_two``: of two or more, ``claims_not_begun``: of a word not yet begun;
- ``within_one_word``, ``short_by_two_or_more``, ``short_by_four_or_more`` and ``mean_difference``;
- ``end_error_ms``: the estimated less the true end of every word (negative: called heard early).

Usage: PYTHONPATH=. python benchmarks/estimated_spans.py [--noisy 10] [--against TREE] [--out FILE]
(about 3 minutes on 2 cores with 10 noisy takes; twice that with --against). The noise is not seeded:
noisy figures move by a few tenths of a percent between runs.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
from common.harness import print_measured
from common.scenario_runs import SCENARIOS, progress

from voice.audio.block import ENGINE_RATE
from voice.tts.chunker import SpeechChunker
from voice.tts.piper_voice import PiperSettings, PiperSynthesizer
from voice.tts.server_spans import estimated_synthesis

CUT_EVERY = ENGINE_RATE // 100
SERVERS_NOISE = PiperSettings(noise_scale=0.667, noise_w_scale=0.8)
HELD_OUT = (
    "What time does the pharmacy close today?",
    "How many grams are in a pound?",
    "Can you turn the heating up a little?",
    "Who wrote the novel Middlemarch?",
    "Is it going to rain this afternoon?",
    "Set an alarm for half past six.",
    "How do I get to the train station from here?",
    "Add eggs and butter to my shopping list.",
    "Tomorrow starts dry, then rain moves in from the west by noon.",
    "The library opens at nine and closes early on Sundays during the summer.",
    "Please remember to water the plants and feed the cat before you leave.",
    "Our train was delayed, so we walked along the river to the old market.",
    "Sure, I can help with that.",
    "The nearest pharmacy is about ten minutes away on foot, next to the post office.",
    "Your meeting with Sarah has been moved to Thursday afternoon at three.",
    "Here is a simple recipe: boil the pasta, fry the garlic in olive oil, and mix them together.",
    "The museum is closed on Mondays, but it stays open late on Fridays.",
    "I set a timer for twenty minutes.",
    "Strong winds are expected overnight, especially along the northern coast.",
    "If you leave now, you should arrive just before the concert begins.",
    "The capital of Australia is Canberra, not Sydney as many people think.",
    "Photosynthesis turns sunlight, water and carbon dioxide into sugar and oxygen.",
    "Let me know whenever you want to hear the rest of the story.",
    "The spring market sells fresh strawberries, honey and handmade bread.",
    "My apologies, I did not catch that.",
    "Traffic on the bridge is slow this morning because of roadworks.",
    "A penguin walks into a bar, looks around, and says nothing at all.",
    "You have three unread messages and one missed call.",
    "The quick brown fox jumps over the lazy dog near the riverbank.",
    "Remember to bring your passport, your tickets and a charger for the phone.",
)


def reply_chunks() -> list[str]:
    """Every chunk of three words or more of the scenarios' scripted replies, as the engine cuts them."""
    chunks: set[str] = set()
    for path in sorted(SCENARIOS.glob("*.json")):
        for reply in json.loads(path.read_text(encoding="utf-8"))["llm"].get("replies", []):
            if isinstance(reply, str):
                chunker = SpeechChunker()
                chunks.update(chunker.feed(reply + " ") + chunker.flush())
    return sorted(chunk for chunk in chunks if len(chunk.split()) >= 3)


def placement(texts: list[str], voice: PiperSynthesizer, takes: int) -> dict[str, Any]:
    """The estimate against the alignments over ``takes`` takes of every text."""
    differences: list[np.ndarray] = []
    errors: list[np.ndarray] = []
    not_begun = 0
    for text in texts:
        for _ in range(takes):
            aligned = voice.synthesize(text)
            estimated = estimated_synthesis(text, [aligned.audio.samples])
            starts = np.array([word.start for word in aligned.words])
            ends = np.array([word.end for word in aligned.words])
            claimed_ends = np.array([word.end for word in estimated.words])
            cuts = np.arange(0, aligned.audio.frames, CUT_EVERY)[:, None]
            claimed = (claimed_ends[None, :] <= cuts).sum(axis=1)
            differences.append(claimed - (ends[None, :] <= cuts).sum(axis=1))
            not_begun += int((claimed > (starts[None, :] < cuts).sum(axis=1)).sum())
            errors.append((claimed_ends - ends) * 1000 / ENGINE_RATE)
    difference, error = np.concatenate(differences), np.concatenate(errors)
    return {
        "texts": len(texts),
        "words": int(error.size),
        "cuts": int(difference.size),
        "claims_still_playing": round(float(np.mean(difference >= 1)), 4),
        "claims_two": round(float(np.mean(difference >= 2)), 4),
        "claims_not_begun": round(not_begun / difference.size, 4),
        "within_one_word": round(float(np.mean(abs(difference) <= 1)), 4),
        "short_by_two_or_more": round(float(np.mean(difference <= -2)), 4),
        "short_by_four_or_more": round(float(np.mean(difference <= -4)), 4),
        "mean_difference": round(float(difference.mean()), 3),
        "end_error_ms": {
            "median": round(float(np.median(error))),
            "p5": round(float(np.percentile(error, 5))),
            "p1": round(float(np.percentile(error, 1))),
        },
    }


def measure(noisy_takes: int) -> dict[str, Any]:
    started = time.monotonic()
    load_start = os.getloadavg()[0]
    texts = {"replies": reply_chunks(), "held_out": list(HELD_OUT)}
    voices = {"clean": (PiperSynthesizer(), 1), "noisy": (PiperSynthesizer(SERVERS_NOISE), noisy_takes)}
    result: dict[str, Any] = {}
    for set_name, chosen in texts.items():
        for voice_name, (voice, takes) in voices.items():
            progress(f"{set_name}, {voice_name}: {len(chosen)} texts x {takes}", started)
            result[f"{set_name}_{voice_name}"] = placement(chosen, voice, takes)
    result["load_1min"] = {"start": round(load_start, 2), "end": round(os.getloadavg()[0], 2)}
    result["wall_s"] = round(time.monotonic() - started, 1)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--noisy", type=int, default=10, help="noisy takes of every text (default 10)")
    parser.add_argument("--out", type=Path, help="also write the JSON there")
    parser.add_argument("--against", type=Path, help="another source tree to measure first, for before/after")
    args = parser.parse_args()
    print_measured(__file__, args, lambda: measure(args.noisy))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
