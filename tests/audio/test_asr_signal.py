"""ASR hears AEC3's output only where the speaker's echo can be in the mic, and the raw mic elsewhere."""

from __future__ import annotations

import numpy as np

from voice.asr.port import Transcript
from voice.audio.asr_signal import ECHO_TAIL_MS, AsrSignal, TranscribingAsrSignal
from voice.audio.block import ENGINE_RATE, AudioBlock

BLOCK = 640
RAW, CANCELLED = 1.0, 0.5  # stand-ins for the mic and AEC3's output, told apart by their level
SPEAKER_STOPS = ENGINE_RATE  # the assistant talks for the first second, then pauses for the barge-in
TAIL = ECHO_TAIL_MS * ENGINE_RATE // 1000


class Heard:
    def __init__(self) -> None:
        self.audio: list[AudioBlock] = []

    def transcribe(self, audio: AudioBlock, *, word_timings: bool = False) -> Transcript:
        self.audio.append(audio)
        return Transcript("Sorry, I meant on Sunday.")


def room(seconds: float) -> AsrSignal:
    signal = AsrSignal()
    for start in range(0, round(seconds * ENGINE_RATE), BLOCK):
        talking = np.full(BLOCK, 0.2 if start < SPEAKER_STOPS else 0.0, np.float32)
        signal.add(
            AudioBlock(np.full(BLOCK, RAW, np.float32), ENGINE_RATE, start),
            AudioBlock(talking, ENGINE_RATE, start),
        )
    return signal


def test_the_utterance_is_aec3_while_echo_may_arrive_and_the_raw_mic_once_its_tail_is_over() -> None:
    heard = Heard()
    utterance = AudioBlock(np.full(2 * ENGINE_RATE, CANCELLED, np.float32), ENGINE_RATE, ENGINE_RATE // 2)

    TranscribingAsrSignal(heard, room(3.0)).transcribe(utterance)

    words = heard.audio[0]
    echo_free_from = SPEAKER_STOPS + TAIL - utterance.start
    assert words.start == utterance.start
    assert np.all(words.samples[: echo_free_from - 160] == CANCELLED)
    assert np.all(words.samples[echo_free_from + 160 :] == RAW)


def test_audio_no_longer_kept_is_transcribed_as_the_vad_cut_it() -> None:
    heard = Heard()
    utterance = AudioBlock(np.full(ENGINE_RATE, CANCELLED, np.float32), ENGINE_RATE, 0)

    TranscribingAsrSignal(heard, room(45.0)).transcribe(utterance)

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
    heard = Heard()
    signal, utterance = played_back(user_level=0.0)

    assert TranscribingAsrSignal(heard, signal).transcribe(utterance).text == ""
    assert heard.audio == []  # whisper is not even asked to guess


def test_a_user_talking_over_the_echo_is_transcribed() -> None:
    heard = Heard()
    signal, utterance = played_back(user_level=0.05)  # 6 dB below the echo

    assert TranscribingAsrSignal(heard, signal).transcribe(utterance).text == "Sorry, I meant on Sunday."
