"""Voice activity detection on webrtcvad: turns mic blocks into speech-started / speech-ended events.

Pure: blocks in, events out, positions on the sample clock; no I/O and no wall clock, so a recorded
session replays to the same events. Two settings apply: ``quiet`` while only the user may be talking,
and stricter ``barge_in`` while the assistant speaks, so echo, a cough or a click does not cut it off.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import webrtcvad

from voice.audio.block import ENGINE_RATE, AudioBlock, Samples
from voice.errors import AudioError, ConfigError, ProtocolError

_VAD_RATES = (8_000, 16_000, 32_000, 48_000)
# The noise floor is the quietest frame this long back: speech never goes this long without a quieter gap,
# so a talker does not lift it, and a fan switched on is learnt within it.
NOISE_FLOOR_MS = 2_000
# Frames webrtcvad calls voiced count this long after the last one above the noise floor, as webrtcvad's own
# hangover does in the quiet: the ends of words and the pauses measured after them stay as they were.
FLOOR_HANGOVER_MS = 100


@dataclass(frozen=True)
class VadSettings:
    """How speech is found and ended; all durations in milliseconds of audio.

    Speech starts once ``start_voiced_ms`` of voiced frames fall within the last ``start_window_ms``;
    it ends after ``end_silence_ms`` without a voiced frame (endpointing) or at ``max_utterance_ms``.
    After ``speculate_ms`` of silence the utterance so far is offered early, so ASR and the end-of-turn
    model can run while endpointing waits (never when None or not below ``end_silence_ms``); the offer
    equals the final utterance when no speech follows, both ending ``speculate_ms`` after the last voiced
    frame (or the shorter of pre-roll and end silence).
    Frames quieter than ``min_level_dbfs`` never count as voiced (residual echo, distant noise), nor frames
    less than ``above_floor_db`` louder than the noise floor (the quietest frame of the last
    ``NOISE_FLOOR_MS`` heard while the assistant was silent) and not within ``FLOOR_HANGOVER_MS`` after one
    that is: webrtcvad calls most frames of steady noise (a fan, a street) voiced, so the pause at the end
    of a question would never be heard. Nor does a frame within that hangover count, inside an
    utterance, when it is ``faint_below_peak_db`` or more below the loudest frame of the last
    ``NOISE_FLOOR_MS``: in a quiet room such a frame is the room, not the voice, and counting it ended
    every turn up to 100 ms late (the tail of a voice 40 dB above faint noise was heard 80 ms longer
    than the same voice in silence).
    With a speech model, speech also starts once ``quick_voiced_ms`` are voiced within the window while the
    model has heard speech (``speech_probability`` or more) in every frame of the last ``quick_speech_ms``: a
    voice needs less webrtcvad evidence than a cough or a knock, which the model does not call speech.
    """

    aggressiveness: int = 2
    frame_ms: int = 20
    start_voiced_ms: int = 120
    start_window_ms: int = 200
    end_silence_ms: int = 600
    pre_roll_ms: int = 300
    min_level_dbfs: float = -60.0
    above_floor_db: float = 5.0
    max_utterance_ms: int = 30_000
    speculate_ms: int | None = 200
    quick_voiced_ms: int | None = None
    quick_speech_ms: int = 60
    speech_probability: float = 0.5
    faint_below_peak_db: float | None = None

    def __post_init__(self) -> None:
        if self.aggressiveness not in (0, 1, 2, 3):
            raise ConfigError(f"VAD aggressiveness must be 0-3, got {self.aggressiveness}")
        if self.frame_ms not in (10, 20, 30):
            raise ConfigError(f"VAD frame_ms must be 10, 20 or 30, got {self.frame_ms}")
        if not 0 < self.start_voiced_ms <= self.start_window_ms:
            raise ConfigError(
                f"VAD start needs 0 < start_voiced_ms ({self.start_voiced_ms}) "
                f"<= start_window_ms ({self.start_window_ms})"
            )
        if self.end_silence_ms <= 0 or self.pre_roll_ms < 0:
            raise ConfigError("VAD end_silence_ms must be positive and pre_roll_ms not negative")
        if self.speculate_ms is not None and self.speculate_ms <= 0:
            raise ConfigError(f"VAD speculate_ms must be positive or None, got {self.speculate_ms}")
        if self.quick_voiced_ms is not None and not 0 < self.quick_voiced_ms < self.start_voiced_ms:
            raise ConfigError(
                f"VAD quick_voiced_ms ({self.quick_voiced_ms}) must lie between 0 and "
                f"start_voiced_ms ({self.start_voiced_ms})"
            )
        if self.above_floor_db < 0:
            raise ConfigError(f"VAD above_floor_db must not be negative, got {self.above_floor_db}")
        if self.faint_below_peak_db is not None and self.faint_below_peak_db <= 0:
            raise ConfigError(f"VAD faint_below_peak_db must be positive, got {self.faint_below_peak_db}")
        if self.quick_speech_ms <= 0 or not 0.0 < self.speech_probability < 1.0:
            raise ConfigError("VAD quick_speech_ms must be positive and speech_probability within (0, 1)")
        if self.max_utterance_ms <= self.start_window_ms:
            raise ConfigError(
                f"VAD max_utterance_ms must exceed start_window_ms, got {self.max_utterance_ms}"
            )

    def frames(self, ms: int) -> int:
        """How many whole VAD frames cover ``ms`` milliseconds (at least one)."""
        return max(1, math.ceil(ms / self.frame_ms))


# People pause up to 580 ms after a first word or a comma (real speech: benchmarks/README.md, Decided
# questions): with the hold's 120 ms margin over a speaker's pauses, words over a reply are not known to be
# over sooner.
PAUSE_OVER_REPLY_MS = 700
# Listening while the assistant is silent: catch the first syllable quickly, and the end of the last
# one as the fixtures measure it (35 dB below a levelled voice's loudest frames is about -45 dBFS).
DEFAULT_QUIET = VadSettings(faint_below_peak_db=35.0)
# While the assistant speaks: more confidence, more voiced audio and more level before cutting it off;
# less voiced audio when the speech model hears a voice in it. Its end silence is when a listener's "yeah"
# is known to be one (voice/engine/words_judge.py).
DEFAULT_BARGE_IN = VadSettings(
    aggressiveness=3,
    start_voiced_ms=160,
    start_window_ms=240,
    end_silence_ms=PAUSE_OVER_REPLY_MS,
    min_level_dbfs=-45.0,
    quick_voiced_ms=100,
)


class SpeechModel(Protocol):
    """How likely a continuous stream's latest audio is speech (``voice.audio.speech_probability``)."""

    def update(self, samples: Samples) -> float:
        """Feed the stream's next samples; the probability that its latest audio is speech."""
        ...

    def reset(self) -> None: ...


@dataclass(frozen=True)
class VoiceStarted:
    """Speech began at clock sample ``sample``: the first voiced frame of the onset."""

    sample: int


@dataclass(frozen=True)
class VoiceEnded:
    """Speech ended at clock sample ``sample`` (end of its last voiced frame).

    ``utterance`` holds the whole utterance for ASR, from ``pre_roll_ms`` before the onset to a short
    tail after ``sample`` (the shortest of pre-roll, end silence and speculate_ms); ``utterance.start`` is on
    the clock.
    """

    sample: int
    utterance: AudioBlock


@dataclass(frozen=True)
class VoicePaused:
    """``speculate_ms`` of silence after voiced audio ending at ``sample``: the utterance may be over.

    ``utterance`` is what VoiceEnded would carry if no more speech follows before endpointing.
    """

    sample: int
    utterance: AudioBlock


@dataclass(frozen=True)
class VoiceResumed:
    """Voiced audio at clock sample ``sample`` after a VoicePaused: that offer is no longer
    the utterance."""

    sample: int


VadEvent = VoiceStarted | VoicePaused | VoiceResumed | VoiceEnded


@dataclass(frozen=True)
class _Frame:
    start: int
    samples: Samples
    voiced: tuple[bool, bool]  # under (quiet, barge_in) settings
    speech: float  # the speech model's probability at the frame's end (0 without a model)


class VoiceActivityDetector:
    """Buffers blocks of any length into VAD frames and reports where speech starts and ends.

    Each frame is classified under both settings, so switching ``assistant_speaking`` takes effect at
    once. The settings that confirmed an onset stay in force until that utterance ends. Blocks must
    follow each other on the clock; a gap is filled with silence, an overlap is a driver bug.
    """

    def __init__(
        self,
        quiet: VadSettings,
        barge_in: VadSettings,
        rate: int = ENGINE_RATE,
        speech_model: SpeechModel | None = None,
    ) -> None:
        if rate not in _VAD_RATES:
            raise ConfigError(f"VAD runs at 8000, 16000, 32000 or 48000 Hz, not {rate}")
        if quiet.frame_ms != barge_in.frame_ms:
            raise ConfigError(
                "quiet and barge-in VAD settings must share frame_ms "
                f"({quiet.frame_ms} != {barge_in.frame_ms})"
            )
        self.rate = rate
        self._settings = (quiet, barge_in)
        self._frame_len = rate * quiet.frame_ms // 1000
        self._vads = {s.aggressiveness: webrtcvad.Vad(s.aggressiveness) for s in self._settings}
        self._speech_model = speech_model
        self._model_running = False  # fed since the assistant began speaking: its state is this reply's
        history = max(s.frames(s.start_window_ms) + s.frames(s.pre_roll_ms) for s in self._settings)
        self._history: deque[_Frame] = deque(maxlen=history + 1)
        self._levels: deque[float] = deque(maxlen=quiet.frames(NOISE_FLOOR_MS))  # for the noise floor
        self._hangover = quiet.frames(FLOOR_HANGOVER_MS)
        self._above_floor_ago = [self._hangover, self._hangover]  # frames since one stood out, per settings
        self._next_sample: int | None = None
        self._pending = np.zeros(0, dtype=np.float32)
        self._listen_from = 0
        self._active: int | None = None
        self._utterance: list[_Frame] = []
        self._last_voiced_end = 0
        self._offered = -1  # voiced end of the utterance last offered by VoicePaused
        self._voiced_until = 0  # end of the last frame voiced under the quiet settings

    @property
    def voiced_until(self) -> int:
        """End of the last frame voiced under the quiet settings, in or out of an utterance."""
        return self._voiced_until

    @property
    def start_window(self) -> int:
        """The quiet settings' start window in samples: voiced frames become speech within it, or never."""
        return self._settings[0].start_window_ms * self.rate // 1000

    @property
    def in_speech(self) -> bool:
        """True between a VoiceStarted and its VoiceEnded."""
        return self._active is not None

    def utterance_so_far(self) -> AudioBlock | None:
        """The audio of the utterance in progress, from its pre-roll to the last frame heard; None between
        utterances (whose voice it is can be judged before it ends)."""
        if self._active is None or not self._utterance:
            return None
        audio = np.concatenate([f.samples for f in self._utterance])
        return AudioBlock(audio, self.rate, self._utterance[0].start)

    def reset(self) -> None:
        """Forget all audio, any utterance in progress and the clock position."""
        self._history.clear()
        self._levels.clear()
        self._above_floor_ago = [self._hangover, self._hangover]
        self._next_sample = None
        self._pending = np.zeros(0, dtype=np.float32)
        self._listen_from = 0
        self._active = None
        self._utterance = []
        self._model_running = False

    def end_utterance(self) -> None:
        """The turn was judged over at the last pause: voiced audio after it starts a new utterance.

        No VoiceEnded follows for the utterance in progress; its pause offer stands as its end.
        """
        if self._active is not None:
            self._listen_from = self._last_voiced_end
            self._active = None
            self._utterance = []

    def process(self, block: AudioBlock, assistant_speaking: bool) -> list[VadEvent]:
        """Feed the next mic block; returns the events its audio completes, in clock order."""
        if block.rate != self.rate or block.channels != 1:
            raise AudioError(
                f"VAD needs mono {self.rate} Hz blocks, got {block.channels} ch at {block.rate} Hz"
            )
        if self._next_sample is None:
            self._next_sample = block.start
            self._listen_from = block.start
        expected_end = self._next_sample + len(self._pending)
        if block.start < expected_end:
            raise ProtocolError(f"VAD block starts at sample {block.start}, before the previous block ended")
        gap_from, gap_to = len(self._pending), len(self._pending) + block.start - expected_end
        gap = np.zeros(gap_to - gap_from, dtype=np.float32)
        audio = np.concatenate((self._pending, gap, block.samples.astype(np.float32, copy=False)))
        whole = len(audio) // self._frame_len * self._frame_len
        pcm, levels = self._measure(audio[:whole])
        events: list[VadEvent] = []
        for index, offset in enumerate(range(0, whole, self._frame_len)):
            samples = audio[offset : offset + self._frame_len]
            # Lost input is silence on the clock, but kept from webrtcvad, whose noise model it would upset.
            lost = gap_from <= offset and offset + self._frame_len <= gap_to
            voiced = (
                (False, False)
                if lost
                else self._classify(
                    pcm[2 * offset : 2 * (offset + self._frame_len)], levels[index], assistant_speaking
                )
            )
            speech = self._speech(samples, assistant_speaking)
            frame = _Frame(self._next_sample, samples, voiced, speech)
            self._next_sample += self._frame_len
            if voiced[0]:
                self._voiced_until = self._next_sample
            self._history.append(frame)
            event = self._step(frame, 1 if assistant_speaking else 0)
            if event is not None:
                events.append(event)
        self._pending = audio[whole:].copy()
        return events

    def _speech(self, samples: Samples, assistant_speaking: bool) -> float:
        """The speech model's probability for the frame; it runs only while the assistant speaks, since only
        the barge-in settings ask it (an idle kiosk saves its cost), from a fresh state each reply."""
        if self._speech_model is None or not assistant_speaking:
            self._model_running = False
            return 0.0
        if not self._model_running:
            self._speech_model.reset()
            self._model_running = True
        return self._speech_model.update(samples)

    def _measure(self, audio: Samples) -> tuple[bytes, list[float]]:
        """The 16-bit PCM webrtcvad takes, and each frame's level in dBFS, for whole frames ``audio``.

        One numpy pass per block, not per frame: at 20 ms frames numpy's call overhead is the cost.
        """
        pcm = (np.clip(audio, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()
        power = np.square(audio.reshape(-1, self._frame_len), dtype=np.float64).sum(axis=1) / self._frame_len
        return pcm, [10.0 * math.log10(mean + 1e-12) for mean in power.tolist()]

    def _classify(self, pcm: bytes, level: float, assistant_speaking: bool) -> tuple[bool, bool]:
        # The floor is learnt while the assistant is silent: over a reply the echo canceller mutes the mic
        # for a while at first and echo lifts it, neither of which is the room's noise.
        if not assistant_speaking:
            self._levels.append(level)
        floor = min(self._levels, default=-math.inf)
        peak = max(self._levels, default=math.inf)
        speech = {a: vad.is_speech(pcm, self.rate) for a, vad in self._vads.items()}
        return self._voiced(0, speech, level, floor, peak), self._voiced(1, speech, level, floor, peak)

    def _voiced(self, mode: int, speech: dict[int, bool], level: float, floor: float, peak: float) -> bool:
        settings = self._settings[mode]
        above_floor = level >= floor + settings.above_floor_db
        self._above_floor_ago[mode] = (
            0 if above_floor else min(self._above_floor_ago[mode] + 1, self._hangover + 1)
        )
        # within an utterance only: onsets stay as they were (a short sound is heard as before)
        faint = (
            settings.faint_below_peak_db is not None
            and self._active is not None
            and level < peak - settings.faint_below_peak_db
        )
        standing_out = above_floor or (self._above_floor_ago[mode] <= self._hangover and not faint)
        return speech[settings.aggressiveness] and level >= settings.min_level_dbfs and standing_out

    def _step(self, frame: _Frame, mode: int) -> VadEvent | None:
        if self._active is None:
            return self._look_for_onset(mode)
        settings = self._settings[self._active]
        self._utterance.append(frame)
        resumed = frame.voiced[self._active] and self._last_voiced_end == self._offered
        if frame.voiced[self._active]:
            self._last_voiced_end = frame.start + self._frame_len
        silence = frame.start + self._frame_len - self._last_voiced_end
        length = frame.start + self._frame_len - self._utterance[0].start
        if silence >= settings.end_silence_ms * self.rate // 1000 or length >= self._max_samples(settings):
            return self._end(settings)
        if resumed:
            return VoiceResumed(frame.start)
        speculate = settings.speculate_ms
        early = speculate is not None and speculate < settings.end_silence_ms
        offer_at = (speculate or 0) * self.rate // 1000
        if early and silence >= offer_at and self._offered != self._last_voiced_end:
            self._offered = self._last_voiced_end
            return VoicePaused(self._last_voiced_end, self._utterance_audio(settings))
        return None

    def _look_for_onset(self, mode: int) -> VoiceStarted | None:
        settings = self._settings[mode]
        window = list(self._history)[-settings.frames(settings.start_window_ms) :]
        voiced = [f for f in window if f.voiced[mode] and f.start >= self._listen_from]
        enough = len(voiced) >= settings.frames(settings.start_voiced_ms)
        if not enough and settings.quick_voiced_ms is not None:  # the model is asked only when it can matter
            enough = len(voiced) >= settings.frames(settings.quick_voiced_ms) and self._heard_speech(settings)
        if not enough:
            return None
        onset = voiced[0].start
        # the pre-roll never reaches back into the previous utterance's audio
        pre_roll_from = max(onset - settings.pre_roll_ms * self.rate // 1000, self._listen_from)
        self._utterance = [f for f in self._history if f.start >= pre_roll_from]
        self._last_voiced_end = voiced[-1].start + self._frame_len
        self._active = mode
        return VoiceStarted(onset)

    def _heard_speech(self, settings: VadSettings) -> bool:
        """The speech model called every frame of the last ``quick_speech_ms`` speech."""
        if self._speech_model is None:
            return False
        recent = list(self._history)[-settings.frames(settings.quick_speech_ms) :]
        return all(f.start >= self._listen_from and f.speech >= settings.speech_probability for f in recent)

    def _max_samples(self, settings: VadSettings) -> int:
        return settings.max_utterance_ms * self.rate // 1000

    def _utterance_audio(self, settings: VadSettings) -> AudioBlock:
        tail_ms = min(
            settings.pre_roll_ms, settings.end_silence_ms, settings.speculate_ms or settings.end_silence_ms
        )
        tail = tail_ms * self.rate // 1000
        start = self._utterance[0].start
        audio = np.concatenate([f.samples for f in self._utterance])[: self._last_voiced_end + tail - start]
        return AudioBlock(audio, self.rate, start)

    def _end(self, settings: VadSettings) -> VoiceEnded:
        ended = VoiceEnded(self._last_voiced_end, self._utterance_audio(settings))
        self._listen_from = self._utterance[-1].start + self._frame_len
        self._active = None
        self._utterance = []
        return ended


class Vad(Protocol):
    """What the engine needs of voice activity detection: stricter settings while the assistant is audible."""

    def process(self, block: AudioBlock, assistant_speaking: bool) -> list[VadEvent]: ...

    @property
    def voiced_until(self) -> int:
        """End of the last frame voiced under the quiet settings, in or out of an utterance."""

    @property
    def start_window(self) -> int:
        """The quiet settings' start window in samples: voiced frames become speech within it, or never."""

    def end_utterance(self) -> None:
        """The user's turn was judged over at the last pause: voiced audio after it starts a new utterance."""

    def utterance_so_far(self) -> AudioBlock | None:
        """The audio of the utterance in progress so far; None between utterances."""
