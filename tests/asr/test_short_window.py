"""Short utterances are decoded on a cut encoder window; long ones and loops fall back to the full one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.support.word_error import words_wrong
from voice.asr.guard import words_of
from voice.asr.short_window import FULL_WINDOW_FRAMES, repeats_itself, said_again, window_frames
from voice.asr.whisper import WhisperSettings, WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav
from voice.tts.piper_voice import PiperSynthesizer


def test_a_short_question_is_decoded_on_a_ten_second_window() -> None:
    assert window_frames(250) == 1000  # 2.5 s of speech


def test_the_window_grows_so_speech_never_fills_more_than_a_third() -> None:
    window = window_frames(600)

    assert window is not None
    assert window >= 600 / 0.3


def test_a_long_utterance_keeps_whispers_full_window() -> None:
    assert window_frames(1200) is None
    assert window_frames(FULL_WINDOW_FRAMES) is None


def test_a_looping_decode_is_told_from_a_sentence() -> None:
    assert repeats_itself("Stop! " * 40)
    assert not repeats_itself("Tell me a short story about a fox.")
    assert not repeats_itself("")


def test_the_words_said_again_in_a_row_are_counted() -> None:
    assert said_again("Sorry. Sorry.") == 1
    assert said_again("Okay. Okay. Okay.") == 2
    assert said_again("Set it for five, for five minutes.") == 2  # a run of two words, said again
    assert said_again("Tell me a short story about a fox.") == 0
    assert said_again("") == 0


AUDIO = Path(__file__).resolve().parents[2] / "audio"


@pytest.mark.models
def test_the_beam_chooses_the_words_and_greedy_where_the_sentence_ends() -> None:
    beam = WhisperTranscriber(WhisperSettings(beam_size=5))
    greedy = WhisperTranscriber(WhisperSettings(beam_size=1))
    weekend = read_wav(AUDIO / "what-weekend.wav")
    said = "Actually, what about the weekend?"

    heard = beam.transcribe(weekend).text

    assert words_wrong(said, heard) <= 1, heard
    assert heard[-1] == greedy.transcribe(weekend).text[-1]  # greedy's ending: the turn rules were made on it
    # alone, the beam hears the cut window's padding as "right" once more; greedy hears it twice, as said
    assert words_of(beam.transcribe(read_wav(AUDIO / "nod-right-right-gbf2.wav")).text) == ["right", "right"]


@pytest.mark.models
def test_the_cut_window_hears_what_the_full_window_hears(synthesizer: PiperSynthesizer) -> None:
    full = WhisperTranscriber(WhisperSettings(short_window=False))
    short = WhisperTranscriber(WhisperSettings(short_window=True))
    lead = np.zeros(ENGINE_RATE * 3 // 10, dtype=np.float32)  # the VAD's pre-roll and tail, as in a turn
    for said in ("Could you remind me to call my sister at six?", "Turn the kitchen lights off, please."):
        speech = synthesizer.synthesize(said).audio
        audio = AudioBlock(np.concatenate((lead, speech.samples, lead)), ENGINE_RATE)

        heard = short.transcribe(audio).text

        assert words_wrong(said, heard) <= words_wrong(said, full.transcribe(audio).text), heard
        assert words_wrong(said, heard) <= 1, heard


# What ASR was handed in a cell of benchmarks/barge_in.py sweep (echo delay 300 ms, gain 0 dB, no noise):
# the user saying "Sorry, I meant on Sunday." over the fox story, after the linear echo canceller.
OVER_ECHO = Path(__file__).parent / "recorded" / "sorry-sunday-over-echo.wav"


@pytest.mark.models
def test_a_cut_in_over_the_replys_echo_is_heard_on_the_cut_window() -> None:
    transcriber = WhisperTranscriber(WhisperSettings(short_window=True))
    audio = read_wav(OVER_ECHO)

    heard = transcriber.transcribe(audio, over_reply=True).text

    assert words_wrong("Sorry, I meant on Sunday.", heard) == 0, heard
