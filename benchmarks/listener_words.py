"""Whether a listener's word over a reply is heard as one, and a short cut-in as a cut-in, as JSON.

Each of 13 listener words and runs ("Mm-hmm.", "Right, right.") and 20 short cut-ins ("No.", "Pardon?",
"Hold on.") is said alone by every voice of a pool and handed to tiny.en as the VAD hands a short burst
over a reply at its lull: 0.3 s before, the speech, 40 ms after, under pink noise 40 dB down (the
headset room: while the user speaks the reply is paused, so little of its echo is left). It is heard as
the engine hears it over a reply (``over_reply``), with whisper's second look at a few words
(voice.asr.listener_words) off and on, and each transcript is judged with the default lists
(voice.engine.overlap):

- ``listener_heard_as_other``: listener words heard as words that cut the reply (sounds and silence
  let it go on, so they count as heard);
- ``cut_in_heard_as_listener``: cut-ins heard as a listener's, so the reply went on over them;
- ``ms_p50_listener`` / ``ms_p50_cut_in``: the transcription's median time on this machine.

Pools (TEAM.md, as benchmarks/cases/hearing_sets.py): ``tuning`` (piper at two speeds, espeak-ng en-us,
en-gb, en-029, en-gb-x-gbclan, six variants each: the second look was tuned here) and ``held_out``
(en-gb-scotland, en-us-nyc, en-gb-x-rp, en-gb-x-gbcwmd, six variants each).

Usage: python benchmarks/listener_words.py [--pool tuning|held_out] [--out FILE]   (about 4 min a pool)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from cases.hearing_sets import ACCENTS, AUDIO, SPEEDS_WPM, VARIANTS
from cases.unfamiliar_speech import fixture_maker
from common.scenario_runs import progress

from voice.asr.transcript_words import word_keys
from voice.asr.whisper import WhisperSettings, WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav
from voice.engine.overlap import Overlap, OverlapPhrases

# (what is said, how espeak-ng is asked to say it): it spells "Mm-hmm" out as letters
LISTENER = (
    *((word, word) for word in ("Yeah.", "Yes.", "Okay.", "Uh-huh.")),
    ("Mm-hmm.", "[[m@m'h@m]]"),
    *((word, word) for word in ("Right.", "I see.", "Sure.", "Got it.", "Wow.", "Oh.")),
    *((word, word) for word in ("Right, right.", "Okay, yeah.")),
)
CUT_INS = (
    "No.", "Wait.", "Stop.", "Hold on.", "What?", "Why?", "Huh?", "Sorry?", "No, no.", "Hey.",
    "Nope.", "Really?", "Pardon?", "Cancel.", "Next.", "Louder.", "Skip.", "Uh-uh.", "Never mind.",
    "Hang on.",
)  # fmt: skip
BEFORE_S, LULL_S, NOISE_DB = 0.3, 0.04, -40.0


def voices(pool: str) -> list[tuple[str, Any]]:
    make = fixture_maker()
    found: list[tuple[str, Any]] = []
    if pool == "tuning":
        found += [(f"piper x{scale}", make.Piper(scale)) for scale in (1.0, 1.2)]
    for index, accent in enumerate(ACCENTS[pool]):
        for k, variant in enumerate(VARIANTS):
            wpm = SPEEDS_WPM[(index + k) % len(SPEEDS_WPM)]
            found.append((f"{accent}+{variant}@{wpm}", make.Espeak(f"{accent}+{variant}", wpm)))
    return found


def burst(speech: np.ndarray, noise: np.ndarray, rng: np.random.Generator) -> AudioBlock:
    """``speech`` as the VAD hands it over at its lull, under pink noise ``NOISE_DB`` below it."""
    before, after = round(BEFORE_S * ENGINE_RATE), round(LULL_S * ENGINE_RATE)
    signal = np.concatenate([np.zeros(before), speech, np.zeros(after)])
    start = int(rng.integers(0, len(noise) - len(signal)))
    hiss = noise[start : start + len(signal)] / np.sqrt(np.mean(noise**2))
    signal = signal + hiss * np.sqrt(np.mean(speech**2)) * 10 ** (NOISE_DB / 20)
    return AudioBlock(signal.astype(np.float32), ENGINE_RATE)


def verdict(phrases: OverlapPhrases, text: str) -> str:
    return "sound" if not word_keys(text) else phrases.verdict(text).value


def measure(pool: str) -> dict[str, Any]:
    started = time.monotonic()
    make = fixture_maker()
    rng = np.random.default_rng(11)
    noise = read_wav(AUDIO / "pink-noise.wav", rate=None).samples.astype(np.float64)
    ears = {
        "first_look": WhisperTranscriber(WhisperSettings(second_look=False)),
        "second_look": WhisperTranscriber(),
    }
    phrases = OverlapPhrases()
    rows: list[dict[str, Any]] = []
    for name, synth in voices(pool):
        said = [("listener", text, how) for text, how in LISTENER] + [
            ("cut_in", text, text) for text in CUT_INS
        ]
        for kind, text, how in said:
            how = text if isinstance(synth, make.Piper) else how
            audio = burst(make.level_speech(make.trim(synth.speak(how))), noise, rng)
            row: dict[str, Any] = {"voice": name, "kind": kind, "said": text}
            for way, ear in ears.items():
                began = time.perf_counter()
                row[way] = ear.transcribe(audio, over_reply=True).text
                row[f"{way}_ms"] = (time.perf_counter() - began) * 1000
            rows.append(row)
        progress(name, started)
    return {way: tally(rows, way, phrases) for way in ears}


def tally(rows: list[dict[str, Any]], way: str, phrases: OverlapPhrases) -> dict[str, Any]:
    listener = [r for r in rows if r["kind"] == "listener"]
    cut_ins = [r for r in rows if r["kind"] == "cut_in"]
    cut = [r for r in listener if verdict(phrases, r[way]) not in (Overlap.BACKCHANNEL.value, "sound")]
    swallowed = [r for r in cut_ins if verdict(phrases, r[way]) == Overlap.BACKCHANNEL.value]
    return {
        "listener_words": len(listener),
        "listener_heard_as_other": len(cut),
        "cut_ins": len(cut_ins),
        "cut_in_heard_as_listener": len(swallowed),
        "ms_p50_listener": round(statistics.median(r[f"{way}_ms"] for r in listener)),
        "ms_p50_cut_in": round(statistics.median(r[f"{way}_ms"] for r in cut_ins)),
        "misheard_listener": Counter(f"{r['said']} -> {r[way]}" for r in cut).most_common(),
        "cut_ins_taken_for_listener": Counter(f"{r['said']} -> {r[way]}" for r in swallowed).most_common(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pool", choices=("tuning", "held_out"), default="held_out")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    result = {"pool": args.pool, **measure(args.pool)}
    text = json.dumps(result, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
