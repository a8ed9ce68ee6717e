"""The bundled wake word models on speech they were not tuned on here, as JSON (issue 48).

For each microWakeWord model the ``pymicro-wakeword`` wheel bundles (okay_nabu, hey_jarvis, hey_mycroft,
alexa), with the model's own cutoff (nothing is tuned here):

- ``detection``: the share of wake words heard, each said as "<WAKE WORD>, what's the time?" by espeak-ng
  voices (eight accents, three speeds) and piper's joe (three paces), each clip in four conditions:
  ``clean``; ``noise`` (pink noise at 10 dB SNR); ``far`` (20 dB quieter, with sox's reverb); ``over_reply``
  (a piper reply playing at the same loudness, as a loud speaker with no echo cancelling would).
- ``false_wakes_per_hour``: detections on speech and noise that hold no wake word: the recordings of
  audio/real/ (people reading and acting), the project's own fixtures, the README and the architecture
  doc read aloud by espeak-ng voices and piper, and noise (pink, white, a chord "music", speech under
  noise as a television). Run at once, faster than real time.
- ``cpu_percent_of_one_core``: the model's process time over that audio's length (the mic's cost asleep).
- ``end_of_word_to_detection_ms``: from where piper's word timings say the wake word ended to the
  detection's sample (the model's own lag; the driver adds at most one idle batch, 400 ms, before the
  ``listening`` state while it sleeps, as it sees the block).

The machine is shared: timing figures are rough. Usage: python benchmarks/wake_words.py [--quick]
(about 10 minutes on 2 busy cores; --quick: one speed, fewer voices, a tenth of the non-wake audio).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from common.machine import with_cpu

from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.audio.wav import read_wav
from voice.tts.piper_voice import PiperSettings, PiperSynthesizer
from voice.wake.micro import MicroWakeDetector
from voice.wake.models import bundled_wake_models

ROOT = Path(__file__).resolve().parents[1]
AUDIO = ROOT / "audio"
BLOCK = 640
SAID = {"okay_nabu": "Okay Nabu", "hey_jarvis": "Hey Jarvis", "hey_mycroft": "Hey Mycroft", "alexa": "Alexa"}
ESPEAK_VOICES = (
    "en-gb-scotland", "en-029", "en-us-nyc", "en-gb-x-gbclan", "en+f2", "en+f4", "en-us+m3", "en-gb-x-gbcwmd",
)  # fmt: skip
SPEEDS = (130, 175, 220)  # words a minute
PACES = (0.8, 1.0, 1.25)  # piper's length scale
WAKE_WORDS = re.compile(r"nabu|jarvis|mycroft|alexa", re.IGNORECASE)
REPLY = "Sure, here is what I found about the weather for tomorrow in the city centre."


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def espeak(text: str, voice: str, speed: int = 175) -> Samples:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "said.wav"
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", str(path), text], check=True)
        return np.asarray(read_wav(path).samples, np.float32)


def reverb(samples: Samples) -> Samples:
    """sox's reverb, as a far speaker in a room sounds."""
    with tempfile.TemporaryDirectory() as folder:
        dry, wet = Path(folder) / "dry.raw", Path(folder) / "wet.raw"
        dry.write_bytes(samples.astype("<f4").tobytes())
        raw = ["-t", "raw", "-e", "floating-point", "-b", "32", "-c", "1", "-r", str(ENGINE_RATE)]
        subprocess.run(["sox", *raw, str(dry), *raw, str(wet), "reverb", "60"], check=True)
        return np.frombuffer(wet.read_bytes(), "<f4")[: len(samples)].copy()


def rms(samples: Samples) -> float:
    return float(np.sqrt(np.mean(np.square(samples)))) or 1e-9


def pink(length: int, seed: int) -> Samples:
    noise = np.fft.rfft(np.random.default_rng(seed).standard_normal(length))
    noise /= np.sqrt(np.maximum(np.arange(len(noise)), 1))
    out = np.fft.irfft(noise, length).astype(np.float32)
    return out / rms(out)


def padded(samples: Samples) -> Samples:
    pad = np.zeros(ENGINE_RATE // 2, np.float32)
    return np.concatenate([pad, samples, pad])


def conditions(clip: Samples, reply: Samples, seed: int) -> dict[str, Samples]:
    loud = rms(clip)
    looped = np.resize(reply, len(clip))
    return {
        "clean": clip,
        "noise": clip + pink(len(clip), seed) * loud / np.sqrt(10.0),  # 10 dB SNR
        "far": reverb(clip * 0.1),
        "over_reply": clip + looped * loud / rms(looped),
    }


def detections(name: str, samples: Samples) -> tuple[list[int], float]:
    """Detection samples and the process time taken, the audio fed as a mic feeds it (40 ms blocks)."""
    detector = MicroWakeDetector(next(m.config for m in bundled_wake_models() if m.name == name))
    found = []
    started = time.process_time()
    for start in range(0, len(samples), BLOCK):
        heard = detector.hear(AudioBlock(samples[start : start + BLOCK], ENGINE_RATE, start))
        if heard is not None:
            found.append(heard.sample)
    spent = time.process_time() - started
    detector.close()
    return found, spent


def wake_clips(quick: bool) -> tuple[dict[str, list[tuple[str, Samples]]], dict[str, list[float]]]:
    """Per model: (speaker and condition, clip); and piper's end-of-word lags, in ms."""
    voices = ESPEAK_VOICES[:3] if quick else ESPEAK_VOICES
    speeds = SPEEDS[1:2] if quick else SPEEDS
    paces = PACES[1:2] if quick else PACES
    reply = PiperSynthesizer().synthesize(REPLY).audio.samples
    clips: dict[str, list[tuple[str, Samples]]] = {name: [] for name in SAID}
    lags: dict[str, list[float]] = {name: [] for name in SAID}
    for seed, (name, words) in enumerate(SAID.items()):
        text = f"{words}, what's the time?"
        for voice in voices:
            for speed in speeds:
                for condition, clip in conditions(padded(espeak(text, voice, speed)), reply, seed).items():
                    clips[name].append((f"espeak {voice} {speed} {condition}", clip))
        for pace in paces:
            said = PiperSynthesizer(PiperSettings(length_scale=pace)).synthesize(text)
            clip = padded(said.audio.samples)
            found, _ = detections(name, clip)
            word_end = ENGINE_RATE // 2 + said.words[len(words.split()) - 1].end
            lags[name] += [(found[0] - word_end) * 1000 / ENGINE_RATE] if found else []
            for condition, mixed in conditions(clip, reply, seed).items():
                clips[name].append((f"piper joe {pace} {condition}", mixed))
    return clips, lags


def read_aloud(quick: bool) -> list[tuple[str, Samples]]:
    """The README and the architecture doc read by espeak-ng voices and piper: sentences with no wake word."""
    text = " ".join(
        (ROOT / name).read_text(encoding="utf-8") for name in ("README.md", "docs/architecture.md")
    )
    text = re.sub(r"`[^`]*`|\([^)]*\)|\[[^\]]*\]|[#*|_<>{}=]", " ", text)
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if len(s.split()) >= 4]
    sentences = [s for s in sentences if not WAKE_WORDS.search(s)]
    if quick:
        sentences = sentences[:40]
    readers: list[tuple[str, Any]] = [(voice, None) for voice in ("en", "en-us", "en+f3", "en-gb-scotland")]
    piper = PiperSynthesizer()
    out = []
    for index, (voice, _) in enumerate(readers):
        part = sentences[index::4] if not quick else sentences
        out.append((f"espeak {voice} reads the docs", espeak(" ".join(part), voice)))
    piper_part = sentences[: 40 if quick else 200]  # piper is slower: some ten minutes of it
    out.append(
        ("piper joe reads the docs", np.concatenate([piper.synthesize(s).audio.samples for s in piper_part]))
    )
    return out


def not_wake_audio(quick: bool) -> list[tuple[str, Samples]]:
    corpus = [
        (f"real {p.stem}", np.asarray(read_wav(p).samples, np.float32))
        for p in sorted((AUDIO / "real").glob("*.wav"))
    ]
    corpus += [
        (f"fixture {p.stem}", np.asarray(read_wav(p).samples, np.float32))
        for p in sorted(AUDIO.glob("*.wav"))
    ]
    corpus += read_aloud(quick)
    minutes = 1 if quick else 5
    length = minutes * 60 * ENGINE_RATE
    t = np.arange(length) / ENGINE_RATE
    chord = sum(
        np.sin(2 * np.pi * f * t) * (0.5 + 0.5 * np.sin(2 * np.pi * t / (1 + i)))
        for i, f in enumerate((220.0, 277.2, 329.6, 440.0))
    )
    corpus.append(("noise pink", pink(length, 1) * 0.05))
    corpus.append(("noise white", np.random.default_rng(2).standard_normal(length).astype(np.float32) * 0.02))
    corpus.append(("music chords", (chord * 0.05).astype(np.float32)))
    speech = np.concatenate([clip for label, clip in corpus if label.startswith("real")])
    tv = np.resize(speech, length) + pink(length, 3) * 0.3 * rms(speech)
    corpus.append(("television: real speech under noise", tv.astype(np.float32)))
    return corpus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer voices and speeds, less non-wake audio")
    args = parser.parse_args()
    say("making wake word clips...")
    clips, lags = wake_clips(args.quick)
    say("assembling speech and noise without a wake word...")
    others = not_wake_audio(args.quick)
    hours = sum(len(samples) for _, samples in others) / ENGINE_RATE / 3600
    results: dict[str, Any] = {}
    for name in SAID:
        say(f"{name}...")
        heard: dict[str, list[bool]] = {}
        for label, clip in clips[name]:
            found, _ = detections(name, clip)
            heard.setdefault(label.rsplit(" ", 1)[1], []).append(bool(found))
        false_wakes: dict[str, int] = {}
        spent = 0.0
        for label, samples in others:
            found, cost = detections(name, samples)
            spent += cost
            if found:
                false_wakes[label] = len(found)
        all_heard = [hit for hits in heard.values() for hit in hits]
        results[name] = {
            "detection": round(sum(all_heard) / len(all_heard), 3),
            "detection_by_condition": {k: round(sum(v) / len(v), 3) for k, v in heard.items()},
            "wake_words_said": len(all_heard),
            "false_wakes": sum(false_wakes.values()),
            "false_wakes_per_hour": round(sum(false_wakes.values()) / hours, 2),
            "false_wakes_in": false_wakes,
            "cpu_percent_of_one_core": round(100 * spent / (hours * 3600), 2),
            "end_of_word_to_detection_ms": round(statistics.median(lags[name]), 0) if lags[name] else None,
        }
    print(json.dumps(with_cpu({
        "non_wake_audio_hours": round(hours, 3),
        "speakers": "espeak-ng voices and piper joe; none tuned on",
        "models": results,
    }), indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
