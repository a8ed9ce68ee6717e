"""Voice activity detection on real (espeak-ng) speech, silence, noise and short bursts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.support.espeak import Speak
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.vad import (
    DEFAULT_BARGE_IN,
    DEFAULT_QUIET,
    VadEvent,
    VadSettings,
    VoiceActivityDetector,
    VoiceEnded,
    VoicePaused,
    VoiceResumed,
    VoiceStarted,
)
from voice.audio.wav import read_wav
from voice.errors import AudioError, ConfigError, ProtocolError

PINK_NOISE = Path(__file__).resolve().parents[2] / "audio" / "pink-noise.wav"

RATE = ENGINE_RATE
MS = RATE // 1000
LEAD = RATE  # speech starts one second into the recording
EARLY = (VoicePaused, VoiceResumed)  # the offers at pauses, before endpointing is sure


def noise_floor(seconds: float, level: float = 0.002, seed: int = 0) -> np.ndarray:
    return (level * np.random.default_rng(seed).standard_normal(int(seconds * RATE))).astype(np.float32)


def scene(speech: np.ndarray, after_s: float = 1.5) -> np.ndarray:
    """A quiet room: the noise floor, with the speech starting at LEAD."""
    signal = noise_floor(LEAD / RATE + len(speech) / RATE + after_s)
    signal[LEAD : LEAD + len(speech)] += speech
    return signal


def audible(speech: np.ndarray) -> np.ndarray:
    """The speech without espeak's leading and trailing silence."""
    loud = np.flatnonzero(np.abs(speech) > 0.02)
    return speech[loud[0] : loud[-1] + 1]


def true_span(speech: np.ndarray) -> tuple[int, int]:
    loud = np.flatnonzero(np.abs(speech) > 0.02)
    return LEAD + int(loud[0]), LEAD + int(loud[-1])


def run(
    signal: np.ndarray,
    speaking: bool = False,
    quiet: VadSettings = DEFAULT_QUIET,
    barge_in: VadSettings = DEFAULT_BARGE_IN,
    block: int = 333,
    speaking_from: int = 0,
) -> list[tuple[VadEvent, int]]:
    """Feed the signal in odd-sized blocks; each start or end comes with the clock sample it was reported at.

    ``speaking``: the assistant speaks from sample ``speaking_from`` on. The early VoicePaused offers (and
    VoiceResumed after them) are left out; their own tests look at them.
    """
    detector = VoiceActivityDetector(quiet, barge_in)
    found: list[tuple[VadEvent, int]] = []
    for offset in range(0, len(signal), block):
        chunk = AudioBlock(signal[offset : offset + block], RATE, offset)
        events = detector.process(chunk, assistant_speaking=speaking and offset >= speaking_from)
        found += [(event, chunk.end) for event in events if not isinstance(event, EARLY)]
    return found


def pink(seconds: float, dbfs: float) -> np.ndarray:
    """Steady pink noise (a fan, a street) at ``dbfs`` mean power, looped from the recorded noise."""
    noise = np.resize(read_wav(PINK_NOISE).samples.astype(np.float64), int(seconds * RATE))
    return (noise * 10 ** (dbfs / 20) / np.sqrt(np.mean(noise**2))).astype(np.float32)


def dbfs(samples: np.ndarray) -> float:
    return float(10 * np.log10(np.mean(np.square(samples, dtype=np.float64))))


def in_noise(speech: np.ndarray, snr_db: float, after_s: float = 1.5) -> np.ndarray:
    """The speech from LEAD under steady pink noise ``snr_db`` below the speech's own mean power."""
    signal = pink(LEAD / RATE + len(speech) / RATE + after_s, dbfs(speech) - snr_db)
    signal[LEAD : LEAD + len(speech)] += speech
    return signal


@pytest.fixture(scope="module")
def question(speak: Speak) -> np.ndarray:
    return speak("What's the weather like tomorrow in Paris?")


@pytest.mark.parametrize("speaking", [False, True], ids=["quiet", "barge-in"])
def test_speech_onset_is_found_within_30_ms(question: np.ndarray, speaking: bool) -> None:
    onset, _ = true_span(question)

    events = [event for event, _ in run(scene(question), speaking)]

    assert [type(e) for e in events] == [VoiceStarted, VoiceEnded]
    assert abs(events[0].sample - onset) <= 30 * MS


@pytest.mark.parametrize("speaking", [False, True], ids=["quiet", "barge-in"])
def test_utterance_carries_the_pre_roll_and_the_exact_mic_audio(question: np.ndarray, speaking: bool) -> None:
    signal = scene(question)
    settings = DEFAULT_BARGE_IN if speaking else DEFAULT_QUIET

    (started, _), (ended, _) = run(signal, speaking)

    assert isinstance(started, VoiceStarted)
    assert isinstance(ended, VoiceEnded)
    utterance = ended.utterance
    assert started.sample - utterance.start == settings.pre_roll_ms * MS
    assert utterance.rate == RATE
    np.testing.assert_array_equal(utterance.samples, signal[utterance.start : utterance.end])
    onset, end = true_span(question)
    assert utterance.start < onset - 250 * MS
    assert utterance.end > end


@pytest.mark.parametrize("end_silence_ms", [300, 900])
def test_speech_ends_after_the_configured_silence(question: np.ndarray, end_silence_ms: int) -> None:
    settings = VadSettings(end_silence_ms=end_silence_ms)
    _, end = true_span(question)

    ((_, _), (ended, reported_at)) = run(scene(question), quiet=settings, block=320)

    assert isinstance(ended, VoiceEnded)
    assert abs(ended.sample - end) <= 100 * MS
    assert reported_at - ended.sample == end_silence_ms * MS


def test_a_pause_shorter_than_the_end_silence_stays_one_utterance(speak: Speak) -> None:
    first, second = speak("Turn left"), speak("at the church")
    gap = np.zeros(int(0.35 * RATE), dtype=np.float32)
    speech = np.concatenate((first, gap, second))

    patient = run(scene(speech), quiet=VadSettings(end_silence_ms=800))
    hasty = run(scene(speech), quiet=VadSettings(end_silence_ms=150))

    assert [type(e) for e, _ in patient] == [VoiceStarted, VoiceEnded]
    assert [type(e) for e, _ in hasty] == [VoiceStarted, VoiceEnded] * 2


@pytest.mark.parametrize("speaking", [False, True], ids=["quiet", "barge-in"])
@pytest.mark.parametrize("level", [0.0, 0.003, 0.02], ids=["digital-silence", "noise-floor", "loud-noise"])
def test_silence_and_steady_noise_start_nothing(level: float, speaking: bool) -> None:
    assert run(noise_floor(6.0, level, seed=3), speaking) == []


def burst(duration_ms: int, amplitude: float) -> np.ndarray:
    """A cough or knock: a short broadband noise burst in the quiet room."""
    signal = noise_floor(3.0, seed=5)
    n = duration_ms * MS
    shape = np.hanning(n) if duration_ms > 20 else np.ones(n)
    noise = np.random.default_rng(9).standard_normal(n) * shape * amplitude
    signal[LEAD : LEAD + n] += np.convolve(noise, np.ones(4) / 4, mode="same").astype(np.float32)
    return signal


@pytest.mark.parametrize(("duration_ms", "amplitude"), [(10, 0.8), (100, 0.3)], ids=["click", "cough"])
def test_short_burst_does_not_start_speech_under_barge_in_settings(
    duration_ms: int, amplitude: float
) -> None:
    assert run(burst(duration_ms, amplitude), speaking=True) == []


def test_barge_in_settings_are_stricter_than_quiet_ones(question: np.ndarray) -> None:
    cough = burst(100, 0.3)
    assert [type(e) for e, _ in run(cough, speaking=False)] == [VoiceStarted, VoiceEnded]

    quiet_start = run(scene(question), speaking=False)[0][1]
    barge_in_start = run(scene(question), speaking=True)[0][1]
    assert barge_in_start > quiet_start

    faint = scene(question * 0.01)  # about -60 dBFS: echo residue, not a user talking to us
    assert run(faint, speaking=True) == []


def test_settings_that_confirmed_the_onset_hold_until_the_utterance_ends(question: np.ndarray) -> None:
    detector = VoiceActivityDetector(VadSettings(end_silence_ms=300), VadSettings(end_silence_ms=1200))
    signal = scene(question, after_s=2.0)
    reported = []
    for offset in range(0, len(signal), 320):
        speaking = offset < LEAD + 4000  # the assistant stops talking once the user has barged in
        for event in detector.process(AudioBlock(signal[offset : offset + 320], RATE, offset), speaking):
            if not isinstance(event, EARLY):
                reported.append((event, offset + 320))
    (_, _), (ended, at) = reported
    assert at - ended.sample == 1200 * MS


def test_a_long_monologue_is_cut_at_the_maximum_utterance_length(speak: Speak) -> None:
    speech = np.concatenate([speak("one two three four five six seven eight nine ten")] * 2)
    settings = VadSettings(max_utterance_ms=1500)

    events = [e for e, _ in run(scene(speech), quiet=settings)]

    ends = [e for e in events if isinstance(e, VoiceEnded)]
    assert len(ends) >= 2
    assert all(e.utterance.duration_s <= 1.5 + 0.35 for e in ends)


def test_missing_samples_count_as_silence_on_the_clock(question: np.ndarray) -> None:
    onset, _ = true_span(question)
    signal = scene(question)
    detector = VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN)
    events: list[VadEvent] = []
    for offset in range(0, len(signal), 320):
        if 8000 <= offset < 9600:  # the driver lost 100 ms of input before the user spoke
            continue
        events += detector.process(AudioBlock(signal[offset : offset + 320], RATE, offset), False)
    assert isinstance(events[0], VoiceStarted)
    assert abs(events[0].sample - onset) <= 30 * MS


def test_overlapping_blocks_are_a_driver_bug() -> None:
    detector = VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN)
    detector.process(AudioBlock(noise_floor(0.1), RATE, 0), False)
    with pytest.raises(ProtocolError, match="before the previous block ended"):
        detector.process(AudioBlock(noise_floor(0.1), RATE, 800), False)


def test_reset_forgets_the_utterance_in_progress(question: np.ndarray) -> None:
    detector = VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN)
    signal = scene(question)
    half = LEAD + len(question) // 2
    assert any(isinstance(e, VoiceStarted) for e in detector.process(AudioBlock(signal[:half], RATE), False))
    assert detector.in_speech

    detector.reset()

    assert not detector.in_speech
    assert detector.process(AudioBlock(noise_floor(2.0), RATE, 10 * RATE), False) == []


def test_blocks_at_another_rate_are_refused() -> None:
    detector = VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN)
    with pytest.raises(AudioError, match="16000 Hz"):
        detector.process(AudioBlock(np.zeros(441, dtype=np.float32), 44100), False)


@pytest.mark.parametrize(
    "make",
    [
        lambda: VadSettings(aggressiveness=4),
        lambda: VadSettings(frame_ms=25),
        lambda: VadSettings(start_voiced_ms=300, start_window_ms=200),
        lambda: VadSettings(end_silence_ms=0),
        lambda: VadSettings(above_floor_db=-1.0),
        lambda: VoiceActivityDetector(VadSettings(frame_ms=10), VadSettings(frame_ms=30)),
        lambda: VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN, rate=44100),
    ],
    ids=["aggressiveness", "frame", "start", "end-silence", "floor", "mixed-frames", "rate"],
)
def test_impossible_settings_are_a_config_error(make: object) -> None:
    with pytest.raises(ConfigError):
        make()  # type: ignore[operator]


def test_the_utterance_is_offered_early_and_matches_the_final_one(question: np.ndarray) -> None:
    detector = VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN)
    events: list[tuple[VadEvent, int]] = []
    signal = scene(question)
    for offset in range(0, len(signal), 320):
        chunk = AudioBlock(signal[offset : offset + 320], RATE, offset)
        events += [(event, chunk.end) for event in detector.process(chunk, assistant_speaking=False)]

    kinds = [type(event) for event, _ in events]
    assert kinds == [VoiceStarted, VoicePaused, VoiceEnded]
    (paused, offered_at), (ended, ended_at) = events[1], events[2]
    assert isinstance(paused, VoicePaused)
    assert isinstance(ended, VoiceEnded)
    assert paused.sample == ended.sample
    assert offered_at - paused.sample < ended_at - ended.sample  # offered while endpointing still waits
    assert np.array_equal(paused.utterance.samples, ended.utterance.samples)
    assert paused.utterance.start == ended.utterance.start


def test_speech_after_an_offer_makes_a_longer_final_utterance(speak: Speak) -> None:
    first, second = (audible(speak(text)) for text in ("I was wondering", "what time it is"))
    gap = np.zeros(int(0.45 * RATE), dtype=np.float32)  # longer than speculate_ms, shorter than endpointing
    detector = VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN)
    signal = scene(np.concatenate((first, gap, second)))
    events: list[VadEvent] = []
    for offset in range(0, len(signal), 320):
        events += detector.process(
            AudioBlock(signal[offset : offset + 320], RATE, offset), assistant_speaking=False
        )

    offers = [event for event in events if isinstance(event, VoicePaused)]
    ends = [event for event in events if isinstance(event, VoiceEnded)]
    assert len(ends) == 1
    assert len(offers) >= 2
    assert offers[0].sample < ends[0].sample == offers[-1].sample


def test_speech_after_an_offer_is_reported_as_resumed_and_the_offer_as_stale(speak: Speak) -> None:
    first, second = (audible(speak(text)) for text in ("I was wondering", "what time it is"))
    gap = np.zeros(int(0.45 * RATE), dtype=np.float32)
    detector = VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN)
    signal = scene(np.concatenate((first, gap, second)))
    events: list[VadEvent] = []
    for offset in range(0, len(signal), 320):
        events += detector.process(AudioBlock(signal[offset : offset + 320], RATE, offset), False)

    kinds = [type(event) for event in events]
    resumed = kinds.index(VoiceResumed)
    assert kinds[resumed - 1] is VoicePaused  # every resumption follows an offer
    offer, again = events[resumed - 1], events[resumed]
    assert isinstance(offer, VoicePaused)
    assert isinstance(again, VoiceResumed)
    assert again.sample > offer.sample
    assert kinds[-1] is VoiceEnded


def every_event(signal: np.ndarray, speaking: bool = True) -> list[tuple[VadEvent, int]]:
    """Every event of ``signal`` (said over a reply, if ``speaking``), each with the sample it came at."""
    detector = VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN)
    found: list[tuple[VadEvent, int]] = []
    for offset in range(0, len(signal), 320):
        chunk = AudioBlock(signal[offset : offset + 320], RATE, offset)
        found += [(event, chunk.end) for event in detector.process(chunk, speaking)]
    return found


def test_a_short_burst_over_a_reply_is_offered_at_its_pause_and_ends_after_the_end_silence(
    speak: Speak,
) -> None:
    events = every_event(scene(speak("Yeah.", "en-us+m3")))

    kinds = [type(event) for event, _ in events]
    assert kinds == [VoiceStarted, VoicePaused, VoiceEnded]
    (paused, _), (ended, at) = events[1], events[2]
    assert isinstance(paused, VoicePaused)
    assert isinstance(ended, VoiceEnded)
    assert paused.sample == ended.sample  # the pause's offer is the whole word
    silence = DEFAULT_BARGE_IN.end_silence_ms * MS
    assert silence <= at - ended.sample < silence + 320  # not before the listener has stopped


def test_a_first_word_and_a_breath_over_a_reply_stay_one_utterance(speak: Speak) -> None:
    first, rest = (audible(speak(text, "en-us+m3")) for text in ("Yeah,", "but what about Monday?"))
    breath = np.zeros(int(0.5 * RATE), dtype=np.float32)

    kinds = [type(event) for event, _ in every_event(scene(np.concatenate((first, breath, rest))))]

    assert kinds[:3] == [VoiceStarted, VoicePaused, VoiceResumed]  # "Yeah," was offered; the user went on
    assert kinds.count(VoiceStarted) == kinds.count(VoiceEnded) == 1


def test_an_utterance_ended_at_a_pause_lets_the_next_words_start_a_new_one(speak: Speak) -> None:
    first, second = (audible(speak(text)) for text in ("What is the weather", "in Paris"))
    gap = np.zeros(int(0.35 * RATE), dtype=np.float32)  # the pre-roll of "in Paris" would reach "weather"
    detector = VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN)
    signal = scene(np.concatenate((first, gap, second)))
    events: list[VadEvent] = []
    for offset in range(0, len(signal), 320):
        found = detector.process(AudioBlock(signal[offset : offset + 320], RATE, offset), False)
        events += found
        if any(isinstance(event, VoicePaused) for event in found) and len(events) == 2:
            detector.end_utterance()  # the engine judged the turn over at the first pause

    kinds = [type(event) for event in events if not isinstance(event, VoicePaused)]
    assert kinds == [VoiceStarted, VoiceStarted, VoiceEnded]
    paused, restarted = events[1], events[2]
    assert isinstance(paused, VoicePaused)
    assert isinstance(restarted, VoiceStarted)
    later = [event for event in events if isinstance(event, VoiceEnded)]
    assert later[0].utterance.start >= paused.sample  # the new utterance holds none of the first words


@pytest.mark.parametrize("speaking", [False, True], ids=["quiet", "barge-in"])
def test_speech_in_steady_pink_noise_at_10_db_snr_starts_and_ends_an_utterance(
    question: np.ndarray, speaking: bool
) -> None:
    speech = audible(question)
    onset, end = LEAD, LEAD + len(speech)
    settings = DEFAULT_BARGE_IN if speaking else DEFAULT_QUIET

    found = run(in_noise(speech, snr_db=10.0), speaking, speaking_from=LEAD // 2)  # the room heard first

    assert [type(e) for e, _ in found] == [VoiceStarted, VoiceEnded]
    (started, _), (ended, reported_at) = found
    assert abs(started.sample - onset) <= 150 * MS
    assert abs(ended.sample - end) <= 150 * MS  # the end is heard, not the noise after it
    assert reported_at - end <= (settings.end_silence_ms + 150) * MS


@pytest.mark.parametrize("speaking", [False, True], ids=["quiet", "barge-in"])
def test_steady_pink_noise_at_minus_30_dbfs_starts_nothing(speaking: bool) -> None:
    assert run(pink(10.0, -30.0), speaking, speaking_from=RATE // 2) == []


def test_the_noise_floor_is_learnt_while_the_assistant_is_silent(question: np.ndarray) -> None:
    """Over a reply the echo canceller mutes the mic a while, then the room's noise comes back: not speech."""
    fan = pink(10.0, -30.0)
    fan[RATE : 2 * RATE] *= 10 ** (-30 / 20)  # muted for the reply's first second

    assert run(fan, speaking=True, speaking_from=RATE) == []


def test_a_fan_switched_on_is_learnt_as_noise_within_seconds(question: np.ndarray) -> None:
    speech = audible(question)
    fan_on, asked = 2 * RATE, 8 * RATE
    signal = noise_floor(asked / RATE + len(speech) / RATE + 1.5)
    signal[fan_on:] += pink((len(signal) - fan_on) / RATE, dbfs(speech) - 10.0)
    signal[asked : asked + len(speech)] += speech

    ends = [(event, at) for event, at in run(signal) if isinstance(event, VoiceEnded)]

    assert all(at - fan_on <= 3 * RATE for event, at in ends if event.sample < asked)  # the fan alone
    (question_end, _), *_ = [(event, at) for event, at in ends if event.sample > asked]
    assert abs(question_end.sample - (asked + len(speech))) <= 150 * MS


def test_a_question_ends_in_a_quiet_room_where_it_ends_in_silence(question: np.ndarray) -> None:
    """Faint noise after the last word is the room: the turn's end is not heard later for it."""
    speech = audible(question)
    silent = np.zeros(LEAD + len(speech) + int(1.5 * RATE), dtype=np.float32)
    silent[LEAD : LEAD + len(speech)] = speech

    ends = [
        next(e.sample for e, _ in run(signal) if isinstance(e, VoiceEnded))
        for signal in (silent, in_noise(speech, snr_db=40.0))
    ]

    assert abs(ends[1] - ends[0]) <= DEFAULT_QUIET.frame_ms * MS


def test_a_quiet_speaker_in_a_quiet_room_is_still_heard(question: np.ndarray) -> None:
    speech = audible(question)
    signal = noise_floor(LEAD / RATE + len(speech) / RATE + 1.5, level=0.0002)  # about -74 dBFS
    signal[LEAD : LEAD + len(speech)] += speech * 10 ** ((-40.0 - dbfs(speech)) / 20)

    assert [type(e) for e, _ in run(signal)] == [VoiceStarted, VoiceEnded]


def test_reset_forgets_the_noise_floor() -> None:
    detector = VoiceActivityDetector(DEFAULT_QUIET, DEFAULT_BARGE_IN)
    detector.process(
        AudioBlock(noise_floor(3.0, level=0.0002), RATE), False
    )  # the mic closes in a quiet room

    detector.reset()  # and reopens in a noisy one

    assert detector.process(AudioBlock(pink(4.0, -30.0), RATE, 100 * RATE), False) == []
