"""Two sets of speech the project was not tuned on, to tune hearing on one and report on the other.

``tuning`` and ``held_out`` follow TEAM.md's voice pools: espeak-ng accents (three variants each, at
130, 160 and 190 words a minute), the bundled piper voice (tuning only, two speeds) and the real
recordings of ``audio/real/`` (audio/real/README.md). The two sets say different phrasings of the same
kinds of thing, so a rule tuned on one set's words is tested on other words:

- ``command``: short commands ("Stop.", "Skip this one.");
- ``repeat``: a short word said twice ("five five", "no no", "yes yes"), where the cut encoder window
  looped;
- ``answer``: a short answer to what the assistant just asked ("Pick a card." -> "Hearts."), with that
  question as ``context``;
- ``question``: whole questions.

Each synthesized utterance is framed as the VAD cuts one (0.3 s of pre-roll, the speech, 0.6 s of end
silence), levelled as audio/make_fixtures.py levels the fixtures, under audio/pink-noise.wav 40 dB below
the speech so that no frame is digital zero. Deterministic: the same audio on every run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from unfamiliar_speech import fixture_maker, with_noise

from voice.audio.block import ENGINE_RATE, Samples
from voice.audio.wav import read_wav

AUDIO = Path(__file__).resolve().parents[1] / "audio"
PRE_ROLL_S, END_SILENCE_S = 0.3, 0.6
NOISE_SNR_DB = 40.0
SETS = ("tuning", "held_out")

ACCENTS = {
    "tuning": ("en-us", "en-gb", "en-029", "en-gb-x-gbclan"),
    "held_out": ("en-gb-scotland", "en-us-nyc", "en-gb-x-rp", "en-gb-x-gbcwmd"),
}
VARIANTS = ("m1", "f2", "m3", "f4", "m7", "f1")
SPEEDS_WPM = (130, 160, 190)
PIPER_SCALES = {"tuning": (1.0, 1.2), "held_out": ()}

# (kind, text, context): the assistant's words before it, for answers
PHRASES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "tuning": (
        ("command", "Stop.", ""),
        ("command", "Next song.", ""),
        ("command", "Turn it down.", ""),
        ("command", "Cancel that.", ""),
        ("repeat", "five five", ""),
        ("repeat", "two two", ""),
        ("repeat", "seven seven", ""),
        ("repeat", "no no", ""),
        ("repeat", "yes yes", ""),
        ("answer", "Hearts.", "Pick a card."),
        ("answer", "The queen of spades.", "Pick a card."),
        ("answer", "Thursday.", "Which day suits you best?"),
        ("answer", "Tails.", "Heads or tails?"),
        ("answer", "Magenta.", "What colour should the lights be?"),
        ("answer", "Eleven.", "How many people are coming?"),
        ("question", "What time does the pharmacy close today?", ""),
        ("question", "Can you turn the heating up a little?", ""),
    ),
    "held_out": (
        ("command", "Pause.", ""),
        ("command", "Skip this one.", ""),
        ("command", "Louder please.", ""),
        ("command", "Never mind.", ""),
        ("repeat", "nine nine", ""),
        ("repeat", "four four", ""),
        ("repeat", "eight eight", ""),
        ("repeat", "no no", ""),
        ("repeat", "yes yes", ""),
        ("answer", "Diamonds.", "Pick a card."),
        ("answer", "The jack of clubs.", "Pick a card."),
        ("answer", "November.", "Which month were you born in?"),
        ("answer", "White.", "Red or white wine?"),
        ("answer", "The cello.", "Which instrument do you play?"),
        ("answer", "Three.", "How many sugars would you like?"),
        ("question", "How many grams are in a pound?", ""),
        ("question", "When is my next meeting with Sarah?", ""),
    ),
}


@dataclass(frozen=True)
class Spoken:
    """One utterance as ASR gets it: ``text`` is the reference ('' if none), ``context`` what the
    assistant (or the other speaker) said just before."""

    name: str
    set: str
    voice: str  # "espeak-ng ACCENT+VARIANT@WPM", "piper xSCALE" or "real: SOURCE"
    family: str  # the accent, "piper" or "real"
    kind: str  # command, repeat, answer, question, or read (a real recording)
    text: str
    context: str
    samples: Samples


def framed(speech: Samples, index: int) -> Samples:
    """The speech levelled, with the VAD's pre-roll and end silence, under faint noise."""
    make = fixture_maker()
    lead, tail = make.silence(PRE_ROLL_S), make.silence(END_SILENCE_S)
    signal = np.concatenate([lead, make.level_speech(make.trim(speech)), tail]).astype(np.float32)
    spoken = slice(len(lead), len(signal) - len(tail))
    noise = read_wav(AUDIO / "pink-noise.wav").samples
    return with_noise(signal, noise, NOISE_SNR_DB, offset=7919 * index, speech=spoken)


def synthesized(which: str) -> list[Spoken]:
    make = fixture_maker()
    synths: list[tuple[str, str, object]] = []
    for a, accent in enumerate(ACCENTS[which]):
        for k, wpm in enumerate(SPEEDS_WPM):
            variant = VARIANTS[(2 * a + k) % len(VARIANTS)]
            synths.append(
                (accent, f"espeak-ng {accent}+{variant}@{wpm}", make.Espeak(f"{accent}+{variant}", wpm))
            )
    synths += [("piper", f"piper x{scale}", make.Piper(scale)) for scale in PIPER_SCALES[which]]
    found = []
    for family, label, synth in synths:
        for kind, text, context in PHRASES[which]:
            samples = framed(synth.speak(text), len(found))  # type: ignore[attr-defined]
            found.append(Spoken(f"{label}: {text}", which, label, family, kind, text, context, samples))
    return found


def recorded(which: str) -> list[Spoken]:
    """audio/real/'s utterances of this pool, as recorded."""
    manifest = json.loads((AUDIO / "real" / "manifest.json").read_text(encoding="utf-8"))
    found = []
    for entry in manifest["utterances"]:
        if entry["pool"] != which:
            continue
        samples = read_wav(AUDIO / "real" / entry["file"]).samples
        source = entry["file"].rsplit(".", 1)[0]
        found.append(
            Spoken(
                f"real {source}",
                which,
                f"real: {source}",
                "real",
                "read",
                entry["text"],
                entry["context"],
                samples,
            )
        )
    return found


def hearing_set(which: str) -> list[Spoken]:
    """The whole set: synthesized voices, then real recordings."""
    if which not in SETS:
        raise SystemExit(f"no set {which!r}: choose from {', '.join(SETS)}")
    return synthesized(which) + recorded(which)


def seconds(spoken: Spoken) -> float:
    return len(spoken.samples) / ENGINE_RATE
