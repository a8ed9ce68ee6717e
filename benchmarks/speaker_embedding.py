"""Whose voice is it: what the GE2E speaker embedding costs, and how well it tells the speaker from others.

- ``cost``: milliseconds of one core per second of speech (onnxruntime and numpy), one 1.6 s partial, and
  the model's load; the 1-minute load average beside them (the machine is shared: timings are rough).
- ``pairs``: cosine scores of two clips of one voice (``same``) and of two voices (``different``), per pool:
  ``tuning`` (the two_cities LibriVox reader, piper's joe and three espeak-ng accents) and ``held_out``
  (real people: the Austen LibriVox reader, pocketsphinx's card namer and "go forward", moonshine's Beckett
  and clone-test voices; three held-out espeak-ng accents), each with its equal-error rate (``eer``) and,
  for real voices alone, ``real``. ``threshold`` is the tuning pool's equal-error threshold; the held-out
  false rejects and accepts are counted at it. Pairs whose voices may be one person are left out: the two
  pocketsphinx recordings (one lab's test data) and moonshine's two (who reads is undocumented); so are
  pairs of two espeak-ng variants (one synthesizer's settings, see ``one_synthesizer``).
- ``television``: a voiceprint enrolled on the user's first clip alone (the first question), then 0.5 s,
  1 s and 2 s stretches of the user's other clips with a television under them (a real reader,
  reverberated: RT60 0.6 s, as much reverberant as direct sound, ``TV_UNDER_DB`` under the user's speech
  level) against stretches of the television alone. Per stretch length: the score spreads, ``auc`` (the
  chance a user's stretch outscores a television one), the equal-error rate and, at the tuned threshold,
  the share of the user's stretches taken as the user's and of the television's refused. ``enrolled over
  it``: the first question was asked with the television on (12 dB under), so the print holds some of it.

``pairs``, ``threshold`` and ``television`` are given for each way of embedding a stretch shorter than one
1.6 s partial (``METHODS``): ``resemblyzer`` pads it with zeros, ``unpadded`` runs the network on its own
frames. The second was tried after a look at the held-out pairs: its held-out figures are not blind.

Usage: python benchmarks/speaker_embedding.py [--out FILE] (about 3 minutes on 2 busy cores)
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from cases.unfamiliar_speech import fixture_maker
from common.machine import with_cpu

from voice.audio.wav import read_wav
from voice.speaker.encoder import SpeakerEncoder, cosine
from voice.speaker.features import RATE, trim_long_silences
from voice.speaker.voiceprint import Voiceprint

REAL = Path(__file__).resolve().parents[1] / "audio" / "real"
Samples = np.ndarray[Any, np.dtype[np.float32]]
SENTENCES = (
    "Could you tell me what the weather will be like tomorrow morning?",
    "I would like to hear a short story about a lighthouse keeper.",
    "Please add milk and eggs to the shopping list before I forget.",
    "What time does the last train leave for the city tonight?",
    "Remind me to call my sister when I get home from work.",
)
TUNING_ESPEAK = ("en-us+m1", "en-gb+f2", "en-029+m3")
HELD_OUT_ESPEAK = ("en-gb-scotland+f1", "en-us-nyc+m2", "en-gb-x-rp+f3")
MAYBE_ONE_PERSON = ({"cards", "goforward"}, {"beckett", "clone"})
TV_UNDER_DB = (12.0, 6.0)
STRETCHES_S = (0.5, 1.0, 2.0)
HOP_S = 0.5  # stretches start every half second
# Resemblyzer's recipe (a stretch shorter than 1.6 s padded with zeros to it) and the stretch's own frames
METHODS = {"resemblyzer": True, "unpadded": False}


@dataclass(frozen=True)
class Clip:
    voice: str
    name: str
    samples: Samples
    real: bool


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def real_clips(prefix: str, voice: str) -> list[Clip]:
    return [
        Clip(voice, path.stem, read_wav(path).samples, True) for path in sorted(REAL.glob(f"{prefix}*.wav"))
    ]


def synthetic_clips(voice: str, speak: Callable[[str], Samples]) -> list[Clip]:
    return [
        Clip(voice, f"{voice}-{n}", np.asarray(speak(text), np.float32), False)
        for n, text in enumerate(SENTENCES)
    ]


def pools() -> dict[str, list[Clip]]:
    make = fixture_maker()
    tuning = real_clips("two_cities", "two_cities") + synthetic_clips("piper-joe", make.Piper(1.0).speak)
    held_out = (
        real_clips("austen", "austen")
        + real_clips("cards", "cards")
        + real_clips("goforward", "goforward")
        + real_clips("beckett", "beckett")
        + real_clips("clone", "clone")
    )
    for voice in TUNING_ESPEAK:
        tuning += synthetic_clips(voice, make.Espeak(voice, 160).speak)
    for voice in HELD_OUT_ESPEAK:
        held_out += synthetic_clips(voice, make.Espeak(voice, 160).speak)
    return {"tuning": tuning, "held_out": held_out}


def spread(values: Iterable[float]) -> dict[str, Any]:
    array = np.array(list(values))
    if not len(array):
        return {"n": 0}
    low, p10, median, p90, high = np.percentile(array, [0, 10, 50, 90, 100])
    return {"n": len(array), "min": low, "p10": p10, "median": median, "p90": p90, "max": high}


def equal_error(same: list[float], different: list[float]) -> tuple[float, float]:
    """(rate, threshold) where refusing the same voice is as frequent as accepting another."""
    best = (1.0, 0.0)
    gap = 2.0
    for threshold in sorted(set(same) | set(different)):
        rejects = float(np.mean(np.array(same) < threshold))
        accepts = float(np.mean(np.array(different) >= threshold))
        if abs(rejects - accepts) < gap:
            gap, best = abs(rejects - accepts), ((rejects + accepts) / 2, threshold)
    return best


def auc(positive: list[float], negative: list[float]) -> float:
    wins = sum((p > n) + 0.5 * (p == n) for p in positive for n in negative)
    return wins / (len(positive) * len(negative))


def rounded(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: rounded(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(item) for item in value]
    if isinstance(value, float | np.floating):
        return round(float(value), 3)
    return value


def one_synthesizer(a: Clip, b: Clip) -> bool:
    """Two espeak-ng variants: one formant synthesizer's settings, not two vocal tracts (their scores in the
    tuning pool reach 0.93, above most pairs of one voice), so no pair of different voices."""
    return a.voice != b.voice and "+" in a.voice and "+" in b.voice


def scored_pairs(clips: list[Clip], embeddings: dict[str, Samples]) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {"same": [], "different": [], "same_real": [], "different_real": []}
    for a, b in itertools.combinations(clips, 2):
        if {a.voice, b.voice} in MAYBE_ONE_PERSON or one_synthesizer(a, b):
            continue
        score = cosine(embeddings[a.name], embeddings[b.name])
        kind = "same" if a.voice == b.voice else "different"
        found[kind].append(score)
        if a.real and b.real:
            found[f"{kind}_real"].append(score)
    return found


def pair_figures(scores: dict[str, list[float]], threshold: float | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in ("", "_real"):
        same, different = scores[f"same{part}"], scores[f"different{part}"]
        if not same or not different:
            continue
        eer, at = equal_error(same, different)
        figures: dict[str, Any] = {
            "same": spread(same),
            "different": spread(different),
            "eer": eer,
            "eer_threshold": at,
        }
        if threshold is not None:
            figures["false_rejects_at_tuned"] = float(np.mean(np.array(same) < threshold))
            figures["false_accepts_at_tuned"] = float(np.mean(np.array(different) >= threshold))
        out["real" if part else "all"] = figures
    return out


def cost(speech: Samples) -> dict[str, Any]:
    started = time.perf_counter()
    SpeakerEncoder()
    figures: dict[str, Any] = {
        "load_ms": (time.perf_counter() - started) * 1000,
        "speech_s": len(speech) / RATE,
    }
    batch = np.abs(np.random.default_rng(0).standard_normal((1, 160, 40))).astype(np.float32)
    for kind in ("onnx", "numpy"):
        encoder = SpeakerEncoder(network=kind)
        runs = []
        for _ in range(3):
            started = time.perf_counter()
            encoder.embed(speech)
            runs.append(time.perf_counter() - started)
        partial = []
        for _ in range(5):
            started = time.perf_counter()
            encoder.network(batch)
            partial.append(time.perf_counter() - started)
        figures[kind] = {
            "ms_per_speech_s": min(runs) * 1000 / figures["speech_s"],
            "ms_per_partial": min(partial) * 1000,
        }
    return figures


def reverberated(samples: Samples, rng: np.random.Generator, rt60_s: float = 0.6) -> Samples:
    """``samples`` as heard across a room: the direct sound and as much again decaying by 60 dB in rt60_s."""
    length = round(rt60_s * RATE)
    tail = rng.standard_normal(length) * np.exp(-6.9 * np.arange(length) / length)
    tail[: RATE // 200] = 0.0  # the first reflections arrive a few ms after the direct sound
    tail /= np.sqrt(np.sum(tail**2))
    response = tail
    response[0] = 1.0
    size = len(samples) + length - 1
    wet = np.fft.irfft(np.fft.rfft(samples, size) * np.fft.rfft(response, size), size)[: len(samples)]
    return wet.astype(np.float32)


def level_db(samples: Samples) -> float:
    voiced = trim_long_silences(samples)
    return float(
        10 * np.log10(np.mean(np.square(voiced if len(voiced) else samples, dtype=np.float64)) + 1e-12)
    )


def stretches(samples: Samples, seconds: float) -> list[slice]:
    size, hop = round(seconds * RATE), round(HOP_S * RATE)
    return [slice(start, start + size) for start in range(0, len(samples) - size + 1, hop)]


def television_case(
    encoder: SpeakerEncoder,
    user: list[Clip],
    tv: Samples,
    under_db: float,
    threshold: float,
    enrolled_over_tv: bool = False,
) -> dict[str, Any]:
    speech = trim_long_silences(np.concatenate([clip.samples for clip in user[1:]]))
    gain = 10 ** ((level_db(speech) - under_db - level_db(tv)) / 20)
    tv = tv * gain
    first = user[0].samples  # the first question: where the conversation's speaker is taken
    if enrolled_over_tv:  # asked with the television already on: its last stretch under the question
        first = first + tv[len(tv) - len(first) :]
    voiceprint = Voiceprint(encoder.embed)
    voiceprint.add(first)
    figures: dict[str, Any] = {}
    for seconds in STRETCHES_S:
        users, tvs = [], []
        for n, window in enumerate(stretches(speech, seconds)):
            size = window.stop - window.start
            offset = (n * RATE) % (len(tv) - size)  # the television says something else under each stretch
            score = voiceprint.score(speech[window] + tv[offset : offset + size]).similarity
            if score is not None:
                users.append(score)
        for window in stretches(tv, seconds):
            score = voiceprint.score(tv[window]).similarity
            if score is not None:
                tvs.append(score)
        eer, _ = equal_error(users, tvs)
        figures[f"{seconds:g}s"] = {
            "user_over_tv": spread(users),
            "tv_alone": spread(tvs),
            "auc": auc(users, tvs),
            "eer": eer,
            "user_taken_at_tuned": float(np.mean(np.array(users) >= threshold)),
            "tv_refused_at_tuned": float(np.mean(np.array(tvs) < threshold)),
        }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    result: dict[str, Any] = {"load_average_before": os.getloadavg()[0]}
    say("synthesizing the voices")
    clips = pools()
    austen = [clip for clip in clips["held_out"] if clip.voice == "austen"]
    say("cost")
    result["cost"] = cost(np.concatenate([clip.samples for clip in austen]))
    rng = np.random.default_rng(47)
    by_voice = {
        voice: [c for c in clips["held_out"] if c.voice == voice] for voice in ("cards", "beckett", "austen")
    }
    televisions = {
        voice: reverberated(np.concatenate([c.samples for c in by_voice[voice]] * 2), rng)
        for voice in ("austen", "beckett")
    }
    for method, pad_short in METHODS.items():
        say(f"{method}: pairs")
        encoder = SpeakerEncoder(pad_short=pad_short)
        figures: dict[str, Any] = {}
        embeddings: dict[str, Samples] = {}
        for clip in clips["tuning"] + clips["held_out"]:
            embedding = encoder.embed(clip.samples)
            if embedding is None:
                raise SystemExit(f"{clip.name} has too little voice to embed")
            embeddings[clip.name] = embedding
        tuning = scored_pairs(clips["tuning"], embeddings)
        _, threshold = equal_error(tuning["same"], tuning["different"])
        figures["threshold"] = threshold
        figures["pairs"] = {
            "tuning": pair_figures(tuning, None),
            "held_out": pair_figures(scored_pairs(clips["held_out"], embeddings), threshold),
        }
        say(f"{method}: television")
        figures["television"] = {
            f"user {user}, television {tv} {under:g} dB under{', enrolled over it' if over else ''}": (
                television_case(encoder, by_voice[user], televisions[tv], under, threshold, over)
            )
            for user, tv in (("cards", "austen"), ("beckett", "austen"), ("austen", "beckett"))
            for under, over in ((TV_UNDER_DB[0], False), (TV_UNDER_DB[1], False), (TV_UNDER_DB[0], True))
        }
        result[method] = figures
    result["load_average_after"] = os.getloadavg()[0]
    text = json.dumps(rounded(with_cpu(result)), indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
