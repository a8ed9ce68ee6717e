"""Speech the project was not tuned on, made at benchmark time: many voices, with noise, some with a pause.

Every voice says a few whole questions (a rotating share of ``QUESTIONS``), and two questions split in two
by a 0.40-0.50 s pause (``PAUSED``: after a first part that sounds finished, "Turn on the lights", or one
that does not, "Could you tell me"; the parts are synthesized apart, as audio/make_fixtures.py makes the
recorded pause fixtures). Voices: the bundled piper voice at three speeds, and eight espeak-ng accents
(en-us, en-gb, en-gb-scotland, en-029, en-us-nyc, en-gb-x-rp, en-gb-x-gbclan, en-gb-x-gbcwmd), each in
three variants (+f1..f5, +m1..m7) at 130-190 words a minute. Each utterance is heard clean and under the
pink noise of audio/pink-noise.wav at 20 and 10 dB SNR, over the whole mic signal (lead and tail too).

Synthesis (espeak-ng, piper with zero noise scales), levels and trimming are audio/make_fixtures.py's, so
the corpus is the same on every run. ``TUNED_ON`` are the families a change may be tuned on; the others are
held out, to report on.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np

from voice.audio.block import ENGINE_RATE, Samples
from voice.audio.wav import read_wav

AUDIO = Path(__file__).resolve().parents[2] / "audio"
LEAD_S, TAIL_S = 0.5, 1.5
SNR_DB = (20.0, 10.0)
PAUSES_S = (0.40, 0.45, 0.50)
QUESTIONS_PER_VOICE = 4

QUESTIONS = (
    "What time does the pharmacy close today?",
    "How many grams are in a pound?",
    "Can you turn the heating up a little?",
    "Who wrote the novel Middlemarch?",
    "Play the news from this morning.",
    "Is it going to rain this afternoon?",
    "Set an alarm for half past six.",
    "What is the capital of Australia?",
    "How do I get to the train station from here?",
    "Tell me a joke about penguins.",
    "Add eggs and butter to my shopping list.",
    "When is my next meeting with Sarah?",
)
# (first part, rest, whether the first part alone sounds like a finished turn)
PAUSED = (
    ("Turn on the lights", "in the living room.", True),
    ("Could you tell me", "how far away the moon is?", False),
    ("Play some music", "by Miles Davis.", True),
    ("I was thinking", "about a trip to Rome.", False),
    ("What's the time", "in New York?", True),
    ("Can you find", "a good Italian restaurant nearby?", False),
    ("Call my mother", "when I get home.", True),
    ("The thing is", "my train is running late.", False),
    ("Add milk", "to the shopping list.", True),
    ("How about", "a film tonight?", False),
)
ESPEAK_FAMILIES = (
    "en-us",
    "en-gb",
    "en-gb-scotland",
    "en-029",
    "en-us-nyc",
    "en-gb-x-rp",
    "en-gb-x-gbclan",
    "en-gb-x-gbcwmd",
)
VARIANTS = ("f1", "m1", "f2", "m2", "f3", "m3", "f4", "m4", "f5", "m5", "m6", "m7")
SPEEDS_WPM = (130, 160, 190)
PIPER_SCALES = (0.9, 1.0, 1.25)
TUNED_ON = ("piper", "en-us", "en-gb", "en-029")  # the rest are held out


@functools.cache
def fixture_maker() -> ModuleType:
    """audio/make_fixtures.py, whose synthesis and levelling the corpus shares (audio/ is no package)."""
    spec = importlib.util.spec_from_file_location("make_fixtures", AUDIO / "make_fixtures.py")
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {AUDIO / 'make_fixtures.py'}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being made
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Voice:
    family: str  # "piper" or the espeak-ng accent
    synth: object  # make_fixtures' Espeak or Piper
    label: str


def voices() -> list[Voice]:
    make = fixture_maker()
    found = [Voice("piper", make.Piper(scale), f"piper x{scale}") for scale in PIPER_SCALES]
    for index, family in enumerate(ESPEAK_FAMILIES):
        for k in range(3):
            variant = VARIANTS[(3 * index + k) % len(VARIANTS)]
            wpm = SPEEDS_WPM[(index + k) % len(SPEEDS_WPM)]
            found.append(Voice(family, make.Espeak(f"{family}+{variant}", wpm), f"{family}+{variant}@{wpm}"))
    return found


@dataclass(frozen=True)
class Said:
    """One utterance on the mic: ``signal`` has ``LEAD_S`` before the speech and ``TAIL_S`` after.

    ``speech_start``/``speech_end`` are the samples where the first word starts and the last ends;
    ``pause_after`` is the first part before a mid-sentence pause (None for a whole question), which
    ends at ``pause_at``.
    """

    name: str
    family: str
    condition: str  # "clean" or "noise N dB"
    text: str
    signal: Samples
    speech_start: int
    speech_end: int
    pause_after: str | None = None
    pause_at: int | None = None
    first_part_sounds_finished: bool | None = None

    @property
    def held_out(self) -> bool:
        return self.family not in TUNED_ON

    def speech(self, margin_s: float = 0.2) -> Samples:
        """The speech with ``margin_s`` of the mic signal either side, as the VAD cuts an utterance."""
        margin = round(margin_s * ENGINE_RATE)
        return self.signal[max(0, self.speech_start - margin) : self.speech_end + margin]


def with_noise(
    samples: Samples, noise: Samples, snr_db: float, offset: int = 0, speech: slice = slice(None)
) -> Samples:
    """``samples`` with ``noise`` (looped, from ``offset``) at ``snr_db`` below the mean power of their
    ``speech`` part (all of them unless given)."""
    looped = np.resize(np.roll(noise, -offset), len(samples))
    gain = np.sqrt(np.mean(samples[speech] ** 2) / np.mean(looped**2) / 10 ** (snr_db / 10))
    return (samples + gain * looped).astype(np.float32)


def _on_mic(parts: list[Samples], gap_s: float) -> tuple[Samples, int, int]:
    """Parts joined by ``gap_s`` of silence, levelled, with lead and tail: (signal, speech start, end)."""
    make = fixture_maker()
    joined = parts[0]
    for part in parts[1:]:
        joined = np.concatenate([joined, make.silence(gap_s), part])
    lead = round(LEAD_S * ENGINE_RATE)
    signal = np.concatenate([make.silence(LEAD_S), make.level_speech(joined), make.silence(TAIL_S)])
    return signal.astype(np.float32), lead, lead + len(joined)


def corpus(paused: bool = True) -> list[Said]:
    """Every utterance, clean and with noise; deterministic. ``paused`` False: whole questions only."""
    make = fixture_maker()
    noise = read_wav(AUDIO / "pink-noise.wav").samples
    clean: list[Said] = []
    for index, voice in enumerate(voices()):
        for k in range(QUESTIONS_PER_VOICE):
            text = QUESTIONS[(index * QUESTIONS_PER_VOICE + k) % len(QUESTIONS)]
            signal, start, end = _on_mic([make.trim(voice.synth.speak(text))], 0.0)
            clean.append(Said(f"{voice.label}: {text}", voice.family, "clean", text, signal, start, end))
        for k in range(2 if paused else 0):
            first, rest, finished = PAUSED[(2 * index + k) % len(PAUSED)]
            gap_s = PAUSES_S[(index + k) % len(PAUSES_S)]
            parts = [make.trim(voice.synth.speak(part)) for part in (first, rest)]
            signal, start, end = _on_mic(parts, gap_s)
            clean.append(
                Said(
                    f"{voice.label}: {first} | {gap_s:.2f} s | {rest}",
                    voice.family,
                    "clean",
                    f"{first} {rest}",
                    signal,
                    start,
                    end,
                    first,
                    start + len(parts[0]),
                    finished,
                )
            )
    found = list(clean)
    for snr in SNR_DB:
        for index, said in enumerate(clean):
            speech = slice(said.speech_start, said.speech_end)
            noisy = with_noise(said.signal, noise, snr, offset=7919 * index, speech=speech)
            found.append(
                Said(
                    f"{said.name} (noise {snr:g} dB)",
                    said.family,
                    f"noise {snr:g} dB",
                    said.text,
                    noisy,
                    said.speech_start,
                    said.speech_end,
                    said.pause_after,
                    said.pause_at,
                    said.first_part_sounds_finished,
                )
            )
    return found
