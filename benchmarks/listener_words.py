"""Whether a listener's word over a reply is heard as one, and a short cut-in as a cut-in, as JSON.

Each of 13 listener words and runs ("Mm-hmm.", "Right, right.") and 20 short cut-ins ("No.", "Pardon?",
"Hold on.") is said alone by every voice of a pool and handed to tiny.en as the VAD hands a short burst
over a reply at its lull: 0.3 s before, the speech, 40 ms after, under pink noise 40 dB down (the
headset room: while the user speaks the reply is paused, so little of its echo is left). It is heard as
the engine hears it over a reply (``over_reply``): the first decode alone (``first_look``), with
whisper's second look at a few words (``second_look``), and with the look for a short cut-in heard as
nothing too (``cut_in_look``, the default; voice.asr.listener_words). Beside them a noise set: the
fixtures' cough, knock and click and sox's breaths and puffs (pink, white and brown noise in a band,
swelling or dying away; other lengths and bands per pool), each placed as a word is with 40, 120 and
200 ms after. Each transcript is judged with the default lists (voice.engine.overlap):

- ``listener_heard_as_other``: listener words heard as words that cut the reply (sounds and silence
  let it go on, so they count as heard);
- ``cut_in_heard_as_listener``: cut-ins heard as a listener's, so the reply went on over them;
- ``cut_in_heard_as_nothing``: cut-ins heard as no words or a lone hesitation: a cough, to the engine;
- ``listener_heard_as_cut_in_words``: listener words heard as nothing but short cut-ins' words;
- ``noise_heard_as_words``: noises heard as any words;
- ``ms_p50_listener`` / ``ms_p50_cut_in``: the transcription's median time on this machine.

Pools (TEAM.md, as benchmarks/cases/hearing_sets.py): ``tuning`` (piper at two speeds, espeak-ng en-us,
en-gb, en-029, en-gb-x-gbclan, six variants each: the second look was tuned here) and ``held_out``
(en-gb-scotland, en-us-nyc, en-gb-x-rp, en-gb-x-gbcwmd, six variants each).

Usage: python benchmarks/listener_words.py [--pool tuning|held_out] [--out FILE]   (about 5 min a pool, idle)
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from cases.hearing_sets import ACCENTS, AUDIO, SPEEDS_WPM, VARIANTS
from cases.unfamiliar_speech import fixture_maker
from common.machine import with_cpu
from common.scenario_runs import progress

from voice.asr.listener_words import heard_as_nothing, is_cut_in_words
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
FIXTURE_NOISES = ("cough", "knock", "click")
# Breaths and puffs made by sox, other lengths and bands per pool: (colour, band Hz, length s)
SYNTH_NOISES = {
    "tuning": (
        ("pinknoise", "300-3000", (0.2, 0.4, 0.6)),
        ("whitenoise", "1000-6000", (0.2, 0.4, 0.6)),
        ("brownnoise", "100-1500", (0.2, 0.4, 0.6)),
    ),
    "held_out": (
        ("pinknoise", "500-4000", (0.25, 0.5)),
        ("whitenoise", "2000-7000", (0.25, 0.5)),
        ("brownnoise", "150-2000", (0.25, 0.5)),
    ),
}
# sox fades (in, out, in s): an inhale swells and stops short, a puff starts sharp and dies away
ENVELOPES = {"inhale": (0.8, 0.1), "puff": (0.02, 0.7)}
NOISE_LULLS_S = (0.04, 0.12, 0.2)


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


def noises(pool: str) -> list[tuple[str, np.ndarray]]:
    """The fixtures' cough, knock and click and sox's breaths and puffs, trimmed and levelled as speech."""
    make = fixture_maker()
    found = [(name, read_wav(AUDIO / f"{name}.wav").samples) for name in FIXTURE_NOISES]
    with tempfile.TemporaryDirectory() as tmp:
        wav = Path(tmp) / "noise.wav"
        for colour, band, lengths in SYNTH_NOISES[pool]:
            for length in lengths:
                for shape, (rise, fall) in ENVELOPES.items():
                    fades = ("fade", "q", f"{rise * length:.3f}", f"{length}", f"{fall * length:.3f}")
                    synth = ("synth", f"{length}", colour, "gain", "-6", "sinc", band, *fades)
                    subprocess.run(
                        ["sox", "-R", "-n", "-r", str(ENGINE_RATE), "-c", "1", str(wav), *synth], check=True
                    )
                    found.append((f"{colour} {band} {length}s {shape}", read_wav(wav).samples))
    return [(name, make.level_speech(make.trim(samples.astype(np.float64)))) for name, samples in found]


def burst(
    speech: np.ndarray, noise: np.ndarray, rng: np.random.Generator, lull_s: float = LULL_S
) -> AudioBlock:
    """``speech`` as the VAD hands it over at its lull, under pink noise ``NOISE_DB`` below it."""
    before, after = round(BEFORE_S * ENGINE_RATE), round(lull_s * ENGINE_RATE)
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
        "first_look": WhisperTranscriber(WhisperSettings(second_look=False, cut_in_look=False)),
        "second_look": WhisperTranscriber(WhisperSettings(cut_in_look=False)),
        "cut_in_look": WhisperTranscriber(),
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
            rows.append(heard({"voice": name, "kind": kind, "said": text}, audio, ears))
        progress(name, started)
    for said, samples in noises(pool):
        for lull_s in NOISE_LULLS_S:
            audio = burst(samples, noise, rng, lull_s)
            rows.append(heard({"voice": f"lull {lull_s}s", "kind": "noise", "said": said}, audio, ears))
    progress("noises", started)
    return {way: tally(rows, way, phrases) for way in ears}


def heard(row: dict[str, Any], audio: AudioBlock, ears: dict[str, WhisperTranscriber]) -> dict[str, Any]:
    for way, ear in ears.items():
        began = time.perf_counter()
        row[way] = ear.transcribe(audio, over_reply=True).text
        row[f"{way}_ms"] = (time.perf_counter() - began) * 1000
    return row


def tally(rows: list[dict[str, Any]], way: str, phrases: OverlapPhrases) -> dict[str, Any]:
    listener = [r for r in rows if r["kind"] == "listener"]
    cut_ins = [r for r in rows if r["kind"] == "cut_in"]
    cut = [r for r in listener if verdict(phrases, r[way]) not in (Overlap.BACKCHANNEL.value, "sound")]
    swallowed = [r for r in cut_ins if verdict(phrases, r[way]) == Overlap.BACKCHANNEL.value]
    unheard = [r for r in cut_ins if heard_as_nothing(r[way])]
    listener_cut_in = [r for r in listener if is_cut_in_words(r[way])]
    sounds = [r for r in rows if r["kind"] == "noise"]
    worded = [r for r in sounds if word_keys(r[way])]
    return {
        "listener_words": len(listener),
        "listener_heard_as_other": len(cut),
        "cut_ins": len(cut_ins),
        "cut_in_heard_as_listener": len(swallowed),
        "cut_in_heard_as_nothing": len(unheard),
        "listener_heard_as_cut_in_words": len(listener_cut_in),
        "noises": len(sounds),
        "noise_heard_as_words": len(worded),
        "ms_p50_listener": round(statistics.median(r[f"{way}_ms"] for r in listener)),
        "ms_p50_cut_in": round(statistics.median(r[f"{way}_ms"] for r in cut_ins)),
        "misheard_listener": Counter(f"{r['said']} -> {r[way]}" for r in cut).most_common(),
        "cut_ins_taken_for_listener": Counter(f"{r['said']} -> {r[way]}" for r in swallowed).most_common(),
        "cut_ins_heard_as_nothing": Counter(f"{r['said']} -> {r[way]}" for r in unheard).most_common(),
        "noises_heard_as_words": [f"{r['said']}, {r['voice']} -> {r[way]}" for r in worded],
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pool", choices=("tuning", "held_out"), default="held_out")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    result = {"pool": args.pool, **measure(args.pool)}
    text = json.dumps(with_cpu(result), indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
