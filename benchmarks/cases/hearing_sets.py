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

For turn-taking (benchmarks/turn_end.py), ``turns`` gives each set's whole turns and turns with a pause in
them, on a mic signal with room before and after: ``TURN_QUESTIONS`` said whole (questions and requests,
three to ten words), ``TURN_PAUSED`` said in two parts with a 0.40-0.50 s pause between them (the parts
synthesized apart, as audio/make_fixtures.py makes the recorded pause fixtures; after a first part that
sounds finished, "Book a table", or one that does not, "I'd like to know"), by the same voices; and the
set's real recordings, whole (those that end a sentence) and, for those of six words or more, with the
quiet at the word boundary nearest their middle made a 0.45 s pause. The held-out texts were written before
anything was measured on them.

Each synthesized utterance is framed as the VAD cuts one (0.3 s of pre-roll, the speech, 0.6 s of end
silence), levelled as audio/make_fixtures.py levels the fixtures, under audio/pink-noise.wav 40 dB below
the speech so that no frame is digital zero. Deterministic: the same audio on every run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cases.unfamiliar_speech import PAUSED, QUESTIONS, fixture_maker, with_noise
from voice.audio.block import ENGINE_RATE, Samples
from voice.audio.wav import read_wav

AUDIO = Path(__file__).resolve().parents[2] / "audio"
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


TURN_LEAD_S, TURN_TAIL_S = 0.5, 1.5
TURN_QUESTIONS_PER_VOICE = 6
TURN_PAUSED_PER_VOICE = 2
TURN_PAUSES_S = (0.40, 0.45, 0.50)
REAL_PAUSE_S = 0.45
REAL_PAUSED_WORDS = 6  # real recordings of this many words or more get a pause put in
_HELD_OUT_QUESTIONS = (
    "How many grams are in a pound?",
    "When is my next meeting with Sarah?",
    "Which planet is closest to the sun?",
    "Could you play something relaxing?",
    "How far is it to the nearest petrol station?",
    "Turn off the kitchen lights.",
    "What should I cook for dinner tonight?",
    "Who won the football match yesterday?",
    "Is the library open on Sundays?",
    "Send a message to Tom saying I'm running late.",
    "How do you spell necessary?",
    "What's the difference between a frog and a toad?",
    "What day is it today?",
    "Is it cold outside?",
    "Find me a recipe for pancakes.",
    "Where is the nearest cash machine?",
)
TURN_QUESTIONS: dict[str, tuple[str, ...]] = {
    # unfamiliar_speech.py's, which the rules before were tuned on too, but the held-out set's two
    "tuning": (
        *(question for question in QUESTIONS if question not in _HELD_OUT_QUESTIONS),
        "Why is the sky blue?",
        "What's the time?",
        "Are you still there?",
        "Remind me to water the plants.",
        "How long should I boil an egg?",
        "Read me the latest headlines.",
    ),
    "held_out": _HELD_OUT_QUESTIONS,
}
# (first part, rest, whether the first part alone sounds like a finished turn)
TURN_PAUSED: dict[str, tuple[tuple[str, str, bool], ...]] = {
    "tuning": PAUSED,  # unfamiliar_speech.py's, which the rules before were tuned on too
    "held_out": (
        ("Book a table", "for four at eight o'clock.", True),
        ("I'd like to know", "when the next bus leaves.", False),
        ("Set a reminder", "to pay the electricity bill.", True),
        ("Do you think", "it will snow this week?", False),
        ("Open the garage door", "when I get back.", True),
        ("What I really need", "is a cup of coffee.", False),
        ("Tell me a story", "about a brave little mouse.", True),
        ("Can you check if", "the post office is open?", False),
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


def synths(which: str) -> list[tuple[str, str, Any]]:
    """(family, label, make_fixtures' Espeak or Piper) of each voice of the set."""
    make = fixture_maker()
    found: list[tuple[str, str, Any]] = []
    for a, accent in enumerate(ACCENTS[which]):
        for k, wpm in enumerate(SPEEDS_WPM):
            variant = VARIANTS[(2 * a + k) % len(VARIANTS)]
            found.append(
                (accent, f"espeak-ng {accent}+{variant}@{wpm}", make.Espeak(f"{accent}+{variant}", wpm))
            )
    return found + [("piper", f"piper x{scale}", make.Piper(scale)) for scale in PIPER_SCALES[which]]


def synthesized(which: str) -> list[Spoken]:
    found = []
    for family, label, synth in synths(which):
        for kind, text, context in PHRASES[which]:
            samples = framed(synth.speak(text), len(found))
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


@dataclass(frozen=True)
class Turn:
    """One user turn on the mic: ``signal`` has TURN_LEAD_S before the speech and TURN_TAIL_S after.

    ``speech_start``/``speech_end`` are the samples where the first word starts and the last ends. A turn
    with a pause in it (``kind`` "paused") has ``pause_at``, where its first part ends, and says whether
    that part alone sounds like a finished turn.
    """

    name: str
    set: str
    voice: str
    family: str  # the accent, "piper" or "real"
    kind: str  # "whole" or "paused"
    text: str
    signal: Samples
    speech_start: int
    speech_end: int
    pause_at: int | None = None
    first_part_sounds_finished: bool | None = None


def on_mic(
    parts: list[Samples], gaps: list[Samples], index: int, snr_db: float, recorded: bool = False
) -> tuple[Samples, int, int, int | None]:
    """``parts`` of speech (levelled as one) joined by ``gaps``, with lead and tail, under pink noise
    ``snr_db`` below the speech: (signal, where the speech starts and ends as the fixtures' manifest
    measures it, where the first part ends if there is a gap). ``recorded``: the parts carry a
    recording's own noise."""
    make = fixture_maker()
    joined, first_end = parts[0], None
    for gap, part in zip(gaps, parts[1:], strict=True):
        first_end = len(joined) if first_end is None else first_end
        joined = np.concatenate([joined, gap, part])
    lead = round(TURN_LEAD_S * ENGINE_RATE)
    levelled = make.level_speech(joined)
    signal = np.concatenate([make.silence(TURN_LEAD_S), levelled, make.silence(TURN_TAIL_S)])
    first, end = speech_span(levelled, recorded)
    start, end = lead + first, lead + end
    noise = read_wav(AUDIO / "pink-noise.wav").samples
    noisy = with_noise(signal.astype(np.float32), noise, snr_db, 7919 * index, slice(start, end))
    return noisy, start, end, None if first_end is None else lead + first_end


def speech_span(samples: Samples, recorded: bool = False) -> tuple[int, int]:
    """[first, end) sample of the speech in levelled ``samples``: its first and last 10 ms frame at or
    above -45 dBFS, as audio/manifest.json measures the fixtures, or, in a recording (``recorded``),
    15 dB above the quietest tenth of its frames where its own noise is louder than that."""
    make = fixture_maker()
    levels = make.frame_dbfs(samples)
    floor = float(np.percentile(levels, 10)) + 15.0 if recorded else -np.inf
    loud = np.flatnonzero(levels >= max(make.ACTIVE_DBFS, floor))
    return int(loud[0]) * make.FRAME, (int(loud[-1]) + 1) * make.FRAME


def synthesized_turns(which: str, snr_db: float = NOISE_SNR_DB) -> list[Turn]:
    make = fixture_maker()
    found: list[Turn] = []
    questions, paused = TURN_QUESTIONS[which], TURN_PAUSED[which]
    for index, (family, label, synth) in enumerate(synths(which)):
        for k in range(TURN_QUESTIONS_PER_VOICE):
            text = questions[(index * TURN_QUESTIONS_PER_VOICE + k) % len(questions)]
            signal, start, end, _ = on_mic([make.trim(synth.speak(text))], [], len(found), snr_db)
            found.append(Turn(f"{label}: {text}", which, label, family, "whole", text, signal, start, end))
        for k in range(TURN_PAUSED_PER_VOICE):
            first, rest, sounds_finished = paused[(index * TURN_PAUSED_PER_VOICE + k) % len(paused)]
            gap_s = TURN_PAUSES_S[(index + k) % len(TURN_PAUSES_S)]
            parts = [make.trim(synth.speak(part)) for part in (first, rest)]
            signal, start, end, pause_at = on_mic(parts, [make.silence(gap_s)], len(found), snr_db)
            name = f"{label}: {first} | {gap_s:.2f} s | {rest}"
            text = f"{first} {rest}"
            found.append(
                Turn(
                    name, which, label, family, "paused", text, signal, start, end, pause_at, sounds_finished
                )
            )
    return found


def word_boundary(samples: Samples, words: list[tuple[float, float]]) -> tuple[int, int]:
    """The quiet between the two words nearest the middle of ``words`` ((start_s, end_s) each) in
    levelled ``samples``, as [start, end) samples, which a pause replaces: the 10 ms frames around the
    quietest one from 60 ms before the first word's end to 60 ms after the next one's start (at least
    that frame) that are silent as the fixtures' manifest has it (under -45 dBFS), or within 10 dB of
    the recording's quietest tenth where its own noise is louder."""
    make = fixture_maker()
    levels = make.frame_dbfs(samples)
    middle = min(range(1, len(words)), key=lambda i: abs(i - len(words) / 2))
    low = max(0, round(words[middle - 1][1] * 100) - 6)
    high = min(len(levels), max(low + 1, round(words[middle][0] * 100) + 6))
    first = end = low + int(np.argmin(levels[low:high]))
    quiet = max(make.ACTIVE_DBFS, float(np.percentile(levels, 10)) + 10.0)
    while first > 0 and levels[first - 1] < quiet:
        first -= 1
    while end + 1 < len(levels) and levels[end + 1] < quiet:
        end += 1
    return first * make.FRAME, (end + 1) * make.FRAME


def recorded_turns(which: str, timed_words: Any, snr_db: float = NOISE_SNR_DB) -> list[Turn]:
    """audio/real/'s utterances of this pool that end a sentence, whole, and those of REAL_PAUSED_WORDS
    words or more again with a REAL_PAUSE_S pause at the word boundary nearest their middle;
    ``timed_words(samples)`` gives the (start_s, end_s) of each word heard (whisper's word times)."""
    make = fixture_maker()
    found: list[Turn] = []
    for spoken in recorded(which):
        if spoken.text.rstrip().endswith((",", "-")):  # a reader's clause: the sentence goes on
            continue
        speech = fixture_maker().level_speech(spoken.samples.astype(np.float64))
        signal, start, end, _ = on_mic([speech], [], len(found), snr_db, recorded=True)
        found.append(Turn(spoken.name, which, spoken.voice, "real", "whole", spoken.text, signal, start, end))
        words = timed_words(speech)
        if len(spoken.text.split()) < REAL_PAUSED_WORDS or len(words) < 2:
            continue
        cut_from, cut_to = word_boundary(speech, words)
        parts = [speech[:cut_from], speech[cut_to:]]
        signal, start, end, pause_at = on_mic(parts, [make.silence(REAL_PAUSE_S)], len(found), snr_db, True)
        name = f"{spoken.name} | {REAL_PAUSE_S:.2f} s at {cut_from / ENGINE_RATE:.2f} s"
        turn = Turn(name, which, spoken.voice, "real", "paused", spoken.text, signal, start, end, pause_at)
        found.append(turn)
    return found


def turns(which: str, timed_words: Any, snr_db: float = NOISE_SNR_DB) -> list[Turn]:
    """The set's turns for turn-taking: synthesized voices, then real recordings (see the module's note),
    under pink noise ``snr_db`` below the speech (the hearing sets' faint noise unless told)."""
    if which not in SETS:
        raise SystemExit(f"no set {which!r}: choose from {', '.join(SETS)}")
    return synthesized_turns(which, snr_db) + recorded_turns(which, timed_words, snr_db)
