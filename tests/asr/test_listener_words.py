"""A few words over a reply that may be a listener's sound misheard get a second look; words that take
the turn keep theirs; a short cut-in heard as nothing is heard as its words, a cough stays no words
(voice.asr.listener_words)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from voice.asr.listener_words import (
    heard_as_nothing,
    is_cut_in_words,
    is_listeners,
    worth_a_second_look,
)
from voice.asr.whisper import WhisperSettings, WhisperTranscriber
from voice.audio.block import ENGINE_RATE, AudioBlock
from voice.audio.wav import read_wav

AUDIO = Path(__file__).resolve().parents[2] / "audio"
MM_HMM = "[[m@m'h@m]]"  # espeak-ng spells "Mm-hmm" out as letters: said as phonemes


@pytest.mark.parametrize(
    "text", ["Mm-hmm.", "Mhm", "Uh-huh.", "Right, right.", "Okay, yeah.", "I see.", "OK."]
)
def test_listener_words_and_runs_of_them_are_a_listeners(text: str) -> None:
    assert is_listeners(text)


@pytest.mark.parametrize("text", ["Uh uh.", "No.", "momentum.", "Okay, you have...", "", "[laughs]"])
def test_anything_else_is_not_a_listeners(text: str) -> None:
    assert not is_listeners(text)


@pytest.mark.parametrize("text", ["momentum.", "My turn.", "Uh uh.", "short", "Okay, you have..."])
def test_a_few_words_a_listeners_sound_may_have_been_heard_as_get_a_second_look(text: str) -> None:
    assert worth_a_second_look(text)


@pytest.mark.parametrize(
    "text",
    [
        "No.",
        "Why?",
        "Pardon?",  # a question is never a listener's nod
        "Next.",
        "Uh-uh.",  # whisper's spelling of a "no"
        "Stop.",
        "Hold on.",
        "Never mind.",
        "Yeah.",  # a listener's already
        "Uh.",  # a lone hesitation: prompted, whisper made listener words of "Huh?" and "Pardon?"
        "",
        "Tell me about the other one",  # more words than a listener's run
    ],
)
def test_words_that_take_the_turn_a_listeners_and_hesitations_get_no_second_look(text: str) -> None:
    assert not worth_a_second_look(text)


@pytest.mark.parametrize("text", ["", " ", "Uh.", "uh...", "Um.", "[coughs]"])
def test_no_words_or_a_lone_hesitation_is_heard_as_nothing(text: str) -> None:
    assert heard_as_nothing(text)


@pytest.mark.parametrize("text", ["Uh, no.", "Okay.", "Pardon?", "Uh-uh."])
def test_any_other_word_is_something(text: str) -> None:
    assert not heard_as_nothing(text)


@pytest.mark.parametrize("text", ["Pardon?", "Sorry?", "Really? Really?", "Hey.", "Huh?", "Why?", "No, no."])
def test_short_cut_ins_words_are_cut_in_words(text: str) -> None:
    assert is_cut_in_words(text)


@pytest.mark.parametrize("text", ["", "Okay.", "Uh...", "Mm-hmm.", "What a day.", "I'm sorry."])
def test_nothing_listener_words_and_other_words_are_not_cut_in_words(text: str) -> None:
    assert not is_cut_in_words(text)


def said_alone(tmp_path: Path, text: str, voice: str, wpm: int) -> AudioBlock:
    """``text`` by espeak-ng as the VAD hands a short burst over at its lull: 0.3 s before, 40 ms after."""
    path = tmp_path / "said.wav"
    subprocess.run(["espeak-ng", "-v", voice, "-s", str(wpm), "-w", str(path), text], check=True)
    speech = read_wav(path).samples.astype(np.float32)
    voiced = np.flatnonzero(np.abs(speech) > 1e-3)
    return placed(speech[voiced[0] : voiced[-1] + 1] / np.max(np.abs(speech)) * 0.5)


def placed(samples: np.ndarray, seed: int = 1) -> AudioBlock:
    """``samples`` as the VAD hands a short burst over at its lull: 0.3 s before, 40 ms after."""
    silence = np.zeros(ENGINE_RATE * 3 // 10, np.float32)
    signal = np.concatenate([silence, samples.astype(np.float32), np.zeros(640, np.float32)])
    signal += np.random.default_rng(seed).standard_normal(len(signal)).astype(np.float32) * 5e-4
    return AudioBlock(signal, ENGINE_RATE)


@pytest.fixture(scope="module")
def first_look_only() -> WhisperTranscriber:
    return WhisperTranscriber(WhisperSettings(second_look=False, cut_in_look=False))


# Listener's sounds whisper alone hears as other words with MKL's VNNI kernels (AVX2's hear some right)
MISHEARD = [
    (MM_HMM, "en-us+m7", 160),  # alone: "My term."
    (MM_HMM, "en-gb+m3", 130),  # "My turn." ("Mm-hmm." on AVX2)
    ("Uh-huh.", "en-gb+m1", 160),  # "Uh uh."
    ("Sure.", "en-gb+f2", 190),  # "short"
    (
        "Got it.",
        "en-gb-x-gbclan+f4",
        130,
    ),  # "Clotted." (AVX2: "Got it."); so with a prompt not naming it
]


@pytest.mark.models
@pytest.mark.parametrize(("text", "voice", "wpm"), MISHEARD)
def test_a_listeners_sound_whisper_alone_may_hear_as_other_words_is_heard_as_a_listeners_over_a_reply(
    tmp_path: Path,
    transcriber: WhisperTranscriber,
    first_look_only: WhisperTranscriber,
    text: str,
    voice: str,
    wpm: int,
) -> None:
    burst = said_alone(tmp_path, text, voice, wpm)
    assert is_listeners(transcriber.transcribe(burst, over_reply=True).text)
    in_the_quiet = transcriber.transcribe(burst).text
    assert in_the_quiet == first_look_only.transcribe(burst).text  # in the quiet, no second look


@pytest.mark.models
def test_whisper_alone_hears_most_of_those_sounds_as_other_words(
    tmp_path: Path, first_look_only: WhisperTranscriber
) -> None:
    """What the second look is for, on any CPU's kernels (AVX2's hear two of the five right alone)."""
    heard = [
        first_look_only.transcribe(said_alone(tmp_path, text, voice, wpm), over_reply=True).text
        for text, voice, wpm in MISHEARD
    ]
    assert sum(not is_listeners(text) for text in heard) >= 3, heard


@pytest.mark.models
@pytest.mark.parametrize("text", ["No.", "Why?", "Stop.", "Hold on."])
@pytest.mark.parametrize(("voice", "wpm"), [("en-us+m7", 160), ("en-gb+m1", 160)])
def test_short_cut_ins_over_a_reply_keep_their_words(
    tmp_path: Path, transcriber: WhisperTranscriber, text: str, voice: str, wpm: int
) -> None:
    heard = transcriber.transcribe(said_alone(tmp_path, text, voice, wpm), over_reply=True).text
    assert heard.rstrip(".?!").lower() == text.rstrip(".?!").lower()


@pytest.mark.models
@pytest.mark.parametrize(
    ("text", "voice", "wpm"),
    [("Huh?", "en-gb-x-gbclan+f1", 190)],  # alone: "uh", a lone hesitation: a cough, to the engine
)
def test_a_short_cut_in_whisper_alone_hears_as_nothing_is_heard_as_its_words_over_a_reply(
    tmp_path: Path,
    transcriber: WhisperTranscriber,
    first_look_only: WhisperTranscriber,
    text: str,
    voice: str,
    wpm: int,
) -> None:
    burst = said_alone(tmp_path, text, voice, wpm)
    assert heard_as_nothing(first_look_only.transcribe(burst, over_reply=True).text)  # a cough, to the engine
    assert (
        transcriber.transcribe(burst, over_reply=True).text.rstrip(".?!").lower()
        == text.rstrip(".?!").lower()
    )


@pytest.mark.models
@pytest.mark.parametrize("sound", ["cough", "knock", "click"])
def test_a_cough_a_knock_or_a_click_over_a_reply_stays_no_words(
    transcriber: WhisperTranscriber, sound: str
) -> None:
    samples = read_wav(AUDIO / f"{sound}.wav").samples
    assert heard_as_nothing(transcriber.transcribe(placed(samples), over_reply=True).text)
