"""ASR hears the mic with the echo subtracted linearly, from where the user began speaking."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.support.stand_ins import NotingTranscriber
from voice.asr.echo_free import TranscribingAsrSignal
from voice.asr.port import TimedWord
from voice.asr.whisper import WhisperTranscriber
from voice.audio.asr_signal import (
    DOUBLE_TALK_REACH_MS,
    ONSET_FRAME_MS,
    ONSET_MARGIN_MS,
    AsrSignal,
    user_onset,
)
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.linear_echo import SpeexEchoCanceller
from voice.components import SpeechModels
from voice.sim.run import run_scenario
from voice.sim.scenario import load_scenario
from voice.tts.piper_voice import PiperSynthesizer

AUDIO = Path(__file__).resolve().parents[2] / "audio"
BLOCK = 640
SORRY = "Sorry, I meant on Sunday."
REACH = DOUBLE_TALK_REACH_MS * ENGINE_RATE // 1000
FOX_STORY = (
    "Once upon a time, an old grey fox lived alone on a snowy hill. Each winter night he listened to "
    "the owls and counted the stars. When spring came, he finally went down to the valley to find a "
    "friend."
)


def room(
    seconds: float, speaker_until_s: float = 0.0, voice: tuple[tuple[float, float], ...] = ((0.0, 99.0),)
) -> tuple[AsrSignal, np.ndarray]:
    """A mic that hears a user (noise) over the ``voice`` spans (seconds) and silence elsewhere; the
    speaker plays (into a room that does not echo) until ``speaker_until_s``."""
    rng = np.random.default_rng(1)
    frames = round(seconds * ENGINE_RATE)
    mic = np.zeros(frames, np.float32)
    for begin, end in voice:
        span = slice(round(begin * ENGINE_RATE), round(end * ENGINE_RATE))
        mic[span] = rng.standard_normal(len(mic[span])).astype(np.float32) * 0.05
    speaker = rng.standard_normal(frames).astype(np.float32) * 0.1
    speaker[round(speaker_until_s * ENGINE_RATE) :] = 0.0
    signal = AsrSignal()
    for start in range(0, frames, BLOCK):
        span = slice(start, start + BLOCK)
        signal.add(AudioBlock(mic[span], ENGINE_RATE, start), AudioBlock(speaker[span], ENGINE_RATE, start))
    return signal, mic


class CountingCanceller(SpeexEchoCanceller):
    """The linear canceller, counting the blocks it really filtered."""

    filtered = 0

    def process(self, mic: AudioBlock, reference: AudioBlock) -> AudioBlock:
        self.filtered += 1
        return super().process(mic, reference)


def test_once_the_speaker_has_been_silent_for_over_a_second_the_mic_is_what_asr_hears_unfiltered() -> None:
    """Idle listening does not run the linear canceller: with no echo left, its output is the mic."""
    canceller = CountingCanceller()
    signal = AsrSignal(canceller=canceller)
    rng = np.random.default_rng(3)
    mic = rng.standard_normal(6 * ENGINE_RATE).astype(np.float32) * 0.05
    speaker = rng.standard_normal(len(mic)).astype(np.float32) * 0.1
    speaker[2 * ENGINE_RATE :] = 0.0  # the reply ends at 2 s
    for start in range(0, len(mic), BLOCK):
        span = slice(start, start + BLOCK)
        signal.add(AudioBlock(mic[span], ENGINE_RATE, start), AudioBlock(speaker[span], ENGINE_RATE, start))

    blocks = len(mic) // BLOCK
    assert blocks - 3.5 * ENGINE_RATE // BLOCK <= canceller.filtered < blocks - 2.5 * ENGINE_RATE // BLOCK
    later = cut(4.0, 1.5)
    heard = signal.words_for(later)
    assert np.array_equal(heard.samples, mic[later.start : later.end])


def cut(start_s: float, seconds: float) -> AudioBlock:
    """An utterance as the VAD cut it from AEC3's output (its samples are not what ASR should hear)."""
    return AudioBlock(
        np.zeros(round(seconds * ENGINE_RATE), np.float32), ENGINE_RATE, round(start_s * ENGINE_RATE)
    )


def test_with_the_speaker_silent_asr_hears_the_mic_over_the_span_the_vad_cut() -> None:
    heard = NotingTranscriber(SORRY)
    signal, mic = room(4.0)
    utterance = cut(1.5, 2.0)

    TranscribingAsrSignal(heard, signal).transcribe(utterance)

    (words,) = heard.audio
    assert (words.start, words.end) == (utterance.start, utterance.end)
    assert np.corrcoef(words.samples, mic[utterance.start : utterance.end])[0, 1] > 0.95


def test_speech_begun_over_the_assistant_is_heard_from_where_the_voice_began() -> None:
    heard = NotingTranscriber(SORRY, words=(TimedWord("Sorry", 0.1, 0.4),))
    # the assistant talks until the barge-in pauses it; the user began 0.7 s before the VAD's cut
    signal, _ = room(4.0, speaker_until_s=2.0, voice=((0.8, 3.5),))
    utterance = cut(1.5, 2.0)

    transcript = TranscribingAsrSignal(heard, signal).transcribe(utterance, word_timings=True)

    (words,) = heard.audio
    began = round(0.8 * ENGINE_RATE) - ONSET_MARGIN_MS * ENGINE_RATE // 1000
    assert (words.start, words.end) == (began, utterance.end)
    shift = (utterance.start - began) / ENGINE_RATE
    assert transcript.words == (TimedWord("Sorry", 0.1 - shift, 0.4 - shift),)
    assert transcript.earlier_s == shift  # the engine judges the words on all the voice ASR heard


def test_without_a_beginning_within_reach_asr_hears_the_vads_cut() -> None:
    heard = NotingTranscriber(SORRY)
    signal, _ = room(4.0, speaker_until_s=2.0)  # a voice (or echo the canceller kept) all along

    TranscribingAsrSignal(heard, signal).transcribe(cut(1.5, 2.0))

    assert heard.audio[0].start == cut(1.5, 2.0).start


def test_the_reach_back_stops_where_the_utterance_before_ended() -> None:
    heard = NotingTranscriber(SORRY)
    # one utterance, a pause, and the next voice began just before the first utterance's cut ended
    signal, _ = room(6.0, speaker_until_s=6.0, voice=((0.36, 2.3), (2.5, 5.0)))
    asr = TranscribingAsrSignal(heard, signal)
    first, second = cut(0.6, 2.0), cut(3.2, 1.5)

    asr.transcribe(first)
    asr.transcribe(second)
    asr.transcribe(cut(3.2, 2.0))  # the same utterance again, once endpointing confirmed it

    margin = ONSET_MARGIN_MS * ENGINE_RATE // 1000
    assert [(a.start, a.end) for a in heard.audio] == [
        (round(0.36 * ENGINE_RATE) - margin, first.end),  # its voice began 0.24 s before the cut
        (second.start, second.end),  # not back into the first: where the voice began is not known
        (second.start, second.start + 2 * ENGINE_RATE),
    ]


def test_a_recording_keeps_of_a_cut_in_the_audio_asr_heard_from_where_the_voice_began() -> None:
    """`voice chat --record-scenario` asks by the onset the stream told (to the ms): it gets what ASR
    heard, before ASR was given the utterance and after, not the VAD's late cut."""
    signal, mic = room(4.0, speaker_until_s=2.0, voice=((0.8, 3.5),))
    utterance = cut(1.5, 2.0)  # the VAD's cut: its onset 0.3 s in
    told_onset = round(1.8003 * ENGINE_RATE)

    before = signal.words_heard(told_onset, utterance.end)
    given = TranscribingAsrSignal(NotingTranscriber(SORRY), signal)
    given.transcribe(utterance)
    after = signal.words_heard(told_onset, utterance.end)

    began = round(0.8 * ENGINE_RATE) - ONSET_MARGIN_MS * ENGINE_RATE // 1000
    assert before is not None
    assert after is not None
    assert (after.start, after.end) == (began, utterance.end)
    assert before.end == utterance.end  # before: found on the onset's own 20 ms grid
    assert abs(before.start - began) <= ONSET_FRAME_MS * ENGINE_RATE // 1000
    assert np.array_equal(after.samples, signal.words_for(utterance).samples)
    assert signal.words_heard(told_onset, 10 * ENGINE_RATE).end == len(mic)  # no further than kept
    assert room(45.0)[0].words_heard(told_onset, utterance.end) is None  # no longer kept


class UnlearnedCanceller(SpeexEchoCanceller):
    """A linear canceller that has not learned the room yet: it keeps the echo whole."""

    def process(self, mic: AudioBlock, reference: AudioBlock) -> AudioBlock:
        return mic


def test_the_start_of_a_reply_the_canceller_has_not_learned_is_not_taken_for_the_users_voice() -> None:
    """Quiet, then a reply whose echo the canceller keeps whole, and a user over it from 0.3 s in: the
    silence before the reply made the echo's start look like the user's, and ASR heard a second of echo
    as words ("It's going ..." before every cut-in in the session's first reply on the PulseAudio loop)."""
    rng = np.random.default_rng(7)
    frames = 4 * ENGINE_RATE
    speaker = rng.standard_normal(frames).astype(np.float32) * 0.1
    speaker[:ENGINE_RATE] = 0.0  # the reply begins at 1.0 s
    user = rng.standard_normal(frames).astype(np.float32) * 0.05
    user[: round(1.3 * ENGINE_RATE)] = 0.0
    signal = AsrSignal(canceller=UnlearnedCanceller())
    for start in range(0, frames, BLOCK):
        span = slice(start, start + BLOCK)
        signal.add(
            AudioBlock(speaker[span] + user[span], ENGINE_RATE, start),
            AudioBlock(speaker[span], ENGINE_RATE, start),
        )
    heard = NotingTranscriber(SORRY)
    utterance = cut(1.7, 1.5)  # the VAD found the voice late, at 2.0 s: its reach starts in the quiet

    TranscribingAsrSignal(heard, signal).transcribe(utterance)

    assert heard.audio[0].start == utterance.start  # where the voice began is not known: the VAD's cut


def test_the_users_voice_is_found_where_the_canceller_stops_taking_most_of_the_mic_away() -> None:
    rng = np.random.default_rng(2)
    raw = rng.standard_normal(ENGINE_RATE).astype(np.float32) * 0.1  # echo for 0.5 s, then echo and user
    words = raw * 0.1  # echo alone: the linear canceller removes 20 dB of it
    user_from = ENGINE_RATE // 2
    words[user_from:] = raw[user_from:] * 0.8
    words[user_from + 1600 : user_from + 3200] *= 0.1  # a 100 ms pause between two words is no start

    assert user_onset(words, raw, ENGINE_RATE) == user_from - ONSET_MARGIN_MS * ENGINE_RATE // 1000
    assert user_onset(raw * 0.1, raw, ENGINE_RATE) is None  # echo alone
    assert user_onset(np.zeros_like(raw), np.zeros_like(raw), ENGINE_RATE) is None  # silence


def test_audio_no_longer_kept_is_transcribed_as_the_vad_cut_it() -> None:
    heard = NotingTranscriber(SORRY)
    utterance = AudioBlock(np.full(ENGINE_RATE, 0.5, np.float32), ENGINE_RATE, 0)

    TranscribingAsrSignal(heard, room(45.0)[0]).transcribe(utterance)

    assert heard.audio == [utterance]


def played_back(user_level: float) -> tuple[AsrSignal, AudioBlock]:
    """The speaker's sound comes back 60 ms late at full level, with a user at ``user_level`` over it."""
    rng = np.random.default_rng(3)
    speaker = rng.standard_normal(3 * ENGINE_RATE).astype(np.float32) * 0.1
    user = rng.standard_normal(3 * ENGINE_RATE).astype(np.float32) * user_level
    delay = 60 * ENGINE_RATE // 1000
    mic = np.concatenate((np.zeros(delay, np.float32), speaker[:-delay])) + user
    signal = AsrSignal()
    for start in range(0, len(mic), BLOCK):
        signal.add(
            AudioBlock(mic[start : start + BLOCK], ENGINE_RATE, start),
            AudioBlock(speaker[start : start + BLOCK], ENGINE_RATE, start),
        )
    return signal, AudioBlock(np.zeros(ENGINE_RATE, np.float32), ENGINE_RATE, ENGINE_RATE)


def test_an_utterance_of_nothing_but_the_speakers_own_sound_has_no_words() -> None:
    heard = NotingTranscriber(SORRY)
    signal, utterance = played_back(user_level=0.0)

    assert TranscribingAsrSignal(heard, signal).transcribe(utterance).text == ""
    assert heard.audio == []  # whisper is not even asked to guess


def test_a_user_talking_over_the_echo_is_transcribed() -> None:
    heard = NotingTranscriber(SORRY)
    signal, utterance = played_back(user_level=0.05)  # 6 dB below the echo

    assert TranscribingAsrSignal(heard, signal).transcribe(utterance).text == "Sorry, I meant on Sunday."


CUT_INS_OVER_LOUD_ECHO = [  # (echo delay ms, cut-in ms into the story): AEC3's onset came late in each
    (0, 5100),
    (50, 5100),
    (150, 5250),
    # in the session's first reply, before the live canceller had learned the echo: the reply played on
    # (50/400, 50/800, 150/800, 150/1200) or took other words, until ASR heard it cancelled in hindsight
    (50, 400),
    (50, 800),
    (150, 800),
    (150, 1200),
]


@pytest.mark.models
@pytest.mark.parametrize(("delay_ms", "after_ms"), CUT_INS_OVER_LOUD_ECHO)
def test_a_user_cutting_in_over_reply_as_loud_as_the_user_is_understood_word_for_word(
    delay_ms: int,
    after_ms: int,
    transcriber: WhisperTranscriber,
    synthesizer: PiperSynthesizer,
    tmp_path: Path,
) -> None:
    scenario = {
        "version": 1,
        "llm": {"replies": [FOX_STORY, "Okay, on Sunday then."], "first_delta_ms": 300, "delta_ms": 40},
        "room": {"echo_gain_db": 0, "echo_delay_ms": delay_ms},
        "user": [
            {"wav": str(AUDIO / "fox-story.wav"), "at_s": 0.5},
            {"wav": str(AUDIO / "sorry-sunday.wav"), "during_reply": 1, "after_ms": after_ms},
        ],
        "end_s": 16,
    }
    path = tmp_path / "cut-in.json"
    path.write_text(json.dumps(scenario))

    report = run_scenario(
        load_scenario(path), tmp_path / "out", models=SpeechModels(transcriber, synthesizer)
    )

    (first, second) = report["turns"]
    assert first["interrupted"]
    assert second["request"][-1] == {"role": "user", "text": "Sorry, I meant on Sunday."}


@pytest.mark.models
@pytest.mark.parametrize("echo_gain_db", [-60, -200])  # a speaker turned right down; a headset
def test_a_user_cutting_in_with_no_echo_in_the_room_is_heard_from_the_first_word_at_barge_in_speed(
    echo_gain_db: int,
    transcriber: WhisperTranscriber,
    synthesizer: PiperSynthesizer,
    tmp_path: Path,
) -> None:
    """Echo cancellation on, but nothing of the reply reaches the mic over the room's noise: the gate,
    with no echo to measure, stayed shut, AEC3 muted the cut-in whole and the story went on."""
    scenario = {
        "version": 1,
        "llm": {"replies": [FOX_STORY, "Okay, on Sunday then."], "first_delta_ms": 300, "delta_ms": 40},
        "room": {
            "echo_gain_db": echo_gain_db,
            "echo_delay_ms": 50,
            "noise": {"wav": str(AUDIO / "pink-noise.wav"), "gain_db": -30},
        },
        "user": [
            {"wav": str(AUDIO / "fox-story.wav"), "at_s": 0.5},
            {"wav": str(AUDIO / "sorry-sunday.wav"), "during_reply": 1, "after_ms": 5100},
        ],
        "end_s": 16,
    }
    path = tmp_path / "cut-in.json"
    path.write_text(json.dumps(scenario))

    report = run_scenario(
        load_scenario(path), tmp_path / "out", models=SpeechModels(transcriber, synthesizer)
    )

    manifest = {f["file"]: f for f in json.loads((AUDIO / "manifest.json").read_text())["fixtures"]}
    cue = next(c for c in report["user_audio"] if c["wav"] == "sorry-sunday.wav")
    onset_s = cue["at_s"] + manifest["sorry-sunday.wav"]["start_s"]
    story, answer = report["turns"][0], report["turns"][-1]
    assert story["interrupted"]
    assert story["audio_end_s"] - onset_s < 0.25  # as over an echo the gate passes (p95 174 ms)
    assert answer["request"][-1] == {"role": "user", "text": "Sorry, I meant on Sunday."}


def echo_with_user(user_from_s: float, realigned_at_s: float | None = None) -> AsrSignal:
    """4 s of the speaker's sound coming back 60 ms late at full level; from ``user_from_s`` a user
    6 dB below it talks over it. ``realigned_at_s``: the reference was moved against the mic then."""
    rng = np.random.default_rng(5)
    frames = 4 * ENGINE_RATE
    speaker = rng.standard_normal(frames).astype(np.float32) * 0.1
    user = rng.standard_normal(frames).astype(np.float32) * 0.05
    user[: round(user_from_s * ENGINE_RATE)] = 0.0
    delay = 60 * ENGINE_RATE // 1000
    mic = np.concatenate((np.zeros(delay, np.float32), speaker[:-delay])) + user
    realign_block = None if realigned_at_s is None else round(realigned_at_s * ENGINE_RATE) // BLOCK * BLOCK
    signal = AsrSignal()
    for start in range(0, frames, BLOCK):
        signal.add(
            AudioBlock(mic[start : start + BLOCK], ENGINE_RATE, start),
            AudioBlock(speaker[start : start + BLOCK], ENGINE_RATE, start),
            realigned=start == realign_block,
        )
    return signal


def vad_hears(signal: AsrSignal, from_s: float, to_s: float) -> float:
    """The share of 10 ms frames in [from_s, to_s) where the VAD hears sound, AEC3 having muted it all."""
    start, end = round(from_s * ENGINE_RATE), round(to_s * ENGINE_RATE)
    muted = AudioBlock(np.zeros(end - start, np.float32), ENGINE_RATE, start)
    frames = signal.for_vad(muted).samples.reshape(-1, ENGINE_RATE // 100)
    return float(np.mean(np.any(frames != 0.0, axis=1)))


def test_the_vad_hears_no_residual_echo_from_the_linear_canceller() -> None:
    signal = echo_with_user(user_from_s=99.0)

    assert vad_hears(signal, 1.0, 4.0) < 0.02


def test_the_vad_hears_a_user_over_the_echo_that_aec3_muted() -> None:
    signal = echo_with_user(user_from_s=3.0)

    # the first half second: barge-in pauses the reply well within it (longer double talk raises the
    # median loss the gate compares with, and the gate shuts again: AEC3's output, as before)
    assert vad_hears(signal, 3.0, 3.5) > 0.95
    assert vad_hears(signal, 2.0, 3.0) < 0.02


def test_the_vad_hears_no_linear_output_while_the_canceller_has_not_learned_the_room() -> None:
    from_start = echo_with_user(user_from_s=0.0)
    user_as_it_moved = echo_with_user(user_from_s=2.0, realigned_at_s=2.0)
    user_after_it_moved = echo_with_user(user_from_s=3.0, realigned_at_s=2.0)

    assert vad_hears(from_start, 0.0, 1.0) == 0.0
    assert vad_hears(user_as_it_moved, 2.0, 3.0) == 0.0  # no echo-only sound to measure the loss on
    assert vad_hears(user_after_it_moved, 3.0, 3.5) > 0.95  # the loss measured again, the user is heard


def headset(user_from_s: float, echo: float = 0.0) -> AsrSignal:
    """6 s of a reply the mic hears ``echo`` of (nothing: a headset) over room noise at -30 dBFS; from
    ``user_from_s`` a user talks over it."""
    rng = np.random.default_rng(7)
    frames = 6 * ENGINE_RATE
    bursts = np.repeat(rng.random(frames // 1600 + 1) > 0.3, 1600)[:frames]  # speech-like, with pauses
    speaker = (rng.standard_normal(frames) * 0.1 * bursts).astype(np.float32)
    user = rng.standard_normal(frames).astype(np.float32) * 0.05
    user[: round(user_from_s * ENGINE_RATE)] = 0.0
    mic = rng.standard_normal(frames).astype(np.float32) * 0.03 + user + speaker * echo
    signal = AsrSignal()
    for start in range(0, frames, BLOCK):
        span = slice(start, start + BLOCK)
        signal.add(AudioBlock(mic[span], ENGINE_RATE, start), AudioBlock(speaker[span], ENGINE_RATE, start))
    return signal


def test_the_vad_hears_a_headset_user_over_room_noise_that_aec3_muted() -> None:
    """No echo: the canceller takes nothing from the room's noise, so the loss it measures is no
    echo's; the gate still lets the user through, from their first frame."""
    signal = headset(user_from_s=4.0)

    assert vad_hears(signal, 4.0, 4.5) > 0.95


def test_with_an_echo_in_the_room_noise_the_vad_hears_no_residual_echo() -> None:
    signal = headset(user_from_s=99.0, echo=0.3)  # the echo about as loud as the noise

    assert vad_hears(signal, 1.0, 6.0) < 0.02


def first_reply(user_from_s: float, signal: AsrSignal, seconds: float = 4.0) -> tuple[AudioBlock, np.ndarray]:
    """A session's first reply begins 1 s in and comes back 60 ms late at full level; a user as loud
    cuts in ``user_from_s`` into it, and the VAD cuts the utterance 0.2 s after the voice began. What ASR
    hears of it, and the user's voice alone."""
    rng = np.random.default_rng(5)
    frames = round(seconds * ENGINE_RATE)
    speaker = rng.standard_normal(frames).astype(np.float32) * 0.1
    speaker[:ENGINE_RATE] = 0.0
    delay = 60 * ENGINE_RATE // 1000
    echo = np.concatenate((np.zeros(delay, np.float32), speaker[:-delay]))
    user = rng.standard_normal(frames).astype(np.float32) * 0.1
    user[: round((1.0 + user_from_s) * ENGINE_RATE)] = 0.0
    for start in range(0, frames, BLOCK):
        span = slice(start, start + BLOCK)
        signal.add(
            AudioBlock(echo[span] + user[span], ENGINE_RATE, start),
            AudioBlock(speaker[span], ENGINE_RATE, start),
        )
    utterance = cut(1.2 + user_from_s, seconds - 1.4 - user_from_s)
    noted = NotingTranscriber(SORRY)
    TranscribingAsrSignal(noted, signal).transcribe(utterance)
    return noted.audio[0], user


def echo_left_db(heard: AudioBlock, user: np.ndarray) -> float:
    """How far under the user's voice what else ASR heard over it (echo left, or the user damaged) is."""
    voice = user[heard.start : heard.end]
    return float(10 * np.log10(np.sum(np.square(voice)) / np.sum(np.square(heard.samples - voice))))


def test_a_cut_in_early_in_the_first_reply_is_heard_through_a_canceller_that_learned_it_first() -> None:
    """0.3 s into a session's first reply the live filter has heard too little of the echo to cancel it
    (on the PulseAudio loop whisper heard "Sorry, I meant on Sunday." as no words, and missed first words);
    a fresh filter that learned the same audio first cancels it in hindsight."""
    heard, user = first_reply(0.3, AsrSignal())
    live, _ = first_reply(0.3, AsrSignal(relearner=None))

    began = round(1.3 * ENGINE_RATE) - ONSET_MARGIN_MS * ENGINE_RATE // 1000
    assert heard.start == began  # where the voice began, found in the cleaner signal
    assert live.start > began  # the live one: no beginning found, the VAD's late cut
    assert echo_left_db(heard, user) >= 10.0
    assert echo_left_db(heard, user) >= echo_left_db(live, user) + 2.0


def test_once_the_live_canceller_has_learned_the_echo_asr_hears_its_output_as_it_is() -> None:
    heard, _ = first_reply(5.5, AsrSignal(), seconds=8.0)
    live, _ = first_reply(5.5, AsrSignal(relearner=None), seconds=8.0)

    assert (heard.start, heard.end) == (live.start, live.end)
    assert np.array_equal(heard.samples, live.samples)
